/**
 * Robust 3×3 polar decomposition F = R S (R a rotation, det R = +1; S symmetric), through
 * the symmetric eigen-decomposition of C = FᵀF, as the "rotation-variant SVD" of Irving,
 * Teran and Fedkiw (Invertible finite elements, 2004):
 *
 *   FᵀF = V diag(σ₁², σ₂², σ₃²) Vᵀ   (cyclic Jacobi, σ₁ ≥ σ₂ ≥ σ₃ ≥ 0, V a rotation)
 *   u₁ = F v₁ / |F v₁|,  u₂ = F v₂ orthogonalized against u₁ and normalized,  u₃ = u₁ × u₂
 *   R = U Vᵀ,  Σ̂ = diag(σ₁, σ₂, σ̂₃) with σ̂₃ = u₃ · F v₃,  S = V Σ̂ Vᵀ = Rᵀ F.
 *
 * U is built as a rotation (u₃ = u₁ × u₂), so for an inverted element (det F < 0) R stays
 * a rotation and the sign goes to the smallest singular value: σ̂₃ < 0 and S has a
 * negative eigenvalue. R is then the rotation nearest to F in the Frobenius norm for every
 * F, inverted or not, which makes the corotational energy μ‖F − R‖² + λ/2 tr(RᵀF − I)²
 * differentiable with P = ∂ψ/∂F (materials.ts). A collapsed direction (F v₂ ∥ u₁, or
 * F = 0) takes any unit vector perpendicular to u₁ (or u₁ = v₁): R is then one of the
 * nearest rotations, and S = RᵀF still holds.
 *
 * No allocation: the results go to caller arrays, the scratch is module-level.
 */

/** Off-diagonal mass, relative to the diagonal's, at which the Jacobi sweeps stop. */
const JACOBI_TOLERANCE = 1e-32;
const JACOBI_SWEEPS = 32;

const A = new Float64Array(9);
const VV = new Float64Array(9);

/**
 * Eigen-decomposition of the symmetric 3×3 `a` (row-major at a[ia]; only its upper
 * triangle is read): eigenvalues into w[iw..iw+2] in descending order, the eigenvectors
 * as the columns of v (row-major at v[iv]), a rotation (det = +1).
 */
export function symmetricEigen3(
  a: ArrayLike<number>,
  ia: number,
  w: Float64Array,
  iw: number,
  v: Float64Array,
  iv: number,
): void {
  const m = A;
  m[0] = a[ia];
  m[1] = a[ia + 1];
  m[2] = a[ia + 2];
  m[4] = a[ia + 4];
  m[5] = a[ia + 5];
  m[8] = a[ia + 8];
  m[3] = m[1];
  m[6] = m[2];
  m[7] = m[5];
  const q = VV;
  q.fill(0);
  q[0] = 1;
  q[4] = 1;
  q[8] = 1;
  for (let sweep = 0; sweep < JACOBI_SWEEPS; sweep++) {
    const off = m[1] * m[1] + m[2] * m[2] + m[5] * m[5];
    const diag = m[0] * m[0] + m[4] * m[4] + m[8] * m[8];
    if (off === 0 || off <= JACOBI_TOLERANCE * diag) break;
    rotate(m, q, 0, 1, 2);
    rotate(m, q, 0, 2, 1);
    rotate(m, q, 1, 2, 0);
  }
  // sort descending (three compares), permuting the columns of q
  let i0 = 0;
  let i1 = 1;
  let i2 = 2;
  let t: number;
  if (m[4 * i0] < m[4 * i1]) {
    t = i0;
    i0 = i1;
    i1 = t;
  }
  if (m[4 * i1] < m[4 * i2]) {
    t = i1;
    i1 = i2;
    i2 = t;
  }
  if (m[4 * i0] < m[4 * i1]) {
    t = i0;
    i0 = i1;
    i1 = t;
  }
  w[iw] = m[4 * i0];
  w[iw + 1] = m[4 * i1];
  w[iw + 2] = m[4 * i2];
  for (let r = 0; r < 3; r++) {
    v[iv + 3 * r] = q[3 * r + i0];
    v[iv + 3 * r + 1] = q[3 * r + i1];
    v[iv + 3 * r + 2] = q[3 * r + i2];
  }
  // det V = +1: the third column is the cross product of the first two
  v[iv + 2] = v[iv + 3] * v[iv + 7] - v[iv + 6] * v[iv + 4];
  v[iv + 5] = v[iv + 6] * v[iv + 1] - v[iv] * v[iv + 7];
  v[iv + 8] = v[iv] * v[iv + 4] - v[iv + 3] * v[iv + 1];
}

