/**
 * Broad phase: incremental sweep and prune (sort and sweep) on one axis.
 *
 * Proxies are axis-aligned boxes given as min/max arrays (3 per proxy, world frame).
 * Each update():
 *  1. picks the sweep axis as the one with the largest variance of the box centres
 *     (with hysteresis: it switches only when another axis' variance is 1.5× larger),
 *     so that few boxes overlap in projection on it;
 *  2. sorts the proxies by their lower bound on that axis, ties broken by proxy index,
 *     so the order is a function of the current boxes only (deterministic pair order,
 *     whatever the history). Between steps the order is nearly sorted already, and an
 *     insertion sort restores it in O(n + swaps); after an axis switch, a change of the
 *     proxy count or too many swaps it falls back to a full sort;
 *  3. sweeps the sorted list: proxy i is tested against the following proxies whose
 *     lower bound does not exceed i's upper bound, and the pair is kept when the boxes
 *     also overlap on the two other axes (closed intervals: touching boxes overlap) and
 *     the optional filter accepts it.
 * The cost is O(n + k) for k overlaps of the projections on the sweep axis, instead of
 * the O(n²) of testing all pairs. Nothing is allocated per update in steady state
 * (buffers grow geometrically when the proxy or pair count exceeds the capacity).
 */

/** Returns false to exclude the pair of proxies (i, j), i < j. */
export type PairFilter = (i: number, j: number) => boolean;

export class SweepAndPrune {
  /** Overlapping pairs as (i, j) with i < j: pairs[2k], pairs[2k + 1]; pairCount valid entries. */
  pairs: Int32Array = new Int32Array(128);
  pairCount = 0;
  /** Current sweep axis (0: x, 1: y, 2: z). */
  axis = 0;
  /** Optional pair filter, called for every pair whose boxes overlap. */
  filter: PairFilter | null;

  private order: Int32Array = new Int32Array(0);
  private keys: Float64Array = new Float64Array(0);
  private n = -1;
  private readonly compare = (a: number, b: number): number => {
    const d = this.keys[a] - this.keys[b];
    return d !== 0 ? d : a - b;
  };

  constructor(filter: PairFilter | null = null) {
    this.filter = filter;
  }

  /**
   * Finds the overlapping pairs among `count` boxes min[3i..3i+2], max[3i..3i+2].
   * Returns the number of pairs (also in pairCount).
   */
  update(count: number, min: Float64Array, max: Float64Array): number {
    let fullSort = false;
    if (count !== this.n) {
      if (this.order.length < count) {
        const cap = Math.max(count, 2 * this.order.length);
        this.order = new Int32Array(cap);
        this.keys = new Float64Array(cap);
      }
      for (let i = 0; i < count; i++) this.order[i] = i;
      this.n = count;
      fullSort = true;
    }
    this.pairCount = 0;
    if (count < 2) return 0;

    // Variance of the box centres per axis (shifted by the first centre for accuracy).
    const s0 = 0.5 * (min[0] + max[0]);
    const s1 = 0.5 * (min[1] + max[1]);
    const s2 = 0.5 * (min[2] + max[2]);
    let m0 = 0;
    let m1 = 0;
    let m2 = 0;
    let q0 = 0;
    let q1 = 0;
    let q2 = 0;
    for (let i = 0; i < count; i++) {
      const c0 = 0.5 * (min[3 * i] + max[3 * i]) - s0;
      const c1 = 0.5 * (min[3 * i + 1] + max[3 * i + 1]) - s1;
      const c2 = 0.5 * (min[3 * i + 2] + max[3 * i + 2]) - s2;
      m0 += c0;
      m1 += c1;
      m2 += c2;
      q0 += c0 * c0;
      q1 += c1 * c1;
      q2 += c2 * c2;
    }
    const v0 = q0 - (m0 * m0) / count;
    const v1 = q1 - (m1 * m1) / count;
    const v2 = q2 - (m2 * m2) / count;
    const best = v0 >= v1 ? (v0 >= v2 ? 0 : 2) : v1 >= v2 ? 1 : 2;
    const vCur = this.axis === 0 ? v0 : this.axis === 1 ? v1 : v2;
    const vBest = best === 0 ? v0 : best === 1 ? v1 : v2;
    if (best !== this.axis && vBest > 1.5 * vCur) {
      this.axis = best;
      fullSort = true;
    }
    const axis = this.axis;
    const keys = this.keys;
    const order = this.order;
    for (let i = 0; i < count; i++) keys[i] = min[3 * i + axis];

    if (!fullSort) {
      // Insertion sort on the order left by the previous update.
      let shifts = 0;
      const budget = 8 * count + 64;
      for (let k = 1; k < count && !fullSort; k++) {
        const p = order[k];
        const kp = keys[p];
        let j = k - 1;
        while (j >= 0) {
          const q = order[j];
          const kq = keys[q];
          if (kq < kp || (kq === kp && q < p)) break;
          order[j + 1] = q;
          j--;
          if (++shifts > budget) {
            fullSort = true;
            break;
          }
        }
        order[j + 1] = p;
      }
    }
    if (fullSort) order.subarray(0, count).sort(this.compare);

    // Sweep.
    const a1 = (axis + 1) % 3;
    const a2 = (axis + 2) % 3;
    const filter = this.filter;
    for (let ii = 0; ii < count; ii++) {
      const i = order[ii];
      const hiI = max[3 * i + axis];
      const minI1 = min[3 * i + a1];
      const maxI1 = max[3 * i + a1];
      const minI2 = min[3 * i + a2];
      const maxI2 = max[3 * i + a2];
      for (let jj = ii + 1; jj < count; jj++) {
        const j = order[jj];
        if (keys[j] > hiI) break;
        if (min[3 * j + a1] > maxI1 || max[3 * j + a1] < minI1) continue;
        if (min[3 * j + a2] > maxI2 || max[3 * j + a2] < minI2) continue;
        const lo = Math.min(i, j);
        const hi = Math.max(i, j);
        if (filter !== null && !filter(lo, hi)) continue;
        this.pushPair(lo, hi);
      }
    }
    return this.pairCount;
  }

  private pushPair(i: number, j: number): void {
    const k = 2 * this.pairCount;
    if (k + 2 > this.pairs.length) {
      const grown = new Int32Array(2 * this.pairs.length);
      grown.set(this.pairs);
      this.pairs = grown;
    }
    this.pairs[k] = i;
    this.pairs[k + 1] = j;
    this.pairCount++;
  }
}
