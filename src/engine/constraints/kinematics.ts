/**
 * Kinematics of a pair of bodies (a, b) with one attachment point on each, and the
 * scalar constraint "rows" every joint is built from. Each row primitive gives, for the
 * current positions and velocities, its residual C, its Jacobian row (6 entries per body,
 * world-frame [v, ω] columns, see constraint.ts) and its quadratic-velocity term
 *     Qc = −(d/dt Cq) u     (time-independent part; motors add −Ctt themselves),
 * derived analytically from the rigid-body identities (world frame, R = R(q)):
 *     attached point   p = x + r,  r = R s:   ṗ = v + ω × r,  p̈ = a + α × r + ω × (ω × r)
 *     attached vector  e = R e₀:              ė = ω × e,      ë = α × e + ω × (ω × e)
 * The α- and a-terms of C̈ are Cq u̇; everything else is minus Qc. Ground (body −1) is the
 * world frame (x = 0, R = I, v = ω = 0), and its point/vectors are given in world
 * coordinates. Fixed bodies are read like any other body (their velocities are zero).
 * Particles have R = I and ω = 0; the constraint zeroes their rotation columns.
 *
 * Cross-product identities used below: (ω × r)·e = ω·(r × e), e·(ω × f) = ω·(f × e),
 * and ω × r = −[r]× ω.
 */

import type { Vec } from "../math/vec3";
import { cross3, dot3, length3, norm3 } from "../math/vec3";
import type { BodySystem } from "../model/body-system";

/** World-frame kinematic quantities of the two bodies and their attachment points. */
export class PairKinematics {
  /** Centres of mass (m). */
  readonly xa = new Float64Array(3);
  readonly xb = new Float64Array(3);
  /**
   * Rotation matrices (row-major 3×3, body → world) at Ra[raOffset..], Rb[rbOffset..]:
   * the body system's own storage (sys.rotation), or the identity for ground, read in
   * place rather than copied (read-only). Unlike the copies here they follow the
   * system's current pose, which is that of the last `update` wherever they are read:
   * the constraints refresh first (pair-constraint.ts, under the system's poseVersion).
   */
  Ra: Float64Array = IDENTITY;
  Rb: Float64Array = IDENTITY;
  raOffset = 0;
  rbOffset = 0;
  /** Linear and angular velocities (m/s, rad/s, world). */
  readonly va = new Float64Array(3);
  readonly vb = new Float64Array(3);
  readonly wa = new Float64Array(3);
  readonly wb = new Float64Array(3);
  /** Levers r = R s from the centre of mass to the attachment point (m, world). */
  readonly ra = new Float64Array(3);
  readonly rb = new Float64Array(3);
  /** Attachment points p = x + r (m, world). */
  readonly pa = new Float64Array(3);
  readonly pb = new Float64Array(3);
  /** Separation d = p_b − p_a and its rate ḋ = ṗ_b − ṗ_a. */
  readonly d = new Float64Array(3);
  readonly dd = new Float64Array(3);
  /** Centripetal accelerations ω × (ω × r) of the attachment points. */
  readonly ca = new Float64Array(3);
  readonly cb = new Float64Array(3);
  /** p_b − x_a: lever from a's centre of mass to b's attachment point. */
  readonly pbxa = new Float64Array(3);

