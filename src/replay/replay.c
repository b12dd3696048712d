/* SPDX-License-Identifier: Apache-2.0 */
/* replay.c — the HTML replay page (grit/replay.h): frames with body poses from forward kinematics, the
 * scene as JSON, the plots as SVG (replay_svg.c), three.js and the viewer script inlined (both embedded
 * at build time from third_party/three/three.min.js and src/replay/replay_viewer.js). */
#include "grit/replay.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "grit/dynamics.h"
#include "grit/hydro.h"
#include "grit/math.h"
#include "grit/step.h"
#include "outfile.h"
#include "replay_internal.h"
#include "status_internal.h"

/* Default colours: the world's geometries grey, each body's from this palette by body index. */
static const double WORLD_RGBA[4] = {0.82, 0.84, 0.86, 1.0};
static const double PALETTE[][3] = {{0.30, 0.47, 0.70}, {0.95, 0.55, 0.15}, {0.35, 0.65, 0.35},
                                    {0.80, 0.30, 0.30}, {0.55, 0.42, 0.70}, {0.60, 0.45, 0.35},
                                    {0.85, 0.45, 0.65}, {0.50, 0.50, 0.50}, {0.75, 0.75, 0.25}};
#define NPALETTE ((int)(sizeof PALETTE / sizeof PALETTE[0]))

static char *dup_string(const char *s) {
  if (!s) return NULL;
  size_t n = strlen(s) + 1;
  char *c = malloc(n);
  if (c) memcpy(c, s, n);
  return c;
}

/* Grows *p (elements of `size` bytes, capacity *cap) to hold at least `need`; 0 or -1 when out of memory. */
static int grow(void **p, int *cap, int need, size_t size) {
  if (need <= *cap) return 0;
  int c = *cap ? *cap : 16;
  while (c < need) c *= 2;
  void *q = realloc(*p, (size_t)c * size);
  if (!q) return -1;
  *p = q;
  *cap = c;
  return 0;
}

grit_status grit_replay_create(const grit_model *model, grit_replay **replay) {
  if (!replay) return GRIT_ERR_INVALID_ARGUMENT;
  *replay = NULL;
  if (!model) return GRIT_ERR_INVALID_ARGUMENT;
  grit_replay *r = calloc(1, sizeof *r);
  if (!r) return GRIT_ERR_OUT_OF_MEMORY;
  r->m = model;
  r->nbody = grit_model_nbody(model);
  r->ngeom = grit_model_ngeom(model);
  r->nq = grit_model_nq(model);
  r->title = dup_string("grit replay");
  r->geom_rgba = malloc(sizeof(double) * 4 * (size_t)(r->ngeom + 1));
  if (!r->title || !r->geom_rgba || grit_data_create(model, &r->d) != GRIT_OK) {
    grit_replay_free(r);
    return GRIT_ERR_OUT_OF_MEMORY;
  }
  for (int g = 0; g < r->ngeom; ++g) {
    grit_geom_def def;
    grit_model_geom(model, g, &def);
    double *c = r->geom_rgba + 4 * g;
    if (def.body == 0) {
      memcpy(c, WORLD_RGBA, sizeof WORLD_RGBA);
    } else {
      memcpy(c, PALETTE[(def.body - 1) % NPALETTE], 3 * sizeof(double));
      c[3] = 1.0;
    }
  }
  *replay = r;
  return GRIT_OK;
}

void grit_replay_free(grit_replay *r) {
  if (!r) return;
  grit_data_free(r->d);
  free(r->title);
  free(r->geom_rgba);
  free(r->t);
  free(r->pose);
  free(r->newton);
  free(r->contact_begin);
  free(r->contacts);
  free(r->pressure);
  for (int i = 0; i < r->nmarker; ++i) free(r->markers[i].name);
  free(r->markers);
  for (int i = 0; i < r->nplot; ++i) replay_plot_clear(&r->plots[i]);
  free(r->plots);
  free(r);
}

const char *grit_replay_last_error(const grit_replay *r) { return r ? r->message : "no replay (NULL)"; }

int grit_replay_nframes(const grit_replay *r) { return r ? r->nframe : 0; }

