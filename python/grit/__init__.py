# SPDX-License-Identifier: Apache-2.0
"""grit: differentiable simulation of rigid multibody systems with frictional contact.

The classes and most functions come from the extension module grit._grit (C, over grit's C API); this
file adds the pure-Python conveniences: parameter names for Jacobians and fitting, the iLQR keyword
options, replay pages from arrays. See docs/python.md.
"""

import os as _os

import numpy as _np

from ._grit import (
    Contacts,
    Data,
    Error,
    FitResult,
    ILQRResult,
    Model,
    Replay,
    __version__,
    load,
)
from . import _grit

__all__ = [
    "Contacts", "Data", "Error", "FitResult", "ILQR", "ILQRResult", "Model", "Replay", "__version__",
    "fit", "linearize", "load", "params", "replay", "rollout", "with_params",
]

# grit_param_kind (include/grit/derivatives.h)
_KINDS = {"friction": 0, "stiffness": 1, "dissipation": 2, "mass": 3}


def _param(model, spec):
    """(kind, index) of a parameter: "friction", "stiffness" or "dissipation" (every geometry),
    "friction:GEOM" (a geometry by name or index), "mass:BODY" (a body by name or index >= 1), or a
    (kind, index) pair of a name or int and an int."""
    if isinstance(spec, tuple):
        kind, index = spec
        if isinstance(kind, str):
            kind = _KINDS[kind] if kind in _KINDS else _bad_kind(kind)
        return int(kind), int(index)
    if not isinstance(spec, str):
        raise TypeError("a parameter is a name such as 'friction' or 'mass:ball', or a (kind, index) pair")
    name, _, which = spec.partition(":")
    if name not in _KINDS:
        _bad_kind(name)
    if name == "mass":
        if not which:
            raise ValueError("a mass parameter names its body: 'mass:BODY'")
        return _KINDS[name], _index(model.body_names, which, "body")
    return _KINDS[name], (_index(model.geom_names, which, "geometry") if which else -1)


def _bad_kind(kind):
    raise ValueError(f"unknown parameter kind '{kind}' (friction, stiffness, dissipation, mass)")


def _index(names, which, what):
    if which.lstrip("-").isdigit():
        return int(which)
    if which not in names:
        raise ValueError(f"the model has no {what} named '{which}'")
    return names.index(which)


def params(model, specs=True):
    """The list of (kind, index) pairs of parameter specs. specs=True: the contact parameters of every
    geometry at once (friction, stiffness, dissipation) and the mass of every body, in that order."""
    if specs is True:
        return [(0, -1), (1, -1), (2, -1)] + [(3, b) for b in range(1, model.nbody)]
    return [_param(model, s) for s in specs]


def with_params(model, values):
    """A copy of model with parameters changed: values is a dict {spec: value} (specs as in grit.params:
    'friction' sets every geometry's, 'friction:GEOM' one geometry's, 'mass:BODY' a body's mass with its
    inertia scaled alike). Keyframes and the file's step settings carry over."""
    return model.with_params([_param(model, s) for s in values], [float(x) for x in values.values()])


def linearize(model, qpos, qvel, ctrl=None, contact="lagged", params=None, act=None):
    """(A, B) of one step from (qpos, qvel) under ctrl (None: zero): A = dx+/dx (2nv, 2nv), B = dx+/du (2nv, nu), the
    state's perturbation in the tangent space (dq then dv), exactly as `grit deriv --json`.
    params (True or a list of specs, see grit.params) adds P = dx+/dparams (2nv, np): (A, B, P).
    With actuator activations (model.na > 0) the state is x = (q, v, act): act (na,) (None: zero), and
    A, B, P have 2nv + na rows."""
    plist = None if params is None or params is False else globals()["params"](model, params)
    return _grit.linearize(model, qpos, qvel, ctrl, contact, plist, act)


def rollout(model, qpos, qvel, ctrl, contact="lagged", threads=0, derivatives=False):
    """A batch of N trajectories of T steps: qpos (N, nq), qvel (N, nv), ctrl (N, T, nu) give
    (qpos (N, T+1, nq), qvel (N, T+1, nv)), and with derivatives=True also the Jacobians of every step,
    A (N, T, 2nv, 2nv) and B (N, T, 2nv, nu). threads=0: one per CPU. The GIL is released; the results
    are bitwise the same for any number of threads."""
    return _grit.rollout(model, qpos, qvel, ctrl, contact, threads, derivatives)


