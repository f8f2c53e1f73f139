/**
 * 3×3 matrices, row-major, 9 consecutive entries at an offset of a Float64Array.
 */
import type { Vec } from "./vec3";

/** out = A x (x, out 3-vectors). out must not alias x. */
export function mat3MulVec(out: Vec, io: number, a: Vec, ia: number, x: Vec, ix: number): void {
  const x0 = x[ix];
  const x1 = x[ix + 1];
  const x2 = x[ix + 2];
  out[io] = a[ia] * x0 + a[ia + 1] * x1 + a[ia + 2] * x2;
  out[io + 1] = a[ia + 3] * x0 + a[ia + 4] * x1 + a[ia + 5] * x2;
  out[io + 2] = a[ia + 6] * x0 + a[ia + 7] * x1 + a[ia + 8] * x2;
}

/** out = A B. out must alias neither. */
export function mat3Mul(out: Vec, io: number, a: Vec, ia: number, b: Vec, ib: number): void {
  for (let i = 0; i < 3; i++)
    for (let j = 0; j < 3; j++)
      out[io + 3 * i + j] =
        a[ia + 3 * i] * b[ib + j] +
        a[ia + 3 * i + 1] * b[ib + 3 + j] +
        a[ia + 3 * i + 2] * b[ib + 6 + j];
}

/** out = R D Rᵀ with D symmetric (used for the world inertia R I_body Rᵀ). */
const congruenceScratch = new Float64Array(9);
export function mat3Congruence(out: Vec, io: number, r: Vec, ir: number, d: Vec, id: number) {
  const t = congruenceScratch;
  for (let i = 0; i < 3; i++)
    for (let j = 0; j < 3; j++)
      t[3 * i + j] =
        r[ir + 3 * i] * d[id + j] +
        r[ir + 3 * i + 1] * d[id + 3 + j] +
        r[ir + 3 * i + 2] * d[id + 6 + j];
  for (let i = 0; i < 3; i++)
    for (let j = 0; j < 3; j++)
      out[io + 3 * i + j] =
        t[3 * i] * r[ir + 3 * j] +
        t[3 * i + 1] * r[ir + 3 * j + 1] +
        t[3 * i + 2] * r[ir + 3 * j + 2];
}

/** Skew matrix [a]× such that [a]× x = a × x. */
export function mat3Skew(out: Vec, io: number, a: Vec, ia: number): void {
  out[io] = 0;
  out[io + 1] = -a[ia + 2];
  out[io + 2] = a[ia + 1];
  out[io + 3] = a[ia + 2];
  out[io + 4] = 0;
  out[io + 5] = -a[ia];
  out[io + 6] = -a[ia + 1];
  out[io + 7] = a[ia];
  out[io + 8] = 0;
}

/**
 * out[io..io+8] ← A⁻¹ by the adjugate. Returns false, leaving out undefined, when A is
 * singular: det A = 0, or with relTolerance > 0 |det A| ≤ relTolerance ‖A‖³ (max-norm),
 * singular to that precision. (A boolean rather than the determinant: a double returned
 * from a call V8 does not inline is boxed, an allocation per body and step.)
 */
export function mat3Invert(out: Vec, io: number, a: Vec, ia: number, relTolerance = 0): boolean {
  const a0 = a[ia];
  const a1 = a[ia + 1];
  const a2 = a[ia + 2];
  const a3 = a[ia + 3];
  const a4 = a[ia + 4];
  const a5 = a[ia + 5];
  const a6 = a[ia + 6];
  const a7 = a[ia + 7];
  const a8 = a[ia + 8];
  const c0 = a4 * a8 - a5 * a7;
  const c1 = a5 * a6 - a3 * a8;
  const c2 = a3 * a7 - a4 * a6;
  const det = a0 * c0 + a1 * c1 + a2 * c2;
  if (det === 0) return false;
  if (relTolerance > 0) {
    let scale = 0;
    for (let k = 0; k < 9; k++) scale = Math.max(scale, Math.abs(a[ia + k]));
    if (!(Math.abs(det) > relTolerance * scale * scale * scale)) return false;
  }
  const inv = 1 / det;
  out[io] = c0 * inv;
  out[io + 1] = (a2 * a7 - a1 * a8) * inv;
  out[io + 2] = (a1 * a5 - a2 * a4) * inv;
  out[io + 3] = c1 * inv;
  out[io + 4] = (a0 * a8 - a2 * a6) * inv;
  out[io + 5] = (a2 * a3 - a0 * a5) * inv;
  out[io + 6] = c2 * inv;
  out[io + 7] = (a1 * a6 - a0 * a7) * inv;
  out[io + 8] = (a0 * a4 - a1 * a3) * inv;
  return true;
}

/**
 * out[io..io+8] ← A⁻¹ when A is not singular to working precision, |det A| > 1e-12 ‖A‖³
 * (max-norm); returns false otherwise (out is then undefined).
 */
export function mat3InvertChecked(out: Vec, io: number, a: Vec, ia: number): boolean {
  return mat3Invert(out, io, a, ia, 1e-12);
}
