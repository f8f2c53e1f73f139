/**
 * The Krylov preconditioners z = M⁻¹ r: the rᵀz they return, Jacobi's diagonal (signed,
 * absolute, zero and missing diagonals), block Jacobi against block inverses computed
 * with ml-matrix (and its singular-block fallback), IC(0) and ILU(0) against exact dense
 * solves on tridiagonal matrices (whose factors have no fill, so the incomplete
 * factorizations are exact), IC(0)'s diagonal shift and ILU(0)'s pivot replacement.
 */
import { inverse, Matrix } from "ml-matrix";
import { describe, expect, it } from "vitest";
import { SparseBlockMatrix } from "../../../../src/engine/math/block-matrix";
import { type CsrMatrix, csrFromTriplets } from "../../../../src/engine/math/csr";
import {
  BlockJacobiPreconditioner,
  Ic0Preconditioner,
  IdentityPreconditioner,
  Ilu0Preconditioner,
  JacobiPreconditioner,
  type Preconditioner,
} from "../../../../src/engine/solvers/linear/preconditioners";
import { mulberry32 } from "../../../support/random";
import {
  BODY_BLOCK_SIZES,
  denseLuReference,
  randomSpd,
  randomSpdBodyBlocks,
  randomVector,
  relativeError,
  Triplets,
} from "./helpers";

/** rᵀz written out. */
function dotRz(r: Float64Array, z: Float64Array): number {
  let s = 0;
  for (let i = 0; i < r.length; i++) s += r[i] * z[i];
  return s;
}

/** Tridiagonal n×n with the given sub-, main and super-diagonal value generators. */
function tridiagonal(n: number, lower: () => number, diag: () => number, upper: () => number) {
  const t = new Triplets();
  for (let i = 0; i < n; i++) {
    if (i > 0) t.add(i, i - 1, lower());
    t.add(i, i, diag());
    if (i < n - 1) t.add(i, i + 1, upper());
  }
  return t.toCsr(n, n);
}

describe("every preconditioner", () => {
  it("apply returns rᵀz with z = M⁻¹r, positive for an SPD A (identity, Jacobi, IC(0), ILU(0))", () => {
    const n = 60;
    const a = randomSpd(n, 6, 91);
    const r = randomVector(n, 92);
    const preconditioners: Preconditioner[] = [new IdentityPreconditioner(n)];
    const jacobi = new JacobiPreconditioner(n);
    jacobi.updateFromCsr(a);
    const ic0 = new Ic0Preconditioner();
    ic0.update(a);
    const ilu0 = new Ilu0Preconditioner();
    ilu0.update(a);
    preconditioners.push(jacobi, ic0, ilu0);
    for (const p of preconditioners) {
      const z = new Float64Array(n);
      const rz = p.apply(r, z);
      expect(rz).toBeCloseTo(dotRz(r, z), 12);
      expect(rz).toBeGreaterThan(0); // M SPD
    }
  });
});

describe("JacobiPreconditioner", () => {
  it("z_i = r_i / a_ii (duplicates summed), |a_ii| when absolute, 1 for a zero diagonal", () => {
    // diag = (2, −4, 0 (not stored), 3 + 1 (a duplicate entry))
    const a = csrFromTriplets(4, 4, [0, 1, 0, 3, 3, 2], [0, 1, 1, 3, 3, 0], [2, -4, 5, 3, 1, 7]);
    const r = Float64Array.of(1, 2, 3, 4);
    const z = new Float64Array(4);
    const signed = new JacobiPreconditioner(4);
    signed.updateFromCsr(a);
    signed.apply(r, z);
    expect(Array.from(z)).toEqual([0.5, -0.5, 3, 1]);
    const absolute = new JacobiPreconditioner(4, true);
    absolute.updateFromCsr(a);
    expect(absolute.apply(r, z)).toBe(0.5 + 1 + 9 + 4);
    expect(Array.from(z)).toEqual([0.5, 0.5, 3, 1]);
  });

  it("reads an operator's diagonal(), and is the identity for an operator without one", () => {
    const p = new JacobiPreconditioner(3);
    const work = new Float64Array(3);
    const apply = (x: Float64Array, out: Float64Array) => out.set(x);
    p.updateFromOperator({ n: 3, apply, diagonal: (out) => out.set([4, 5, 8]) }, work);
    expect(Array.from(p.invDiag)).toEqual([0.25, 0.2, 0.125]);
    p.updateFromOperator({ n: 3, apply }, work);
    expect(Array.from(p.invDiag)).toEqual([1, 1, 1]);
  });
});

