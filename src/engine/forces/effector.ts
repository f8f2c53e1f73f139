/**
 * The force effector interface of ArtiSynth (artisynth.core.mechmodels.ForceEffector).
 *
 * An effector holds a reference to the BodySystem it acts on. Per step the integrator
 * calls, in order: `applyForces(t)` (adds, never sets, world-frame forces and torques
 * about the centre of mass into sys.force / sys.torque), and, for implicit schemes,
 * `addPosJacobian(M, s)` and `addVelJacobian(M, s)`, which add s·∂f/∂x and s·∂f/∂v to
 * the solve matrix M. Position perturbations of a rigid body are [δx, δθ] with δθ a
 * world-frame rotation vector (q ← exp(δθ) ⊗ q); velocity perturbations are [δv, δω].
 * Note the sign: these are derivatives of the force, so the stiffness is K = −∂f/∂x and
 * an integrator adds −h²β·(∂f/∂x) by passing s = −h²β.
 *
 * `addSolveBlocks(M)` is called once when the solve matrix is built (and again when the
 * effector's set of bodies changes) to reserve the blocks the Jacobians fill.
 */
import type { SparseBlockMatrix } from "../math/block-matrix";
import type { MatrixTypeFlags } from "../solvers/linear/linear-solver";

export interface ForceEffector {
  /** The model id this effector came from (or a generated one, e.g. "gravity"). */
  readonly id: string;
  /**
   * MatrixType flags (SYMMETRIC | POSITIVE_DEFINITE) that adding this effector's
   * Jacobian terms (with the integrator's negative s) preserves in the solve matrix.
   * Both are set when the effector has no Jacobian.
   */
  readonly jacobianType: MatrixTypeFlags;
  /**
   * False when the Jacobian methods add nothing (gravity, constant point forces on
   * particles): an integrator whose every effector says so may use the mass matrix alone.
   * Absent means true.
   */
  readonly hasJacobians?: boolean;
  /**
   * True for forces so stiff in the positions that the rounding of the positions, through
   * the stiffness, bounds how small a Newton correction the implicit step can resolve
   * (elastic solids: acceleration-step.ts positionRoundingFloor). Absent means false.
   */
  readonly roundingBound?: boolean;
  /**
   * True when, the positions held, the forces are affine in the velocities, f = f₀ + D v
   * with D exact in addVelJacobian (gravity, loads, linear dampers, springs with linear
   * dashpots; not the gyroscopic torque, quadratic in ω, nor switching contacts). A step
   * that holds the positions (Newmark's central difference, β = 0) then has an affine
   * residual in the accelerations, which one exact linear solve zeroes
   * (acceleration-step.ts `solve`). Absent means false.
   */
  readonly affineInVelocity?: boolean;
  /**
   * True when the force, the state held, changes with time (a time function's command or
   * load, the model's, not an input's constant): the pull it gives a joint limit's
   * coordinate may grow within a step beyond what the last step showed
   * (integrators/impact-events.ts, `far`). Absent means false.
   */
  readonly timeDependent?: boolean;
  /**
   * The largest fraction α ∈ (0, 1] of a Newton correction `da` (accelerations, the body
   * system's layout; positions move by c_x da, velocities by c_v da) the effector lets the
   * iteration take: a saturated servo whose law the whole correction would carry past its
   * range to the opposite limit stops it inside the range (actuator.ts). Absent: 1.
   */
  stepFraction?(da: Float64Array, cx: number, cv: number): number;
  /**
   * Why the current configuration lies outside the force's model, or null: a fem element
   * inverted or crushed past its material's least stretch (FemEffector.strainFault). A
   * Newton solve that ends there is rejected, its step redone in halves
   * (acceleration-step.ts, `solve`; step-halving.ts); one left there at the last halving
   * ends the run `diverged` at its last good state (simulation.ts findBlowUp). Absent: never.
   */
  strainFault?(): string | null;
  /**
   * A mass matrix of the effector's own beyond the bodies' (a consistent mass: its
   * difference ΔM from the lumped particle masses the BodySystem holds), for the schemes
   * that solve with the full mass matrix (newmark, generalized-alpha): out += s ΔM x over
   * the generalized coordinates, and s ΔM into the solve matrix (blocks reserved by
   * addSolveBlocks). Absent: none.
   */
  addMassProduct?(x: Float64Array, out: Float64Array, s: number): void;
  addMassBlocks?(m: SparseBlockMatrix, s: number): void;
  /**
   * Adds to out[0] an upper bound (1/s²) of λ_max(M⁻¹K) and to out[1] one (1/s) of
   * λ_max(M⁻¹D) of the effector's forces at the current state (K = −∂f/∂x, D = −∂f/∂v, M
   * the bodies' masses): its stiffest mode's ω² and its damping rate, which a step taking
   * the forces explicitly must resolve (symplectic Euler: stable while h² ω² + 2 h γ < 4,
   * theta-scheme.ts). The bounds of several effectors add up (Weyl's inequality in the
   * M-inner product). Absent: the forces' stiffness is not checked (gravity, loads: none).
   */
  addExplicitRates?(out: Float64Array): void;
  /**
   * The same bounds by rows of 3 × 3 blocks, for forces that couple few bodies (springs,
   * frame springs, dampers, joint servos): adds to stiff[r] and damp[r] (1/s², 1/s) the effector's
   * Gershgorin row sums of block row r of the symmetric parts of M^{-1/2} K M^{-1/2} and
   * M^{-1/2} D M^{-1/2}: λ_max of the diagonal block plus Σ ‖S_rc‖ over the other blocks c
   * of its row, the blocks being each body's translation (r = 2b, b the body index) and a
   * rigid body's rotation (r = 2b + 1). Row sums of several effectors add up, and λ_max ≤
   * max_r of the total (block Gershgorin, Feingold and Varga 1962, with Weyl's inequality
   * on the diagonal blocks): springs on different bodies bound by the stiffest one, not by
   * their sum (theta-scheme.ts explicitForceRates takes the max).
   */
  addExplicitRows?(stiff: Float64Array, damp: Float64Array): void;
  /**
   * Whether a step of h (s) leaves the effector's own rates unresolved, h λ > 1 with λ its
   * damping rate or the angular frequency of its stiffness, at the current state: its
   * force is then taken at the end of the step (weight 1, backward Euler's L-stable
   * weighting) inside the trapezoidal schemes, whose amplification of such a mode is
   * near −1 (AccelerationStepper.holdStiffForces). Absent: never (the scheme's own
   * weights for every force). `jointInverseInertia`, when given, returns gᵀ P M⁻¹ g (the
   * inverse inertia the joints leave along the generalized direction g, a force vector of
   * the system's dofs; P the mass-orthogonal projection onto their tangent) for an
   * effector whose rates the joints lower.
   */
  unresolvedBy?(h: number, jointInverseInertia?: (g: Float64Array) => number): boolean;
  /**
   * With unresolvedBy: the inverse inertia 1/Ĩ (1/(kg·m²) or 1/kg) along the force's own
   * coordinate, gᵀ P M⁻¹ g with `jointInverseInertia` (see unresolvedBy), else the bodies'
   * own gᵀ M⁻¹ g.
   */
  inverseInertiaAlong?(jointInverseInertia?: (g: Float64Array) => number): number;
  /**
   * With unresolvedBy: how much the force's law (N·m or N) moves per unit change of the
   * unknown acceleration along its coordinate, ∂τ/∂(g·a) = c_x k_p + c_v k for a law
   * τ(q, q̇) of stiffness k_p and rate gain k (a servo's k_d + δ k_p with its lead); 0
   * where it does not move (saturated). With coordinateAlong: Newton's test on the
   * unresolved servos (AccelerationStepper.servoLawsSettled).
   */
  lawGain?(cx: number, cv: number): number;
  /** With lawGain: g·x, the coordinate's change along x (a change of the unknown). */
  coordinateAlong?(x: Float64Array): number;
  /**
   * With lawGain: the magnitudes of the terms the law's last evaluation summed (N·m or N;
   * a servo's k_p (|q*| + |q|) + k (|q̇*| + |q̇|)), the scale of its rounding.
   */
  lawScale?(): number;
  /**
   * With lawGain: the law's value τ (N·m or N, saturated) at t and the current state, as
   * applyForces would apply it (its lead's included), applying nothing: Newton's linear
   * model of it at the accepted unknown against the end state's reading
   * (AccelerationStepper.lawRoundingWork).
   */
  lawAt?(t: number): number;
  /**
   * For an effector unresolvedBy chose, the lead δ (s) of the (sub-)step: its stiffness's
   * displacement is measured at x + δ v, the position a backward-Euler step of that force
   * reaches (AccelerationStepper.holdStiffForces); a stiffness k then adds δ k to its
   * damping, in the force and its Jacobians. 0: at x, as every other force. Absent: no
   * stiffness to lead.
   */
  leadStiffness?(delta: number): void;
  /**
   * Optional: the rate gain k (N·s/m or N·m·s/rad) with which the force's law reads the rate
   * g·v along its own direction g (a servo's k_d + δ k_p, its lead's included:
   * JointActuator), g written into `out` as a generalized vector of the system's dofs, at
   * the state the last applyForces saw; 0 (out zeroed) where the law reads none (saturated).
   * With lawRate: the unresolved servos' rates in Newton's correction (stiff-rates.ts).
   */
  rateGainAlong?(out: Float64Array): number;
  /** With rateGainAlong: the rate g·v (rad/s or m/s) at the current positions and velocities. */
  lawRate?(): number;
  /**
   * While held (true), applyForces leaves the effort the effector reports (an actuator's
   * State effort) as it is: AccelerationStepper.projectOnConstraints keeps the force a step
   * applied while it reads the projected end state's. Absent: nothing reported.
   */
  holdEffort?(hold: boolean): void;
  applyForces(t: number): void;
  addSolveBlocks(m: SparseBlockMatrix): void;
  /**
   * Optional: adds s·K_turn to m, K_turn the part of ∂f/∂x that the turning of the force's
   * direction with the bodies gives where addPosJacobian leaves it out (a joint servo's
   * τ ∂g/∂x: JointActuator.addTurnStiffness), in the blocks addSolveBlocks reserved; not
   * symmetric.
   */
  addTurnStiffness?(m: SparseBlockMatrix, s: number): void;
  addPosJacobian(m: SparseBlockMatrix, s: number): void;
  addVelJacobian(m: SparseBlockMatrix, s: number): void;
  /** Potential energy stored by this effector (J); 0 for non-conservative ones. */
  potentialEnergy(): number;
  /**
   * Adds to the body accumulators (sys.force, sys.torque), as applyForces adds its whole
   * force, the part of its force at time t (s) and the current state whose work its
   * potential energy does not account for: a dashpot's force, a load's, an actuator's
   * effort, a compliant law's damping. Its power −F·v (W) is what the effector takes out
   * of the system (≥ 0 for dampers, negative for a load or an actuator that drives), and
   * the energy balance integrates F over each step with the scheme's own weights
   * (simulation/monitor.ts). Absent: the effector does no work beyond its potential
   * (gravity, undamped springs, gyroscopic terms).
   */
  applyDissipativeForces?(t: number): void;
  /**
   * A function Φ (J) of t and the current state whose rate Φ̇ (storedPower) is part of the
   * dissipative force's power −F·v: a position servo's Φ = ∫ clamp(k_p e) de, e = q − q*
   * (JointActuator). The articulated integrator books ΔΦ over a step exactly, from the
   * states it reached, and integrates only the rest of the power, −F·v − Φ̇, by its stages
   * (StepWork.forcePower, storedEnergy). Absent: none.
   */
  storedEnergy?(t: number): number;
  /** Φ̇ (W) at t and the current state (storedEnergy); present with it. */
  storedPower?(t: number): number;
  /**
   * Optional: an energy–momentum force for the trapezoidal rule (moreau-jean at θ = ½,
   * generalized-alpha at ρ∞ = 1, newmark at (¼, ½) through it: x_{t+h} − x_t =
   * h (v_t + v_{t+h})/2, M (v_{t+h} − v_t) = h f̄):
   * the stepper calls `beginMeanStep()` at the step's start, the positions x_t, after
   * f(x_t), and sets `meanForces` while it evaluates the end's forces, when applyForces is
   * to add 2 f̄(x_t, x) − f(x_t) instead of f(x): the step's ½ f(x_t) + ½ (that) is f̄, a
   * discrete gradient whose work on x_{t+h} − x_t is exactly minus the change of the
   * potential energy (fem-effector.ts). Absent: the trapezoid of f.
   */
  meanForces?: boolean;
  beginMeanStep?(): void;
  /**
   * With beginMeanStep: sys.force += f(x) − f̃(x) at the current positions, the end of a
   * mean step (f̃ = 2 f̄(x_t, x) − f(x_t), the force the step's residual took), keeping x as
   * the next mean step's start (beginMeanStep then does not evaluate it again).
   * AccelerationStepper.meanEndCorrection.
   */
  endMeanStep?(): void;
  /**
   * Optional, with beginMeanStep: out += s (J̃ − J) x (generalized coordinates), J̃ the exact
   * derivative of the mean step's force 2 f̄(x_t, x) − f(x_t) at the current positions x and
   * J the position Jacobian addPosJacobian last assembled: what W lacks to be the mean
   * step's exact Newton matrix, W − w c_x (J̃ − J) (J̃ is not symmetric; the stepper
   * corrects the solve with W by it, AccelerationStepper.meanTangentCorrection).
   */
  addMeanTangentProduct?(x: Float64Array, out: Float64Array, s: number): void;
}

