/* SPDX-License-Identifier: Apache-2.0 */
/* scenes.c — the scenes of seed 000's test cases (see scenes.h). */
#include "scenes.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const double PI = 3.14159265358979323846;

/* A builder with the time step dt, and the contact parameters every geometry of the scene shares. */
static grit_status scene_begin(double dt, double mu, double k, double d, double tau_d, grit_builder **b,
                               grit_geom_def *contact) {
  grit_status s = grit_builder_create(b);
  if (s != GRIT_OK) return s;
  grit_options opt = grit_default_options();
  opt.timestep = dt;
  s = grit_builder_set_options(*b, &opt);
  *contact = grit_default_geom_def();
  contact->friction = mu;
  contact->stiffness = k;
  contact->dissipation = d;
  contact->tau_d = tau_d;
  if (s != GRIT_OK) grit_builder_free(*b);
  return s;
}

/* Adds a body on a free joint, with one geometry of the given shape and the scene's contact parameters. */
static grit_status scene_free_body(grit_builder *b, const grit_body_def *bd, const grit_geom_def *contact,
                                   grit_shape shape) {
  int body = 0;
  grit_status s = grit_builder_add_body(b, bd, &body);
  grit_joint_def free_joint = grit_default_joint_def();
  free_joint.type = GRIT_JOINT_FREE;
  if (s == GRIT_OK) s = grit_builder_add_joint(b, body, &free_joint, NULL);
  grit_geom_def g = *contact;
  g.body = body;
  g.shape = shape;
  if (s == GRIT_OK) s = grit_builder_add_geom(b, &g, NULL);
  return s;
}

/* Compiles the scene if every step succeeded (else copies the builder's message), and frees the builder. */
static grit_status scene_finish(grit_builder *b, grit_status s, grit_model **m, char msg[GRIT_MESSAGE_SIZE]) {
  if (s == GRIT_OK) s = grit_builder_compile(b, m);
  if (s != GRIT_OK) snprintf(msg, GRIT_MESSAGE_SIZE, "%s", grit_builder_last_error(b));
  grit_builder_free(b);
  return s;
}

/* Ground plane and a sphere on a free joint, with the contact parameters of section XI-B. */
grit_status scene_falling_sphere(double dt, grit_model **m, char msg[GRIT_MESSAGE_SIZE]) {
  grit_builder *b = NULL;
  grit_geom_def contact;
  grit_status s = scene_begin(dt, SCENE_SPHERE_MU, 1e7, 500, 1e-3, &b, &contact);
  if (s != GRIT_OK) return s;
  grit_geom_def ground = contact;
  ground.shape = grit_shape_make(GRIT_GEOM_PLANE, 0, 0, 0);
  if (s == GRIT_OK) s = grit_builder_add_geom(b, &ground, NULL);
  grit_body_def body = grit_default_body_def();
  body.name = "sphere";
  body.mass = SCENE_SPHERE_MASS;
  for (int i = 0; i < 3; ++i) body.inertia[4 * i] = 0.4 * SCENE_SPHERE_MASS * SCENE_SPHERE_RADIUS * SCENE_SPHERE_RADIUS;
  body.pos[2] = SCENE_SPHERE_HEIGHT + SCENE_SPHERE_RADIUS;
  if (s == GRIT_OK) s = scene_free_body(b, &body, &contact, grit_shape_make(GRIT_GEOM_SPHERE, SCENE_SPHERE_RADIUS, 0, 0));
  return scene_finish(b, s, m, msg);
}

grit_status scene_conveyor_belt(double dt, grit_model **m, char msg[GRIT_MESSAGE_SIZE]) {
  grit_builder *b = NULL;
  grit_geom_def contact;
  grit_status s = scene_begin(dt, SCENE_BOX_MU, 1e7, 500, 1e-3, &b, &contact);
  if (s != GRIT_OK) return s;
  /* the belt: a heavy body on an actuated slide joint along x (scene_conveyor_belt_force drives it) */
  grit_body_def belt = grit_default_body_def();
  belt.name = "belt";
  belt.mass = SCENE_BELT_MASS;
  for (int i = 0; i < 3; ++i) belt.inertia[4 * i] = SCENE_BELT_MASS;
  int belt_body = 0;
  if (s == GRIT_OK) s = grit_builder_add_body(b, &belt, &belt_body);
  grit_joint_def slide = grit_default_joint_def();
  slide.type = GRIT_JOINT_SLIDE;
  slide.axis[0] = 1;
  slide.axis[2] = 0;
  int slide_joint = 0;
  if (s == GRIT_OK) s = grit_builder_add_joint(b, belt_body, &slide, &slide_joint);
  grit_actuator_def motor = grit_default_actuator_def();
  motor.joint = slide_joint;
  if (s == GRIT_OK) s = grit_builder_add_actuator(b, &motor, NULL);
  grit_geom_def surface = contact;
  surface.body = belt_body;
  surface.shape = grit_shape_make(GRIT_GEOM_PLANE, 0, 0, 0);
  if (s == GRIT_OK) s = grit_builder_add_geom(b, &surface, NULL);
  /* the box, resting on the belt */
  grit_body_def box = grit_default_body_def();
  box.name = "box";
  box.mass = SCENE_BOX_MASS;
  for (int i = 0; i < 3; ++i) box.inertia[4 * i] = SCENE_BOX_MASS * (2 * SCENE_BOX_HALF) * (2 * SCENE_BOX_HALF) / 6.0;
  box.pos[2] = SCENE_BOX_HALF;
  if (s == GRIT_OK) s = scene_free_body(b, &box, &contact, grit_shape_make(GRIT_GEOM_BOX, SCENE_BOX_HALF, SCENE_BOX_HALF, SCENE_BOX_HALF));
  return scene_finish(b, s, m, msg);
}

