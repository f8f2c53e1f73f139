/**
 * Quaternion algebra written out for the tests' own references (independent of the
 * engine's math): unit quaternions [w, x, y, z], the engine's convention.
 */

export type V3 = [number, number, number];
export type Q4 = [number, number, number, number];

/** Quaternion [w, x, y, z] of a rotation by `angle` (rad) about `axis` (normalized here). */
export function axisAngle(axis: readonly number[], angle: number): Q4 {
  const n = Math.hypot(axis[0], axis[1], axis[2]);
  const s = Math.sin(angle / 2) / n;
  return [Math.cos(angle / 2), axis[0] * s, axis[1] * s, axis[2] * s];
}

/** Hamilton product p ⊗ q. */
export function qmul(p: readonly number[], q: readonly number[]): Q4 {
  const [pw, px, py, pz] = p;
  const [qw, qx, qy, qz] = q;
  return [
    pw * qw - px * qx - py * qy - pz * qz,
    pw * qx + px * qw + py * qz - pz * qy,
    pw * qy - px * qz + py * qw + pz * qx,
    pw * qz + px * qy - py * qx + pz * qw,
  ];
}

/**
 * R(q) v for a unit quaternion q = [w, x, y, z]: v + 2w (u × v) + 2 u × (u × v),
 * u = (x, y, z).
 */
export function rotate(q: readonly number[], v: readonly number[]): V3 {
  const [w, x, y, z] = q;
  const tx = 2 * (y * v[2] - z * v[1]);
  const ty = 2 * (z * v[0] - x * v[2]);
  const tz = 2 * (x * v[1] - y * v[0]);
  return [
    v[0] + w * tx + (y * tz - z * ty),
    v[1] + w * ty + (z * tx - x * tz),
    v[2] + w * tz + (x * ty - y * tx),
  ];
}

/** The rotation matrix R(q) of a unit quaternion q = [w, x, y, z], by rows. */
export function rotationMatrix(q: readonly number[]): V3[] {
  const [w, x, y, z] = q;
  return [
    [1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
    [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
    [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)],
  ];
}

/** A point p of a body's frame in the world: x + R(q) p, for the body's position x and q. */
export function bodyPoint(
  b: { position: readonly number[]; orientation: readonly number[] },
  p: readonly number[],
): V3 {
  const R = rotationMatrix(b.orientation);
  return [0, 1, 2].map(
    (i) => b.position[i] + R[i][0] * p[0] + R[i][1] * p[1] + R[i][2] * p[2],
  ) as V3;
}

/**
 * A rotation drawn uniformly (Shoemake, "Uniform random rotations", Graphics Gems III,
 * 1992) from three uniform numbers of r in [0, 1), drawn in that order.
 */
export function randomQuat(r: () => number): Q4 {
  const u1 = r();
  const u2 = 2 * Math.PI * r();
  const u3 = 2 * Math.PI * r();
  const a = Math.sqrt(1 - u1);
  const b = Math.sqrt(u1);
  return [a * Math.cos(u2), a * Math.sin(u2), b * Math.cos(u3), b * Math.sin(u3)];
}
