/**
 * Compliant contact (SMC, ArtiSynth ContactForceBehavior) as a force effector:
 * 1. its Jacobians against central differences of its generalized forces, for a tilted
 *    rotating box on a plane (linear law, active and merely tracked corners, damping with
 *    the step rule) and for a sphere pressed into a rotating dynamic box (Hertz, with the
 *    step-damping branch whose d depends on the penetration);
 * 2. the implicit integrators with stiff contact at h = 0.01 (k = 1e6 N/m, m = 1 kg, so
 *    hω = 10): a particle sphere pressed into the floor and released at rest never leaves
 *    it, so its penetration obeys the linear oscillator m ÿ + d ẏ + k y = 0 about
 *    y = mg/k, and each scheme's scalar recurrence, written out in the test, predicts every
 *    step: Newmark (β, γ) = (¼, ½) and backward Euler, with damping 0 and the step damping
 *    rule d = stepDamping·h·k (damping 0 makes the rule visible: with stepDamping 0 the
 *    trapezoid keeps the oscillator's energy, with 0.5 it decays at the predicted rate);
 *    symplectic (explicit) Euler, stable on it only for h² k/m < 4 (d = 0), takes each
 *    step in the 8 sub-steps of h/8 that bound asks (theta-scheme.ts), each its recurrence;
 * 3. a dropped sphere (and a box) settles where the behavior's force equals m g;
 * 4. a ball spinning at 50 rad/s on a frictionless floor stays at rest at δ = m g/k with its
 *    spin and energy, to rounding, over 30 s (its curved side followed by its centre);
 * 5. a rigid shape's point on a fem face (fem-faces.ts, "Rigid shapes": the triangle's three
 *    node particles on side a, the rigid body on side b): the Jacobians against central
 *    differences, a tilted spinning box's corner and a spinning ball (attached by its
 *    centre), frictionless and sticking or slipping with friction.
 */
import { describe, expect, it } from "vitest";
import { createContactBehavior } from "../../../src/engine/contact/behaviors";
import { CompliantContactEffector } from "../../../src/engine/contact/compliant";
import { FemFaceContacts } from "../../../src/engine/contact/fem-faces";
import { FemVertexContacts, VERTEX_GROUP } from "../../../src/engine/contact/fem-vertices";
import { PairParameters } from "../../../src/engine/contact/setup";
import { meshSurface } from "../../../src/engine/forces/fem/surface";
import { CollisionDetector } from "../../../src/engine/geometry/index";
import { loadModel } from "../../../src/engine/index";
import { SparseBlockMatrix } from "../../../src/engine/math/block-matrix";
import { csrToDense } from "../../../src/engine/math/csr";
import {
  addPositionIncrement,
  BodySystem,
  clearForces,
  getForces,
  getVelocity,
  PositionSnapshot,
  restorePositions,
  setVelocity,
} from "../../../src/engine/model/body-system";
import { bodyInit } from "../../support/body-init";
import { axisAngle, qmul, rotate, type V3 } from "../../support/quat";
import { settleOnFloor } from "./helpers";

function generalizedForce(sys: BodySystem, e: CompliantContactEffector): Float64Array {
  clearForces(sys);
  e.applyForces(0);
  const f = new Float64Array(sys.numDofs);
  getForces(sys, f);
  return f;
}

/** max |J − J_FD| / max |J_FD| for positions and velocities (central differences). */
function jacobianErrors(sys: BodySystem, e: CompliantContactEffector) {
  const n = sys.numDofs;
  const m = new SparseBlockMatrix(sys.blockSizes);
  e.addSolveBlocks(m);
  m.finalize();
  const dense = (pos: boolean) => {
    m.clear();
    if (pos) e.addPosJacobian(m, 1);
    else e.addVelJacobian(m, 1);
    return csrToDense(m.toCsr());
  };
  const Jq = dense(true);
  const Jv = dense(false);
  const snap = new PositionSnapshot(sys);
  const u0 = new Float64Array(n);
  getVelocity(sys, u0);
  const eps = 1e-7;
  let errQ = 0;
  let errV = 0;
  let normQ = 0;
  let normV = 0;
  const d = new Float64Array(n);
  for (let k = 0; k < n; k++) {
    const col: Float64Array[] = [];
    for (const s of [1, -1]) {
      restorePositions(sys, snap);
      d.fill(0);
      d[k] = s * eps;
      addPositionIncrement(sys, d, 1);
      col.push(generalizedForce(sys, e));
    }
    restorePositions(sys, snap);
    const colV: Float64Array[] = [];
    for (const s of [1, -1]) {
      const u = Float64Array.from(u0);
      u[k] += s * eps;
      setVelocity(sys, u);
      colV.push(generalizedForce(sys, e));
    }
    setVelocity(sys, u0);
    for (let r = 0; r < n; r++) {
      const fq = (col[0][r] - col[1][r]) / (2 * eps);
      const fv = (colV[0][r] - colV[1][r]) / (2 * eps);
      const aq = Jq[r * n + k];
      const av = Jv[r * n + k];
      errQ = Math.max(errQ, Math.abs(aq - fq));
      errV = Math.max(errV, Math.abs(av - fv));
      normQ = Math.max(normQ, Math.abs(fq));
      normV = Math.max(normV, Math.abs(fv));
    }
  }
  return { pos: errQ / normQ, vel: errV / normV, normQ, normV };
}

