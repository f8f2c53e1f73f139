/**
 * Two-level additive aggregation preconditioner for CG, for a symmetric positive definite
 * matrix W of 3×3 node blocks (particles: the springs' Newton matrix W = M + c_x K + c_v D):
 *   B = D⁻¹ + P Wc⁻¹ Pᵀ,   Wc = Pᵀ W P,
 * D W's diagonal blocks (block Jacobi), P the aggregates' translations. Block Jacobi alone
 * leaves the error modes that stretch no spring (a patch of nodes moving together) to CG,
 * whose iterations then grow like √κ(W), κ ~ 1 + c_x k/m · λ_max(graph Laplacian): the
 * stiff cloth's hundreds. The coarse term removes those modes in one exact solve; it is
 * the additive two-level Schwarz method with one node per subdomain (Toselli & Widlund,
 * "Domain Decomposition Methods", 2005, §2.2 and §3.6), the coarse space of unsmoothed
 * aggregation.
 *
 * Aggregates (Vaněk, Mandel & Brezina, "Algebraic multigrid by smoothed aggregation for
 * second and fourth order elliptic problems", Computing 56, 1996, §3): greedy on W's node
 * graph (the off-diagonal blocks): a node none of whose neighbours is taken yet becomes,
 * with its neighbours, an aggregate; every node left joins the aggregate of the neighbour
 * it shares most edges with (a lone node is its own aggregate). On a cloth's grid of
 * structural and shear springs they are patches of about 3 × 3 nodes (4 to 16 at the
 * border and where pass 2 adds to them). They depend on the pattern only, so they are made
 * again only when it changes.
 *
 * P_{i,g} = I₃ when node i is in aggregate g (translations: the near-null space of springs;
 * Tamstorf, Jones & McCormick, "Smoothed aggregation multigrid for cloth simulation", ACM
 * TOG 34(6), 2015, add the rotations and smooth P), so Wc is W's blocks summed over pairs
 * of aggregates (O(blocks of W), no triple product), factored by block LDLᵀ
 * (block-ldlt.ts; a cloth's aggregate graph is a coarse grid of ~n/9 nodes).
 *
 * B is symmetric positive definite for SPD D and any symmetric positive semidefinite
 * coarse term, so Wc may come from an earlier W than D (`updateCoarse` and
 * `updateSmoother` are separate: the Newton operator assembles W once a step and refreshes
 * D at every iteration). One application costs a block-Jacobi sweep, Pᵀ and P (3 adds a
 * dof each) and one coarse solve: about half a product with the springs' W, where the
 * symmetric multiplicative cycle (two products a cycle) and smoothed aggregation (P nine
 * times denser, a triple product per refresh) took fewer iterations but longer
 * (bench/README.md, "Stiff cloth").
 */
import { SparseBlockMatrix } from "../../math/block-matrix";
import { BlockLdlt } from "./block-ldlt";
import {
  BlockJacobiPreconditioner,
  type ResidualStepPreconditioner,
  STEP_ALPHA,
  STEP_RR,
  STEP_RZ,
} from "./preconditioners";

/**
 * Greedy aggregation of the node graph of m (see the header): aggregate index per block
 * row, and their number. Deterministic (blocks visited in index order).
 */
export function aggregateNodes(m: SparseBlockMatrix): { aggregateOf: Int32Array; count: number } {
  const { rowStart, colBlock } = m.pattern;
  const nb = m.numBlocks;
  const aggregateOf = new Int32Array(nb).fill(-1);
  let count = 0;
  // pass 1: a node whose neighbours are all free roots an aggregate of them all
  for (let i = 0; i < nb; i++) {
    if (aggregateOf[i] >= 0) continue;
    let free = true;
    for (let k = rowStart[i]; k < rowStart[i + 1] && free; k++) free = aggregateOf[colBlock[k]] < 0;
    if (!free) continue;
    for (let k = rowStart[i]; k < rowStart[i + 1]; k++) aggregateOf[colBlock[k]] = count;
    aggregateOf[i] = count++;
  }
  // pass 2: the rest join the aggregate they share most edges with (pass 1's aggregates
  // only, so that the result does not depend on the order within this pass)
  const joined = new Int32Array(nb).fill(-1);
  const votes = new Int32Array(count);
  for (let i = 0; i < nb; i++) {
    if (aggregateOf[i] >= 0) continue;
    let best = -1;
    for (let k = rowStart[i]; k < rowStart[i + 1]; k++) {
      const g = aggregateOf[colBlock[k]];
      if (g < 0) continue;
      votes[g]++;
      if (best < 0 || votes[g] > votes[best] || (votes[g] === votes[best] && g < best)) best = g;
    }
    for (let k = rowStart[i]; k < rowStart[i + 1]; k++) {
      const g = aggregateOf[colBlock[k]];
      if (g >= 0) votes[g] = 0;
    }
    joined[i] = best;
  }
  for (let i = 0; i < nb; i++) {
    if (aggregateOf[i] >= 0) continue;
    aggregateOf[i] = joined[i] >= 0 ? joined[i] : count++;
  }
  return { aggregateOf, count };
}

