/* SPDX-License-Identifier: Apache-2.0 */
/* fuzz_mjcf.c — libFuzzer target of the MJCF loader (built with -DGRIT_FUZZ=ON and clang; see
 * docs/mjcf.md). Any input must give a model or an error with a message, never a crash, a leak or
 * undefined behaviour; a model that loads is also stepped once, so what the loader accepts is usable. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "grit/grit.h"
#include "grit/mjcf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  grit_model *m = NULL;
  grit_mjcf_info info;
  char msg[GRIT_MESSAGE_SIZE];
  grit_status s = grit_mjcf_load_buffer((const char *)data, size, "fuzz", NULL, &m, &info, msg);
  if (s != GRIT_OK) {
    if (m != NULL || msg[0] == '\0') __builtin_trap(); /* a failure has no model and a message */
  } else {
    grit_data *d = NULL;
    if (grit_data_create(m, &d) == GRIT_OK) {
      if (info.nkey > 0) grit_mjcf_apply_key(&info, 0, d);
      grit_step(d); /* may fail (e.g. not converged), must not crash */
      grit_data_free(d);
    }
  }
  grit_mjcf_info_free(&info);
  grit_model_free(m);
  return 0;
}