describe("compliant contact Jacobians", () => {
  it("tilted rotating box on a plane (linear, step damping): exact against differences", () => {
    const h = [0.2, 0.15, 0.1] as const;
    const q = axisAngle([1, 0.3, 0], 0.02);
    const sys = new BodySystem([
      bodyInit("box", "rigid", {
        mass: 2,
        inertia: [0.02, 0, 0, 0, 0.03, 0, 0, 0, 0.04],
        position: [0.01, -0.02, 0.1 - 0.0015],
        orientation: q,
        velocity: [0.02, -0.01, -0.01],
        angularVelocity: [0.1, -0.2, 0.05],
      }),
    ]);
    const det = new CollisionDetector(
      [
        { shape: { type: "plane", normal: [0, 0, 1], offset: 0 }, body: -1 },
        { shape: { type: "box", halfExtents: h }, body: 0 },
      ],
      { margin: 0.02 },
    );
    const beh = createContactBehavior({
      type: "linear",
      stiffness: 1e4,
      damping: 2,
      stepDamping: 0.5,
      perUnitArea: false,
    });
    const e = new CompliantContactEffector(sys, det, beh, 0.02);
    e.stepSize = 0.01;
    e.beginStep();
    expect(e.count).toBe(4);
    const err = jacobianErrors(sys, e);
    expect(err.normQ).toBeGreaterThan(1e3);
    expect(err.normV).toBeGreaterThan(10);
    expect(err.pos).toBeLessThan(1e-6);
    expect(err.vel).toBeLessThan(1e-6);
  });

  it("sphere pressed into a rotating box (Hertz, d from the step rule varies with δ)", () => {
    const sys = new BodySystem([
      bodyInit("box", "rigid", {
        mass: 3,
        inertia: [0.05, 0, 0, 0, 0.06, 0, 0, 0, 0.07],
        orientation: axisAngle([0.2, 1, 0.1], 0.05),
        velocity: [0.01, 0.02, -0.03],
        angularVelocity: [0.3, -0.1, 0.2],
      }),
      bodyInit("ball", "rigid", {
        mass: 0.5,
        inertia: [0.001, 0, 0, 0, 0.001, 0, 0, 0, 0.001],
        position: [0.07, -0.04, 0.1 + 0.05 - 0.0032 - 0.0025],
        velocity: [0.05, 0, -0.02],
        angularVelocity: [1, 2, -1],
      }),
    ]);
    const det = new CollisionDetector(
      [
        { shape: { type: "box", halfExtents: [0.2, 0.2, 0.1] }, body: 0 },
        { shape: { type: "sphere", radius: 0.05 }, body: 1 },
      ],
      { margin: 0.01 },
    );
    const beh = createContactBehavior({
      type: "hertz",
      youngModulus: 1e7,
      poissonRatio: 0.3,
      damping: 0,
      stepDamping: 0.5,
    });
    const e = new CompliantContactEffector(sys, det, beh, 0.01);
    e.stepSize = 0.01;
    e.beginStep();
    expect(e.count).toBe(1);
    const err = jacobianErrors(sys, e);
    expect(err.normQ).toBeGreaterThan(1e3);
    expect(err.pos).toBeLessThan(1e-6);
    expect(err.vel).toBeLessThan(1e-6);
  });
});

