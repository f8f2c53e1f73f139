/**
 * 3-vectors stored in Float64Array (or number[]) at an offset, as in MuJoCo's mju_*
 * functions: every function reads and writes explicit offsets so that structure-of-arrays
 * state (positions of all bodies in one array) is used in place, without temporaries.
 */
export type Vec = Float64Array | number[];

export function dot3(a: Vec, ia: number, b: Vec, ib: number): number {
  return a[ia] * b[ib] + a[ia + 1] * b[ib + 1] + a[ia + 2] * b[ib + 2];
}

/**
 * |(x, y, z)|. The numerics use this, not Math.hypot: V8 runs Math.hypot as a builtin call
 * with boxed arguments (a heap allocation per call; bench/README.md, "Math.hypot"); the
 * overflow it guards against needs components beyond 1e154.
 */
export function length3(x: number, y: number, z: number): number {
  return Math.sqrt(x * x + y * y + z * z);
}

/** |(x, y)|, for the same reason as length3. */
export function length2(x: number, y: number): number {
  return Math.sqrt(x * x + y * y);
}

export function norm3(a: Vec, ia = 0): number {
  return Math.sqrt(a[ia] * a[ia] + a[ia + 1] * a[ia + 1] + a[ia + 2] * a[ia + 2]);
}

/** out = a × b. `out` may alias neither a nor b at the same offset. */
export function cross3(out: Vec, io: number, a: Vec, ia: number, b: Vec, ib: number): void {
  const ax = a[ia];
  const ay = a[ia + 1];
  const az = a[ia + 2];
  const bx = b[ib];
  const by = b[ib + 1];
  const bz = b[ib + 2];
  out[io] = ay * bz - az * by;
  out[io + 1] = az * bx - ax * bz;
  out[io + 2] = ax * by - ay * bx;
}

/** out = a + s·b */
export function addScaled3(
  out: Vec,
  io: number,
  a: Vec,
  ia: number,
  b: Vec,
  ib: number,
  s: number,
) {
  out[io] = a[ia] + s * b[ib];
  out[io + 1] = a[ia + 1] + s * b[ib + 1];
  out[io + 2] = a[ia + 2] + s * b[ib + 2];
}

/** out = a − b */
export function sub3(out: Vec, io: number, a: Vec, ia: number, b: Vec, ib: number): void {
  out[io] = a[ia] - b[ib];
  out[io + 1] = a[ia + 1] - b[ib + 1];
  out[io + 2] = a[ia + 2] - b[ib + 2];
}

export function copy3(out: Vec, io: number, a: Vec, ia: number): void {
  out[io] = a[ia];
  out[io + 1] = a[ia + 1];
  out[io + 2] = a[ia + 2];
}

/**
 * Whether each given value equals the one held at the same place from `offset` on
 * (held[offset + k] === given[k]; a quaternion's 4 as a vector's 3): an input giving the
 * values in effect changes nothing (simulation/inputs.ts, "none"). Exact: a value an ulp
 * off is a change, bit for bit what the dynamics read.
 */
export function sameValues(given: ArrayLike<number>, held: ArrayLike<number>, offset = 0): boolean {
  for (let k = 0; k < given.length; k++) if (given[k] !== held[offset + k]) return false;
  return true;
}
