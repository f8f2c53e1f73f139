/**
 * Compliant (penalty) contact, `contact.method = "smc"`, as a force effector with exact
 * Jacobians, after ArtiSynth's ContactForceBehavior (behaviors.ts) and ForceEffector.
 *
 * Contact geometry is taken once per step (beginStep, at x_t), as ArtiSynth's collision
 * handler does: for every contact with gap < margin, the normal n (world, from a to b),
 * the two surface points p_a = point − (g/2) n, p_b = point + (g/2) n attached to their
 * bodies as material points (body-frame coordinates ρ_a, ρ_b), and the contact area
 * (area.ts). Within the step the force is evaluated at any trial state (the Newton
 * iterations of the implicit integrators) with that normal and those material points:
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
 * Fem–fem contacts (fem-faces.ts, after the detector's): side a is a triangle of three
 * node particles, the material point p_a = Σ_k w_k x_k with the barycentric weights w of
 * the step's detection held, side b the vertex particle, so
 *   dist = n·(p_b − Σ w_k x_k),  u_n = n·(v_b − Σ w_k v_k),
 * the force F_n n on the vertex and −w_k F_n n on node k, and with the coefficients
 * c = (−w₀, −w₁, −w₂, +1) of the four particles (g_X = c_X n, no rotation):
 *   ∂Q_X/∂q_Y = κ c_X c_Y n nᵀ,   ∂Q_X/∂v_Y = −d c_X c_Y n nᵀ.
 * Their area is the vertex's halved (fem-faces.ts).
 *
 * Solve blocks change with the contacts: the effector has `dynamicStructure`, and the
 * stepper re-reserves its blocks after each beginStep (acceleration-step.ts).
 * The effector needs h for the step damping: `stepSize` (set by the contact model from
 * solver.dt). Friction is not modelled by this effector (normal force only, as
 * ContactForceBehavior); Coulomb friction is the nonsmooth method's.
 */
