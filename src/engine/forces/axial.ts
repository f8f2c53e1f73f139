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
 * Every case has the factored form (axialForces writes it, axialBlocks expands it)
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

/**
 * Length of the rank-one form [û, g, p] of a combination sx·A + sv·B = û gᵀ + p I (the
 * factored form gives g = (sx a1 + sv b1) û + sx a3 w, p = sx a2 + sv b2); a product
 * with δ is then û (g·δ) + p δ.
 */
export const AXIAL_COMBINATION = 7;

/**
 * A request to axialForces for sx·A + sv·B in rank-one form at AXIAL_COMBINATION·i of
 * `out`, computed with the law (the matrix-free Newton operator's per-spring form, with
 * no second pass over the springs).
 */
export class AxialProduct {
  /** The coefficients (doubles from the start, see BodySystem on V8). */
  sx = -0;
  sv = -0;

  constructor(public out: Float64Array) {}
}

/**
 * Where the law reads d and ḋ: d = (x[ib] + p_b) − (x[ia] + p_a), ḋ = v[ib] − v[ia] with
 * 3-vectors at the indices ia, ib (3·body for particles, 0 for a single spring's own
 * vectors), an index −1 standing for a still end (its position term is then p alone, its
 * velocity 0). So the vectorized ParticleSpringSet gathers straight from the particle
 * positions and the single SpringEffector passes d itself with ia = −1, p = 0.
 */
export class AxialEnds {
  constructor(
    readonly x: Float64Array,
    readonly v: Float64Array,
    readonly ia: Int32Array,
    readonly ib: Int32Array,
    readonly pa: Float64Array,
    readonly pb: Float64Array,
  ) {}
}

/**
 * The velocity-dependent part f_d (N) of the force on b of springs i = 0 … count − 1
 * stored side by side (the layout of axialForces): −c l̇ û = −c (d·ḋ / l²) d for an axial
 * damper, −c ḋ for a zero-length spring's isotropic one, 0 where the direction is
 * undefined (l ≤ 1e-12 l0: no force, as in axialForces); added to `force` (laid out as the
 * ends' x) at ib and subtracted at ia. Its power −f_d·ḋ is c l̇² (c |ḋ|²) ≥ 0: the energy
 * balance's dissipative forces (simulation/monitor.ts). d = x_B − x_A (m), ḋ its rate
 * (m/s). The law is written out in the loop (a call per spring passes its doubles boxed).
 */
export function addAxialDampingForces(
  count: number,
  ends: AxialEnds,
  c: Float64Array,
  l0: Float64Array,
  force: Float64Array,
): void {
  const { x, v, ia, ib, pa, pb } = ends;
  for (let i = 0; i < count; i++) {
    const ci = c[i];
    if (ci === 0) continue;
    // axialForces' gather (see there why it is written out twice)
    const p = 3 * i;
    let dx = pb[p] - pa[p];
    let dy = pb[p + 1] - pa[p + 1];
    let dz = pb[p + 2] - pa[p + 2];
    let vx = 0;
    let vy = 0;
    let vz = 0;
    const a = ia[i];
    const b = ib[i];
    if (b >= 0) {
      dx += x[b];
      dy += x[b + 1];
      dz += x[b + 2];
      vx = v[b];
      vy = v[b + 1];
      vz = v[b + 2];
    }
    if (a >= 0) {
      dx -= x[a];
      dy -= x[a + 1];
      dz -= x[a + 2];
      vx -= v[a];
      vy -= v[a + 1];
      vz -= v[a + 2];
    }
    let fx: number;
    let fy: number;
    let fz: number;
    const rest = l0[i];
    if (rest === 0) {
      fx = -ci * vx;
      fy = -ci * vy;
      fz = -ci * vz;
    } else {
      const l2 = dx * dx + dy * dy + dz * dz;
      const collapsed = 1e-12 * rest;
      if (!(l2 > collapsed * collapsed)) continue;
      const s = (-ci * (dx * vx + dy * vy + dz * vz)) / l2;
      fx = s * dx;
      fy = s * dy;
      fz = s * dz;
    }
    if (b >= 0) {
      force[b] += fx;
      force[b + 1] += fy;
      force[b + 2] += fz;
    }
    if (a >= 0) {
      force[a] -= fx;
      force[a + 1] -= fy;
      force[a + 2] -= fz;
    }
  }
}