describe("a rigid shape's point on a fem face: compliant Jacobians against differences", () => {
  /**
   * A tetrahedron of four node particles (its top face the triangle at z ≈ 0, moving and
   * slightly tilted) and a rigid shape pressing one point into that face, detected by
   * FemFaceContacts, with friction μ (0: none), then (with friction) moved and detected
   * again so that the springs carry a history.
   */
  function onFace(shape: "box" | "ball", mu: number) {
    const tet = [0, 0, -1, -0.5, -0.5, 0.002, 0.5, -0.5, -0.001, 0, 0.6, 0.003];
    const nodeVel = [0, 0, 0.01, 0.02, -0.01, -0.03, -0.01, 0.02, 0.01, 0.01, 0.01, -0.02];
    const q = axisAngle([1, 0.4, 0.2], shape === "box" ? 0.05 : 0.1);
    // the box's lowest corner (half extents 0.05, 0.04, 0.004 turned by q) 1.5 mm into the
    // face, its highest 11 mm above it, within the margin: every corner takes the top face
    // (the nearest; one beyond the margin would be half a metre's depth bound behind a side
    // face of this single tetrahedron, and take it)
    const half: V3 = [0.05, 0.04, 0.004];
    let low = 0;
    if (shape === "box")
      for (const sx of [-1, 1])
        for (const sy of [-1, 1])
          for (const sz of [-1, 1])
            low = Math.min(low, rotate(q, [sx * half[0], sy * half[1], sz * half[2]])[2]);
    const centreZ = shape === "box" ? -low - 0.0015 : 0.05 - 0.0015;
    const sys = new BodySystem([
      ...Array.from({ length: 4 }, (_, k) =>
        bodyInit(`n${k}`, "particle", {
          mass: 0.5 + 0.1 * k,
          position: [tet[3 * k], tet[3 * k + 1], tet[3 * k + 2]],
          velocity: [nodeVel[3 * k], nodeVel[3 * k + 1], nodeVel[3 * k + 2]],
        }),
      ),
      bodyInit("shape", "rigid", {
        mass: 2,
        inertia: [0.02, 0, 0, 0, 0.03, 0, 0, 0, 0.04],
        position: [0.02, -0.1, centreZ],
        orientation: q,
        velocity: [0.02, -0.01, -0.01],
        angularVelocity: [0.5, -1, 0.3],
      }),
    ]);
    const vertices = new FemVertexContacts(sys, [
      { surface: meshSurface([0, 1, 2, 3], 4), nodeBodies: Int32Array.from([0, 1, 2, 3]) },
    ]);
    const shapes = [
      {
        shape:
          shape === "box"
            ? ({ type: "box", halfExtents: half } as const)
            : ({ type: "sphere", radius: 0.05 } as const),
        body: 4,
      },
      ...vertices.shapes,
    ];
    vertices.firstShape = 1;
    const groups = new Int32Array(shapes.length).fill(VERTEX_GROUP);
    groups[0] = 0;
    const det = new CollisionDetector(shapes, { margin: 0.02, groups });
    const faces = new FemFaceContacts(sys, vertices, [], det.shapes);
    const beh = createContactBehavior({
      type: "linear",
      stiffness: 1e4,
      damping: 2,
      stepDamping: 0.5,
      perUnitArea: false,
    });
    const e = new CompliantContactEffector(
      sys,
      det,
      beh,
      0.02,
      new PairParameters(sys, { friction: mu, pairs: [] }),
    );
    e.faces = faces;
    e.vertexAreas = vertices;
    e.stepSize = 0.01;
    e.beginStep();
    if (mu > 0) {
      // slide and turn the shape a little, detect there (the history committed), again
      for (const [dx, dy, dth] of [
        [2e-4, -1e-4, 1e-3],
        [1e-4, 1.5e-4, -2e-3],
      ]) {
        const d = new Float64Array(sys.numDofs);
        const o = sys.dofOffset[4];
        d[o] = dx;
        d[o + 1] = dy;
        d[o + 5] = dth;
        addPositionIncrement(sys, d, 1);
        if (dx === 2e-4) e.beginStep();
      }
    }
    return { sys, e, faces };
  }

  for (const shape of ["box", "ball"] as const)
    for (const [name, mu] of [
      ["frictionless", 0],
      ["sticking (μ = 2)", 2],
      ["slipping (μ = 0.005)", 0.005],
    ] as const)
      it(`${shape}, ${name}: exact against differences`, () => {
        const { sys, e, faces } = onFace(shape, mu);
        // the shape's points on the top face (8 corners and the midpoints of its 4 edges
        // along x, ⌈0.05/0.04⌉ = 2 intervals; or the ball's centre), one pushing
        const b = faces.buffer;
        expect(b.count).toBe(shape === "box" ? 12 : 1);
        for (let k = 0; k < b.count; k++) expect(b.normal[3 * k + 2]).toBeGreaterThan(0.99);
        generalizedForce(sys, e);
        const inner = e as unknown as { fn: Float64Array; slip: Uint8Array };
        let pushing = 0;
        let slipping = 0;
        for (let i = 0; i < e.count; i++)
          if (inner.fn[i] > 0) {
            pushing++;
            if (mu > 0) slipping += inner.slip[i];
          }
        expect(pushing).toBeGreaterThanOrEqual(1);
        if (mu === 2) expect(slipping).toBe(0);
        if (mu === 0.005) expect(slipping).toBe(pushing);
        const err = jacobianErrors(sys, e);
        expect(err.normQ).toBeGreaterThan(1e3);
        expect(err.pos).toBeLessThan(1e-6);
        expect(err.vel).toBeLessThan(1e-6);
      });
});

