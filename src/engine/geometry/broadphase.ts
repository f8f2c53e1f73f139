/**
 * Broad phase: incremental sweep and prune (sort and sweep) on one axis.
 *
 * Proxies are axis-aligned boxes given as min/max arrays (3 per proxy, world frame).
 * Each update():
 *  1. picks the sweep axis as the one on which the sweep tests the fewest pairs, counted
 *     exactly from the sorted lower bounds (chooseAxis) when the proxy count changes and
 *     every AXIS_CHOICE_INTERVAL updates, with hysteresis (another axis must test 1.25×
 *     fewer). The spread of the centres is not enough: a settled pile has layers, so
 *     every box of a layer overlaps all the others in projection on the vertical axis,
 *     which then tests several times the pairs of a horizontal axis at about the same
 *     variance (bench/README.md, "Broad phase");
 *  2. sorts the proxies by their lower bound on that axis, ties broken by proxy index,
 *     so the order is a function of the current boxes only (deterministic pair order,
 *     whatever the history). Between steps the order is nearly sorted already, and an
 *     insertion sort restores it in O(n + swaps); after an axis switch, a change of the
 *     proxy count or too many swaps it falls back to a full sort;
 *  3. sweeps the sorted list: proxy i is tested against the following proxies whose
 *     lower bound does not exceed i's upper bound, and the pair is kept when the boxes
 *     also overlap on the two other axes (closed intervals: touching boxes overlap) and
 *     the optional filter accepts it. Two boxes flagged as balls (a sphere's cube: the
 *     ball of the box's centre and half-width, BALL_SLACK) are kept only when the balls
 *     also reach each other: on S1-1000's settled pile about two in three box overlaps
 *     are corners of cubes whose spheres are apart (bench/README.md, "Broad phase"), and
 *     the narrow phase would only reject them.
 * The cost is O(n + k) for k overlaps of the projections on the sweep axis, instead of
 * the O(n²) of testing all pairs. Nothing is allocated per update in steady state
 * (buffers grow geometrically when the proxy or pair count exceeds the capacity).
 */

/** Updates between two choices of the sweep axis (also chosen when the proxy count changes). */
const AXIS_CHOICE_INTERVAL = 4;

/**
 * Slack of the ball test: a pair of balls is dropped only when
 *   |c_i − c_j| > (1 + BALL_SLACK)(e_i + e_j) + BALL_ULPS·B,
 * c the box centres, e the half-widths on the sweep axis, B the largest |bound| of the
 * update. c and e come from the rounded bounds of a sphere of radius ρ padded by p at x
 * (x ± (ρ + p)): each within a few ulp of B (2.2e-16 B each) of x and ρ + p, and the
 * distance's own rounding is relative, far below BALL_SLACK; BALL_ULPS·B covers the
 * rest. So every pair of spheres with |x_i − x_j| ≤ ρ_i + ρ_j + p_i + p_j (the narrow
 * phase's own test, pairs/sphere.ts, with p = margin/2) is still reported; the few in the
 * slack are rejected there.
 */
const BALL_SLACK = 1e-9;
const BALL_ULPS = 1e-13;

