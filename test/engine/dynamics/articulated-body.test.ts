/**
 * The articulated-body algorithm against the equations it solves, checked independently of
 * its recursion: on a tree with every kind of slot (revolute, spherical, prismatic and
 * fixed joints, a free root with a child, a free particle) at a random state under random
 * applied forces,
 * - each body's accelerations, by central differences of the body velocities along the
 *   coordinates' own rates (setState at y ± ε ẏ, u ± ε u̇), satisfy Newton–Euler with the
 *   joint wrenches the algorithm reports;
 * - the joints' acceleration equations G a = Qc hold, G and Qc from the constraint rows of
 *   src/engine/constraints (code the tree does not use);
 * - a joint transmits no effort along its free motion (Sᵀ w = 0);
 * - largestDisplacement is the first-order displacement of the bodies' mass.
 */
import { describe, expect, it } from "vitest";
import { createConstraints } from "../../../src/engine/constraints/build";
import {
  type ArticulatedTree,
  buildTree,
  SlotKind,
} from "../../../src/engine/dynamics/articulated-body";
import { loadModel } from "../../../src/engine/index";

/** A tree of every slot kind, joints satisfied at the model pose (points in body frames). */
function treeModel() {
  return {
    gravity: [0, 0, 0] as [number, number, number],
    bodies: [
      { id: "A", mass: 1.3, inertia: [0.02, 0.05, 0.04], position: [0.2, 0, 0] },
      { id: "B", mass: 0.7, inertia: [0.01, 0.012, 0.008], position: [0.6, 0, 0.1] },
      { id: "C", mass: 0.4, inertia: [0.003, 0.004, 0.005], position: [0.9, 0.2, 0.1] },
      { id: "D", mass: 0.5, inertia: [0.004, 0.006, 0.007], position: [0.2, -0.3, 0] },
      { id: "F", mass: 2, inertia: [0.1, 0.2, 0.25], position: [0, 0, 2] },
      { id: "G", mass: 0.6, inertia: [0.01, 0.02, 0.015], position: [0.3, 0, 2] },
      { id: "p", kind: "particle" as const, mass: 0.2, position: [1, 1, 1] },
    ],
    joints: [
      {
        id: "hinge",
        type: "revolute" as const,
        a: { point: [0, 0, 0] as [number, number, number] },
        b: { body: "A", point: [-0.2, 0, 0] as [number, number, number] },
        axis: [0.3, 1, 0.2] as [number, number, number],
      },
      {
        id: "ball",
        type: "spherical" as const,
        a: { body: "A", point: [0.2, 0, 0] as [number, number, number] },
        b: { body: "B", point: [-0.2, 0, -0.1] as [number, number, number] },
      },
      {
        id: "slide",
        type: "prismatic" as const,
        // the child as end a: the coordinate's sign and the tree's direction differ
        a: { body: "C", point: [-0.1, -0.1, 0] as [number, number, number] },
        b: { body: "B", point: [0.2, 0.1, 0] as [number, number, number] },
        axis: [1, 0.5, -0.3] as [number, number, number],
      },
      {
        id: "weld",
        type: "fixed" as const,
        a: { body: "A", point: [0, -0.15, 0] as [number, number, number] },
        b: { body: "D", point: [0, 0.15, 0] as [number, number, number] },
      },
      {
        id: "shoulder",
        type: "spherical" as const,
        a: { body: "F", point: [0.15, 0, 0] as [number, number, number] },
        b: { body: "G", point: [-0.15, 0, 0] as [number, number, number] },
      },
    ],
    solver: { integrator: "articulated" as const, dt: 0.01 },
  };
}

const cross = (a: number[], b: number[]) => [
  a[1] * b[2] - a[2] * b[1],
  a[2] * b[0] - a[0] * b[2],
  a[0] * b[1] - a[1] * b[0],
];

/** A deterministic generator of numbers in [−1, 1) (the test's own, for repeatable states). */
function random(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return (s / 2 ** 32) * 2 - 1;
  };
}