describe("compliant friction's Jacobians (tangential spring with history, Coulomb cap)", () => {
  /**
   * A tilted box spinning and sliding on a plane (linear law, step damping), detected at
   * x0, moved (the history committed at x1 by its detection there) and moved again: the
   * springs stretched by both moves, evaluated with the history; μ large: every corner
   * sticks; μ small: every corner slips at the cap μ F_n (the slip's projector and its
   * coupling to F_n); in between some of each.
   */
  /**
   * The friction effector (linear law k = 1e4 N/m, d = 2 N·s/m, step damping ½, margin
   * 2 cm, h = 10 ms, μ for every pair) on `shapes`, detected at the system's state, moved by
   * `place`'s increments (dx, dy: sliding, m; dth: turning, rad), detected there (the
   * history committed), and moved again.
   */
  function stretched(
    sys: BodySystem,
    shapes: ConstructorParameters<typeof CollisionDetector>[0],
    mu: number,
    place: (d: Float64Array, dx: number, dy: number, dth: number) => void,
  ) {
    const det = new CollisionDetector(shapes, { margin: 0.02 });
    const beh = createContactBehavior({
      type: "linear",
      stiffness: 1e4,
      damping: 2,
      stepDamping: 0.5,
      perUnitArea: false,
    });
    const e = new CompliantContactEffector(
      sys,
      det,
      beh,
      0.02,
      new PairParameters(sys, { friction: mu, pairs: [] }),
    );
    e.stepSize = 0.01;
    e.beginStep();
    const move = (dx: number, dy: number, dth: number) => {
      const d = new Float64Array(sys.numDofs);
      place(d, dx, dy, dth);
      addPositionIncrement(sys, d, 1);
    };
    move(2e-4, -1e-4, 1e-3);
    e.beginStep();
    move(1e-4, 1.5e-4, -2e-3);
    return e;
  }

  function slidingBox(mu: number, particle = false) {
    const sys = new BodySystem([
      particle
        ? bodyInit("box", "particle", { mass: 2, position: [0.01, -0.02, 0.1 - 0.0015] })
        : bodyInit("box", "rigid", {
            mass: 2,
            inertia: [0.02, 0, 0, 0, 0.03, 0, 0, 0, 0.04],
            position: [0.01, -0.02, 0.1 - 0.0015],
            orientation: axisAngle([1, 0.3, 0], 0.02),
            velocity: [0.02, -0.01, -0.01],
            angularVelocity: [0.1, -0.2, 0.05],
          }),
    ]);
    const e = stretched(
      sys,
      [
        { shape: { type: "plane", normal: [0, 0, 1], offset: 0 }, body: -1 },
        particle
          ? { shape: { type: "sphere", radius: 0.1 }, body: 0 }
          : { shape: { type: "box", halfExtents: [0.2, 0.15, 0.1] }, body: 0 },
      ],
      mu,
      (d, dx, dy, dth) => {
        d[0] = dx;
        d[1] = dy;
        if (!particle) d[5] = dth;
      },
    );
    return { sys, e };
  }

  /**
   * How many contacts push and how many of them slip at the last evaluation (the
   * effector's own flags: its report would detect again at this state).
   */
  function modes(e: CompliantContactEffector) {
    const inner = e as unknown as { fn: Float64Array; slip: Uint8Array; ft: Float64Array };
    let pushing = 0;
    let slipping = 0;
    let loaded = 0;
    for (let i = 0; i < e.count; i++) {
      if (!(inner.fn[i] > 0)) continue;
      pushing++;
      slipping += inner.slip[i];
      if (Math.hypot(inner.ft[3 * i], inner.ft[3 * i + 1]) > 1e-3) loaded++;
    }
    return { pushing, slipping, loaded };
  }

  for (const [name, mu] of [
    ["sticking (μ = 2)", 2],
    ["slipping at the cap (μ = 0.005)", 0.005],
    ["some of each (μ = 0.033)", 0.033],
  ] as const)
    it(`rigid box, ${name}: exact against differences`, () => {
      const { sys, e } = slidingBox(mu);
      const err = jacobianErrors(sys, e);
      expect(err.pos).toBeLessThan(1e-6);
      expect(err.vel).toBeLessThan(1e-6);
      // the state is the one intended: every pushing corner's spring loaded, slipping as μ says
      const { pushing, slipping, loaded } = modes(e);
      expect(pushing).toBeGreaterThanOrEqual(2);
      expect(loaded).toBe(pushing);
      if (mu === 2) expect(slipping).toBe(0);
      if (mu === 0.005) expect(slipping).toBe(pushing);
      if (mu === 0.033) expect(slipping * (pushing - slipping)).toBeGreaterThan(0);
    });

  /**
   * Between two dynamic bodies (file comment, "Common point": F_t at the midpoint of the
   * material points, its lever arms changing with both bodies): a box, or a ball (attached
   * by its centre), pressed into a dynamic slab, both turning and sliding, detected, moved
   * (history committed), moved again.
   */
  function onSlab(mu: number, ball: boolean) {
    const sys = new BodySystem([
      bodyInit("slab", "rigid", {
        mass: 5,
        inertia: [0.5, 0.01, 0, 0.01, 0.6, 0, 0, 0, 0.9],
        position: [0, 0, -0.1],
        orientation: axisAngle([0.2, 1, 0], 0.01),
        velocity: [-0.01, 0.02, 0.01],
        angularVelocity: [0.3, 0.1, -0.2],
      }),
      bodyInit("top", "rigid", {
        mass: 2,
        inertia: [0.02, 0, 0, 0, 0.03, 0, 0, 0, 0.04],
        position: [0.01, -0.02, (ball ? 0.05 : 0.1) - 0.0015],
        orientation: axisAngle([1, 0.3, 0], 0.02),
        velocity: [0.02, -0.01, -0.01],
        angularVelocity: ball ? [3, -2, 1] : [0.1, -0.2, 0.05],
      }),
    ]);
    const e = stretched(
      sys,
      [
        { shape: { type: "box", halfExtents: [1, 1, 0.1] }, body: 0 },
        ball
          ? { shape: { type: "sphere", radius: 0.05 }, body: 1 }
          : { shape: { type: "box", halfExtents: [0.2, 0.15, 0.1] }, body: 1 },
      ],
      mu,
      (d, dx, dy, dth) => {
        d[6] = dx;
        d[7] = dy;
        d[11] = dth;
        d[3] = -dth / 3;
      },
    );
    return { sys, e };
  }

  for (const [name, mu, ball] of [
    ["a box sticking on a dynamic slab (μ = 2)", 2, false],
    ["a box slipping on a dynamic slab (μ = 0.005)", 0.005, false],
    ["a ball sticking on a dynamic slab (μ = 2)", 2, true],
    ["a ball slipping on a dynamic slab (μ = 0.005)", 0.005, true],
  ] as const)
    it(`${name}: exact against differences`, () => {
      const { sys, e } = onSlab(mu, ball);
      const err = jacobianErrors(sys, e);
      expect(err.pos).toBeLessThan(1e-6);
      expect(err.vel).toBeLessThan(1e-6);
      const { pushing, slipping, loaded } = modes(e);
      expect(pushing).toBeGreaterThanOrEqual(ball ? 1 : 2);
      expect(loaded).toBe(pushing);
      expect(slipping).toBe(mu === 2 ? 0 : pushing);
    });

  it("a particle slipping (μ = 0.005): exact against differences", () => {
    const { sys, e } = slidingBox(0.005, true);
    const err = jacobianErrors(sys, e);
    expect(err.pos).toBeLessThan(1e-6);
    expect(err.vel).toBeLessThan(1e-6);
    expect(modes(e)).toEqual({ pushing: 1, slipping: 1, loaded: 1 });
  });
});

