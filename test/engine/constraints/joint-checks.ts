/**
 * Checks shared by the joint and motor test files (spherical, revolute, prismatic, fixed,
 * distance, motor, pair-constraint .test.ts), each of which runs them for its own type.
 *
 * testJoint registers both for one joint type.
 *
 * 1. What a joint allows and forbids, checked on the motions themselves (independently of
 *    the row formulas): at the model pose C = 0; every rigid motion of the pair as a whole
 *    satisfies G u = 0; the joint's own relative freedom satisfies G u = 0 (asserted by
 *    each type's file); and G has full row rank = the number of removed relative dofs.
 *
 * 2. The analytic Jacobian, Ct and Qc against finite differences of C along random
 *    motions from random poses (off the constraint manifold, so the general formulas are
 *    exercised, not their simplified form at C = 0).
 *    Motion: q(τ) = q₀ ⊕ τu with a constant generalized velocity u = [v, ω] (world ω, the
 *    exact exponential map: x(τ) = x₀ + τv, R(τ) = exp(τ[ω]×) R₀) and t = t₀ + τ. Then
 *      dC/dτ = Cq u + Ct,    d²C/dτ² = Cq u̇ + (d/dt Cq) u + Ctt = −Qc    (u̇ = 0).
 *    Central differences with Richardson extrapolation (O(h⁴)) give both derivatives.
 */
import { describe, expect, it } from "vitest";
import type { JointSpec, MotorSpec, TimeFunctionSpec } from "../../../schemas/model";
import { createConstraints } from "../../../src/engine/constraints/build";
import { ConstraintSet } from "../../../src/engine/constraints/constraint-set";
import { csrMultiply, csrToDense } from "../../../src/engine/math/csr";
import {
  addPositionIncrement,
  PositionSnapshot,
  restorePositions,
  setVelocity,
} from "../../../src/engine/model/body-system";
import { dependentRows } from "../../../src/engine/solvers/linear/sparse-qr";
import { mulberry32 } from "../../support/random";
import { type Kind, randomBody, randVec, system } from "./helpers";

export type JointType = JointSpec["type"];

export function cross(a: ArrayLike<number>, b: ArrayLike<number>): number[] {
  return [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]];
}

/** World position of the point s (body frame) of body b. */
export function worldPoint(sys: ReturnType<typeof system>, b: number, s: ArrayLike<number>) {
  const R = sys.rotation.subarray(9 * b, 9 * b + 9);
  return [0, 1, 2].map(
    (i) => sys.pos[3 * b + i] + R[3 * i] * s[0] + R[3 * i + 1] * s[1] + R[3 * i + 2] * s[2],
  );
}

/**
 * Two random rigid bodies A, B joined by one joint of `type` in an assembled pose: b's
 * point placed where a's point is (a distance link's b point elsewhere), the axis random.
 */
export function assembledPair(type: JointType, seed: number) {
  const r = mulberry32(seed);
  const sys = system([randomBody(r, "A", "rigid"), randomBody(r, "B", "rigid")]);
  const sa = randVec(r, 0.5);
  const p = worldPoint(sys, 0, sa);
  const R = sys.rotation.subarray(9, 18);
  const dp = [0, 1, 2].map((i) => p[i] - sys.pos[3 + i]);
  const sb = [0, 1, 2].map((i) => R[i] * dp[0] + R[3 + i] * dp[1] + R[6 + i] * dp[2]);
  const axisRaw = randVec(r);
  const nrm = Math.hypot(...axisRaw);
  const axis = axisRaw.map((x) => x / nrm);
  let joint: JointSpec;
  if (type === "distance") {
    joint = {
      id: "j",
      type,
      a: { body: "A", point: sa },
      b: { body: "B", point: [0.2, -0.1, 0.3] },
    };
  } else if (type === "revolute" || type === "prismatic")
    joint = {
      id: "j",
      type,
      a: { body: "A", point: sa },
      b: { body: "B", point: sb as [number, number, number] },
      axis: axis as [number, number, number],
    };
  else
    joint = {
      id: "j",
      type,
      a: { body: "A", point: sa },
      b: { body: "B", point: sb as [number, number, number] },
    };
  const set = new ConstraintSet(sys, createConstraints([joint], [], sys));
  const zero = [0, 0, 0];
  /** b turning by w about the joint point p / sliding by v (a at rest). */
  const rot = (w: number[]) => motion(sys, zero, zero, { v: zero, w, about: p });
  const slide = (v: number[]) => motion(sys, zero, zero, { v, w: zero, about: p });
  return { sys, set, p, axis, r, joint, rot, slide };
}

