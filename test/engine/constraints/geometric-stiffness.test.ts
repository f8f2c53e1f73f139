/**
 * The loaded joints' geometric stiffness (constraint-set.ts addGeometricStiffness,
 * kinematics.ts pointRotationStiffness): the stabilizing part of the symmetric part of
 * ∂τ/∂θ, the change of a joint force's torque on a body when that body turns, at fixed
 * multipliers. Checked against central finite differences of the torque Cqᵀλ computed from
 * the constraint's own Jacobian, symmetrized and clamped with ml-matrix's eigen-
 * decomposition; and by what it is for: Newton on a loaded chain converging in few
 * iterations.
 */
import { EigenvalueDecomposition, Matrix } from "ml-matrix";
import { describe, expect, it } from "vitest";
import { chainModel } from "../../../bench/scenes";
import type { Constraint } from "../../../src/engine/constraints/constraint";
import { FixedJoint } from "../../../src/engine/constraints/fixed";
import { RevoluteJoint } from "../../../src/engine/constraints/revolute";
import { SphericalJoint } from "../../../src/engine/constraints/spherical";
import { loadModel } from "../../../src/engine/index";
import type { BodySystem } from "../../../src/engine/model/body-system";
import { mulberry32 } from "../../support/random";
import { randomBody, randVec, system, turn } from "./helpers";

/** The torque part of Cq_bodyᵀ λ (body 0: a, 1: b), from the constraint's Jacobian. */
function torque(c: Constraint, lambda: Float64Array, side: 0 | 1): number[] {
  const jacA = new Float64Array(6 * c.rows);
  const jacB = new Float64Array(6 * c.rows);
  c.jacobian(0, jacA, jacB);
  const J = side === 0 ? jacA : jacB;
  const t = [0, 0, 0];
  for (let r = 0; r < c.rows; r++) for (let i = 0; i < 3; i++) t[i] += J[6 * r + 3 + i] * lambda[r];
  return t;
}

/** The negative semidefinite part of sym(∂τ/∂θ) by central differences and ml-matrix. */
function referenceStiffness(
  c: Constraint,
  sys: BodySystem,
  lambda: Float64Array,
  side: 0 | 1,
): Matrix {
  const eps = 1e-6;
  const D = new Matrix(3, 3);
  for (let j = 0; j < 3; j++) {
    const d = [0, 0, 0];
    d[j] = eps;
    turn(sys, side, d);
    const plus = torque(c, lambda, side);
    turn(sys, side, [-2 * d[0], -2 * d[1], -2 * d[2]]);
    const minus = torque(c, lambda, side);
    turn(sys, side, d);
    for (let i = 0; i < 3; i++) D.set(i, j, (plus[i] - minus[i]) / (2 * eps));
  }
  const S = D.add(D.transpose()).mul(0.5);
  const e = new EigenvalueDecomposition(S);
  const V = e.eigenvectorMatrix;
  const L = Matrix.diag(e.realEigenvalues.map((x) => Math.min(x, 0)));
  return V.mmul(L).mmul(V.transpose());
}

function computed(c: Constraint, lambda: Float64Array, side: 0 | 1): Matrix {
  const ka = new Float64Array(9);
  const kb = new Float64Array(9);
  c.addRotationStiffness?.(lambda, 0, ka, kb);
  return Matrix.from1DArray(3, 3, Array.from(side === 0 ? ka : kb));
}

function maxAbs(m: Matrix): number {
  return Math.max(...m.to1DArray().map(Math.abs));
}

