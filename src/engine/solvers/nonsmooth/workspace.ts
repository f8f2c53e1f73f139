import { grow } from "../../math/grow";
import type { LocalCoefficients } from "./cone";
import { DenseDelassus } from "./delassus";
import { FactoredDelassus } from "./factored";
import type {
  ContactDim,
  DelassusOperator,
  NonsmoothOptions,
  NonsmoothProblem,
  NonsmoothResult,
  NonsmoothStatus,
  ResidualMeasure,
} from "./types";
import { DEFAULT_NONSMOOTH_OPTIONS, NonsmoothProblemError } from "./types";

/**
 * Workspace plumbing shared by the solvers: a validated view of the problem (dense input
 * wrapped without allocation), resolved options, growable vectors, and the per-contact
 * diagonal cache. Everything is sized on the first solve of a given size and reused; a
 * larger problem grows the buffers (amortized), never an iteration.
 */

const EMPTY = new Float64Array(0);

/** A validated, allocation-free view of a NonsmoothProblem. */
export class ProblemView {
  op: DelassusOperator;
  contacts = 0;
  dim: ContactDim = 1;
  m = 0;
  q: Float64Array = EMPTY;
  mu: Float64Array = EMPTY;
  private readonly dense = new DenseDelassus();

  constructor() {
    this.op = this.dense;
  }

  /** Checks sizes (q, r, μ, W) and binds the operator; throws NonsmoothProblemError. */
  bind(problem: NonsmoothProblem, r: Float64Array): void {
    const nc = problem.contacts;
    const dim = problem.contactDim;
    if (!(Number.isInteger(nc) && nc >= 0))
      throw new NonsmoothProblemError(`contacts must be a non-negative integer, got ${nc}`);
    if (dim !== 1 && dim !== 3)
      throw new NonsmoothProblemError(`contactDim must be 1 or 3, got ${String(dim)}`);
    const m = nc * dim;
    if (problem.q.length < m)
      throw new NonsmoothProblemError(`q has ${problem.q.length} entries, needs ${m}`);
    if (r.length < m) throw new NonsmoothProblemError(`r has ${r.length} entries, needs ${m}`);
    if (problem.W instanceof Float64Array) this.op = this.dense.set(problem.W, nc, dim);
    else {
      const op = problem.W;
      if (op.size !== m || op.blockSize !== dim || op.blocks !== nc)
        throw new NonsmoothProblemError(
          `Delassus operator is ${op.blocks} blocks of ${op.blockSize} (size ${op.size}); ` +
            `the problem has ${nc} contacts of dimension ${dim}`,
        );
      this.op = op;
    }
    if (dim === 3) {
      const mu = problem.mu;
      if (!mu || mu.length < nc)
        throw new NonsmoothProblemError(`friction contact needs mu with ${nc} entries`);
      for (let i = 0; i < nc; i++)
        if (!(mu[i] >= 0))
          throw new NonsmoothProblemError(`mu[${i}] = ${mu[i]} must be finite and ≥ 0`);
      this.mu = mu;
    } else this.mu = problem.mu ?? EMPTY;
    this.contacts = nc;
    this.dim = dim;
    this.m = m;
    this.q = problem.q;
  }
}

/** Options with defaults applied (held by each solver, rewritten per solve). */
export class ResolvedOptions {
  maxIterations: number = DEFAULT_NONSMOOTH_OPTIONS.maxIterations;
  tolerance: number = DEFAULT_NONSMOOTH_OPTIONS.tolerance;
  /** NaN when the caller gave none (solvers pick their own default). */
  omega = Number.NaN;
  warmStart: boolean = DEFAULT_NONSMOOTH_OPTIONS.warmStart;
  polish: boolean = DEFAULT_NONSMOOTH_OPTIONS.polish;

  resolve(o: NonsmoothOptions | undefined): this {
    this.maxIterations = o?.maxIterations ?? DEFAULT_NONSMOOTH_OPTIONS.maxIterations;
    this.tolerance = o?.tolerance ?? DEFAULT_NONSMOOTH_OPTIONS.tolerance;
    this.omega = o?.omega ?? Number.NaN;
    this.warmStart = o?.warmStart ?? DEFAULT_NONSMOOTH_OPTIONS.warmStart;
    this.polish = o?.polish ?? DEFAULT_NONSMOOTH_OPTIONS.polish;
    if (!(this.maxIterations >= 0))
      throw new NonsmoothProblemError(`maxIterations must be ≥ 0, got ${this.maxIterations}`);
    if (!(this.tolerance >= 0))
      throw new NonsmoothProblemError(`tolerance must be ≥ 0, got ${this.tolerance}`);
    if (!Number.isNaN(this.omega) && !(this.omega > 0 && this.omega < 2))
      throw new NonsmoothProblemError(`omega must be in (0, 2), got ${this.omega}`);
    return this;
  }
}

