/* SPDX-License-Identifier: Apache-2.0 */
/* grit/export.h — GRIT_API, the mark of a function of libgrit's public interface.
 *
 * The libraries are compiled with -fvisibility=hidden: only functions declared with GRIT_API in a header
 * of include/grit/ are exported from libgrit.so and libgrit_replay.so (tests/check_exports.py checks
 * that the exported symbols and the marked declarations are the same set). Every new public function
 * gets the mark: `GRIT_API grit_status grit_thing_do(...);`. Included by grit/status.h, so by every
 * public header. */
#ifndef GRIT_EXPORT_H
#define GRIT_EXPORT_H

#if defined(_WIN32) || defined(__CYGWIN__)
#define GRIT_API
#elif defined(__GNUC__) && __GNUC__ >= 4
#define GRIT_API __attribute__((visibility("default")))
#else
#define GRIT_API
#endif

#endif /* GRIT_EXPORT_H */
