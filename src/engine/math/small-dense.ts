/**
 * Small dense matrices (up to 6×6, row-major at an offset): the inverses of the diagonal
 * blocks of a block-diagonal iteration matrix. Gauss–Jordan with partial pivoting, and
 * the common rigid-body block without translation–rotation coupling by two 3×3 adjugates.
 */
import { mat3InvertChecked } from "./mat3";

/**
 * out[io..] ← A⁻¹ for the n×n matrix A at a[ia..] (A is not modified; `work` holds at
 * least n·n entries). Returns false when a pivot vanishes (singular to working precision).
 */
export function invertSmall(
  out: Float64Array,
  io: number,
  a: Float64Array,
  ia: number,
  n: number,
  work: Float64Array,
): boolean {
  for (let i = 0; i < n * n; i++) work[i] = a[ia + i];
  for (let i = 0; i < n; i++) for (let j = 0; j < n; j++) out[io + i * n + j] = i === j ? 1 : 0;
  let scale = 0;
  for (let i = 0; i < n * n; i++) scale = Math.max(scale, Math.abs(work[i]));
  for (let col = 0; col < n; col++) {
    let p = col;
    for (let r = col + 1; r < n; r++)
      if (Math.abs(work[r * n + col]) > Math.abs(work[p * n + col])) p = r;
    const pivot = work[p * n + col];
    if (!(Math.abs(pivot) > 1e-14 * scale)) return false;
    if (p !== col)
      for (let c = 0; c < n; c++) {
        let t = work[p * n + c];
        work[p * n + c] = work[col * n + c];
        work[col * n + c] = t;
        t = out[io + p * n + c];
        out[io + p * n + c] = out[io + col * n + c];
        out[io + col * n + c] = t;
      }
    const inv = 1 / pivot;
    for (let c = 0; c < n; c++) {
      work[col * n + c] *= inv;
      out[io + col * n + c] *= inv;
    }
    for (let r = 0; r < n; r++) {
      if (r === col) continue;
      const f = work[r * n + col];
      if (f === 0) continue;
      for (let c = 0; c < n; c++) {
        work[r * n + c] -= f * work[col * n + c];
        out[io + r * n + c] -= f * out[io + col * n + c];
      }
    }
  }
  return true;
}

/** A_vv, A_ωω and their inverses for invertDecoupled6. */
const decoupled = new Float64Array(36);

/**
 * out[io..] ← A⁻¹ for a 6×6 rigid-body block A = [A_vv 0; 0 A_ωω] whose translation–
 * rotation coupling blocks are exactly zero (W = s M plus gyroscopic and per-body damping
 * Jacobians, which act on ω alone): the inverses of the two 3×3 blocks. Returns false
 * (out undefined) when A is coupled or a 3×3 block is singular to working precision
 * (mat3InvertChecked); invertSmall then decides.
 */
export function invertDecoupled6(
  out: Float64Array,
  io: number,
  a: Float64Array,
  ia: number,
): boolean {
  for (let r = 0; r < 3; r++)
    for (let c = 0; c < 3; c++)
      if (a[ia + 6 * r + 3 + c] !== 0 || a[ia + 6 * (r + 3) + c] !== 0) return false;
  const w = decoupled;
  for (let r = 0; r < 3; r++)
    for (let c = 0; c < 3; c++) {
      w[3 * r + c] = a[ia + 6 * r + c];
      w[9 + 3 * r + c] = a[ia + 6 * (r + 3) + 3 + c];
    }
  if (!mat3InvertChecked(w, 18, w, 0) || !mat3InvertChecked(w, 27, w, 9)) return false;
  for (let r = 0; r < 3; r++) {
    const top = io + 6 * r;
    const bottom = top + 18;
    for (let c = 0; c < 3; c++) {
      out[top + c] = w[18 + 3 * r + c];
      out[top + 3 + c] = 0;
      out[bottom + c] = 0;
      out[bottom + 3 + c] = w[27 + 3 * r + c];
    }
  }
  return true;
}

/**
 * out[io..io+5] = A x for the row-major 6×6 A = a[ia..] and x = x[ix..ix+5], unrolled;
 * `decoupled`: A's translation–rotation blocks are zero (invertDecoupled6's inverses), and
 * only its two diagonal 3×3 blocks are read (half the multiplications).
 */
export function mat6MulVec(
  out: Float64Array,
  io: number,
  a: Float64Array,
  ia: number,
  x: Float64Array,
  ix: number,
  decoupled = false,
): void {
  const x0 = x[ix];
  const x1 = x[ix + 1];
  const x2 = x[ix + 2];
  const x3 = x[ix + 3];
  const x4 = x[ix + 4];
  const x5 = x[ix + 5];
  if (decoupled) {
    for (let r = 0; r < 3; r++) {
      const p = ia + 6 * r;
      const q = p + 21; // row r + 3, column 3
      out[io + r] = a[p] * x0 + a[p + 1] * x1 + a[p + 2] * x2;
      out[io + r + 3] = a[q] * x3 + a[q + 1] * x4 + a[q + 2] * x5;
    }
    return;
  }
  for (let r = 0; r < 6; r++) {
    const p = ia + 6 * r;
    out[io + r] =
      a[p] * x0 + a[p + 1] * x1 + a[p + 2] * x2 + a[p + 3] * x3 + a[p + 4] * x4 + a[p + 5] * x5;
  }
}
