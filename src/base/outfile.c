/* SPDX-License-Identifier: Apache-2.0 */
/* outfile.c — output files through a temporary file and a rename (see outfile.h). POSIX: open(O_EXCL)
 * for a fresh temporary name (the umask applies, as for fopen), rename(2) for the atomic replacement. */
#define _XOPEN_SOURCE 700 /* realpath */
#include "outfile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "status_internal.h"

/* A new file "<path>.tmp<k>" that did not exist; fd or -1. The suffix mixes the process, the object's
 * address and the clock, so that concurrent writers of the same destination do not collide. */
static int open_temporary(const char *path, char *tmp, size_t size, const void *salt) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  unsigned long long k = (unsigned long long)getpid() * 1000003ULL ^ (unsigned long long)(uintptr_t)salt ^
                         (unsigned long long)ts.tv_nsec;
  for (int attempt = 0; attempt < 100; ++attempt, k = k * 6364136223846793005ULL + 1442695040888963407ULL) {
    snprintf(tmp, size, "%s.tmp%06llx", path, (k >> 20) & 0xffffffULL);
    int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL, 0666);
    if (fd >= 0 || errno != EEXIST) return fd;
  }
  return -1;
}

grit_status grit_outfile_open(grit_outfile *o, const char *path, char *msg) {
  memset(o, 0, sizeof *o);
  if (!path || !*path) return grit_set_error(msg, GRIT_ERR_INVALID_ARGUMENT, "no output file name");
  const size_t n = strlen(path) + 16;
  o->path = malloc(strlen(path) + 1);
  o->tmp = malloc(n);
  if (!o->path || !o->tmp) {
    grit_outfile_abort(o);
    return grit_set_error(msg, GRIT_ERR_OUT_OF_MEMORY, "out of memory");
  }
  strcpy(o->path, path);
  struct stat st;
  if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
    grit_outfile_abort(o);
    return grit_set_error(msg, GRIT_ERR_IO, "cannot write %s: it is a directory", path);
  }
  int fd = open_temporary(path, o->tmp, n, o);
  if (fd < 0 || !(o->f = fdopen(fd, "w"))) {
    const int e = errno;
    if (fd >= 0) close(fd), unlink(o->tmp);
    free(o->tmp), o->tmp = NULL;
    grit_outfile_abort(o);
    return grit_set_error(msg, GRIT_ERR_IO, "cannot write %s: %s", path, strerror(e));
  }
  return GRIT_OK;
}

grit_status grit_outfile_commit(grit_outfile *o, char *msg) {
  if (!o->f) return grit_set_error(msg, GRIT_ERR_STATE, "output file not open");
  const int write_failed = fflush(o->f) != 0 || ferror(o->f);
  int e = errno;
  const int close_failed = fclose(o->f) != 0;
  if (close_failed && !write_failed) e = errno;
  o->f = NULL;
  if (write_failed || close_failed || rename(o->tmp, o->path) != 0) {
    if (!write_failed && !close_failed) e = errno;
    grit_status s = grit_set_error(msg, GRIT_ERR_IO, "writing %s failed: %s", o->path, strerror(e));
    grit_outfile_abort(o);
    return s;
  }
  free(o->tmp), o->tmp = NULL; /* renamed: nothing to remove */
  grit_outfile_abort(o);
  return GRIT_OK;
}

void grit_outfile_abort(grit_outfile *o) {
  if (!o) return;
  if (o->f) fclose(o->f);
  if (o->tmp) unlink(o->tmp);
  free(o->tmp);
  free(o->path);
  memset(o, 0, sizeof *o);
}

int grit_same_file(const char *a, const char *b) {
  if (!a || !b) return 0;
  struct stat sa, sb;
  if (stat(a, &sa) == 0 && stat(b, &sb) == 0) return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
  char *ra = realpath(a, NULL), *rb = realpath(b, NULL);
  const int same = ra && rb ? !strcmp(ra, rb) : !strcmp(a, b);
  free(ra), free(rb);
  return same;
}
