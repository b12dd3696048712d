/* grit_ilqr/ilqr.h — trajectory optimization by iLQR on top of grit.
 * The solver itself arrives with its issue; for now this package exposes its version so that the
 * target, its headers and its install rules exist and are exercised by the build. */
#ifndef GRIT_ILQR_H
#define GRIT_ILQR_H

#ifdef __cplusplus
extern "C" {
#endif

/* The package version as "MAJOR.MINOR.PATCH". */
const char *grit_ilqr_version(void);

#ifdef __cplusplus
}
#endif
#endif
