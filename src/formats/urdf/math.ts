/**
 * The little 3-D algebra the URDF importer needs (the converter sits outside the engine and
 * uses none of its numerics). Matrices are row-major 3×3 arrays of 9 numbers; a Pose maps
 * a child frame into its parent: x_parent = R x_child + p. Quaternions are [w, x, y, z].
 */

export type Vec3 = [number, number, number];
export type Mat3 = number[];

export interface Pose {
  R: Mat3;
  p: Vec3;
}

export const IDENTITY: Mat3 = [1, 0, 0, 0, 1, 0, 0, 0, 1];
export const IDENTITY_POSE: Pose = { R: IDENTITY, p: [0, 0, 0] };

export function mul(a: Mat3, b: Mat3): Mat3 {
  const out = new Array<number>(9);
  for (let i = 0; i < 3; i++)
    for (let j = 0; j < 3; j++)
      out[3 * i + j] = a[3 * i] * b[j] + a[3 * i + 1] * b[3 + j] + a[3 * i + 2] * b[6 + j];
  return out;
}

export function transpose(a: Mat3): Mat3 {
  return [a[0], a[3], a[6], a[1], a[4], a[7], a[2], a[5], a[8]];
}

export function apply(a: Mat3, v: readonly number[]): Vec3 {
  return [
    a[0] * v[0] + a[1] * v[1] + a[2] * v[2],
    a[3] * v[0] + a[4] * v[1] + a[5] * v[2],
    a[6] * v[0] + a[7] * v[1] + a[8] * v[2],
  ];
}

export const add = (a: readonly number[], b: readonly number[]): Vec3 => [
  a[0] + b[0],
  a[1] + b[1],
  a[2] + b[2],
];
export const sub = (a: readonly number[], b: readonly number[]): Vec3 => [
  a[0] - b[0],
  a[1] - b[1],
  a[2] - b[2],
];
export const scale = (a: readonly number[], s: number): Vec3 => [a[0] * s, a[1] * s, a[2] * s];
export const norm = (a: readonly number[]): number => Math.hypot(a[0], a[1], a[2]);

/**
 * URDF's rpy: fixed-axis roll, pitch, yaw (rad) about x, y, z of the parent frame, in that
 * order, so R = Rz(yaw) Ry(pitch) Rx(roll).
 */
export function rpyToMatrix(rpy: readonly number[]): Mat3 {
  const [cr, sr] = [Math.cos(rpy[0]), Math.sin(rpy[0])];
  const [cp, sp] = [Math.cos(rpy[1]), Math.sin(rpy[1])];
  const [cy, sy] = [Math.cos(rpy[2]), Math.sin(rpy[2])];
  return [
    cy * cp,
    cy * sp * sr - sy * cr,
    cy * sp * cr + sy * sr,
    sy * cp,
    sy * sp * sr + cy * cr,
    sy * sp * cr - cy * sr,
    -sp,
    cp * sr,
    cp * cr,
  ];
}

/** A Pose from URDF's <origin xyz rpy>. */
export function originPose(xyz: Vec3, rpy: Vec3): Pose {
  return { R: rpyToMatrix(rpy), p: xyz };
}

/** a ∘ b: the pose of b's child frame in a's parent frame. */
export function compose(a: Pose, b: Pose): Pose {
  return { R: mul(a.R, b.R), p: add(a.p, apply(a.R, b.p)) };
}

/** A point of the world in the frame of `pose`: Rᵀ (x − p). */
export function toLocal(pose: Pose, x: readonly number[]): Vec3 {
  return apply(transpose(pose.R), sub(x, pose.p));
}

/** The unit quaternion [w, x, y, z] of a rotation matrix (Shepperd's method), w ≥ 0. */
export function quaternionOf(m: Mat3): [number, number, number, number] {
  const [m00, m01, m02, m10, m11, m12, m20, m21, m22] = m;
  const tr = m00 + m11 + m22;
  let q: [number, number, number, number];
  if (tr > 0) {
    const s = 2 * Math.sqrt(1 + tr);
    q = [s / 4, (m21 - m12) / s, (m02 - m20) / s, (m10 - m01) / s];
  } else if (m00 > m11 && m00 > m22) {
    const s = 2 * Math.sqrt(1 + m00 - m11 - m22);
    q = [(m21 - m12) / s, s / 4, (m01 + m10) / s, (m02 + m20) / s];
  } else if (m11 > m22) {
    const s = 2 * Math.sqrt(1 + m11 - m00 - m22);
    q = [(m02 - m20) / s, (m01 + m10) / s, s / 4, (m12 + m21) / s];
  } else {
    const s = 2 * Math.sqrt(1 + m22 - m00 - m11);
    q = [(m10 - m01) / s, (m02 + m20) / s, (m12 + m21) / s, s / 4];
  }
  const n = Math.hypot(...q) * (q[0] < 0 ? -1 : 1);
  return [q[0] / n, q[1] / n, q[2] / n, q[3] / n];
}

/** R I Rᵀ: a tensor given in a frame rotated by R, expressed in the outer frame (symmetrized). */
export function rotateTensor(R: Mat3, I: Mat3): Mat3 {
  const t = mul(mul(R, I), transpose(R));
  return symmetric(t);
}

export function symmetric(t: Mat3): Mat3 {
  const s = (i: number, j: number) => (t[3 * i + j] + t[3 * j + i]) / 2;
  return [t[0], s(0, 1), s(0, 2), s(0, 1), t[4], s(1, 2), s(0, 2), s(1, 2), t[8]];
}

/** m (|d|² E − d dᵀ): the parallel-axis term of a point mass m at offset d. */
export function parallelAxis(m: number, d: readonly number[]): Mat3 {
  const dd = d[0] * d[0] + d[1] * d[1] + d[2] * d[2];
  const out = new Array<number>(9);
  for (let i = 0; i < 3; i++)
    for (let j = 0; j < 3; j++) out[3 * i + j] = m * ((i === j ? dd : 0) - d[i] * d[j]);
  return out;
}

export function addMat(a: Mat3, b: Mat3): Mat3 {
  return a.map((x, i) => x + b[i]);
}

/** Whether a symmetric 3×3 is positive definite (Sylvester's leading minors). */
export function positiveDefinite(a: Mat3): boolean {
  const m1 = a[0];
  const m2 = a[0] * a[4] - a[1] * a[3];
  const m3 =
    a[0] * (a[4] * a[8] - a[5] * a[7]) -
    a[1] * (a[3] * a[8] - a[5] * a[6]) +
    a[2] * (a[3] * a[7] - a[4] * a[6]);
  return m1 > 0 && m2 > 0 && m3 > 0;
}