import type { DynamicStructureEffector } from "../dynamics/stepper";
import type { CollisionDetector } from "../geometry/collide";
import { ContactBuffer } from "../geometry/contact-buffer";
import type { SparseBlockMatrix } from "../math/block-matrix";
import { grow } from "../math/grow";
import { mat3MulVec } from "../math/mat3";
import { norm3 } from "../math/vec3";
import { BodyKind, type BodySystem } from "../model/body-system";
import { MatrixType, type MatrixTypeFlags } from "../solvers/linear/linear-solver";
import { computeContactAreas, surfaceRadius } from "./area";
import { type ContactBehavior, type ContactPoint, effectiveDamping } from "./behaviors";
import type { FemFaceContacts } from "./fem-faces";
import type { FemVertexContacts } from "./fem-vertices";
import type { ContactReport } from "./report";

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
  /** The fem–fem contacts' detection (fem-faces.ts), when two fem bodies collide. */
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
  private radA: Float64Array = new Float64Array(0);
  private radB: Float64Array = new Float64Array(0);
  /** 1 when the contact penetrated at t (dist_t < 0): its damping acts through the step. */
  private activeAtStart: Uint8Array = new Uint8Array(0);
  /** 1 for a fem–fem contact: side a is the triangle nodes[3i..] with weights[3i..]. */
  private triangle: Uint8Array = new Uint8Array(0);
  private nodes: Int32Array = new Int32Array(0);
  private weights: Float64Array = new Float64Array(0);
  /** The scale of addTriangleBlocks' n nᵀ (passed here: a double argument is boxed). */
  private readonly blockScale = new Float64Array(1);
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
  private readonly g = new Float64Array(12);
  private readonly wv = new Float64Array(12);

  constructor(
    readonly sys: BodySystem,
    readonly detector: CollisionDetector,
    public behavior: ContactBehavior,
    /** contact.margin (m): contacts with gap below it are tracked through the step. */
    public margin: number,
  ) {
    let rigid = false;
    for (const s of detector.shapes)
      if (s.body >= 0 && sys.kind[s.body] === BodyKind.RIGID) rigid = true;
    this.jacobianType = rigid ? MatrixType.GENERAL : MatrixType.SPD;
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
   */
  beginStep(): void {
    const { sys, buffer } = this;
    if (this.detectedVersion === sys.stateVersion) return;
    this.detectedVersion = sys.stateVersion;
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
    for (const name of ["normal", "rhoA", "rhoB", "rA", "rB"] as const)
      this[name] = grow(this[name], 3 * n);
    for (const name of [
      "area",
      "radA",
      "radB",
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
    const R = sys.rotation;
    for (let i = 0; i < n; i++) {
      // the detector's contacts, then the fem–fem ones (their shapes are vertex points)
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
    }
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
      const r = this.behavior.computeResponse(
        active && dist > 0 ? 0 : dist,
        this.c0 as ContactPoint,
        this.c1 as ContactPoint,
        nrm,
        this.area[i],
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
    this.applyNormal(this.fn);
  }

  /** F[i] along contact i's normal: on b (and its triangle's nodes), −F[i] n on a. */
  private applyNormal(values: Float64Array): void {
    const { sys } = this;
    for (let i = 0; i < this.count; i++) {
      const F = values[i];
      if (F === 0) continue;
      const fx = F * this.normal[3 * i];
      const fy = F * this.normal[3 * i + 1];
      const fz = F * this.normal[3 * i + 2];
      if (this.triangle[i] === 1) {
        // F n on the vertex, −w_k F n on the triangle's node k
        for (let x = 0; x < 4; x++) {
          const b = this.triangleBody(i, x);
          if (sys.dofOffset[b] < 0) continue;
          const c = this.triangleCoefficient(i, x);
          sys.force[3 * b] += c * fx;
          sys.force[3 * b + 1] += c * fy;
          sys.force[3 * b + 2] += c * fz;
        }
        continue;
      }
      for (let side = 0; side < 2; side++) {
        const body = side === 0 ? this.bodyA[i] : this.bodyB[i];
        if (body < 0 || sys.dofOffset[body] < 0) continue;
        const s = side === 0 ? -1 : 1;
        sys.force[3 * body] += s * fx;
        sys.force[3 * body + 1] += s * fy;
        sys.force[3 * body + 2] += s * fz;
        if (sys.kind[body] !== BodyKind.RIGID) continue;
        const r = side === 0 ? this.rA : this.rB;
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
   * g (∂dist/∂q) and wv (∂u_n/∂q) of both sides of contact i into this.g / this.wv at
   * [0..5] (side a) and [6..11] (side b).
   */
  private gradients(i: number): void {
    const { sys, g, wv } = this;
    const nx = this.normal[3 * i];
    const ny = this.normal[3 * i + 1];
    const nz = this.normal[3 * i + 2];
    for (let side = 0; side < 2; side++) {
      const body = side === 0 ? this.bodyA[i] : this.bodyB[i];
      const s = side === 0 ? -1 : 1;
      const o = 6 * side;
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
    const { sys, g, wv } = this;
    for (let i = 0; i < this.count; i++) {
      if (this.fn[i] === 0) continue;
      if (this.triangle[i] === 1) {
        this.blockScale[0] = s * this.kappa[i];
        this.addTriangleBlocks(m, i);
        continue;
      }
      this.gradients(i);
      const kap = this.kappa[i];
      const d = this.damp[i];
      const F = this.fn[i];
      for (let sx = 0; sx < 2; sx++) {
        const X = sx === 0 ? this.bodyA[i] : this.bodyB[i];
        const wX = this.width(X);
        if (wX === 0) continue;
        const kX = sys.block[X];
        for (let sy = 0; sy < 2; sy++) {
          const Y = sy === 0 ? this.bodyA[i] : this.bodyB[i];
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
            // s_X F_n [n]×[r_X]× on the (θ, θ) sub-block: [n]×[r]× = r nᵀ − (n·r) I.
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
    const { sys, g } = this;
    for (let i = 0; i < this.count; i++) {
      if (this.fn[i] === 0) continue;
      const d = this.damp[i];
      if (d === 0) continue;
      if (this.triangle[i] === 1) {
        this.blockScale[0] = -s * d;
        this.addTriangleBlocks(m, i);
        continue;
      }
      this.gradients(i);
      for (let sx = 0; sx < 2; sx++) {
        const X = sx === 0 ? this.bodyA[i] : this.bodyB[i];
        const wX = this.width(X);
        if (wX === 0) continue;
        for (let sy = 0; sy < 2; sy++) {
          const Y = sy === 0 ? this.bodyA[i] : this.bodyB[i];
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

  /** Particle x (0..2 the triangle's nodes, 3 the vertex) of fem–fem contact i. */
  private triangleBody(i: number, x: number): number {
    return x < 3 ? this.nodes[3 * i + x] : this.bodyB[i];
  }

  /** c_x: ∂dist/∂q_x = c_x n for particle x of fem–fem contact i (−w_x, or +1 the vertex). */
  private triangleCoefficient(i: number, x: number): number {
    return x < 3 ? -this.weights[3 * i + x] : 1;
  }

  /**
   * m += blockScale[0]·c_X c_Y n nᵀ on every pair of dynamic particles X, Y of fem–fem
   * contact i (file comment: the position Jacobian with s κ, the velocity one with −s d).
   */
  private addTriangleBlocks(m: SparseBlockMatrix, i: number): void {
    const { sys } = this;
    const nx = this.normal[3 * i];
    const ny = this.normal[3 * i + 1];
    const nz = this.normal[3 * i + 2];
    for (let x = 0; x < 4; x++) {
      const X = this.triangleBody(i, x);
      if (this.width(X) === 0) continue;
      const cx = this.blockScale[0] * this.triangleCoefficient(i, x);
      for (let y = 0; y < 4; y++) {
        const Y = this.triangleBody(i, y);
        if (this.width(Y) === 0) continue;
        const f = cx * this.triangleCoefficient(i, y);
        const off = m.offsetOf(sys.block[X], sys.block[Y]);
        const v = m.values;
        v[off] += f * nx * nx;
        v[off + 1] += f * nx * ny;
        v[off + 2] += f * nx * nz;
        v[off + 3] += f * ny * nx;
        v[off + 4] += f * ny * ny;
        v[off + 5] += f * ny * nz;
        v[off + 6] += f * nz * nx;
        v[off + 7] += f * nz * ny;
        v[off + 8] += f * nz * nz;
      }
    }
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
    for (let i = 0; i < this.count; i++) {
      if (!(this.dist[i] < 0)) continue;
      this.placePoint(i, 0);
      this.placePoint(i, 1);
      this.nrm[0] = this.normal[3 * i];
      this.nrm[1] = this.normal[3 * i + 1];
      this.nrm[2] = this.normal[3 * i + 2];
      e += this.behavior.potential(this.dist[i], this.c0, this.c1, this.nrm, this.area[i]);
    }
    return e;
  }

  /**
   * The contacts' force beyond their elastic push, at the current state with the contacts
   * of the last detection (those the running step uses): (F_n − e) n, e = −f(dist) the
   * elastic push (0 where not penetrating), F_n the force applied; its power
   * Σ (e − F_n) u_n (W, u_n the normal velocity) is, with d the damping and no clamp,
   * d u_n²; where the clamp holds F_n at 0 (separating faster than e/d) e u_n, the elastic
   * energy the clamp lets go; 0 for contacts elastic in this step (found separated at its
   * start). monitor.ts.
   */
  applyDissipativeForces(_t: number): void {
    this.evaluate();
    const d = this.damped;
    for (let i = 0; i < this.count; i++) d[i] = this.fn[i] - this.elastic[i];
    this.applyNormal(d);
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
   * normal force F_n ≥ 0 (N, damping included, clamped at 0), no tangential force,
   * impulse F_n n h on body b (the force over one step of h = stepSize).
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
        out.point[3 * j + k] = 0.5 * (pa[k] + pb[k]);
        out.normal[3 * j + k] = n;
        out.tangentForce[3 * j + k] = 0;
        out.impulse[3 * j + k] = F * n * h;
      }
      out.gap[j] = this.dist[i];
      out.normalForce[j] = F;
    }
  }
}
