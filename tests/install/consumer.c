/* SPDX-License-Identifier: Apache-2.0 */
/* A program outside the project, built against an installed grit (tests/install/run.sh): with pkg-config
 * and with find_package(grit CONFIG). It prints the versions and steps a one-body model once. */
#include <stdio.h>
#include <string.h>

#include "grit/grit.h"
#include "grit_ilqr/ilqr.h"

int main(void) {
  if (strcmp(grit_version(), GRIT_VERSION_STRING) != 0 || strcmp(grit_ilqr_version(), grit_version()) != 0) {
    fprintf(stderr, "consumer: versions differ: %s, %s, %s\n", grit_version(), grit_ilqr_version(), GRIT_VERSION_STRING);
    return 1;
  }
  grit_builder *b = NULL;
  grit_model *m = NULL;
  grit_data *d = NULL;
  grit_status s = grit_builder_create(&b);
  int body = -1;
  if (s == GRIT_OK) {
    grit_body_def def = grit_default_body_def();
    s = grit_builder_add_body(b, &def, &body);
  }
  if (s == GRIT_OK) s = grit_builder_compile(b, &m);
  if (s == GRIT_OK) s = grit_data_create(m, &d);
  if (s == GRIT_OK) s = grit_step(d);
  if (s != GRIT_OK) fprintf(stderr, "consumer: %s\n", grit_status_string(s));
  grit_data_free(d);
  grit_model_free(m);
  grit_builder_free(b);
  printf("grit %s\n", grit_version());
  return s == GRIT_OK ? 0 : 1;
}
