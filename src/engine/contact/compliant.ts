/**
 * Compliant (penalty) contact, `contact.method = "smc"`, as a force effector with exact
 * Jacobians, after ArtiSynth's ContactForceBehavior (behaviors.ts) and ForceEffector.
 *
 * Contact geometry is taken once per step (beginStep, at x_t), as ArtiSynth's collision
 * handler does: for every contact with gap < margin, the normal n (world, from a to b),
 * the two surface points p_a = point − (g/2) n, p_b = point + (g/2) n attached to their
 * bodies as material points (body-frame coordinates ρ_a, ρ_b; a curved side by its centre
 * of curvature, "Curved sides" below), and the contact area (area.ts). Within the step the
 * force is evaluated at any trial state (the Newton iterations of the implicit
 * integrators) with that normal and those material points:
 *   r_X = R_X ρ_X,   p_X = x_X + r_X,   dist = n·(p_b − p_a),
 *   u_n = n·(v_b + ω_b × r_b − v_a − ω_a × r_a),
 * and F_n n is applied on b at p_b, −F_n n on a at p_a, with
 *   contacts penetrating at t (dist_t < 0, "active" for the step, as ArtiSynth's contact
 *   constraints are for the step they were found in):
 *       F_n = max(0, −f(dist) − d u_n),  d = max(damping, s h/compliance) (compliance > 0),
 *       continued beyond dist = 0 with the response at 0: −f(dist) → −dist/compliance(0);
 *   contacts found separated at t (0 ≤ dist_t < margin): F_n = max(0, −f(dist)), elastic
 *       only, so a contact met during a step pushes back in that same step, and its
 *       damping starts with the next step.
 * Why: the damping term is discontinuous at dist = 0 (F jumps from d|u_n| to 0), and a
 * Newton iteration on a discontinuous residual can have no solution and cycles; with the
 * split above F_n is continuous and piecewise smooth in the state within every step. The
 * clamp max(0, ·) is the unilateral nature of the contact (ArtiSynth's compliant contacts
 * are unilateral constraints: their force never pulls). The Jacobians below are the
 * exact derivatives of this model (zero where clamped).
 *
 * Curved sides: on a sphere's or a capsule's side (radius R_c) of a dynamic rigid body a
 * material surface point would leave the surface as the body turns, by R_c (1 − cos ω h)
 * within a step (the normal turning with it): 3.1 mm for a ball of 0.1 m spinning at
 * 50 rad/s at h = 5 ms, 30 times its penetration under its weight (k = 1e5), so a spinning
 * or rolling ball lost its support within every step. Such a side is attached by its
 * centre of curvature c instead (material: ρ ← ρ ∓ R_c ν, a's centre p_a − R_c n, b's
 * p_b + R_c n), its surface point along the step's normal c ± R_c n (a: c + R_c n,
 * b: c − R_c n): dist = n·(c_b − c_a) − R_a − R_b, exact for a sphere in any rotation and
 * for a capsule while the contact stays on its side. The formulas above hold with r_X the
 * lever arm to c (the torque (r_X ± R_c n) × F_n n = r_X × F_n n; ∂dist/∂θ_X = s_X r_X × n).
 *
 * Exact Jacobians (X, Y ∈ {a, b} dynamic, s_a = −1, s_b = +1, w_X = 3 or 6 dofs):
 *   g_X = s_X [n; r_X × n]                     (∂dist/∂q_X, rotation increments δθ)
 *   ∂u_n/∂θ_X = s_X r_X × (n × ω_X)            (the lever arm turns with the body)
 *   κ = ∂F_n/∂dist = −f′(dist) − u_n ∂d/∂dist,  ∂d/∂dist = s h f″ when the step-damping
 *       term is the larger one (0 otherwise)
 *   ∂Q_X/∂q_Y = g_X (κ g_Yᵀ − d ∂u_n/∂q_Y) + δ_XY s_X F_n [0 0; 0 [n]×[r_X]×]
 *   ∂Q_X/∂v_Y = −d g_X g_Yᵀ
 * (the last term of ∂Q/∂q: the torque r_X × (s_X F_n n) changes as r_X turns,
 * δτ = δr × F = F_n s_X [n]×[r_X]× δθ). With particles only, the matrix added with the
 * integrators' negative scale is symmetric positive semidefinite (SPD type); with rigid
 * bodies the rotational terms make it nonsymmetric (GENERAL).
 *
 * Fem face contacts (fem-faces.ts, after the detector's): side a is a triangle of three
 * node particles, the material point p_a = Σ_k w_k x_k with the barycentric weights w of
 * the step's detection held, side b another fem body's vertex particle or a rigid body's
 * point (fem-faces.ts, "Rigid shapes"; a ball's by its centre, "Curved sides"), so
 *   dist = n·(p_b − Σ w_k x_k),  u_n = n·(v_b + ω_b × r_b − Σ w_k v_k),
 * the force F_n n on side b (its torque r_b × F_n n on a rigid body) and −w_k F_n n on
 * node k: four ends, the nodes' coefficients c = −w_k with g_k = c_k n (particles), side
 * b's g_b and wv_b as above, and the Jacobians above summed over every pair of the four
 * ends (the θθ term on side b alone); particles only, ∂Q_X/∂q_Y = κ c_X c_Y n nᵀ and
 * ∂Q_X/∂v_Y = −d c_X c_Y n nᵀ. Their area: a vertex's shared where the other body's
 * vertices meet its body's faces too (both vertex sets cover the patch), a rigid point's
 * its shape's, shared with the body's vertex contacts on that shape where the shape meets
 * the body through both: each of two sets of summed areas S, S′ takes max(S, S′)/(S + S′)
 * (fem-faces.ts shareTwoWay; ½ for equal sets); under a law per contact (one that does not
 * read the area: ContactBehavior.readsArea) those contacts' force takes that share of the
 * two sets' counts instead (`share`).
 *
 * Solve blocks change with the contacts: the effector has `dynamicStructure`, and the
 * stepper re-reserves its blocks after each beginStep (acceleration-step.ts).
 * The effector needs h for the step damping: `stepSize` (set by the contact model from
 * solver.dt).
 *
 * Coulomb friction (μ > 0: contact.friction, contact.pairs), Cundall–Strack's tangential
 * spring with history and a Coulomb cap, as Chrono's SMC: each persistent contact (keyed
 * across steps as the nonsmooth warm start keys them: ImpulseMemory, by key, else the
 * nearest contact of the pair within WARM_START_RADIUS) carries an elastic tangential
 * displacement δ (m, world, in the contact plane, b's material point relative to a's).
 * Within a step, at any trial state, with e = p_b − p_a (the material points above;
 * Σ c_x p_x over a triangle contact's four particles) and u = ė (the points' velocities,
 * v + ω × r), T = I − n nᵀ:
 *   δ_tr = δ₀ + T e                       (T e = 0 at the step's start: p_b − p_a = g n)
 *   F_tr = −k_t δ_tr − c_t T u            (N, on b at p_b; −F on a at p_a)
 *   F_t  = F_tr                      when |F_tr| ≤ μ F_n  (stick)
 *        = μ F_n F_tr/|F_tr|         otherwise            (slip, at the cap)
 * δ₀ is the history at the step's start rotated into its contact plane (the projection
 * T δ rescaled to |δ|: a turning contact keeps its stretch). The history is committed
 * when a step is accepted: δ ← δ_tr in stick, δ ← −F_t/k_t in slip (|k_t δ| = μ F_n, the
 * trial force's direction), 0 where F_n = 0. The effector sees an accepted step as a
 * detection (beginStep) at a configuration other than its last detection's: every
 * integrator detects at each (sub-)step's start, and one that redoes a step puts the
 * positions back bit for bit (step-halving.ts), which is then no new configuration. A
 * step the simulation undoes (Simulation's last good state) restores the history held
 * at its start (holdHistory, restoreHistory); a state written from outside or a reset
 * clears it (clearHistory).
 * Per step, frozen at its start like the step damping's rule (so that the force is a
 * function of the trial state, and −k_t δ_tr the gradient of ½ k_t |δ_tr|²):
 *   k_t = (2/7) f′(dist_t)  (N/m; for a contact found separated, f′ at the penetration
 *                            its start's normal velocity carries it to over the step,
 *                            min(0, dist_t + h u_n,t), 0 where that does not reach it),
 *   c_t = (2/7) d(dist_t)   (N·s/m; 0 for a contact found separated, as its damping).
 * Why the reach: a law whose stiffness vanishes at dist = 0 (hertz, f′ ∝ √δ) gave a contact
 * met within a step k_t = 0 there, so no friction for that first step of every landing (a
 * ball landing spinning got 0.53–0.92 of Coulomb's μ Δp_n over the impact under backward
 * Euler, 0.90 under newmark); linear laws are unchanged (f′ constant).
 * Why 2/7: a solid sphere's tangential contact mode has the mass (2/7) m
 * (1/m + r²/I = 7/(2m)), so with k_t = (2/7) k its frequency is the normal one's: the step
 * that resolves the normal contact resolves the tangential one (Cundall–Strack's ratio),
 * and c_t = (2/7) d gives it the normal damping ratio. A body at rest on a slope
 * tan θ < μ then stays, its creep bounded by the spring's stretch μ F_n/k_t.
 * Jacobians (exact where F_t is smooth: X, Y the contact's ends, c_X = ∓1 or a
 * triangle's coefficient, J_X = [I, −[r_X]×] (∂p_X/∂q_X), W_Y = [0, (ω_Y·r_Y) I − r_Y ω_Yᵀ]
 * (∂(ω × r)/∂θ), P = I in stick, (μ F_n/|F_tr|)(I − F̂ F̂ᵀ) in slip, F̂ = F_tr/|F_tr|):
 *   ∂F_t/∂q_Y = −c_Y P T (k_t J_Y + c_t W_Y) + [slip] μ F̂ (∂F_n/∂q_Y)ᵀ
 *   ∂F_t/∂v_Y = −c_Y c_t P T J_Y              + [slip] μ F̂ (∂F_n/∂v_Y)ᵀ
 *   ∂Q_X/∂q_Y = c_X J_Xᵀ ∂F_t/∂q_Y + δ_XY c_X [0 0; 0 [F_t]×[r_X]×]   (Q_X = c_X J_Xᵀ F_t)
 *   ∂Q_X/∂v_Y = c_X J_Xᵀ ∂F_t/∂v_Y.
 * They are nonsymmetric (GENERAL); an effector built without friction and given it by a
 * PATCH on particles alone (SPD) leaves out the slip's coupling to F_n, the rest being
 * symmetric there (T − F̂F̂ᵀ), so Newton converges to the same solution.
 * Rolling: on a curved side attached by its centre (above, "Curved sides") the friction
 * keeps the material contact point c ∓ R_c R ν (a: c + R_c R ν, b: c − R_c R ν;
 * ν = R_tᵀ n, the normal in the body's frame at the detection), whose displacement is the
 * slip. Its tangential path over a step of pure rolling falls short of the rolling one by
 * R_c (ω h − sin ω h), which a slip of that much a step makes up (3 mm/s at 2 m/s).
 * Common point: between two dynamic bodies F_t acts at one point, the midpoint
 * p_m = ½ (p_a + p_b) of the material contact points (on b, −F_t on a: lever arms
 * ℓ_X = p_m − x_X = r_X − c_X e/2), so that the pair's moment (ℓ_b − ℓ_a + x_b − x_a) × F_t
 * vanishes and the contact conserves the pair's angular momentum (applied at p_a and p_b,
 * it had the moment e × F_t, e = p_b − p_a ≈ dist n: the penetration times F_t; two spheres
 * in a sliding contact under symplectic Euler changed their angular momentum by 1 % of it,
 * now by rounding). The normal force's pair has the moment T (p_b − p_a) × F_n n: none at
 * the step's start (p_b − p_a = dist n there), of the order of the step's tangential
 * motion within it (at p_m too, its elastic force would no longer be −∇U: energy.error of
 * the two spheres 5e-5 → 1.2e-3 J). Against the world or a fixed body (no momentum to
 * keep) F_t stays at the moving body's material point.
 * With ℓ_X the force's Jacobian rows are c_X [I, −[ℓ_X]×]ᵀ and the lever arm's own change,
 * ∂ℓ_X/∂q_Y = ½ J_Y − δ_XY [I, 0], replaces the last term of ∂Q_X/∂q_Y above by
 *   −c_X [F_t]× (½ J_Y − δ_XY [I, 0])  on X's rotation rows
 * ((δ_XY − ½) c_X [F_t]× on Y's translation, ½ c_X [F_t]×[r_Y]× on Y's rotation). In stick
 * the spring's force applied at p_m is −∇Φ plus the moment −½ e × F_t on each body, whose
 * power (O(δ |F_t| |ω|)) is left to energy.error; in slip F_t is all dissipative, booked as
 * applied.
 * Energy: Φ = ½ k_t |δ_c|² is in potentialEnergy, δ_c the history a commit at the state
 * would keep; its force −k_t δ_tr in stick, none in slip (Φ = ½ |F_t|²/k_t does not vary
 * with the slip), so the dissipative force is −c_t T u in stick and the whole F_t in slip,
 * which the energy balance weighs as the scheme does (step-work.ts). What a commit changes,
 * Σ Φ at the step's end with its contacts minus Σ Φ there with the next step's (a lost
 * contact, another k_t, a turned plane), is taken by `settle` into the step's dissipated
 * work, so energy.error stays the scheme's own.
 *
 * The clamp's release: the energy balance weighs the dissipative forces (F_n − e) n over a
 * segment (a step, or a sub-step of a split one: step-work.ts) at its two ends as the
 * scheme weighs the forces, W = −h v̄ · ((1 − w) F_s + w F_e). A contact the no-pull clamp
 * holds at F_n = 0 at both ends (penetrating, separating faster than e/d) exerts no force at
 * either: the scheme's velocities do not see it, and its elastic energy (in the potential)
 * goes from U_s to U_e, which is what the clamp let go. Its dissipative force −e n weighed
 * at the ends booked instead ½ h e_s u_n (w = ½), ½ e_s Δdist = ½ k δ_s Δdist for the
 * ½ k δ_s² a contact leaving within the step releases (Δdist > δ_s): energy.error read
 * +0.22 J at a single step of the dropped two-link arm under newmark. Such a contact is
 * booked U_s − U_e instead (applySegmentEnd), the others by the ends' forces as before (one
 * held at 0 at the start only, pushing at the end: applyReopened). The segment's contacts
 * are those of the detection at its start, which the integrator makes there again (the
 * same configuration gives the same contacts); should the end's detection have another
 * number of contacts (none is made within a segment), the end books as
 * applyDissipativeForces.
 */
