/* SPDX-License-Identifier: Apache-2.0 */
/* grit/dynamics.h — kinematics and smooth dynamics of the model at the data's state: body poses,
 * point Jacobians, the mass matrix, bias forces, the free-motion velocity, and integration of positions
 * on the manifold. All results use the conventions of docs/conventions.md. */
#ifndef GRIT_DYNAMICS_H
#define GRIT_DYNAMICS_H

#include "grit/data.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Computes poses, motion subspaces and body velocities at the data's (q, v). The data keeps them
 * current: creation, reset, setting q or v, and every step recompute them, so calling this is only
 * needed after changing the state through other means. */
GRIT_API grit_status grit_forward_kinematics(grit_data *data);

/* World pose of a body frame at the data's current state: position (m) and quaternion (w,x,y,z).
 * Either output may be NULL. */
GRIT_API grit_status grit_body_pose(const grit_data *data, int body, double pos[3], double quat[4]);

/* World position of a body's centre of mass, and its spatial twist (angular; linear velocity of the
 * body point at the world origin), at the data's current state. Either output may be NULL. */
GRIT_API grit_status grit_body_com(const grit_data *data, int body, double com[3]);
GRIT_API grit_status grit_body_twist(const grit_data *data, int body, double twist[6]);

/* Jacobians (3 x nv, row-major) of the world velocity of the point `point` (world coordinates) fixed
 * to `body`, and (if jacr is not NULL) of the body's angular velocity: v_point = jacp v. */
GRIT_API grit_status grit_point_jacobian(const grit_data *data, int body, const double point[3], double *jacp,
                                double *jacr);

/* The joint-space mass matrix M(q) (nv x nv, row-major, dense; zero between different trees),
 * including armature. Computes kinematics first. */
GRIT_API grit_status grit_mass_matrix(grit_data *data, double *M);

/* The bias forces c(q, v) (Coriolis, centrifugal, gyroscopic and gravity; MuJoCo's qfrc_bias), so that
 * M dv/dt + c = applied forces. Computes kinematics first. */
GRIT_API grit_status grit_bias_forces(grit_data *data, double *c);

/* The actuators' scalar forces f (nu numbers) at the data's state, controls and activations, as MuJoCo
 * 2.2.2 defines them (its actuator_force): gain(l, l') w + bias(l, l'), w the clamped control or the
 * activation, clamped to force_range when force_limited (docs/actuation.md). The generalized force of
 * actuator a is gear * f[a] on its joint's dof, or gear * J^T f[a] through its tendon (J = dL/dv). This is the force at the state; a step applies it with
 * the servos' slopes implicit (at O(dt) from it). */
GRIT_API grit_status grit_actuator_forces(grit_data *data, double *force);

/* The free-motion velocity v* of one time step from the data's state and controls: the velocity the
 * step would produce without contacts or limits (damping and springs implicit; seed 000 eq. 1-2). */
GRIT_API grit_status grit_free_motion_velocity(grit_data *data, double *vstar);

/* Kinetic energy 1/2 v^T M v and gravitational potential energy -sum (1 - gravcomp_b) m_b g.c_b plus
 * spring energy, at the data's state (J). Either output may be NULL. */
GRIT_API grit_status grit_energy(grit_data *data, double *kinetic, double *potential);

/* q <- q (+) h v on the manifold (nq and nv numbers): hinge/slide coordinates add, quaternions are
 * multiplied by exp(h omega) with omega in the body frame. */
GRIT_API grit_status grit_integrate_positions(const grit_model *model, double *q, const double *v, double h);

/* The tangent-space difference dq (nv numbers) with qb = qa (+) dq, so that
 * grit_integrate_positions(qa, dq, 1) gives qb (up to quaternion sign). */
GRIT_API grit_status grit_position_difference(const grit_model *model, const double *qa, const double *qb, double *dq);

#ifdef __cplusplus
}
#endif
#endif /* GRIT_DYNAMICS_H */
