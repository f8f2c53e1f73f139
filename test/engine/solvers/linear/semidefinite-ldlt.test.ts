/**
 * SemidefiniteLdlt (the factorization of S = G M⁻¹ Gᵀ with dependent rows dropped) on
 * Gram matrices built here from chosen rows (dependent rows placed on purpose), against
 * dense Gaussian elimination (test/support/dense-solve.ts) and S x = b checked
 * entry by entry.
 */
import { describe, expect, it } from "vitest";
import { type CsrMatrix, csrFromTriplets, csrToDense } from "../../../../src/engine/math/csr";
import { SemidefiniteLdlt } from "../../../../src/engine/solvers/linear/semidefinite-ldlt";
import { solveDense } from "../../../support/dense-solve";
import { mulberry32 } from "../../../support/random";

describe("SemidefiniteLdlt", () => {
  function gram(rows: number[][]) {
    const m = rows.length;
    const ri: number[] = [];
    const ci: number[] = [];
    const vi: number[] = [];
    for (let i = 0; i < m; i++)
      for (let j = 0; j < m; j++) {
        const v = rows[i].reduce((s, x, k) => s + x * rows[j][k], 0);
        ri.push(i);
        ci.push(j);
        vi.push(v);
      }
    return csrFromTriplets(m, m, ri, ci, vi);
  }

  /** For b = S y in range(S): S x = b to tol (relative) and x = 0 on the dropped rows. */
  function expectConsistentSolve(f: SemidefiniteLdlt, S: CsrMatrix, r: () => number, tol: number) {
    const Sd = csrToDense(S);
    const m = S.rows;
    const y = Array.from({ length: m }, () => r());
    const b = Float64Array.from({ length: m }, (_, i) =>
      y.reduce((s, yj, j) => s + Sd[i * m + j] * yj, 0),
    );
    const x = new Float64Array(m);
    f.solve(b, x);
    for (let i = 0; i < m; i++) {
      let sx = 0;
      for (let j = 0; j < m; j++) sx += Sd[i * m + j] * x[j];
      expect(Math.abs(sx - b[i])).toBeLessThan(tol * (1 + Math.abs(b[i])));
      if (f.dropped[i]) expect(x[i]).toBe(0);
    }
  }

  it("solveUpper: L⁻ᵀ e_k is 1 at k, 0 after it, and its Aᵀ-residual squared is the pivot d_k", () => {
    // rows: a0, a1, a0 + c·a1 + 1e-3·a2 (kept, pivot ~1e-6), a3; S = A Aᵀ
    const r = mulberry32(3);
    const a = Array.from({ length: 4 }, () => Array.from({ length: 6 }, () => 2 * r() - 1));
    const c = 0.3;
    const rows = [a[0], a[1], a[0].map((v, i) => v + c * a[1][i] + 1e-3 * a[2][i]), a[3]];
    const S = gram(rows);
    const f = new SemidefiniteLdlt();
    f.factor(S);
    const Sd = csrToDense(S);
    expect(Array.from(f.dropped)).toEqual([0, 0, 0, 0]);
    expect(f.relativePivot(2)).toBeLessThan(1e-5);
    for (let k = 0; k < 4; k++) {
      const u = new Float64Array(4);
      u[k] = 1;
      f.solveUpper(u);
      for (let j = k + 1; j < 4; j++) expect(u[j]).toBe(0);
      expect(u[k]).toBe(1);
      // |Aᵀu|² against d_k = relativePivot·s_kk
      const res = rows[0].map((_, i) => rows.reduce((s, row, j) => s + row[i] * u[j], 0));
      const r2 = res.reduce((s, x) => s + x * x, 0);
      expect(Math.abs(r2 - f.relativePivot(k) * Sd[k * 4 + k])).toBeLessThan(1e-9 * Sd[k * 4 + k]);
    }
    // row 2 is a0 + c a1 to 1e-3: u ≈ (−1, −c, 1, 0)
    const u = new Float64Array(4);
    u[2] = 1;
    f.solveUpper(u);
    expect(u[0]).toBeCloseTo(-1, 2);
    expect(u[1]).toBeCloseTo(-c, 2);
  });

  it("drops a dependent row whose own share of the null vector is small (its pivot round-off over that share²)", () => {
    // rows a0, a1, a0 + a1 + c a2 (kept: relative pivot ~c²) and a2 = (r2 − r0 − r1)/c,
    // dependent with the share c of the null vector (−1, −1, 1, −c)/|·|: its computed pivot
    // is the elimination's round-off over c², ~1e-8 > 1e-10 s_kk (the three-crank
    // parallelogram's vertical dependent row near flat, share sin θ: screenRoundOff)
    const r = mulberry32(11);
    const a = Array.from({ length: 3 }, () => Array.from({ length: 6 }, () => 2 * r() - 1));
    const c = 1e-4;
    const rows = [a[0], a[1], a[0].map((v, i) => v + a[1][i] + c * a[2][i]), a[2]];
    const S = gram(rows);
    for (const symmetric of [true, false]) {
      const f = new SemidefiniteLdlt();
      f.factor(S, symmetric);
      expect(Array.from(f.dropped)).toEqual([0, 0, 0, 1]);
      expect(f.rank).toBe(3);
      expect(f.relativePivot(2)).toBeGreaterThan(1e-10);
      expect(f.relativePivot(2)).toBeLessThan(1e-6);
      expectConsistentSolve(f, S, r, 1e-6);
      // the row is dropped on its own merit only: refactored, the next matrix of the same
      // pattern with a definite fourth row keeps it
      const definite = gram([a[0], a[1], a[2], [1, 0, 0, 0, 0, 1]]);
      f.factor(definite, symmetric);
      expect(Array.from(f.dropped)).toEqual([0, 0, 0, 0]);
    }
  });

  it("drops the later row of each dependent set and solves consistent systems exactly", () => {
    const r = mulberry32(8);
    const base = Array.from({ length: 5 }, () => Array.from({ length: 7 }, () => 2 * r() - 1));
    // rows: b0, b1, b0+b1, b2, 2·b2, b3, b4, b1−b3
    const add = (x: number[], y: number[], s = 1) => x.map((v, i) => v + s * y[i]);
    const rows = [
      base[0],
      base[1],
      add(base[0], base[1]),
      base[2],
      base[2].map((v) => 2 * v),
      base[3],
      base[4],
      add(base[1], base[3], -1),
    ];
    const S = gram(rows);
    const f = new SemidefiniteLdlt();
    f.factor(S);
    expect(Array.from(f.dropped)).toEqual([0, 0, 1, 0, 1, 0, 0, 1]);
    expect(f.rank).toBe(5);
    expectConsistentSolve(f, S, r, 1e-12);
  });

  /** S = A B Aᵀ with B = I + skew (nonsymmetric, positive definite symmetric part), only
   * the structural nonzeros stored (a symmetric pattern). */
  function skewGram(rows: number[][], skew: number[][]) {
    const m = rows.length;
    const n = rows[0].length;
    const B = (k: number, l: number) => (k === l ? 1 : 0) + skew[k][l] - skew[l][k];
    const ri: number[] = [];
    const ci: number[] = [];
    const vi: number[] = [];
    for (let i = 0; i < m; i++)
      for (let j = 0; j < m; j++) {
        let v = 0;
        let structural = false;
        for (let k = 0; k < n; k++)
          for (let l = 0; l < n; l++) {
            if (rows[i][k] === 0 || rows[j][l] === 0) continue;
            structural = true;
            v += rows[i][k] * B(k, l) * rows[j][l];
          }
        if (!structural) continue;
        ri.push(i);
        ci.push(j);
        vi.push(v);
      }
    return csrFromTriplets(m, m, ri, ci, vi);
  }

  /** Rows supported on 3 consecutive columns: a banded, chain-like pattern. */
  function bandRows(r: () => number, m: number) {
    return Array.from({ length: m }, (_, i) =>
      Array.from({ length: m + 2 }, (_, k) => (k >= i && k < i + 3 ? 2 * r() - 1 : 0)),
    );
  }

  it("unsymmetric values on a symmetric pattern: S = L D U matches a dense solve", () => {
    const r = mulberry32(10);
    const m = 12;
    const rows = bandRows(r, m);
    const skew = Array.from({ length: m + 2 }, () =>
      Array.from({ length: m + 2 }, () => 0.3 * r()),
    );
    const S = skewGram(rows, skew);
    const Sd = csrToDense(S);
    expect(Math.abs(Sd[1] - Sd[m])).toBeGreaterThan(1e-3); // really unsymmetric
    const f = new SemidefiniteLdlt();
    f.factor(S, false);
    expect(f.rank).toBe(m);
    const b = Float64Array.from({ length: m }, () => 2 * r() - 1);
    const x = new Float64Array(m);
    f.solve(b, x);
    const ref = solveDense(
      Array.from({ length: m }, (_, i) => Array.from(Sd.subarray(m * i, m * i + m))),
      Array.from(b),
    );
    const scale = Math.max(...ref.map(Math.abs));
    for (let i = 0; i < m; i++) expect(Math.abs(x[i] - ref[i])).toBeLessThan(1e-10 * scale);
    // the same factorization object then factors a symmetric matrix (U = Lᵀ again)
    const sym = gram(rows);
    f.factor(sym);
    f.solve(b, x);
    const Sy = csrToDense(sym);
    const refSym = solveDense(
      Array.from({ length: m }, (_, i) => Array.from(Sy.subarray(m * i, m * i + m))),
      Array.from(b),
    );
    const scaleSym = Math.max(...refSym.map(Math.abs));
    for (let i = 0; i < m; i++) expect(Math.abs(x[i] - refSym[i])).toBeLessThan(1e-10 * scaleSym);
  });

  it("unsymmetric: drops dependent rows and solves consistent systems exactly", () => {
    const r = mulberry32(11);
    const base = Array.from({ length: 4 }, () => Array.from({ length: 6 }, () => 2 * r() - 1));
    const rows = [base[0], base[1], base[0].map((v, i) => v - 2 * base[1][i]), base[2], base[3]];
    const skew = Array.from({ length: 6 }, () => Array.from({ length: 6 }, () => 0.3 * r()));
    const S = skewGram(rows, skew);
    const f = new SemidefiniteLdlt();
    f.factor(S, false);
    expect(Array.from(f.dropped)).toEqual([0, 0, 1, 0, 0]);
    expect(f.dropped[2]).toBe(1);
    expectConsistentSolve(f, S, r, 1e-11);
  });

  /**
   * Joint-like rows: 3 per joint on the 6 columns of each of its two bodies (a loop
   * 0–1–2–3–0, branches 1–4–5, so the factor fills in), a joint repeating 2–3 with rows
   * that combine the first one's, and a 1-row drive on 4–5: supernodes of 3 rows whose
   * block rows update each other.
   */
  function jointRows(r: () => number) {
    const cols = 36;
    const joint = (a: number, b: number, k = 3) =>
      Array.from({ length: k }, () =>
        Array.from({ length: cols }, (_, c) =>
          Math.floor(c / 6) === a || Math.floor(c / 6) === b ? 2 * r() - 1 : 0,
        ),
      );
    const rows = [
      ...joint(0, 1),
      ...joint(1, 2),
      ...joint(2, 3),
      ...joint(3, 0),
      ...joint(1, 4),
      ...joint(4, 5),
    ];
    const j23 = rows.slice(6, 9);
    const combo = (w: number[]) =>
      j23[0].map((_, c) => w[0] * j23[0][c] + w[1] * j23[1][c] + w[2] * j23[2][c]);
    rows.push(combo([1, 2, 0]), combo([0, 1, -1]), combo([3, 0, 1]), ...joint(4, 5, 1));
    return rows;
  }

  /**
   * S = G W Gᵀ for rows on 6-column bodies, W = blockdiag(I + skew_b) (per body, as a
   * gyroscopic W⁻¹; zero skew: symmetric), entries stored where two rows share a body.
   */
  function bodyGram(rows: number[][], skew: number) {
    const r = mulberry32(21);
    const bodies = rows[0].length / 6;
    const w = Array.from({ length: bodies }, () =>
      Array.from({ length: 6 }, (_, k) =>
        Array.from({ length: 6 }, (_, l) => (k === l ? 1 : 0) + skew * (2 * r() - 1)),
      ),
    );
    const on = (row: number[], b: number) => row.slice(6 * b, 6 * b + 6).some((x) => x !== 0);
    const ri: number[] = [];
    const ci: number[] = [];
    const vi: number[] = [];
    rows.forEach((gi, i) => {
      rows.forEach((gj, j) => {
        let v = 0;
        let structural = false;
        for (let b = 0; b < bodies; b++) {
          if (!on(gi, b) || !on(gj, b)) continue;
          structural = true;
          for (let k = 0; k < 6; k++)
            for (let l = 0; l < 6; l++) v += gi[6 * b + k] * w[b][k][l] * gj[6 * b + l];
        }
        if (!structural) return;
        ri.push(i);
        ci.push(j);
        vi.push(v);
      });
    });
    return csrFromTriplets(rows.length, rows.length, ri, ci, vi);
  }

  for (const symmetric of [true, false])
    it(`joint blocks with fill: drops the repeated joint, solves as dense (symmetric ${symmetric})`, () => {
      const r = mulberry32(symmetric ? 12 : 13);
      const rows = jointRows(r);
      const S = bodyGram(rows, symmetric ? 0 : 0.3);
      const f = new SemidefiniteLdlt();
      f.factor(S, symmetric);
      const expected = new Array<number>(rows.length).fill(0);
      expected[18] = expected[19] = expected[20] = 1;
      expect(Array.from(f.dropped)).toEqual(expected);
      expect(f.rank).toBe(rows.length - 3);
      expectConsistentSolve(f, S, r, 1e-10);
      // and the definite part alone (the repeated joint left out) as a dense solve
      const kept = rows.filter((_, i) => expected[i] === 0);
      const Sk = bodyGram(kept, symmetric ? 0 : 0.3);
      f.factor(Sk, symmetric);
      expect(f.rank).toBe(kept.length);
      const m = kept.length;
      const b = Float64Array.from({ length: m }, () => 2 * r() - 1);
      const x = new Float64Array(m);
      f.solve(b, x);
      const Sd = csrToDense(Sk);
      const ref = solveDense(
        Array.from({ length: m }, (_, i) => Array.from(Sd.subarray(m * i, m * i + m))),
        Array.from(b),
      );
      const scale = Math.max(...ref.map(Math.abs));
      for (let i = 0; i < m; i++) expect(Math.abs(x[i] - ref[i])).toBeLessThan(1e-9 * scale);
    });

  it("a dependent row inside a 3-row joint block (symmetric: the unrolled block rows)", () => {
    // joint (1, 2)'s third row is the sum of its first two: that row alone is dropped,
    // along with the repeated joint at the end, and consistent systems still solve
    const r = mulberry32(14);
    const rows = jointRows(r);
    rows[5] = rows[3].map((v, c) => v + rows[4][c]);
    const S = bodyGram(rows, 0);
    const f = new SemidefiniteLdlt();
    f.factor(S);
    const expected = new Array<number>(rows.length).fill(0);
    expected[5] = expected[18] = expected[19] = expected[20] = 1;
    expect(Array.from(f.dropped)).toEqual(expected);
    expect(f.rank).toBe(rows.length - 4);
    expectConsistentSolve(f, S, r, 1e-10);
  });

  it("a dependent row inside a 3-row joint block (unsymmetric: the unrolled block rows)", () => {
    const r = mulberry32(15);
    const rows = jointRows(r);
    rows[5] = rows[3].map((v, c) => v - 2 * rows[4][c]);
    const S = bodyGram(rows, 0.3);
    const f = new SemidefiniteLdlt();
    f.factor(S, false);
    const expected = new Array<number>(rows.length).fill(0);
    expected[5] = expected[18] = expected[19] = expected[20] = 1;
    expect(Array.from(f.dropped)).toEqual(expected);
    expect(f.rank).toBe(rows.length - 4);
    expectConsistentSolve(f, S, r, 1e-10);
  });

  for (const symmetric of [true, false])
    it(`the unrolled 3-row block rows give the general recurrence's solutions to the bit (symmetric ${symmetric})`, () => {
      const r = mulberry32(symmetric ? 41 : 42);
      const rows = jointRows(r);
      rows[5] = rows[3].map((v, c) => v + rows[4][c]);
      const S = bodyGram(rows, symmetric ? 0 : 0.3);
      const unrolled = new SemidefiniteLdlt();
      unrolled.factor(S, symmetric);
      const general = new SemidefiniteLdlt();
      general.factor(S, symmetric);
      // the general loops for every block row (factorRow3 and its unsymmetric twin off)
      const flags = (general as unknown as { row3: Uint8Array }).row3;
      expect(flags.some((x) => x === 1)).toBe(true);
      flags.fill(0);
      general.factor(S, symmetric);
      expect(Array.from(general.dropped)).toEqual(Array.from(unrolled.dropped));
      for (let trial = 0; trial < 3; trial++) {
        const b = Float64Array.from({ length: S.rows }, () => 2 * r() - 1);
        const x = new Float64Array(S.rows);
        const y = new Float64Array(S.rows);
        unrolled.solve(b, x);
        general.solve(b, y);
        for (let i = 0; i < S.rows; i++) expect(x[i] + 0).toBe(y[i] + 0);
      }
    });

  it("an unsymmetric fused load (both triangles into the factor's storage) factors as factor(a, false), to the bit", () => {
    const r = mulberry32(43);
    const rows = jointRows(r);
    const S = bodyGram(rows, 0.3);
    const direct = new SemidefiniteLdlt();
    direct.factor(S, false);
    const fused = new SemidefiniteLdlt();
    for (let pass = 0; pass < 2; pass++) {
      // (the second pass on a storage that holds the first factorization)
      const store = fused.beginLoadUnsymmetric(S);
      const slot = fused.loadSlotsUnsymmetric(S);
      for (let p = 0; p < S.values.length; p++) store[slot[p]] += S.values[p];
      fused.factorLoadedUnsymmetric();
      expect(Array.from(fused.dropped)).toEqual(Array.from(direct.dropped));
      const b = Float64Array.from({ length: S.rows }, () => 2 * r() - 1);
      const x = new Float64Array(S.rows);
      const y = new Float64Array(S.rows);
      direct.solve(b, x);
      fused.solve(b, y);
      for (let i = 0; i < S.rows; i++) expect(y[i]).toBe(x[i]);
    }
    expectConsistentSolve(fused, S, r, 1e-10);
  });

  for (const symmetric of [true, false])
    it(`refactoring one pattern after dropped rows reloads every entry (symmetric ${symmetric})`, () => {
      // the factorization keeps its symbolic analysis for the same pattern and reloads only
      // S's entries and the fill-in; the dropped rows' cleared entries must come back
      const r = mulberry32(symmetric ? 31 : 32);
      const rows = jointRows(r);
      const S = bodyGram(rows, symmetric ? 0 : 0.3);
      const f = new SemidefiniteLdlt();
      f.factor(S, symmetric);
      expect(f.rank).toBe(rows.length - 3);
      for (let i = 0; i < S.rows; i++)
        for (let p = S.rowPtr[i]; p < S.rowPtr[i + 1]; p++) if (S.colIdx[p] === i) S.values[p] += 1;
      f.factor(S, symmetric);
      expect(f.rank).toBe(rows.length);
      expectConsistentSolve(f, S, r, 1e-10);
    });

  it("matches a dense solve when definite", () => {
    const r = mulberry32(9);
    const rows = Array.from({ length: 6 }, () => Array.from({ length: 9 }, () => 2 * r() - 1));
    const S = gram(rows);
    const f = new SemidefiniteLdlt();
    f.factor(S);
    expect(f.rank).toBe(6);
    const b = Float64Array.from({ length: 6 }, () => r());
    const x = new Float64Array(6);
    f.solve(b, x);
    const Sd = csrToDense(S);
    const ref = solveDense(
      Array.from({ length: 6 }, (_, i) => Array.from(Sd.subarray(6 * i, 6 * i + 6))),
      Array.from(b),
    );
    for (let i = 0; i < 6; i++) expect(x[i]).toBeCloseTo(ref[i], 10);
  });
});
