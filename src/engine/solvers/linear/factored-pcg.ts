/**
 * Conjugate gradients on a symmetric matrix of 3×3 blocks (a SparseBlockMatrix of
 * particles) preconditioned by block Jacobi or by a block LDLᵀ factorization of an earlier
 * matrix (block-ldlt.ts), for Newton's W = M + c_v D + c_x K solved at every iteration of
 * every step: W changes slowly, so a factorization made at one iterate preconditions the
 * following ones almost exactly (M⁻¹W − I of the order of how far W moved), and PCG with
 * it takes one to a few iterations where IC(0) took a hundred (the fem beam) or the
 * block-diagonal preconditioner hundreds (the stiff cloth).
 *
 * When to factor is decided by cost, counted in multiply-adds (deterministic: a run does
 * the same thing on any machine). Every PCG iteration after the first (after the first
 * JACOBI_FEW with block Jacobi) costs a product and a preconditioner application that a
 * fresh factorization would have saved; once those extra iterations, summed since the last
 * factorization, cost as much as one numeric factorization (its count from the symbolic
 * analysis), the next matrix is factored; a solve that reaches that budget on its own is
 * stopped, the current matrix factored and the solve finished from where it stood. So a
 * well-conditioned W (resolved springs: W ≈ M) keeps the block-Jacobi preconditioner and
 * never pays for a factorization, and a stiff one is refactored about as often as it pays
 * (ski-rental: at most twice the cost of the better of the two choices in hindsight).
 *
 * A fresh factorization that is not positive definite (an exact fem tangent in strong
 * compression: W indefinite) cannot precondition CG: the solve is then the direct one with
 * that factorization (exact: it factors W itself), and every later matrix is factored too
 * until one is positive definite again. The values are copied at `factor`, so the products
 * use the W given there even if the caller reuses the block matrix meanwhile (the
 * integrators' K v of Rayleigh damping).
 *
 * Stopping: ‖b − W x‖₂ ≤ tolerance ‖b‖₂ on the recursively updated residual, from x = the
 * given start (zero, or a warm start: the test is relative to b, so a good start is
 * credited).
 *
 * What carries from one step to the next (every step's first Newton iteration calls
 * `factor`, which overwrites W's copy and block Jacobi) is the preconditioner's kind, the
 * work counted against the next factorization and the factorization itself: a snapshot
 * holds them (saveMemory, the state record's `factorization`, simulation/state.ts), so
 * that a resumed run repeats the same iterates bit for bit. The factorization is recorded
 * as the matrix it was computed from, W_f, and refactored on restore: the numeric
 * factorization is a deterministic function of W_f's values and the pattern (whose AMD
 * ordering the state record's block pattern fixes). Only W_f's symmetric part is kept,
 * each mirrored pair of blocks once (packSymmetric), which is all the factorization reads:
 * 9 float64 per node and per pair of nodes sharing an element, about 5.7 blocks or 410
 * bytes per free node of the box meshes (550 characters of base64 in the JSON snapshot),
 * where the rest of the state record takes 22 float64 per node (13 of body arrays, 9 of
 * generalized-α's memory).
 * Recording the inputs of W_f's assembly instead (the Newton iterate's positions and
 * velocities, 48 bytes a node, and the scheme coefficients) would be smaller, but exact
 * only while W is a function of them: compliant contact's Jacobian, in W when the nodes
 * touch the ground, reads the contact geometry its effector took at the start of the step
 * of W_f (possibly steps before the snapshot), which would have to be replayed too.
 */
import type { SparseBlockMatrix } from "../../math/block-matrix";
import { BlockLdlt } from "./block-ldlt";
import { CgRun, type CgVectors, cgVectors, confirmNever, conjugateGradients } from "./cg";
import { DEFAULT_TOLERANCE, defaultMaxIterations } from "./iterative-base";
import type { LinearSolveInfo } from "./linear-solver";
import { BlockJacobiPreconditioner, type Preconditioner } from "./preconditioners";

/**
 * Iterations a block-Jacobi solve may take without counting against a factorization: an
 * easy W (the mass dominating, resolved springs) converges within them, and a
 * factorization, dearer per iteration, would not pay back there.
 */
const JACOBI_FEW = 8;

