/**
 * Nonsmooth frictional contact on a soft fem block crushed against a floor (nonsmooth-contact.ts
 * ContactSolveError, moreau-jean.ts step halving): a 0.2 m block (E = 1e5 Pa, 8 kg) hitting
 * the floor at 10 m/s with μ = 0.3, backward Euler, h = 5 ms. Two steps crush it so far that
 * the step's iteration matrix W = M + h² K (the exact corotational tangent) is indefinite at
 * the third step's start, and so is the Delassus operator H W⁻¹ Hᵀ (an eigenvalue of −398): the
 * contact problem is not monotone. Before, nncg and pgs diverged to NaN there and the run
 * failed (SolverError), and pjacobi "converged" to 4.3e6 J from 412 J unflagged.
 *
 *  - With each of nncg, pgs and pjacobi: step 3 is refused and redone as two half steps
 *    (solver.substeps 2), every contact solve converges, the block's total energy never
 *    rises above its start (energy.error at most 1 J, the first impact step's), and after
 *    1.5 s (the crushed block springs up 0.7 m and lands again) it rests on the floor (no node faster than 1 cm/s, none below the floor by more
 *    than the projection's tolerance).
 *  - positiveSemidefinite: the LDLᵀ test of the Delassus operator, against matrices of known
 *    inertia (a Gram matrix, definite or rank deficient, and one with a negative eigenvalue).
 */
import { describe, expect, it } from "vitest";
import { positiveSemidefinite } from "../../../src/engine/contact/nonsmooth-contact";
import { loadModel } from "../../../src/engine/index";
import { SOFT } from "../../support/fem";
import { mulberry32 } from "../../support/random";

function crushModel(contactSolver: string) {
  return {
    gravity: [0, 0, -9.81],
    bodies: [{ id: "floor", fixed: true, shapes: [{ type: "plane" }] }],
    fem: [
      {
        id: "b",
        box: { size: [0.2, 0.2, 0.2], resolution: [2, 2, 2], center: [0, 0, 0.15] },
        ...SOFT,
        velocity: [0, 0, -10],
      },
    ],
    contact: { method: "nsc", friction: 0.3 },
    solver: { integrator: "backward-euler", dt: 0.005, contactSolver },
  };
}

describe("a soft block crushed against a floor with friction", () => {
  for (const solver of ["nncg", "pgs", "pjacobi"]) {
    it(`${solver}: the step whose W is indefinite is halved, no energy is gained, the block rests`, () => {
      const sim = loadModel(crushModel(solver));
      const start = sim.state().energy.total;
      const substeps: number[] = [];
      for (let i = 0; i < 300; i++) {
        sim.step(1);
        const s = sim.state();
        substeps.push(s.solver.substeps);
        expect(s.solver.contactConverged, `step ${i + 1}`).toBe(true);
        expect(s.energy.total).toBeLessThanOrEqual(start);
        expect(s.energy.error).toBeLessThan(1);
      }
      expect(substeps[2]).toBe(2);
      const s = sim.state();
      let v = 0;
      let zmin = Number.POSITIVE_INFINITY;
      for (const b of s.bodies) {
        if (b.velocity) v = Math.max(v, Math.hypot(...b.velocity));
        if (b.id !== "floor") zmin = Math.min(zmin, b.position[2]);
      }
      expect(v).toBeLessThan(0.01);
      expect(zmin).toBeGreaterThan(-1e-3);
    });
  }
});

describe("positiveSemidefinite (the Delassus operator's test)", () => {
  const rand = mulberry32(77);
  /** A Aᵀ for a random m × k matrix A (rank min(m, k)). */
  function gram(m: number, k: number): Float64Array {
    const a = Array.from({ length: m * k }, () => rand() - 0.5);
    const out = new Float64Array(m * m);
    for (let i = 0; i < m; i++)
      for (let j = 0; j < m; j++) {
        let s = 0;
        for (let r = 0; r < k; r++) s += a[i * k + r] * a[j * k + r];
        out[i * m + j] = s;
      }
    return out;
  }
  it("accepts definite and rank-deficient Gram matrices, refuses one with a negative eigenvalue", () => {
    const work = new Float64Array(400);
    expect(positiveSemidefinite(gram(12, 20), 12, work)).toBe(true);
    expect(positiveSemidefinite(gram(12, 5), 12, work)).toBe(true);
    // G − 2 x xᵀ·λ_max-ish: subtracting a large rank-one term makes it indefinite
    const g = gram(12, 20);
    for (let i = 0; i < 12; i++) g[i * 12 + i] -= 1e3 * (i === 7 ? 1 : 0);
    expect(positiveSemidefinite(g, 12, work)).toBe(false);
    expect(positiveSemidefinite(new Float64Array(4), 2, work)).toBe(true);
  });
});