  /**
   * Refreshes the positions (x, R, r, p, d, p_b − x_a) from the body system for bodies a,
   * b and local points sa, sb. Residuals and Jacobians need nothing else.
   */
  update(sys: BodySystem, a: number, sa: Float64Array, b: number, sb: Float64Array): void {
    const Ra = a < 0 ? IDENTITY : sys.rotation;
    const Rb = b < 0 ? IDENTITY : sys.rotation;
    const ia = a < 0 ? 0 : 9 * a;
    const ib = b < 0 ? 0 : 9 * b;
    this.Ra = Ra;
    this.raOffset = ia;
    this.Rb = Rb;
    this.rbOffset = ib;
    // every input in a local before the first store: V8 re-reads typed arrays after each
    // store to one (it cannot tell them apart); the 100-link chain's 100 refreshes took
    // 8.1 µs with the positions and levers read back from xa, ra, …, 6.4 µs so
    const pos = sys.pos;
    const xa0 = a < 0 ? 0 : pos[3 * a];
    const xa1 = a < 0 ? 0 : pos[3 * a + 1];
    const xa2 = a < 0 ? 0 : pos[3 * a + 2];
    const xb0 = b < 0 ? 0 : pos[3 * b];
    const xb1 = b < 0 ? 0 : pos[3 * b + 1];
    const xb2 = b < 0 ? 0 : pos[3 * b + 2];
    // r = R s (rotate's sums)
    const sa0 = sa[0];
    const sa1 = sa[1];
    const sa2 = sa[2];
    const sb0 = sb[0];
    const sb1 = sb[1];
    const sb2 = sb[2];
    const ra0 = Ra[ia] * sa0 + Ra[ia + 1] * sa1 + Ra[ia + 2] * sa2;
    const ra1 = Ra[ia + 3] * sa0 + Ra[ia + 4] * sa1 + Ra[ia + 5] * sa2;
    const ra2 = Ra[ia + 6] * sa0 + Ra[ia + 7] * sa1 + Ra[ia + 8] * sa2;
    const rb0 = Rb[ib] * sb0 + Rb[ib + 1] * sb1 + Rb[ib + 2] * sb2;
    const rb1 = Rb[ib + 3] * sb0 + Rb[ib + 4] * sb1 + Rb[ib + 5] * sb2;
    const rb2 = Rb[ib + 6] * sb0 + Rb[ib + 7] * sb1 + Rb[ib + 8] * sb2;
    const pa0 = xa0 + ra0;
    const pa1 = xa1 + ra1;
    const pa2 = xa2 + ra2;
    const pb0 = xb0 + rb0;
    const pb1 = xb1 + rb1;
    const pb2 = xb2 + rb2;
    const { xa, xb, ra, rb, pa, pb, d, pbxa } = this;
    xa[0] = xa0;
    xa[1] = xa1;
    xa[2] = xa2;
    xb[0] = xb0;
    xb[1] = xb1;
    xb[2] = xb2;
    ra[0] = ra0;
    ra[1] = ra1;
    ra[2] = ra2;
    rb[0] = rb0;
    rb[1] = rb1;
    rb[2] = rb2;
    pa[0] = pa0;
    pa[1] = pa1;
    pa[2] = pa2;
    pb[0] = pb0;
    pb[1] = pb1;
    pb[2] = pb2;
    d[0] = pb0 - pa0;
    d[1] = pb1 - pa1;
    d[2] = pb2 - pa2;
    pbxa[0] = pb0 - xa0;
    pbxa[1] = pb1 - xa1;
    pbxa[2] = pb2 - xa2;
  }

  /** Then the velocities (v, ω, ḋ, ω × (ω × r)) for the quadratic-velocity terms. */
  updateVelocities(sys: BodySystem, a: number, b: number): void {
    readTwist(sys, a, this.va, this.wa);
    readTwist(sys, b, this.vb, this.wb);
    const t = scratchT;
    // ḋ = (v_b + ω_b × r_b) − (v_a + ω_a × r_a)
    cross3(t, 0, this.wb, 0, this.rb, 0);
    cross3(t, 3, this.wa, 0, this.ra, 0);
    for (let i = 0; i < 3; i++) this.dd[i] = this.vb[i] + t[i] - this.va[i] - t[3 + i];
    // ω × (ω × r)
    cross3(this.cb, 0, this.wb, 0, t, 0);
    cross3(this.ca, 0, this.wa, 0, t, 3);
  }
}

const scratchT = new Float64Array(6);

const IDENTITY = Float64Array.of(1, 0, 0, 0, 1, 0, 0, 0, 1);

/** Linear and angular velocity of body b (zero for ground). */
function readTwist(sys: BodySystem, b: number, v: Float64Array, w: Float64Array): void {
  if (b < 0) {
    v.fill(0);
    w.fill(0);
    return;
  }
  for (let i = 0; i < 3; i++) {
    v[i] = sys.vel[3 * b + i];
    w[i] = sys.omega[3 * b + i];
  }
}

/** out = R s (R row-major 3×3 at R[iR..]). out must not alias s. */
export function rotate(out: Vec, R: Vec, s: Vec, io = 0, is = 0, iR = 0): void {
  const x = s[is];
  const y = s[is + 1];
  const z = s[is + 2];
  out[io] = R[iR] * x + R[iR + 1] * y + R[iR + 2] * z;
  out[io + 1] = R[iR + 3] * x + R[iR + 4] * y + R[iR + 5] * z;
  out[io + 2] = R[iR + 6] * x + R[iR + 7] * y + R[iR + 8] * z;
}

