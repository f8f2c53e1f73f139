/**
 * A bilateral constraint (a joint, a motor, a distance link): m scalar equations
 * C(q, t) = 0 between body a and body b (either may be ground, index −1).
 *
 * Jacobian convention: Cq maps the generalized velocity of the two bodies, world-frame
 * [v_a, ω_a, v_b, ω_b], to Ċ − Ct, i.e. Ċ = Cq u + Ct. Because a rigid body's position
 * perturbation is the world-frame rotation vector δθ (q ← exp(δθ) ⊗ q), the same Cq also
 * gives δC = Cq [δx, δθ] to first order. Each row stores 6 entries per body (particles:
 * the first 3 are used, the last 3 are zero), row-major rows×6 in jacA and jacB.
 *
 * Acceleration level: Cq u̇ = Qc with Qc = −(d/dt Cq) u − 2 (∂Cq/∂t) u − Ctt, computed
 * analytically by each constraint (no finite differences). None of the joints and
 * motors here has a Cq that depends on t explicitly, so Qc = −(d/dt Cq) u − Ctt, and
 * along a motion with constant u (constant world ω: R(τ) = exp(τ[ω]×) R₀) and t = t₀ + τ,
 * d²C/dτ² = −Qc (this is what test/engine/constraints/joint-checks.ts checks for every joint type).
 *
 * The implementations are in kinematics.ts (row primitives with their derivations) and
 * one file per joint type plus motor.ts; pair-constraint.ts holds the shared parts.
 *
 * Multipliers λ (one per row) give the constraint's generalized force Cqᵀ λ on the
 * bodies (so M u̇ = f + Cqᵀ λ); `reaction` maps λ to the force and torque the constraint
 * applies on body b, world frame, torque about the joint point on b.
 */
export interface Constraint {
  /** The joint's or motor's model id (reactions and warnings name it). */
  readonly id: string;
  /** "joint" for the five joint types, "motor" for drives, "coupling" for mimics. */
  readonly category: "joint" | "motor" | "coupling";
  /** Model type: spherical, revolute, prismatic, fixed, distance, revolute-motor, prismatic-motor, mimic. */
  readonly type: string;
  /** True when C depends on t explicitly (motors): Ct and Ctt may then be non-zero. */
  readonly timeDependent: boolean;
  /** Number of scalar equations. */
  readonly rows: number;
  /**
   * Body indices, −1 for ground. A fixed body keeps its index (it has no dofs, so the
   * ConstraintSet assembles no block for it); its pose enters C like ground's.
   */
  readonly bodyA: number;
  readonly bodyB: number;
  /**
   * Up to two further bodies (distinct from a, b and each other, ≥ 0) for a constraint
   * between two joints' coordinates (mimic.ts), which spans up to four; absent for the
   * pair constraints.
   */
  readonly moreBodies?: readonly number[];
  /** C(q, t) into out[off .. off+rows). Units: m for positions, rad for angles. */
  residual(t: number, out: Float64Array, off: number): void;
  /**
   * Cq blocks for the current configuration, rows×6 each (row-major). Both blocks are
   * written whatever the bodies are (ground: the world frame as a body at the origin);
   * rotation columns of a particle are zero. jacMore: the blocks of moreBodies, one
   * rows×6 block after the other.
   */
  jacobian(t: number, jacA: Float64Array, jacB: Float64Array, jacMore?: Float64Array): void;
  /**
   * `jacobian`'s values written straight into the stacked Jacobian's storage
   * (ConstraintSet.updateJacobian) instead of through its blocks: row i of end a at
   * values[slotA + i·stride ..], widthA entries (6, or 3 for a particle: the translation
   * columns), nothing when slotA < 0 (ground, fixed); end b likewise. Optional (the
   * spherical joint's, the commonest and cheapest rows, where the blocks' copy cost more
   * than the rows themselves).
   */
  jacobianInto?(
    t: number,
    values: Float64Array,
    slotA: number,
    widthA: number,
    slotB: number,
    widthB: number,
    stride: number,
  ): void;
  /** Ct = ∂C/∂t (zero unless driven) into out[off ..). */
  velocityTerm(t: number, out: Float64Array, off: number): void;
  /** Qc into out[off ..), for the current positions and velocities. */
  quadraticTerm(t: number, out: Float64Array, off: number): void;
  /** Force and torque on body b from multipliers lambda[off .. off+rows). */
  reaction(lambda: Float64Array, off: number, force: Float64Array, torque: Float64Array): void;
  /**
   * Adds scale · ∂(Cq u)/∂q at the current velocities u (held fixed; the rotation columns
   * per world-frame δθ, as Cq's) to the stacked Jacobian's storage, laid out as
   * `jacobianInto`'s: the change of the rows' velocity Cq u as the bodies turn, which a
   * Newton step on velocity-level rows Cq(q) u + Ct = 0 at the step's end needs besides
   * Cq (ConstraintSet.velocityRows says why and what is left out). Optional: the point rows
   * of spherical, revolute and fixed joints (kinematics.ts addPointRowsCurvature); absent:
   * no term.
   */
  addVelocityCurvature?(
    values: Float64Array,
    slotA: number,
    widthA: number,
    slotB: number,
    widthB: number,
    stride: number,
    scale: number,
  ): void;
  /**
   * Geometric stiffness of the constraint force at fixed multipliers: adds to ka and kb
   * (row-major 3×3, world frame, N·m/rad) the symmetric part of ∂τ/∂θ, the change of the
   * torque of Cqᵀλ on body a (b) about its centre of mass with a rotation δθ of that same
   * body, at the kinematics of the last refresh (constraint-set.ts,
   * addGeometricStiffness, says why and what is left out). Absent: no term.
   */
  addRotationStiffness?(
    lambda: Float64Array,
    off: number,
    ka: Float64Array,
    kb: Float64Array,
  ): void;
}
