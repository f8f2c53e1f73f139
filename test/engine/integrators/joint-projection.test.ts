/**
 * The post-step joint projection (joint-projection.ts) on particles held by distance joints,
 * where the projections in the mass metric have closed forms: for a link of length L
 * between masses m_a, m_b along û, stretched to L + δ, the nearest pose in the mass metric
 * moves the ends along û by +m_b δ/(m_a + m_b) and −m_a δ/(m_a + m_b) (û unchanged, so it
 * is exact); the tangent velocities remove the stretching rate r = ûᵀ(v_b − v_a) in the
 * same proportions (v_a + m_b r û/(m_a + m_b), v_b − m_a r û/(m_a + m_b)). A particle on a
 * link to the ground moves by −δ û and loses its radial velocity. Checked for both orders
 * of the integrators, for a state already within tolerance (nothing moves, unless the step
 * held its joints at the position level: then the velocities alone are projected), for the
 * velocity threshold 0.1 jointTolerance/h, and for order "none". What it returns reaches the
 * State's solver.jointToleranceMet: false at every step where two joints cannot both be met
 * (a particle 0.3 m from two points 1 m apart; newmark, holding the joints in its Newton
 * step, fails that step instead), true on a pendulum.
 */
import { describe, expect, it } from "vitest";
import type { ModelInput } from "../../../schemas/model";
import { createConstraints } from "../../../src/engine/constraints/build";
import { ConstraintSet } from "../../../src/engine/constraints/constraint-set";
import { loadModel } from "../../../src/engine/index";
import type { ProjectionOrder } from "../../../src/engine/integrators/integrator";
import { JointProjection } from "../../../src/engine/integrators/joint-projection";
import { getVelocity, setVelocity, updateDerived } from "../../../src/engine/model/body-system";
import { impossibleJoints } from "../../support/models";
import { modelSystem } from "../../support/system";

const MASS = { a: 1, b: 3, c: 2 };
const L_AB = 1;
const L_C = 0.8;
const GROUND_POINT = [0.2, 3, -0.1];
const U_AB = unit([0.3, -0.5, 0.8]);
const U_C = unit([-0.6, 0.1, 0.4]);
const TOLERANCE = 1e-12;
const H = 0.01;

function unit(v: number[]): number[] {
  const n = Math.hypot(...v);
  return v.map((x) => x / n);
}

/** A, B linked at L_AB along U_AB; C hanging from GROUND_POINT at L_C along U_C. */
function model(): ModelInput {
  const a = [0.1, 0.2, 0.3];
  return {
    gravity: [0, 0, 0],
    bodies: [
      { id: "A", kind: "particle", mass: MASS.a, position: a },
      { id: "B", kind: "particle", mass: MASS.b, position: a.map((x, i) => x + L_AB * U_AB[i]) },
      {
        id: "C",
        kind: "particle",
        mass: MASS.c,
        position: GROUND_POINT.map((x, i) => x + L_C * U_C[i]),
      },
    ],
    joints: [
      { id: "ab", type: "distance", a: { body: "A" }, b: { body: "B" }, length: L_AB },
      {
        id: "c",
        type: "distance",
        a: { body: "ground", point: GROUND_POINT },
        b: { body: "C" },
        length: L_C,
      },
    ],
  } as ModelInput;
}

/** Velocities (m/s) of A, B, C with stretching rates along both links. */
const V = [0.4, -0.2, 0.7, -0.3, 0.5, 0.1, 0.6, 0.2, -0.4];

/**
 * The projection of the model's system from its links stretched by δ_ab, δ_c (m) with the
 * velocities V, and the closed-form projected positions and velocities.
 */
function drifted(dAB: number, dC: number) {
  const { system: sys, spec } = modelSystem(model());
  const set = new ConstraintSet(sys, createConstraints(spec.joints, [], sys));
  const x0 = Array.from(sys.pos);
  // B and C moved outward along their links
  for (let i = 0; i < 3; i++) {
    sys.pos[3 + i] += dAB * U_AB[i];
    sys.pos[6 + i] += dC * U_C[i];
  }
  updateDerived(sys);
  setVelocity(sys, Float64Array.from(V));
  const mab = MASS.a + MASS.b;
  const x = x0.slice();
  // A drifted by 0 moves by +m_b δ/(m_a + m_b) û, B drifted by δ û moves by −m_a δ/(m_a + m_b) û:
  // both end at their model place + m_b δ/(m_a + m_b) û; C goes back to its model place
  for (let i = 0; i < 3; i++) {
    x[i] += (MASS.b / mab) * dAB * U_AB[i];
    x[3 + i] += (MASS.b / mab) * dAB * U_AB[i];
  }
  const rate = [0, 1, 2].reduce((s, i) => s + U_AB[i] * (V[3 + i] - V[i]), 0);
  const radial = [0, 1, 2].reduce((s, i) => s + U_C[i] * V[6 + i], 0);
  const v = V.slice();
  for (let i = 0; i < 3; i++) {
    v[i] += (MASS.b / mab) * rate * U_AB[i];
    v[3 + i] -= (MASS.a / mab) * rate * U_AB[i];
    v[6 + i] -= radial * U_C[i];
  }
  return { sys, projection: new JointProjection(sys, set), x, v, x0 };
}

