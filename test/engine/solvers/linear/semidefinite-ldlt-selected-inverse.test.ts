/**
 * SemidefiniteLdlt's selected inversion (Takahashi's recurrence): Z = S⁻¹ on the rows of
 * random sparse positive definite matrices with the supernodes of joints' rows, and of a
 * hanging chain's S = G M⁻¹ Gᵀ, against the dense inverse (ml-matrix, LU); with dependent
 * rows dropped, against the matrix `solve` applies, column by column.
 */
import { inverse, Matrix } from "ml-matrix";
import { describe, expect, it } from "vitest";
import { createActuation } from "../../../../src/engine/actuators/build";
import { createConstraints } from "../../../../src/engine/constraints/build";
import { ConstraintSet } from "../../../../src/engine/constraints/constraint-set";
import { projectionWorkspace } from "../../../../src/engine/constraints/project";
import { type CsrMatrix, csrFromTriplets, csrToDense } from "../../../../src/engine/math/csr";
import { massSolve } from "../../../../src/engine/model/body-system";
import { SemidefiniteLdlt } from "../../../../src/engine/solvers/linear/semidefinite-ldlt";
import { hangingChain } from "../../../support/models";
import { mulberry32 } from "../../../support/random";
import { systemOf } from "../../actuators/hinge";

/**
 * S = A Aᵀ + shift·I for random "joints" (1 … 5 rows with the same columns: one
 * supernode each) between random "bodies" of 6 columns, each joint touching one or two
 * bodies; entries stored where two rows share a body (S's pattern, as schur.ts's).
 */
function jointGram(seed: number, bodies: number, joints: number, shift: number): CsrMatrix {
  const r = mulberry32(seed);
  const rows: { cols: number[]; vals: number[] }[] = [];
  const touch: number[][] = [];
  for (let j = 0; j < joints; j++) {
    const a = Math.floor(r() * bodies);
    const b = r() < 0.8 ? Math.floor(r() * bodies) : a;
    const on = a === b ? [a] : [a, b];
    const n = 1 + Math.floor(r() * 5);
    for (let k = 0; k < n; k++) {
      const cols = on.flatMap((x) => [0, 1, 2, 3, 4, 5].map((c) => 6 * x + c));
      rows.push({ cols, vals: cols.map(() => 2 * r() - 1) });
      touch.push(on);
    }
  }
  const m = rows.length;
  const ri: number[] = [];
  const ci: number[] = [];
  const vi: number[] = [];
  for (let i = 0; i < m; i++)
    for (let j = 0; j < m; j++) {
      if (!touch[i].some((x) => touch[j].includes(x))) continue;
      let s = i === j ? shift : 0;
      rows[i].cols.forEach((c, p) => {
        const q = rows[j].cols.indexOf(c);
        if (q >= 0) s += rows[i].vals[p] * rows[j].vals[q];
      });
      ri.push(i);
      ci.push(j);
      vi.push(s);
    }
  return csrFromTriplets(m, m, ri, ci, vi);
}

/** Every entry of Z through inverseEntries (all rows; the recurrence off L's blocks). */
function allEntries(f: SemidefiniteLdlt, m: number): Float64Array {
  const z = new Float64Array(m * m);
  const rows = Int32Array.from({ length: m }, (_, i) => i);
  expect(f.inverseEntries(rows, m, z, 1 << 20)).toBe(true);
  return z;
}

function denseInverse(S: CsrMatrix): Float64Array {
  const m = S.rows;
  const d = csrToDense(S);
  const inv = inverse(
    new Matrix(Array.from({ length: m }, (_, i) => Array.from(d.subarray(i * m, (i + 1) * m)))),
  );
  return Float64Array.from({ length: m * m }, (_, p) => inv.get(Math.floor(p / m), p % m));
}

function maxAbs(x: Float64Array): number {
  return x.reduce((s, v) => Math.max(s, Math.abs(v)), 0);
}

/** max |a − b| / max |b|. */
function relativeError(a: Float64Array, b: Float64Array): number {
  let e = 0;
  for (let p = 0; p < a.length; p++) e = Math.max(e, Math.abs(a[p] - b[p]));
  return e / maxAbs(b);
}