import type { DynamicStructureEffector } from "../dynamics/stepper";
import type { CollisionDetector } from "../geometry/collide";
import { ContactBuffer } from "../geometry/contact-buffer";
import type { SparseBlockMatrix } from "../math/block-matrix";
import { grow } from "../math/grow";
import { mat3MulVec } from "../math/mat3";
import { norm3 } from "../math/vec3";
import { BodyKind, type BodySystem, inverseInertiaBound } from "../model/body-system";
import type { ContactMemory } from "../model/state-codec";
import { MatrixType, type MatrixTypeFlags } from "../solvers/linear/linear-solver";
import { computeContactAreas, surfaceRadius } from "./area";
import {
  type ContactBehavior,
  type ContactPoint,
  type ContactResponse,
  effectiveDamping,
} from "./behaviors";
import type { FemFaceContacts } from "./fem-faces";
import type { FemVertexContacts } from "./fem-vertices";
import { ImpulseMemory } from "./impulse-memory";
import type { ContactReport } from "./report";
import type { PairParameters } from "./setup";

/**
 * k_t/k and c_t/d, the tangential spring's stiffness and damping against the normal
 * law's (file comment: a solid sphere's tangential mode then has the normal one's
 * frequency and damping ratio).
 */
export const TANGENTIAL_RATIO = 2 / 7;

interface MutablePoint {
  position: Float64Array;
  body: number;
  radius: number;
}

export class CompliantContactEffector implements DynamicStructureEffector {
  readonly id = "contact";
  readonly dynamicStructure = true as const;
  readonly hasJacobians = true;
  readonly jacobianType: MatrixTypeFlags;
  /** h (s) for the step damping rule; kept equal to solver.dt by the contact model. */
  stepSize = 0.005;
  /** Contacts tracked in the current step. */
  count = 0;
  /**
   * The system's stateVersion at the last detection (−1: none, or the margin or step size
   * changed since): beginStep detects again only at another state.
   */
  private detectedVersion = -1;
  /** The fem surface points among the detector's shapes: their contacts take vertex areas. */
  vertexAreas: FemVertexContacts | null = null;
  /** The fem face contacts' detection (fem-faces.ts): fem–fem, and rigid shapes on fem faces. */
  faces: FemFaceContacts | null = null;
  /** Accumulated detection time (ms; doubles from the start, see BodySystem on V8). */
  readonly timing = { broadMs: -0, narrowMs: -0 };

  private readonly buffer = new ContactBuffer(64);
  private bodyA: Int32Array = new Int32Array(0);
  private bodyB: Int32Array = new Int32Array(0);
  private normal: Float64Array = new Float64Array(0);
  /** Material points: body-frame coordinates (world coordinates for the world, body −1). */
  private rhoA: Float64Array = new Float64Array(0);
  private rhoB: Float64Array = new Float64Array(0);
  private area: Float64Array = new Float64Array(0);
  /**
   * Each contact's share of the force of a law that does not read the area (1, or
   * max(n, n′)/(n + n′) for the n and n′ contacts of two sets on one patch: a fem vertex on
   * another fem body's face where that body's vertices meet the first's faces too, and a
   * rigid shape meeting a fem body through both its vertices and its points on the faces:
   * fem-faces.ts shareTwoWay); a law that reads it takes the share in the area instead.
   */
  private share: Float64Array = new Float64Array(0);
  private radA: Float64Array = new Float64Array(0);
  private radB: Float64Array = new Float64Array(0);
  /** 1 when the contact penetrated at t (dist_t < 0): its damping acts through the step. */
  private activeAtStart: Uint8Array = new Uint8Array(0);
  /** 1 for a fem face contact: side a is the triangle nodes[3i..] with weights[3i..]. */
  private triangle: Uint8Array = new Uint8Array(0);
  private nodes: Int32Array = new Int32Array(0);
  private weights: Float64Array = new Float64Array(0);
  // Evaluation at the current state (evaluate()).
  private rA: Float64Array = new Float64Array(0);
  private rB: Float64Array = new Float64Array(0);
  private dist: Float64Array = new Float64Array(0);
  private un: Float64Array = new Float64Array(0);
  private fn: Float64Array = new Float64Array(0);
  /** The elastic push −f(dist) of the contacts penetrating (0 otherwise): −dU/d(dist). */
  private elastic: Float64Array = new Float64Array(0);
  /** F_n − e of applyDissipativeForces. */
  private damped: Float64Array = new Float64Array(0);
  private kappa: Float64Array = new Float64Array(0);
  private damp: Float64Array = new Float64Array(0);
  // explicitRates' scratch: the pushing contacts' ends on dynamic bodies, by body
  private endContact: Int32Array = new Int32Array(0);
  private endBody: Int32Array = new Int32Array(0);
  private endScale: Float64Array = new Float64Array(0);
  private endDirection: Float64Array = new Float64Array(0);
  private endInverse: Float64Array = new Float64Array(0);
  private bodyFirst: Int32Array = new Int32Array(0);
  private byBody: Int32Array = new Int32Array(0);
  /** Σ_j |A_ij| of each pushing contact (explicitRates). */
  private rowSums: Float64Array = new Float64Array(0);
  private readonly c0: MutablePoint = { position: new Float64Array(3), body: -1, radius: 0 };
  private readonly c1: MutablePoint = { position: new Float64Array(3), body: -1, radius: 0 };
  private readonly nrm = new Float64Array(3);
  private readonly g = new Float64Array(24);
  private readonly wv = new Float64Array(24);
  // Friction (file comment), per contact of the step: key, μ, k_t, c_t, δ₀ (3), and at the
  // last evaluation δ_tr, F_tr, F_t (3 each), |F_tr| and 1 where it slips
  private key: Float64Array = new Float64Array(0);
  private mu: Float64Array = new Float64Array(0);
  private kt: Float64Array = new Float64Array(0);
  private ct: Float64Array = new Float64Array(0);
  private delta0: Float64Array = new Float64Array(0);
  private trial: Float64Array = new Float64Array(0);
  private trialForce: Float64Array = new Float64Array(0);
  private ft: Float64Array = new Float64Array(0);
  private trialNorm: Float64Array = new Float64Array(0);
  private slip: Uint8Array = new Uint8Array(0);
  /** F_t + k_t δ_tr of applyDissipativeForces (3 per contact). */
  private frictionDamped: Float64Array = new Float64Array(0);
  /**
   * A contact's curved side on a rigid body (file comment, "Curved sides"): its
   * radius of curvature R_c (m; 0: attached by the material point alone) and the normal
   * in its body frame at the detection, ν = R_tᵀ n (3 per contact), side a then side b.
   */
  private bendA: Float64Array = new Float64Array(0);
  private bendB: Float64Array = new Float64Array(0);
  private nuA: Float64Array = new Float64Array(0);
  private nuB: Float64Array = new Float64Array(0);
  /**
   * The energy balance's segment (applySegmentStart): its start's number of contacts (−1:
   * none), and per contact there F_n, the elastic push e, its energy U (J, where F_n = 0)
   * and the lever arms r_a, r_b (3 each).
   */
  private segmentCount = -1;
  private segmentFn: Float64Array = new Float64Array(0);
  private segmentElastic: Float64Array = new Float64Array(0);
  private segmentEnergy: Float64Array = new Float64Array(0);
  private segmentArmA: Float64Array = new Float64Array(0);
  private segmentArmB: Float64Array = new Float64Array(0);
  /** Whether the last detection's contacts carry friction (some μ > 0 then). */
  private frictionDetected = false;
  /** The committed history: δ (m, world, in `impulse`) by contact key. */
  private readonly history: ImpulseMemory;
  /** The history held at the running Simulation step's start (holdHistory). */
  private readonly heldHistory: ImpulseMemory;
  /** The history is that of the current state (restored, imported, cleared): no commit. */
  private historyHere = true;
  /** Positions and orientations at the last detection (friction's: a new configuration). */
  private detectedPos: Float64Array = new Float64Array(0);
  private detectedQuat: Float64Array = new Float64Array(0);
  /** Σ Φ of the last detection's contacts at its state (J, springEnergy). */
  private startPotential = 0;
  /** Energy the commits released since the last `settle` (J, file comment). */
  private released = 0;
  /** Whether the slip's coupling to F_n enters the Jacobian (jacobianType GENERAL). */
  private readonly exactFriction: boolean;
  // the friction Jacobian's scratch: an end's lever arm, ∂F_t/∂(q or v) of an end (3 × 6),
  // T times its pieces, and P
  private readonly arm = new Float64Array(3);
  private readonly otherArm = new Float64Array(3);
  private readonly separation = new Float64Array(3);
  /** ½ e of the contact whose friction acts at its midpoint (midpointShift). */
  private readonly half = new Float64Array(3);
  /** frictionRates' sums over each body's contact ends. */
  private bodyP: Float64Array = new Float64Array(0);
  private bodyQ: Float64Array = new Float64Array(0);
  private readonly uRel = new Float64Array(3);
  private readonly dF = new Float64Array(18);
  private readonly tB = new Float64Array(18);
  private readonly proj = new Float64Array(9);

