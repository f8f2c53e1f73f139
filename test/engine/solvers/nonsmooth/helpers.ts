/**
 * Independent test references for the nonsmooth solvers: random SPD matrices (from a
 * seeded generator passed in, test/support/random.ts) and a brute-force LCP solver that enumerates all 2ⁿ active sets (no code shared
 * with src/engine/solvers/nonsmooth).
 */
import { denseSolve } from "../../../support/dense-solve";

/** W = AᵀA + εI, A n×n with entries uniform in [−1, 1] (row-major). */
export function randomSpd(n: number, eps: number, rand: () => number): Float64Array {
  const A = new Float64Array(n * n);
  for (let i = 0; i < n * n; i++) A[i] = 2 * rand() - 1;
  const W = new Float64Array(n * n);
  for (let i = 0; i < n; i++)
    for (let j = 0; j < n; j++) {
      let s = 0;
      for (let k = 0; k < n; k++) s += A[k * n + i] * A[k * n + j];
      W[i * n + j] = s + (i === j ? eps : 0);
    }
  return W;
}

/** y = W x + q (dense). */
export function affine(
  W: ArrayLike<number>,
  x: ArrayLike<number>,
  q: ArrayLike<number>,
  n: number,
) {
  const y = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    let s = q[i];
    for (let j = 0; j < n; j++) s += W[i * n + j] * x[j];
    y[i] = s;
  }
  return y;
}

/**
 * The LCP solution by enumeration: for every index set α, r_α = −W_αα⁻¹ q_α, r_ᾱ = 0; the
 * first set with r ≥ −tol and w = W r + q ≥ −tol on ᾱ. Unique for SPD W.
 */
export function bruteForceLcp(W: Float64Array, q: Float64Array, n: number, tol = 1e-10) {
  for (let mask = 0; mask < 1 << n; mask++) {
    const idx: number[] = [];
    for (let i = 0; i < n; i++) if (mask & (1 << i)) idx.push(i);
    const k = idx.length;
    const A = new Float64Array(k * k);
    const b = new Float64Array(k);
    for (let a = 0; a < k; a++) {
      b[a] = -q[idx[a]];
      for (let c = 0; c < k; c++) A[a * k + c] = W[idx[a] * n + idx[c]];
    }
    const x = k > 0 ? denseSolve(A, b, k) : new Float64Array(0);
    if (x.some((v) => !(v >= -tol))) continue;
    const r = new Float64Array(n);
    idx.forEach((i, a) => {
      r[i] = x[a];
    });
    const w = affine(W, r, q, n);
    if (w.every((v, i) => mask & (1 << i) || v >= -tol)) return r;
  }
  throw new Error("no LCP solution found by enumeration");
}

export function maxAbsDiff(a: ArrayLike<number>, b: ArrayLike<number>, n = a.length): number {
  let e = 0;
  for (let i = 0; i < n; i++) e = Math.max(e, Math.abs(a[i] - b[i]));
  return e;
}
