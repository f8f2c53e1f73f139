/**
 * The axial spring-damper law, as a pure function over typed arrays: shared by the
 * general SpringEffector (points on any bodies) and the vectorized ParticleSpringSet.
 *
 * With d = x_B − x_A, l = |d|, û = d / l, ḋ = v_B − v_A, l̇ = ûᵀ ḋ:
 *   f_b = −(k (l − l0) + c l̇) û = −s û   (N),  f_a = −f_b
 * and, with P = I − ûûᵀ, w = P ḋ, its derivatives
 *   A = ∂f_b/∂d = −k ûûᵀ − (s/l) P − (c/l) û wᵀ,     B = ∂f_b/∂ḋ = −c ûûᵀ.
 * Rest length 0 is the linear spring f_b = −k d − c ḋ, A = −k I, B = −c I. With l0 > 0
 * and l ≤ 1e-12 l0 the direction is undefined: force and Jacobians are 0 (never NaN).
 *
 * `symmetric` replaces A by its symmetric negative semidefinite approximation
 *   A⁺ = −k ûûᵀ − (s⁺/l) P,   s⁺ = max(s, 0):
 * it drops the one nonsymmetric term, −(c/l) û wᵀ (the rotation of the damping force's
 * direction), as SOFA's StiffSpringForceField does (addDForce: dfdx = (k − s/l) ûûᵀ +
 * (s/l) I), and the transverse term of a compressed spring, whose negative stiffness
 * −s/l > 0 along P is the buckling mode (as in cloth solvers since Choi & Ko, "Stable but
 * responsive cloth", SIGGRAPH 2002). −A⁺ has eigenvalues k (along û) and s⁺/l ≥ 0, so a
 * solve matrix M − c·A⁺ stays symmetric positive definite (CG) whatever the state. The
 * force is unchanged, so Newton's solution is the same; only the iteration matrix
 * differs, by O(c |w| / l + |s⁻| / l), which slows Newton to linear convergence where
 * those terms matter.
 *
 * Every case has the factored form (axialForce writes it, axialJacobian expands it)
 *   A = a1 ûûᵀ + a2 I + a3 û wᵀ,   B = b1 ûûᵀ + b2 I,
 * with (a1, a2, a3, b1, b2) = (s/l − k, −s/l, −c/l or 0, −c, 0) for l0 > 0,
 * (0, −k, 0, 0, −c) for l0 = 0 and all 0 when the direction is undefined; so a combination
 * s_x A + s_v B costs a few scalars per spring, not two 3×3 blocks.
 */

/** Scalars of one evaluation, written to out[o..o+2]: length l, rate l̇, tension s. */
export const AXIAL_LENGTH = 0;
export const AXIAL_RATE = 1;
export const AXIAL_TENSION = 2;

/** Layout of the Jacobian factors: û at 0..2, w at 3..5, then a1, a2, a3, b1, b2. */
export const AXIAL_U = 0;
export const AXIAL_W = 3;
export const AXIAL_A1 = 6;
export const AXIAL_A2 = 7;
export const AXIAL_A3 = 8;
export const AXIAL_B1 = 9;
export const AXIAL_B2 = 10;
export const AXIAL_FACTORS = 11;

const scratch = new Float64Array(AXIAL_FACTORS);

/**
 * Evaluates the law for d = d[id..], ḋ = dd[idd..]: f_b into f[io..], the scalars into
 * scalars[is..] and, when `factors` is given, the Jacobian factors into
 * factors[ifac..ifac+10] (layout above). Returns false when the direction is undefined
 * (force 0).
 */