  constructor(
    readonly sys: BodySystem,
    readonly detector: CollisionDetector,
    public behavior: ContactBehavior,
    /** contact.margin (m): contacts with gap below it are tracked through the step. */
    public margin: number,
    /** Friction μ by body pair (contact.friction, contact.pairs); null: none. */
    readonly friction: PairParameters | null = null,
  ) {
    let rigid = false;
    for (const s of detector.shapes)
      if (s.body >= 0 && sys.kind[s.body] === BodyKind.RIGID) rigid = true;
    const general = rigid || (friction?.anyFriction() ?? false);
    this.jacobianType = general ? MatrixType.GENERAL : MatrixType.SPD;
    this.exactFriction = general;
    this.history = new ImpulseMemory(sys.numBodies);
    this.heldHistory = new ImpulseMemory(sys.numBodies);
  }

  private width(b: number): number {
    if (b < 0) return 0;
    const k = this.sys.kind[b];
    return k === BodyKind.RIGID ? 6 : k === BodyKind.PARTICLE ? 3 : 0;
  }

  /**
   * Detects the contacts at the current configuration (x_t) and attaches their points.
   * The detection margin is widened by the distance two bodies can close in one step,
   * 2·h·max|v| (speculative contacts): a contact the step will reach is in the set from
   * its start, so the implicit solve meets it instead of ending the step deep inside and
   * releasing the stored penalty energy ½kδ² on the next. Nothing is done at the state of
   * the last detection (the State's report and the energy balance detect at a step's start
   * before the stepper does; the same state gives the same contacts).
   * With friction, a configuration other than the last detection's is an accepted step's
   * end: the history is committed there first (file comment).
   */
  beginStep(): void {
    const { sys, buffer } = this;
    if (this.detectedVersion === sys.stateVersion) return;
    this.detectedVersion = sys.stateVersion;
    const friction = this.friction?.anyFriction() === true;
    // the tangential springs' energy before this detection (J): at an accepted step's end
    // the step's (committed), at the last detection's configuration its start's
    const booked = this.frictionDetected && !this.historyHere;
    let before = 0;
    if (booked) before = this.moved() ? this.commitHistory() : this.startPotential;
    if (!friction) this.history.clear();
    let vmax = 0;
    for (let b = 0; b < sys.numBodies; b++)
      if (sys.dofOffset[b] >= 0) vmax = Math.max(vmax, norm3(sys.vel, 3 * b));
    this.detector.margin = this.margin + 2 * this.stepSize * vmax;
    this.detector.detect(sys.pos, sys.quat, buffer);
    this.timing.broadMs += this.detector.stats.broadMs;
    this.timing.narrowMs += this.detector.stats.narrowMs;
    const faces = this.faces;
    const nb = buffer.count;
    let n = nb;
    if (faces !== null) {
      const t0 = performance.now();
      faces.detect(this.detector.margin);
      n += faces.buffer.count;
      this.timing.narrowMs += performance.now() - t0;
    }
    this.count = n;
    this.bodyA = grow(this.bodyA, n);
    this.bodyB = grow(this.bodyB, n);
    for (const name of ["normal", "rhoA", "rhoB", "rA", "rB", "nuA", "nuB"] as const)
      this[name] = grow(this[name], 3 * n);
    for (const name of [
      "area",
      "share",
      "radA",
      "radB",
      "bendA",
      "bendB",
      "dist",
      "un",
      "fn",
      "elastic",
      "damped",
      "kappa",
      "damp",
    ] as const)
      this[name] = grow(this[name], n);
    this.activeAtStart = grow(this.activeAtStart, n);
    this.triangle = grow(this.triangle, n);
    this.nodes = grow(this.nodes, 3 * n);
    this.weights = grow(this.weights, 3 * n);
    computeContactAreas(buffer, this.detector.shapes, this.detector.poses, this.area);
    this.vertexAreas?.fillAreas(buffer, this.area);
    faces?.fillAreas(this.area, nb);
    // the two sets on one patch (fem-faces.ts shareTwoWay): weighed by their areas where
    // the law reads them, else by their forces, each contact 1 (a box on a stiff block's 9
    // vertices with its 4 corners on the faces, and a stiff fem block on a fem slab, 9 and 4
    // vertices, sank m g/(13 k) under a linear law per contact: both sets at full stiffness)
    this.share.fill(1, 0, n);
    faces?.shareTwoWay(buffer, this.behavior.readsArea ? this.area : this.share, nb);
    const R = sys.rotation;
    for (let i = 0; i < n; i++) {
      // the detector's contacts, then the fem face ones (side a a triangle's vertex point)
      const src = i < nb ? buffer : (faces as FemFaceContacts).buffer;
      const j = i < nb ? i : i - nb;
      const a = src.bodyA[j];
      const b = src.bodyB[j];
      this.bodyA[i] = a;
      this.bodyB[i] = b;
      this.triangle[i] = i < nb ? 0 : 1;
      if (i >= nb) {
        const f = faces as FemFaceContacts;
        for (let k = 0; k < 3; k++) {
          this.nodes[3 * i + k] = f.nodes[3 * j + k];
          this.weights[3 * i + k] = f.weights[3 * j + k];
        }
      }
      this.activeAtStart[i] = src.gap[j] < 0 ? 1 : 0;
      this.radA[i] = surfaceRadius(this.detector.shapes[src.shapeA[j]]);
      this.radB[i] = surfaceRadius(this.detector.shapes[src.shapeB[j]]);
      const hg = 0.5 * src.gap[j];
      for (let side = 0; side < 2; side++) {
        const body = side === 0 ? a : b;
        const rho = side === 0 ? this.rhoA : this.rhoB;
        const sg = side === 0 ? -hg : hg;
        const px = src.point[3 * j] + sg * src.normal[3 * j];
        const py = src.point[3 * j + 1] + sg * src.normal[3 * j + 1];
        const pz = src.point[3 * j + 2] + sg * src.normal[3 * j + 2];
        if (body < 0) {
          rho[3 * i] = px;
          rho[3 * i + 1] = py;
          rho[3 * i + 2] = pz;
          continue;
        }
        // ρ = Rᵀ (p − x)
        const dx = px - sys.pos[3 * body];
        const dy = py - sys.pos[3 * body + 1];
        const dz = pz - sys.pos[3 * body + 2];
        const o = 9 * body;
        rho[3 * i] = R[o] * dx + R[o + 3] * dy + R[o + 6] * dz;
        rho[3 * i + 1] = R[o + 1] * dx + R[o + 4] * dy + R[o + 7] * dz;
        rho[3 * i + 2] = R[o + 2] * dx + R[o + 5] * dy + R[o + 8] * dz;
      }
      this.normal[3 * i] = src.normal[3 * j];
      this.normal[3 * i + 1] = src.normal[3 * j + 1];
      this.normal[3 * i + 2] = src.normal[3 * j + 2];
      this.bendA[i] = 0;
      this.bendB[i] = 0;
      // (a triangle side is particles: attachCurved leaves it; a rigid ball on a fem face
      // is attached by its centre as on any other surface)
      this.attachCurved(i, 0);
      this.attachCurved(i, 1);
    }
    this.startPotential = 0;
    this.frictionDetected = friction;
    if (friction) this.startFriction(nb);
    if (booked) this.released += before - this.startPotential;
    this.historyHere = false;
  }

  /** Whether the positions or orientations differ from the last detection's (bitwise). */
  private moved(): boolean {
    const { pos, quat } = this.sys;
    const p = this.detectedPos;
    const q = this.detectedQuat;
    for (let k = 0; k < pos.length; k++) if (pos[k] !== p[k]) return true;
    for (let k = 0; k < quat.length; k++) if (quat[k] !== q[k]) return true;
    return false;
  }

  /**
   * The friction of the contacts just detected (the first nb the detector's, then the
   * fem face ones): key, μ, k_t and c_t from the normal law at the start (file comment),
   * δ₀ the history of the same contact (ImpulseMemory.find) turned into the contact plane;
   * startPotential Σ Φ at this state, and the configuration kept (moved).
   */
  private startFriction(nb: number): void {
    const { sys, buffer } = this;
    const params = this.friction as PairParameters;
    const n = this.count;
    this.detectedPos = grow(this.detectedPos, sys.pos.length);
    this.detectedQuat = grow(this.detectedQuat, sys.quat.length);
    this.detectedPos.set(sys.pos);
    this.detectedQuat.set(sys.quat);
    for (const name of ["key", "mu", "kt", "ct", "trialNorm"] as const)
      this[name] = grow(this[name], n);
    for (const name of ["delta0", "trial", "trialForce", "ft", "frictionDamped"] as const)
      this[name] = grow(this[name], 3 * n);
    this.slip = grow(this.slip, n);
    const h = this.stepSize;
    const nrm = this.nrm;
    const memory = this.history;
    for (let i = 0; i < n; i++) {
      const src = i < nb ? buffer : (this.faces as FemFaceContacts).buffer;
      const j = i < nb ? i : i - nb;
      const o = 3 * i;
      this.key[i] = src.key[j];
      const mu = params.frictionOf(this.bodyA[i], this.bodyB[i]);
      this.mu[i] = mu;
      this.kt[i] = 0;
      this.ct[i] = 0;
      this.delta0[o] = this.delta0[o + 1] = this.delta0[o + 2] = 0;
      if (!(mu > 0)) continue;
      this.placePoint(i, 0);
      this.placePoint(i, 1);
      nrm[0] = this.normal[o];
      nrm[1] = this.normal[o + 1];
      nrm[2] = this.normal[o + 2];
      // k_t at the penetration the start's normal velocity carries the contact to over the
      // step, or the start's (file comment); c_t the normal law's damping at the start
      const gap = src.gap[j];
      const un = this.pointVelocityN(i, 1) - this.pointVelocityN(i, 0);
      const reach = gap < 0 ? gap : Math.min(gap + h * un, 0);
      const c0 = this.c0 as ContactPoint;
      const c1 = this.c1 as ContactPoint;
      let r = this.response(i, reach, c0, c1);
      const kt =
        r.compliance > 0 && Number.isFinite(r.compliance) ? TANGENTIAL_RATIO / r.compliance : 0;
      this.kt[i] = kt;
      if (gap < 0 && reach !== gap) r = this.response(i, gap, c0, c1);
      this.ct[i] = gap < 0 ? TANGENTIAL_RATIO * effectiveDamping(r, h) : 0;
      const slot = memory.find(src.key[j], this.bodyA[i], this.bodyB[i], src.point, j);
      if (slot < 0) continue;
      // δ turned into this step's plane: T δ rescaled to |δ|
      const m = memory.impulse;
      const dx = m[3 * slot];
      const dy = m[3 * slot + 1];
      const dz = m[3 * slot + 2];
      const dn = nrm[0] * dx + nrm[1] * dy + nrm[2] * dz;
      const tx = dx - dn * nrm[0];
      const ty = dy - dn * nrm[1];
      const tz = dz - dn * nrm[2];
      const t = Math.sqrt(tx * tx + ty * ty + tz * tz);
      if (!(t > 0)) continue;
      const scale = Math.sqrt(dx * dx + dy * dy + dz * dz) / t;
      this.delta0[o] = scale * tx;
      this.delta0[o + 1] = scale * ty;
      this.delta0[o + 2] = scale * tz;
    }
    // Σ Φ here, as potentialEnergy reports it (a spring beyond its new cap counts capped)
    this.evaluate();
    for (let i = 0; i < n; i++) this.startPotential += this.springEnergy(i);
  }