double scene_conveyor_belt_force(double t, double dt) {
  const double w = 2 * PI * SCENE_BELT_FREQUENCY;
  return SCENE_BELT_MASS * SCENE_BELT_AMPLITUDE * w * (sin(w * (t + dt)) - sin(w * t)) / dt;
}

grit_status scene_sliding_rod(double dt, grit_model **m, char msg[GRIT_MESSAGE_SIZE]) {
  grit_builder *b = NULL;
  grit_geom_def contact;
  grit_status s = scene_begin(dt, SCENE_ROD_MU, 1e7, 0, 0, &b, &contact);
  if (s != GRIT_OK) return s;
  grit_geom_def ground = contact;
  ground.shape = grit_shape_make(GRIT_GEOM_PLANE, 0, 0, 0);
  if (s == GRIT_OK) s = grit_builder_add_geom(b, &ground, NULL);
  /* The rod's axis points from its lower end A, which leads along +x, back and up to its upper end:
   * (-cos a, 0, sin a). Its body frame is the capsule's frame, whose z axis is the rod's axis:
   * a rotation about y by a - 90 degrees. */
  const double a = SCENE_ROD_ANGLE_DEG * PI / 180, r = SCENE_ROD_RADIUS, hl = 0.5 * SCENE_ROD_LENGTH - r;
  const double L = SCENE_ROD_LENGTH, mass = SCENE_ROD_MASS, phi = a - 0.5 * PI;
  grit_body_def rod = grit_default_body_def();
  rod.name = "rod";
  rod.mass = mass;
  for (int i = 0; i < 9; ++i) rod.inertia[i] = 0;
  rod.inertia[0] = rod.inertia[4] = mass * L * L / 12.0; /* slender rod about its centre */
  rod.inertia[8] = 0.5 * mass * r * r;
  rod.pos[2] = r + hl * sin(a); /* lower end's sphere touching the ground */
  rod.quat[0] = cos(0.5 * phi);
  rod.quat[2] = sin(0.5 * phi);
  if (s == GRIT_OK) s = scene_free_body(b, &rod, &contact, grit_shape_make(GRIT_GEOM_CAPSULE, r, hl, 0));
  return scene_finish(b, s, m, msg);
}

double scene_sliding_rod_clearance(const double *q) {
  const double hl = 0.5 * SCENE_ROD_LENGTH - SCENE_ROD_RADIUS, z_axis[3] = {0, 0, 1};
  double axis[3];
  grit_quat_rotate(axis, q + 3, z_axis);
  return q[2] - fabs(axis[2]) * hl - SCENE_ROD_RADIUS;
}

