/**
 * World poses of the collision layer: a frame's position and rotation matrix, and a shape's
 * pose composed from its body's. Rotations come from quaternions through
 * math/quat.ts quatToMat3Normalized (integrator drift in |q| must not shear shapes).
 *
 * Conventions (DESIGN.md): right-handed frames, quaternions [w, x, y, z] of unit norm.
 * A rotation matrix R is stored row-major in a Float64Array(9), R[3*i + j]; its column j
 * is the body's local axis j expressed in the world, so x_world = p + R x_local.
 */

import { quatToMat3Normalized } from "../math/quat";

/** A rigid placement: x_world = p + R x_local. */
export class WorldPose {
  /** Origin of the frame in the world, metres. */
  readonly p = new Float64Array(3);
  /** Row-major rotation matrix, columns are the frame's axes in the world. */
  readonly R = new Float64Array([1, 0, 0, 0, 1, 0, 0, 0, 1]);

  /** Places the frame at position p[po..po+2] with orientation q[qo..qo+3] ([w,x,y,z]). */
  set(p: ArrayLike<number>, q: Float64Array, po = 0, qo = 0): this {
    this.p[0] = p[po];
    this.p[1] = p[po + 1];
    this.p[2] = p[po + 2];
    quatToMat3Normalized(this.R, 0, q, qo);
    return this;
  }
}

/**
 * World pose of a shape: out = body ∘ local, i.e. p = pb + Rb pl and R = Rb Rl, with the
 * body pose given as position pos[3b..] and quaternion quat[4b..]. The local rotation
 * is passed as its matrix (computed once when the detector is built).
 */
export function composePose(
  pos: ArrayLike<number>,
  quat: Float64Array,
  body: number,
  localP: Float64Array,
  localR: Float64Array,
  out: WorldPose,
  scratchR: Float64Array,
): void {
  const po = 3 * body;
  const qo = 4 * body;
  quatToMat3Normalized(scratchR, 0, quat, qo);
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