  /**
   * Side X of contact i by its centre of curvature when its surface is curved
   * (a sphere's, a capsule's: radius R_c) on a rigid body that moves: ρ ← ρ ∓ R_c ν, the
   * centre (a's at p_a − R_c n, b's at p_b + R_c n), ν = R_tᵀ n kept (file comment).
   */
  private attachCurved(i: number, side: 0 | 1): void {
    const { sys } = this;
    const body = side === 0 ? this.bodyA[i] : this.bodyB[i];
    const radius = side === 0 ? this.radA[i] : this.radB[i];
    if (body < 0 || sys.kind[body] !== BodyKind.RIGID || sys.dofOffset[body] < 0) return;
    if (!(radius > 0 && Number.isFinite(radius))) return;
    const rho = side === 0 ? this.rhoA : this.rhoB;
    const nu = side === 0 ? this.nuA : this.nuB;
    const R = sys.rotation;
    const q = 9 * body;
    const o = 3 * i;
    const nx = this.normal[o];
    const ny = this.normal[o + 1];
    const nz = this.normal[o + 2];
    nu[o] = R[q] * nx + R[q + 3] * ny + R[q + 6] * nz;
    nu[o + 1] = R[q + 1] * nx + R[q + 4] * ny + R[q + 7] * nz;
    nu[o + 2] = R[q + 2] * nx + R[q + 5] * ny + R[q + 8] * nz;
    const b = side === 0 ? -radius : radius;
    for (let k = 0; k < 3; k++) rho[o + k] += b * nu[o + k];
    if (side === 0) this.bendA[i] = radius;
    else this.bendB[i] = radius;
  }

  /**
   * Commits the history at the current state, an accepted step's end, from the last
   * detection's contacts (file comment): δ_tr where they stick, −F_t/k_t where they slip,
   * none where F_n = 0. Returns Σ Φ (J), their springs' energy here (springEnergy).
   */
  private commitHistory(): number {
    this.evaluate();
    const memory = this.history;
    memory.begin(this.count);
    const mid = this.uRel;
    let energy = 0;
    for (let i = 0; i < this.count; i++) {
      const kt = this.kt[i];
      const o = 3 * i;
      energy += this.springEnergy(i);
      if (!(this.fn[i] > 0) || !(kt > 0)) continue;
      this.placePoint(i, 0);
      this.placePoint(i, 1);
      for (let k = 0; k < 3; k++) mid[k] = 0.5 * (this.c0.position[k] + this.c1.position[k]);
      const slot = memory.add(this.key[i], this.bodyA[i], this.bodyB[i], mid, 0);
      const slips = this.slip[i] === 1;
      for (let k = 0; k < 3; k++)
        memory.impulse[3 * slot + k] = slips ? -this.ft[o + k] / kt : this.trial[o + k];
    }
    return energy;
  }

  addSolveBlocks(m: SparseBlockMatrix): void {
    const { sys } = this;
    for (let i = 0; i < this.count; i++) {
      if (this.triangle[i] === 1) {
        for (let x = 0; x < 4; x++)
          for (let y = 0; y < 4; y++) {
            const X = this.triangleBody(i, x);
            const Y = this.triangleBody(i, y);
            if (this.width(X) > 0 && this.width(Y) > 0) m.addBlock(sys.block[X], sys.block[Y]);
          }
        continue;
      }
      const ka = this.bodyA[i] >= 0 ? sys.block[this.bodyA[i]] : -1;
      const kb = this.bodyB[i] >= 0 ? sys.block[this.bodyB[i]] : -1;
      if (ka >= 0) m.addBlock(ka, ka);
      if (kb >= 0) m.addBlock(kb, kb);
      if (ka >= 0 && kb >= 0) {
        m.addBlock(ka, kb);
        m.addBlock(kb, ka);
      }
    }
  }

  /** World lever arm r and point p of side X of contact i into rOut (3i) and this.c0/c1. */
  private placePoint(i: number, side: 0 | 1): void {
    const { sys } = this;
    const body = side === 0 ? this.bodyA[i] : this.bodyB[i];
    const rho = side === 0 ? this.rhoA : this.rhoB;
    const r = side === 0 ? this.rA : this.rB;
    const cp = side === 0 ? this.c0 : this.c1;
    cp.body = body;
    cp.radius = side === 0 ? this.radA[i] : this.radB[i];
    if (side === 0 && this.triangle[i] === 1) {
      // p_a = Σ w_k x_k (no lever arm: particles)
      r[3 * i] = r[3 * i + 1] = r[3 * i + 2] = 0;
      cp.position.fill(0);
      for (let k = 0; k < 3; k++) {
        const w = this.weights[3 * i + k];
        const o = 3 * this.nodes[3 * i + k];
        cp.position[0] += w * sys.pos[o];
        cp.position[1] += w * sys.pos[o + 1];
        cp.position[2] += w * sys.pos[o + 2];
      }
      return;
    }
    if (body < 0) {
      r[3 * i] = r[3 * i + 1] = r[3 * i + 2] = 0;
      cp.position[0] = rho[3 * i];
      cp.position[1] = rho[3 * i + 1];
      cp.position[2] = rho[3 * i + 2];
      return;
    }
    const R = sys.rotation;
    const o = 9 * body;
    const x = rho[3 * i];
    const y = rho[3 * i + 1];
    const z = rho[3 * i + 2];
    const rx = R[o] * x + R[o + 1] * y + R[o + 2] * z;
    const ry = R[o + 3] * x + R[o + 4] * y + R[o + 5] * z;
    const rz = R[o + 6] * x + R[o + 7] * y + R[o + 8] * z;
    r[3 * i] = rx;
    r[3 * i + 1] = ry;
    r[3 * i + 2] = rz;
    cp.position[0] = sys.pos[3 * body] + rx;
    cp.position[1] = sys.pos[3 * body + 1] + ry;
    cp.position[2] = sys.pos[3 * body + 2] + rz;
    // a curved side attached by its centre of curvature c: its surface point c ± R_c n
    const bend = side === 0 ? this.bendA[i] : this.bendB[i];
    if (bend === 0) return;
    const b = side === 0 ? bend : -bend;
    cp.position[0] += b * this.normal[3 * i];
    cp.position[1] += b * this.normal[3 * i + 1];
    cp.position[2] += b * this.normal[3 * i + 2];
  }

  /** World velocity of the material point of side X (v + ω × r), dotted with n. */
  private pointVelocityN(i: number, side: 0 | 1): number {
    const { sys } = this;
    if (side === 0 && this.triangle[i] === 1) {
      // n·Σ w_k v_k
      let s = 0;
      for (let k = 0; k < 3; k++) {
        const b = this.nodes[3 * i + k];
        if (sys.dofOffset[b] < 0) continue;
        s +=
          this.weights[3 * i + k] *
          (this.normal[3 * i] * sys.vel[3 * b] +
            this.normal[3 * i + 1] * sys.vel[3 * b + 1] +
            this.normal[3 * i + 2] * sys.vel[3 * b + 2]);
      }
      return s;
    }
    const body = side === 0 ? this.bodyA[i] : this.bodyB[i];
    if (body < 0 || sys.dofOffset[body] < 0) return 0;
    const r = side === 0 ? this.rA : this.rB;
    const nx = this.normal[3 * i];
    const ny = this.normal[3 * i + 1];
    const nz = this.normal[3 * i + 2];
    let vx = sys.vel[3 * body];
    let vy = sys.vel[3 * body + 1];
    let vz = sys.vel[3 * body + 2];
    if (sys.kind[body] === BodyKind.RIGID) {
      const wx = sys.omega[3 * body];
      const wy = sys.omega[3 * body + 1];
      const wz = sys.omega[3 * body + 2];
      vx += wy * r[3 * i + 2] - wz * r[3 * i + 1];
      vy += wz * r[3 * i] - wx * r[3 * i + 2];
      vz += wx * r[3 * i + 1] - wy * r[3 * i];
    }
    return nx * vx + ny * vy + nz * vz;
  }

  /** dist, u_n, F_n, κ and d of every contact at the current state (file comment). */
  private evaluate(): void {
    const h = this.stepSize;
    const nrm = this.nrm;
    for (let i = 0; i < this.count; i++) {
      this.placePoint(i, 0);
      this.placePoint(i, 1);
      nrm[0] = this.normal[3 * i];
      nrm[1] = this.normal[3 * i + 1];
      nrm[2] = this.normal[3 * i + 2];
      const pa = this.c0.position;
      const pb = this.c1.position;
      const dist = nrm[0] * (pb[0] - pa[0]) + nrm[1] * (pb[1] - pa[1]) + nrm[2] * (pb[2] - pa[2]);
      const un = this.pointVelocityN(i, 1) - this.pointVelocityN(i, 0);
      this.dist[i] = dist;
      this.un[i] = un;
      this.fn[i] = 0;
      this.elastic[i] = 0;
      this.kappa[i] = 0;
      this.damp[i] = 0;
      const active = this.activeAtStart[i] === 1;
      if (!active && !(dist < 0)) continue;
      // Active contacts beyond dist = 0 continue the law with the response at dist = 0.
      const r = this.response(
        i,
        active && dist > 0 ? 0 : dist,
        this.c0 as ContactPoint,
        this.c1 as ContactPoint,
      );
      if (dist < 0) this.elastic[i] = -r.force;
      const kc = r.compliance > 0 && Number.isFinite(r.compliance) ? 1 / r.compliance : 0;
      let F: number;
      let kap: number;
      let d = 0;
      if (active) {
        d = effectiveDamping(r, h);
        // ∂d/∂dist: the step-damping branch s h f′ varies with f′ (f″ = stiffnessRate).
        const stepBranch =
          dist <= 0 && r.compliance > 0 && (r.stepDamping * h) / r.compliance > r.damping;
        const dd = stepBranch ? r.stepDamping * h * r.stiffnessRate : 0;
        F = (dist > 0 ? -kc * dist : -r.force) - d * un;
        kap = -kc - un * dd;
      } else {
        F = -r.force;
        kap = -kc;
      }
      // A contact cannot pull (see the file comment): clamped at 0, no Jacobian there.
      if (!(F > 0)) continue;
      this.fn[i] = F;
      this.kappa[i] = kap;
      this.damp[i] = d;
    }
    if (this.frictionDetected) for (let i = 0; i < this.count; i++) this.frictionAt(i);
  }