/**
 * The law for springs i = 0 … count − 1 stored side by side: d and ḋ gathered as
 * AxialEnds says, f_b (N; into f unless null) and the scalars (length l, rate l̇, tension s) at 3i, stiffness
 * k (N/m), damping c (N·s/m) and rest length l0 (m) at i, the Jacobian factors (layout
 * above) at AXIAL_FACTORS·i unless `factors` is null, and the rank-one combination that
 * `product` asks for (AxialProduct); when `force` is given (an accumulator laid out as
 * the ends' x), f_b is also added to it at ib and subtracted at ia. The one implementation of the
 * law: the vectorized ParticleSpringSet calls it once for all its springs, so the law is
 * evaluated in this loop rather than called per spring (V8 does not inline a function
 * this size, and passes its double arguments boxed), and the single SpringEffector
 * through axialSpring.
 */
export function axialForces(
  count: number,
  ends: AxialEnds,
  k: Float64Array,
  c: Float64Array,
  l0: Float64Array,
  f: Float64Array | null,
  scalars: Float64Array,
  factors: Float64Array | null,
  symmetric: boolean,
  force: Float64Array | null = null,
  product: AxialProduct | null = null,
): void {
  const { x, v, ia, ib, pa, pb } = ends;
  const out = product === null ? null : product.out;
  const sx = product === null ? 0 : product.sx;
  const sv = product === null ? 0 : product.sv;
  for (let i = 0; i < count; i++) {
    // d and ḋ gathered as AxialEnds says (addAxialDampingForces has the same lines: through
    // one function writing a scratch array the law took 3–4 % longer on the benchmark's
    // cloth, and the power 1.4 times as long)
    const p = 3 * i;
    let dx = pb[p] - pa[p];
    let dy = pb[p + 1] - pa[p + 1];
    let dz = pb[p + 2] - pa[p + 2];
    let vx = 0;
    let vy = 0;
    let vz = 0;
    const a = ia[i];
    const b = ib[i];
    if (b >= 0) {
      dx += x[b];
      dy += x[b + 1];
      dz += x[b + 2];
      vx = v[b];
      vy = v[b + 1];
      vz = v[b + 2];
    }
    if (a >= 0) {
      dx -= x[a];
      dy -= x[a + 1];
      dz -= x[a + 2];
      vx -= v[a];
      vy -= v[a + 1];
      vz -= v[a + 2];
    }
    const ki = k[i];
    const ci = c[i];
    const rest = l0[i];
    const l = Math.sqrt(dx * dx + dy * dy + dz * dz);
    scalars[p + AXIAL_LENGTH] = l;
    let fx = 0;
    let fy = 0;
    let fz = 0;
    // the factors (layout above): 0 unless set below (the undefined direction)
    let ux = 0;
    let uy = 0;
    let uz = 0;
    let wx = 0;
    let wy = 0;
    let wz = 0;
    let a1 = 0;
    let a2 = 0;
    let a3 = 0;
    let b1 = 0;
    let b2 = 0;
    if (rest === 0) {
      fx = -ki * dx - ci * vx;
      fy = -ki * dy - ci * vy;
      fz = -ki * dz - ci * vz;
      scalars[p + AXIAL_RATE] = l > 0 ? (dx * vx + dy * vy + dz * vz) / l : 0;
      scalars[p + AXIAL_TENSION] = ki * l;
      a2 = -ki;
      b2 = -ci;
    } else if (!(l > 1e-12 * rest)) {
      scalars[p + AXIAL_RATE] = 0;
      scalars[p + AXIAL_TENSION] = 0;
    } else {
      const il = 1 / l;
      ux = dx * il;
      uy = dy * il;
      uz = dz * il;
      const ldot = ux * vx + uy * vy + uz * vz;
      const s = ki * (l - rest) + ci * ldot;
      scalars[p + AXIAL_RATE] = ldot;
      scalars[p + AXIAL_TENSION] = s;
      fx = -s * ux;
      fy = -s * uy;
      fz = -s * uz;
      const sl = (symmetric ? Math.max(s, 0) : s) * il;
      wx = vx - ldot * ux; // w = P ḋ
      wy = vy - ldot * uy;
      wz = vz - ldot * uz;
      a1 = sl - ki;
      a2 = -sl;
      a3 = symmetric ? 0 : -ci * il;
      b1 = -ci;
    }
    if (factors !== null) {
      const q = AXIAL_FACTORS * i;
      factors[q + AXIAL_U] = ux;
      factors[q + AXIAL_U + 1] = uy;
      factors[q + AXIAL_U + 2] = uz;
      factors[q + AXIAL_W] = wx;
      factors[q + AXIAL_W + 1] = wy;
      factors[q + AXIAL_W + 2] = wz;
      factors[q + AXIAL_A1] = a1;
      factors[q + AXIAL_A2] = a2;
      factors[q + AXIAL_A3] = a3;
      factors[q + AXIAL_B1] = b1;
      factors[q + AXIAL_B2] = b2;
    }
    if (out !== null) {
      // sx·A + sv·B = û gᵀ + p I with g = (sx a1 + sv b1) û + sx a3 w, p = sx a2 + sv b2
      const o = AXIAL_COMBINATION * i;
      const p1 = sx * a1 + sv * b1;
      const p3 = sx * a3;
      out[o] = ux;
      out[o + 1] = uy;
      out[o + 2] = uz;
      out[o + 3] = p1 * ux + p3 * wx;
      out[o + 4] = p1 * uy + p3 * wy;
      out[o + 5] = p1 * uz + p3 * wz;
      out[o + 6] = sx * a2 + sv * b2;
    }
    if (f !== null) {
      f[p] = fx;
      f[p + 1] = fy;
      f[p + 2] = fz;
    }
    if (force !== null) {
      if (b >= 0) {
        force[b] += fx;
        force[b + 1] += fy;
        force[b + 2] += fz;
      }
      if (a >= 0) {
        force[a] -= fx;
        force[a + 1] -= fy;
        force[a + 2] -= fz;
      }
    }
  }
}