/** out = Rᵀ s (R at R[iR..]). out must not alias s. */
export function rotateInverse(out: Vec, R: Vec, s: Vec, io = 0, is = 0, iR = 0): void {
  const x = s[is];
  const y = s[is + 1];
  const z = s[is + 2];
  out[io] = R[iR] * x + R[iR + 3] * y + R[iR + 6] * z;
  out[io + 1] = R[iR + 1] * x + R[iR + 4] * y + R[iR + 7] * z;
  out[io + 2] = R[iR + 2] * x + R[iR + 5] * y + R[iR + 8] * z;
}

/**
 * A right-handed orthonormal frame (n, u, w) with n the normalized axis: n × u = w,
 * u × w = n. u is the world axis least aligned with n, made orthogonal to it (x unless
 * |n_x| ≥ 0.9, then y). Writes n, u, w to out[0..9).
 */
export function axisFrame(axis: ArrayLike<number>, out: Float64Array): void {
  const len = Math.hypot(axis[0], axis[1], axis[2]);
  if (!(len > 1e-12)) throw new Error("axis must be a non-zero vector");
  const nx = axis[0] / len;
  const ny = axis[1] / len;
  const nz = axis[2] / len;
  let tx = 1;
  let ty = 0;
  if (Math.abs(nx) >= 0.9) {
    tx = 0;
    ty = 1;
  }
  const tn = tx * nx + ty * ny;
  let ux = tx - tn * nx;
  let uy = ty - tn * ny;
  let uz = -tn * nz;
  const ul = length3(ux, uy, uz);
  ux /= ul;
  uy /= ul;
  uz /= ul;
  out[0] = nx;
  out[1] = ny;
  out[2] = nz;
  out[3] = ux;
  out[4] = uy;
  out[5] = uz;
  out[6] = ny * uz - nz * uy;
  out[7] = nz * ux - nx * uz;
  out[8] = nx * uy - ny * ux;
}

/** Writes a 6-entry Jacobian half-row: [t, r] at jac[6 row ..]. */
function setRow(
  jac: Float64Array,
  row: number,
  t: Vec,
  it: number,
  ts: number,
  r: Vec,
  ir: number,
  rs: number,
) {
  const o = 6 * row;
  jac[o] = ts * t[it];
  jac[o + 1] = ts * t[it + 1];
  jac[o + 2] = ts * t[it + 2];
  jac[o + 3] = rs * r[ir];
  jac[o + 4] = rs * r[ir + 1];
  jac[o + 5] = rs * r[ir + 2];
}

const ZERO3 = new Float64Array(3);
const tmp = new Float64Array(12);

// ---------------------------------------------------------------------------------------
// Point coincidence: C = p_b − p_a (3 rows, m).
//   Ċ = v_b − [r_b]× ω_b − v_a + [r_a]× ω_a  ⇒  Cq_a = [−I, [r_a]×], Cq_b = [I, −[r_b]×]
//   C̈ = Cq u̇ + ω_b × (ω_b × r_b) − ω_a × (ω_a × r_a)  ⇒  Qc = −(c_b − c_a)
// ---------------------------------------------------------------------------------------

export function pointResidual(k: PairKinematics, out: Float64Array, off: number): void {
  out[off] = k.d[0];
  out[off + 1] = k.d[1];
  out[off + 2] = k.d[2];
}

export function pointJacobian(
  k: PairKinematics,
  jacA: Float64Array,
  jacB: Float64Array,
  row: number,
): void {
  pointRowsInto(jacA, 6 * row, 6, 6, -1, k.ra);
  pointRowsInto(jacB, 6 * row, 6, 6, 1, k.rb);
}

/**
 * The 3 half-rows [σ I, −σ [r]×] of a point's rows for end sign σ = ±1 ([r]× = [[0, −z, y],
 * [z, 0, −x], [−y, x, 0]]): row i at out[o + i·stride ..], its `width` first entries written
 * (6, or 3 for a particle's translation columns). A joint's 3×6 block is stride = width = 6;
 * the stacked Jacobian's storage takes them directly (SphericalJoint.jacobianInto).
 */