/** One Jacobi rotation annihilating m[p][q] (r the third index); q accumulates columns. */
function rotate(m: Float64Array, v: Float64Array, p: number, qi: number, r: number): void {
  const apq = m[3 * p + qi];
  if (apq === 0) return;
  const app = m[4 * p];
  const aqq = m[4 * qi];
  const theta = (aqq - app) / (2 * apq);
  const t =
    Math.abs(theta) > 1e150
      ? 1 / (2 * theta)
      : (theta >= 0 ? 1 : -1) / (Math.abs(theta) + Math.sqrt(theta * theta + 1));
  const c = 1 / Math.sqrt(t * t + 1);
  const s = t * c;
  m[4 * p] = app - t * apq;
  m[4 * qi] = aqq + t * apq;
  m[3 * p + qi] = 0;
  m[3 * qi + p] = 0;
  const arp = m[3 * r + p];
  const arq = m[3 * r + qi];
  const nrp = c * arp - s * arq;
  const nrq = s * arp + c * arq;
  m[3 * r + p] = nrp;
  m[3 * p + r] = nrp;
  m[3 * r + qi] = nrq;
  m[3 * qi + r] = nrq;
  for (let k = 0; k < 3; k++) {
    const g = v[3 * k + p];
    const h = v[3 * k + qi];
    v[3 * k + p] = c * g - s * h;
    v[3 * k + qi] = s * g + c * h;
  }
}

const C = new Float64Array(9);
const U = new Float64Array(9);
const FV = new Float64Array(3);

/**
 * Polar decomposition of F (row-major 3×3 at f[0..8]): R into r (rotation), the signed
 * singular values σ₁ ≥ σ₂ ≥ |σ̂₃| into sigma (σ̂₃ < 0 for an inverted F) and the right
 * singular vectors V (columns, a rotation) into v, so that RᵀF = S = V diag(σ) Vᵀ.
 */
export function polarDecomposition(
  f: Float64Array,
  r: Float64Array,
  sigma: Float64Array,
  v: Float64Array,
): void {
  // C = FᵀF (upper triangle)
  for (let i = 0; i < 3; i++)
    for (let j = i; j < 3; j++)
      C[3 * i + j] = f[i] * f[j] + f[3 + i] * f[3 + j] + f[6 + i] * f[6 + j];
  symmetricEigen3(C, 0, sigma, 0, v, 0);
  // u1 = F v1 / |F v1|
  applyColumn(f, v, 0);
  let n = Math.hypot(FV[0], FV[1], FV[2]);
  if (n > 0) for (let k = 0; k < 3; k++) U[3 * k] = FV[k] / n;
  else for (let k = 0; k < 3; k++) U[3 * k] = v[3 * k];
  const s1 = n;
  // u2 = F v2 − (u1·F v2) u1, normalized; any perpendicular when it vanishes
  applyColumn(f, v, 1);
  const d = U[0] * FV[0] + U[3] * FV[1] + U[6] * FV[2];
  for (let k = 0; k < 3; k++) FV[k] -= d * U[3 * k];
  n = Math.hypot(FV[0], FV[1], FV[2]);
  if (n > 1e-14 * s1 && n > 0) for (let k = 0; k < 3; k++) U[3 * k + 1] = FV[k] / n;
  else perpendicular(U);
  // u3 = u1 × u2
  U[2] = U[3] * U[7] - U[6] * U[4];
  U[5] = U[6] * U[1] - U[0] * U[7];
  U[8] = U[0] * U[4] - U[3] * U[1];
  // R = U Vᵀ
  for (let i = 0; i < 3; i++)
    for (let j = 0; j < 3; j++)
      r[3 * i + j] =
        U[3 * i] * v[3 * j] + U[3 * i + 1] * v[3 * j + 1] + U[3 * i + 2] * v[3 * j + 2];
  // σ_k = u_k · F v_k (signed for k = 3)
  for (let k = 0; k < 3; k++) {
    applyColumn(f, v, k);
    sigma[k] = U[k] * FV[0] + U[3 + k] * FV[1] + U[6 + k] * FV[2];
  }
}

