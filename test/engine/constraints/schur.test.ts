/**
 * MassSchurComplement: the mass-weighted Gram matrix S = G M⁻¹ Gᵀ of a scene of every
 * joint type (dense-scene.ts) against the dense product computed here (dense M from masses
 * and world inertias, M⁻¹Gᵀ by Gaussian elimination), and its fused load into the
 * semidefinite LDLᵀ (the factorization itself: test/engine/solvers/linear/
 * semidefinite-ldlt.test.ts).
 */
import { describe, expect, it } from "vitest";
import { MassSchurComplement } from "../../../src/engine/constraints/schur";
import { csrToDense } from "../../../src/engine/math/csr";
import { SemidefiniteLdlt } from "../../../src/engine/solvers/linear/semidefinite-ldlt";
import {
  denseG,
  denseMass,
  massSolveCols,
  matmul,
  scene,
  schurValues,
  transpose,
} from "./dense-scene";

describe("MassSchurComplement", () => {
  it("S = G M⁻¹ Gᵀ (its lower triangle; the upper one stays zero)", () => {
    const { sys, set } = scene(2);
    set.updateJacobian(0);
    const schur = new MassSchurComplement(set, sys);
    const S = csrToDense(schurValues(schur));
    const G = denseG(set);
    const ref = matmul(G, massSolveCols(denseMass(sys), transpose(G)));
    const m = set.numRows;
    let offDiagonal = 0;
    for (let i = 0; i < m; i++)
      for (let j = 0; j < m; j++) {
        const expected = j <= i ? ref[i][j] : 0;
        if (j < i) offDiagonal = Math.max(offDiagonal, Math.abs(ref[i][j]));
        expect(Math.abs(S[i * m + j] - expected)).toBeLessThan(1e-12 * (1 + Math.abs(expected)));
      }
    expect(offDiagonal).toBeGreaterThan(1e-3); // rows really couple
  });

  it("a fused load (S accumulated into the factor's storage) factors as factor(S), to the bit", () => {
    const { sys, set } = scene(2);
    set.updateJacobian(0);
    const schur = new MassSchurComplement(set, sys);
    const plain = new SemidefiniteLdlt();
    plain.factor(schurValues(schur));
    const fused = new SemidefiniteLdlt();
    for (let pass = 0; pass < 2; pass++) {
      // the second pass reuses the analysis and the composed slot map
      schur.updateInto(fused.beginLoad(schur.S), fused.loadSlots(schur.S));
      fused.factorLoaded();
      expect(fused.rank).toBe(plain.rank);
      expect(Array.from(fused.dropped)).toEqual(Array.from(plain.dropped));
      // a consistent right-hand side b = S y (S is singular: the scene's weld repeats rows)
      const m = set.numRows;
      const G = denseG(set);
      const S = matmul(G, massSolveCols(denseMass(sys), transpose(G)));
      const y = Array.from({ length: m }, (_, i) => Math.sin(i + 1));
      const b = Float64Array.from(S, (row) => row.reduce((acc, v, j) => acc + v * y[j], 0));
      const x1 = new Float64Array(m);
      const x2 = new Float64Array(m);
      plain.solve(b, x1);
      fused.solve(b, x2);
      expect(Array.from(x2)).toEqual(Array.from(x1));
      // and it solves S x = b (the dense G M⁻¹ Gᵀ)
      for (let i = 0; i < m; i++) {
        const sx = S[i].reduce((acc, v, j) => acc + v * x2[j], 0);
        expect(Math.abs(sx - b[i])).toBeLessThan(1e-9);
      }
    }
  });
});