/**
 * Optional: an effector whose exact Jacobian is nonsymmetric but which can supply a
 * symmetric approximation with the same force (so a Newton iteration converges to the
 * same solution; only its iteration matrix changes). When `symmetricJacobian` is true,
 * addPosJacobian / addVelJacobian / jacobianType describe that approximation. The
 * integrator sets it when the linear solver needs a symmetric matrix (CG, MINRES, LDLᵀ,
 * Cholesky). Rayleigh stiffness damping r_K K v is built from the same K, so with r_K > 0
 * it follows the approximation too (for springs positive semidefinite: it never adds
 * energy, where the exact K of a compressed spring would).
 */
export interface SymmetrizableEffector extends ForceEffector {
  symmetricJacobian: boolean;
}

export function isSymmetrizable(e: ForceEffector): e is SymmetrizableEffector {
  return typeof (e as Partial<SymmetrizableEffector>).symmetricJacobian === "boolean";
}

/**
 * Optional: matrix-free products with J = s_x ∂f/∂x + s_v ∂f/∂v (the same s convention as
 * addPosJacobian), so a Krylov solver can use the Newton iteration matrix without
 * assembling it. `setJacobianProduct(sx, sv, matrix)` fixes J at the current state and,
 * unless `matrix` is null (the mass preconditions alone, iteration-operator.ts), adds
 * J's blocks to those reserved in `matrix`, a SparseBlockMatrix laid out as the solve
 * matrix: its diagonal blocks (the block-Jacobi preconditioner) or all of them (the
 * multigrid preconditioner); then
 * `addJacobianProduct(x, out)` adds J x (generalized vectors of size numDofs). Neither
 * may allocate. `announceJacobianProduct(sx, sv)`, optional, tells the effector the
 * coefficients of the coming `setJacobianProduct` before the forces at that state are
 * applied (the stepper calls it before the residual), so it may compute J along with the
 * forces instead of in a pass of its own.
 */
export interface JacobianProductEffector extends ForceEffector {
  setJacobianProduct(sx: number, sv: number, matrix: SparseBlockMatrix | null): void;
  announceJacobianProduct?(sx: number, sv: number): void;
  addJacobianProduct(x: Float64Array, out: Float64Array): void;
}

export function hasJacobianProduct(e: ForceEffector): e is JacobianProductEffector {
  return typeof (e as Partial<JacobianProductEffector>).addJacobianProduct === "function";
}