/** What a FactoredPcg carries from one step to the next (see the file comment). */
export interface FactorizationMemory {
  /**
   * The preconditioner: block Jacobi of each W ("jacobi"), the LDLᵀ factorization of
   * `matrix` ("factored"), or a fresh factorization of every W solved directly ("direct",
   * after an indefinite one).
   */
  mode: "jacobi" | "factored" | "direct";
  /** Multiply-adds of extra PCG iterations counted since the last factorization. */
  wasted: number;
  /** "factored": W_f's symmetric part, its blocks packed (packSymmetric). */
  matrix?: Float64Array;
}

export class FactoredPcg {
  readonly name = "cg" as const;
  tolerance = DEFAULT_TOLERANCE;
  /** Iteration limit; undefined: max(200, 3n). */
  maxIterations: number | undefined = undefined;
  /** The factorization (exposed for tests and benchmarks: its counters and costs). */
  readonly ldlt = new BlockLdlt();
  private readonly jacobi = new BlockJacobiPreconditioner();
  private matrix: SparseBlockMatrix | null = null;
  /** m.structureVersion at the last `factor` (the pattern the buffers are sized for). */
  private version = -1;
  /** W's block values at the last `factor` (m's layout). */
  private values = new Float64Array(0);
  /** W_f: the values the current factorization was computed from (for saveMemory). */
  private factoredValues = new Float64Array(0);
  /** The preconditioner is the factorization (else block Jacobi). */
  private factored = false;
  /** The factorization is of the current W (a solve with it is exact). */
  private fresh = false;
  /** The last fresh factorization was indefinite: solve directly, refactor every matrix. */
  private direct = false;
  /** Multiply-adds of PCG iterations beyond each solve's first since the last factorization. */
  private wasted = 0;
  /**
   * The memory held at a simulation step's start (hold), which restoreHeld puts back when
   * the step fails, as restoreMemory puts a snapshot's: the flags, the pattern they are of
   * (matrix null: none to hold), and W_f, copied to heldValues only when a refactorization
   * after the hold overwrites it (`overwritten`): no copy in a step that keeps it.
   */
  private readonly held = {
    matrix: null as SparseBlockMatrix | null,
    version: -1,
    factored: false,
    direct: false,
    wasted: 0,
    overwritten: false,
  };
  private heldValues = new Float64Array(0);
  /**
   * @param factorFirst start with the factorization rather than block Jacobi: for elastic
   *   solids, whose W = M + c_x K is dominated by the stiffness at any practical step (the
   *   fem beam: c_x K ≈ 10³ M), so that block Jacobi would spend a factorization's cost in
   *   iterations (hundreds of them) before the switch.
   */
  constructor(private readonly factorFirst = false) {
    this.run.confirm = confirmNever;
    this.run.afterIteration = (iterations) => this.countWork(iterations);
  }

  private vectors: CgVectors = cgVectors(0);
  /** The CG runs: the recursive residual trusted, stopped by the work budget (countWork). */
  private readonly run = new CgRun();
  /** W x with the values of the last `factor` (multiply), for conjugateGradients. */
  private readonly product = {
    apply: (x: Float64Array, out: Float64Array) => this.multiply(x, out),
  };
  /** The current preconditioner (precondition), for conjugateGradients. */
  private readonly preconditioner: Preconditioner = {
    apply: (r: Float64Array, z: Float64Array) => this.precondition(r, z),
  };
  /** Multiply-adds of one PCG iteration in the running solve (iterationCost). */
  private cost = 0;

  /** Takes W (a copy of m's values) and refactors or refreshes the preconditioner (above). */
  factor(m: SparseBlockMatrix): void {
    if (this.ldlt.prepare(m) || this.matrix !== m) this.bind(m);
    this.values.set(m.values);
    this.fresh = false;
    const first = this.factorFirst && !this.factored && !this.blockDiagonal(m);
    if (this.direct || this.wasted >= this.ldlt.factorCost || first) this.refactor();
    else if (!this.factored) this.jacobi.update(m);
  }

  /** Starts afresh on m's pattern (analysed by ldlt.prepare): block Jacobi, no work counted. */
  private bind(m: SparseBlockMatrix): void {
    this.matrix = m;
    this.version = m.structureVersion;
    this.factored = false;
    this.direct = false;
    this.fresh = false;
    this.wasted = 0;
    this.vectors = cgVectors(m.size);
    this.values = new Float64Array(m.values.length);
    this.factoredValues = new Float64Array(m.values.length);
  }