/**
 * Diagonal entries of the Delassus operator below this fraction of its largest are taken as
 * zero (DiagonalCache.load): far below any real ratio of masses and lever arms (1e-12), far
 * above the round-off a constrained solve leaves where a joint blocks the direction.
 */
const DIAGONAL_FLOOR = 1e-12;

/** Growable per-contact diagonal cache (diagonal blocks, 1/W_nn, tangential step). */
export class DiagonalCache implements LocalCoefficients {
  diag: Float64Array<ArrayBuffer> = EMPTY;
  invN: Float64Array<ArrayBuffer> = EMPTY;
  rhoT: Float64Array<ArrayBuffer> = EMPTY;
  private readonly block = new Float64Array(9);
  /** The FactoredDelassus last loaded and its revision (null: reload every time). */
  private loaded: FactoredDelassus | null = null;
  private revision = 0;

  /**
   * Reads W's diagonal blocks; skipped when W is the FactoredDelassus of the last load at
   * the same revision (unchanged: a repeated solve of one problem), whose blocks cost more
   * than a sweep to form.
   */
  load(v: ProblemView): void {
    const op = v.op;
    if (op instanceof FactoredDelassus) {
      if (op === this.loaded && op.revision === this.revision) return;
      this.loaded = op;
      this.revision = op.revision;
    } else this.loaded = null;
    const nc = v.contacts;
    const bb = v.dim * v.dim;
    this.diag = grow(this.diag, 9 * nc);
    this.invN = grow(this.invN, nc);
    this.rhoT = grow(this.rhoT, nc);
    const blk = this.block;
    let scale = 0;
    for (let i = 0; i < nc; i++) {
      v.op.diagonalBlock(i, blk);
      // Stored at stride 9 whatever the dimension (dim 1 uses entry 0).
      for (let e = 0; e < bb; e++) this.diag[9 * i + e] = blk[e];
      scale = Math.max(scale, Math.abs(blk[0]), v.dim === 3 ? blk[4] + blk[8] : 0);
    }
    // A direction no motion the joints allow can change (a plank hinged along the floor,
    // a platform welded to the ground, touching the floor) has W_nn = 0, which the joints'
    // constrained solve returns as round-off (±8e-102 against 0.1 on a welded platform):
    // its inverse, 1e101, blew the local updates up to NaN. Below DIAGONAL_FLOOR of the
    // largest diagonal entry the row is taken as zero: no update moves its impulse.
    const floor = DIAGONAL_FLOOR * scale;
    for (let i = 0; i < nc; i++) {
      const wnn = this.diag[9 * i];
      this.invN[i] = wnn > floor ? 1 / wnn : 0;
      if (v.dim === 3) {
        const tr = this.diag[9 * i + 4] + this.diag[9 * i + 8];
        this.rhoT[i] = tr > floor ? 2 / tr : 0;
      } else this.rhoT[i] = 0;
    }
  }
}

/** Builds the result record (once per solve). */
export function makeResult(
  iterations: number,
  residual: number,
  converged: boolean,
  measure: ResidualMeasure,
  status: NonsmoothStatus,
  message?: string,
): NonsmoothResult {
  const res: NonsmoothResult = { iterations, residual, converged, measure, status };
  if (message !== undefined) res.message = message;
  return res;
}

/** Status and message for an iterative solve that ended without reaching the tolerance. */
export function unconvergedResult(
  solver: string,
  iterations: number,
  residual: number,
  tolerance: number,
  measure: ResidualMeasure,
  stalled = false,
): NonsmoothResult {
  if (!Number.isFinite(residual))
    return makeResult(
      iterations,
      residual,
      false,
      measure,
      "diverged",
      `${solver}: residual became ${residual} after ${iterations} iterations (NaN/Inf in W, q or r?)`,
    );
  if (stalled)
    return makeResult(
      iterations,
      residual,
      false,
      measure,
      "stalled",
      `${solver}: iterate stopped moving at residual ${residual.toExponential(3)} > tolerance ${tolerance} (${iterations} iterations)`,
    );
  return makeResult(
    iterations,
    residual,
    false,
    measure,
    "max-iterations",
    `${solver}: residual ${residual.toExponential(3)} > tolerance ${tolerance} after ${iterations} iterations`,
  );
}

/** A fixed pseudo-random vector in [0.5, 1.5) for power iterations (no structural zeros). */
export function fillProbe(x: Float64Array, m: number): void {
  for (let i = 0; i < m; i++) {
    const s = Math.sin((i + 1) * 12.9898) * 43758.5453;
    x[i] = 0.5 + (s - Math.floor(s));
  }
}