/** FV = F v_k (column k of v). */
function applyColumn(f: Float64Array, v: Float64Array, k: number): void {
  const x = v[k];
  const y = v[3 + k];
  const z = v[6 + k];
  FV[0] = f[0] * x + f[1] * y + f[2] * z;
  FV[1] = f[3] * x + f[4] * y + f[5] * z;
  FV[2] = f[6] * x + f[7] * y + f[8] * z;
}

/** Column 1 of u ← a unit vector perpendicular to column 0. */
function perpendicular(u: Float64Array): void {
  const x = u[0];
  const y = u[3];
  const z = u[6];
  // cross with the axis of the smallest component
  let a0 = 0;
  let a1 = 0;
  let a2 = 0;
  if (Math.abs(x) <= Math.abs(y) && Math.abs(x) <= Math.abs(z)) a0 = 1;
  else if (Math.abs(y) <= Math.abs(z)) a1 = 1;
  else a2 = 1;
  const cx = y * a2 - z * a1;
  const cy = z * a0 - x * a2;
  const cz = x * a1 - y * a0;
  const n = Math.hypot(cx, cy, cz);
  u[1] = cx / n;
  u[4] = cy / n;
  u[7] = cz / n;
}

const X = new Float64Array(9);

/** Iterations of nearestRotation at most (a well-conditioned F needs 3 to 6). */
const NEWTON_POLAR_ITERATIONS = 30;
/**
 * A step of nearestRotation changing X by at most this much (≈ X_k's error e_k) leaves
 * X_{k+1} with an error of about e_k²/2 ≤ 5e-17: below rounding, so X_{k+1} is taken.
 */
const NEWTON_POLAR_SETTLED = 1e-8;

/**
 * R of F = R S for det F > 0 by Newton's iteration for the orthogonal polar factor
 * (Higham, "Functions of Matrices", SIAM 2008, §8.3): X₀ = F, X_{k+1} = ½(ζ X_k + ζ⁻¹ X_k⁻ᵀ)
 * with the determinant scaling ζ = |det X_k|^(−1/3), quadratically convergent; it stops after
 * the step that changed X by at most NEWTON_POLAR_SETTLED in the max norm.
 * Several times cheaper than the eigen-decomposition of FᵀF when only R is needed (the
 * approximate corotational tangent: S = RᵀF gives tr S and ‖F − R‖ directly). Returns false,
 * r untouched, for det F ≤ 0 (an inverted or collapsed element: the iteration would
 * converge to a reflection) or when it has not converged: use polarDecomposition then.
 */
export function nearestRotation(f: Float64Array, r: Float64Array): boolean {
  for (let k = 0; k < 9; k++) X[k] = f[k];
  for (let it = 0; it < NEWTON_POLAR_ITERATIONS; it++) {
    const a = X[0];
    const b = X[1];
    const c = X[2];
    const d = X[3];
    const e = X[4];
    const g = X[5];
    const h = X[6];
    const i = X[7];
    const j = X[8];
    // cofactors: X⁻ᵀ = cof(X) / det X
    const c00 = e * j - g * i;
    const c01 = g * h - d * j;
    const c02 = d * i - e * h;
    const det = a * c00 + b * c01 + c * c02;
    if (!(det > 0)) return false;
    const zeta = Math.cbrt(1 / det);
    const s = 0.5 * zeta;
    const t = 0.5 / (zeta * det);
    const n0 = s * a + t * c00;
    const n1 = s * b + t * c01;
    const n2 = s * c + t * c02;
    const n3 = s * d + t * (c * i - b * j);
    const n4 = s * e + t * (a * j - c * h);
    const n5 = s * g + t * (b * h - a * i);
    const n6 = s * h + t * (b * g - c * e);
    const n7 = s * i + t * (c * d - a * g);
    const n8 = s * j + t * (a * e - b * d);
    const change = Math.max(
      Math.abs(n0 - a),
      Math.abs(n1 - b),
      Math.abs(n2 - c),
      Math.abs(n3 - d),
      Math.abs(n4 - e),
      Math.abs(n5 - g),
      Math.abs(n6 - h),
      Math.abs(n7 - i),
      Math.abs(n8 - j),
    );
    X[0] = n0;
    X[1] = n1;
    X[2] = n2;
    X[3] = n3;
    X[4] = n4;
    X[5] = n5;
    X[6] = n6;
    X[7] = n7;
    X[8] = n8;
    if (change <= NEWTON_POLAR_SETTLED) {
      for (let k = 0; k < 9; k++) r[k] = X[k];
      return true;
    }
  }
  return false;
}
