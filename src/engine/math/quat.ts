/**
 * Unit quaternions [w, x, y, z] (Hamilton convention, w scalar first) at an offset of a
 * Float64Array. A body's orientation q maps body-frame vectors to the world:
 * v_world = q ⊗ v_body ⊗ q*.
 */
import type { Vec } from "./vec3";

/** q* (CONJUGATE) for quatRotateInverse and quatDifference. */
const CONJUGATE = new Float64Array(4);
/** exp(θ/2) in quatRotateByVector. */
const TURN = new Float64Array(4);
/** A product before it is copied back (quatRotateByVector) or read (quatDifference). */
const PRODUCT = new Float64Array(4);

/** The conjugate q* = (w, −x, −y, −z) of q, in the scratch CONJUGATE. */
function conjugate(q: Vec, iq: number): Float64Array {
  CONJUGATE[0] = q[iq];
  CONJUGATE[1] = -q[iq + 1];
  CONJUGATE[2] = -q[iq + 2];
  CONJUGATE[3] = -q[iq + 3];
  return CONJUGATE;
}

/** out = a ⊗ b. out must alias neither. */
export function quatMul(out: Vec, io: number, a: Vec, ia: number, b: Vec, ib: number): void {
  const aw = a[ia];
  const ax = a[ia + 1];
  const ay = a[ia + 2];
  const az = a[ia + 3];
  const bw = b[ib];
  const bx = b[ib + 1];
  const by = b[ib + 2];
  const bz = b[ib + 3];
  out[io] = aw * bw - ax * bx - ay * by - az * bz;
  out[io + 1] = aw * bx + ax * bw + ay * bz - az * by;
  out[io + 2] = aw * by - ax * bz + ay * bw + az * bx;
  out[io + 3] = aw * bz + ax * by - ay * bx + az * bw;
}

/** out = R(q) v : rotates a body-frame vector into the world. out may alias v. */
export function quatRotate(out: Vec, io: number, q: Vec, iq: number, v: Vec, iv: number): void {
  const w = q[iq];
  const x = q[iq + 1];
  const y = q[iq + 2];
  const z = q[iq + 3];
  const vx = v[iv];
  const vy = v[iv + 1];
  const vz = v[iv + 2];
  // t = 2 (q_vec × v);  v' = v + w t + q_vec × t
  const tx = 2 * (y * vz - z * vy);
  const ty = 2 * (z * vx - x * vz);
  const tz = 2 * (x * vy - y * vx);
  out[io] = vx + w * tx + (y * tz - z * ty);
  out[io + 1] = vy + w * ty + (z * tx - x * tz);
  out[io + 2] = vz + w * tz + (x * ty - y * tx);
}

/** out = R(q)ᵀ v = R(q*) v : world vector into the body frame. out may alias v. */
export function quatRotateInverse(out: Vec, io: number, q: Vec, iq: number, v: Vec, iv: number) {
  quatRotate(out, io, conjugate(q, iq), 0, v, iv);
}

/** Rotation matrix R(q), row-major 3×3, of a unit quaternion. */
export function quatToMat3(out: Vec, io: number, q: Float64Array, iq: number): void {
  quatToMat3Inertias(out, io, q, iq, null, null, null, null, 0);
}

/**
 * Rotation matrix of q/|q| (row-major 3×3), for any non-zero q: with s = 2/|q|², so that a
 * slightly denormalized quaternion still gives a rotation, which keeps integrator drift in
 * |q| from shearing collision shapes (geometry/pose.ts). The zero quaternion gives I.
 */
export function quatToMat3Normalized(out: Vec, io: number, q: Float64Array, iq: number): void {
  quatToMat3Inertias(out, io, q, iq, null, null, null, null, 0, true);
}

/**
 * R = R(q) (row-major 3×3) into out[io..io+8] and, when given, R diag(d) Rᵀ into dOut and
 * R diag(e) Rᵀ into eOut (both at io; d, e at id..id+2): a rigid body's world inertia and
 * its inverse from its principal moments and their reciprocals (18 multiplications each,
 * against 54 for a general congruence). R's entries are kept in local variables for the
 * two products rather than read back from `out` after it is written: a load from a typed
 * array after a store to one that may share its buffer cannot be served from a register
 * (same result to the bit; bench/README.md, "World inertias"). q is a Float64Array, never a
 * plain array: these kernels run for every body at every step, and one call with a plain
 * array makes their loads polymorphic, after which V8's optimized code boxes each entry it
 * reads (the collision detector's set-up did that once: 18 KB a step on a pile of 64
 * spheres; test/engine/simulation/step-allocation.test.ts).
 */