export function axialForce(
  d: Float64Array,
  id: number,
  dd: Float64Array,
  idd: number,
  k: number,
  c: number,
  l0: number,
  f: Float64Array,
  io: number,
  scalars: Float64Array,
  is: number,
  factors: Float64Array | null,
  ifac: number,
  symmetric = false,
): boolean {
  const dx = d[id];
  const dy = d[id + 1];
  const dz = d[id + 2];
  const vx = dd[idd];
  const vy = dd[idd + 1];
  const vz = dd[idd + 2];
  const l = Math.sqrt(dx * dx + dy * dy + dz * dz);
  scalars[is + AXIAL_LENGTH] = l;
  if (l0 === 0) {
    f[io] = -k * dx - c * vx;
    f[io + 1] = -k * dy - c * vy;
    f[io + 2] = -k * dz - c * vz;
    scalars[is + AXIAL_RATE] = l > 0 ? (dx * vx + dy * vy + dz * vz) / l : 0;
    scalars[is + AXIAL_TENSION] = k * l;
    if (factors !== null) {
      factors.fill(0, ifac, ifac + AXIAL_FACTORS);
      factors[ifac + AXIAL_A2] = -k;
      factors[ifac + AXIAL_B2] = -c;
    }
    return true;
  }
  if (!(l > 1e-12 * l0)) {
    f[io] = 0;
    f[io + 1] = 0;
    f[io + 2] = 0;
    scalars[is + AXIAL_RATE] = 0;
    scalars[is + AXIAL_TENSION] = 0;
    if (factors !== null) factors.fill(0, ifac, ifac + AXIAL_FACTORS);
    return false;
  }
  const il = 1 / l;
  const ux = dx * il;
  const uy = dy * il;
  const uz = dz * il;
  const ldot = ux * vx + uy * vy + uz * vz;
  const s = k * (l - l0) + c * ldot;
  scalars[is + AXIAL_RATE] = ldot;
  scalars[is + AXIAL_TENSION] = s;
  f[io] = -s * ux;
  f[io + 1] = -s * uy;
  f[io + 2] = -s * uz;
  if (factors === null) return true;
  const sl = (symmetric ? Math.max(s, 0) : s) * il;
  factors[ifac + AXIAL_U] = ux;
  factors[ifac + AXIAL_U + 1] = uy;
  factors[ifac + AXIAL_U + 2] = uz;
  factors[ifac + AXIAL_W] = vx - ldot * ux; // w = P ḋ
  factors[ifac + AXIAL_W + 1] = vy - ldot * uy;
  factors[ifac + AXIAL_W + 2] = vz - ldot * uz;
  factors[ifac + AXIAL_A1] = sl - k;
  factors[ifac + AXIAL_A2] = -sl;
  factors[ifac + AXIAL_A3] = symmetric ? 0 : -c * il;
  factors[ifac + AXIAL_B1] = -c;
  factors[ifac + AXIAL_B2] = 0;
  return true;
}

/**
 * axialForce for springs i = 0 … count − 1 stored side by side: d, ḋ, f and the scalars
 * at 3i, the factors at AXIAL_FACTORS·i (the vectorized ParticleSpringSet: one call, so
 * the per-spring law is inlined into this loop instead of called per spring).
 */
export function axialForces(
  count: number,
  d: Float64Array,
  dd: Float64Array,
  k: Float64Array,
  c: Float64Array,
  l0: Float64Array,
  f: Float64Array,
  scalars: Float64Array,
  factors: Float64Array,
  symmetric: boolean,
): void {
  for (let i = 0; i < count; i++)
    axialForce(
      d,
      3 * i,
      dd,
      3 * i,
      k[i],
      c[i],
      l0[i],
      f,
      3 * i,
      scalars,
      3 * i,
      factors,
      AXIAL_FACTORS * i,
      symmetric,
    );
}

/** Length of the rank-one form of sx·A + sv·B written by axialCombination. */
export const AXIAL_COMBINATION = 7;

/**
 * sx·A + sv·B from the factors at factors[ifac..] in rank-one form û gᵀ + p I:
 * g = (sx a1 + sv b1) û + sx a3 w and p = sx a2 + sv b2, written as [û, g, p] to
 * out[o..o+6]. A product with a vector δ is then û (g·δ) + p δ.
 */
export function axialCombination(
  factors: Float64Array,
  ifac: number,
  sx: number,
  sv: number,
  out: Float64Array,
  o: number,
): void {
  const p1 = sx * factors[ifac + AXIAL_A1] + sv * factors[ifac + AXIAL_B1];
  const p3 = sx * factors[ifac + AXIAL_A3];
  for (let j = 0; j < 3; j++) {
    const u = factors[ifac + AXIAL_U + j];
    out[o + j] = u;
    out[o + 3 + j] = p1 * u + p3 * factors[ifac + AXIAL_W + j];
  }
  out[o + 6] = sx * factors[ifac + AXIAL_A2] + sv * factors[ifac + AXIAL_B2];
}

const combination = new Float64Array(AXIAL_COMBINATION);

/** The 3×3 block sx·A + sv·B (row-major, into out[o..o+8]): û gᵀ + p I of axialCombination. */
export function axialJacobian(
  factors: Float64Array,
  ifac: number,
  sx: number,
  sv: number,
  out: Float64Array,
  o: number,
): void {
  const r = combination;
  axialCombination(factors, ifac, sx, sv, r, 0);
  for (let i = 0; i < 3; i++)
    for (let j = 0; j < 3; j++) out[o + 3 * i + j] = r[i] * r[3 + j] + (i === j ? r[6] : 0);
}

/**
 * axialForce, and when `jac` is given A into jac[ia..ia+8] and B into jac[ia+9..ia+17].
 * Returns false when the direction is undefined (force 0).
 */
export function axialSpring(
  d: Float64Array,
  id: number,
  dd: Float64Array,
  idd: number,
  k: number,
  c: number,
  l0: number,
  f: Float64Array,
  io: number,
  scalars: Float64Array,
  is: number,
  jac: Float64Array | null,
  ia: number,
  symmetric = false,
): boolean {
  const ok = axialForce(d, id, dd, idd, k, c, l0, f, io, scalars, is, jac && scratch, 0, symmetric);
  if (jac !== null) {
    axialJacobian(scratch, 0, 1, 0, jac, ia);
    axialJacobian(scratch, 0, 0, 1, jac, ia + 9);
  }
  return ok;
}