/**
 * The blocks A (row-major, out[o..o+8]) and B (out[o+9..o+17]) from the factors at
 * factors[ifac..]: A = a1 ûûᵀ + a2 I + a3 û wᵀ, B = b1 ûûᵀ + b2 I (the header).
 */
export function axialBlocks(
  factors: Float64Array,
  ifac: number,
  out: Float64Array,
  o: number,
): void {
  const a1 = factors[ifac + AXIAL_A1];
  const a2 = factors[ifac + AXIAL_A2];
  const a3 = factors[ifac + AXIAL_A3];
  const b1 = factors[ifac + AXIAL_B1];
  const b2 = factors[ifac + AXIAL_B2];
  for (let i = 0; i < 3; i++) {
    const ui = factors[ifac + AXIAL_U + i];
    for (let j = 0; j < 3; j++) {
      const uj = factors[ifac + AXIAL_U + j];
      const diagonal = i === j ? 1 : 0;
      out[o + 3 * i + j] = a1 * ui * uj + a2 * diagonal + a3 * ui * factors[ifac + AXIAL_W + j];
      out[o + 9 + 3 * i + j] = b1 * ui * uj + b2 * diagonal;
    }
  }
}

/** One spring's inputs and factors for axialSpring: d and ḋ as the b end, a still at 0. */
const single = {
  ends: new AxialEnds(
    new Float64Array(3),
    new Float64Array(3),
    Int32Array.of(-1),
    Int32Array.of(0),
    new Float64Array(3),
    new Float64Array(3),
  ),
  k: new Float64Array(1),
  c: new Float64Array(1),
  l0: new Float64Array(1),
  factors: new Float64Array(AXIAL_FACTORS),
};

/**
 * The law for one spring (axialForces with count 1: d, ḋ, f_b and the scalars at index 0),
 * and when `jac` is given A into jac[0..8] and B into jac[9..17] (row-major).
 */
export function axialSpring(
  d: Float64Array,
  dd: Float64Array,
  k: number,
  c: number,
  l0: number,
  f: Float64Array,
  scalars: Float64Array,
  jac: Float64Array | null,
  symmetric = false,
): void {
  const { x, v } = single.ends;
  for (let j = 0; j < 3; j++) {
    x[j] = d[j];
    v[j] = dd[j];
  }
  single.k[0] = k;
  single.c[0] = c;
  single.l0[0] = l0;
  axialForces(1, single.ends, single.k, single.c, single.l0, f, scalars, single.factors, symmetric);
  if (jac !== null) axialBlocks(single.factors, 0, jac, 0);
}

/** One spring's damping force f_d on b (addAxialDampingForces with count 1) into out. */
export function axialDampingForce(
  d: Float64Array,
  dd: Float64Array,
  c: number,
  l0: number,
  out: Float64Array,
): void {
  const { x, v } = single.ends;
  for (let j = 0; j < 3; j++) {
    x[j] = d[j];
    v[j] = dd[j];
  }
  single.c[0] = c;
  single.l0[0] = l0;
  out.fill(0);
  addAxialDampingForces(1, single.ends, single.c, single.l0, out);
}