class ILQR(_grit.ILQR):
    """ILQR(model, horizon, x0, *, contact="lagged", x_goal=None, Q=None, Qf=None, R=None, u_ref=None,
    u_min=None, u_max=None, C_final=None, Cx_path=None, Cu_path=None, d_path=None, gradient_smoothing=0.0,
    gradient_smoothing_barrier=0.0, log=None, threads=1, **options)

    iLQR over grit's step (ilqr/include/grit_ilqr/ilqr.h). Control box: u_min, u_max if given (both; +-inf
    allowed), else the model's ctrl_range (the MJCF actuators' ctrlrange where ctrllimited) when any
    actuator is limited, else none. States are x = (q, v) (nq + nv numbers) and
    their perturbations live in the tangent space (2 nv); Q, Qf are (2nv, 2nv) or their diagonals, R is
    (nu, nu) or its diagonal. Path constraints: Cx_path (nc, 2nv) (x_k (-) x_goal) + Cu_path (nc, nu) u_k
    <= d_path (nc,) at every knot k < N. gradient_smoothing (m) smooths the contacts' derivatives
    (docs/contact.md). log(iteration: dict) is called after each iteration; a true return stops the solve.
    options: the fields of grit_ilqr_options (max_iterations, tol_cost, tol_feedforward, reg_init, reg_min,
    reg_max, reg_factor, ls_decrease, ls_max_trials, ls_accept, tol_constraint, penalty_init,
    penalty_factor, penalty_max, max_time, tol_gradient, alpha_converged, inner_max_iterations, kink_alpha,
    reg_limit_ends_inner, stall_short_steps, reg_reset_on_update; docs/ilqr.md)."""

    def __init__(self, model, horizon, x0, *, contact="lagged", x_goal=None, Q=None, Qf=None, R=None,
                 u_ref=None, u_min=None, u_max=None, C_final=None, Cx_path=None, Cu_path=None, d_path=None,
                 gradient_smoothing=0.0, gradient_smoothing_barrier=0.0, log=None, threads=1, **options):
        if u_min is None and u_max is None:  # the file's ctrlrange (ctrllimited actuators) by default
            r = model.ctrl_range
            if r.size and _np.isfinite(r).any():
                u_min, u_max = r[:, 0].copy(), r[:, 1].copy()
        super().__init__(model, horizon, x0, contact=contact, x_goal=x_goal, Q=Q, Qf=Qf, R=R, u_ref=u_ref,
                         u_min=u_min, u_max=u_max, C_final=C_final, threads=threads, options=options,
                         Cx_path=Cx_path, Cu_path=Cu_path, d_path=d_path,
                         gradient_smoothing=float(gradient_smoothing),
                         gradient_smoothing_barrier=float(gradient_smoothing_barrier), log=log)


def _trajectory(t):
    if isinstance(t, dict):
        return (t["qpos"], t["qvel"], t.get("ctrl"))
    if isinstance(t, (tuple, list)) and len(t) in (2, 3):
        return tuple(t) if len(t) == 3 else (t[0], t[1], None)
    raise TypeError("a trajectory is (qpos, qvel[, ctrl]) or a dict with 'qpos', 'qvel' and 'ctrl'")


def fit(model, trajectories, params, contact="lagged", **options):
    """Fits contact parameters and masses to observed trajectories (grit_fit, docs/sysid.md).

    trajectories: a list of (qpos (T+1, nq), qvel (T+1, nv), ctrl (T, nu) or None), or of dicts with those
    keys, each sampled at the model's timestep (several trajectories are fitted together, by grit_fit
    itself). params: a dict {spec: guess} or a list of (spec, guess) pairs, spec as in grit.params
    ('friction', 'stiffness:floor', 'mass:ball', ...). options: segment_steps, fit_initial_states, position_sigma, velocity_sigma,
    max_iters, tol, max_log_step, rel_tol. Returns a grit.FitResult whose values, std follow the order of
    params."""
    if isinstance(params, dict):
        params = list(params.items())
    if isinstance(params, (str, bytes)) or not all(isinstance(p, (tuple, list)) and len(p) == 2 for p in params):
        raise TypeError("params: a dict {spec: guess} or a list of (spec, guess), e.g. {'friction': 0.5}")
    plist = [_param(model, s) for s, _ in params]
    guesses = [float(g) for _, g in params]
    trajs = [_trajectory(t) for t in trajectories]
    return _grit.fit(model, trajs, plist, guesses, contact, options)


def replay(model, path, qpos, times=None, title=None):
    """Writes a replay page (one offline HTML file, docs/viewer.md) of the positions qpos (T, nq) at
    times (T,) (default: multiples of the model's timestep). Returns the grit.Replay (add markers or plots
    and write it again if needed). To draw contact forces, record frames yourself with
    Replay.add_data(data) after each step."""
    if isinstance(qpos, (str, bytes, _os.PathLike)) and not isinstance(path, (str, bytes, _os.PathLike)):
        path, qpos = qpos, path  # replay(model, qpos, path) works too
    qpos = _np.asarray(qpos, dtype=float)
    if qpos.ndim != 2:
        raise ValueError("replay: qpos must be (T, nq)")
    if times is None:
        times = _np.arange(qpos.shape[0]) * model.timestep
    r = Replay(model, title)
    for t, q in zip(times, qpos):
        r.add_frame(float(t), q)
    r.write(_os.fspath(path))
    return r