  /**
   * The memory the next `factor` of m reads (a copy; nothing of the solver changes, so a
   * run that takes snapshots is the run that does not), or undefined when there is none:
   * before the first `factor`, or after m's pattern changed (the next `factor` starts
   * afresh). W_f is recorded by its symmetric part, each mirrored pair of blocks once
   * (packSymmetric: about half the values, and all the factorization reads).
   */
  saveMemory(m: SparseBlockMatrix): FactorizationMemory | undefined {
    if (this.matrix !== m || this.version !== m.structureVersion) return undefined;
    const mode = !this.factored ? "jacobi" : this.direct ? "direct" : "factored";
    if (mode !== "factored") return { mode, wasted: this.wasted };
    return { mode, wasted: this.wasted, matrix: packSymmetric(m, this.factoredValues) };
  }

  /** Holds the memory saveMemory would record of m (a simulation step's start); allocates nothing. */
  hold(m: SparseBlockMatrix): void {
    const h = this.held;
    h.matrix = this.matrix === m && this.version === m.structureVersion ? m : null;
    h.version = this.version;
    h.factored = this.factored;
    h.direct = this.direct;
    h.wasted = this.wasted;
    h.overwritten = false;
  }

  /**
   * The memory `hold` held, back (the step failed): W_f refactored if the step replaced
   * it, as restoreMemory does with a snapshot's; as a new solver when there was none or
   * m's pattern changed since.
   */
  restoreHeld(m: SparseBlockMatrix): void {
    const h = this.held;
    if (h.matrix !== m || this.matrix !== m || this.version !== h.version) {
      this.matrix = null;
      return;
    }
    if (h.overwritten && h.factored && !h.direct) {
      this.values.set(this.heldValues);
      this.refactor();
    }
    this.factored = h.factored;
    this.direct = h.direct;
    this.wasted = h.wasted;
    this.fresh = false;
  }

  /**
   * Puts saveMemory's record of m back (m's pattern as it was then: the state record
   * restores it first), refactoring W_f; undefined: as a new solver. A record of another
   * pattern (W_f's length does not fit: m holds more blocks, reserved by an earlier run of
   * this simulation, as compliant contact never releases them) cannot be put back either,
   * and the solver starts afresh too (the next `factor`: as after a pattern change).
   */
  restoreMemory(m: SparseBlockMatrix, memory: FactorizationMemory | undefined): void {
    this.matrix = null;
    if (memory === undefined) return;
    const w = memory.matrix;
    if (memory.mode === "factored" && w?.length !== 9 * packedBlocks(m)) return;
    this.ldlt.prepare(m);
    this.bind(m);
    if (w !== undefined && memory.mode === "factored") {
      unpackSymmetric(m, w, this.values);
      this.refactor();
    } else if (memory.mode === "direct") {
      // the next `factor` refactors its W and solves directly: no factorization to restore
      this.factored = true;
      this.direct = true;
    }
    this.fresh = false;
    this.wasted = memory.wasted;
  }

  /**
   * True when every off-diagonal block of m is zero (W = M: the start acceleration of a
   * run), where block Jacobi is exact and a factorization would be wasted.
   */
  private blockDiagonal(m: SparseBlockMatrix): boolean {
    const { rowStart, colBlock, valueStart } = m.pattern;
    const v = m.values;
    for (let bi = 0; bi < m.numBlocks; bi++)
      for (let k = rowStart[bi]; k < rowStart[bi + 1]; k++) {
        if (colBlock[k] === bi) continue;
        for (let t = valueStart[k]; t < valueStart[k] + 9; t++) if (v[t] !== 0) return false;
      }
    return true;
  }

  /**
   * The factorization of the W of the last `factor` (W⁻¹ exactly, up to rounding), for a
   * caller with `rightHandSides` right-hand sides at once (a contact Delassus build: one per
   * contact row). Made now when the preconditioner is block Jacobi or an older W's, if that
   * costs no more than one PCG iteration per right-hand side (multiply-adds, as `factor`
   * decides); else null, as before the first `factor` or when that W has a singular pivot
   * block (the caller then solves each one).
   */
  factorExactly(rightHandSides: number): BlockLdlt | null {
    if (this.matrix === null) return null;
    if (!this.fresh) {
      if (this.ldlt.factorCost > rightHandSides * this.iterationCost()) return null;
      this.refactor();
    }
    return this.ldlt.ok ? this.ldlt : null;
  }