function maxDiff(x: ArrayLike<number>, y: ArrayLike<number>): number {
  let m = 0;
  for (let i = 0; i < x.length; i++) m = Math.max(m, Math.abs(x[i] - y[i]));
  return m;
}

function velocities(sys: ReturnType<typeof drifted>["sys"]): Float64Array {
  const v = new Float64Array(sys.numDofs);
  getVelocity(sys, v);
  return v;
}

describe("post-step joint projection in the mass metric", () => {
  it("joints no projection can close say jointToleranceMet false; closable ones true", () => {
    // (velocity-level joints: moreau-jean at θ = 0.6; at θ = ½ it holds them at the
    // position level and fails loudly, below)
    const sim = loadModel(impossibleJoints("moreau-jean", H, 0.6));
    for (let i = 0; i < 5; i++) {
      sim.step(1);
      expect(sim.state().solver.jointToleranceMet).toBe(false);
    }
    // the same particle on one joint of 0.5 m: within tolerance after every step
    const one = impossibleJoints("moreau-jean", H, 0.6);
    one.joints = [{ ...(one.joints ?? [])[0], length: 0.5 }] as ModelInput["joints"];
    const fine = loadModel(one);
    for (let i = 0; i < 50; i++) {
      fine.step(1);
      expect(fine.state().solver.jointToleranceMet).toBe(true);
    }
    // newmark and moreau-jean at θ = ½ hold the joints at the position level in their
    // Newton steps, which fail loudly instead, each halving too (the step is undone)
    // naming the joint furthest from closed at the last good state (0.5 − 0.3 m)
    for (const integrator of ["newmark", "moreau-jean"] as const) {
      const loud = loadModel(impossibleJoints(integrator, H));
      expect(() => loud.step(1), integrator).toThrow(
        /Newton did not converge.*"(left|right)" row 0 is off by 0\.200 \(m or rad\): joints no motion satisfies/,
      );
      expect(loud.stepCount, integrator).toBe(0);
    }
  });

  for (const order of ["velocities-first", "positions-first"] as ProjectionOrder[])
    it(`${order}: drifted links back to their lengths, velocities tangent (closed forms)`, () => {
      const { sys, projection, x, v } = drifted(2e-3, -1.5e-3);
      expect(projection.project(1, H, order, TOLERANCE, false, false)).toBe(true);
      expect(maxDiff(sys.pos, x)).toBeLessThan(1e-14);
      expect(maxDiff(velocities(sys), v)).toBeLessThan(1e-14);
    });

  it("within tolerance: nothing moves after velocity-level rows, in either order", () => {
    for (const order of ["velocities-first", "positions-first"] as ProjectionOrder[]) {
      const { sys, projection } = drifted(0, 0);
      const x = Array.from(sys.pos);
      projection.project(1, H, order, TOLERANCE, false, false);
      expect(Array.from(sys.pos)).toEqual(x);
      expect(Array.from(velocities(sys))).toEqual(V);
    }
  });

  it("within tolerance after position-level rows: the velocities alone made tangent", () => {
    const { sys, projection, v, x0 } = drifted(0, 0);
    const x = Array.from(sys.pos);
    projection.project(1, H, "positions-first", TOLERANCE, true, false);
    expect(Array.from(sys.pos)).toEqual(x);
    expect(maxDiff(sys.pos, x0)).toBeLessThan(1e-15);
    expect(maxDiff(velocities(sys), v)).toBeLessThan(1e-14);
  });

  it("velocities within 0.1 jointTolerance/h of tangent are kept, else made tangent", () => {
    // tangent velocities plus a stretching rate of 5e-6 m/s on the link A–B; drifted
    // positions, so that the projection runs; jointTolerance 1e-6 m
    const rate = 5e-6;
    for (const [h, kept] of [
      [0.01, true], // threshold 1e-5 m/s
      [0.1, false], // threshold 1e-6 m/s
    ] as const) {
      const { sys, projection, v } = drifted(2e-3, -1.5e-3);
      const slipping = v.slice();
      for (let i = 0; i < 3; i++) slipping[3 + i] += rate * U_AB[i];
      setVelocity(sys, Float64Array.from(slipping));
      projection.project(1, h, "positions-first", 1e-6, false, false);
      // projected: the rate removed as above, A and B then both moving by m_b r/(m_a + m_b) û
      const tangent = v.slice();
      for (let i = 0; i < 6; i++) tangent[i] += ((MASS.b * rate) / (MASS.a + MASS.b)) * U_AB[i % 3];
      expect(maxDiff(velocities(sys), kept ? slipping : tangent)).toBeLessThan(1e-14);
    }
  });

  it('order "none" leaves a drifted state as it is', () => {
    const { sys, projection } = drifted(2e-3, -1.5e-3);
    const x = Array.from(sys.pos);
    projection.project(1, H, "none", TOLERANCE, true, false);
    expect(Array.from(sys.pos)).toEqual(x);
    expect(Array.from(velocities(sys))).toEqual(V);
  });
});
