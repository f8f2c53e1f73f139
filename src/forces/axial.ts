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
 */

const scratch = new Float64Array(6);

/** Scalars of one evaluation, written to out[o..o+2]: length l, rate l̇, tension s. */
export const AXIAL_LENGTH = 0;
export const AXIAL_RATE = 1;
export const AXIAL_TENSION = 2;

/**
 * Evaluates the law for d = d[id..], ḋ = dd[idd..]: f_b into f[io..], the scalars into
 * scalars[is..]; when `jac` is given, A into jac[ia..ia+8] and B into jac[ia+9..ia+17].
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
    if (jac !== null)
      for (let i = 0; i < 3; i++)
        for (let j = 0; j < 3; j++) {
          jac[ia + 3 * i + j] = i === j ? -k : 0;
          jac[ia + 9 + 3 * i + j] = i === j ? -c : 0;
        }
    return true;
  }
  if (!(l > 1e-12 * l0)) {
    f[io] = 0;
    f[io + 1] = 0;
    f[io + 2] = 0;
    scalars[is + AXIAL_RATE] = 0;
    scalars[is + AXIAL_TENSION] = 0;
    if (jac !== null) for (let i = 0; i < 18; i++) jac[ia + i] = 0;
    return false;
  }
  const ux = dx / l;
  const uy = dy / l;
  const uz = dz / l;
  const ldot = ux * vx + uy * vy + uz * vz;
  const s = k * (l - l0) + c * ldot;
  scalars[is + AXIAL_RATE] = ldot;
  scalars[is + AXIAL_TENSION] = s;
  f[io] = -s * ux;
  f[io + 1] = -s * uy;
  f[io + 2] = -s * uz;
  if (jac === null) return true;
  const sl = s / l;
  const cl = c / l;
  const u = scratch;
  u[0] = ux;
  u[1] = uy;
  u[2] = uz;
  u[3] = vx - ldot * ux; // w = P ḋ
  u[4] = vy - ldot * uy;
  u[5] = vz - ldot * uz;
  for (let i = 0; i < 3; i++)
    for (let j = 0; j < 3; j++) {
      const uu = u[i] * u[j];
      jac[ia + 3 * i + j] = -k * uu - sl * ((i === j ? 1 : 0) - uu) - cl * u[i] * u[3 + j];
      jac[ia + 9 + 3 * i + j] = -c * uu;
    }
  return true;
}