export function pointRowsInto(
  out: Float64Array,
  o: number,
  stride: number,
  width: number,
  sign: number,
  r: Vec,
): void {
  const x = sign * r[0];
  const y = sign * r[1];
  const z = sign * r[2];
  const o1 = o + stride;
  const o2 = o1 + stride;
  out[o] = sign;
  out[o + 1] = 0;
  out[o + 2] = 0;
  out[o1] = 0;
  out[o1 + 1] = sign;
  out[o1 + 2] = 0;
  out[o2] = 0;
  out[o2 + 1] = 0;
  out[o2 + 2] = sign;
  if (width !== 6) return;
  out[o + 3] = 0;
  out[o + 4] = z;
  out[o + 5] = -y;
  out[o1 + 3] = -z;
  out[o1 + 4] = 0;
  out[o1 + 5] = x;
  out[o2 + 3] = y;
  out[o2 + 4] = -x;
  out[o2 + 5] = 0;
}

/**
 * scale · ∂(Cq u)/∂θ of a point's 3 rows for end sign σ, at fixed u: the change of the
 * rows' velocity σ (v + ω × r) when the body turns by δθ (its lever moving by δr = δθ × r,
 * its world velocities held), σ ω × (δθ × r) = −σ [ω]×[r]× δθ, with
 * [ω]×[r]× = r ωᵀ − (ω·r) I; so row i gains −σ scale (r_i ωᵀ − (ω·r) e_iᵀ) in its rotation
 * columns (out[o + i·stride + 3 ..]; `width` 3, a particle's rows: nothing, it has none).
 * A velocity-level Newton step needs it (ConstraintSet.velocityRows).
 */
export function addPointRowsCurvature(
  out: Float64Array,
  o: number,
  stride: number,
  width: number,
  sign: number,
  r: Vec,
  w: Vec,
  scale: number,
): void {
  if (width !== 6) return;
  const k = -sign * scale;
  const wr = w[0] * r[0] + w[1] * r[1] + w[2] * r[2];
  for (let i = 0; i < 3; i++) {
    const q = o + i * stride + 3;
    const ri = k * r[i];
    out[q] += ri * w[0];
    out[q + 1] += ri * w[1];
    out[q + 2] += ri * w[2];
    out[q + i] -= k * wr;
  }
}

/**
 * Geometric stiffness of the point rows at multipliers λ = lambda[off..off+3) (the force on
 * b at p_b, N). Their generalized force is [−λ, −r_a × λ] on a and [λ, r_b × λ] on b; with
 * λ fixed only the levers r = R s turn with the bodies, δr = δθ × r, so for the force f a
 * body receives at its lever r (f = λ on b, −λ on a)
 *   ∂τ/∂θ = [f]×[r]× = r fᵀ − (f·r) I
 * (no translation terms, no coupling between a and b). Adds to ka and kb the stabilizing
 * part of its symmetric part (see addStabilizingStiffness).
 */
export function pointRotationStiffness(
  k: PairKinematics,
  lambda: Float64Array,
  off: number,
  ka: Float64Array,
  kb: Float64Array,
): void {
  addStabilizingStiffness(ka, k.ra, lambda, off, -1);
  addStabilizingStiffness(kb, k.rb, lambda, off, 1);
}

/**
 * out += S₋, the negative semidefinite part of S = ½(r fᵀ + f rᵀ) − (f·r) I, f = σ l[o..o+3)
 * (row-major 3×3). S is the symmetric part of [f]×[r]× (its skew part ½[f × r]× vanishes
 * for a force along the lever). With a = |f||r| and c = f·r its eigenpairs are, in closed
 * form,
 *   u₊ = |f| r + |r| f : ½(a − c) ≥ 0,   u₋ = |f| r − |r| f : −½(a + c) ≤ 0,   w = r × f : −c,
 * so S₋ = S − ½(a − c) u₊u₊ᵀ/|u₊|² − max(0, −c) wwᵀ/|w|². Only S₋ enters the Newton matrix:
 * it is the restoring stiffness of a joint pulled along its lever (a hanging link: then
 * S₋ = S = −c (I − r̂r̂ᵀ)), while the positive part, a compressed or sheared lever's loss of
 * stiffness, would make the matrix indefinite and, taken with the previous step's λ in a
 * linearized step, blew the benchmark's chain up at its whip. With f = −s r̂ (pure
 * compression) S is positive semidefinite and S₋ = 0.
 */