grit_status grit_replay_set_title(grit_replay *r, const char *title) {
  if (!r) return GRIT_ERR_INVALID_ARGUMENT;
  if (!title) return grit_set_error(r->message, GRIT_ERR_INVALID_ARGUMENT, "grit_replay_set_title: NULL title");
  char *c = dup_string(title);
  if (!c) return grit_set_error(r->message, GRIT_ERR_OUT_OF_MEMORY, "grit_replay_set_title: out of memory");
  free(r->title);
  r->title = c;
  return GRIT_OK;
}

static int valid_rgba(const double c[4]) {
  for (int i = 0; i < 4; ++i)
    if (!(c[i] >= 0 && c[i] <= 1)) return 0;
  return 1;
}

grit_status grit_replay_set_geom_color(grit_replay *r, int geom, const double rgba[4]) {
  if (!r) return GRIT_ERR_INVALID_ARGUMENT;
  if (geom < 0 || geom >= r->ngeom)
    return grit_set_error(r->message, GRIT_ERR_INVALID_ARGUMENT, "grit_replay_set_geom_color: no geometry %d (the model has %d)",
                          geom, r->ngeom);
  if (!rgba || !valid_rgba(rgba))
    return grit_set_error(r->message, GRIT_ERR_INVALID_ARGUMENT,
                          "grit_replay_set_geom_color: the colour needs 4 numbers in [0, 1]");
  memcpy(r->geom_rgba + 4 * geom, rgba, 4 * sizeof(double));
  return GRIT_OK;
}

grit_status grit_replay_add_marker(grit_replay *r, const grit_replay_marker *mk) {
  if (!r) return GRIT_ERR_INVALID_ARGUMENT;
  if (!mk) return grit_set_error(r->message, GRIT_ERR_INVALID_ARGUMENT, "grit_replay_add_marker: NULL marker");
  if (mk->type == GRIT_GEOM_PLANE || mk->type == GRIT_GEOM_CONVEX || mk->type == GRIT_GEOM_HFIELD ||
      (int)mk->type < 0 || mk->type >= GRIT_GEOM_COUNT)
    return grit_set_error(r->message, GRIT_ERR_INVALID_ARGUMENT,
                          "grit_replay_add_marker: the type must be a sphere, capsule, box, cylinder or ellipsoid");
  grit_shape s = grit_shape_make(mk->type, mk->size[0], mk->size[1], mk->size[2]);
  char why[GRIT_MESSAGE_SIZE];
  if (grit_shape_validate(&s, why) != GRIT_OK)
    return grit_set_error(r->message, GRIT_ERR_INVALID_ARGUMENT, "grit_replay_add_marker: %s", why);
  double qn = 0;
  for (int i = 0; i < 3; ++i)
    if (!isfinite(mk->pos[i]))
      return grit_set_error(r->message, GRIT_ERR_NOT_FINITE, "grit_replay_add_marker: the position is not finite");
  for (int i = 0; i < 4; ++i) {
    if (!isfinite(mk->quat[i]))
      return grit_set_error(r->message, GRIT_ERR_NOT_FINITE, "grit_replay_add_marker: the quaternion is not finite");
    qn += mk->quat[i] * mk->quat[i];
  }
  if (!valid_rgba(mk->rgba))
    return grit_set_error(r->message, GRIT_ERR_INVALID_ARGUMENT, "grit_replay_add_marker: the colour needs 4 numbers in [0, 1]");
  if (grow((void **)&r->markers, &r->cap_marker, r->nmarker + 1, sizeof *r->markers))
    return grit_set_error(r->message, GRIT_ERR_OUT_OF_MEMORY, "grit_replay_add_marker: out of memory");
  replay_marker *m = &r->markers[r->nmarker];
  memset(m, 0, sizeof *m);
  if (mk->name && !(m->name = dup_string(mk->name)))
    return grit_set_error(r->message, GRIT_ERR_OUT_OF_MEMORY, "grit_replay_add_marker: out of memory");
  m->type = mk->type;
  memcpy(m->size, mk->size, sizeof m->size);
  memcpy(m->pos, mk->pos, sizeof m->pos);
  memcpy(m->rgba, mk->rgba, sizeof m->rgba);
  if (qn < 1e-24) {
    m->quat[0] = 1;
  } else {
    for (int i = 0; i < 4; ++i) m->quat[i] = mk->quat[i] / sqrt(qn);
  }
  r->nmarker++;
  return GRIT_OK;
}

