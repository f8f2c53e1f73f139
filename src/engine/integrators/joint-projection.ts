/**
 * Drift correction after a step with joints: positions projected onto C(q, t) = 0 and
 * velocities onto G v = −Ct, both in the mass metric (constraints/project.ts), so the
 * joint drift stays at jointTolerance (m, rad; solver.jointTolerance) instead of
 * accumulating; nothing when C is already within it. The stepper (acceleration-step.ts)
 * runs it after each step, in the order its integrator asks (integrator.ts,
 * ProjectionOrder), telling it what the step's last Newton iteration did with the joints.
 */

import type { ConstraintSet } from "../constraints/constraint-set";
import {
  constraintResidualNorm,
  type PositionProjectionResult,
  projectPositions,
  projectVelocities,
  type VelocityProjectionResult,
} from "../constraints/project";
import type { BodySystem } from "../model/body-system";
import type { ProjectionOrder } from "./integrator";

/**
 * The position projection: chord Newton on C = 0 to solver.jointTolerance (m or rad; the
 * schema's default 1e-12; `residualTolerance` here is replaced by it at every call).
 * Newton's quadratic regime starts only below a drift of about L/κ(S) (lever arm over the
 * condition number of G M⁻¹ Gᵀ: ~5 µm on the benchmark's 100-link chain), so the mm drift
 * of a violent whip step takes up to ~15 updates; one to three otherwise.
 */
const PROJECTION = {
  maxIterations: 25,
  relTolerance: 0,
  absTolerance: 1e-14,
  residualTolerance: 1e-12,
  chord: true,
};

/** The post-step projection of one simulation's joints (allocates in the constructor only). */
export class JointProjection {
  /** Results of the projections (reused: a step allocates nothing). */
  private readonly positionResult: PositionProjectionResult = {
    iterations: 0,
    residualNorm: 0,
    updateNorm: 0,
    converged: true,
    rank: 0,
  };
  private readonly velocityResult: VelocityProjectionResult = { residualNorm: 0, rank: 0 };
  /** The position projection's options (PROJECTION, residualTolerance set at each call). */
  private readonly options = { ...PROJECTION };

  constructor(
    private readonly sys: BodySystem,
    private readonly set: ConstraintSet,
  ) {}

  /**
   * Projects the state at tEnd. h (s) is the step just taken: the velocities are projected
   * to max(1e-9 (1 + ‖G v + Ct‖∞), 0.1 jointTolerance/h), a residual that moves the joints
   * by a tenth of the tolerance over the next step. `order` is the integrator's:
   * - velocities-first: S = G M⁻¹ Gᵀ is factored once, at the configuration the step
   *   reached; the velocity projection and the position projection's first update use it
   *   (chord iterations then, refactoring only when one does not contract).
   * - positions-first: S is factored at the first position iterate (chord iterations,
   *   each correction along the factorization's own G: project.ts, `correction`). When
   *   one correction sufficed, the velocities are then made tangent where that
   *   factorization was made, with it ("factored-configuration", one correction), as in
   *   a step whose positions needed no projection (see the body); else at the projected
   *   positions. After position-level rows the velocities are projected even when the
   *   positions were within tolerance.
   * @param positionLevelRows the step's last Newton iteration held the joint rows at the
   *   position level (C + G c_x Δa = 0), which leaves G v + Ct free
   * @param massMetricFactored the step's last constrained factorization took the mass
   *   path, whose S = G M⁻¹ Gᵀ is the projections' own (constrained-solve.ts shares the
   *   set's ProjectionWorkspace)
   * @returns whether the positions end within jointTolerance (false: the projection's
   *   updates ran out first; true when none was needed or the order is "none")
   */
  project(
    tEnd: number,
    h: number,
    order: ProjectionOrder,
    jointTolerance: number,
    positionLevelRows: boolean,
    massMetricFactored: boolean,
  ): boolean {
    if (order === "none") return true;
    const { sys, set, options, velocityResult, positionResult } = this;
    options.residualTolerance = jointTolerance;
    // a velocity residual ε moves the joints by h ε over the next step: a tenth of the
    // drift allowed (project.ts, projectVelocities)
    const velocityTolerance = (0.1 * jointTolerance) / h;
    if (order === "velocities-first") {
      if (constraintResidualNorm(set, tEnd) <= jointTolerance) return true;
      projectVelocities(sys, set, tEnd, "factor", velocityResult, velocityTolerance, false);
      return projectPositions(sys, set, tEnd, options, positionResult, true).converged;
    }
    const moved = projectPositions(sys, set, tEnd, options, positionResult).iterations > 0;
    // Moved positions: when one correction brought them within tolerance, the velocities
    // are made tangent where the projection factored (the positions are then within
    // ~√(2 L τ) of it, L a lever, as in an unmoved step below); after more corrections
    // (the mm drift of a violent whip step: tangent there, the whip's velocities would
    // slip by 3e-2 m/s) at the projected positions with a new factorization.
    // Unmoved positions after velocity-level rows keep the velocities the step made
    // (G v = −Ct where it linearized). Position-level rows leave G v + Ct free: when the
    // step ended within jointTolerance of the manifold, its velocities are made tangent
    // where it linearized, with the Newton step's own factorization when it took the
    // mass path (shared with the projections), else at the end of the step with a new
    // factorization.
    if (moved || positionLevelRows) {
      const atFactored = moved ? positionResult.iterations === 1 : massMetricFactored;
      projectVelocities(
        sys,
        set,
        tEnd,
        atFactored ? "factored-configuration" : "factor",
        velocityResult,
        velocityTolerance,
        false,
      );
    }
    return positionResult.converged;
  }
}