  /** δ_tr, F_tr, F_t, |F_tr| and slip of contact i at the current state (file comment). */
  private frictionAt(i: number): void {
    const o = 3 * i;
    const kt = this.kt[i];
    const ct = this.ct[i];
    this.slip[i] = 0;
    this.trialNorm[i] = 0;
    for (let k = 0; k < 3; k++) {
      this.trial[o + k] = this.delta0[o + k];
      this.trialForce[o + k] = 0;
      this.ft[o + k] = 0;
    }
    if (kt === 0 && ct === 0) return;
    this.placePoint(i, 0);
    this.placePoint(i, 1);
    const nx = this.normal[o];
    const ny = this.normal[o + 1];
    const nz = this.normal[o + 2];
    // T e and T u (e = p_b − p_a, u = ė, the material contact points)
    const sep = this.separation;
    this.materialSeparation(i, sep);
    let ex = sep[0];
    let ey = sep[1];
    let ez = sep[2];
    const en = nx * ex + ny * ey + nz * ez;
    ex -= en * nx;
    ey -= en * ny;
    ez -= en * nz;
    const u = this.uRel;
    this.relativeVelocity(i, u);
    const un = nx * u[0] + ny * u[1] + nz * u[2];
    const dx = this.delta0[o] + ex;
    const dy = this.delta0[o + 1] + ey;
    const dz = this.delta0[o + 2] + ez;
    const fx = -kt * dx - ct * (u[0] - un * nx);
    const fy = -kt * dy - ct * (u[1] - un * ny);
    const fz = -kt * dz - ct * (u[2] - un * nz);
    this.trial[o] = dx;
    this.trial[o + 1] = dy;
    this.trial[o + 2] = dz;
    this.trialForce[o] = fx;
    this.trialForce[o + 1] = fy;
    this.trialForce[o + 2] = fz;
    const norm = Math.sqrt(fx * fx + fy * fy + fz * fz);
    this.trialNorm[i] = norm;
    const cap = this.mu[i] * this.fn[i];
    if (norm <= cap) {
      this.ft[o] = fx;
      this.ft[o + 1] = fy;
      this.ft[o + 2] = fz;
      return;
    }
    this.slip[i] = 1;
    const c = cap / norm;
    this.ft[o] = c * fx;
    this.ft[o + 1] = c * fy;
    this.ft[o + 2] = c * fz;
  }

  /** The number of ends of contact i: its two bodies, or a triangle contact's 4 particles. */
  private endCount(i: number): number {
    return this.triangle[i] === 1 ? 4 : 2;
  }

  /** Body of end x of contact i. */
  private bodyOfEnd(i: number, x: number): number {
    if (this.triangle[i] === 1) return this.triangleBody(i, x);
    return x === 0 ? this.bodyA[i] : this.bodyB[i];
  }

  /** c_x of end x of contact i: ∂e/∂p_x for e = p_b − p_a (−1, +1; a triangle's weights). */
  private endCoefficient(i: number, x: number): number {
    if (this.triangle[i] === 1) return this.triangleCoefficient(i, x);
    return x === 0 ? -1 : 1;
  }

  /**
   * out ← the world lever arm of end x of contact i to its material contact point (0 on
   * particles): placePoint's r, less R_c R ν on a curved side attached by its centre
   * (a: r + R_c R ν, b: r − R_c R ν; file comment).
   */
  private endArm(i: number, x: number, out: Float64Array): void {
    const o = 3 * i;
    if (this.triangle[i] === 1 && x < 3) {
      out[0] = out[1] = out[2] = 0;
      return;
    }
    // side b: end 1, or a triangle contact's end 3 (a vertex, or a rigid body's point)
    const sideB = x > 0;
    const r = sideB ? this.rB : this.rA;
    out[0] = r[o];
    out[1] = r[o + 1];
    out[2] = r[o + 2];
    const bend = sideB ? this.bendB[i] : this.bendA[i];
    if (bend === 0) return;
    const nu = sideB ? this.nuB : this.nuA;
    const R = this.sys.rotation;
    const q = 9 * (sideB ? this.bodyB[i] : this.bodyA[i]);
    const b = sideB ? -bend : bend;
    out[0] += b * (R[q] * nu[o] + R[q + 1] * nu[o + 1] + R[q + 2] * nu[o + 2]);
    out[1] += b * (R[q + 3] * nu[o] + R[q + 4] * nu[o + 1] + R[q + 5] * nu[o + 2]);
    out[2] += b * (R[q + 6] * nu[o] + R[q + 7] * nu[o + 1] + R[q + 8] * nu[o + 2]);
  }

  /**
   * half ← ½ e of contact i at the current state (materialSeparation) when its friction acts
   * at the midpoint of its material points, between two dynamic bodies (file comment,
   * "Common point"); false, half untouched, otherwise (the world or a fixed body at an end,
   * a triangle contact's particles).
   */
  private midpointShift(i: number): boolean {
    if (this.triangle[i] === 1) return false;
    const a = this.bodyA[i];
    const b = this.bodyB[i];
    const { dofOffset } = this.sys;
    if (a < 0 || b < 0 || dofOffset[a] < 0 || dofOffset[b] < 0) return false;
    this.placePoint(i, 0);
    this.placePoint(i, 1);
    const half = this.half;
    this.materialSeparation(i, half);
    for (let k = 0; k < 3; k++) half[k] *= 0.5;
    return true;
  }

  /**
   * out ← the lever arm ℓ_x at which end x takes contact i's friction force: endArm's, less
   * c_x e/2 when `shifted` (the midpoint; midpointShift put e/2 in half).
   */
  private forceArm(i: number, x: number, shifted: boolean, out: Float64Array): void {
    this.endArm(i, x, out);
    if (!shifted) return;
    const c = this.endCoefficient(i, x);
    for (let k = 0; k < 3; k++) out[k] -= c * this.half[k];
  }

  /**
   * out ← Σ_x c_x p_x of contact i, its ends' material contact points (placePoint's
   * points where no side is attached by its centre): e = p_b − p_a, or the vertex less the
   * triangle's weighted nodes.
   */
  private materialSeparation(i: number, out: Float64Array): void {
    const pa = this.c0.position;
    const pb = this.c1.position;
    for (let k = 0; k < 3; k++) out[k] = pb[k] - pa[k];
    if (this.bendA[i] === 0 && this.bendB[i] === 0) return;
    // the surface points c ± R_c n back to the material ones c ± R_c R ν
    const arm = this.otherArm;
    for (let x = 0; x < 2; x++) {
      const bend = x === 1 ? this.bendB[i] : this.bendA[i];
      if (bend === 0) continue;
      const b = x === 1 ? -bend : bend;
      this.endArm(i, x === 1 && this.triangle[i] === 1 ? 3 : x, arm);
      const r = x === 1 ? this.rB : this.rA;
      const c = x === 1 ? 1 : -1;
      for (let k = 0; k < 3; k++)
        out[k] += c * (arm[k] - r[3 * i + k] - b * this.normal[3 * i + k]);
    }
  }

  /** out ← u = Σ_x c_x (v_x + ω_x × r_x) of contact i (m/s; fixed bodies and the world still). */
  private relativeVelocity(i: number, out: Float64Array): void {
    const { sys, arm } = this;
    out[0] = out[1] = out[2] = 0;
    for (let x = 0; x < this.endCount(i); x++) {
      const b = this.bodyOfEnd(i, x);
      if (b < 0 || sys.dofOffset[b] < 0) continue;
      const c = this.endCoefficient(i, x);
      let vx = sys.vel[3 * b];
      let vy = sys.vel[3 * b + 1];
      let vz = sys.vel[3 * b + 2];
      if (sys.kind[b] === BodyKind.RIGID) {
        this.endArm(i, x, arm);
        const wx = sys.omega[3 * b];
        const wy = sys.omega[3 * b + 1];
        const wz = sys.omega[3 * b + 2];
        vx += wy * arm[2] - wz * arm[1];
        vy += wz * arm[0] - wx * arm[2];
        vz += wx * arm[1] - wy * arm[0];
      }
      out[0] += c * vx;
      out[1] += c * vy;
      out[2] += c * vz;
    }
  }

  /**
   * out[i] = 1 where contact i pushes (F_n > 0) at the current state; returns the number of
   * contacts of this step (out is left untouched when it is shorter). Newmark uses it to
   * see contacts switch within a step.
   */
  pushing(out: Uint8Array): number {
    if (out.length < this.count) return this.count;
    this.evaluate();
    for (let i = 0; i < this.count; i++) out[i] = this.fn[i] > 0 ? 1 : 0;
    return this.count;
  }

  /**
   * out[i] = (h ω_i)² for contact i pushing at the current state (0 where it does not),
   * ω_i = √(κ_i m_i⁻¹) the frequency of its mode: κ_i its stiffness −∂F_n/∂dist, m_i⁻¹ the
   * inverse mass its normal moves, Σ c_x²/m_x over its dynamic bodies (1 on the vertex or a
   * body, the barycentric weights w on a triangle's nodes; a rigid body's rotation left
   * out, so a lower bound), h = stepSize; returns the number of contacts of this step (out
   * left untouched when it is shorter). The θ-schemes use it to see a step that does not
   * resolve a contact switching within it (theta-scheme.ts, `impacts`).
   */
  modes(out: Float64Array): number {
    if (out.length < this.count) return this.count;
    this.evaluate();
    const h = this.stepSize;
    for (let i = 0; i < this.count; i++) {
      out[i] = 0;
      if (!(this.fn[i] > 0)) continue;
      let inverse = 0;
      if (this.triangle[i] === 1)
        for (let x = 0; x < 4; x++) {
          const c = this.triangleCoefficient(i, x);
          inverse += (c * c) / this.massOf(this.triangleBody(i, x));
        }
      else inverse = 1 / this.massOf(this.bodyA[i]) + 1 / this.massOf(this.bodyB[i]);
      out[i] = h * h * Math.abs(this.kappa[i]) * inverse;
    }
    return this.count;
  }

