#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Writes clutter.xml: the scene of examples/scenes.c (scene_clutter, 40 objects) as MJCF."""
import math

def num(x):
    """The shortest text that reads back as the same double."""
    return "0" if x == 0 else repr(float(x))

def vec(v):
    return " ".join(num(x) for x in v)

PI = math.pi
out = ['''<!-- clutter.xml: seed 000, section XII-A (examples/scenes.c, scene_clutter with 40 objects): 10 cm
     spheres (0.524 kg) and 10 cm boxes (1 kg), alternating in four columns, dropped into an open
     80 x 80 x 80 cm box (a floor and four walls facing inwards); mu = 1, k = 1e7 N/m, d = 10 s/m,
     tau_d = 1e-4 s, dt = 2 ms. Masses and inertias come from the geometries (density 1000).
     Written by gen_clutter.py with the offsets of scenes.c (a few mm, a few degrees).
       Run with: grit sim clutter.xml, option steps 1500 (3 s). -->
<mujoco model="clutter">
  <option timestep="0.002"/>
  <custom>
    <numeric name="grit_stiffness" data="1e7"/>
    <numeric name="grit_dissipation" data="10"/>
    <numeric name="grit_tau_d" data="1e-4"/>
  </custom>
  <default>
    <geom friction="1" density="1000"/>
  </default>
  <worldbody>
    <geom name="floor" type="plane" size="0.4 0.4 0.1"/>''']
half, c45 = 0.4, math.cos(0.25 * PI)
walls = [("wall_xneg", (-half, 0, 0), (c45, 0, c45, 0)), ("wall_xpos", (half, 0, 0), (c45, 0, -c45, 0)),
         ("wall_yneg", (0, -half, 0), (c45, -c45, 0, 0)), ("wall_ypos", (0, half, 0), (c45, c45, 0, 0))]
for name, p, q in walls:
    out.append('    <geom name="%s" type="plane" size="0.4 0.4 0.1" pos="%s" quat="%s"/>' % (name, vec(p), vec(q)))
col = [(-0.2, -0.2), (0.2, -0.2), (-0.2, 0.2), (0.2, 0.2)]
for k in range(40):
    c, level = k % 4, k // 4
    sphere = (level + c) % 2 == 0
    p = (col[c][0] + 0.004 * math.sin(1.7 * k), col[c][1] + 0.004 * math.cos(2.3 * k), 0.1 + 0.12 * level)
    tilt = 0.05 * math.sin(3.1 * k)
    q = (math.cos(tilt), math.sin(tilt) * 0.6, math.sin(tilt) * 0.8, 0.0)
    out.append('    <body name="object%d" pos="%s" quat="%s">' % (k, vec(p), vec(q)))
    out.append('      <freejoint/>')
    out.append('      <geom type="%s"/>' % ('sphere" size="0.05' if sphere else 'box" size="0.05 0.05 0.05'))
    out.append('    </body>')
out.append('  </worldbody>\n</mujoco>')
with open("clutter.xml", "w") as f:
    f.write("\n".join(out) + "\n")
