/**
 * Every joint's and motor's analytic Jacobian, Ct and Qc against finite differences of
 * C along random motions from random poses (off the constraint manifold, so the general
 * formulas are exercised, not their simplified form at C = 0).
 *
 * Motion: q(τ) = q₀ ⊕ τu with a constant generalized velocity u = [v, ω] (world ω, the
 * exact exponential map: x(τ) = x₀ + τv, R(τ) = exp(τ[ω]×) R₀) and t = t₀ + τ. Then
 *   dC/dτ = Cq u + Ct,    d²C/dτ² = Cq u̇ + (d/dt Cq) u + Ctt = −Qc    (u̇ = 0).
 * Central differences with Richardson extrapolation (O(h⁴)) give both derivatives.
 */
import { describe, expect, it } from "vitest";
import type { JointSpec, MotorSpec, TimeFunctionSpec } from "../../../schemas/model";
import { createConstraints } from "../../../src/engine/constraints/build";
import { ConstraintSet } from "../../../src/engine/constraints/constraint-set";
import { csrMultiply } from "../../../src/engine/math/csr";
import {
  addPositionIncrement,
  PositionSnapshot,
  restorePositions,
  setVelocity,
} from "../../../src/engine/model/body-system";
import { mulberry32 } from "../../support/random";
import { type Kind, randomBody, randVec, system } from "./helpers";

type JointType = JointSpec["type"];

interface Case {
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

const cases: Case[] = [];
for (const type of ["spherical", "revolute", "prismatic", "fixed", "distance"] as JointType[])
  for (const [a, b] of pairs) cases.push({ type, a, b });
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
    cases.push({ type: "revolute", a, b, drive });
    cases.push({ type: "prismatic", a, b, drive });
  }
cases.push({ type: "prismatic", a: "ground", b: "particle", drive: drives[1] });

function build(c: Case, seed: number) {
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

function label(c: Case) {
  return `${c.type}${c.drive ? ` + motor ${JSON.stringify(c.drive).slice(0, 24)}` : ""} (${c.a}–${c.b})`;
}

describe("constraint Jacobian, Ct and Qc vs finite differences along random motions", () => {
  cases.forEach((c, ci) => {
    it(label(c), () => {
      for (let trial = 0; trial < 3; trial++) {
        const { sys, set, u } = build(c, 1000 * ci + trial + 1);
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
          expect(Math.abs(first[i] - rate), `row ${i} rate`).toBeLessThan(
            1e-7 * (1 + Math.abs(rate)),
          );
          expect(Math.abs(second[i] + qc[i]), `row ${i} Qc`).toBeLessThan(
            2e-6 * (1 + Math.abs(qc[i])),
          );
        }
        // Ct against the pure time derivative at fixed q.
        const cT = (tau: number, out: Float64Array) => set.residual(t0 + tau, out);
        cT(1e-4, cp);
        cT(-1e-4, cm);
        for (let i = 0; i < m; i++)
          expect(Math.abs((cp[i] - cm[i]) / 2e-4 - tmp[i])).toBeLessThan(
            1e-6 * (1 + Math.abs(tmp[i])),
          );
      }
    });
  });
});

describe("reactions equal the virtual power of Cq_bᵀλ", () => {
  cases.forEach((c, ci) => {
    if (c.b === "ground") return;
    it(label(c), () => {
      const { sys, constraints, joint } = build(c, 777 + ci);
      const r = mulberry32(99 + ci);
      for (const con of constraints) {
        const jA = new Float64Array(6 * con.rows);
        const jB = new Float64Array(6 * con.rows);
        con.jacobian(0.37, jA, jB);
        const lambda = Float64Array.from({ length: con.rows }, () => 2 * r() - 1);
        const F = new Float64Array(3);
        const T = new Float64Array(3);
        con.reaction(lambda, 0, F, T);
        const b = con.bodyB;
        const v = sys.vel.subarray(3 * b, 3 * b + 3);
        const w = sys.omega.subarray(3 * b, 3 * b + 3);
        // λᵀ Cq_b [v_b; ω_b]
        let power = 0;
        for (let i = 0; i < con.rows; i++)
          for (let k = 0; k < 6; k++)
            power += lambda[i] * jB[6 * i + k] * (k < 3 ? v[k] : w[k - 3]);
        // F·ṗ_b + τ·ω_b with ṗ_b = v_b + ω_b × r_b, r_b = p_b − x_b
        const s = joint.b.point;
        const R = sys.rotation.subarray(9 * b, 9 * b + 9);
        const pt = [0, 1, 2].map(
          (i) => R[3 * i] * s[0] + R[3 * i + 1] * s[1] + R[3 * i + 2] * s[2],
        );
        const pv = [
          v[0] + w[1] * pt[2] - w[2] * pt[1],
          v[1] + w[2] * pt[0] - w[0] * pt[2],
          v[2] + w[0] * pt[1] - w[1] * pt[0],
        ];
        const p2 =
          F[0] * pv[0] + F[1] * pv[1] + F[2] * pv[2] + T[0] * w[0] + T[1] * w[1] + T[2] * w[2];
        expect(Math.abs(p2 - power)).toBeLessThan(1e-12 * (1 + Math.abs(power)));
      }
    });
  });
});