describe("BlockJacobiPreconditioner", () => {
  it("applies the inverse of every diagonal block (3×3 and 6×6)", () => {
    const { m, dense } = randomSpdBodyBlocks(3);
    const p = new BlockJacobiPreconditioner();
    p.update(m);
    expect(p.singularBlocks).toBe(0);
    const r = mulberry32(9);
    const x = Float64Array.from({ length: m.size }, () => 2 * r() - 1);
    const z = new Float64Array(m.size);
    p.apply(x, z);
    for (let b = 0; b < BODY_BLOCK_SIZES.length; b++) {
      const o = m.blockOffset[b];
      const w = BODY_BLOCK_SIZES[b];
      const block = dense.subMatrix(o, o + w - 1, o, o + w - 1);
      const ref = inverse(block).mmul(Matrix.columnVector(Array.from(x.subarray(o, o + w))));
      for (let i = 0; i < w; i++) expect(z[o + i]).toBeCloseTo(ref.get(i, 0), 12);
    }
  });

  it("returns rᵀz with z = M⁻¹r", () => {
    const { m } = randomSpdBodyBlocks(4);
    const p = new BlockJacobiPreconditioner();
    p.update(m);
    const r = mulberry32(11);
    const x = Float64Array.from({ length: m.size }, () => 2 * r() - 1);
    const z = new Float64Array(m.size);
    expect(p.apply(x, z)).toBeCloseTo(dotRz(x, z), 13);
  });

  it("falls back to the inverse diagonal for a singular block", () => {
    const m = new SparseBlockMatrix([3]);
    m.finalize();
    // rank 1: u uᵀ with u = (1, 2, 3), diagonal (1, 4, 9)
    const u = [1, 2, 3];
    for (let i = 0; i < 3; i++) for (let j = 0; j < 3; j++) m.addEntry(0, 0, i, j, u[i] * u[j]);
    const p = new BlockJacobiPreconditioner();
    p.update(m);
    expect(p.singularBlocks).toBe(1);
    const z = new Float64Array(3);
    p.apply(Float64Array.of(1, 1, 1), z);
    expect(Array.from(z)).toEqual([1, 1 / 4, 1 / 9]);
  });
});

describe("Ic0Preconditioner", () => {
  it("is the exact Cholesky factorization of an SPD tridiagonal matrix (no fill): z = A⁻¹ r", () => {
    const r = mulberry32(5);
    const n = 30;
    // symmetric: the same generator draws a_{i,i−1} and a_{i−1,i} in one call each row
    const off = Array.from({ length: n }, () => 2 * r() - 1);
    let iLow = 1;
    let iUp = 0;
    const a = tridiagonal(
      n,
      () => off[iLow++],
      () => 2.5 + r(),
      () => off[++iUp],
    );
    const p = new Ic0Preconditioner();
    p.update(a);
    expect(p.shift).toBe(0);
    const b = randomVector(n, 6);
    const z = new Float64Array(n);
    p.apply(b, z);
    expect(relativeError(z, denseLuReference(a, b))).toBeLessThan(1e-13);
  });

  it("shifts the diagonal (A + α diag A) when a pivot is not positive, and stays SPD", () => {
    // [1 3; 3 1] is indefinite: the second pivot 1 − 9 < 0 without a shift.
    const a = csrFromTriplets(2, 2, [0, 0, 1, 1], [0, 1, 0, 1], [1, 3, 3, 1]);
    const p = new Ic0Preconditioner();
    p.update(a);
    // the pivot (1 + α) − 9/(1 + α) is first positive on the sequence 0, 1e-3, 1e-2, …
    // at α = 10 (α > 2 needed)
    expect(p.shift).toBe(10);
    // M = L Lᵀ = A + 10·diag(A) = [11 3; 3 11], det 112: z = M⁻¹ r in closed form
    const z = new Float64Array(2);
    const rz = p.apply(Float64Array.of(1, 0), z);
    expect(z[0]).toBeCloseTo(11 / 112, 15);
    expect(z[1]).toBeCloseTo(-3 / 112, 15);
    expect(rz).toBeGreaterThan(0);
  });

  it("refuses a non-square matrix", () => {
    expect(() => new Ic0Preconditioner().update(csrFromTriplets(2, 3, [0], [0], [1]))).toThrow(
      /square/,
    );
  });
});

describe("Ilu0Preconditioner", () => {
  it("is the exact LU of a nonsymmetric tridiagonal matrix (no fill): z = A⁻¹ r", () => {
    const r = mulberry32(7);
    const a: CsrMatrix = tridiagonal(
      25,
      () => 2 * r() - 1,
      () => 3 + r(),
      () => 2 * r() - 1,
    );
    const p = new Ilu0Preconditioner();
    p.update(a);
    expect(p.replacedPivots).toBe(0);
    const b = randomVector(25, 8);
    const z = new Float64Array(25);
    p.apply(b, z);
    expect(relativeError(z, denseLuReference(a, b))).toBeLessThan(1e-13);
  });

  it("replaces a zero pivot instead of failing", () => {
    // [0 1; 1 0]: u_00 = 0 is replaced by √ε·max|a_ij| = √ε; z stays finite.
    const a = csrFromTriplets(2, 2, [0, 1], [1, 0], [1, 1]);
    const p = new Ilu0Preconditioner();
    p.update(a);
    expect(p.replacedPivots).toBeGreaterThanOrEqual(1);
    const z = new Float64Array(2);
    p.apply(Float64Array.of(1, 1), z);
    expect(z.every(Number.isFinite)).toBe(true);
  });
});