  /**
   * Bounds of the pushing contacts' stiffest mode at the current state, detected here at it
   * (as `report`): out[0] ≥ λ_max(M⁻¹K) (1/s², ω² of that mode), out[1] ≥ λ_max(M⁻¹C)
   * (1/s), K = Σ κ_i g_i g_iᵀ and C = Σ d_i g_i g_iᵀ the contacts' stiffness (κ_i = |∂F_n/∂dist|)
   * and damping along their generalized normals g_i (∂dist_i/∂q, rotation included: s_X
   * [n; r_X × n] on a rigid body), M the mass matrix; 0, 0 without a pushing contact.
   * Symplectic Euler checks its explicit step against them (theta-scheme.ts,
   * explicitHalvings). Both by Gershgorin's circles on the contacts' rows: M⁻¹K has the
   * nonzero eigenvalues of K_c A (K_c = diag κ_i, A = G M⁻¹ Gᵀ the normals' Delassus
   * operator, A_ij = Σ_X c_iX c_jX (n_i·n_j/m_X + (r_iX × n_i)ᵀ I_X⁻¹ (r_jX × n_j)) over the
   * bodies X both contacts move, c = s_X or a triangle's coefficient), so
   * λ_max ≤ max_i κ_i Σ_j |A_ij| over the pushing contacts j, the same for C. A contact
   * alone gets its own mode exactly (κ_i A_ii: A_ii = 1/m on a ball, 1/m + (r × n)ᵀI⁻¹(r × n)
   * at a box's corner); a box resting on four corners 8 κ/m against its rocking modes' exact
   * 6 κ/m (a cube of side 0.2 m: I = m/150). The joints are left out (they stiffen the
   * bodies: the bound holds), and so are the terms of the lever arm turning, of relative
   * size δ/|r| (the penetration against the lever arm).
   */
  explicitRates(out: Float64Array): void {
    this.beginStep();
    this.evaluate();
    const { sys, count } = this;
    // the pushing contacts' ends on dynamic bodies: contact, |c|, the direction (n, r × n)
    // and M_X⁻¹ times it (rotation rows 0 on a particle)
    this.endContact = grow(this.endContact, 4 * count);
    this.endBody = grow(this.endBody, 4 * count);
    this.endScale = grow(this.endScale, 4 * count);
    this.endDirection = grow(this.endDirection, 24 * count);
    this.endInverse = grow(this.endInverse, 24 * count);
    let ends = 0;
    for (let i = 0; i < count; i++) {
      if (!(this.fn[i] > 0)) continue;
      const parts = this.triangle[i] === 1 ? 4 : 2;
      for (let x = 0; x < parts; x++) {
        const b = parts === 4 ? this.triangleBody(i, x) : x === 0 ? this.bodyA[i] : this.bodyB[i];
        if (b < 0 || sys.dofOffset[b] < 0) continue;
        this.endContact[ends] = i;
        this.endBody[ends] = b;
        this.endScale[ends] = parts === 4 ? Math.abs(this.triangleCoefficient(i, x)) : 1;
        this.placeEnd(ends, i, b, x === 0 ? this.rA : this.rB);
        ends++;
      }
    }
    // the ends by body (a counting sort): body b's at byBody[bodyFirst[b] .. bodyFirst[b + 1])
    const nb = sys.numBodies;
    this.bodyFirst = grow(this.bodyFirst, nb + 1);
    this.byBody = grow(this.byBody, ends);
    const first = this.bodyFirst;
    const byBody = this.byBody;
    first.fill(0, 0, nb + 1);
    for (let e = 0; e < ends; e++) first[this.endBody[e] + 1]++;
    for (let b = 0; b < nb; b++) first[b + 1] += first[b];
    for (let e = 0; e < ends; e++) byBody[first[this.endBody[e]]++] = e;
    for (let b = nb; b > 0; b--) first[b] = first[b - 1];
    first[0] = 0;
    // Σ_j |A_ij| of each pushing contact i (|A_ij| ≤ Σ_X |its share of body X|)
    this.rowSums = grow(this.rowSums, count);
    const rows = this.rowSums;
    rows.fill(0, 0, count);
    const dir = this.endDirection;
    const inv = this.endInverse;
    for (let e = 0; e < ends; e++) {
      const b = this.endBody[e];
      let sum = 0;
      for (let k = first[b]; k < first[b + 1]; k++) {
        const f = byBody[k];
        let dot = 0;
        for (let j = 0; j < 6; j++) dot += dir[6 * e + j] * inv[6 * f + j];
        sum += this.endScale[f] * Math.abs(dot);
      }
      rows[this.endContact[e]] += this.endScale[e] * sum;
    }
    out[0] = 0;
    out[1] = 0;
    for (let i = 0; i < count; i++) {
      if (!(this.fn[i] > 0)) continue;
      out[0] = Math.max(out[0], Math.abs(this.kappa[i]) * rows[i]);
      out[1] = Math.max(out[1], this.damp[i] * rows[i]);
    }
    if (this.frictionDetected) this.frictionRates(out);
  }

  /**
   * out[0], out[1] raised to bounds of the friction springs' and dampers' modes at the last
   * evaluation, λ_max(M⁻¹K_t) and λ_max(M⁻¹C_t), over the contacts that push: by
   * Gershgorin's circles on the contacts' 3 × 3 blocks A_ij = Σ_X c_iX c_jX T_i J_iX M_X⁻¹
   * J_jXᵀ T_j, ‖A_ij‖ ≤ Σ_X |c_iX||c_jX| (1/m_X + |r_iX||r_jX| ι_X), ι_X ≥ the largest
   * eigenvalue of I_X⁻¹ (body-system.ts inverseInertiaBound; 0 on a particle): contact i's row sums to at most
   * Σ_X |c_iX| (P_X/m_X + ι_X |r_iX| Q_X), P_X = Σ |c| and Q_X = Σ |c||r| over the pushing
   * contacts' ends on X; times k_t (the slip's stiffness is below it) and c_t.
   */
  private frictionRates(out: Float64Array): void {
    const { sys, arm } = this;
    const nb = sys.numBodies;
    this.bodyP = grow(this.bodyP, nb);
    this.bodyQ = grow(this.bodyQ, nb);
    const P = this.bodyP;
    const Q = this.bodyQ;
    P.fill(0, 0, nb);
    Q.fill(0, 0, nb);
    for (let pass = 0; pass < 2; pass++)
      for (let i = 0; i < this.count; i++) {
        if (!(this.fn[i] > 0) || !(this.kt[i] > 0 || this.ct[i] > 0)) continue;
        let row = 0;
        for (let x = 0; x < this.endCount(i); x++) {
          const b = this.bodyOfEnd(i, x);
          if (b < 0 || sys.dofOffset[b] < 0) continue;
          const c = Math.abs(this.endCoefficient(i, x));
          this.endArm(i, x, arm);
          const r = Math.sqrt(arm[0] * arm[0] + arm[1] * arm[1] + arm[2] * arm[2]);
          if (pass === 0) {
            P[b] += c;
            Q[b] += c * r;
            continue;
          }
          const iota = inverseInertiaBound(sys, b);
          row += c * (P[b] / sys.mass[b] + iota * r * Q[b]);
        }
        if (pass === 0) continue;
        out[0] = Math.max(out[0], this.kt[i] * row);
        out[1] = Math.max(out[1], this.ct[i] * row);
      }
  }

  /**
   * End e of contact i on dynamic body b (explicitRates): its direction (n, r × n), r the
   * lever arm of `arms` (a rigid body's; none on a particle), and M_b⁻¹ times it.
   */
  private placeEnd(e: number, i: number, b: number, arms: Float64Array): void {
    const { sys } = this;
    const dir = this.endDirection;
    const inv = this.endInverse;
    const o = 6 * e;
    const im = 1 / sys.mass[b];
    for (let k = 0; k < 3; k++) {
      dir[o + k] = this.normal[3 * i + k];
      inv[o + k] = im * dir[o + k];
      dir[o + 3 + k] = 0;
      inv[o + 3 + k] = 0;
    }
    if (sys.kind[b] !== BodyKind.RIGID) return;
    const nx = this.normal[3 * i];
    const ny = this.normal[3 * i + 1];
    const nz = this.normal[3 * i + 2];
    const rx = arms[3 * i];
    const ry = arms[3 * i + 1];
    const rz = arms[3 * i + 2];
    dir[o + 3] = ry * nz - rz * ny;
    dir[o + 4] = rz * nx - rx * nz;
    dir[o + 5] = rx * ny - ry * nx;
    mat3MulVec(inv, o + 3, sys.inertiaWorldInv, 9 * b, dir, o + 3);
  }

  /** Body b's mass, or +∞ for the world (b < 0) and fixed bodies (their 1/m is 0). */
  private massOf(b: number): number {
    return b < 0 || this.sys.dofOffset[b] < 0 ? Number.POSITIVE_INFINITY : this.sys.mass[b];
  }

  applyForces(_t: number): void {
    this.evaluate();
    this.applyNormal(this.fn, this.rA, this.rB);
    if (this.frictionDetected) this.applyTangential(this.ft);
  }

  /**
   * The vectors F (3 per contact, world, N) at the contacts' material points: c_x F on end
   * x (F on b, −F on a; −w_k F on a triangle's node k), with the torque r_x × c_x F.
   */
  private applyTangential(values: Float64Array): void {
    const { sys, arm } = this;
    for (let i = 0; i < this.count; i++) {
      const fx = values[3 * i];
      const fy = values[3 * i + 1];
      const fz = values[3 * i + 2];
      if (fx === 0 && fy === 0 && fz === 0) continue;
      const shifted = this.midpointShift(i);
      for (let x = 0; x < this.endCount(i); x++) {
        const b = this.bodyOfEnd(i, x);
        if (b < 0 || sys.dofOffset[b] < 0) continue;
        const c = this.endCoefficient(i, x);
        sys.force[3 * b] += c * fx;
        sys.force[3 * b + 1] += c * fy;
        sys.force[3 * b + 2] += c * fz;
        if (sys.kind[b] !== BodyKind.RIGID) continue;
        this.forceArm(i, x, shifted, arm);
        sys.torque[3 * b] += c * (arm[1] * fz - arm[2] * fy);
        sys.torque[3 * b + 1] += c * (arm[2] * fx - arm[0] * fz);
        sys.torque[3 * b + 2] += c * (arm[0] * fy - arm[1] * fx);
      }
    }
  }

  /**
   * F[i] along contact i's normal: on b (and its triangle's nodes), −F[i] n on a, with the
   * torques of the lever arms armsA, armsB (3 per contact: rA, rB, or a segment start's).
   */
  private applyNormal(values: Float64Array, armsA: Float64Array, armsB: Float64Array): void {
    const { sys } = this;
    for (let i = 0; i < this.count; i++) {
      const F = values[i];
      if (F === 0) continue;
      const fx = F * this.normal[3 * i];
      const fy = F * this.normal[3 * i + 1];
      const fz = F * this.normal[3 * i + 2];
      const tri = this.triangle[i] === 1;
      if (tri)
        // −w_k F n on the triangle's node k (side b, the vertex or the rigid body, below)
        for (let x = 0; x < 3; x++) {
          const b = this.triangleBody(i, x);
          if (sys.dofOffset[b] < 0) continue;
          const c = this.triangleCoefficient(i, x);
          sys.force[3 * b] += c * fx;
          sys.force[3 * b + 1] += c * fy;
          sys.force[3 * b + 2] += c * fz;
        }
      for (let side = tri ? 1 : 0; side < 2; side++) {
        const body = side === 0 ? this.bodyA[i] : this.bodyB[i];
        if (body < 0 || sys.dofOffset[body] < 0) continue;
        const s = side === 0 ? -1 : 1;
        sys.force[3 * body] += s * fx;
        sys.force[3 * body + 1] += s * fy;
        sys.force[3 * body + 2] += s * fz;
        if (sys.kind[body] !== BodyKind.RIGID) continue;
        const r = side === 0 ? armsA : armsB;
        const rx = r[3 * i];
        const ry = r[3 * i + 1];
        const rz = r[3 * i + 2];
        sys.torque[3 * body] += s * (ry * fz - rz * fy);
        sys.torque[3 * body + 1] += s * (rz * fx - rx * fz);
        sys.torque[3 * body + 2] += s * (rx * fy - ry * fx);
      }
    }
  }

  /**
   * g (∂dist/∂q) and wv (∂u_n/∂q) of each end x of contact i (endCount) into this.g /
   * this.wv at [6x..6x+5]: side a at 0, side b at 6; a triangle contact's nodes at 0, 6, 12
   * (c_x n, particles) and its side b at 18.
   */
  private gradients(i: number): void {
    const { sys, g, wv } = this;
    const nx = this.normal[3 * i];
    const ny = this.normal[3 * i + 1];
    const nz = this.normal[3 * i + 2];
    const tri = this.triangle[i] === 1;
    if (tri)
      for (let x = 0; x < 3; x++) {
        const c = this.triangleCoefficient(i, x);
        const o = 6 * x;
        g[o] = c * nx;
        g[o + 1] = c * ny;
        g[o + 2] = c * nz;
        g[o + 3] = g[o + 4] = g[o + 5] = 0;
        wv[o] = wv[o + 1] = wv[o + 2] = 0;
        wv[o + 3] = wv[o + 4] = wv[o + 5] = 0;
      }
    for (let side = tri ? 1 : 0; side < 2; side++) {
      const body = side === 0 ? this.bodyA[i] : this.bodyB[i];
      const s = side === 0 ? -1 : 1;
      const o = tri ? 18 : 6 * side;
      const r = side === 0 ? this.rA : this.rB;
      const rx = r[3 * i];
      const ry = r[3 * i + 1];
      const rz = r[3 * i + 2];
      g[o] = s * nx;
      g[o + 1] = s * ny;
      g[o + 2] = s * nz;
      g[o + 3] = s * (ry * nz - rz * ny);
      g[o + 4] = s * (rz * nx - rx * nz);
      g[o + 5] = s * (rx * ny - ry * nx);
      wv[o] = wv[o + 1] = wv[o + 2] = 0;
      wv[o + 3] = wv[o + 4] = wv[o + 5] = 0;
      if (body < 0 || sys.kind[body] !== BodyKind.RIGID) continue;
      // s r × (n × ω)
      const wx = sys.omega[3 * body];
      const wy = sys.omega[3 * body + 1];
      const wz = sys.omega[3 * body + 2];
      const cx = ny * wz - nz * wy;
      const cy = nz * wx - nx * wz;
      const cz = nx * wy - ny * wx;
      wv[o + 3] = s * (ry * cz - rz * cy);
      wv[o + 4] = s * (rz * cx - rx * cz);
      wv[o + 5] = s * (rx * cy - ry * cx);
    }
  }