/** u for: a common rigid motion V + Ω × (x − o), then b also gets the relative twist. */
export function motion(
  sys: ReturnType<typeof system>,
  V: number[],
  W: number[],
  rel: { v: number[]; w: number[]; about: number[] } | null,
) {
  const u = new Float64Array(12);
  for (let b = 0; b < 2; b++) {
    const x = [0, 1, 2].map((i) => sys.pos[3 * b + i]);
    const v = cross(W, x).map((c, i) => c + V[i]);
    const w = [...W];
    if (b === 1 && rel) {
      const xr = x.map((xi, i) => xi - rel.about[i]);
      const vr = cross(rel.w, xr);
      for (let i = 0; i < 3; i++) {
        v[i] += vr[i] + rel.v[i];
        w[i] += rel.w[i];
      }
    }
    u.set(v, 6 * b);
    u.set(w, 6 * b + 3);
  }
  return u;
}

/** ‖G u‖∞ at t = 0. */
export function gu(set: ConstraintSet, u: Float64Array) {
  set.updateJacobian(0);
  const out = new Float64Array(set.numRows);
  set.multiply(u, out);
  return Math.max(...Array.from(out, Math.abs));
}

/** C = 0 in the model pose, `rank` rows of full rank, rigid motions of the pair allowed. */
export function expectAssembled(pair: ReturnType<typeof assembledPair>, rank: number): void {
  const { sys, set, r } = pair;
  const c = new Float64Array(set.numRows);
  set.residual(0, c);
  for (const x of c) expect(Math.abs(x)).toBeLessThan(1e-14);
  expect(set.numRows).toBe(rank);
  const G = set.updateJacobian(0);
  expect(dependentRows(csrToDense(G), set.numRows, 12, 1e-8).rank).toBe(rank);
  expect(gu(set, motion(sys, randVec(r), randVec(r), null))).toBeLessThan(1e-13);
}

/** A joint (with a motor when `drive` is set) between ends of these kinds. */
export interface DerivativeCase {
  type: JointType;
  a: Kind | "ground";
  b: Kind | "ground";
  drive?: TimeFunctionSpec;
}

const pairs: [Kind | "ground", Kind | "ground"][] = [
  ["rigid", "rigid"],
  ["ground", "rigid"],
  ["rigid", "ground"],
  ["fixed", "rigid"],
  ["particle", "rigid"],
  ["rigid", "particle"],
  ["particle", "particle"],
  ["ground", "particle"],
];

/** Every case, in a fixed order: its index seeds its random poses. */
export const DERIVATIVE_CASES: DerivativeCase[] = [];
for (const type of ["spherical", "revolute", "prismatic", "fixed", "distance"] as JointType[])
  for (const [a, b] of pairs) DERIVATIVE_CASES.push({ type, a, b });
const drives: TimeFunctionSpec[] = [
  { offset: 0.3, rate: 2.5 },
  { type: "sine", amplitude: 0.7, frequency: 1.3, phase: 0.4, offset: 0.1 },
  {
    type: "table",
    points: [
      [0, 0],
      [1, 0.8],
      [2, -0.5],
    ],
  },
];
for (const drive of drives)
  for (const [a, b] of [
    ["rigid", "rigid"],
    ["ground", "rigid"],
    ["rigid", "ground"],
  ] as const) {
    DERIVATIVE_CASES.push({ type: "revolute", a, b, drive });
    DERIVATIVE_CASES.push({ type: "prismatic", a, b, drive });
  }
DERIVATIVE_CASES.push({ type: "prismatic", a: "ground", b: "particle", drive: drives[1] });

/** The case's constraints at a random pose off the manifold with random velocities. */
export function derivativeCase(c: DerivativeCase, seed: number) {
  const r = mulberry32(seed);
  const bodies = [];
  if (c.a !== "ground") bodies.push(randomBody(r, "A", c.a));
  if (c.b !== "ground") bodies.push(randomBody(r, "B", c.b));
  const sys = system(bodies);
  const end = (k: Kind | "ground", id: string) => ({
    body: k === "ground" ? "ground" : id,
    point: randVec(r, 0.5),
  });
  const base = { id: "j", a: end(c.a, "A"), b: end(c.b, "B") };
  const axis = randVec(r);
  const joint = (
    c.type === "revolute" || c.type === "prismatic"
      ? { ...base, type: c.type, axis }
      : c.type === "distance"
        ? { ...base, type: c.type, length: undefined }
        : { ...base, type: c.type }
  ) as JointSpec;
  const motors: MotorSpec[] = [];
  if (c.drive !== undefined)
    motors.push(
      c.type === "revolute"
        ? { id: "m", joint: "j", angle: c.drive }
        : { id: "m", joint: "j", offset: c.drive },
    );
  const constraints = createConstraints([joint], motors, sys);
  // Leave the model pose: random finite pose increment, then random velocities.
  const du = new Float64Array(sys.numDofs);
  for (let i = 0; i < du.length; i++) du[i] = 0.4 * (2 * r() - 1);
  addPositionIncrement(sys, du, 1);
  const u = new Float64Array(sys.numDofs);
  for (let i = 0; i < u.length; i++) u[i] = 2 * (2 * r() - 1);
  setVelocity(sys, u);
  return { sys, set: new ConstraintSet(sys, constraints), u, constraints, joint };
}