function addStabilizingStiffness(
  out: Float64Array,
  r: Vec,
  l: Float64Array,
  o: number,
  sign: number,
): void {
  const fx = sign * l[o];
  const fy = sign * l[o + 1];
  const fz = sign * l[o + 2];
  const fn = Math.hypot(fx, fy, fz);
  const rn = Math.hypot(r[0], r[1], r[2]);
  const a = fn * rn;
  if (a === 0) return;
  const c = fx * r[0] + fy * r[1] + fz * r[2];
  // u₊ = |f| r + |r| f; zero (to rounding) for pure compression, where S₋ = 0
  const px = fn * r[0] + rn * fx;
  const py = fn * r[1] + rn * fy;
  const pz = fn * r[2] + rn * fz;
  const pn = px * px + py * py + pz * pz;
  if (pn <= 1e-24 * a * a) return;
  const sp = (0.5 * (a - c)) / pn;
  // w = r × f, its eigenvalue −c removed when positive
  const wx = r[1] * fz - r[2] * fy;
  const wy = r[2] * fx - r[0] * fz;
  const wz = r[0] * fy - r[1] * fx;
  const wn = wx * wx + wy * wy + wz * wz;
  const sw = c < 0 && wn > 0 ? -c / wn : 0;
  out[0] += r[0] * fx - c - sp * px * px - sw * wx * wx;
  out[4] += r[1] * fy - c - sp * py * py - sw * wy * wy;
  out[8] += r[2] * fz - c - sp * pz * pz - sw * wz * wz;
  const s01 = 0.5 * (r[0] * fy + fx * r[1]) - sp * px * py - sw * wx * wy;
  const s02 = 0.5 * (r[0] * fz + fx * r[2]) - sp * px * pz - sw * wx * wz;
  const s12 = 0.5 * (r[1] * fz + fy * r[2]) - sp * py * pz - sw * wy * wz;
  out[1] += s01;
  out[3] += s01;
  out[2] += s02;
  out[6] += s02;
  out[5] += s12;
  out[7] += s12;
}

export function pointQuadratic(k: PairKinematics, out: Float64Array, off: number): void {
  out[off] = k.ca[0] - k.cb[0];
  out[off + 1] = k.ca[1] - k.cb[1];
  out[off + 2] = k.ca[2] - k.cb[2];
}

// ---------------------------------------------------------------------------------------
// Perpendicularity of two attached unit vectors: C = e·f, e fixed in a, f fixed in b.
//   Ċ = (ω_a × e)·f + e·(ω_b × f) = ω_a·(e × f) + ω_b·(f × e)
//     ⇒ Cq_a = [0, (e × f)ᵀ], Cq_b = [0, (f × e)ᵀ]
//   C̈ = Cq u̇ + (ω_a×(ω_a×e))·f + 2 (ω_a×e)·(ω_b×f) + e·(ω_b×(ω_b×f))
// ---------------------------------------------------------------------------------------

export function dotJacobian(
  e: Vec,
  ie: number,
  f: Vec,
  jf: number,
  jacA: Float64Array,
  jacB: Float64Array,
  row: number,
): void {
  cross3(tmp, 0, e, ie, f, jf);
  setRow(jacA, row, ZERO3, 0, 0, tmp, 0, 1);
  setRow(jacB, row, ZERO3, 0, 0, tmp, 0, -1);
}

/** Time-independent part of C̈ for C = e·f (the negative of Qc). */
export function dotQuadraticPart(
  k: PairKinematics,
  e: Vec,
  ie: number,
  f: Vec,
  jf: number,
): number {
  const t = tmp;
  cross3(t, 0, k.wa, 0, e, ie); // ω_a × e
  cross3(t, 3, k.wb, 0, f, jf); // ω_b × f
  cross3(t, 6, k.wa, 0, t, 0); // ω_a × (ω_a × e)
  cross3(t, 9, k.wb, 0, t, 3); // ω_b × (ω_b × f)
  return dot3(t, 6, f, jf) + 2 * dot3(t, 0, t, 3) + dot3(e, ie, t, 9);
}

/** Time derivative of e·f: ω_a·(e × f) + ω_b·(f × e). */
export function dotRate(k: PairKinematics, e: Vec, ie: number, f: Vec, jf: number): number {
  cross3(tmp, 0, e, ie, f, jf);
  return dot3(k.wa, 0, tmp, 0) - dot3(k.wb, 0, tmp, 0);
}