describe("SemidefiniteLdlt.selectedInverse", () => {
  it("random joints' Gram matrices: Z = S⁻¹ entry by entry to 1e-12 of max |S⁻¹|, on S's pattern without the recurrence", () => {
    for (const seed of [1, 2, 3]) {
      const S = jointGram(seed, 10, 18, 0.5);
      const m = S.rows;
      const f = new SemidefiniteLdlt();
      f.factor(S);
      expect(f.rank).toBe(m);
      f.selectedInverse();
      const want = denseInverse(S);
      expect(relativeError(allEntries(f, m), want)).toBeLessThan(1e-12);
      // S's pattern lies in L's (a pair of rows sharing a body): read with no recurrence
      const out = new Float64Array(4);
      let worst = 0;
      let offPattern = 0;
      for (let i = 0; i < m; i++)
        for (let j = i + 1; j < m; j++) {
          const shared = S.colIdx.subarray(S.rowPtr[i], S.rowPtr[i + 1]).includes(j);
          const read = f.inverseEntries(Int32Array.of(i, j), 2, out, 0);
          if (shared) expect(read).toBe(true);
          if (read) worst = Math.max(worst, Math.abs(out[1] - want[i * m + j]));
          else offPattern++;
        }
      expect(worst).toBeLessThan(1e-12 * maxAbs(want));
      // entries off L's blocks, which the recurrence gave above
      expect(offPattern).toBeGreaterThan(0);
    }
  });

  it("dependent rows dropped: Z is the matrix solve applies (0 on the dropped rows)", () => {
    // no shift: more rows than columns, S = A Aᵀ singular; rows dropped
    const S = jointGram(7, 4, 12, 0);
    const m = S.rows;
    const f = new SemidefiniteLdlt();
    f.factor(S);
    expect(f.rank).toBeLessThan(m);
    f.selectedInverse();
    const got = allEntries(f, m);
    const col = new Float64Array(m);
    const want = new Float64Array(m * m);
    for (let k = 0; k < m; k++) {
      col.fill(0);
      col[k] = 1;
      f.solve(col, col);
      for (let i = 0; i < m; i++) want[i * m + k] = col[i];
    }
    expect(relativeError(got, want)).toBeLessThan(1e-12);
    for (let k = 0; k < m; k++) if (f.dropped[k]) expect(got[k * m + k]).toBe(0);
  });

  it("a hanging chain's S = G M⁻¹ Gᵀ (revolute joints, 5 rows each): Z = S⁻¹ to 1e-12", () => {
    const chain = hangingChain({
      joints: Array.from({ length: 12 }, () => ({
        type: "revolute" as const,
        axis: [0, 1, 0] as const,
      })),
      mass: (i) => 1 + 0.1 * i,
      inertia: [0.1, 0.2, 0.3],
    });
    const { system, spec } = systemOf({ gravity: [0, 0, 0], ...chain });
    const actuation = createActuation(spec.joints, [], system);
    const set = new ConstraintSet(
      system,
      createConstraints(spec.joints, [], system, actuation.coordinates),
    );
    const ws = projectionWorkspace(set);
    ws.factorAt(0);
    const m = set.numRows;
    // S column by column, G M⁻¹ Gᵀ e_k, independently of schur.ts
    const e = new Float64Array(m);
    const f = new Float64Array(system.numDofs);
    const v = new Float64Array(system.numDofs);
    const col = new Float64Array(m);
    const ri: number[] = [];
    const ci: number[] = [];
    const vi: number[] = [];
    for (let k = 0; k < m; k++) {
      e.fill(0);
      e[k] = 1;
      set.multiplyTranspose(e, f);
      massSolve(system, f, v);
      set.multiply(v, col);
      for (let i = 0; i < m; i++) {
        ri.push(i);
        ci.push(k);
        vi.push(col[i]);
      }
    }
    const want = denseInverse(csrFromTriplets(m, m, ri, ci, vi));
    ws.ldlt.selectedInverse();
    expect(relativeError(allEntries(ws.ldlt, m), want)).toBeLessThan(1e-12);
  });
});