  addPosJacobian(m: SparseBlockMatrix, s: number): void {
    this.evaluate();
    if (this.frictionDetected) this.addFrictionJacobian(m, s, false);
    const { sys, g, wv } = this;
    for (let i = 0; i < this.count; i++) {
      if (this.fn[i] === 0) continue;
      this.gradients(i);
      const kap = this.kappa[i];
      const d = this.damp[i];
      const F = this.fn[i];
      const parts = this.endCount(i);
      for (let sx = 0; sx < parts; sx++) {
        const X = this.bodyOfEnd(i, sx);
        const wX = this.width(X);
        if (wX === 0) continue;
        const kX = sys.block[X];
        for (let sy = 0; sy < parts; sy++) {
          const Y = this.bodyOfEnd(i, sy);
          const wY = this.width(Y);
          if (wY === 0) continue;
          const off = m.offsetOf(kX, sys.block[Y]);
          const vals = m.values;
          for (let r = 0; r < wX; r++) {
            const gr = s * g[6 * sx + r];
            if (gr === 0) continue;
            for (let c = 0; c < wY; c++)
              vals[off + r * wY + c] += gr * (kap * g[6 * sy + c] - d * wv[6 * sy + c]);
          }
          if (sx === sy && wX === 6 && F !== 0) {
            // s_X F_n [n]×[r_X]× on the (θ, θ) sub-block: [n]×[r]× = r nᵀ − (n·r) I (a
            // rigid end is side a at 0 or side b: a triangle's nodes are particles)
            const sgn = sx === 0 ? -1 : 1;
            const rr = sx === 0 ? this.rA : this.rB;
            const nn = this.normal;
            const dot =
              nn[3 * i] * rr[3 * i] + nn[3 * i + 1] * rr[3 * i + 1] + nn[3 * i + 2] * rr[3 * i + 2];
            const f = s * sgn * F;
            for (let a = 0; a < 3; a++)
              for (let b = 0; b < 3; b++)
                vals[off + (3 + a) * 6 + 3 + b] +=
                  f * (rr[3 * i + a] * nn[3 * i + b] - (a === b ? dot : 0));
          }
        }
      }
    }
  }

  addVelJacobian(m: SparseBlockMatrix, s: number): void {
    this.evaluate();
    if (this.frictionDetected) this.addFrictionJacobian(m, s, true);
    const { sys, g } = this;
    for (let i = 0; i < this.count; i++) {
      if (this.fn[i] === 0) continue;
      const d = this.damp[i];
      if (d === 0) continue;
      this.gradients(i);
      const parts = this.endCount(i);
      for (let sx = 0; sx < parts; sx++) {
        const X = this.bodyOfEnd(i, sx);
        const wX = this.width(X);
        if (wX === 0) continue;
        for (let sy = 0; sy < parts; sy++) {
          const Y = this.bodyOfEnd(i, sy);
          const wY = this.width(Y);
          if (wY === 0) continue;
          const off = m.offsetOf(sys.block[X], sys.block[Y]);
          const vals = m.values;
          for (let r = 0; r < wX; r++) {
            const gr = -s * d * g[6 * sx + r];
            if (gr === 0) continue;
            for (let c = 0; c < wY; c++) vals[off + r * wY + c] += gr * g[6 * sy + c];
          }
        }
      }
    }
  }

  /**
   * m += s ∂Q/∂q (or, with `velocity`, s ∂Q/∂v) of the friction forces at the current
   * evaluation (file comment), on the blocks addSolveBlocks reserved.
   */
  private addFrictionJacobian(m: SparseBlockMatrix, s: number, velocity: boolean): void {
    const { sys, dF, tB, proj, arm, g, wv } = this;
    const armX = this.otherArm;
    for (let i = 0; i < this.count; i++) {
      const Fn = this.fn[i];
      if (!(Fn > 0) || this.mu[i] === 0) continue;
      const kt = this.kt[i];
      const ct = this.ct[i];
      const o = 3 * i;
      const norm = this.trialNorm[i];
      const slips = this.slip[i] === 1;
      if (slips && !(norm > 0)) continue;
      const nx = this.normal[o];
      const ny = this.normal[o + 1];
      const nz = this.normal[o + 2];
      // P: I (stick), (μ F_n/|F_tr|)(I − F̂ F̂ᵀ) (slip)
      const a = slips ? (this.mu[i] * Fn) / norm : 1;
      for (let r = 0; r < 3; r++)
        for (let c = 0; c < 3; c++)
          proj[3 * r + c] =
            a *
            ((r === c ? 1 : 0) -
              (slips ? (this.trialForce[o + r] * this.trialForce[o + c]) / (norm * norm) : 0));
      const couple = slips && this.exactFriction;
      if (couple) this.gradients(i);
      const shifted = this.midpointShift(i);
      const parts = this.endCount(i);
      for (let y = 0; y < parts; y++) {
        const Y = this.bodyOfEnd(i, y);
        const wY = this.width(Y);
        if (wY === 0) continue;
        const cY = this.endCoefficient(i, y);
        this.endArm(i, y, arm);
        const rx = arm[0];
        const ry = arm[1];
        const rz = arm[2];
        const ox = sys.omega[3 * Y];
        const oy = sys.omega[3 * Y + 1];
        const oz = sys.omega[3 * Y + 2];
        const wr = ox * rx + oy * ry + oz * rz;
        // tB ← T times −c_Y (k_t J_Y + c_t W_Y), or −c_Y c_t J_Y (velocity), column by column
        const kJ = velocity ? -cY * ct : -cY * kt;
        const kW = velocity ? 0 : -cY * ct;
        for (let c = 0; c < wY; c++) {
          let vx: number;
          let vy: number;
          let vz: number;
          if (c < 3) {
            vx = c === 0 ? kJ : 0;
            vy = c === 1 ? kJ : 0;
            vz = c === 2 ? kJ : 0;
          } else {
            // J: e_k × r; W: (ω·r) e_k − r ω_k (k = c − 3)
            const k = c - 3;
            const wk = k === 0 ? ox : k === 1 ? oy : oz;
            vx = kJ * (k === 1 ? rz : k === 2 ? -ry : 0) + kW * ((k === 0 ? wr : 0) - rx * wk);
            vy = kJ * (k === 0 ? -rz : k === 2 ? rx : 0) + kW * ((k === 1 ? wr : 0) - ry * wk);
            vz = kJ * (k === 0 ? ry : k === 1 ? -rx : 0) + kW * ((k === 2 ? wr : 0) - rz * wk);
          }
          const vn = nx * vx + ny * vy + nz * vz;
          tB[c] = vx - vn * nx;
          tB[6 + c] = vy - vn * ny;
          tB[12 + c] = vz - vn * nz;
        }
        // dF ← P tB (+ μ F̂ (∂F_n/∂·_Y)ᵀ in slip)
        for (let r = 0; r < 3; r++)
          for (let c = 0; c < wY; c++)
            dF[6 * r + c] =
              proj[3 * r] * tB[c] + proj[3 * r + 1] * tB[6 + c] + proj[3 * r + 2] * tB[12 + c];
        if (couple) {
          const kap = this.kappa[i];
          const d = this.damp[i];
          for (let c = 0; c < wY; c++) {
            const gn = velocity ? -d * g[6 * y + c] : kap * g[6 * y + c] - d * wv[6 * y + c];
            const f = (this.mu[i] * gn) / norm;
            for (let r = 0; r < 3; r++) dF[6 * r + c] += f * this.trialForce[o + r];
          }
        }
        for (let x = 0; x < parts; x++) {
          const X = this.bodyOfEnd(i, x);
          const wX = this.width(X);
          if (wX === 0) continue;
          const sc = s * this.endCoefficient(i, x);
          this.forceArm(i, x, shifted, armX);
          const off = m.offsetOf(sys.block[X], sys.block[Y]);
          const vals = m.values;
          for (let c = 0; c < wY; c++) {
            const f0 = dF[c];
            const f1 = dF[6 + c];
            const f2 = dF[12 + c];
            vals[off + c] += sc * f0;
            vals[off + wY + c] += sc * f1;
            vals[off + 2 * wY + c] += sc * f2;
            if (wX !== 6) continue;
            vals[off + 3 * wY + c] += sc * (armX[1] * f2 - armX[2] * f1);
            vals[off + 4 * wY + c] += sc * (armX[2] * f0 - armX[0] * f2);
            vals[off + 5 * wY + c] += sc * (armX[0] * f1 - armX[1] * f0);
          }
        }
      }
      if (velocity) continue;
      if (shifted) {
        this.addLeverJacobian(m, s, i);
        continue;
      }
      // c_X [F_t]×[r_X]× = c_X (r_X F_tᵀ − (F_t·r_X) I) on the (θ, θ) sub-block of a rigid end
      for (let x = 0; x < parts; x++) {
        const X = this.bodyOfEnd(i, x);
        if (this.width(X) !== 6) continue;
        const sc = s * this.endCoefficient(i, x);
        this.endArm(i, x, armX);
        const off = m.offsetOf(sys.block[X], sys.block[X]);
        const vals = m.values;
        const ft = this.ft;
        const dot = ft[o] * armX[0] + ft[o + 1] * armX[1] + ft[o + 2] * armX[2];
        for (let r = 0; r < 3; r++)
          for (let c = 0; c < 3; c++)
            vals[off + (3 + r) * 6 + 3 + c] += sc * (armX[r] * ft[o + c] - (r === c ? dot : 0));
      }
    }
  }

  /**
   * m += s times the change of the friction's moment with its common point's lever arms,
   * −c_X [F_t]× (½ J_Y − δ_XY [I, 0]), on the rotation rows of each rigid end X and the
   * columns of each end Y of contact i (file comment, "Common point"; both ends dynamic).
   */
  private addLeverJacobian(m: SparseBlockMatrix, s: number, i: number): void {
    const { sys, arm } = this;
    const o = 3 * i;
    const fx = this.ft[o];
    const fy = this.ft[o + 1];
    const fz = this.ft[o + 2];
    for (let x = 0; x < 2; x++) {
      const X = x === 0 ? this.bodyA[i] : this.bodyB[i];
      if (this.width(X) !== 6) continue;
      const cX = s * this.endCoefficient(i, x);
      for (let y = 0; y < 2; y++) {
        const Y = y === 0 ? this.bodyA[i] : this.bodyB[i];
        const wY = this.width(Y);
        if (wY === 0) continue;
        const off = m.offsetOf(sys.block[X], sys.block[Y]);
        const vals = m.values;
        // translation columns: (δ_XY − ½) c_X [F_t]×
        const t = cX * ((x === y ? 1 : 0) - 0.5);
        const row = off + 3 * wY;
        vals[row + 1] -= t * fz;
        vals[row + 2] += t * fy;
        vals[row + wY] += t * fz;
        vals[row + wY + 2] -= t * fx;
        vals[row + 2 * wY] -= t * fy;
        vals[row + 2 * wY + 1] += t * fx;
        if (wY !== 6) continue;
        // rotation columns: ½ c_X [F_t]×[r_Y]× = ½ c_X (r_Y F_tᵀ − (F_t·r_Y) I)
        this.endArm(i, y, arm);
        const dot = fx * arm[0] + fy * arm[1] + fz * arm[2];
        const f = 0.5 * cX;
        for (let r = 0; r < 3; r++)
          for (let c = 0; c < 3; c++)
            vals[row + r * wY + 3 + c] += f * (arm[r] * this.ft[o + c] - (r === c ? dot : 0));
      }
    }
  }