describe("compliant contact's explicit stability rates (symplectic Euler's check)", () => {
  const k = 1e5;
  const m = 2;
  const a = 0.1;
  const I = (m * (2 * a) ** 2) / 6; // a cube's
  const h = 0.005;
  const d = 0.5 * h * k; // the step rule, d = s h k
  const cube = (orientation: number[], z: number) => {
    const sys = new BodySystem([
      bodyInit("box", "rigid", {
        mass: m,
        inertia: [I, 0, 0, 0, I, 0, 0, 0, I],
        position: [0, 0, z],
        orientation,
      }),
    ]);
    const det = new CollisionDetector(
      [
        { shape: { type: "plane", normal: [0, 0, 1], offset: 0 }, body: -1 },
        { shape: { type: "box", halfExtents: [a, a, a] }, body: 0 },
      ],
      { margin: 0.01 },
    );
    const beh = createContactBehavior({
      type: "linear",
      stiffness: k,
      damping: 0,
      stepDamping: 0.5,
      perUnitArea: false,
    });
    const e = new CompliantContactEffector(sys, det, beh, 0.01);
    e.stepSize = h;
    return e;
  };

  it("a corner alone: its own mode, k (1/m + |r × n|²/I), rotation included", () => {
    // a cube turned so that one corner is lowest, pressed 1 mm into the floor
    const q = qmul(axisAngle([1, 0, 0], 0.5), axisAngle([0, 1, 0], 0.4));
    let low: V3 = [0, 0, 0];
    for (const sx of [-a, a])
      for (const sy of [-a, a])
        for (const sz of [-a, a]) {
          const c = rotate(q, [sx, sy, sz]);
          if (c[2] < low[2]) low = c;
        }
    const e = cube(q, -low[2] - 1e-3);
    const out = new Float64Array(2);
    e.explicitRates(out);
    expect(e.count).toBe(1);
    const inverse = 1 / m + (low[0] ** 2 + low[1] ** 2) / I; // r × n = (r_y, −r_x, 0)
    expect(out[0]).toBeCloseTo(k * inverse, 6);
    expect(out[1]).toBeCloseTo(d * inverse, 9);
  });

  it("with friction, the tangential spring's mode too: a ball of small inertia, k_t (1/m + r²/I)", () => {
    // a ball of m = 2 kg, r = 0.1 m, I = 0.1 m r² (mass near its centre) pressed 1 mm into
    // the floor, μ = 0.5: its tangential contact mode, k_t (1/m + r²/I) = (2/7) k 11/m, is
    // stiffer than the normal one, k/m (a solid ball's, I = 0.4 m r², equal: 2/7's choice)
    const r = 0.1;
    const Ib = 0.1 * m * r * r;
    const sys = new BodySystem([
      bodyInit("ball", "rigid", {
        mass: m,
        inertia: [Ib, 0, 0, 0, Ib, 0, 0, 0, Ib],
        position: [0, 0, r - 1e-3],
      }),
    ]);
    const det = new CollisionDetector(
      [
        { shape: { type: "plane", normal: [0, 0, 1], offset: 0 }, body: -1 },
        { shape: { type: "sphere", radius: r }, body: 0 },
      ],
      { margin: 0.01 },
    );
    const beh = createContactBehavior({
      type: "linear",
      stiffness: k,
      damping: 0,
      stepDamping: 0.5,
      perUnitArea: false,
    });
    const params = new PairParameters(sys, { friction: 0.5, pairs: [] });
    const e = new CompliantContactEffector(sys, det, beh, 0.01, params);
    e.stepSize = h;
    const out = new Float64Array(2);
    e.explicitRates(out);
    const tangential = 1 / m + (r * r) / Ib;
    expect(out[0]).toBeCloseTo((2 / 7) * k * tangential, 6);
    expect(out[1]).toBeCloseTo((2 / 7) * d * tangential, 9);
  });

  it("a cube flat on four corners: Gershgorin's row, 8 k/m, above the rocking modes' 6 k/m", () => {
    // A_ii = 1/m + 2a²/I = 4/m; a neighbour shares no rotation, 1/m; the opposite corner
    // 1/m − 2a²/I = −2/m: Σ_j |A_ij| = 8/m, where the exact modes are 4 k/m (heave) and
    // 4 k a²/I = 6 k/m (rocking)
    const e = cube([1, 0, 0, 0], a - 1e-4);
    const out = new Float64Array(2);
    e.explicitRates(out);
    expect(e.count).toBe(4);
    expect(out[0]).toBeCloseTo((8 * k) / m, 6);
    expect(out[1]).toBeCloseTo((8 * d) / m, 9);
  });
});