grit_status scene_clutter(int n_objects, double dt, grit_model **m, char msg[GRIT_MESSAGE_SIZE]) {
  grit_builder *b = NULL;
  grit_geom_def contact;
  grit_status s = scene_begin(dt, 1.0, 1e7, 10, 1e-4, &b, &contact);
  if (s != GRIT_OK) return s;
  /* the open box: a floor and four walls facing inwards, 0.4 m from the centre */
  const double half = 0.4, c45 = cos(0.25 * PI);
  const double wall_quat[4][4] = {{c45, 0, c45, 0}, {c45, 0, -c45, 0}, {c45, -c45, 0, 0}, {c45, c45, 0, 0}};
  const double wall_pos[4][3] = {{-half, 0, 0}, {half, 0, 0}, {0, -half, 0}, {0, half, 0}};
  grit_geom_def g = contact;
  g.shape = grit_shape_make(GRIT_GEOM_PLANE, 0, 0, 0);
  if (s == GRIT_OK) s = grit_builder_add_geom(b, &g, NULL);
  for (int w = 0; w < 4 && s == GRIT_OK; ++w) {
    for (int i = 0; i < 3; ++i) g.pos[i] = wall_pos[w][i];
    for (int i = 0; i < 4; ++i) g.quat[i] = wall_quat[w][i];
    s = grit_builder_add_geom(b, &g, NULL);
  }
  /* four columns of objects, 12 cm apart vertically */
  const double r = 0.05, col[4][2] = {{-0.2, -0.2}, {0.2, -0.2}, {-0.2, 0.2}, {0.2, 0.2}};
  for (int k = 0; k < n_objects && s == GRIT_OK; ++k) {
    const int c = k % 4, level = k / 4, sphere = (level + c) % 2 == 0;
    grit_body_def bd = grit_default_body_def();
    for (int i = 0; i < 9; ++i) bd.inertia[i] = 0;
    bd.mass = sphere ? 1000.0 * 4.0 / 3.0 * PI * r * r * r : 1000.0 * (2 * r) * (2 * r) * (2 * r);
    const double I = sphere ? 0.4 * bd.mass * r * r : bd.mass * (2 * r) * (2 * r) / 6.0;
    bd.inertia[0] = bd.inertia[4] = bd.inertia[8] = I;
    /* deterministic offsets (a few mm) and tilts (a few degrees) */
    bd.pos[0] = col[c][0] + 0.004 * sin(1.7 * k);
    bd.pos[1] = col[c][1] + 0.004 * cos(2.3 * k);
    bd.pos[2] = 0.1 + 0.12 * level;
    const double tilt = 0.05 * sin(3.1 * k);
    bd.quat[0] = cos(tilt);
    bd.quat[1] = sin(tilt) * 0.6;
    bd.quat[2] = sin(tilt) * 0.8;
    s = scene_free_body(b, &bd, &contact,
                        sphere ? grit_shape_make(GRIT_GEOM_SPHERE, r, 0, 0) : grit_shape_make(GRIT_GEOM_BOX, r, r, r));
  }
  return scene_finish(b, s, m, msg);
}

/* ------------------------------------------------------------------- the examples' plumbing */

const char *scene_model_name(grit_contact_model model) {
  static const char *const names[] = {"lagged", "similar", "sap"};
  return model >= GRIT_CONTACT_LAGGED && model <= GRIT_CONTACT_SAP ? names[model] : "?";
}

int scene_parse_options(int argc, char **argv, double dt_max, scene_options *o, scene_extra_option extra, void *ctx,
                        const char *extra_usage) {
  for (int i = 1; i < argc; ++i) {
    const int has_value = i + 1 < argc;
    int used = extra ? extra(argc, argv, i, ctx) : 0;
    if (used > 0) {
      i += used - 1;
    } else if (!strcmp(argv[i], "--csv") && has_value) {
      o->csv = argv[++i];
    } else if (!strcmp(argv[i], "--dt") && has_value) {
      o->dt = atof(argv[++i]);
    } else if (!strcmp(argv[i], "--model") && has_value) {
      const char *name = argv[++i];
      int k = 0;
      while (k < 3 && strcmp(name, scene_model_name((grit_contact_model)k))) k++;
      if (k == 3) {
        fprintf(stderr, "%s: unknown model '%s' (lagged, similar, sap)\n", argv[0], name);
        return 2;
      }
      o->model = (grit_contact_model)k;
    } else {
      fprintf(stderr, "usage: %s [--model lagged|similar|sap] [--dt S] [--csv FILE]%s\n", argv[0],
              extra_usage ? extra_usage : "");
      return 2;
    }
  }
  if (!(o->dt > 0 && o->dt <= dt_max)) {
    fprintf(stderr, "%s: --dt must be in (0, %g]\n", argv[0], dt_max);
    return 2;
  }
  return 0;
}

int scene_start(const char *prog, grit_status s, const char *msg, grit_model **m, const scene_options *o,
                grit_data **d, grit_outfile *csv, const char *csv_header) {
  *d = NULL;
  memset(csv, 0, sizeof *csv);
  char why[GRIT_MESSAGE_SIZE];
  if (s == GRIT_OK) s = grit_data_create(*m, d);
  grit_step_settings settings = grit_default_step_settings();
  settings.contact_model = o->model;
  if (s == GRIT_OK) s = grit_data_set_step_settings(*d, &settings);
  if (s != GRIT_OK) {
    fprintf(stderr, "%s: %s: %s\n", prog, grit_status_string(s), msg && msg[0] ? msg : grit_data_last_error(*d));
  } else if (o->csv && grit_outfile_open(csv, o->csv, why) != GRIT_OK) {
    fprintf(stderr, "%s: %s\n", prog, why);
  } else {
    if (csv->f) fprintf(csv->f, "%s\n", csv_header);
    return 0;
  }
  grit_data_free(*d);
  grit_model_free(*m);
  *d = NULL;
  *m = NULL;
  return 1;
}

int scene_csv_close(const char *prog, grit_outfile *csv, int ok) {
  char why[GRIT_MESSAGE_SIZE];
  if (!csv->f) return 0;
  if (!ok) {
    grit_outfile_abort(csv);
    return 0;
  }
  if (grit_outfile_commit(csv, why) == GRIT_OK) return 0;
  fprintf(stderr, "%s: %s\n", prog, why);
  return 1;
}