/**
 * AggregationMultigrid.scalars beyond ResidualStepPreconditioner's: rᵀ D⁻¹ r of the last
 * stepResidual (the block-Jacobi part of rᵀz), and β of the next direction (prolong).
 */
const SMOOTHED_RZ = 3;
const BETA = 4;

/**
 * stepResidual's and completeDirection's loops over one CG run's vectors (p, r, q, z) and
 * the preconditioner's arrays (inv the block-Jacobi inverses, groupOf the aggregates, sums
 * Pᵀ r, xc the coarse solution, and its scalars), as closures over them: V8 compiles the
 * first closure made at this site with the captured arrays as constants (their data
 * pointers and lengths, and the loop's bound: no bounds checks), 12.4 → 6.9 µs a pass on
 * the stiff cloth's 992 particles, about 2.6 µs less a CG iteration for the direction; a
 * later closure (a worker's second cloth session) runs generic code, about 13.5 µs a pass
 * (bench/README.md, "Stiff cloth"). Each preconditioner makes its own, again when the
 * arrays change.
 */
export interface StepKernel {
  readonly p: Float64Array;
  readonly r: Float64Array;
  readonly q: Float64Array;
  readonly z: Float64Array;
  readonly inv: Float64Array;
  readonly groupOf: Int32Array;
  readonly sums: Float64Array;
  /** The coarse solution xc (3 an aggregate). */
  readonly xc: Float64Array;
  /** The preconditioner's scalars (AggregationMultigrid.scalars). */
  readonly scalars: Float64Array;
  /**
   * x += α p, r −= α q, z = D⁻¹ r, sums += Pᵀ r (α = scalars[STEP_ALPHA]); rᵀr into
   * scalars[STEP_RR], rᵀz into scalars[SMOOTHED_RZ].
   */
  readonly run: (x: Float64Array) => void;
  /** z += P xc and p ← z + β p (prolong; β = scalars[BETA]). */
  readonly direction: () => void;
}

/** A StepKernel over these arrays (exported for its test). */
export function makeStepKernel(
  p: Float64Array,
  r: Float64Array,
  q: Float64Array,
  z: Float64Array,
  inv: Float64Array,
  groupOf: Int32Array,
  sums: Float64Array,
  xc: Float64Array,
  scalars: Float64Array,
): StepKernel {
  const blocks = Math.min(groupOf.length, inv.length / 9);
  // written in the closure, not a function it calls: too large for V8 to inline there.
  // The block-Jacobi sweep sums rᵀz as BlockJacobiPreconditioner.apply does
  const run = (x: Float64Array): void => {
    const alpha = scalars[STEP_ALPHA];
    let rz = 0;
    let rr = 0;
    for (let b = 0; b < blocks; b++) {
      const o = 3 * b;
      x[o] += alpha * p[o];
      x[o + 1] += alpha * p[o + 1];
      x[o + 2] += alpha * p[o + 2];
      const r0 = r[o] - alpha * q[o];
      const r1 = r[o + 1] - alpha * q[o + 1];
      const r2 = r[o + 2] - alpha * q[o + 2];
      r[o] = r0;
      r[o + 1] = r1;
      r[o + 2] = r2;
      rr += r0 * r0;
      rr += r1 * r1;
      rr += r2 * r2;
      const i = 9 * b;
      const z0 = inv[i] * r0 + inv[i + 1] * r1 + inv[i + 2] * r2;
      const z1 = inv[i + 3] * r0 + inv[i + 4] * r1 + inv[i + 5] * r2;
      const z2 = inv[i + 6] * r0 + inv[i + 7] * r1 + inv[i + 8] * r2;
      z[o] = z0;
      z[o + 1] = z1;
      z[o + 2] = z2;
      rz = rz + r0 * z0 + r1 * z1 + r2 * z2;
      const g = 3 * groupOf[b];
      sums[g] += r0;
      sums[g + 1] += r1;
      sums[g + 2] += r2;
    }
    scalars[STEP_RR] = rr;
    scalars[SMOOTHED_RZ] = rz;
  };
  const direction = (): void => prolong(z, p, xc, groupOf, blocks, scalars);
  return { p, r, q, z, inv, groupOf, sums, xc, scalars, run, direction };
}

