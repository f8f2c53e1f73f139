/**
 * The sub-step controller of the integrators that halve a step they reject (the θ-schemes'
 * joint steps, theta-scheme.ts tooCoarse; generalized-alpha.ts): at θ = ½ and under
 * generalized-alpha only Newton's failures count, the error control's rejections left to
 * each step, whose halvings must be its own for the symmetric scheme to keep its energy
 * (rejectedByErrorControl; so do symplectic Euler's without explicit stiff forces, and
 * with them, keeping one sub-step length a step, it counts both):
 * the depth d the next step starts at, 2^d sub-steps of h/2^d,
 * each still halved when it fails (step-halving.ts). Where a step's Newton fails or its
 * error control rejects it, halving after the failed attempt repeats at every step of a
 * violent stretch (a whipping chain's tip turning its links too far for one step: on the
 * benchmark's 100-link chain the attempt at h failed at nearly every step of the whip,
 * 30 % of all Newton iterations) or of a motion too fast for the step (a rod spun on a
 * hinge at h ω > 0.19), so the next steps start at the depth that succeeded:
 * - most sub-steps tried at the start depth failed: one level deeper (at most
 *   MAX_HALVINGS − 1, so that a failed sub-step can still be halved) for
 *   memory.substepBackoff steps, a wait that doubles with each such failure up to
 *   SUBSTEP_RETRY_STEPS and is 1 again after a step at depth 0 (an isolated failure
 *   costs one step at the finer depth);
 * - then one level shallower, if the sub-steps' error estimates predict the doubled
 *   sub-step within the tolerance (the trapezoidal rule's local error h³ x‴/12 grows
 *   2³-fold with the step); a try that fails comes back by the first rule.
 * Resolved motion never fails a step, stays at depth 0 and steps exactly as without it.
 * The controller's state is the integrator memory's (substepDepth, substepWait,
 * substepBackoff), saved in snapshots.
 */
import type { IntegratorMemory } from "./integrator";
import { MAX_HALVINGS } from "./step-halving";

/**
 * The longest wait (steps) before sub-steps twice as long are tried again (the wait
 * doubles from 1 with every failed try). A try that fails costs its attempt (3–5 Newton
 * iterations on the benchmark's whipping 100-link chain), a step spent at the finer depth
 * about one more sub-step's worth; on that chain a whip keeps the finer depth for tens to
 * hundreds of steps, where trying every 8 steps wastes 0.4 iterations a step and trying at
 * every step wasted 3 (bench/README.md, "Generalized-α").
 */
export const SUBSTEP_RETRY_STEPS = 8;

export class SubstepDepth {
  /** The running step's h (s) and the depth its sub-steps start at. */
  private stepSize = 0;
  private depth = 0;
  /** The running step's least depth (begin's `floor`). */
  private floor = 0;
  /**
   * Sub-steps tried at the start depth in the running step, those that failed, and the
   * largest error estimate of the accepted ones (relative to the tolerance; 0: none known).
   */
  private tried = 0;
  private failed = 0;
  private error = 0;

  constructor(private readonly memory: IntegratorMemory) {}

  /**
   * At a step of h (s) starting: the depth its sub-steps start at, at least `floor` (the
   * halvings its integrator asks anyway: symplectic Euler's stability bound, theta-scheme.ts;
   * its sub-steps are those whose failures count, and a step there is as one at depth 0).
   */
  begin(h: number, floor = 0): number {
    this.stepSize = h;
    this.floor = floor;
    this.depth = Math.max(this.memory.substepDepth, floor);
    this.tried = 0;
    this.failed = 0;
    this.error = 0;
    return this.depth;
  }

  /**
   * A sub-step of h tried: whether it was accepted, and its error estimate relative to the
   * tolerance (0: none known). Those of the start depth count.
   */
  record(h: number, accepted: boolean, error: number): void {
    // (h/2^d is exact in binary floating point: halving only changes the exponent)
    if (h !== this.stepSize * 0.5 ** this.depth) return;
    this.tried++;
    if (!accepted) this.failed++;
    else this.error = Math.max(this.error, error);
  }

  /** At the step's end: the depth the next step starts at (the file comment's rules). */
  end(): void {
    const memory = this.memory;
    const depth = this.depth;
    if (2 * this.failed > this.tried) {
      memory.substepDepth = Math.min(depth + 1, MAX_HALVINGS - 1);
      memory.substepWait = memory.substepBackoff;
      memory.substepBackoff = Math.min(2 * memory.substepBackoff, SUBSTEP_RETRY_STEPS);
      return;
    }
    if (depth === this.floor) {
      memory.substepBackoff = 1;
      return;
    }
    if (memory.substepWait > 0) memory.substepWait--;
    if (memory.substepWait === 0 && 8 * this.error <= 1) memory.substepDepth = depth - 1;
  }
}
