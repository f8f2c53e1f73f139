/**
 * Seeded pseudo-random numbers for the tests: the same seed gives the same sequence on
 * every run and machine, so random scenes and matrices are reproducible and a failure can
 * be replayed. Nothing of src/ uses them (the benchmarks do, below).
 *
 * - mulberry32: the generator of the tests and of the benchmark scenes' draws
 *   (bench/compare/scene.ts imports it; test/bench/scenes.test.ts replays their order).
 * - minstd: kept for the tests whose random data were drawn from it (the block matrix
 *   entries of test/engine/math/block-matrix.test.ts, the pile of test/engine/contact/projection.test.ts,
 *   the point clouds of test/engine/geometry/hull.test.ts and pairs/convex.test.ts);
 *   a test that is not tied to its exact sequence should use mulberry32.
 * - gaussian: a standard normal number from either generator (Box–Muller).
 */

/**
 * mulberry32 (Tommy Ettinger's 32-bit generator), written out as published: a Weyl
 * sequence a ← a + 0x6d2b79f5 (mod 2³²) mixed by two multiply–xorshift rounds. Returns
 * a function giving uniform numbers in [0, 1), multiples of 2⁻³², period 2³².
 */
export function mulberry32(seed: number): () => number {
  let a = seed | 0;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * minstd (Park and Miller's "minimal standard" Lehmer generator): s ← 16807 s mod (2³¹ − 1).
 * Returns a function giving s / (2³¹ − 1), uniform in (0, 1); the seed must be an integer
 * in [1, 2³¹ − 2] (0 would stay 0).
 */
export function minstd(seed: number): () => number {
  let s = seed;
  return () => {
    s = (s * 16807) % 2147483647;
    return s / 2147483647;
  };
}

/**
 * A standard normal number from two uniform numbers of r in [0, 1), drawn in that order
 * (Box–Muller: √(−2 ln(1 − u₁)) cos(2π u₂); 1 − u₁ > 0 keeps the logarithm finite).
 */
export function gaussian(r: () => number): number {
  return Math.sqrt(-2 * Math.log(1 - r())) * Math.cos(2 * Math.PI * r());
}
