/**
 * The springs' matrix-free product y = C (x_b − x_a), out_b += y, out_a −= y
 * (particle-springs.ts addJacobianProduct) as a closure over one spring set's arrays.
 *
 * Why a closure: V8 (Node 20) compiles a closure that is the only one made at its site
 * with its captured values folded in as constants ("function context specialization"),
 * a typed array's data pointer and length among them; the loops, called from it with the
 * captured arrays as arguments, are inlined and read them as constants too. A typed array
 * reached through a parameter or `this` in a loop that stores to typed arrays has them
 * loaded again after every store (six a spring here). On the stiff cloth's 3 875 springs
 * (bench/README.md, "Stiff cloth"): 31.7 µs a product as methods reading the arrays from
 * `this`, 27.2 µs through the closure; with two simulations in one process (each spring
 * set its closure) 32 µs, then 25 µs once V8 had optimized them again. The loops written
 * inside the closure instead took 32 µs (one loop nested in the runs' loop) and 27 µs
 * alone but 37 µs with two simulations.
 *
 * The arrays are captured for good: C is filled in place (ParticleSpringSet copies the
 * law's buffer into it when it pins the operator), and the ends' offsets never change.
 */

/** Rank-one form [û, g, p] of C per spring (axial.ts AXIAL_COMBINATION). */
const CSTRIDE = 7;

/**
 * The product over every spring, run by run in spring order: `runStart[r]` …
 * `runStart[r + 1] − 1` with both ends moving (`runMoving[r]` = 1: no end tests) or not
 * (an end's dof offset −1 when it does not move). Each entry of `out` sums its terms in
 * the order of one loop over the springs.
 */
export function springProductKernel(
  dofA: Int32Array,
  dofB: Int32Array,
  runStart: Int32Array,
  runMoving: Uint8Array,
  C: Float64Array,
): (x: Float64Array, out: Float64Array) => void {
  const runs = runMoving.length;
  return (x: Float64Array, out: Float64Array): void => {
    for (let r = 0; r < runs; r++)
      if (runMoving[r] === 1) productMoving(x, out, runStart[r], runStart[r + 1], dofA, dofB, C);
      else productAny(x, out, runStart[r], runStart[r + 1], dofA, dofB, C);
  };
}

/** The product for springs from … to − 1, each with both ends moving. */
function productMoving(
  x: Float64Array,
  out: Float64Array,
  from: number,
  to: number,
  dofA: Int32Array,
  dofB: Int32Array,
  C: Float64Array,
): void {
  for (let i = from; i < to; i++) {
    const oa = dofA[i];
    const ob = dofB[i];
    const d0 = x[ob] - x[oa];
    const d1 = x[ob + 1] - x[oa + 1];
    const d2 = x[ob + 2] - x[oa + 2];
    // y = C δ = û (g·δ) + p δ
    const p = CSTRIDE * i;
    const gd = C[p + 3] * d0 + C[p + 4] * d1 + C[p + 5] * d2;
    const q = C[p + 6];
    const y0 = C[p] * gd + q * d0;
    const y1 = C[p + 1] * gd + q * d1;
    const y2 = C[p + 2] * gd + q * d2;
    out[ob] += y0;
    out[ob + 1] += y1;
    out[ob + 2] += y2;
    out[oa] -= y0;
    out[oa + 1] -= y1;
    out[oa + 2] -= y2;
  }
}

/** The product for springs from … to − 1, an end possibly still (dof offset −1). */
function productAny(
  x: Float64Array,
  out: Float64Array,
  from: number,
  to: number,
  dofA: Int32Array,
  dofB: Int32Array,
  C: Float64Array,
): void {
  for (let i = from; i < to; i++) {
    const oa = dofA[i];
    const ob = dofB[i];
    let d0 = 0;
    let d1 = 0;
    let d2 = 0;
    if (ob >= 0) {
      d0 = x[ob];
      d1 = x[ob + 1];
      d2 = x[ob + 2];
    }
    if (oa >= 0) {
      d0 -= x[oa];
      d1 -= x[oa + 1];
      d2 -= x[oa + 2];
    }
    const p = CSTRIDE * i;
    const gd = C[p + 3] * d0 + C[p + 4] * d1 + C[p + 5] * d2;
    const q = C[p + 6];
    const y0 = C[p] * gd + q * d0;
    const y1 = C[p + 1] * gd + q * d1;
    const y2 = C[p + 2] * gd + q * d2;
    if (ob >= 0) {
      out[ob] += y0;
      out[ob + 1] += y1;
      out[ob + 2] += y2;
    }
    if (oa >= 0) {
      out[oa] -= y0;
      out[oa + 1] -= y1;
      out[oa + 2] -= y2;
    }
  }
}