grit_status grit_replay_add_frame(grit_replay *r, double t, const double *q, int nq, const grit_replay_contact *contacts,
                                  int ncontacts, int newton_iters) {
  if (!r) return GRIT_ERR_INVALID_ARGUMENT;
  if (!isfinite(t)) return grit_set_error(r->message, GRIT_ERR_NOT_FINITE, "grit_replay_add_frame: the time is not finite");
  if (r->nframe > 0 && t < r->t[r->nframe - 1])
    return grit_set_error(r->message, GRIT_ERR_INVALID_ARGUMENT,
                          "grit_replay_add_frame: time %g s is before the previous frame's (%g s)", t, r->t[r->nframe - 1]);
  if (nq != r->nq || (nq > 0 && !q))
    return grit_set_error(r->message, GRIT_ERR_INVALID_ARGUMENT, "grit_replay_add_frame: q needs %d numbers (nq), got %d",
                          r->nq, q ? nq : 0);
  if (ncontacts < 0 || (ncontacts > 0 && !contacts))
    return grit_set_error(r->message, GRIT_ERR_INVALID_ARGUMENT, "grit_replay_add_frame: bad contact list (%d, %s)",
                          ncontacts, contacts ? "given" : "NULL");
  for (int i = 0; i < ncontacts; ++i) {
    const grit_replay_contact *c = &contacts[i];
    int ok = isfinite(c->normal_impulse) && isfinite(c->tangent_impulse);
    for (int k = 0; k < 3; ++k) ok = ok && isfinite(c->pos[k]) && isfinite(c->force[k]);
    if (!ok)
      return grit_set_error(r->message, GRIT_ERR_NOT_FINITE, "grit_replay_add_frame: contact %d is not finite", i);
    for (int k = 0; k < 2; ++k)
      if (c->geom[k] < -1 || c->geom[k] >= r->ngeom)
        return grit_set_error(r->message, GRIT_ERR_INVALID_ARGUMENT, "grit_replay_add_frame: contact %d names geometry %d",
                              i, c->geom[k]);
  }
  grit_status sq = nq > 0 ? grit_data_set_qpos(r->d, q, nq) : GRIT_OK;
  if (sq != GRIT_OK)
    return grit_set_error(r->message, sq, "grit_replay_add_frame: q rejected: %s", grit_data_last_error(r->d));
  const int nb = r->nbody - 1, f = r->nframe;
  if (grow((void **)&r->t, &r->cap_frame, f + 1, sizeof *r->t))
    return grit_set_error(r->message, GRIT_ERR_OUT_OF_MEMORY, "grit_replay_add_frame: out of memory");
  /* The other per-frame arrays follow the capacity of t. */
  double *pose = realloc(r->pose, sizeof(double) * 7 * (size_t)(nb > 0 ? nb : 1) * (size_t)r->cap_frame);
  if (pose) r->pose = pose;
  int *newton = realloc(r->newton, sizeof(int) * (size_t)r->cap_frame);
  if (newton) r->newton = newton;
  int *cb = realloc(r->contact_begin, sizeof(int) * (size_t)(r->cap_frame + 1));
  if (cb) r->contact_begin = cb;
  if (!pose || !newton || !cb ||
      grow((void **)&r->contacts, &r->cap_contact, r->ncontact + ncontacts, sizeof *r->contacts))
    return grit_set_error(r->message, GRIT_ERR_OUT_OF_MEMORY, "grit_replay_add_frame: out of memory");
  for (int b = 1; b <= nb; ++b) {
    double *p = r->pose + 7 * ((size_t)f * nb + (size_t)(b - 1));
    grit_body_pose(r->d, b, p, p + 3);
  }
  if (ncontacts) memcpy(r->contacts + r->ncontact, contacts, sizeof *contacts * (size_t)ncontacts);
  if (f == 0) r->contact_begin[0] = 0;
  r->ncontact += ncontacts;
  r->contact_begin[f + 1] = r->ncontact;
  r->newton[f] = newton_iters < 0 ? -1 : newton_iters;
  r->t[f] = t;
  r->nframe = f + 1;
  return GRIT_OK;
}

/* The pressures of the n contacts the last frame took from d (the same filter: a candidate that
 * touched), in r->pressure; the contacts before them that have none get 0. */