/** The pressed-particle model: δ0 = mg/(2k) initial penetration, at rest. */
function pressed(integrator: string, stepDamping: number, k: number, h: number) {
  const m = 1;
  const g = 9.81;
  const R = 0.1;
  return loadModel({
    gravity: [0, 0, -g],
    bodies: [
      {
        id: "ball",
        kind: "particle",
        mass: m,
        position: [0, 0, R - (m * g) / (2 * k)],
        shapes: [{ type: "sphere", radius: R }],
      },
      { id: "floor", fixed: true, shapes: [{ type: "plane" }] },
    ],
    contact: {
      method: "smc",
      behavior: { type: "linear", stiffness: k, damping: 0, stepDamping },
    },
    // The contact force is clamped at 0 (unilateral), so the step is piecewise linear:
    // a few semismooth Newton iterations find the branch (one when the guess is on it).
    solver: {
      integrator,
      dt: h,
      ...(integrator === "newmark" ? { beta: 0.25, gamma: 0.5 } : {}),
      newtonIterations: 20,
      newtonTolerance: 1e-13,
    },
  });
}

/**
 * One step of the scheme on m ÿ + d ẏ + k y = 0 (y = z − z_eq), written out:
 * Newmark: (m + γh d + βh² k) a⁺ = −k(y + h v + h²/2 (1−2β) a) − d(v + h(1−γ) a),
 *          y⁺ = y + h v + h²/2((1−2β) a + 2β a⁺), v⁺ = v + h((1−γ) a + γ a⁺);
 * backward Euler: (m + h d + h² k) a⁺ = −k(y + h v) − d v, v⁺ = v + h a⁺, y⁺ = y + h v⁺.
 */
function recurrence(
  kind: "newmark" | "backward-euler",
  m: number,
  d: number,
  k: number,
  h: number,
) {
  return (s: { y: number; v: number; a: number }) => {
    if (kind === "newmark") {
      const beta = 0.25;
      const gamma = 0.5;
      const a1 =
        (-k * (s.y + h * s.v + 0.5 * h * h * (1 - 2 * beta) * s.a) -
          d * (s.v + h * (1 - gamma) * s.a)) /
        (m + gamma * h * d + beta * h * h * k);
      return {
        y: s.y + h * s.v + 0.5 * h * h * ((1 - 2 * beta) * s.a + 2 * beta * a1),
        v: s.v + h * ((1 - gamma) * s.a + gamma * a1),
        a: a1,
      };
    }
    const a1 = (-k * (s.y + h * s.v) - d * s.v) / (m + h * d + h * h * k);
    const v1 = s.v + h * a1;
    return { y: s.y + h * v1, v: v1, a: a1 };
  };
}

describe("stiff compliant contact in the implicit integrators (h = 0.01, hω = 10)", () => {
  const k = 1e6;
  const m = 1;
  const g = 9.81;
  const h = 0.01;
  const R = 0.1;
  const zEq = R - (m * g) / k;

  for (const integrator of ["newmark", "backward-euler"] as const)
    for (const stepDamping of [0, 0.5])
      it(`${integrator}, stepDamping ${stepDamping}: every step matches the scheme's recurrence`, () => {
        const sim = pressed(integrator, stepDamping, k, h);
        const d = stepDamping * h * k; // damping 0: d = max(0, s·h/compliance) = s h k
        const next = recurrence(integrator, m, d, k, h);
        let s = { y: R - (m * g) / (2 * k) - zEq, v: 0, a: 0 };
        s.a = -(k * s.y) / m; // Newmark's consistent a_0
        const y0 = s.y;
        let maxErr = 0;
        for (let n = 0; n < 200; n++) {
          sim.step(1);
          s = next(s);
          const b = sim.state().bodies[0];
          maxErr = Math.max(
            maxErr,
            Math.abs(b.position[2] - zEq - s.y),
            Math.abs(b.velocity[2] - s.v) * h,
          );
        }
        expect(maxErr).toBeLessThan(1e-12 + 1e-8 * Math.abs(y0));
        const c = sim.state().contacts;
        expect(c).toHaveLength(1);
        // Force = k δ − d u_n at the end state (u_n = ż).
        const b = sim.state().bodies[0];
        expect(c[0].normalForce).toBeCloseTo(k * (R - b.position[2]) - d * b.velocity[2], 6);
        const energy = 0.5 * k * s.y ** 2 + 0.5 * m * s.v ** 2;
        const e0 = 0.5 * k * y0 ** 2;
        if (integrator === "newmark" && stepDamping === 0)
          expect(Math.abs(energy / e0 - 1)).toBeLessThan(1e-9); // the trapezoid keeps it
        else expect(energy / e0).toBeLessThan(0.05); // damped (numerically or by d)
      });

  it("symplectic (explicit) Euler takes the sub-steps its stability asks, each its recurrence", () => {
    // explicit, it keeps the mode bounded only while h² k/m < 4 (100 at h): h/8 is the
    // longest sub-step under it, 1.5625 (before, the ball was shot off within 20 steps)
    const sim = pressed("symplectic-euler", 0, k, h);
    const hs = h / 8;
    let y = R - (m * g) / (2 * k) - zEq;
    let v = 0;
    const y0 = y;
    let maxErr = 0;
    for (let n = 0; n < 200; n++) {
      // v ← v − h_s (k/m) y, then y ← y + h_s v, 8 times
      for (let j = 0; j < 8; j++) {
        v -= hs * (k / m) * y;
        y += hs * v;
      }
      sim.step(1);
      const s = sim.state();
      expect(s.solver.substeps).toBe(8);
      const b = s.bodies[0];
      maxErr = Math.max(maxErr, Math.abs(b.position[2] - zEq - y), Math.abs(b.velocity[2] - v) * h);
    }
    expect(maxErr).toBeLessThan(1e-12 + 1e-8 * Math.abs(y0));
  });
});

