/**
 * ConstrainedSolve, the linear solve of a Newton iteration with joints,
 *     [ W  Gᵀ ] [ Δa ]   [ R  ]
 *     [ G  0  ] [ μ  ] = [ r_c ],   λ = −μ,
 * on its three paths (W = s M; W block-diagonal and nonsymmetric; a general W with
 * coupling blocks, by the regularized KKT LU) against the same saddle-point system
 * assembled densely and solved with ml-matrix, on a scene of every joint type and both
 * motors (test/engine/constraints/dense-scene.ts, regular: no repeated rows). And the
 * symmetric joints' mixed system of generalized-α,
 *     W Δa − ρ M M_t⁻¹ G_tᵀ Δλ̃ = R,   G Δa = r_c,
 * with G_t, M_t at a start configuration 1 cm away, on the mass and block paths.
 */
import { inverse, Matrix, solve } from "ml-matrix";
import { describe, expect, it } from "vitest";
import { ConstrainedSolve } from "../../../src/engine/integrators/constrained-solve";
import { SparseBlockMatrix } from "../../../src/engine/math/block-matrix";
import { addPositionIncrement, type BodySystem } from "../../../src/engine/model/body-system";
import { denseG, denseMass, scene } from "../constraints/dense-scene";

/** W = scale·M + (perturbation) per body block, plus coupling blocks when `coupled`. */
function iterationMatrix(sys: BodySystem, r: () => number, scale: number, coupled: boolean) {
  const W = new SparseBlockMatrix(sys.blockSizes);
  const nb = sys.blockSizes.length;
  if (coupled)
    for (let k = 0; k + 1 < nb; k++) {
      W.addBlock(k, k + 1);
      W.addBlock(k + 1, k);
    }
  W.finalize();
  const M = denseMass(sys);
  for (let b = 0; b < sys.numBodies; b++) {
    const k = sys.block[b];
    if (k < 0) continue;
    const d = sys.dofOffset[b];
    const w = sys.blockSizes[k];
    // a nonsymmetric perturbation of the mass block (gyroscopic / damper Jacobians)
    for (let i = 0; i < w; i++)
      for (let j = 0; j < w; j++)
        W.addEntry(k, k, i, j, scale * M[d + i][d + j] + 0.05 * (2 * r() - 1));
  }
  if (coupled)
    for (let k = 0; k + 1 < nb; k++)
      for (let i = 0; i < sys.blockSizes[k]; i++)
        for (let j = 0; j < sys.blockSizes[k + 1]; j++) {
          const v = 0.1 * (2 * r() - 1);
          W.addEntry(k, k + 1, i, j, v);
          W.addEntry(k + 1, k, j, i, v);
        }
  return W;
}

/** The dense W of a SparseBlockMatrix (through its CSR). */
function denseW(W: SparseBlockMatrix): Matrix {
  const csr = W.toCsr();
  const out = Matrix.zeros(csr.rows, csr.cols);
  for (let i = 0; i < csr.rows; i++)
    for (let k = csr.rowPtr[i]; k < csr.rowPtr[i + 1]; k++)
      out.set(i, csr.colIdx[k], csr.values[k]);
  return out;
}

/** [Δa; μ] of [W Bᵀ; G 0] x = [R; r_c] (Bᵀ the force columns, Gᵀ unless given). */
function denseSaddle(W: Matrix, G: number[][], R: Float64Array, rc: Float64Array, Bt?: Matrix) {
  const n = W.rows;
  const m = G.length;
  const K = Matrix.zeros(n + m, n + m);
  K.setSubMatrix(W, 0, 0);
  const g = new Matrix(G);
  K.setSubMatrix(Bt ?? g.transpose(), 0, n);
  K.setSubMatrix(g, n, 0);
  const x = solve(K, Matrix.columnVector([...R, ...rc])).getColumn(0);
  return { da: x.slice(0, n), mu: x.slice(n) };
}

function setup(seed: number) {
  const { sys, set, r } = scene(seed, false);
  set.updateJacobian(0.3);
  const n = sys.numDofs;
  const m = set.numRows;
  const R = Float64Array.from({ length: n }, () => 2 * r() - 1);
  const rc = Float64Array.from({ length: m }, () => 2 * r() - 1);
  return { sys, set, r, R, rc, n, m, solver: new ConstrainedSolve(sys, set) };
}