static grit_status add_pressures(grit_replay *r, const grit_data *d, int n) {
  if (grow((void **)&r->pressure, &r->cap_pressure, r->ncontact, sizeof *r->pressure))
    return grit_set_error(r->message, GRIT_ERR_OUT_OF_MEMORY, "grit_replay_add_data: out of memory");
  for (int i = r->npressure; i < r->ncontact - n; ++i) r->pressure[i] = 0.0;
  int k = r->ncontact - n;
  for (int i = 0; i < grit_data_ncontacts(d) && k < r->ncontact; ++i) {
    grit_contact_info ci;
    if (grit_data_contact(d, i, &ci) != GRIT_OK) continue;
    if (!(ci.impulse[2] > 0 || hypot(ci.impulse[0], ci.impulse[1]) > 0)) continue;
    grit_data_contact_patch(d, i, NULL, &r->pressure[k++]);
  }
  r->npressure = r->ncontact;
  return GRIT_OK;
}

grit_status grit_replay_add_data(grit_replay *r, const grit_data *d, int after_step) {
  if (!r) return GRIT_ERR_INVALID_ARGUMENT;
  if (!d || grit_data_model(d) != r->m)
    return grit_set_error(r->message, GRIT_ERR_INVALID_ARGUMENT, "grit_replay_add_data: the data is %s",
                          d ? "not of the replay's model" : "NULL");
  int n = 0, newton = -1;
  grit_replay_contact *c = NULL;
  if (after_step) {
    grit_step_stats st;
    if (grit_data_step_stats(d, &st) == GRIT_OK) newton = st.newton_iters;
    const int nc = grit_data_ncontacts(d);
    const double dt = grit_model_options(r->m).timestep;
    if (nc > 0 && !(c = malloc(sizeof *c * (size_t)nc)))
      return grit_set_error(r->message, GRIT_ERR_OUT_OF_MEMORY, "grit_replay_add_data: out of memory");
    for (int i = 0; i < nc; ++i) {
      grit_contact_info ci;
      if (grit_data_contact(d, i, &ci) != GRIT_OK) continue;
      const double pn = ci.impulse[2], pt = hypot(ci.impulse[0], ci.impulse[1]);
      if (!(pn > 0 || pt > 0)) continue; /* a candidate that did not touch */
      grit_replay_contact *o = &c[n++];
      o->geom[0] = ci.geom[0];
      o->geom[1] = ci.geom[1];
      memcpy(o->pos, ci.pos, sizeof o->pos);
      for (int k = 0; k < 3; ++k) { /* world impulse: the frame's columns t1, t2, n weighted */
        double w = 0;
        for (int j = 0; j < 3; ++j) w += ci.frame[3 * k + j] * ci.impulse[j];
        o->force[k] = w / dt;
      }
      o->normal_impulse = pn;
      o->tangent_impulse = pt;
    }
  }
  grit_status s = grit_replay_add_frame(r, grit_data_time(d), grit_data_qpos(d), r->nq, c, n, newton);
  if (s == GRIT_OK && n > 0) s = add_pressures(r, d, n);
  free(c);
  return s;
}