export function quatToMat3Inertias(
  out: Vec,
  io: number,
  q: Float64Array,
  iq: number,
  d: Vec | null,
  dOut: Vec | null,
  e: Vec | null,
  eOut: Vec | null,
  id: number,
  normalize = false,
): void {
  const w = q[iq];
  const x = q[iq + 1];
  const y = q[iq + 2];
  const z = q[iq + 3];
  // s = 2 for a unit quaternion, 2/|q|² to normalize (quatToMat3Normalized). Written as
  // x·(y s): with s = 2 every product and sum is the one of 2 (x y − w z) etc. doubled
  // exactly, so both uses share these lines to the bit.
  const n2 = normalize ? w * w + x * x + y * y + z * z : 1;
  const s = n2 > 0 ? 2 / n2 : 0;
  const xs = x * s;
  const ys = y * s;
  const zs = z * s;
  const wx = w * xs;
  const wy = w * ys;
  const wz = w * zs;
  const xx = x * xs;
  const xy = x * ys;
  const xz = x * zs;
  const yy = y * ys;
  const yz = y * zs;
  const zz = z * zs;
  const r00 = 1 - (yy + zz);
  const r01 = xy - wz;
  const r02 = xz + wy;
  const r10 = xy + wz;
  const r11 = 1 - (xx + zz);
  const r12 = yz - wx;
  const r20 = xz - wy;
  const r21 = yz + wx;
  const r22 = 1 - (xx + yy);
  out[io] = r00;
  out[io + 1] = r01;
  out[io + 2] = r02;
  out[io + 3] = r10;
  out[io + 4] = r11;
  out[io + 5] = r12;
  out[io + 6] = r20;
  out[io + 7] = r21;
  out[io + 8] = r22;
  // R diag(d) Rᵀ into dOut, then R diag(e) Rᵀ into eOut (symmetric): written once, in a
  // loop over the two rather than a helper taking R's entries (a call V8 does not inline,
  // from the articulated tree's setState, passed its thirteen doubles as heap numbers)
  for (let pass = 0; pass < 2; pass++) {
    const diag = pass === 0 ? d : e;
    const target = pass === 0 ? dOut : eOut;
    if (diag === null || target === null) continue;
    const d0 = diag[id];
    const d1 = diag[id + 1];
    const d2 = diag[id + 2];
    const a00 = r00 * d0;
    const a01 = r01 * d1;
    const a02 = r02 * d2;
    const a10 = r10 * d0;
    const a11 = r11 * d1;
    const a12 = r12 * d2;
    const a20 = r20 * d0;
    const a21 = r21 * d1;
    const a22 = r22 * d2;
    const m01 = a00 * r10 + a01 * r11 + a02 * r12;
    const m02 = a00 * r20 + a01 * r21 + a02 * r22;
    const m12 = a10 * r20 + a11 * r21 + a12 * r22;
    target[io] = a00 * r00 + a01 * r01 + a02 * r02;
    target[io + 1] = m01;
    target[io + 2] = m02;
    target[io + 3] = m01;
    target[io + 4] = a10 * r10 + a11 * r11 + a12 * r12;
    target[io + 5] = m12;
    target[io + 6] = m02;
    target[io + 7] = m12;
    target[io + 8] = a20 * r20 + a21 * r21 + a22 * r22;
  }
}

/**
 * Normalizes in place. Returns nothing: quatRotateByVector calls it for every rotating body
 * at every Newton iterate, and where V8 did not inline it the norm it returned was a heap
 * number nobody read (1.6 KB a step on the benchmark's 100 spheres at the defaults).
 */
export function quatNormalize(q: Vec, iq: number): void {
  const w = q[iq];
  const x = q[iq + 1];
  const y = q[iq + 2];
  const z = q[iq + 3];
  const n = Math.sqrt(w * w + x * x + y * y + z * z); // not Math.hypot: see length3 (vec3.ts)
  if (n > 0) {
    q[iq] /= n;
    q[iq + 1] /= n;
    q[iq + 2] /= n;
    q[iq + 3] /= n;
  }
}

/**
 * Rotates q in place by the WORLD-frame rotation vector θ = s·(d[id..id+2]) (rad):
 * q ← exp(θ/2) ⊗ q, using the exact exponential map (so a constant world angular velocity
 * ω over h is reproduced exactly with θ = h ω), then renormalizes against roundoff.
 */
export function quatRotateByVector(q: Vec, iq: number, d: Vec, id: number, s: number): void {
  const tx = s * d[id];
  const ty = s * d[id + 1];
  const tz = s * d[id + 2];
  const angle = Math.sqrt(tx * tx + ty * ty + tz * tz);
  if (angle === 0) return;
  const half = 0.5 * angle;
  // sin(half)/angle, with its series near zero to keep full precision.
  const k = angle < 1e-4 ? 0.5 - (angle * angle) / 48 : Math.sin(half) / angle;
  TURN[0] = Math.cos(half);
  TURN[1] = k * tx;
  TURN[2] = k * ty;
  TURN[3] = k * tz;
  quatMul(PRODUCT, 0, TURN, 0, q, iq);
  q[iq] = PRODUCT[0];
  q[iq + 1] = PRODUCT[1];
  q[iq + 2] = PRODUCT[2];
  q[iq + 3] = PRODUCT[3];
  quatNormalize(q, iq);
}

/**
 * World-frame rotation vector θ with exp(θ) ⊗ qa = qb (the "difference" qb ⊖ qa), taking
 * the short way round. Used by finite-difference tests and frame springs.
 */
export function quatDifference(out: Vec, io: number, qb: Vec, ib: number, qa: Vec, ia: number) {
  // d = qb ⊗ qa*
  quatMul(PRODUCT, 0, qb, ib, conjugate(qa, ia), 0);
  let w = PRODUCT[0];
  let x = PRODUCT[1];
  let y = PRODUCT[2];
  let z = PRODUCT[3];
  if (w < 0) {
    w = -w;
    x = -x;
    y = -y;
    z = -z;
  }
  const sn = Math.sqrt(x * x + y * y + z * z);
  const angle = 2 * Math.atan2(sn, w);
  const k = sn < 1e-12 ? 2 / Math.max(w, 1e-300) : angle / sn;
  out[io] = k * x;
  out[io + 1] = k * y;
  out[io + 2] = k * z;
}
