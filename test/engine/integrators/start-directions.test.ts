/**
 * StartDirections, the joint force of generalized-α's symmetric joints along the step's
 * START configuration: Y λ̃ = M_t⁻¹ G_tᵀ λ̃ with G_t, M_t frozen at begin(). Checked
 * against dense M_t⁻¹ (ml-matrix) and G_t on a scene of every joint type
 * (test/engine/constraints/dense-scene.ts), with the bodies moved 1 cm after begin:
 * - begin: λ̃ = the last multipliers, accel = M_t⁻¹ G_tᵀ λ̃;
 * - correct on the mass path (W = s M, the mixed S̃) and on the general path (the saddle
 *   point with the start's force directions, constrained-solve.test.ts): λ̃ += Δλ̃; accel
 *   stays M_t⁻¹ G_tᵀ λ̃ (not the current configuration's), and `change` is ‖ρ Y Δλ̃‖∞ of
 *   the correction;
 * - without joints nothing is held (accel = 0).
 */
import { inverse, Matrix } from "ml-matrix";
import { describe, expect, it } from "vitest";
import { SchemeCoefficients } from "../../../src/engine/dynamics/stepper";
import { ConstrainedSolve } from "../../../src/engine/integrators/constrained-solve";
import { StartDirections } from "../../../src/engine/integrators/start-directions";
import { SparseBlockMatrix } from "../../../src/engine/math/block-matrix";
import { addPositionIncrement } from "../../../src/engine/model/body-system";
import { denseG, denseMass, scene } from "../constraints/dense-scene";

describe("StartDirections", () => {
  for (const path of ["mixed", "general"] as const)
    it(`${path} path: λ̃ and Y λ̃ = M_t⁻¹ G_tᵀ λ̃ with the start configuration's G and M`, () => {
      const { sys, set, r } = scene(6, false);
      const n = sys.numDofs;
      const m = set.numRows;
      const start = new StartDirections(sys, set);
      const lambda0 = Float64Array.from({ length: m }, () => 2 * r() - 1);
      start.begin(0.2, lambda0);
      const Gt = new Matrix(denseG(set));
      const Y = inverse(new Matrix(denseMass(sys))).mmul(Gt.transpose());
      const expectAccel = (lambda: Float64Array) => {
        const want = Y.mmul(Matrix.columnVector(Array.from(lambda))).getColumn(0);
        for (let i = 0; i < n; i++) expect(start.accel[i]).toBeCloseTo(want[i], 12);
      };
      expect(Array.from(start.lambda)).toEqual(Array.from(lambda0));
      expectAccel(lambda0);
      // the iterate 1 cm away
      addPositionIncrement(
        sys,
        Float64Array.from({ length: n }, () => 0.01 * (2 * r() - 1)),
        1,
      );
      set.updateJacobian(0.2);
      const solver = new ConstrainedSolve(sys, set);
      const c = new SchemeCoefficients();
      c.startForceWeight = 0.6;
      if (path === "mixed") solver.factorMass(1);
      else {
        const W = new SparseBlockMatrix(sys.blockSizes);
        W.addBlock(0, 1);
        W.addBlock(1, 0);
        W.finalize();
        const M = denseMass(sys);
        for (let b = 0; b < sys.numBodies; b++) {
          const k = sys.block[b];
          if (k < 0) continue;
          const d = sys.dofOffset[b];
          for (let i = 0; i < sys.blockSizes[k]; i++)
            for (let j = 0; j < sys.blockSizes[k]; j++) W.addEntry(k, k, i, j, M[d + i][d + j]);
        }
        W.addEntry(0, 1, 0, 0, 0.1);
        W.addEntry(1, 0, 0, 0, 0.1);
        solver.factorGeneral(W.toCsr(), false);
      }
      const rhs = Float64Array.from({ length: n }, () => 2 * r() - 1);
      const rc = Float64Array.from({ length: m }, () => 2 * r() - 1);
      const da = new Float64Array(n);
      const dLambda = new Float64Array(m);
      start.correct(set, solver, c, true, rhs, rc, da, dLambda);
      // both paths solve for Δλ̃ itself
      const lambda1 = lambda0.map((l, i) => l + dLambda[i]);
      for (let i = 0; i < m; i++) expect(start.lambda[i]).toBeCloseTo(lambda1[i], 14);
      expectAccel(lambda1);
      const step = Y.mmul(Matrix.columnVector(Array.from(dLambda))).getColumn(0);
      expect(start.change).toBeCloseTo(0.6 * Math.max(...step.map(Math.abs)), 12);
      expect(start.change).toBeGreaterThan(0);
    });

  it("without joints nothing is held", () => {
    const { sys } = scene(7, false);
    const start = new StartDirections(sys, null);
    start.begin(0, new Float64Array(0));
    expect(start.lambda.length).toBe(0);
    expect(Array.from(start.accel)).toEqual(new Array(sys.numDofs).fill(0));
  });
});