grit_status grit_replay_add_plot(grit_replay *r, const char *title, const char *xlabel, const char *ylabel, int flags,
                                 const grit_replay_series *series, int nseries) {
  if (!r) return GRIT_ERR_INVALID_ARGUMENT;
  if (nseries < 1 || !series)
    return grit_set_error(r->message, GRIT_ERR_INVALID_ARGUMENT, "grit_replay_add_plot: needs at least one series");
  for (int i = 0; i < nseries; ++i) {
    if (series[i].n < 0 || (series[i].n > 0 && !series[i].y))
      return grit_set_error(r->message, GRIT_ERR_INVALID_ARGUMENT, "grit_replay_add_plot: series %d has %d points and %s y",
                            i, series[i].n, series[i].y ? "a" : "no");
    for (int k = 0; series[i].x && k < series[i].n; ++k)
      if (!isfinite(series[i].x[k]))
        return grit_set_error(r->message, GRIT_ERR_NOT_FINITE, "grit_replay_add_plot: series %d: x[%d] is not finite", i, k);
  }
  if (grow((void **)&r->plots, &r->cap_plot, r->nplot + 1, sizeof *r->plots))
    return grit_set_error(r->message, GRIT_ERR_OUT_OF_MEMORY, "grit_replay_add_plot: out of memory");
  replay_plot *p = &r->plots[r->nplot];
  if (flags & ~(GRIT_REPLAY_LOG_Y | GRIT_REPLAY_TIME_AXIS))
    return grit_set_error(r->message, GRIT_ERR_INVALID_ARGUMENT, "grit_replay_add_plot: unknown flags %#x", (unsigned)flags);
  if (replay_plot_init(p, title, xlabel, ylabel, (flags & GRIT_REPLAY_LOG_Y) != 0, (flags & GRIT_REPLAY_TIME_AXIS) != 0,
                       nseries)) {
    replay_plot_clear(p);
    return grit_set_error(r->message, GRIT_ERR_OUT_OF_MEMORY, "grit_replay_add_plot: out of memory");
  }
  for (int i = 0; i < nseries; ++i) {
    if (replay_plot_set_series(p, i, series[i].name, series[i].x, series[i].y, series[i].n)) {
      replay_plot_clear(p);
      return grit_set_error(r->message, GRIT_ERR_OUT_OF_MEMORY, "grit_replay_add_plot: out of memory");
    }
  }
  r->nplot++;
  return GRIT_OK;
}

/* ------------------------------------------------------------------------------------------- writing */

static const char *const TYPE_NAMES[GRIT_GEOM_COUNT] = {"plane", "sphere", "capsule", "box", "cylinder", "ellipsoid",
                                                        "convex", "hfield"};

/* The faces of a convex hull, by testing every triple of vertices (outward triangles whose plane has
 * every vertex on its inner side): cubic in the vertex count times the count, so only for small hulls;
 * larger ones are drawn as points. Writes up to 3*maxf indices; returns the triangle count. */
#define HULL_MAX_VERTICES 64
static int hull_faces(const double *v, int n, int *faces, int maxf) {
  double lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY};
  for (int i = 0; i < n; ++i)
    for (int k = 0; k < 3; ++k) lo[k] = fmin(lo[k], v[3 * i + k]), hi[k] = fmax(hi[k], v[3 * i + k]);
  const double scale = fmax(fmax(hi[0] - lo[0], hi[1] - lo[1]), hi[2] - lo[2]), eps = 1e-9 * scale;
  int nf = 0;
  for (int i = 0; i < n; ++i)
    for (int j = i + 1; j < n; ++j)
      for (int k = j + 1; k < n; ++k) {
        double a[3], b[3], nrm[3];
        grit_v3_sub(a, v + 3 * j, v + 3 * i);
        grit_v3_sub(b, v + 3 * k, v + 3 * i);
        grit_v3_cross(nrm, a, b);
        double len = grit_v3_norm(nrm);
        if (len <= eps * scale) continue;
        int above = 0, below = 0;
        for (int l = 0; l < n && !(above && below); ++l) {
          double d[3];
          grit_v3_sub(d, v + 3 * l, v + 3 * i);
          double s = grit_v3_dot(d, nrm) / len;
          above += s > eps;
          below += s < -eps;
        }
        if (above && below) continue;
        if (nf >= maxf) return nf;
        faces[3 * nf] = i; /* oriented so that the normal points away from the other vertices */
        faces[3 * nf + 1] = above ? k : j;
        faces[3 * nf + 2] = above ? j : k;
        nf++;
      }
  return nf;
}

static void out_json_string(replay_out *o, const char *s) {
  replay_putc(o, '"');
  for (; s && *s; ++s) {
    unsigned char c = (unsigned char)*s;
    if (c == '"' || c == '\\') replay_printf(o, "\\%c", c);
    else if (c < 0x20 || c == '<' || c == '>' || c == '&') replay_printf(o, "\\u%04x", c); /* safe inside <script> */
    else replay_putc(o, (char)c);
  }
  replay_putc(o, '"');
}

static void out_array(replay_out *o, const double *x, int n) {
  replay_putc(o, '[');
  for (int i = 0; i < n; ++i) replay_printf(o, "%s%.6g", i ? "," : "", x[i]);
  replay_putc(o, ']');
}