  /** Factors the current W: the preconditioner from now on, or the direct solver. */
  private refactor(): void {
    const h = this.held;
    if (h.matrix !== null && !h.overwritten) {
      // the held W_f, before its first overwrite since the hold
      if (this.heldValues.length !== this.factoredValues.length)
        this.heldValues = new Float64Array(this.factoredValues.length);
      this.heldValues.set(this.factoredValues);
      h.overwritten = true;
    }
    this.factoredValues.set(this.values);
    const ok = this.ldlt.factor(this.matrix!, this.values);
    this.factored = true;
    this.fresh = true;
    this.direct = !(ok && this.ldlt.positiveDefinite);
    this.wasted = 0;
  }

  /** Multiply-adds of one PCG iteration: the product, the preconditioner, five vector sweeps. */
  private iterationCost(): number {
    const m = this.matrix!;
    const product = 9 * (m.values.length / 9);
    const precond = this.factored ? this.ldlt.solveCost : 9 * m.numBlocks;
    return product + precond + 5 * m.size;
  }

  /** out = W x with the values of the last `factor`. */
  private multiply(x: Float64Array, out: Float64Array): void {
    const m = this.matrix!;
    const { rowStart, colBlock, valueStart } = m.pattern;
    const v = this.values;
    for (let bi = 0; bi < m.numBlocks; bi++) {
      let s0 = 0;
      let s1 = 0;
      let s2 = 0;
      for (let k = rowStart[bi]; k < rowStart[bi + 1]; k++) {
        const c = 3 * colBlock[k];
        const o = valueStart[k];
        const x0 = x[c];
        const x1 = x[c + 1];
        const x2 = x[c + 2];
        s0 += v[o] * x0 + v[o + 1] * x1 + v[o + 2] * x2;
        s1 += v[o + 3] * x0 + v[o + 4] * x1 + v[o + 5] * x2;
        s2 += v[o + 6] * x0 + v[o + 7] * x1 + v[o + 8] * x2;
      }
      out[3 * bi] = s0;
      out[3 * bi + 1] = s1;
      out[3 * bi + 2] = s2;
    }
  }

  /** z = M⁻¹ r with the current preconditioner; returns rᵀz. */
  private precondition(r: Float64Array, z: Float64Array): number {
    return this.factored ? this.ldlt.solve(r, z) : this.jacobi.apply(r, z);
  }

  /**
   * The block of W (a node's 3 rows) at which the factorization W is solved with directly
   * met a singular or non-finite pivot (BlockLdlt.singularBlock), −1 otherwise: a `solve`
   * that then reports `converged` false did not iterate (its residual 0 and 0 iterations
   * say nothing), and the caller names the cause (iteration-matrix.ts).
   */
  get singularBlock(): number {
    return this.direct && !this.ldlt.ok ? this.ldlt.singularBlock : -1;
  }

  /** x = W⁻¹ b (x holds the start on entry: zero or a warm start). */
  solve(b: Float64Array, x: Float64Array): LinearSolveInfo {
    if (this.matrix === null) throw new Error("factored-pcg: solve before factor");
    const n = this.matrix.size;
    let bb = 0;
    for (let i = 0; i < n; i++) bb += b[i] * b[i];
    const bn = Math.sqrt(bb);
    if (bn === 0) {
      x.fill(0, 0, n);
      return { iterations: 0, residual: 0, converged: true };
    }
    if (this.direct) {
      this.ldlt.solve(b, x);
      return { iterations: 0, residual: 0, converged: this.ldlt.ok };
    }
    const target = this.tolerance * bn;
    const maxIt = this.maxIterations ?? defaultMaxIterations(n);
    const run = this.run;
    let total = 0;
    for (;;) {
      this.cost = this.iterationCost();
      conjugateGradients(
        this.product,
        this.preconditioner,
        n,
        b,
        x,
        this.vectors,
        target,
        maxIt - total,
        run,
      );
      total += run.iterations;
      const rn = run.residual;
      const converged = rn <= target;
      // stopped for its cost, broken down (pᵀWp ≤ 0 or rᵀz ≤ 0: a stale preconditioner
      // that is no longer SPD, or W indefinite), or out of iterations with a stale or
      // block-Jacobi preconditioner: factor W itself and go on from x
      if (converged || this.fresh || total >= maxIt)
        return { iterations: total, residual: rn / bn, converged };
      this.refactor();
      if (this.direct) {
        this.ldlt.solve(b, x);
        return { iterations: total, residual: 0, converged: this.ldlt.ok };
      }
    }
  }