describe("a dropped sphere settles where the contact force equals m g", () => {
  const m = 1;
  const g = 9.81;
  const R = 0.1;
  const drop = (behavior: Record<string, unknown>, shape: Record<string, unknown>, z0: number) =>
    settleOnFloor(
      { id: "body", mass: m, position: [0, 0, z0], shapes: [shape] },
      { id: "floor", fixed: true, shapes: [{ type: "plane" }] },
      behavior,
      g,
    );

  it("linear: δ = mg/k", () => {
    const k = 1e6;
    const st = drop(
      { type: "linear", stiffness: k, stepDamping: 0.5 },
      { type: "sphere", radius: R },
      R + 0.01,
    );
    expect(Math.abs(R - st.bodies[0].position[2] - (m * g) / k)).toBeLessThan(1e-12);
    expect(st.contacts[0].normalForce).toBeCloseTo(m * g, 8);
  });

  it("Hertz: δ = (3mg / (4 E* √R))^{2/3}", () => {
    const E = 1e7;
    const nu = 0.3;
    const Es = E / (2 * (1 - nu * nu));
    const st = drop(
      { type: "hertz", youngModulus: E, poissonRatio: nu, stepDamping: 0.5 },
      { type: "sphere", radius: R },
      R + 0.01,
    );
    const delta = ((3 * m * g) / (4 * Es * Math.sqrt(R))) ** (2 / 3);
    expect(Math.abs((R - st.bodies[0].position[2]) / delta - 1)).toBeLessThan(1e-9);
  });

  it("table: the penetration where the interpolated force is m g", () => {
    const pts = [
      [0, 0],
      [0.001, 5],
      [0.002, 20],
    ];
    const st = drop(
      { type: "table", points: pts, stepDamping: 0.5 },
      { type: "sphere", radius: R },
      R + 0.005,
    );
    // m g = 9.81 lies on the second segment: 5 + 15 (δ − 0.001)/0.001 = 9.81.
    const delta = 0.001 + ((m * g - 5) / 15) * 0.001;
    expect(Math.abs(R - st.bodies[0].position[2] - delta)).toBeLessThan(1e-12);
  });

  it("linear per unit area, a box on its face: k A δ = m g over the four corners", () => {
    const kA = 1e8; // N/m³
    const hx = 0.1;
    const hy = 0.05;
    const hz = 0.05;
    const st = drop(
      { type: "linear", stiffness: kA, stepDamping: 0.5, perUnitArea: true },
      { type: "box", halfExtents: [hx, hy, hz] },
      hz + 0.002,
    );
    const A = 4 * hx * hy;
    expect(st.contacts).toHaveLength(4);
    expect(Math.abs(hz - st.bodies[0].position[2] - (m * g) / (kA * A))).toBeLessThan(1e-12);
  });
});

describe("solve blocks that appear with the contacts", () => {
  it("two compliant spheres collide head-on: coupling blocks reserved, momentum kept", () => {
    // With one linearized backward-Euler iteration, W Δa = R with R the (internal, zero-sum)
    // contact force and W = M + h d G Gᵀ + h² K: 1ᵀ W = 1ᵀ M only when K and the damping
    // carry their off-diagonal (a, b) blocks, so Σ m v stays exact only if the stepper
    // reserved those blocks when the contact appeared.
    const sim = loadModel({
      gravity: [0, 0, 0],
      bodies: [
        {
          id: "a",
          kind: "particle",
          mass: 1,
          position: [0, 0, 0],
          velocity: [1, 0, 0],
          shapes: [{ type: "sphere", radius: 0.1 }],
        },
        {
          id: "b",
          kind: "particle",
          mass: 3,
          position: [0.25, 0, 0],
          velocity: [-0.2, 0, 0],
          shapes: [{ type: "sphere", radius: 0.1 }],
        },
      ],
      contact: { method: "smc", behavior: { type: "linear", stiffness: 1e5, stepDamping: 0.2 } },
      solver: { integrator: "backward-euler", dt: 0.002 },
    });
    const stepper = (sim as unknown as { stepper: { matrix: SparseBlockMatrix } }).stepper;
    const v0 = stepper.matrix.structureVersion;
    let touched = false;
    for (let k = 0; k < 200; k++) {
      sim.step(1);
      const st = sim.state();
      if (st.contacts.length > 0) touched = true;
      const p = st.bodies[0].velocity[0] * 1 + st.bodies[1].velocity[0] * 3;
      expect(Math.abs(p - (1 - 0.6))).toBeLessThan(1e-12);
    }
    expect(touched).toBe(true);
    expect(stepper.matrix.structureVersion).toBeGreaterThan(v0);
    const [a, b] = sim.state().bodies;
    expect(b.velocity[0]).toBeGreaterThan(a.velocity[0]); // they separated
  });
});