// ---------------------------------------------------------------------------------------
// Offset of b's point along a vector fixed in a: C = d·e (m), d = p_b − p_a.
//   Ċ = ḋ·e + d·(ω_a × e); ḋ = v_b + ω_b × r_b − v_a − ω_a × r_a
//     ⇒ Cq_b = [eᵀ, (r_b × e)ᵀ], Cq_a = [−eᵀ, −((p_b − x_a) × e)ᵀ]
//   (a force λe applied at p_b on b and −λe at the same point on a).
//   C̈ = Cq u̇ + (c_b − c_a)·e + 2 ḋ·(ω_a × e) + d·(ω_a × (ω_a × e))
// ---------------------------------------------------------------------------------------

export function alongJacobian(
  k: PairKinematics,
  e: Vec,
  ie: number,
  jacA: Float64Array,
  jacB: Float64Array,
  row: number,
): void {
  cross3(tmp, 0, k.rb, 0, e, ie);
  cross3(tmp, 3, k.pbxa, 0, e, ie);
  setRow(jacB, row, e, ie, 1, tmp, 0, 1);
  setRow(jacA, row, e, ie, -1, tmp, 3, -1);
}

/** Time-independent part of C̈ for C = d·e (the negative of Qc). */
export function alongQuadraticPart(k: PairKinematics, e: Vec, ie: number): number {
  const t = tmp;
  cross3(t, 0, k.wa, 0, e, ie); // ω_a × e
  cross3(t, 3, k.wa, 0, t, 0); // ω_a × (ω_a × e)
  let s = 0;
  for (let i = 0; i < 3; i++) s += (k.cb[i] - k.ca[i]) * e[ie + i];
  return s + 2 * dot3(k.dd, 0, t, 0) + dot3(k.d, 0, t, 3);
}

// ---------------------------------------------------------------------------------------
// Distance: C = |d| − L (m), n = d/|d|.
//   Ċ = n·ḋ  ⇒ Cq_a = [−nᵀ, −(r_a × n)ᵀ], Cq_b = [nᵀ, (r_b × n)ᵀ]
//   C̈ = n·d̈ + (|ḋ|² − (n·ḋ)²)/|d|, d̈ = (Cq-part) + c_b − c_a
// ---------------------------------------------------------------------------------------

export function distanceJacobian(
  k: PairKinematics,
  jacA: Float64Array,
  jacB: Float64Array,
  row: number,
): void {
  const len = norm3(k.d);
  const inv = len > 0 ? 1 / len : 0;
  const n = tmp;
  n[0] = k.d[0] * inv;
  n[1] = k.d[1] * inv;
  n[2] = k.d[2] * inv;
  cross3(n, 3, k.rb, 0, n, 0);
  cross3(n, 6, k.ra, 0, n, 0);
  setRow(jacB, row, n, 0, 1, n, 3, 1);
  setRow(jacA, row, n, 0, -1, n, 6, -1);
}

/** Time-independent part of C̈ for C = |d| − L (the negative of Qc). */
export function distanceQuadraticPart(k: PairKinematics): number {
  const len = norm3(k.d);
  if (!(len > 0)) return 0;
  const inv = 1 / len;
  let nc = 0;
  let nd = 0;
  let dd2 = 0;
  for (let i = 0; i < 3; i++) {
    const n = k.d[i] * inv;
    nc += n * (k.cb[i] - k.ca[i]);
    nd += n * k.dd[i];
    dd2 += k.dd[i] * k.dd[i];
  }
  return nc + (dd2 - nd * nd) * inv;
}

// ---------------------------------------------------------------------------------------
// Relative rotation angle of b about an axis of a (motors): with u_a, w_a = n_a × u_a
// fixed in a and u_b fixed in b (u_b = u_a in the model pose),
//   c = u_a·u_b,  s = w_a·u_b,  φ = atan2(s, c),
// positive for a right-handed rotation of b relative to a about n_a. With ρ = c² + s²:
//   φ̇ = (c ṡ − s ċ)/ρ                          ⇒ Cq = (c Cq_s − s Cq_c)/ρ
//   φ̈ = Cq u̇ + (c q_s − s q_c)/ρ − 2 (c ṡ − s ċ)(c ċ + s ṡ)/ρ²
// with q_c, q_s the time-independent parts of c̈, s̈ (dot rows above). Exact for any
// pose: on the revolute's manifold (u_b ⊥ n_a) Cq reduces to ±[0, n_a].
// ---------------------------------------------------------------------------------------