function setUp(seed: number) {
  const sim = loadModel(treeModel());
  const sys = sim.system;
  // at the model pose, which the joints are given against
  const pose = { pos: Float64Array.from(sys.pos), quat: Float64Array.from(sys.quat) };
  const tree = buildTree(sys, sim.model.joints, [], pose);
  // the constraint rows read their frames from the model pose, before the state moves
  const constraints = createConstraints(sim.model.joints, [], sys);
  const y = new Float64Array(tree.ySize);
  const u = new Float64Array(tree.uSize);
  tree.beginStep(y, u);
  const rnd = random(seed);
  for (let i = 0; i < tree.numSlots; i++) {
    const yo = tree.yOffset[i];
    switch (tree.kind[i]) {
      case SlotKind.SPHERICAL:
        for (let d = 0; d < 4; d++) y[yo + d] = rnd();
        break;
      case SlotKind.REVOLUTE:
      case SlotKind.PRISMATIC:
        y[yo] = 0.5 * rnd();
        break;
      case SlotKind.FREE:
        for (let d = 0; d < 7; d++) y[yo + d] += 0.3 * rnd();
        break;
      case SlotKind.PARTICLE:
        for (let d = 0; d < 3; d++) y[yo + d] += rnd();
        break;
    }
  }
  for (let k = 0; k < u.length; k++) u[k] = 2 * rnd();
  const f = new Float64Array(sys.numDofs);
  for (let k = 0; k < f.length; k++) f[k] = 3 * rnd();
  return { sim, sys, tree, y, u, f, constraints };
}

/** Body velocities (v then ω per body, the body system's layout) at coordinates (y, u). */
function velocities(tree: ArticulatedTree, y: Float64Array, u: Float64Array): Float64Array {
  tree.setState(y, u, 0);
  const s = tree.sys;
  const out = new Float64Array(s.numDofs);
  for (let b = 0; b < s.numBodies; b++) {
    const o = s.dofOffset[b];
    if (o < 0) continue;
    for (let d = 0; d < 3; d++) out[o + d] = s.vel[3 * b + d];
    if (s.hasOrientation[b]) for (let d = 0; d < 3; d++) out[o + 3 + d] = s.omega[3 * b + d];
  }
  return out;
}

/**
 * The algorithm's accelerations and, by central differences, the bodies'. `later`: the
 * wrenches read by jointWrenches after the evaluation, with a largestDisplacement between
 * (the articulated integrator's order: its error estimate, then the reactions of the last
 * accepted sub-step), instead of by accelerations' `wrenches` flag.
 */
function solve(seed: number, later = false) {
  const { sim, sys, tree, y, u, f, constraints } = setUp(seed);
  tree.setState(y, u, 0);
  // the applied torques include the gyroscopic −ω × I ω, as computeForces gives them
  // (forces/gyroscopic.ts): the algorithm takes the body's equations in that form
  for (let b = 0; b < sys.numBodies; b++) {
    const o = sys.dofOffset[b];
    if (o < 0 || !sys.hasOrientation[b]) continue;
    const I = sys.inertiaWorld;
    const w = [0, 1, 2].map((d) => sys.omega[3 * b + d]);
    const Iw = [0, 1, 2].map(
      (r) => I[9 * b + 3 * r] * w[0] + I[9 * b + 3 * r + 1] * w[1] + I[9 * b + 3 * r + 2] * w[2],
    );
    const g = cross(w, Iw);
    for (let d = 0; d < 3; d++) f[o + 3 + d] -= g[d];
  }
  const ydot = new Float64Array(tree.ySize);
  const udot = new Float64Array(tree.uSize);
  tree.positionRates(y, u, ydot);
  expect(tree.accelerations(u, f, udot, !later)).toBe(true);
  if (later) {
    tree.largestDisplacement(y, ydot, udot, 0.01);
    tree.jointWrenches();
  }
  const wrench = Float64Array.from(tree.wrench);
  const points = Array.from({ length: tree.numSlots }, (_, i) => {
    const b = tree.body[i];
    const r = tree.pointToCentre(i);
    return [0, 1, 2].map((d) => sys.pos[3 * b + d] - r[d]);
  });
  // ε: the central difference's truncation ε² |y'''| and rounding 1e-16/ε both near 1e-10
  const eps = 1e-5;
  const shifted = (s: number) => {
    const ys = y.map((v, k) => v + s * eps * ydot[k]);
    const us = u.map((v, k) => v + s * eps * udot[k]);
    return velocities(tree, ys, us);
  };
  const plus = shifted(1);
  const minus = shifted(-1);
  const accel = plus.map((v, k) => (v - minus[k]) / (2 * eps));
  tree.setState(y, u, 0);
  return { sim, sys, tree, f, wrench, points, accel, y, u, udot, constraints };
}