describe("the contacts' modes (modes: (h ω)², what the θ-schemes test a switch against)", () => {
  it("a particle pressed into a plane: h² k/m; a separated one: 0", () => {
    const [k, m, h] = [4e4, 0.25, 0.01];
    const sys = new BodySystem([
      bodyInit("in", "particle", { mass: m, position: [0, 0, 0.05 - 1e-4] }),
      bodyInit("out", "particle", { mass: m, position: [1, 0, 0.05 + 1e-3] }),
    ]);
    const det = new CollisionDetector(
      [
        { shape: { type: "plane", normal: [0, 0, 1], offset: 0 }, body: -1 },
        { shape: { type: "sphere", radius: 0.05 }, body: 0 },
        { shape: { type: "sphere", radius: 0.05 }, body: 1 },
      ],
      { margin: 0.01 },
    );
    const beh = createContactBehavior({
      type: "linear",
      stiffness: k,
      damping: 0,
      stepDamping: 0,
      perUnitArea: false,
    });
    const e = new CompliantContactEffector(sys, det, beh, 0.01);
    e.stepSize = h;
    e.beginStep();
    expect(e.count).toBe(2);
    const out = new Float64Array(2);
    expect(e.modes(out)).toBe(2);
    const pushing = new Uint8Array(2);
    e.pushing(pushing);
    const sorted = [...out].sort((a, b) => a - b);
    expect(sorted[0]).toBe(0);
    expect(Math.abs(sorted[1] / ((h * h * k) / m) - 1)).toBeLessThan(1e-12);
    for (let i = 0; i < 2; i++) expect(out[i] > 0).toBe(pushing[i] === 1);
    // too short a buffer: the count, nothing written
    expect(e.modes(new Float64Array(1))).toBe(2);
  });
});

describe("a spinning ball resting on a frictionless compliant floor", () => {
  // A 1 kg ball (r = 0.1 m) spun at 50 rad/s about a horizontal axis, resting on the default
  // law (linear k = 1e5 N/m, stepDamping ½) at h = 5 ms: the floor's force m g acts through
  // its centre, so it stays where k δ = m g (δ = m g/k = 9.81e-5 m below the surface), keeps
  // its spin (no torque on a sphere) and its energy ½ I ω² + m g z + ½ k δ². Its material
  // point turns by ω h = 0.25 rad a step: tracked as the contact point, it rose by
  // r (1 − cos ω h) = 3.1 mm a step, 30 times δ, and the ball lost its support within
  // every step (compliant.ts, "Curved sides").
  const [m, r, k, w] = [1, 0.1, 1e5, 50];
  const I = 0.4 * m * r * r;
  const G = 9.81;
  const rest = r - (m * G) / k;
  const energy = (z: number, vz: number, wy: number) =>
    0.5 * m * vz * vz + 0.5 * I * wy * wy + m * G * z + 0.5 * k * (r - z) ** 2;
  for (const integrator of ["newmark", "generalized-alpha", "moreau-jean"])
    it(`${integrator}: its height, spin and energy over 30 s`, () => {
      const sim = loadModel({
        gravity: [0, 0, -G],
        bodies: [
          { id: "floor", fixed: true, shapes: [{ type: "plane", normal: [0, 0, 1], offset: 0 }] },
          {
            id: "ball",
            mass: m,
            inertia: [I, I, I],
            position: [0, 0, rest],
            angularVelocity: [0, w, 0],
            shapes: [{ type: "sphere", radius: r }],
          },
        ],
        contact: { method: "smc" },
        solver: { dt: 0.005, integrator },
      });
      const E0 = energy(rest, 0, w);
      let worstZ = 0;
      let worstW = 0;
      let worstE = 0;
      for (let s = 0; s < 6000; s++) {
        sim.step(1);
        const b = sim.state().bodies[1];
        worstZ = Math.max(worstZ, Math.abs(b.position[2] - rest));
        worstW = Math.max(worstW, Math.abs(b.angularVelocity[1] - w));
        worstE = Math.max(
          worstE,
          Math.abs(energy(b.position[2], b.velocity[2], b.angularVelocity[1]) - E0),
        );
      }
      const st = sim.state();
      expect(worstZ).toBeLessThan(1e-10);
      expect(worstW).toBeLessThan(1e-9);
      expect(worstE).toBeLessThan(1e-9);
      expect(Math.abs(st.energy.total - E0)).toBeLessThan(1e-9);
      expect(Math.abs(st.energy.error)).toBeLessThan(1e-9);
    });
});