describe("point rows' geometric stiffness against finite differences", () => {
  const rand = mulberry32(2718);
  const joints: [string, (sys: BodySystem) => Constraint][] = [
    [
      "spherical",
      (sys) =>
        new SphericalJoint(
          "j",
          sys,
          { body: 0, point: randVec(rand, 0.3) },
          {
            body: 1,
            point: randVec(rand, 0.3),
          },
        ),
    ],
    [
      "revolute",
      (sys) =>
        new RevoluteJoint(
          "j",
          sys,
          { body: 0, point: randVec(rand, 0.3) },
          { body: 1, point: randVec(rand, 0.3) },
          [0, 0, 1],
        ),
    ],
    [
      "fixed",
      (sys) =>
        new FixedJoint(
          "j",
          sys,
          { body: 0, point: randVec(rand, 0.3) },
          {
            body: 1,
            point: randVec(rand, 0.3),
          },
        ),
    ],
  ];
  for (const [name, make] of joints)
    it(`${name}: 20 random poses and loads, both bodies, to 1e-7 of |λ||r|`, () => {
      for (let trial = 0; trial < 20; trial++) {
        const sys = system([randomBody(rand, "a", "rigid"), randomBody(rand, "b", "rigid")]);
        const c = make(sys);
        // load on the point rows only: the other rows' curvature is not part of the term
        const lambda = new Float64Array(c.rows);
        lambda.set(randVec(rand, 10));
        for (const side of [0, 1] as const) {
          const ref = referenceStiffness(c, sys, lambda, side);
          const got = computed(c, lambda, side);
          expect(maxAbs(got.clone().sub(ref))).toBeLessThan(1e-7 * 10 * 0.6);
        }
      }
    });

  it("a lever pulled along itself: the whole term, −(f·r)(I − r̂r̂ᵀ); pushed: nothing", () => {
    const sys = system([randomBody(rand, "a", "rigid"), randomBody(rand, "b", "rigid")]);
    const c = new SphericalJoint(
      "j",
      sys,
      { body: 0, point: [0, 0, 0.2] },
      { body: 1, point: [0.3, 0, 0] },
    );
    // r_b = R_b (0.3, 0, 0); a force on b along r_b (tension: f·r > 0)
    const R = sys.rotation;
    const rb = [0.3 * R[9], 0.3 * R[12], 0.3 * R[15]];
    const pull = new Float64Array(rb.map((x) => 20 * x));
    const got = computed(c, pull, 1);
    const fr = 20 * (rb[0] ** 2 + rb[1] ** 2 + rb[2] ** 2);
    const n = Math.hypot(...rb);
    const expected = Matrix.eye(3)
      .sub(
        Matrix.columnVector(rb)
          .mmul(Matrix.rowVector(rb))
          .div(n * n),
      )
      .mul(-fr);
    expect(maxAbs(got.clone().sub(expected))).toBeLessThan(1e-12 * fr);
    const push = new Float64Array(rb.map((x) => -20 * x));
    expect(maxAbs(computed(c, push, 1))).toBe(0);
  });
});

describe("Newton on a loaded chain", () => {
  // Without the term every correction, fresh or chord, contracts at θ ≈ 0.1–0.45 as the
  // links' tension grows (10.3 iterations a step on average here, measured before it
  // landed); with it a fresh factorization leaves θ ≈ 0.002–0.005 to the chord
  // corrections, and 1e-10 is reached in 4 (2 at the start from rest).
  it("Newmark γ = 0.6, Newton to 1e-10 on a 30-link chain released horizontally: ≤ 4.5 iterations a solve on average over 2 s", () => {
    const model = chainModel({ links: 30, dt: 1 / 240, integrator: "newmark" });
    const sim = loadModel({
      ...model,
      solver: {
        integrator: "newmark",
        dt: 1 / 240,
        beta: 0.3025,
        gamma: 0.6,
        newtonTolerance: 1e-10,
      },
    });
    // per Newton solve: the error control's halvings (at its default tolerance, scaled to
    // the 1 m chain's links) solve each sub-step afresh, and a step's count sums them: 3.88 a
    // solve, 1.25 solves a step (3.34 and 1.006 at the former fixed 3e-4 m)
    let iterations = 0;
    let solves = 0;
    for (let k = 0; k < 480; k++) {
      sim.step(1);
      const s = sim.state().solver;
      expect(s?.newtonConverged).toBe(true);
      iterations += s?.newtonIterations ?? 0;
      solves += sim.lastStepStats.substeps;
    }
    expect(iterations / solves).toBeLessThanOrEqual(4.5);
  });
});