/**
 * z += P xc and p ← z + β p (β = scalars[BETA]) over the first `blocks` blocks (P xc: each
 * block its aggregate's entry of xc), one pass: CG's next direction with the coarse
 * correction.
 */
function prolong(
  z: Float64Array,
  p: Float64Array,
  xc: Float64Array,
  groupOf: Int32Array,
  blocks: number,
  scalars: Float64Array,
): void {
  const beta = scalars[BETA];
  for (let i = 0; i < blocks; i++) {
    const g = 3 * groupOf[i];
    const o = 3 * i;
    const z0 = z[o] + xc[g];
    const z1 = z[o + 1] + xc[g + 1];
    const z2 = z[o + 2] + xc[g + 2];
    z[o] = z0;
    z[o + 1] = z1;
    z[o + 2] = z2;
    p[o] = z0 + beta * p[o];
    p[o + 1] = z1 + beta * p[o + 1];
    p[o + 2] = z2 + beta * p[o + 2];
  }
}

/** cv = Wc's values: each block k of W (w, 9 a block) added at cv[off[k]] (updateCoarse). */
function sumBlocks(off: Int32Array, w: Float64Array, cv: Float64Array): void {
  cv.fill(0);
  for (let k = 0; k < off.length; k++) {
    const o = off[k];
    const p = 9 * k;
    cv[o] += w[p];
    cv[o + 1] += w[p + 1];
    cv[o + 2] += w[p + 2];
    cv[o + 3] += w[p + 3];
    cv[o + 4] += w[p + 4];
    cv[o + 5] += w[p + 5];
    cv[o + 6] += w[p + 6];
    cv[o + 7] += w[p + 7];
    cv[o + 8] += w[p + 8];
  }
}

export class AggregationMultigrid implements ResidualStepPreconditioner {
  /** Aggregate of each block row of W. */
  aggregateOf: Int32Array = new Int32Array(0);
  /** Number of aggregates (coarse block rows). */
  aggregates = 0;
  /** Wc = Pᵀ W P (3×3 blocks). */
  coarse: SparseBlockMatrix = new SparseBlockMatrix([]);
  readonly coarseLdlt = new BlockLdlt();
  private readonly smoother = new BlockJacobiPreconditioner();
  private matrix: SparseBlockMatrix | null = null;
  private version = -1;
  /** Offset in coarse.values of the block each block of W is summed into. */
  private coarseOffset: Int32Array = new Int32Array(0);
  private rc = new Float64Array(0);
  private xc = new Float64Array(0);
  /** The steps' scalars (ResidualStepPreconditioner; SMOOTHED_RZ and BETA besides). */
  readonly scalars = new Float64Array(5);
  /** The StepKernel of the last stepResidual's arrays. */
  private stepKernel: StepKernel | null = null;

  /**
   * The coarse term from W (m: 3×3 blocks, symmetric positive definite): the aggregates
   * when m's pattern changed, Wc and its factorization always. Returns `coarseReady`.
   */
  updateCoarse(m: SparseBlockMatrix): boolean {
    if (this.matrix !== m || this.version !== m.structureVersion) this.bind(m);
    // the sums in a function of their own, as BlockLdlt.numeric's loop (why there): with
    // the loop here, `this.coarseLdlt` after it deoptimized at every call in 3 runs of 10
    // of the stiff cloth
    sumBlocks(this.coarseOffset, m.values, this.coarse.values);
    this.coarseLdlt.factor(this.coarse);
    return this.coarseReady;
  }

  /** Whether Wc is factored and positive definite (else the coarse term is unusable). */
  get coarseReady(): boolean {
    return this.matrix !== null && this.coarseLdlt.ok && this.coarseLdlt.positiveDefinite;
  }

  /**
   * D from the diagonal blocks of d (W's, or any matrix holding them in W's block layout):
   * before every use after W changed (`apply` uses the last one).
   */
  updateSmoother(d: SparseBlockMatrix): void {
    this.smoother.update(d);
  }

  /** Aggregates, Wc's pattern and where each block of W goes in it (m's pattern). */
  private bind(m: SparseBlockMatrix): void {
    if (!m.uniform3) throw new Error("aggregation-multigrid: every block must be 3×3");
    this.matrix = m;
    this.version = m.structureVersion;
    const { aggregateOf, count } = aggregateNodes(m);
    this.aggregateOf = aggregateOf;
    this.aggregates = count;
    const nb = m.numBlocks;
    const { rowStart, colBlock, valueStart } = m.pattern;
    const coarse = new SparseBlockMatrix(new Int32Array(count).fill(3));
    for (let i = 0; i < nb; i++)
      for (let k = rowStart[i]; k < rowStart[i + 1]; k++) {
        if (valueStart[k] !== 9 * k) throw new Error("aggregation-multigrid: unexpected layout");
        coarse.addBlock(aggregateOf[i], aggregateOf[colBlock[k]]);
      }
    coarse.finalize();
    this.coarse = coarse;
    this.coarseOffset = new Int32Array(rowStart[nb]);
    for (let i = 0; i < nb; i++)
      for (let k = rowStart[i]; k < rowStart[i + 1]; k++)
        this.coarseOffset[k] = coarse.offsetOf(aggregateOf[i], aggregateOf[colBlock[k]]);
    this.rc = new Float64Array(3 * count);
    this.xc = new Float64Array(3 * count);
  }

