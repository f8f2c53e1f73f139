/**
 * The dense reference solve of the tests, written out independently of the engine's
 * solvers: Gaussian elimination with partial pivoting (row swaps on the largest |pivot|),
 * then back substitution.
 */

/** Solves A x = b, A n×n row-major (copied, not changed). */
export function denseSolve(A: ArrayLike<number>, b: ArrayLike<number>, n: number): Float64Array {
  const a = Float64Array.from(A);
  const x = Float64Array.from(b);
  for (let k = 0; k < n; k++) {
    let p = k;
    for (let i = k + 1; i < n; i++) if (Math.abs(a[i * n + k]) > Math.abs(a[p * n + k])) p = i;
    for (let j = 0; j < n; j++) [a[k * n + j], a[p * n + j]] = [a[p * n + j], a[k * n + j]];
    [x[k], x[p]] = [x[p], x[k]];
    for (let i = k + 1; i < n; i++) {
      const f = a[i * n + k] / a[k * n + k];
      for (let j = k; j < n; j++) a[i * n + j] -= f * a[k * n + j];
      x[i] -= f * x[k];
    }
  }
  for (let k = n - 1; k >= 0; k--) {
    let s = x[k];
    for (let j = k + 1; j < n; j++) s -= a[k * n + j] * x[j];
    x[k] = s / a[k * n + k];
  }
  return x;
}

/** The same for A given by rows. */
export function solveDense(a: readonly (readonly number[])[], b: ArrayLike<number>): number[] {
  return Array.from(denseSolve(a.flat(), b, b.length));
}
