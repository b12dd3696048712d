/* SPDX-License-Identifier: Apache-2.0 */
/* grit replay viewer: plays the frames of the page's scene JSON (element #grit-scene, written by
 * src/replay/replay.c) with three.js (the global THREE, inlined before this script). grit's frame is z-up, metres.
 * No dynamics here: every body pose comes from the JSON, interpolated between frames.
 * URL hash (or query) parameters: t=SECONDS, paused=1, speed=X, forces=0, view=AZIMUTH_DEG,ELEVATION_DEG,
 * height=PIXELS (the 3-D view's height, otherwise a fraction of the window's), clock=SECONDS (the playback
 * clock reads this many seconds of wall time since the page started instead of the real time: a hook for
 * tests, so that the time shown does not depend on how fast the machine runs).
 * #grit-probe receives, on every change, a JSON summary of what was drawn (used by the tests). */
(function () {
  'use strict';
  const S = JSON.parse(document.getElementById('grit-scene').textContent);
  const $ = (id) => document.getElementById(id);
  const view = $('grit-view'), msg = $('grit-msg'), probe = $('grit-probe');
  const slider = $('grit-slider'), playBtn = $('grit-play'), timeLbl = $('grit-time');
  const speedSel = $('grit-speed'), forcesBox = $('grit-forces'), scaleLbl = $('grit-scale');
  const T = S.t, nf = T.length, nb = S.nbody - 1, t0 = T[0], t1 = T[nf - 1], span = t1 - t0;
  const lo = S.extent.lo, hi = S.extent.hi;
  const size = Math.max(hi[0] - lo[0], hi[1] - lo[1], hi[2] - lo[2], 1e-3);
  const center = [0, 1, 2].map((k) => 0.5 * (lo[k] + hi[k]));
  const st = { t: t0, playing: span > 0, speed: 1, forces: true, az: -70, el: 22, drawn: 0 };
  let fixedWall = null; /* the clock=SECONDS parameter */

  function clampT(t) { return Math.min(t1, Math.max(t0, t)); }

  function readHash() {
    const raw = location.hash.length > 1 ? location.hash.slice(1) : location.search.slice(1);
    const h = new URLSearchParams(raw);
    const num = (k) => { const v = parseFloat(h.get(k)); return isFinite(v) ? v : null; };
    if (num('t') !== null) st.t = clampT(num('t'));
    if (h.has('paused')) st.playing = h.get('paused') === '0' && span > 0;
    if (num('speed') !== null && num('speed') > 0) st.speed = num('speed');
    if (num('clock') !== null && num('clock') >= 0) fixedWall = num('clock');
    if (h.has('forces')) st.forces = h.get('forces') !== '0';
    if (num('height') !== null && num('height') >= 50) view.style.height = Math.round(num('height')) + 'px';
    if (h.has('view')) {
      const v = h.get('view').split(',').map(parseFloat);
      if (v.length === 2 && isFinite(v[0]) && isFinite(v[1])) { st.az = v[0]; st.el = v[1]; }
    }
  }
  readHash();

  /* the frame at time t: index f with T[f] <= t < T[f+1], and the fraction a towards f+1 */
  function frameAt(t) {
    let a = 0, b = nf - 1;
    if (t >= T[b]) return [b, 0];
    while (b - a > 1) { const m = (a + b) >> 1; if (T[m] <= t) a = m; else b = m; }
    const d = T[a + 1] - T[a];
    return [a, d > 0 ? Math.min(1, Math.max(0, (t - T[a]) / d)) : 0];
  }

  let renderer = null, scene3, camera, groups = [], arrows = [], geomMeshes = [], markerMeshes = [], dots = [];
  const hasThree = typeof THREE !== 'undefined';
  if (!hasThree) msg.textContent = 'three.js did not load: the 3-D view is unavailable (the plots below still work).';
  if (hasThree) {
    try {
      renderer = new THREE.WebGLRenderer({ antialias: true, preserveDrawingBuffer: true });
    } catch (e) {
      renderer = null;
      msg.textContent = 'WebGL is not available in this browser (' + e.message + '): the 3-D view is unavailable; ' +
        'the plots below still work.';
    }
  }

  const srgb = (c) => new THREE.Color().setRGB(c[0], c[1], c[2], THREE.SRGBColorSpace);
  function material(rgba) {
    return new THREE.MeshPhongMaterial({ color: srgb(rgba), shininess: 25, transparent: rgba[3] < 1,
      opacity: rgba[3], depthWrite: rgba[3] >= 1 });
  }
  /* A shape along grit's conventions (capsule and cylinder axes along local z). */
  function shapeGeometry(g, planeSize) {
    const s = g.size;
    switch (g.type) {
      case 'sphere': return new THREE.SphereGeometry(s[0], 40, 20);
      case 'capsule': return new THREE.CapsuleGeometry(s[0], 2 * s[1], 10, 28).rotateX(Math.PI / 2);
      case 'cylinder': return new THREE.CylinderGeometry(s[0], s[0], 2 * s[1], 36).rotateX(Math.PI / 2);
      case 'box': return new THREE.BoxGeometry(2 * s[0], 2 * s[1], 2 * s[2]);
      case 'ellipsoid': return new THREE.SphereGeometry(1, 40, 20).scale(s[0], s[1], s[2]);
      case 'plane': return new THREE.PlaneGeometry(planeSize, planeSize);
      case 'convex': {
        const geo = new THREE.BufferGeometry(), v = g.vertices, f = g.faces || [];
        if (!f.length) { geo.setAttribute('position', new THREE.Float32BufferAttribute(v, 3)); return geo; }
        const p = [];
        for (const i of f) p.push(v[3 * i], v[3 * i + 1], v[3 * i + 2]);
        geo.setAttribute('position', new THREE.Float32BufferAttribute(p, 3));
        geo.computeVertexNormals();
        return geo;
      }
    }
    return null;
  }
  const quat = (q) => new THREE.Quaternion(q[1], q[2], q[3], q[0]); /* grit (w,x,y,z) -> three (x,y,z,w) */

  if (renderer) {
    renderer.setPixelRatio(window.devicePixelRatio || 1);
    view.appendChild(renderer.domElement);
    scene3 = new THREE.Scene();
    scene3.background = new THREE.Color(0xe9eef3);
    camera = new THREE.PerspectiveCamera(40, 1, size / 1000, size * 200);
    camera.up.set(0, 0, 1);
    scene3.add(new THREE.HemisphereLight(0xffffff, 0x8090a0, 2.2));
    const sun = new THREE.DirectionalLight(0xffffff, 1.6);
    sun.position.set(center[0] + size, center[1] - 1.5 * size, center[2] + 2.5 * size);
    sun.target.position.set(center[0], center[1], center[2]);
    scene3.add(sun, sun.target);
    /* planes are drawn as squares around the scene, with a 10 cm (or coarser) grid */
    const reach = Math.max(Math.abs(lo[0]), Math.abs(hi[0]), Math.abs(lo[1]), Math.abs(hi[1]));
    const planeSize = 2 * Math.max(1, 1.5 * reach + 0.5 * size);
    for (let b = 1; b <= nb; ++b) { const g = new THREE.Group(); groups[b] = g; scene3.add(g); }
    S.geoms.forEach((g) => {
      const geo = shapeGeometry(g, planeSize);
      if (!geo) return;
      let obj;
      if (g.type === 'convex' && !(g.faces && g.faces.length)) {
        obj = new THREE.Points(geo, new THREE.PointsMaterial({ color: srgb(g.rgba), size: 0.01 * size }));
      } else {
        obj = new THREE.Mesh(geo, material(g.rgba));
      }
      obj.position.set(g.pos[0], g.pos[1], g.pos[2]);
      obj.quaternion.copy(quat(g.quat));
      obj.name = g.name;
      if (g.type === 'plane') {
        const step = planeSize <= 6 ? 0.1 : planeSize <= 60 ? 1 : 10;
        const grid = new THREE.GridHelper(planeSize, Math.round(planeSize / step), 0x9aa4ae, 0xb8c0c8);
        grid.rotateX(Math.PI / 2);
        grid.position.z = 1e-4 * size;
        obj.add(grid);
      }
      (g.body > 0 ? groups[g.body] : scene3).add(obj);
      geomMeshes.push(obj);
    });
    S.markers.forEach((m) => {
      const geo = shapeGeometry(m, 0);
      if (!geo) return;
      const obj = new THREE.Mesh(geo, material(m.rgba));
      obj.position.set(m.pos[0], m.pos[1], m.pos[2]);
      obj.quaternion.copy(quat(m.quat));
      obj.name = m.name;
      scene3.add(obj);
      markerMeshes.push(obj);
    });
  }

  /* Orbit camera about a target point, z up: drag rotates, shift-drag or right-drag pans, wheel zooms. */
  /* the first view frames the bounding sphere of everything but planes over the whole trajectory */
  const radius = 0.5 * Math.hypot(hi[0] - lo[0], hi[1] - lo[1], hi[2] - lo[2]);
  const orbit = { target: hasThree ? new THREE.Vector3(center[0], center[1], center[2]) : null, r: 2 * radius,
    az: st.az * Math.PI / 180, el: st.el * Math.PI / 180, user: false };
  function frameScene() {
    const v = camera.fov * Math.PI / 360, h = Math.atan(Math.tan(v) * camera.aspect);
    orbit.r = 0.92 * radius / Math.sin(Math.min(v, h));
  }
  function placeCamera() {
    if (!camera) return;
    const c = Math.cos(orbit.el);
    camera.position.set(orbit.target.x + orbit.r * c * Math.cos(orbit.az),
      orbit.target.y + orbit.r * c * Math.sin(orbit.az), orbit.target.z + orbit.r * Math.sin(orbit.el));
    camera.lookAt(orbit.target);
  }
  if (renderer) {
    const el = renderer.domElement;
    let drag = null;
    el.addEventListener('contextmenu', (e) => e.preventDefault());
    el.addEventListener('pointerdown', (e) => {
      drag = { x: e.clientX, y: e.clientY, pan: e.button === 2 || e.shiftKey };
      el.setPointerCapture(e.pointerId);
    });
    el.addEventListener('pointerup', (e) => { drag = null; el.releasePointerCapture(e.pointerId); });
    el.addEventListener('pointermove', (e) => {
      if (!drag) return;
      const dx = e.clientX - drag.x, dy = e.clientY - drag.y;
      drag.x = e.clientX; drag.y = e.clientY;
      if (drag.pan) {
        const k = orbit.r * 2 * Math.tan(camera.fov * Math.PI / 360) / el.clientHeight;
        const right = new THREE.Vector3().setFromMatrixColumn(camera.matrix, 0);
        const up = new THREE.Vector3().setFromMatrixColumn(camera.matrix, 1);
        orbit.target.addScaledVector(right, -dx * k).addScaledVector(up, dy * k);
      } else {
        orbit.az -= dx * 0.008;
        orbit.el = Math.min(1.55, Math.max(-1.55, orbit.el + dy * 0.008));
      }
      orbit.user = true;
      dirty = true;
    });
    el.addEventListener('wheel', (e) => {
      e.preventDefault();
      orbit.r = Math.min(size * 100, Math.max(size * 0.05, orbit.r * Math.exp(e.deltaY * 0.001)));
      orbit.user = true;
      dirty = true;
    }, { passive: false });
  }

  /* contact arrows, drawn over everything so that contacts inside or under bodies stay visible */
  const arrowColor = 0xd01010;
  function arrow(i) {
    while (arrows.length <= i) {
      const a = new THREE.ArrowHelper(new THREE.Vector3(0, 0, 1), new THREE.Vector3(), 1, arrowColor);
      for (const part of [a.line, a.cone]) { part.material.depthTest = false; part.renderOrder = 10; }
      scene3.add(a);
      arrows.push(a);
    }
    return arrows[i];
  }
  if (S.force_scale > 0) {
    const n = 0.1 / S.force_scale;
    scaleLbl.textContent = 'arrows: 10 cm = ' + n.toPrecision(3) + ' N (largest ' + S.max_force.toPrecision(3) + ' N)';
    if (S.max_pressure > 0)
      scaleLbl.textContent += '; patches: blue 0 to red ' + S.max_pressure.toPrecision(3) + ' Pa';
  }

  /* hydroelastic patches: a dot at each polygon's centroid, coloured by its pressure (blue 0, red max) */
  function dot(i) {
    while (dots.length <= i) {
      const m = new THREE.Mesh(new THREE.SphereGeometry(0.006 * size, 8, 6), new THREE.MeshBasicMaterial());
      m.material.depthTest = false;
      m.renderOrder = 9;
      scene3.add(m);
      dots.push(m);
    }
    return dots[i];
  }

  const plotCursors = Array.from(document.querySelectorAll('svg.grit-plot.time')).map((svg) => ({
    line: svg.querySelector('line.cursor'), x0: parseFloat(svg.dataset.x0), x1: parseFloat(svg.dataset.x1),
    p0: parseFloat(svg.dataset.px0), p1: parseFloat(svg.dataset.px1) }));

  const pa = hasThree && new THREE.Vector3(), pb = hasThree && new THREE.Vector3();
  const qa = hasThree && new THREE.Quaternion(), qb = hasThree && new THREE.Quaternion();
  function pose(f, b, p, q) {
    const o = 7 * (b - 1), x = S.poses[f];
    p.set(x[o], x[o + 1], x[o + 2]);
    q.set(x[o + 4], x[o + 5], x[o + 6], x[o + 3]);
  }
  let dirty = true, lastProbe = '', frame = 0;
  function apply() {
    const [f, a] = frameAt(st.t);
    frame = a > 0.5 && f + 1 < nf ? f + 1 : f;
    if (renderer) {
      for (let b = 1; b <= nb; ++b) {
        pose(f, b, pa, qa);
        if (a > 0 && f + 1 < nf) { pose(f + 1, b, pb, qb); pa.lerp(pb, a); qa.slerp(qb, a); }
        groups[b].position.copy(pa);
        groups[b].quaternion.copy(qa);
      }
      /* the contacts of the step that ends at the nearest frame */
      const c = S.contacts[frame];
      let k = 0;
      if (st.forces && S.force_scale > 0) {
        for (let i = 0; i + 5 < c.length; i += 6) {
          const d = new THREE.Vector3(c[i + 3], c[i + 4], c[i + 5]), len = d.length() * S.force_scale;
          if (!(len > 1e-3 * size)) continue;
          const ar = arrow(k++);
          ar.position.set(c[i], c[i + 1], c[i + 2]);
          ar.setDirection(d.normalize());
          ar.setLength(len, Math.min(0.3 * len, 0.05 * size), Math.min(0.15 * len, 0.025 * size));
          ar.visible = true;
        }
      }
      for (; k < arrows.length; ++k) arrows[k].visible = false;
      let nd = 0;
      const pp = S.patch_pressure ? S.patch_pressure[frame] : null;
      for (let i = 0; pp && st.forces && i < pp.length; ++i) {
        if (!(pp[i] > 0)) continue;
        const dd = dot(nd++);
        dd.position.set(c[6 * i], c[6 * i + 1], c[6 * i + 2]);
        dd.material.color.setHSL(0.66 * (1 - Math.min(1, pp[i] / S.max_pressure)), 1, 0.5);
        dd.visible = true;
      }
      for (; nd < dots.length; ++nd) dots[nd].visible = false;
    }
    slider.value = st.t;
    timeLbl.textContent = 't = ' + st.t.toFixed(3) + ' s (frame ' + frame + '/' + (nf - 1) + ')';
    playBtn.textContent = st.playing ? 'Pause' : 'Play';
    speedSel.value = String(st.speed);
    forcesBox.checked = st.forces;
    for (const pc of plotCursors) {
      if (!pc.line || !(pc.x1 > pc.x0)) continue;
      const x = pc.p0 + (pc.p1 - pc.p0) * Math.min(1, Math.max(0, (st.t - pc.x0) / (pc.x1 - pc.x0)));
      pc.line.setAttribute('x1', x.toFixed(1));
      pc.line.setAttribute('x2', x.toFixed(1));
    }
    dirty = true;
  }

  function resize() {
    if (!renderer) return;
    const w = Math.max(1, view.clientWidth), h = Math.max(1, view.clientHeight);
    renderer.setSize(w, h);
    camera.aspect = w / h;
    camera.updateProjectionMatrix();
    if (!orbit.user) frameScene();
    dirty = true;
  }
  window.addEventListener('resize', resize);

  /* What was drawn, in CSS pixels of the page: each geometry's centre on screen (and a sphere's radius). */
  function writeProbe() {
    const out = { webgl: !!renderer, t: +st.t.toFixed(6), frame: frame, playing: st.playing, frames_drawn: st.drawn };
    if (renderer) {
      const r = renderer.domElement.getBoundingClientRect();
      out.view = [r.left, r.top, r.width, r.height];
      const right = new THREE.Vector3().setFromMatrixColumn(camera.matrixWorld, 0);
      const screen = (p) => { const v = p.clone().project(camera);
        return [r.left + (v.x + 1) / 2 * r.width, r.top + (1 - v.y) / 2 * r.height, v.z]; };
      out.geoms = [];
      geomMeshes.concat(markerMeshes).forEach((m, i) => {
        if (m.geometry.type === 'PlaneGeometry') return;
        const p = new THREE.Vector3();
        m.getWorldPosition(p);
        const s = screen(p), e = { name: m.name, marker: i >= geomMeshes.length, x: +s[0].toFixed(1), y: +s[1].toFixed(1) };
        if (m.geometry.type === 'SphereGeometry' && m.geometry.parameters.radius !== 1) {
          const q = screen(p.clone().addScaledVector(right, m.geometry.parameters.radius));
          e.r = +Math.hypot(q[0] - s[0], q[1] - s[1]).toFixed(1);
        }
        out.geoms.push(e);
      });
    }
    const txt = JSON.stringify(out);
    if (txt !== lastProbe) { probe.textContent = txt; lastProbe = txt; }
  }

  /* The playback clock: the time is the anchor's plus the wall time since, times the speed (so it follows
   * timers and frames alike, however seldom frames come); every change of time, speed or state re-anchors. */
  let anchorT = st.t, anchorWall = performance.now();
  function reanchor() { anchorT = st.t; anchorWall = performance.now(); }
  function clock() {
    if (!st.playing) return;
    const wall = fixedWall !== null ? fixedWall : (performance.now() - anchorWall) / 1000;
    let t = anchorT + wall * st.speed;
    if (t > t1) t = t0 + (t - t0) % span; /* loop */
    st.t = t;
  }
  function toggle() { clock(); if (span > 0) st.playing = !st.playing; reanchor(); apply(); }

  playBtn.addEventListener('click', toggle);
  slider.addEventListener('input', () => { st.playing = false; st.t = clampT(parseFloat(slider.value)); reanchor(); apply(); });
  speedSel.addEventListener('change', () => { clock(); st.speed = parseFloat(speedSel.value) || 1; reanchor(); });
  forcesBox.addEventListener('change', () => { st.forces = forcesBox.checked; apply(); });
  window.addEventListener('hashchange', () => { readHash(); reanchor(); resize(); apply(); });
  window.addEventListener('keydown', (e) => {
    if (e.target && (e.target.tagName === 'INPUT' || e.target.tagName === 'SELECT')) return;
    if (e.key === ' ') { e.preventDefault(); toggle(); }
    if (e.key === 'ArrowRight' || e.key === 'ArrowLeft') {
      st.playing = false;
      st.t = T[Math.min(nf - 1, Math.max(0, frame + (e.key === 'ArrowRight' ? 1 : -1)))];
      reanchor();
      apply();
    }
  });

  function tick() {
    if (st.playing) { clock(); apply(); }
    if (renderer && dirty) {
      placeCamera();
      renderer.render(scene3, camera);
      st.drawn++;
      dirty = false;
    }
    writeProbe();
    requestAnimationFrame(tick);
  }
  /* the clock also runs on a timer: the time label, plot cursors and probe follow without frames */
  setInterval(() => { if (st.playing) { clock(); apply(); writeProbe(); } }, 100);
  resize();
  apply();
  requestAnimationFrame(tick);
})();