/** Number of the first count entries of sorted a that are < x. */
function lowerBound(a: Float64Array, count: number, x: number): number {
  let lo = 0;
  let hi = count;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (a[mid] < x) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** Number of the first count entries of sorted a that are ≤ x. */
function upperBound(a: Float64Array, count: number, x: number): number {
  let lo = 0;
  let hi = count;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (a[mid] <= x) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** SweepAndPrune's state beyond its boxes (memory, restore). */
export interface BroadPhaseMemory {
  /** The sweep axis (0: x, 1: y, 2: z). */
  axis: number;
  /** Updates since it was chosen (the next choice is at AXIS_CHOICE_INTERVAL). */
  sinceChoice: number;
}

/** Returns false to exclude the pair of proxies (i, j), i < j. */
export type PairFilter = (i: number, j: number) => boolean;

/**
 * Overlapping pairs one update may report at most (a 1000-sphere pile has a few thousand, a
 * pile of 10 000 tens of thousands). Beyond it the step fails (the simulation ends
 * `diverged` with the message) instead of a contact problem of gigabytes: each pair in
 * contact costs about 2.3 kB of typed arrays (1000 spheres at one point, 5·10⁵ pairs:
 * 1.15 GB and 5 s a step), outside the V8 heap that WORKER_MEMORY_MB bounds, so the 4·10⁶
 * this was allowed 9 GB of one worker's process. 2.5·10⁵: about 600 MB at most.
 */
export const MAX_BROADPHASE_PAIRS = 250_000;

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
  // Box bounds in sweep order: lower and upper on the sweep axis, then the two others.
  private sLo: Float64Array = new Float64Array(0);
  private sHi: Float64Array = new Float64Array(0);
  private sMin1: Float64Array = new Float64Array(0);
  private sMax1: Float64Array = new Float64Array(0);
  private sMin2: Float64Array = new Float64Array(0);
  private sMax2: Float64Array = new Float64Array(0);
  /** Strip index of each box along the first other axis (see update), and in sweep order. */
  private strip: Float64Array = new Float64Array(0);
  private sStrip: Float64Array = new Float64Array(0);
  /** 1 for a ball's box (update's `ball`), in sweep order; null: no balls. */
  private sBall: Uint8Array = new Uint8Array(0);
  private balls = false;
  /** The ball test's absolute slack of this update, doubled as the test's lengths are. */
  private ballAbs = 0;
  /** order and sLo cut to the current count, for in-place sorts (no view per update). */
  private orderPrefix: Int32Array = new Int32Array(0);
  private sLoPrefix: Float64Array = new Float64Array(0);
  private n = -1;
  /** Updates since the sweep axis was last chosen. */
  private sinceChoice = 0;
  /**
   * Set by restore: the first update keeps the restored axis and count of updates, where a
   * new proxy count would choose the axis afresh.
   */
  private restored = false;
  private readonly compare = (a: number, b: number): number => {
    const s = this.strip[a] - this.strip[b];
    if (s !== 0) return s;
    const d = this.keys[a] - this.keys[b];
    return d !== 0 ? d : a - b;
  };

  constructor(filter: PairFilter | null = null) {
    this.filter = filter;
  }

  /**
   * The sweep axis and the updates since it was chosen: with the boxes, what the pairs and
   * their order depend on (the sort itself is a function of the boxes: see the file
   * comment), so a snapshot saves them and a restored simulation detects its contacts in
   * the order the uninterrupted one does (the contact solves sweep in that order). Null
   * before the first update since new or reset: that update chooses the axis, and so must a
   * restored one's. Written into `out` when given (a simulation's step-start hold, which
   * allocates nothing), else into a new record.
   */
  memory(out?: BroadPhaseMemory): BroadPhaseMemory | null {
    if (this.n === -1) return null;
    const m = out ?? { axis: 0, sinceChoice: 0 };
    m.axis = this.axis;
    m.sinceChoice = this.sinceChoice;
    return m;
  }

  /** As new: the next update chooses the axis afresh (a simulation's reset). */
  reset(): void {
    this.axis = 0;
    this.sinceChoice = 0;
    this.restored = false;
    this.n = -1;
  }

  /** Takes a memory() back; the next update keeps it (no choice for the new proxy count). */
  restore(m: BroadPhaseMemory): void {
    this.axis = m.axis;
    this.sinceChoice = m.sinceChoice;
    this.restored = true;
  }

  /**
   * Finds the overlapping pairs among `count` boxes min[3i..3i+2], max[3i..3i+2]; where
   * ball[i] and ball[j] are 1 (the boxes are cubes around spheres), only those whose balls
   * overlap too (file comment). Returns the number of pairs (also in pairCount).
   */
  update(
    count: number,
    min: Float64Array,
    max: Float64Array,
    ball: Uint8Array | null = null,
  ): number {
    let fullSort = false;
    if (count !== this.n) {
      if (this.order.length < count) {
        const cap = Math.max(count, 2 * this.order.length);
        this.order = new Int32Array(cap);
        this.keys = new Float64Array(cap);
        this.sLo = new Float64Array(cap);
        this.sHi = new Float64Array(cap);
        this.sMin1 = new Float64Array(cap);
        this.sMax1 = new Float64Array(cap);
        this.sMin2 = new Float64Array(cap);
        this.sMax2 = new Float64Array(cap);
        this.strip = new Float64Array(cap);
        this.sStrip = new Float64Array(cap);
        this.sBall = new Uint8Array(cap);
      }
      for (let i = 0; i < count; i++) this.order[i] = i;
      this.orderPrefix = this.order.subarray(0, count);
      this.sLoPrefix = this.sLo.subarray(0, count);
      this.n = count;
      fullSort = true;
    }
    this.pairCount = 0;
    if (count < 2) return 0;

    const restored = this.restored;
    this.restored = false;
    if ((fullSort && !restored) || ++this.sinceChoice >= AXIS_CHOICE_INTERVAL) {
      this.sinceChoice = 0;
      const best = this.chooseAxis(count, min, max);
      if (best !== this.axis) {
        this.axis = best;
        fullSort = true;
      }
    }
    const axis = this.axis;
    const a1 = (axis + 1) % 3;
    const a2 = (axis + 2) % 3;
    const { keys, strip, order } = this;
    // Strips along a1 of width c = the largest box extent on a1 (so boxes two strips
    // apart cannot overlap), and the largest extent on the sweep axis.
    let base = Number.POSITIVE_INFINITY;
    let c = 0;
    let ext = 0;
    let big = 0;
    for (let i = 0; i < count; i++) {
      base = Math.min(base, min[3 * i + a1]);
      c = Math.max(c, max[3 * i + a1] - min[3 * i + a1]);
      ext = Math.max(ext, max[3 * i + axis] - min[3 * i + axis]);
      for (let k = 3 * i; k < 3 * i + 3; k++) big = Math.max(big, -min[k], max[k]);
    }
    this.ballAbs = 2 * BALL_ULPS * big;
    const inv = c > 0 && Number.isFinite(c) && Number.isFinite(base) ? 1 / c : 0;
    for (let i = 0; i < count; i++) {
      keys[i] = min[3 * i + axis];
      strip[i] = Math.floor((min[3 * i + a1] - base) * inv);
    }

    if (!fullSort) {
      // Insertion sort on the order left by the previous update, by (strip, key, index).
      let shifts = 0;
      const budget = 8 * count + 64;
      for (let k = 1; k < count && !fullSort; k++) {
        const p = order[k];
        const kp = keys[p];
        const sp = strip[p];
        let j = k - 1;
        while (j >= 0) {
          const q = order[j];
          const sq = strip[q];
          if (sq < sp) break;
          if (sq === sp) {
            const kq = keys[q];
            if (kq < kp || (kq === kp && q < p)) break;
          }
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
    if (fullSort) this.orderPrefix.sort(this.compare);

    // Copies of the boxes in sorted order (contiguous reads in the inner loops).
    const { sLo, sHi, sMin1, sMax1, sMin2, sMax2, sStrip, sBall } = this;
    this.balls = ball !== null;
    for (let ii = 0; ii < count; ii++) {
      const i = order[ii];
      sBall[ii] = ball !== null ? ball[i] : 0;
      sLo[ii] = keys[i];
      sHi[ii] = max[3 * i + axis];
      sMin1[ii] = min[3 * i + a1];
      sMax1[ii] = max[3 * i + a1];
      sMin2[ii] = min[3 * i + a2];
      sMax2[ii] = max[3 * i + a2];
      sStrip[ii] = strip[i];
    }
    // Sweep each strip against itself (forward) and against the next strip (boxes whose
    // lower bound is within [lo_i − ext, hi_i]: the only ones that can reach box i).
    let runStart = 0;
    while (runStart < count) {
      const s0 = sStrip[runStart];
      let runEnd = runStart + 1;
      while (runEnd < count && sStrip[runEnd] === s0) runEnd++;
      let nextEnd = runEnd;
      if (runEnd < count && sStrip[runEnd] === s0 + 1)
        while (nextEnd < count && sStrip[nextEnd] === s0 + 1) nextEnd++;
      let p = runEnd;
      for (let ii = runStart; ii < runEnd; ii++) {
        this.sweepRange(ii, ii + 1, runEnd);
        const from = sLo[ii] - ext;
        while (p < nextEnd && sLo[p] < from) p++;
        this.sweepRange(ii, p, nextEnd);
      }
      runStart = runEnd;
    }
    return this.pairCount;
  }

  /**
   * Tests box ii (sorted position) against positions jj0 .. jj1−1, stopping at the first
   * whose lower bound on the sweep axis exceeds box ii's upper bound (in the next strip a
   * box may also end before box ii starts).
   */
  private sweepRange(ii: number, jj0: number, jj1: number): void {
    const { sLo, sHi, sMin1, sMax1, sMin2, sMax2, sBall, order, filter } = this;
    const loI = sLo[ii];
    const hiI = sHi[ii];
    const minI1 = sMin1[ii];
    const maxI1 = sMax1[ii];
    const minI2 = sMin2[ii];
    const maxI2 = sMax2[ii];
    const ballI = this.balls && sBall[ii] === 1;
    for (let jj = jj0; jj < jj1; jj++) {
      if (sLo[jj] > hiI) break;
      if (sHi[jj] < loI) continue;
      if (sMin1[jj] > maxI1 || sMax1[jj] < minI1) continue;
      if (sMin2[jj] > maxI2 || sMax2[jj] < minI2) continue;
      if (ballI && sBall[jj] === 1) {
        // twice the centre offsets and twice the reach (file comment, BALL_SLACK)
        const dx = sLo[jj] + sHi[jj] - (loI + hiI);
        const dy = sMin1[jj] + sMax1[jj] - (minI1 + maxI1);
        const dz = sMin2[jj] + sMax2[jj] - (minI2 + maxI2);
        const reach = (1 + BALL_SLACK) * (sHi[jj] - sLo[jj] + (hiI - loI)) + this.ballAbs;
        if (dx * dx + dy * dy + dz * dz > reach * reach) continue;
      }
      const i = order[ii];
      const j = order[jj];
      const lo = Math.min(i, j);
      const hi = Math.max(i, j);
      if (filter !== null && !filter(lo, hi)) continue;
      this.pushPair(lo, hi);
    }
  }

  /**
   * The axis whose sweep would test the fewest pairs, keeping the current one unless
   * another tests 1.25× fewer (hysteresis). The sweep on axis a tests, for each box i, the
   * boxes whose lower bound lies in [lo_i, hi_i]: with the lower bounds sorted (L),
   *   tests_a = Σ_i (#{L ≤ hi_i} − #{L < lo_i} − 1),
   * two binary searches per box, O(n log n) per axis.
   */
  private chooseAxis(count: number, min: Float64Array, max: Float64Array): number {
    const L = this.sLo;
    let best = this.axis;
    let bestTests = Number.POSITIVE_INFINITY;
    let curTests = Number.POSITIVE_INFINITY;
    for (let a = 0; a < 3; a++) {
      for (let i = 0; i < count; i++) L[i] = min[3 * i + a];
      this.sLoPrefix.sort();
      let tests = 0;
      for (let i = 0; i < count; i++)
        tests += upperBound(L, count, max[3 * i + a]) - lowerBound(L, count, min[3 * i + a]) - 1;
      if (a === this.axis) curTests = tests;
      if (tests < bestTests) {
        bestTests = tests;
        best = a;
      }
    }
    return bestTests * 1.25 < curTests ? best : this.axis;
  }

  private pushPair(i: number, j: number): void {
    const k = 2 * this.pairCount;
    if (this.pairCount >= MAX_BROADPHASE_PAIRS)
      throw new Error(
        `more than ${MAX_BROADPHASE_PAIRS} overlapping shape pairs in one step (shapes piled into one place?): the contact problem would need gigabytes`,
      );
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