/* The bounding box of everything but planes over all frames (for the camera and the ground's size). */
static void scene_extent(const grit_replay *r, double lo[3], double hi[3]) {
  const int nb = r->nbody - 1;
  for (int k = 0; k < 3; ++k) lo[k] = INFINITY, hi[k] = -INFINITY;
  for (int g = 0; g < r->ngeom; ++g) {
    grit_geom_def def;
    grit_model_geom(r->m, g, &def);
    if (def.shape.type == GRIT_GEOM_PLANE || def.shape.type == GRIT_GEOM_HFIELD) continue; /* not drawn */
    const double rad = grit_shape_bounding_radius(&def.shape);
    for (int f = 0; f < (def.body ? r->nframe : 1); ++f) {
      double c[3];
      if (def.body) {
        const double *p = r->pose + 7 * ((size_t)f * nb + (size_t)(def.body - 1));
        grit_quat_rotate(c, p + 3, def.pos);
        grit_v3_add(c, c, p);
      } else {
        memcpy(c, def.pos, sizeof c);
      }
      for (int k = 0; k < 3; ++k) lo[k] = fmin(lo[k], c[k] - rad), hi[k] = fmax(hi[k], c[k] + rad);
    }
  }
  for (int i = 0; i < r->nmarker; ++i) {
    grit_shape s = grit_shape_make(r->markers[i].type, r->markers[i].size[0], r->markers[i].size[1], r->markers[i].size[2]);
    const double rad = grit_shape_bounding_radius(&s);
    for (int k = 0; k < 3; ++k)
      lo[k] = fmin(lo[k], r->markers[i].pos[k] - rad), hi[k] = fmax(hi[k], r->markers[i].pos[k] + rad);
  }
  if (!(lo[0] <= hi[0])) /* nothing but planes */
    for (int k = 0; k < 3; ++k) lo[k] = -1, hi[k] = 1;
}