  /** z = B r = D⁻¹ r + P Wc⁻¹ Pᵀ r (see the header); returns rᵀz. */
  apply(r: Float64Array, z: Float64Array): number {
    const { xc, aggregateOf } = this;
    const rz = this.smoothAndCoarse(r, z);
    for (let i = 0; i < aggregateOf.length; i++) {
      const g = 3 * aggregateOf[i];
      z[3 * i] += xc[g];
      z[3 * i + 1] += xc[g + 1];
      z[3 * i + 2] += xc[g + 2];
    }
    return rz;
  }

  /** z = B r and CG's p ← z + (rᵀz/rzPrevious) p, P xc added in the same pass (Preconditioner). */
  applyDirection(r: Float64Array, z: Float64Array, p: Float64Array, rzPrevious: number): number {
    return this.prolongDirection(this.smoothAndCoarse(r, z), z, p, rzPrevious);
  }

  /**
   * CG's x += α p, r −= α q with the block-Jacobi sweep and the restriction Pᵀ r in the
   * same pass (ResidualStepPreconditioner: α and rᵀr in `scalars`).
   */
  stepResidual(
    x: Float64Array,
    p: Float64Array,
    r: Float64Array,
    q: Float64Array,
    z: Float64Array,
  ): void {
    this.rc.fill(0);
    this.kernelFor(p, r, q, z).run(x);
  }

  /**
   * After stepResidual: the coarse solve, then as applyDirection (ResidualStepPreconditioner:
   * rzPrevious in, rᵀz out in `scalars`).
   */
  completeDirection(z: Float64Array, p: Float64Array): void {
    const s = this.scalars;
    this.coarseLdlt.solveInto(this.rc, this.xc);
    const rz = s[SMOOTHED_RZ] + this.coarseLdlt.lastDot;
    s[BETA] = rz / s[STEP_RZ];
    s[STEP_RZ] = rz;
    const k = this.stepKernel;
    if (k !== null && k.z === z && k.p === p) k.direction();
    else prolong(z, p, this.xc, this.aggregateOf, this.aggregateOf.length, s);
  }

  /** The StepKernel over these CG vectors and the current arrays (made anew when they change). */
  private kernelFor(
    p: Float64Array,
    r: Float64Array,
    q: Float64Array,
    z: Float64Array,
  ): StepKernel {
    const inv = this.smoother.inverses3;
    const k = this.stepKernel;
    if (
      k !== null &&
      k.p === p &&
      k.r === r &&
      k.q === q &&
      k.z === z &&
      k.inv === inv &&
      k.groupOf === this.aggregateOf &&
      k.sums === this.rc &&
      k.xc === this.xc
    )
      return k;
    this.stepKernel = makeStepKernel(
      p,
      r,
      q,
      z,
      inv,
      this.aggregateOf,
      this.rc,
      this.xc,
      this.scalars,
    );
    return this.stepKernel;
  }

  /** z += P xc and p ← z + (rz/rzPrevious) p in one pass; returns rz. */
  private prolongDirection(
    rz: number,
    z: Float64Array,
    p: Float64Array,
    rzPrevious: number,
  ): number {
    const { xc, aggregateOf, scalars } = this;
    scalars[BETA] = rz / rzPrevious;
    prolong(z, p, xc, aggregateOf, aggregateOf.length, scalars);
    return rz;
  }

  /** z = D⁻¹ r and xc = Wc⁻¹ Pᵀ r (B r is then z + P xc); returns rᵀ B r. */
  private smoothAndCoarse(r: Float64Array, z: Float64Array): number {
    const rc = this.rc;
    rc.fill(0);
    // D⁻¹ r and rc = Pᵀ r in one pass
    const rz = this.smoother.applyGrouping(r, z, this.aggregateOf, rc);
    // rᵀ P Wc⁻¹ Pᵀ r = rcᵀ xc, left by the coarse solve
    this.coarseLdlt.solveInto(rc, this.xc);
    return rz + this.coarseLdlt.lastDot;
  }
}
