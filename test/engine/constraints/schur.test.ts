/**
 * MassSchurComplement: the mass-weighted Gram matrix S = G M⁻¹ Gᵀ of a scene of every
 * joint type (dense-scene.ts) against the dense product computed here (dense M from masses
 * and world inertias, M⁻¹Gᵀ by Gaussian elimination), and its fused load into the
 * semidefinite LDLᵀ (the factorization itself: test/engine/solvers/linear/
 * semidefinite-ldlt.test.ts).
 */
import { describe, expect, it } from "vitest";
import { createConstraints } from "../../../src/engine/constraints/build";
import { ConstraintSet } from "../../../src/engine/constraints/constraint-set";
import { MassSchurComplement } from "../../../src/engine/constraints/schur";
import { csrToDense } from "../../../src/engine/math/csr";
import { addPositionIncrement, BodyKind } from "../../../src/engine/model/body-system";
import { SemidefiniteLdlt } from "../../../src/engine/solvers/linear/semidefinite-ldlt";
import { mulberry32 } from "../../support/random";
import {
  denseG,
  denseMass,
  massSolveCols,
  matmul,
  scene,
  schurValues,
  transpose,
} from "./dense-scene";
import { randomBody, system } from "./helpers";

/**
 * A chain of spherical joints from the ground, R1–R2–R3–P1: the rigid links carry six
 * rows each (the unrolled paths of updateInto and updateMixed), the particle three.
 */
function chain(seed: number) {
  const r = mulberry32(seed);
  const sys = system([
    randomBody(r, "R1", "rigid"),
    randomBody(r, "R2", "rigid"),
    randomBody(r, "R3", "rigid"),
    randomBody(r, "P1", "particle"),
  ]);
  const ball = (id: string, a: string, b: string) => ({
    id,
    type: "spherical" as const,
    a: { body: a, point: [0.3 * r() - 0.1, 0.2 * r(), 0.25] as [number, number, number] },
    b: { body: b, point: [-0.2, 0.1 * r(), 0.3 * r() - 0.2] as [number, number, number] },
  });
  const joints = [
    ball("j0", "ground", "R1"),
    ball("j1", "R1", "R2"),
    ball("j2", "R2", "R3"),
    ball("j3", "R3", "P1"),
  ];
  const set = new ConstraintSet(sys, createConstraints(joints, [], sys));
  return { sys, set, r };
}

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

  it("a chain's six-row links: updateInto's S = G M⁻¹ Gᵀ against the dense product", () => {
    const { sys, set } = chain(7);
    set.updateJacobian(0);
    const schur = new MassSchurComplement(set, sys);
    // rows per body: six on each rigid link, three on the particle
    const rows = Array.from(
      { length: sys.numBodies },
      (_, b) =>
        Array.from({ length: set.numRows }, (_, r) => r).filter((r) =>
          Array.from(set.rowBody.subarray(4 * r, 4 * r + 4)).includes(b),
        ).length,
    );
    expect(rows).toEqual([6, 6, 6, 3]);
    const S = csrToDense(schurValues(schur));
    const G = denseG(set);
    const ref = matmul(G, massSolveCols(denseMass(sys), transpose(G)));
    const m = set.numRows;
    for (let i = 0; i < m; i++)
      for (let j = 0; j < m; j++) {
        const expected = j <= i ? ref[i][j] : 0;
        expect(Math.abs(S[i * m + j] - expected)).toBeLessThan(1e-12 * (1 + Math.abs(expected)));
      }
  });

  for (const [blocks, split] of [
    [false, false],
    [true, false],
    [true, true],
  ])
    it(`updateMixed: S = G V with V = s W⁻¹ M M_t⁻¹ G_tᵀ against the dense product (${blocks ? (split ? "decoupled block" : "block") : "mass"} W)`, () => {
      const { sys, set, r } = chain(blocks ? (split ? 10 : 8) : 9);
      set.updateJacobian(0);
      const schur = new MassSchurComplement(set, sys);
      // the start configuration's rows and inverse inertias, then the bodies moved
      const startG = Float64Array.from(set.G.values);
      const startInertiaInv = Float64Array.from(sys.inertiaWorldInv);
      const Gt = denseG(set);
      const MtInvGt = massSolveCols(denseMass(sys), transpose(Gt));
      addPositionIncrement(
        sys,
        Float64Array.from({ length: sys.numDofs }, () => 0.05 * (2 * r() - 1)),
        1,
      );
      set.updateJacobian(0);
      const n = sys.numDofs;
      // W_b⁻¹: random 6×6 (3×3 for the particle) blocks, or none (W = s M: V = s M_t⁻¹ G_tᵀ)
      const offset = new Int32Array(sys.numBodies);
      const sizes = Array.from({ length: sys.numBodies }, (_, b) =>
        sys.kind[b] === BodyKind.RIGID ? 6 : 3,
      );
      let total = 0;
      sizes.forEach((k, b) => {
        offset[b] = total;
        total += k * k;
      });
      const inverse = Float64Array.from({ length: total }, () => 2 * r() - 1);
      // decoupled (split): the rigid bodies' W_b⁻¹ two 3 × 3 blocks, zero elsewhere
      const decoupled = Uint8Array.from(sizes, (k) => (split && k === 6 ? 1 : 0));
      for (let b = 0; b < sys.numBodies; b++)
        if (decoupled[b] === 1)
          for (let i = 0; i < 6; i++)
            for (let j = 0; j < 6; j++) if (i < 3 !== j < 3) inverse[offset[b] + 6 * i + j] = 0;
      const Winv = Array.from({ length: n }, () => new Array<number>(n).fill(0));
      for (let b = 0; b < sys.numBodies; b++) {
        const d = sys.dofOffset[b];
        const k = sizes[b];
        for (let i = 0; i < k; i++)
          for (let j = 0; j < k; j++)
            Winv[d + i][d + j] = blocks ? inverse[offset[b] + k * i + j] : i === j ? 1 : 0;
      }
      const scale = 0.7;
      const M = denseMass(sys);
      const V = blocks
        ? matmul(matmul(Winv, M), MtInvGt).map((row) => row.map((v) => scale * v))
        : MtInvGt.map((row) => row.map((v) => scale * v));
      const ref = matmul(denseG(set), V);
      const out = new Float64Array(schur.S.values.length);
      const slot = Int32Array.from(out, (_, p) => p);
      const vCols = new Float64Array(set.G.values.length);
      schur.updateMixed(
        startG,
        startInertiaInv,
        scale,
        blocks ? inverse : null,
        offset,
        decoupled,
        vCols,
        out,
        slot,
      );
      const S = csrToDense({ ...schur.S, values: out } as typeof schur.S);
      const m = set.numRows;
      let coupled = 0;
      for (let i = 0; i < m; i++)
        for (let j = 0; j < m; j++) {
          if (j !== i) coupled = Math.max(coupled, Math.abs(ref[i][j] - ref[j][i]));
          expect(Math.abs(S[i * m + j] - ref[i][j])).toBeLessThan(
            1e-12 * (1 + Math.abs(ref[i][j])),
          );
        }
      if (blocks) expect(coupled).toBeGreaterThan(1e-3); // really nonsymmetric
      // V's columns in G's layout: G_t's pattern, V's entries
      for (let row = 0; row < m; row++)
        for (let p = set.G.rowPtr[row]; p < set.G.rowPtr[row + 1]; p++)
          expect(vCols[p]).toBeCloseTo(V[set.G.colIdx[p]][row], 12);
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