  /**
   * CG's afterIteration: counts the iterations beyond the first of a solve (the
   * JACOBI_FEW first with block Jacobi) as work a fresh factorization would have saved,
   * and stops a solve with a preconditioner not of this W once that work reaches a
   * factorization's cost (solve then factors W and goes on from x).
   */
  private countWork(iterations: number): boolean {
    if (iterations > (this.factored ? 1 : JACOBI_FEW)) this.wasted += this.cost;
    return this.fresh || this.wasted < this.ldlt.factorCost;
  }
}

/**
 * W_f as saveMemory records it: the stored blocks in the pattern's order, each pair of
 * mirrored blocks once, as its symmetric part S = ½(W_ij + W_jiᵀ) at the one with i < j
 * (a diagonal block ½(W_ii + W_iiᵀ)); a block whose mirror is not stored as it is. The
 * same arithmetic block-ldlt.ts reads A with: IEEE addition commutes, so its mean, taken
 * from either side, is S; and restored as A_ij = S, A_ji = Sᵀ, ½(S + S) = S exactly.
 */
function packSymmetric(m: SparseBlockMatrix, w: Float64Array): Float64Array {
  const out = new Float64Array(9 * packedBlocks(m));
  let o = 0;
  forPackedBlocks(m, (a, b) => {
    for (let r = 0; r < 3; r++)
      for (let c = 0; c < 3; c++)
        out[o + 3 * r + c] = b < 0 ? w[a + 3 * r + c] : 0.5 * (w[a + 3 * r + c] + w[b + 3 * c + r]);
    o += 9;
  });
  return out;
}

/** w ← W_f from packSymmetric's record (m's layout: S at (i, j), Sᵀ at (j, i)). */
function unpackSymmetric(m: SparseBlockMatrix, packed: Float64Array, w: Float64Array): void {
  let o = 0;
  forPackedBlocks(m, (a, b) => {
    for (let r = 0; r < 3; r++)
      for (let c = 0; c < 3; c++) {
        const s = packed[o + 3 * r + c];
        w[a + 3 * r + c] = s;
        if (b >= 0) w[b + 3 * c + r] = s;
      }
    o += 9;
  });
}

/**
 * Calls visit(offset of block (i, j), offset of its mirror (j, i) or −1) for each block
 * packSymmetric records: every stored (i, j) with i ≤ j, and (i, j) with i > j when
 * (j, i) is not stored.
 */
function forPackedBlocks(m: SparseBlockMatrix, visit: (a: number, b: number) => void): void {
  const { rowStart, colBlock, valueStart } = m.pattern;
  for (let bi = 0; bi < m.numBlocks; bi++)
    for (let k = rowStart[bi]; k < rowStart[bi + 1]; k++) {
      const bj = colBlock[k];
      const mirror = bj === bi ? valueStart[k] : m.offsetOf(bj, bi);
      if (bj < bi && mirror >= 0) continue;
      visit(valueStart[k], mirror);
    }
}

/**
 * The number of 3×3 blocks packSymmetric records for a pattern of numBlocks diagonal
 * blocks and the given off-diagonal ones (i, j): each pair of mirrors once, the others
 * each (a snapshot's block pattern, checked before the simulation is touched).
 */
export function packedBlockCount(
  numBlocks: number,
  offDiagonal: readonly (readonly [number, number])[],
): number {
  // keys i·nb + j (below 2⁵³ for any block count a snapshot can hold); a repeated pair is
  // one block, as SparseBlockMatrix.addBlock reserves it once
  const stored = new Set(offDiagonal.map(([i, j]) => i * numBlocks + j));
  let count = numBlocks;
  for (const key of stored) {
    const i = Math.floor(key / numBlocks);
    const j = key - i * numBlocks;
    if (i < j || !stored.has(j * numBlocks + i)) count++;
  }
  return count;
}

/** The number of 3×3 blocks packSymmetric records for m's pattern. */
function packedBlocks(m: SparseBlockMatrix): number {
  let count = 0;
  forPackedBlocks(m, () => {
    count++;
  });
  return count;
}