  /** End x of fem face contact i: 0..2 the triangle's nodes, 3 its side b (vertex or body). */
  private triangleBody(i: number, x: number): number {
    return x < 3 ? this.nodes[3 * i + x] : this.bodyB[i];
  }

  /** c_x of end x of fem face contact i: −w_x on the nodes, +1 on side b (∂dist/∂p_x = c_x n). */
  private triangleCoefficient(i: number, x: number): number {
    return x < 3 ? -this.weights[3 * i + x] : 1;
  }

  /** Detection needed again (the margin or the step size, which widens it, changed). */
  invalidateDetection(): void {
    this.detectedVersion = -1;
  }

  /**
   * The elastic energy (J) of the contacts at the current state: detected here when the
   * last detection was at another state (as report does), Σ U(dist) over those that
   * penetrate (ContactBehavior.potential).
   */
  potentialEnergy(): number {
    this.beginStep();
    this.evaluate();
    let e = 0;
    for (let i = 0; i < this.count; i++) e += this.normalEnergy(i);
    if (this.frictionDetected) for (let i = 0; i < this.count; i++) e += this.springEnergy(i);
    return e;
  }

  /**
   * U(dist) (J), contact i's elastic energy at the last evaluation (ContactBehavior.potential;
   * 0 where it does not penetrate).
   */
  private normalEnergy(i: number): number {
    if (!(this.dist[i] < 0)) return 0;
    this.placePoint(i, 0);
    this.placePoint(i, 1);
    this.nrm[0] = this.normal[3 * i];
    this.nrm[1] = this.normal[3 * i + 1];
    this.nrm[2] = this.normal[3 * i + 2];
    return (
      this.share[i] *
      this.behavior.potential(this.dist[i], this.c0, this.c1, this.nrm, this.area[i])
    );
  }

  /**
   * The law's response at dist for contact i (its points c0, c1, the normal in nrm), with
   * its share of the force (`share`): f and f″ times it, the compliance over it (the
   * damping coefficient as it is, the step damping following the compliance, as a law per
   * unit area's with its area scaled).
   */
  private response(i: number, dist: number, c0: ContactPoint, c1: ContactPoint): ContactResponse {
    const r = this.behavior.computeResponse(dist, c0, c1, this.nrm, this.area[i]);
    const w = this.share[i];
    if (w !== 1) {
      r.force *= w;
      r.compliance /= w;
      r.stiffnessRate *= w;
    }
    return r;
  }

  /**
   * Φ = ½ k_t |δ_c|² (J) of contact i's tangential spring at the last evaluation, δ_c the
   * history a commit here would keep: δ_tr in stick, −F_t/k_t (½ |F_t|²/k_t) in slip.
   */
  private springEnergy(i: number): number {
    const kt = this.kt[i];
    if (!(kt > 0)) return 0;
    const o = 3 * i;
    const v = this.slip[i] === 1 ? this.ft : this.trial;
    const sq = v[o] * v[o] + v[o + 1] * v[o + 1] + v[o + 2] * v[o + 2];
    return this.slip[i] === 1 ? (0.5 * sq) / kt : 0.5 * kt * sq;
  }

  /**
   * The contacts' force beyond their elastic push, at the current state with the contacts
   * of the last detection (those the running step uses): (F_n − e) n, e = −f(dist) the
   * elastic push (0 where not penetrating), F_n the force applied; its power
   * Σ (e − F_n) u_n (W, u_n the normal velocity) is, with d the damping and no clamp,
   * d u_n²; where the clamp holds F_n at 0 (separating faster than e/d) e u_n, the elastic
   * energy the clamp lets go; 0 for contacts elastic in this step (found separated at its
   * start). monitor.ts. With friction also its force beyond its spring's: −c_t T u in
   * stick (F_t + k_t δ_tr), the whole F_t in slip (file comment).
   */
  applyDissipativeForces(_t: number): void {
    this.evaluate();
    const d = this.damped;
    for (let i = 0; i < this.count; i++) d[i] = this.fn[i] - this.elastic[i];
    this.applyNormal(d, this.rA, this.rB);
    this.applyFrictionDissipation();
  }

  /** The friction's force beyond its springs' at the last evaluation (applyDissipativeForces). */
  private applyFrictionDissipation(): void {
    if (!this.frictionDetected) return;
    const f = this.frictionDamped;
    for (let i = 0; i < this.count; i++) {
      const kt = this.slip[i] === 1 ? 0 : this.kt[i];
      for (let k = 3 * i; k < 3 * i + 3; k++) f[k] = this.ft[k] + kt * this.trial[k];
    }
    this.applyTangential(f);
  }

  /**
   * At a segment's start, after beginStep (file comment, "The clamp's release"): applies
   * applyDissipativeForces' forces but of the contacts that push here (F_n > 0), and keeps
   * each contact's F_n, e, U and lever arms for the segment's end.
   */
  applySegmentStart(): void {
    this.evaluate();
    const n = this.count;
    this.segmentCount = n;
    this.segmentFn = grow(this.segmentFn, n);
    this.segmentElastic = grow(this.segmentElastic, n);
    this.segmentEnergy = grow(this.segmentEnergy, n);
    this.segmentArmA = grow(this.segmentArmA, 3 * n);
    this.segmentArmB = grow(this.segmentArmB, 3 * n);
    const d = this.damped;
    for (let i = 0; i < n; i++) {
      const F = this.fn[i];
      this.segmentFn[i] = F;
      this.segmentElastic[i] = this.elastic[i];
      this.segmentEnergy[i] = F > 0 ? 0 : this.normalEnergy(i);
      d[i] = F > 0 ? F - this.elastic[i] : 0;
    }
    for (let k = 0; k < 3 * n; k++) {
      this.segmentArmA[k] = this.rA[k];
      this.segmentArmB[k] = this.rB[k];
    }
    this.applyNormal(d, this.rA, this.rB);
    this.applyFrictionDissipation();
  }

  /**
   * At the segment's end (the current state; file comment, "The clamp's release"): applies applyDissipativeForces' forces but of
   * the contacts held at F_n = 0 at both ends, and returns Σ (U_s − U_e) over those (J), the
   * elastic energy the clamp let go over the segment.
   */
  applySegmentEnd(): number {
    this.evaluate();
    const kept = this.segmentCount === this.count;
    const d = this.damped;
    let released = 0;
    for (let i = 0; i < this.count; i++) {
      if (kept && this.segmentFn[i] === 0 && this.fn[i] === 0) {
        d[i] = 0;
        released += this.segmentEnergy[i] - this.normalEnergy(i);
      } else d[i] = this.fn[i] - this.elastic[i];
    }
    this.applyNormal(d, this.rA, this.rB);
    this.applyFrictionDissipation();
    return released;
  }

  /**
   * After applySegmentEnd at the same state: applies the start's dissipative force −e_s n,
   * at the start's lever arms, of the contacts held at 0 at the segment's start that push at
   * its end (their start's share of the ends' weighing, which applySegmentStart left out);
   * false, nothing applied, where there is none.
   */
  applyReopened(): boolean {
    if (this.segmentCount !== this.count) return false;
    const d = this.damped;
    let any = false;
    for (let i = 0; i < this.count; i++) {
      d[i] = this.segmentFn[i] === 0 && this.fn[i] > 0 ? -this.segmentElastic[i] : 0;
      if (d[i] !== 0) any = true;
    }
    if (any) this.applyNormal(d, this.segmentArmA, this.segmentArmB);
    return any;
  }

  /**
   * At an accepted step's end (simulation/step-work.ts): commits the friction history here
   * (a detection at this state, beginStep) and returns the energy the commits since the
   * last call released (J, file comment), to be booked as dissipated. 0 without friction.
   */
  settle(): number {
    if (!this.frictionDetected && this.released === 0) return 0;
    this.beginStep();
    const r = this.released;
    this.released = 0;
    return r;
  }

  /** Holds the history of the current state (a Simulation step's start). */
  holdHistory(): void {
    if (!this.frictionDetected && this.history.count === 0) return;
    this.heldHistory.copyFrom(this.history);
  }

  /** The history held by holdHistory again, the state put back there (a step undone). */
  restoreHistory(): void {
    if (!this.frictionDetected && this.history.count === 0 && this.heldHistory.count === 0) return;
    this.history.copyFrom(this.heldHistory);
    this.historyTaken();
  }

  /** No history: a state written from outside, a reset. */
  clearHistory(): void {
    this.history.clear();
    this.heldHistory.clear();
    this.historyTaken();
  }

  /**
   * The friction history for simulation snapshots (copies; ContactMemory with the
   * displacements δ (m) as its impulses), null without friction.
   */
  exportHistory(): ContactMemory | null {
    if (!this.frictionDetected && this.history.count === 0) return null;
    return this.history.export();
  }

  /** Restores what exportHistory gave (same model): the next steps continue bit for bit. */
  importHistory(memory: ContactMemory): void {
    this.history.import(memory);
    this.historyTaken();
  }

  /** The history set from outside is the current state's: detected again, not committed. */
  private historyTaken(): void {
    this.historyHere = true;
    this.released = 0;
    this.detectedVersion = -1;
  }

  /**
   * The total normal force of the last evaluation (N): Σ F_n over the contacts, the sum of
   * the normalForce values states() reports. Allocates nothing.
   */
  get totalNormalForce(): number {
    let sum = 0;
    for (let i = 0; i < this.count; i++) sum += this.fn[i];
    return sum;
  }

  /**
   * The penetrating contacts at the current state for the State: re-detected here (so the
   * answer is right after a reset too, and every penetrating contact counts as active):
   * normal force F_n ≥ 0 (N, damping included, clamped at 0), the friction force F_t (N,
   * on b), impulse (F_n n + F_t) h on body b (the force over one step of h = stepSize).
   */
  report(out: ContactReport): void {
    this.beginStep();
    this.evaluate();
    out.begin(this.count);
    const h = this.stepSize;
    for (let i = 0; i < this.count; i++) {
      if (!(this.dist[i] < 0)) continue;
      this.placePoint(i, 0);
      this.placePoint(i, 1);
      const pa = this.c0.position;
      const pb = this.c1.position;
      const F = this.fn[i];
      const j = out.add(this.bodyA[i], this.bodyB[i]);
      for (let k = 0; k < 3; k++) {
        const n = this.normal[3 * i + k];
        const ft = this.frictionDetected ? this.ft[3 * i + k] : 0;
        out.point[3 * j + k] = 0.5 * (pa[k] + pb[k]);
        out.normal[3 * j + k] = n;
        out.tangentForce[3 * j + k] = ft;
        out.impulse[3 * j + k] = (F * n + ft) * h;
      }
      out.gap[j] = this.dist[i];
      out.normalForce[j] = F;
    }
  }
}