function expectSolution(
  solver: ConstrainedSolve,
  R: Float64Array,
  rc: Float64Array,
  ref: { da: number[]; mu: number[] },
  digits: number,
) {
  const da = new Float64Array(R.length);
  const lambda = new Float64Array(rc.length);
  solver.solve(R, rc, da, lambda);
  for (let i = 0; i < da.length; i++) expect(da[i]).toBeCloseTo(ref.da[i], digits);
  for (let i = 0; i < lambda.length; i++) expect(lambda[i]).toBeCloseTo(-ref.mu[i], digits);
}

describe("ConstrainedSolve", () => {
  it("mass path W = s M: the dense saddle-point solution, λ = −μ", () => {
    const { sys, set, R, rc, solver } = setup(1);
    const s = 1.3;
    solver.factorMass(s);
    const W = new Matrix(denseMass(sys)).mul(s);
    expectSolution(solver, R, rc, denseSaddle(W, denseG(set), R, rc), 10);
  });

  it("block-diagonal path (nonsymmetric blocks) and the general KKT path", () => {
    for (const coupled of [false, true]) {
      const { sys, set, r, R, rc, solver } = setup(2);
      const W = iterationMatrix(sys, r, 1.1, coupled);
      expect(W.isBlockDiagonal()).toBe(!coupled);
      if (coupled) solver.factorGeneral(W.toCsr());
      else expect(solver.factorBlockDiagonal(W)).toBe(true);
      // the KKT path is regularized by 1e-10 ‖W⁻¹‖: agreement to ~1e-8
      expectSolution(solver, R, rc, denseSaddle(denseW(W), denseG(set), R, rc), coupled ? 7 : 10);
    }
  });

  it("a singular diagonal block is reported (false) for the caller's fallback", () => {
    const { sys, r, solver } = setup(3);
    const W = iterationMatrix(sys, r, 1, false);
    W.values.fill(0, W.offsetOf(0, 0), W.offsetOf(0, 0) + 36);
    expect(solver.factorBlockDiagonal(W)).toBe(false);
  });

  it("symmetric joints: W Δa − ρ M M_t⁻¹ G_tᵀ Δλ̃ = R, G Δa = r_c (mass, block and KKT paths)", () => {
    for (const path of ["mass", "blocks", "kkt"] as const) {
      const { sys, set, r, R, rc, solver, n } = setup(4);
      // the start configuration: G_t, M_t (dense), then 1 cm away
      const Gt = new Matrix(denseG(set));
      const startG = Float64Array.from(set.G.values);
      const startInertiaInv = Float64Array.from(sys.inertiaWorldInv);
      const MtInv = inverse(new Matrix(denseMass(sys)));
      addPositionIncrement(
        sys,
        Float64Array.from({ length: n }, () => 0.01 * (2 * r() - 1)),
        1,
      );
      set.updateJacobian(0.3);
      const M = new Matrix(denseMass(sys));
      const rho = 0.7;
      let W: Matrix;
      if (path === "mass") {
        solver.factorMass(1.2);
        W = M.clone().mul(1.2);
      } else if (path === "blocks") {
        const blocks = iterationMatrix(sys, r, 1.2, false);
        expect(solver.factorBlockDiagonal(blocks, false)).toBe(true);
        W = denseW(blocks);
      } else {
        // a W that couples the bodies: the saddle point itself, with the start's force
        // directions in its upper block (an earlier Gᵀ there converged only linearly)
        const coupled = iterationMatrix(sys, r, 1.2, true);
        solver.factorGeneral(coupled.toCsr(), false);
        W = denseW(coupled);
      }
      solver.factorMixed(startG, startInertiaInv, rho);
      const Bt = M.mmul(MtInv).mmul(Gt.transpose()).mul(-rho);
      const ref = denseSaddle(W, denseG(set), R, rc, Bt);
      const da = new Float64Array(n);
      const dLambda = new Float64Array(set.numRows);
      solver.solveMixed(R, rc, da, dLambda);
      // the KKT path's regularization (−εI, ε = 1e-10 max 1/W_ii) moves it by O(ε)
      const digits = path === "kkt" ? 8 : 9;
      for (let i = 0; i < n; i++) expect(da[i]).toBeCloseTo(ref.da[i], digits);
      for (let i = 0; i < dLambda.length; i++) expect(dLambda[i]).toBeCloseTo(ref.mu[i], digits);
    }
  });
});