static void write_scene_json(replay_out *o, const grit_replay *r) {
  const int nb = r->nbody - 1;
  double lo[3], hi[3], fmax_n = 0;
  scene_extent(r, lo, hi);
  for (int i = 0; i < r->ncontact; ++i) fmax_n = fmax(fmax_n, grit_v3_norm(r->contacts[i].force));
  const double size = fmax(fmax(hi[0] - lo[0], hi[1] - lo[1]), hi[2] - lo[2]);
  replay_printf(o, "{\"format\":\"grit-replay-1\",\"title\":");
  out_json_string(o, r->title);
  replay_printf(o, ",\"timestep\":%.9g,\"nbody\":%d,\"extent\":{\"lo\":", grit_model_options(r->m).timestep, r->nbody);
  out_array(o, lo, 3);
  replay_printf(o, ",\"hi\":");
  out_array(o, hi, 3);
  /* Arrows: the largest force is drawn a third of the scene's size long. */
  replay_printf(o, "},\"max_force\":%.6g,\"force_scale\":%.6g,\"geoms\":[", fmax_n, fmax_n > 0 ? size / 3 / fmax_n : 0.0);
  int *faces = NULL; /* for convex hulls, allocated at the first */
  for (int g = 0; g < r->ngeom; ++g) {
    grit_geom_def def;
    grit_model_geom(r->m, g, &def);
    replay_printf(o, "%s{\"body\":%d,\"type\":\"%s\",\"name\":", g ? "," : "", def.body, TYPE_NAMES[def.shape.type]);
    out_json_string(o, def.name ? def.name : "");
    replay_printf(o, ",\"size\":");
    out_array(o, def.shape.size, 3);
    replay_printf(o, ",\"pos\":");
    out_array(o, def.pos, 3);
    replay_printf(o, ",\"quat\":");
    out_array(o, def.quat, 4);
    replay_printf(o, ",\"rgba\":");
    out_array(o, r->geom_rgba + 4 * g, 4);
    if (def.shape.type == GRIT_GEOM_CONVEX) {
      replay_printf(o, ",\"vertices\":");
      out_array(o, def.shape.vertices, 3 * def.shape.nvert);
      int nf = 0;
      if (def.shape.nvert <= HULL_MAX_VERTICES) {
        if (!faces) faces = malloc(sizeof(int) * 3 * 8 * HULL_MAX_VERTICES * HULL_MAX_VERTICES);
        if (faces) nf = hull_faces(def.shape.vertices, def.shape.nvert, faces, 8 * HULL_MAX_VERTICES * HULL_MAX_VERTICES);
        else o->error = 1; /* out of memory: the write fails */
      }
      replay_printf(o, ",\"faces\":[");
      for (int i = 0; i < 3 * nf; ++i) replay_printf(o, "%s%d", i ? "," : "", faces[i]);
      replay_putc(o, ']');
    }
    replay_putc(o, '}');
  }
  free(faces);
  replay_printf(o, "],\"markers\":[");
  for (int i = 0; i < r->nmarker; ++i) {
    const replay_marker *m = &r->markers[i];
    replay_printf(o, "%s{\"type\":\"%s\",\"name\":", i ? "," : "", TYPE_NAMES[m->type]);
    out_json_string(o, m->name ? m->name : "");
    replay_printf(o, ",\"size\":");
    out_array(o, m->size, 3);
    replay_printf(o, ",\"pos\":");
    out_array(o, m->pos, 3);
    replay_printf(o, ",\"quat\":");
    out_array(o, m->quat, 4);
    replay_printf(o, ",\"rgba\":");
    out_array(o, m->rgba, 4);
    replay_putc(o, '}');
  }
  replay_printf(o, "],\"t\":[");
  for (int f = 0; f < r->nframe; ++f) replay_printf(o, "%s%.9g", f ? "," : "", r->t[f]);
  /* poses[f]: bodies 1..nbody-1, 7 numbers each (position, quaternion w,x,y,z) */
  replay_printf(o, "],\"poses\":[");
  for (int f = 0; f < r->nframe; ++f) {
    replay_printf(o, "%s", f ? ",\n" : "");
    out_array(o, r->pose + 7 * (size_t)f * nb, 7 * nb);
  }
  /* contacts[f]: 6 numbers per contact (point, force) */
  replay_printf(o, "],\"contacts\":[");
  for (int f = 0; f < r->nframe; ++f) {
    replay_printf(o, "%s[", f ? ",\n" : "");
    for (int i = r->contact_begin[f]; i < r->contact_begin[f + 1]; ++i) {
      const grit_replay_contact *c = &r->contacts[i];
      replay_printf(o, "%s%.6g,%.6g,%.6g,%.6g,%.6g,%.6g", i > r->contact_begin[f] ? "," : "", c->pos[0], c->pos[1],
                    c->pos[2], c->force[0], c->force[1], c->force[2]);
    }
    replay_putc(o, ']');
  }
  /* patch_pressure[f]: per contact of frame f, a hydroelastic patch's pressure (Pa; 0 for a point
   * contact); written only when some contact is a patch */
  double pmax = 0;
  for (int i = 0; i < r->npressure; ++i) pmax = fmax(pmax, r->pressure[i]);
  if (pmax > 0) {
    replay_printf(o, "],\"max_pressure\":%.6g,\"patch_pressure\":[", pmax);
    for (int f = 0; f < r->nframe; ++f) {
      replay_printf(o, "%s[", f ? ",\n" : "");
      for (int i = r->contact_begin[f]; i < r->contact_begin[f + 1]; ++i)
        replay_printf(o, "%s%.4g", i > r->contact_begin[f] ? "," : "", i < r->npressure ? r->pressure[i] : 0.0);
      replay_putc(o, ']');
    }
  }
  replay_printf(o, "]}");
}

static const char CSS[] =
    "body{margin:0;font:14px/1.4 system-ui,sans-serif;color:#222;background:#fafafa}"
    "header{padding:6px 12px;display:flex;gap:12px;align-items:baseline}"
    "header h1{font-size:17px;margin:0}header .sub{color:#666}"
    "#grit-view{position:relative;width:100%;height:min(68vh,720px);min-height:240px;background:#e9eef3;"
    "overflow:hidden;touch-action:none}"
    "#grit-view canvas{display:block}"
    "#grit-msg{position:absolute;left:12px;top:12px;color:#a00;white-space:pre-wrap}"
    "#grit-controls{display:flex;flex-wrap:wrap;gap:10px;align-items:center;padding:6px 12px;border-bottom:1px solid #ddd}"
    "#grit-slider{flex:1;min-width:160px}#grit-time{font-variant-numeric:tabular-nums;min-width:9em}"
    "#grit-scale{color:#666}"
    "#grit-plots{display:flex;flex-wrap:wrap;gap:8px;padding:8px 12px}"
    "#grit-plots svg{background:#fff;border:1px solid #ddd}"
    ".grit-plot text{font:11px system-ui,sans-serif;fill:#333}.grit-plot .title{font-size:12px;font-weight:600}"
    ".grit-plot .grid{stroke:#eee}.grit-plot .axis{stroke:#888}.grit-plot .cursor{stroke:#c00;stroke-width:1}";