const angleScratch = new Float64Array(24);

/** Jacobian row of φ (rotational columns only). */
export function angleJacobian(
  ua: Vec,
  wa: Vec,
  ub: Vec,
  jacA: Float64Array,
  jacB: Float64Array,
  row: number,
): void {
  const c = dot3(ua, 0, ub, 0);
  const s = dot3(wa, 0, ub, 0);
  const rho = Math.max(c * c + s * s, 1e-300);
  const t = angleScratch;
  // Cq_c (a side, rotational) = u_a × u_b ; Cq_s = w_a × u_b ; b side is the negative.
  cross3(t, 0, ua, 0, ub, 0);
  cross3(t, 3, wa, 0, ub, 0);
  for (let i = 0; i < 3; i++) t[6 + i] = (c * t[3 + i] - s * t[i]) / rho;
  setRow(jacA, row, ZERO3, 0, 0, t, 6, 1);
  setRow(jacB, row, ZERO3, 0, 0, t, 6, -1);
}

/**
 * The derivatives of angleJacobian's a-side row t = ∂φ/∂θ_a = (c r − s p)/ρ (p = u_a × u_b,
 * r = w_a × u_b; the b side is −t) with respect to the rotations δθ_a, δθ_b of a and b
 * (world rotation vectors, u ← u + δθ × u): ta = ∂t/∂θ_a, tb = ∂t/∂θ_b, 3×3 row-major.
 * With dc = (δθ_a − δθ_b)·p, ds = (δθ_a − δθ_b)·r, dp = (u_a u_bᵀ − c I) δθ_a +
 * (c I − u_b u_aᵀ) δθ_b, dr = (w_a u_bᵀ − s I) δθ_a + (s I − u_b w_aᵀ) δθ_b and
 * dρ = 2 (c dc + s ds):
 *   ta = (r pᵀ − p rᵀ + c w_a u_bᵀ − s u_a u_bᵀ)/ρ − 2 t (c p + s r)ᵀ/ρ
 *   tb = (p rᵀ − r pᵀ − c u_b w_aᵀ + s u_b u_aᵀ)/ρ + 2 t (c p + s r)ᵀ/ρ
 * (the c s I terms cancel; checked against central differences to 1e-10).
 */
export function angleCurvature(
  ua: Vec,
  wa: Vec,
  ub: Vec,
  ta: Float64Array,
  tb: Float64Array,
): void {
  const c = dot3(ua, 0, ub, 0);
  const s = dot3(wa, 0, ub, 0);
  const rho = Math.max(c * c + s * s, 1e-300);
  const v = angleScratch;
  // p at 0, r at 3, t at 6, c p + s r at 9
  cross3(v, 0, ua, 0, ub, 0);
  cross3(v, 3, wa, 0, ub, 0);
  for (let i = 0; i < 3; i++) {
    v[6 + i] = (c * v[3 + i] - s * v[i]) / rho;
    v[9 + i] = c * v[i] + s * v[3 + i];
  }
  for (let i = 0; i < 3; i++)
    for (let j = 0; j < 3; j++) {
      const skew = v[3 + i] * v[j] - v[i] * v[3 + j];
      const turn = (2 * v[6 + i] * v[9 + j]) / rho;
      ta[3 * i + j] = (skew + c * wa[i] * ub[j] - s * ua[i] * ub[j]) / rho - turn;
      tb[3 * i + j] = (-skew - c * ub[i] * wa[j] + s * ub[i] * ua[j]) / rho + turn;
    }
}

/** Time-independent part of φ̈ (the negative of Qc without the drive's Ctt). */
export function angleQuadraticPart(k: PairKinematics, ua: Vec, wa: Vec, ub: Vec): number {
  const c = dot3(ua, 0, ub, 0);
  const s = dot3(wa, 0, ub, 0);
  const rho = Math.max(c * c + s * s, 1e-300);
  const cd = dotRate(k, ua, 0, ub, 0);
  const sd = dotRate(k, wa, 0, ub, 0);
  const qc = dotQuadraticPart(k, ua, 0, ub, 0);
  const qs = dotQuadraticPart(k, wa, 0, ub, 0);
  const rate = c * sd - s * cd;
  return (c * qs - s * qc) / rho - (2 * rate * (c * cd + s * sd)) / (rho * rho);
}
