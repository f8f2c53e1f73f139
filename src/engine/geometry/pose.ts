/**
 * Minimal private pose helpers for the collision layer (kept here so that the geometry
 * does not depend on src/engine/math while it is being written).
 *
 * Conventions (DESIGN.md): right-handed frames, quaternions [w, x, y, z] of unit norm.
 * A rotation matrix R is stored row-major in a Float64Array(9), R[3*i + j]; its column j
 * is the body's local axis j expressed in the world, so x_world = p + R x_local.
 */

/** A rigid placement: x_world = p + R x_local. */
export class WorldPose {
  /** Origin of the frame in the world, metres. */
  readonly p = new Float64Array(3);
  /** Row-major rotation matrix, columns are the frame's axes in the world. */
  readonly R = new Float64Array([1, 0, 0, 0, 1, 0, 0, 0, 1]);

  /** Places the frame at position p[po..po+2] with orientation q[qo..qo+3] ([w,x,y,z]). */
  set(p: ArrayLike<number>, q: ArrayLike<number>, po = 0, qo = 0): this {
    this.p[0] = p[po];
    this.p[1] = p[po + 1];
    this.p[2] = p[po + 2];
    quatToMatrix(q[qo], q[qo + 1], q[qo + 2], q[qo + 3], this.R);
    return this;
  }
}

/**
 * Rotation matrix of the quaternion (w, x, y, z), written row-major into R.
 * Uses s = 2/|q|² so that a slightly denormalized quaternion still gives a rotation
 * (the matrix of q/|q|), which keeps integrator drift in |q| from shearing shapes.
 */
export function quatToMatrix(w: number, x: number, y: number, z: number, R: Float64Array): void {
  const n2 = w * w + x * x + y * y + z * z;
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
  R[0] = 1 - (yy + zz);
  R[1] = xy - wz;
  R[2] = xz + wy;
  R[3] = xy + wz;
  R[4] = 1 - (xx + zz);
  R[5] = yz - wx;
  R[6] = xz - wy;
  R[7] = yz + wx;
  R[8] = 1 - (xx + yy);
}

/**
 * World pose of a shape: out = body ∘ local, i.e. p = pb + Rb pl and R = Rb Rl, with the
 * body pose given as position pos[3b..] and quaternion quat[4b..]. The local rotation
 * is passed as its matrix (computed once when the detector is built).
 */
export function composePose(
  pos: ArrayLike<number>,
  quat: ArrayLike<number>,
  body: number,
  localP: Float64Array,
  localR: Float64Array,
  out: WorldPose,
  scratchR: Float64Array,
): void {
  const po = 3 * body;
  const qo = 4 * body;
  quatToMatrix(quat[qo], quat[qo + 1], quat[qo + 2], quat[qo + 3], scratchR);
  const B = scratchR;
  const p = out.p;
  const lx = localP[0];
  const ly = localP[1];
  const lz = localP[2];
  p[0] = pos[po] + B[0] * lx + B[1] * ly + B[2] * lz;
  p[1] = pos[po + 1] + B[3] * lx + B[4] * ly + B[5] * lz;
  p[2] = pos[po + 2] + B[6] * lx + B[7] * ly + B[8] * lz;
  const R = out.R;
  for (let i = 0; i < 3; i++) {
    const b0 = B[3 * i];
    const b1 = B[3 * i + 1];
    const b2 = B[3 * i + 2];
    for (let j = 0; j < 3; j++) {
      R[3 * i + j] = b0 * localR[j] + b1 * localR[3 + j] + b2 * localR[6 + j];
    }
  }
}