export function caseLabel(c: DerivativeCase) {
  return `${c.type}${c.drive ? ` + motor ${JSON.stringify(c.drive).slice(0, 24)}` : ""} (${c.a}–${c.b})`;
}

/**
 * Ċ = G u + Ct and C̈ = −Qc against Richardson-extrapolated central differences along the
 * motion, and Ct against the time derivative at fixed q, for 3 random poses of case ci.
 */
export function expectDerivativesMatchDifferences(ci: number): void {
  const c = DERIVATIVE_CASES[ci];
  for (let trial = 0; trial < 3; trial++) {
    const { sys, set, u } = derivativeCase(c, 1000 * ci + trial + 1);
    const m = set.numRows;
    const t0 = 0.37;
    const snap = new PositionSnapshot(sys);
    const tmp = new Float64Array(m);
    const cAt = (tau: number, out: Float64Array) => {
      addPositionIncrement(sys, u, tau);
      set.residual(t0 + tau, out);
      restorePositions(sys, snap);
    };
    const cp = new Float64Array(m);
    const cm = new Float64Array(m);
    const c0 = new Float64Array(m);
    cAt(0, c0);
    const first = new Float64Array(m);
    const second = new Float64Array(m);
    const d1 = (h: number, i: number) => {
      cAt(h, cp);
      cAt(-h, cm);
      return [(cp[i] - cm[i]) / (2 * h), (cp[i] - 2 * c0[i] + cm[i]) / (h * h)];
    };
    const h = 2e-3;
    for (let i = 0; i < m; i++) {
      const [a1, a2] = d1(h, i);
      const [b1, b2] = d1(h / 2, i);
      first[i] = (4 * b1 - a1) / 3;
      second[i] = (4 * b2 - a2) / 3;
    }
    // Analytic: Ċ = G u + Ct, C̈ = −Qc.
    const G = set.updateJacobian(t0);
    const gu = new Float64Array(m);
    csrMultiply(G, u, gu);
    set.velocityTerm(t0, tmp);
    const qc = new Float64Array(m);
    set.quadraticTerm(t0, qc);
    for (let i = 0; i < m; i++) {
      const rate = gu[i] + tmp[i];
      expect(Math.abs(first[i] - rate), `row ${i} rate`).toBeLessThan(1e-7 * (1 + Math.abs(rate)));
      expect(Math.abs(second[i] + qc[i]), `row ${i} Qc`).toBeLessThan(2e-6 * (1 + Math.abs(qc[i])));
    }
    // Ct against the pure time derivative at fixed q.
    const cT = (tau: number, out: Float64Array) => set.residual(t0 + tau, out);
    cT(1e-4, cp);
    cT(-1e-4, cm);
    for (let i = 0; i < m; i++)
      expect(Math.abs((cp[i] - cm[i]) / 2e-4 - tmp[i])).toBeLessThan(1e-6 * (1 + Math.abs(tmp[i])));
  }
}

/**
 * The tests of one joint type (spherical, revolute, prismatic, fixed, distance .test.ts):
 * for 5 random pairs, expectAssembled with `rank` rows, then the joint's own allowed and
 * forbidden relative motions (expectMotions, titled `kinematicsTitle`); and one finite-
 * difference test (expectDerivativesMatchDifferences) per undriven DERIVATIVE_CASES case
 * of that type.
 */
export function testJoint(
  type: JointType,
  rank: number,
  kinematicsTitle: string,
  expectMotions: (pair: ReturnType<typeof assembledPair>) => void,
): void {
  describe(`${type} joint kinematics`, () => {
    it(kinematicsTitle, () => {
      for (let seed = 1; seed <= 5; seed++) {
        const pair = assembledPair(type, seed);
        expectAssembled(pair, rank);
        expectMotions(pair);
      }
    });
  });

  describe(`${type} Jacobian, Ct and Qc vs finite differences along random motions`, () => {
    DERIVATIVE_CASES.forEach((c, ci) => {
      if (c.type === type && c.drive === undefined)
        it(caseLabel(c), () => expectDerivativesMatchDifferences(ci));
    });
  });
}