describe("articulated-body algorithm", () => {
  for (const [seed, later] of [
    [1, false],
    [2, false],
    [3, false],
    [4, true],
  ] as const) {
    it(`satisfies Newton–Euler with its joint wrenches (random state ${seed}${later ? ", read afterwards by jointWrenches" : ""})`, () => {
      const { sys, tree, f, wrench, points, accel } = solve(seed, later);
      let worst = 0;
      for (let i = 0; i < tree.numSlots; i++) {
        const b = tree.body[i];
        const o = sys.dofOffset[b];
        const m = sys.mass[b];
        const c = [0, 1, 2].map((d) => sys.pos[3 * b + d]);
        // the wrenches on b: its own joint's (+), each child's (−), at their points
        const force = [0, 1, 2].map((d) => f[o + d] + wrench[6 * i + 3 + d]);
        const torque = [0, 1, 2].map((d) => (sys.hasOrientation[b] ? f[o + 3 + d] : 0));
        const own = cross(
          points[i].map((p, d) => p - c[d]),
          [0, 1, 2].map((d) => wrench[6 * i + 3 + d]),
        );
        for (let d = 0; d < 3; d++) torque[d] += wrench[6 * i + d] + own[d];
        for (let k = 0; k < tree.numSlots; k++) {
          if (tree.parent[k] !== i) continue;
          const fk = [0, 1, 2].map((d) => wrench[6 * k + 3 + d]);
          const arm = cross(
            points[k].map((p, d) => p - c[d]),
            fk,
          );
          for (let d = 0; d < 3; d++) {
            force[d] -= fk[d];
            torque[d] -= wrench[6 * k + d] + arm[d];
          }
        }
        for (let d = 0; d < 3; d++) worst = Math.max(worst, Math.abs(m * accel[o + d] - force[d]));
        if (!sys.hasOrientation[b]) continue;
        // I α = τ (τ with the gyroscopic torque, solve())
        const I = sys.inertiaWorld;
        for (let r = 0; r < 3; r++) {
          const row = 9 * b + 3 * r;
          const Ia = I[row] * accel[o + 3] + I[row + 1] * accel[o + 4] + I[row + 2] * accel[o + 5];
          worst = Math.max(worst, Math.abs(Ia - torque[r]));
        }
      }
      // forces of order 1–30 N; the differences carry ~1e-9 of them
      expect(worst).toBeLessThan(1e-6);
    });

    it(`keeps the joints' acceleration equations G a = Qc (random state ${seed})`, () => {
      const { sys, accel, constraints } = solve(seed);
      let worst = 0;
      for (const c of constraints) {
        const jacA = new Float64Array(6 * c.rows);
        const jacB = new Float64Array(6 * c.rows);
        const qc = new Float64Array(c.rows);
        c.jacobian(0, jacA, jacB);
        c.quadraticTerm(0, qc, 0);
        for (let r = 0; r < c.rows; r++) {
          let s = 0;
          for (const [body, jac] of [
            [c.bodyA, jacA],
            [c.bodyB, jacB],
          ] as const) {
            if (body < 0) continue;
            const o = sys.dofOffset[body];
            const width = sys.hasOrientation[body] ? 6 : 3;
            for (let d = 0; d < width; d++) s += jac[6 * r + d] * accel[o + d];
          }
          worst = Math.max(worst, Math.abs(s - qc[r]));
        }
      }
      expect(worst).toBeLessThan(1e-6);
    });

    it(`transmits no effort along a joint's free motion (random state ${seed})`, () => {
      const { sim, tree, wrench } = solve(seed, later);
      for (let i = 0; i < tree.numSlots; i++) {
        const k = tree.joint[i];
        if (k < 0) continue;
        const j = sim.model.joints[k];
        const n = [0, 1, 2].map((d) => wrench[6 * i + d]);
        const force = [0, 1, 2].map((d) => wrench[6 * i + 3 + d]);
        const scale = Math.hypot(...n) + Math.hypot(...force);
        expect(scale).toBeGreaterThan(1e-3);
        if (j.type === "spherical") expect(Math.hypot(...n) / scale).toBeLessThan(1e-12);
        if (j.type === "revolute" || j.type === "prismatic") {
          // the axis turns with the parent body: its world direction now
          const b = tree.body[tree.parent[i]] ?? -1;
          const R = b >= 0 ? Array.from(tree.sys.rotation.subarray(9 * b, 9 * b + 9)) : null;
          const a0 = j.axis;
          const len = Math.hypot(...a0);
          // the model axis is world at the model pose, where every rotation is the identity
          const e = R
            ? [0, 1, 2].map(
                (r) => (R[3 * r] * a0[0] + R[3 * r + 1] * a0[1] + R[3 * r + 2] * a0[2]) / len,
              )
            : a0.map((x) => x / len);
          const along = j.type === "revolute" ? n : force;
          const dot = e[0] * along[0] + e[1] * along[1] + e[2] * along[2];
          expect(Math.abs(dot) / scale).toBeLessThan(1e-12);
        }
      }
    });
  }

  it("measures the first-order displacement of the bodies' mass", () => {
    const { sys, tree, y, u } = setUp(7);
    tree.setState(y, u, 0);
    const rnd = random(99);
    const dy = y.map(() => 1e-7 * rnd());
    const du = u.map(() => 1e-7 * rnd());
    const h = 0.01;
    const estimate = tree.largestDisplacement(y, dy, du, h);
    // the displacement the change makes: the coordinates y + dy + h du (the velocities'
    // error counted over h, as the estimate counts it), placed against y
    const before = { pos: Float64Array.from(sys.pos), quat: Float64Array.from(sys.quat) };
    const moved = y.map((v, k) => v + dy[k]);
    // a velocity change du moves the positions by h du to first order: ẏ(u + du) − ẏ(u)
    const rates0 = new Float64Array(tree.ySize);
    const rates1 = new Float64Array(tree.ySize);
    tree.positionRates(y, u, rates0);
    tree.positionRates(
      y,
      u.map((v, k) => v + du[k]),
      rates1,
    );
    for (let k = 0; k < moved.length; k++) moved[k] += h * (rates1[k] - rates0[k]);
    tree.setState(moved, u, 0);
    let worst = 0;
    for (let b = 0; b < sys.numBodies; b++) {
      if (sys.dofOffset[b] < 0) continue;
      let e2 = 0;
      for (let d = 0; d < 3; d++) e2 += (sys.pos[3 * b + d] - before.pos[3 * b + d]) ** 2;
      if (sys.hasOrientation[b]) {
        // δθ = 2 (q₁ ⊗ q₀*)_vec, then δθᵀ I δθ / m
        const [w1, x1, y1, z1] = Array.from(sys.quat.subarray(4 * b, 4 * b + 4));
        const [w0, x0, y0, z0] = Array.from(before.quat.subarray(4 * b, 4 * b + 4));
        const t = [
          2 * (-w1 * x0 + x1 * w0 - y1 * z0 + z1 * y0),
          2 * (-w1 * y0 + x1 * z0 + y1 * w0 - z1 * x0),
          2 * (-w1 * z0 - x1 * y0 + y1 * x0 + z1 * w0),
        ];
        const I = sys.inertiaWorld;
        let q = 0;
        for (let r = 0; r < 3; r++)
          for (let c = 0; c < 3; c++) q += t[r] * I[9 * b + 3 * r + c] * t[c];
        e2 += q / sys.mass[b];
      }
      worst = Math.max(worst, Math.sqrt(e2));
    }
    expect(worst).toBeGreaterThan(1e-9);
    // first order: the difference is of the order of the change squared (1e-14)
    expect(Math.abs(estimate - worst) / worst).toBeLessThan(1e-4);
  });

  it("completes a stage's state with the inverse world inertias (completeState)", () => {
    const { sys, tree, y, u } = setUp(11);
    // the full placement at another state first, so that stale inverses would show
    tree.setState(
      y.map((v) => 0.5 * v),
      u,
      0,
    );
    tree.setState(y, u, 0, false);
    const version = sys.stateVersion;
    tree.completeState();
    expect(sys.stateVersion).toBe(version + 1);
    // each rigid body's inverse: I_w I_w⁻¹ = 1, I_w = R diag(I_p) Rᵀ of its orientation
    let worst = 0;
    for (let b = 0; b < sys.numBodies; b++) {
      if (sys.dofOffset[b] < 0 || !sys.hasOrientation[b]) continue;
      const I = sys.inertiaWorld.subarray(9 * b, 9 * b + 9);
      const J = sys.inertiaWorldInv.subarray(9 * b, 9 * b + 9);
      for (let r = 0; r < 3; r++)
        for (let c = 0; c < 3; c++) {
          let s = 0;
          for (let k = 0; k < 3; k++) s += I[3 * r + k] * J[3 * k + c];
          worst = Math.max(worst, Math.abs(s - (r === c ? 1 : 0)));
        }
    }
    expect(worst).toBeLessThan(1e-12);
    // and the state is the one the full placement leaves, to the bit
    const arrays = () => [sys.pos, sys.quat, sys.vel, sys.omega, sys.inertiaWorldInv];
    const after = arrays().map((a) => Array.from(a));
    tree.setState(y, u, 0);
    expect(arrays().map((a) => Array.from(a))).toEqual(after);
  });
});