grit_status grit_replay_write_html(grit_replay *r, const char *path) {
  if (!r) return GRIT_ERR_INVALID_ARGUMENT;
  if (!path) return grit_set_error(r->message, GRIT_ERR_INVALID_ARGUMENT, "grit_replay_write_html: NULL path");
  if (r->nframe == 0)
    return grit_set_error(r->message, GRIT_ERR_INVALID_ARGUMENT, "grit_replay_write_html: the replay has no frame");
  grit_outfile out; /* a temporary file, renamed onto path only when the whole page is written */
  char why[GRIT_MESSAGE_SIZE];
  if (grit_outfile_open(&out, path, why) != GRIT_OK)
    return grit_set_error(r->message, GRIT_ERR_IO, "grit_replay_write_html: %s", why);
  FILE *f = out.f;
  replay_out o = {f, 0};
  replay_printf(&o, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
                    "<meta name=\"viewport\" content=\"width=device-width,initial-scale=1\">\n"
                    "<meta name=\"generator\" content=\"grit replay\">\n<title>");
  replay_html_text(&o, r->title);
  replay_printf(&o, "</title>\n<style>%s</style></head>\n<body>\n<header><h1>", CSS);
  replay_html_text(&o, r->title);
  replay_printf(&o, "</h1><span class=\"sub\">%d frames, %.4g s &middot; drag: orbit, shift/right-drag: pan, wheel: zoom, "
                    "space: play/pause</span></header>\n",
                r->nframe, r->t[r->nframe - 1] - r->t[0]);
  replay_printf(&o, "<div id=\"grit-view\"><div id=\"grit-msg\"></div></div>\n"
                    "<div id=\"grit-controls\"><button id=\"grit-play\" type=\"button\">Pause</button>"
                    "<input id=\"grit-slider\" type=\"range\" min=\"%.9g\" max=\"%.9g\" step=\"any\" value=\"%.9g\">"
                    "<span id=\"grit-time\"></span><label>speed <select id=\"grit-speed\">",
                r->t[0], r->t[r->nframe - 1], r->t[0]);
  static const double speeds[] = {0.05, 0.1, 0.25, 0.5, 1, 2, 4};
  for (size_t i = 0; i < sizeof speeds / sizeof speeds[0]; ++i)
    replay_printf(&o, "<option value=\"%g\"%s>%g&times;</option>", speeds[i], speeds[i] == 1 ? " selected" : "", speeds[i]);
  replay_printf(&o, "</select></label><label><input id=\"grit-forces\" type=\"checkbox\" checked> contact forces</label>"
                    "<span id=\"grit-scale\"></span></div>\n<div id=\"grit-plots\">\n");
  replay_write_plots(&o, r);
  replay_printf(&o, "</div>\n<pre id=\"grit-probe\" hidden>{}</pre>\n"
                    "<script type=\"application/json\" id=\"grit-scene\">");
  write_scene_json(&o, r);
  replay_printf(&o, "</script>\n<script>/* three.js r159, MIT licence, (c) three.js authors: third_party/three */\n");
  replay_write(&o, grit_replay_three_js, grit_replay_three_js_size);
  replay_printf(&o, "\n</script>\n<script>\n");
  replay_write(&o, grit_replay_viewer_js, grit_replay_viewer_js_size);
  replay_printf(&o, "\n</script>\n</body></html>\n");
  if (o.error) {
    grit_outfile_abort(&out);
    return grit_set_error(r->message, GRIT_ERR_IO, "grit_replay_write_html: writing %s failed", path);
  }
  if (grit_outfile_commit(&out, why) != GRIT_OK)
    return grit_set_error(r->message, GRIT_ERR_IO, "grit_replay_write_html: %s", why);
  r->message[0] = '\0';
  return GRIT_OK;
}
