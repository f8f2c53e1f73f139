/**
 * A deformable body of linear tetrahedra as one ForceEffector over its nodes, which are
 * particles of the BodySystem (3 dofs each; fixed nodes are fixed particles). Per element
 * (tet.ts): F = D_s D_m⁻¹, the material's P(F) and tangent (materials.ts), nodal forces
 * f_a = −V P ∇N_a, and the exact Jacobian blocks
 *   ∂f_a/∂x_b = −V Σ_jl ∇N_a,j (∂P_ij/∂F_kl) ∇N_b,l        (3×3, i row, k column)
 * computed column by column from dP for dF = e_k ⊗ ∇N_b (b = 1..3; the columns of node 0
 * are minus their sum, as ∇N₀ = −Σ∇N_b) and symmetrized (the materials are hyperelastic:
 * the exact tangent is the Hessian of the energy, symmetric up to rounding).
 *
 * Storage is structure-of-arrays over elements and over node pairs: every (a, b) pair of
 * dynamic nodes that share an element has one 3×3 slot; an assembly pass sums the element
 * blocks into the slots once per state (cached under sys.stateVersion, so addPosJacobian
 * called twice at one state, Rayleigh damping's K v and the Newton matrix, costs one pass),
 * and addPosJacobian scatters s·slot into the solve matrix at offsets cached per
 * structureVersion. No allocation after construction.
 *
 * The elastic force depends on positions only: addVelJacobian adds nothing. Rayleigh
 * stiffness damping (solver.rayleighStiffness r_K) is the integrators' r_K K v with
 * K = −∂f/∂x from addPosJacobian: the element tangent stiffness of the material.
 *
 * The trapezoidal rule (moreau-jean at θ = ½, generalized-alpha at ρ∞ = 1 and newmark at
 * (¼, ½) through it) takes the energy–momentum force instead of the trapezoid of f
 * (beginMeanStep, meanForces, applyMeanForces; theta-scheme.ts, generalized-alpha.ts).
 *
 * The corotational tangents are assembled in closed form from the rest gradients, R and
 * the Lamé parameters (refreshCorotated), the others from the material's differential
 * column by column.
 *
 * jacobianType: SPD with the approximate corotational tangent (R K₀ Rᵀ is positive
 * semidefinite); SYMMETRIC otherwise (an exact tangent is indefinite under strong
 * compression or buckling).
 *
 * No matrix-free product (JacobianProductEffector) on purpose: `linearSolver: "auto"` picks
 * matrix-free CG for a large system whose effectors all offer one, good for cloth springs
 * (W close to M) but not for elastic solids, whose W = M + h²β K is far from M (the
 * cantilever of the tests, 854 nodes, 160 Newmark steps with converged Newton: 31 s with
 * CG on the product, 7.4 s with the sparse LDLᵀ factorization; `auto` now runs CG on the
 * assembled W with a reused block LDLᵀ factorization, solvers/linear/factored-pcg.ts).
 */
import type { SparseBlockMatrix } from "../../math/block-matrix";
import { mat3Invert } from "../../math/mat3";
import type { BodySystem } from "../../model/body-system";
import { MatrixType, type MatrixTypeFlags } from "../../solvers/linear/linear-solver";
import type { ForceEffector } from "../effector";
import {
  CorotationalMaterial,
  createMaterial,
  type ElasticMaterial,
  type MaterialName,
  StretchBounds,
} from "./materials";
import { nearestRotation, polarDecomposition, symmetricEigen3 } from "./polar";
import { type FemSurface, meshSurface } from "./surface";
import { deformationGradient, tetReference } from "./tet";

export interface FemEffectorOptions {
  id: string;
  /** Body index in sys of each node (a particle, dynamic or fixed). */
  nodeBodies: ArrayLike<number>;
  /** Rest (reference) positions, 3 per node (m): the stress-free configuration. */
  rest: ArrayLike<number>;
  /** Node indices, 4 per tetrahedron, positively oriented at rest. */
  elements: ArrayLike<number>;
  /** Pa. */
  youngModulus: number;
  poissonRatio: number;
  material: MaterialName;
  /** Corotational only: the exact tangent (default) or R K₀ Rᵀ (materials.ts). */
  tangent?: "exact" | "approximate";
  /** The mesh's boundary (surface.ts), when already computed. */
  surface?: FemSurface;
  /**
   * kg/m³, with a consistent mass: the mass matrix ρV/20 (1 + δ_ab) I₃ per element instead
   * of the lumped ρV/4 the particles hold (see addMassProduct). Absent: lumped.
   */
  consistentDensity?: number;
}

export class FemEffector implements ForceEffector {
  readonly id: string;
  readonly jacobianType: MatrixTypeFlags;
  readonly hasJacobians = true;
  /** Newton's test allows for the positions' rounding through K (effector.ts). */
  readonly roundingBound = true;
  readonly nodeCount: number;
  readonly elementCount: number;
  readonly material: ElasticMaterial;
  /** Rest volume of each element (m³). */
  readonly volume: Float64Array;
  /** Body index in sys of each node. */
  readonly nodeBodies: Int32Array;
  /** Node indices (of this body), 4 per element. */
  readonly elements: Int32Array;
  /** The mesh's boundary triangles and vertices. */
  readonly surface: FemSurface;
  /** D_m⁻¹ per element (9, row-major: rows ∇N₁..∇N₃). */
  private readonly b: Float64Array;
  /** Body index of each element node (4 per element). */
  private readonly at: Int32Array;
  /** 1 where the element node is dynamic (forces accumulate there). */
  private readonly moving: Uint8Array;
  /** Slot of element block (a, b) at 16e + 4a + b, −1 when a node is fixed. */
  private readonly elementSlot: Int32Array;
  /** Body index of the row and column node of each slot. */
  private readonly slotRow: Int32Array;
  private readonly slotCol: Int32Array;
  /** ∂f/∂x per slot (9, row-major) at `jacVersion`. */
  private readonly jac: Float64Array;
  private jacVersion = -1;
  /** Solve-matrix offset of each slot's block at `offsetsVersion`. */
  private readonly offsets: Int32Array;
  private offsetsMatrix: SparseBlockMatrix | null = null;
  private offsetsVersion = -1;
  // scratch
  private readonly f = new Float64Array(9);
  private readonly p = new Float64Array(9);
  private readonly df = new Float64Array(9);
  private readonly dp = new Float64Array(9);
  private readonly je = new Float64Array(144);
  /**
   * Set by the stepper while it evaluates the end of a trapezoidal step (θ = w = ½, ρ∞ = 1):
   * applyForces then adds the energy–momentum force (applyMeanForces) against the start
   * beginMeanStep kept.
   */
  meanForces = false;
  /** Per element at the symmetric step's start: F_t, P(F_t) (9 each) and W(C_t) (beginMeanStep). */
  private readonly startF: Float64Array;
  private readonly startP: Float64Array;
  private readonly startW: Float64Array;
  /**
   * The first element (−1: none) whose mean step's last force evaluation found it inverted
   * at the step's end or mean (applyMeanForces, endMeanStep), for strainFault.
   */
  private meanInverted = -1;
  /** Scratch of meanStress: C_t, C, C_m, ΔC, S̄, S(C_m), S(C), F_m (9 each). */
  private readonly c0 = new Float64Array(9);
  private readonly c1 = new Float64Array(9);
  private readonly cm = new Float64Array(9);
  private readonly dc = new Float64Array(9);
  private readonly sm = new Float64Array(9);
  private readonly sc = new Float64Array(9);
  private readonly se = new Float64Array(9);
  private readonly fm = new Float64Array(9);
  /**
   * The mean step's exact tangent ∂(2 f̄ − f(x_t))/∂x per slot (9, row-major, not
   * symmetric; refreshMeanJacobian's A J_e), made with the tangent `jac` at
   * `meanJacVersion` (addMeanTangentProduct).
   */
  private readonly meanJac: Float64Array;
  private meanJacVersion = -1;
  /** Scratch of meanFactor: F⁻¹ and A = F_m F⁻¹; a block of refreshCorotated. */
  private readonly kb = new Float64Array(9);
  private readonly finv = new Float64Array(9);
  private readonly lf = new Float64Array(9);
  /**
   * The corotational material, whose Jacobian is assembled in closed form
   * (refreshCorotated), or null for the others.
   */
  private readonly corotational: CorotationalMaterial | null;
  /**
   * Corotational: each element's R (9 a element) from the last applyForces, at `rotVersion`
   * (the Jacobian at the same state reuses them instead of decomposing F again).
   */
  private readonly rots: Float64Array | null;
  /**
   * With the exact corotational tangent: each element's N = c (tr(S) I − S)⁻¹ + μ I
   * (6 a element: N00 N01 N02 N11 N12 N22, Pa) from the last applyForces, at `rotVersion`
   * (see refreshCorotated); null otherwise.
   */
  private readonly nmat: Float64Array | null;
  private rotVersion = -1;
  /**
   * The sys.stateVersion at which endMeanStep kept every element's start at the current
   * positions (P(F) in startP, and R and N as applyForces stores them; −1: none): a plain
   * applyForces there adds the forces of those stresses instead of evaluating them again.
   * Generalized-alpha's error control takes the end's forces after that pass (generalized-
   * alpha.ts `attempt`), where it used to evaluate every element once more a step than
   * newmark's same scheme (2 of the 7 passes a step on a 4-cell beam).
   */
  private keptVersion = -1;
  private readonly rot = new Float64Array(9);
  private readonly sigma = new Float64Array(3);
  private readonly vecs = new Float64Array(9);
  /** g_0..g_3 = ∇N_a of one element and h_a = R g_a (refreshCorotated). */
  private readonly grads = new Float64Array(12);
  private readonly rotatedGrads = new Float64Array(12);
  /**
   * Consistent mass: ΔM = M_c − M_L per slot, a multiple of I₃ (kg), or null (lumped).
   * Per element M_c,ab = ρV/20 (1 + δ_ab) I₃ and M_L,ab = δ_ab ρV/4 I₃, so ΔM_ab = ρV/20
   * (a ≠ b) and −3ρV/20 (a = b): its rows sum to zero (the same total mass, centre of mass
   * and gravity load as the lumped masses).
   */
  private readonly dm: Float64Array | null = null;
  /** out += s ΔM x (generalized coordinates), with a consistent mass (effector.ts). */
  readonly addMassProduct?: (x: Float64Array, out: Float64Array, s: number) => void;
  /** s ΔM into the solve matrix, with a consistent mass (effector.ts). */
  readonly addMassBlocks?: (m: SparseBlockMatrix, s: number) => void;
  private readonly nodeWeight: Float64Array;
  /**
   * Per element, V λ_max(GᵀG)/m_e (m/kg; addExplicitRates), G the 4 × 3 matrix of the rest
   * gradients ∇N_a and m_e its least share of a dynamic node's mass (the node's mass times
   * V over the rest volume of the node's elements: ρV/4 with lumped masses); 0 when the
   * element moves no node.
   */
  private readonly explicitScale: Float64Array;
  private readonly stretch = new StretchBounds();

  constructor(
    private readonly sys: BodySystem,
    o: FemEffectorOptions,
  ) {
    this.id = o.id;
    const m = o.elements.length / 4;
    if (!Number.isInteger(m)) throw new Error(`fem "${o.id}": elements must hold 4 nodes each`);
    const n = o.nodeBodies.length;
    if (o.rest.length !== 3 * n) throw new Error(`fem "${o.id}": rest must hold 3 per node`);
    this.nodeCount = n;
    this.elementCount = m;
    this.nodeWeight = new Float64Array(n);
    this.material = createMaterial(o.material, o.youngModulus, o.poissonRatio, o.tangent);
    this.jacobianType = this.material.positiveTangent ? MatrixType.SPD : MatrixType.SYMMETRIC;
    this.volume = new Float64Array(m);
    // NaN: no element's F matches before the first beginMeanStep or endMeanStep
    this.startF = new Float64Array(9 * m).fill(Number.NaN);
    this.startP = new Float64Array(9 * m);
    this.startW = new Float64Array(m);
    this.nodeBodies = Int32Array.from(o.nodeBodies);
    this.elements = Int32Array.from(o.elements);
    this.surface = o.surface ?? meshSurface(this.elements, n);
    this.b = new Float64Array(9 * m);
    this.at = new Int32Array(4 * m);
    this.moving = new Uint8Array(4 * m);
    this.elementSlot = new Int32Array(16 * m).fill(-1);
    const slots = new Map<number, number>();
    const rows: number[] = [];
    const cols: number[] = [];
    for (let e = 0; e < m; e++) {
      for (let a = 0; a < 4; a++) {
        const k = o.elements[4 * e + a];
        if (!Number.isInteger(k) || k < 0 || k >= n)
          throw new Error(`fem "${o.id}": element ${e} refers to node ${k} of ${n}`);
        const body = o.nodeBodies[k];
        this.at[4 * e + a] = body;
        this.moving[4 * e + a] = sys.dofOffset[body] >= 0 ? 1 : 0;
      }
      try {
        this.volume[e] = tetReference(o.rest, o.elements, e, this.b);
      } catch (err) {
        throw new Error(`fem "${o.id}": ${(err as Error).message}`);
      }
      for (let a = 0; a < 4; a++)
        for (let c = 0; c < 4; c++) {
          if (!this.moving[4 * e + a] || !this.moving[4 * e + c]) continue;
          const ra = this.at[4 * e + a];
          const rc = this.at[4 * e + c];
          const key = ra * sys.numBodies + rc;
          let s = slots.get(key);
          if (s === undefined) {
            s = rows.length;
            slots.set(key, s);
            rows.push(ra);
            cols.push(rc);
          }
          this.elementSlot[16 * e + 4 * a + c] = s;
        }
    }
    // slots renumbered by (row body, column body): the solve matrix's block order (rows by
    // body, columns ascending), so that addPosJacobian streams through both arrays
    const order = [...slots.keys()].sort((x, y) => x - y);
    const rank = new Int32Array(order.length);
    order.forEach((key, k) => {
      rank[slots.get(key) as number] = k;
      rows[k] = Math.floor(key / sys.numBodies);
      cols[k] = key - rows[k] * sys.numBodies;
    });
    for (let k = 0; k < this.elementSlot.length; k++)
      if (this.elementSlot[k] >= 0) this.elementSlot[k] = rank[this.elementSlot[k]];
    this.corotational = null;
    this.rots = null;
    this.nmat = null;
    if (this.material instanceof CorotationalMaterial) {
      this.corotational = this.material;
      this.rots = new Float64Array(9 * m);
      if (this.material.exact) this.nmat = new Float64Array(6 * m);
    }
    this.explicitScale = this.explicitScales(m, n);
    this.slotRow = Int32Array.from(rows);
    this.slotCol = Int32Array.from(cols);
    this.jac = new Float64Array(9 * rows.length);
    this.meanJac = new Float64Array(9 * rows.length);
    this.offsets = new Int32Array(rows.length);
    if (o.consistentDensity !== undefined) {
      const dm = new Float64Array(rows.length);
      for (let e = 0; e < m; e++) {
        const share = (o.consistentDensity * this.volume[e]) / 20;
        for (let a = 0; a < 4; a++)
          for (let c = 0; c < 4; c++) {
            const slot = this.elementSlot[16 * e + 4 * a + c];
            if (slot >= 0) dm[slot] += a === c ? -3 * share : share;
          }
      }
      this.dm = dm;
      this.addMassProduct = (x, out, s) => this.massProduct(dm, x, out, s);
      this.addMassBlocks = (mat, s) => this.massBlocks(dm, mat, s);
    }
  }

  /** The explicitScale of each of the m elements (n nodes). */
  private explicitScales(m: number, n: number): Float64Array {
    const { b, at, moving, volume } = this;
    const nodeVolume = new Float64Array(n);
    for (let e = 0; e < m; e++)
      for (let a = 0; a < 4; a++) nodeVolume[this.elements[4 * e + a]] += volume[e];
    const out = new Float64Array(m);
    const gtg = new Float64Array(9);
    const w = new Float64Array(3);
    const v = new Float64Array(9);
    for (let e = 0; e < m; e++) {
      let share = Number.POSITIVE_INFINITY;
      for (let a = 0; a < 4; a++)
        if (moving[4 * e + a])
          share = Math.min(
            share,
            (this.sys.mass[at[4 * e + a]] * volume[e]) / nodeVolume[this.elements[4 * e + a]],
          );
      if (share === Number.POSITIVE_INFINITY) continue;
      // GᵀG = Σ_a g_a g_aᵀ, g_0 = −(g_1 + g_2 + g_3)
      gtg.fill(0);
      for (let a = 0; a < 4; a++)
        for (let i = 0; i < 3; i++)
          for (let j = 0; j < 3; j++) {
            const gi =
              a === 0
                ? -(b[9 * e + i] + b[9 * e + 3 + i] + b[9 * e + 6 + i])
                : b[9 * e + 3 * (a - 1) + i];
            const gj =
              a === 0
                ? -(b[9 * e + j] + b[9 * e + 3 + j] + b[9 * e + 6 + j])
                : b[9 * e + 3 * (a - 1) + j];
            gtg[3 * i + j] += gi * gj;
          }
      symmetricEigen3(gtg, 0, w, 0, v, 0);
      out[e] = (volume[e] * w[0]) / share;
    }
    return out;
  }

  /**
   * Adds to out[0] an upper bound (1/s²) of λ_max(M⁻¹K) at the current positions, K the
   * exact tangent stiffness of the elastic forces and M the nodes' (lumped) masses: the
   * square of the highest frequency of the body's elastic modes, which an explicit step
   * must resolve (symplectic Euler, theta-scheme.ts). Element by element: uᵀK u =
   * Σ_e V_e dF_e : A_e : dF_e with dF_e = Σ_a u_a ⊗ ∇N_a, ‖dF_e‖² ≤ λ_max(G_eᵀG_e) ‖u_e‖²
   * and A_e = ∂²ψ/∂F² at the element's F, of norm at most the material's tangentBound; and
   * uᵀM u ≥ Σ_e m_e ‖u_e‖² (the element's shares of its nodes' masses sum to at most each
   * node's mass), so the Rayleigh quotient uᵀKu/uᵀMu is at most max_e explicitScale_e
   * tangentBound_e. Fixed nodes (u = 0 there) and joints (a subspace of u) only lower the
   * quotient. Nothing into out[1]: the elastic forces do not damp. One pass over the
   * elements (F and the bounds of FᵀF's eigenvalues, materials.ts StretchBounds); no
   * allocation.
   */
  addExplicitRates(out: Float64Array): void {
    const { sys, b, at, f, material, explicitScale, stretch } = this;
    let omega2 = 0;
    for (let e = 0; e < this.elementCount; e++) {
      const scale = explicitScale[e];
      if (scale === 0) continue;
      deformationGradient(sys.pos, at, b, e, f);
      stretch.set(f);
      omega2 = Math.max(omega2, scale * material.tangentBound(stretch));
    }
    out[0] += omega2;
  }

  applyForces(_t: number): void {
    if (this.meanForces) {
      this.applyMeanForces();
      return;
    }
    const { sys, b, at, f, p, material, rots, nmat } = this;
    if (this.keptVersion === sys.stateVersion) {
      // the stresses endMeanStep kept at these positions (keptVersion), bit for bit
      const startP = this.startP;
      for (let e = 0; e < this.elementCount; e++) {
        for (let k = 0; k < 9; k++) p[k] = startP[9 * e + k];
        this.addElementForces(e, p);
      }
      if (rots !== null) this.rotVersion = sys.stateVersion;
      return;
    }
    // the corotational material's R (and N), kept for the Jacobian at this state
    // (refreshCorotated)
    const r = rots !== null ? (material as CorotationalMaterial).r : null;
    for (let e = 0; e < this.elementCount; e++) {
      deformationGradient(sys.pos, at, b, e, f);
      material.evaluate(f, p);
      if (r !== null) (rots as Float64Array).set(r, 9 * e);
      if (nmat !== null) this.storeN(e, nmat);
      this.addElementForces(e, p);
    }
    if (rots !== null) this.rotVersion = sys.stateVersion;
  }

  /** sys.force += the nodal forces f_a = −V P ∇N_a (a = 1..3), f_0 = −Σ f_a, of element e. */
  private addElementForces(e: number, p: Float64Array): void {
    const { b, at, moving } = this;
    const force = this.sys.force;
    const o = 9 * e;
    const v = this.volume[e];
    let s0 = 0;
    let s1 = 0;
    let s2 = 0;
    for (let a = 1; a < 4; a++) {
      const g = o + 3 * (a - 1);
      const g0 = b[g];
      const g1 = b[g + 1];
      const g2 = b[g + 2];
      const fx = -v * (p[0] * g0 + p[1] * g1 + p[2] * g2);
      const fy = -v * (p[3] * g0 + p[4] * g1 + p[5] * g2);
      const fz = -v * (p[6] * g0 + p[7] * g1 + p[8] * g2);
      s0 += fx;
      s1 += fy;
      s2 += fz;
      if (moving[4 * e + a]) {
        const i = 3 * at[4 * e + a];
        force[i] += fx;
        force[i + 1] += fy;
        force[i + 2] += fz;
      }
    }
    if (moving[4 * e]) {
      const i = 3 * at[4 * e];
      force[i] -= s0;
      force[i + 1] -= s1;
      force[i + 2] -= s2;
    }
  }

  /**
   * The symmetric step's start (ForceEffector.beginMeanStep): each element's F_t, P(F_t)
   * and W(C_t) (NaN for det F_t ≤ 0) at the current positions, x_t. An element whose F is
   * the one they were kept for (bit for bit: endMeanStep's at the last step's end, or this
   * step's first attempt before a halving) keeps them: they are functions of F alone.
   */
  beginMeanStep(): void {
    const { sys, b, at, f, startF } = this;
    this.meanInverted = -1;
    for (let e = 0; e < this.elementCount; e++) {
      deformationGradient(sys.pos, at, b, e, f);
      const o = 9 * e;
      let same = true;
      for (let k = 0; k < 9 && same; k++) same = f[k] === startF[o + k];
      if (!same) {
        this.keepStart(e, this.endEnergy());
        this.keptVersion = -1;
      }
    }
  }

  /**
   * The end of a mean step whose end state is kept (ForceEffector.endMeanStep): sys.force
   * += f(x) − f̃(x) at the current positions x = x_{t+h}, f̃ = 2 f̄ − f(x_t) the force the
   * step's residual took (applyMeanForces), per element −V (P(F) − P̃) ∇N_a (nothing where
   * the element took the trapezoid's f(x)); and x is kept as the next mean step's start
   * (keepStart), which beginMeanStep at the same positions then finds made. One pass over
   * the elements, P(F), W(C) and S(C_m) each, where the stepper's two passes (f, then f̃)
   * and the next start's (P(F_t), W(C_t)) were three. The kept stresses serve a plain
   * applyForces at the same positions too (keptVersion).
   */
  endMeanStep(): void {
    const { sys, b, at, f, dp, fm, sm, startP, rots, nmat } = this;
    this.meanInverted = -1;
    // the corotational R and N of keepStart's evaluate, as applyForces keeps them
    const r = rots !== null ? (this.material as CorotationalMaterial).r : null;
    for (let e = 0; e < this.elementCount; e++) {
      const o = 9 * e;
      deformationGradient(sys.pos, at, b, e, f);
      const w = this.endEnergy();
      if (this.meanStress(e, w)) {
        // dp = P̃ = 2 F_m S̄ − P(F_t), with the start's P before keepStart replaces it
        for (let i = 0; i < 3; i++)
          for (let j = 0; j < 3; j++)
            dp[3 * i + j] =
              2 * (fm[3 * i] * sm[j] + fm[3 * i + 1] * sm[3 + j] + fm[3 * i + 2] * sm[6 + j]) -
              startP[o + 3 * i + j];
        this.keepStart(e, w);
        for (let k = 0; k < 9; k++) dp[k] = startP[o + k] - dp[k];
        this.addElementForces(e, dp);
      } else {
        if (this.meanInverted < 0) this.meanInverted = e;
        this.keepStart(e, w);
      }
      if (r !== null) (rots as Float64Array).set(r, o);
      if (nmat !== null) this.storeN(e, nmat);
    }
    this.keptVersion = sys.stateVersion;
  }

  /**
   * Element e's start of a mean step at its F (in f): F_t ← F, P(F_t) and W(C_t) = w
   * (endEnergy's, at the same F).
   */
  private keepStart(e: number, w: number): void {
    const { f, p } = this;
    this.startF.set(f, 9 * e);
    this.material.evaluate(f, p);
    this.startP.set(p, 9 * e);
    this.startW[e] = w;
  }

  /**
   * Why the state is outside the material's model (ElasticMaterial.leastStretch), naming
   * the first such element and the cures, or null: an element inverted (det F ≤ 0) or
   * compressed below that least principal stretch. The simulation ends `diverged` on it
   * after a step (simulation.ts findBlowUp), at its last good state. Nothing for the
   * materials without one; one pass over F's stretch bounds, an eigen-decomposition of C
   * only where their lower bound passes the limit.
   */
  strainFault(): string | null {
    const least = this.material.leastStretch;
    if (least === undefined) return null;
    const { sys, b, at, f, c1, sigma, vecs, stretch } = this;
    // the mean step's last force found an element inverted at the mean (both ends may
    // not be): it passed through det F = 0 within the step, where the energy–momentum
    // force fell back to the trapezoid's (applyMeanForces), no solution of the solid's step.
    // A free stvk block struck at 5000/s (faces at 3 times the P-wave speed) converged so
    // at h/16 and came out of the crush with det F = 3.75 and 14 % of its energy gained
    if (this.meanInverted >= 0)
      return this.faultMessage(
        this.meanInverted,
        "inverted within the step (det F ≤ 0 at its mean)",
      );
    for (let e = 0; e < this.elementCount; e++) {
      deformationGradient(sys.pos, at, b, e, f);
      stretch.set(f);
      if (stretch.lo >= least * least && stretch.j > 0) continue;
      let what: string;
      if (!(stretch.j > 0)) what = `inverted (det F = ${stretch.j.toPrecision(3)})`;
      else {
        symmetricEigen3(rightCauchyGreen(f, 0, c1), 0, sigma, 0, vecs, 0);
        const s3 = Math.sqrt(Math.max(sigma[2], 0));
        if (s3 >= least) continue;
        what = `compressed to a principal stretch of ${s3.toPrecision(3)}, below ${least.toPrecision(3)}`;
      }
      return this.faultMessage(e, what);
    }
    return null;
  }

  /**
   * Forgets the last mean step's inverted element (strainFault): the state was put back to
   * one before it (simulation.ts restoreGood), which a step of an integrator without the
   * mean force (after a PATCH) would otherwise find faulted.
   */
  forgetMeanFault(): void {
    this.meanInverted = -1;
  }

  /** strainFault's message: element e is `what`, and the cures. */
  private faultMessage(e: number, what: string): string {
    return `fem body "${this.id}": element ${e} (material ${this.material.name}) ${what}, where the material no longer models the solid; take a smaller step (solver.dt), or the neo-hookean or corotational material`;
  }

  /** W(C) of the F in f (C into c1), NaN for det F ≤ 0 (where ψ is not W(C)). */
  private endEnergy(): number {
    const { f, c1 } = this;
    return determinant(f) > 0
      ? this.material.greenEnergy(rightCauchyGreen(f, 0, c1), this.se)
      : Number.NaN;
  }

  /**
   * sys.force += 2 f̄ − f(x_t) at the current positions x = x_{t+h} (ForceEffector
   * .meanForces; the step weighs it with f(x_t) by ½ each, so that its force over the step is
   * f̄): per element f̄_a = −V P̄ ∇N_a with the energy–momentum stress of Gonzalez
   * ("Exact energy and momentum conserving algorithms for general models in non linear
   * elasticity", CMAME 190, 2000; for St Venant–Kirchhoff Simo & Tarnow, ZAMP 43, 1992)
   *   P̄ = F_m S̄,   F_m = ½ (F_t + F),   C_m = ½ (C_t + C),   ΔC = C − C_t,
   *   S̄ = S(C_m) + 2 [W(C) − W(C_t) − ½ S(C_m) : ΔC] ΔC / (ΔC : ΔC)
   * (S = 2 ∂W/∂C, materials.ts greenEnergy; the correction is O(‖ΔC‖), and 0 for St
   * Venant–Kirchhoff's quadratic W up to rounding). Its numerator, O(‖ΔC‖³), is a difference
   * of energies, each rounded to about ε ‖S‖ ‖C‖ (and ε |W|): below MEAN_ROUNDING times that
   * it is rounding's, and divided by ΔC : ΔC it made the force noise of ε ‖S‖/‖ΔC‖, which a
   * body coming to rest (ΔC → 0) turned into a residual Newton could not bring below its
   * tolerance (a damped block's step failed even halved four times; the work it leaves out
   * is then that rounding). Since F_mᵀ ΔF + ΔFᵀ F_m = ΔC exactly, P̄ : ΔF = ½ S̄ : ΔC
   * = W(C) − W(C_t): the force's work over the step, on the trapezoidal rule's
   * x_{t+h} − x_t = h (v_t + v_{t+h})/2, is minus the change of the elastic energy, which
   * the kinetic energy's change ½ (v_t + v_{t+h}) · M (v_{t+h} − v_t) = h v̄ · f̄ then
   * balances exactly; and Σ_a x_m,a × f̄_a = 0 (x_m = ½ (x_t + x_{t+h}); F_m S̄ F_mᵀ is
   * symmetric), so the angular momentum is kept too. An element inverted at either end or
   * at the mean (det ≤ 0, where the corotational ψ is not W(C)) takes the trapezoid's f(x).
   * The Jacobian addPosJacobian gives stays the tangent at x, ½ ∂(2 f̄)/∂x up to O(ΔF), the
   * symmetric W the linear solvers take; with it alone Newton converged linearly (the
   * spinning block of spin.test.ts, 9.3 iterations a step). The derivative of 2 f̄ is not
   * symmetric (d(2P̄) = dF S̄ + 2 F_m dS̄ with dS̄ through dC = dFᵀF + FᵀdF, F the end's,
   * against F_m on the left; its symmetric part is a worse approximation, 18–27
   * iterations): addMeanTangentProduct gives the stepper its first-order part's difference
   * from that tangent (refreshMeanJacobian), with which it corrects each Newton solve
   * (AccelerationStepper.meanTangentCorrection).
   */
  private applyMeanForces(): void {
    const { sys, b, at, f, p, fm, sm, startP } = this;
    this.meanInverted = -1;
    for (let e = 0; e < this.elementCount; e++) {
      const o = 9 * e;
      deformationGradient(sys.pos, at, b, e, f);
      if (!this.meanStress(e, this.endEnergy())) {
        if (this.meanInverted < 0) this.meanInverted = e;
        this.material.evaluate(f, p);
        this.addElementForces(e, p);
        continue;
      }
      // p = 2 F_m S̄ − P(F_t)
      for (let i = 0; i < 3; i++)
        for (let j = 0; j < 3; j++)
          p[3 * i + j] =
            2 * (fm[3 * i] * sm[j] + fm[3 * i + 1] * sm[3 + j] + fm[3 * i + 2] * sm[6 + j]) -
            startP[o + 3 * i + j];
      this.addElementForces(e, p);
    }
  }

  /**
   * Gonzalez's stress of element e (applyMeanForces) with F = the end's in `f`, C in c1 and
   * w1 = W(C) (endEnergy): false when the element takes the trapezoid's f(x) (inverted at
   * either end or at the mean), else true with F_m in fm and S̄ in sm (Gonzalez's
   * correction left out below the rounding, MEAN_ROUNDING).
   */
  private meanStress(e: number, w1: number): boolean {
    const { f, c0, c1, cm, dc, sm, sc, fm, material, startF, startW } = this;
    const o = 9 * e;
    for (let k = 0; k < 9; k++) fm[k] = 0.5 * (startF[o + k] + f[k]);
    const w0 = startW[e];
    if (!(Number.isFinite(w0) && Number.isFinite(w1) && determinant(fm) > 0)) return false;
    rightCauchyGreen(startF, o, c0);
    let dd = 0;
    for (let k = 0; k < 9; k++) {
      dc[k] = c1[k] - c0[k];
      dd += dc[k] * dc[k];
      cm[k] = 0.5 * (c0[k] + c1[k]);
    }
    material.greenEnergy(cm, sc);
    let sdc = 0;
    let ss = 0;
    let cc = 0;
    for (let k = 0; k < 9; k++) {
      sdc += sc[k] * dc[k];
      ss += sc[k] * sc[k];
      cc += cm[k] * cm[k];
    }
    const num = w1 - w0 - 0.5 * sdc;
    const rounding =
      MEAN_ROUNDING * Number.EPSILON * (Math.abs(w0) + Math.abs(w1) + Math.sqrt(ss * cc));
    const g = Math.abs(num) > rounding ? (2 * num) / dd : 0;
    for (let k = 0; k < 9; k++) sm[k] = sc[k] + g * dc[k];
    return true;
  }

  addSolveBlocks(m: SparseBlockMatrix): void {
    const blk = this.sys.block;
    for (let s = 0; s < this.slotRow.length; s++)
      if (this.slotRow[s] !== this.slotCol[s])
        m.addBlock(blk[this.slotRow[s]], blk[this.slotCol[s]]);
  }

  addPosJacobian(m: SparseBlockMatrix, s: number): void {
    this.refreshJacobian();
    this.refreshOffsets(m);
    const { jac, offsets } = this;
    const v = m.values;
    for (let k = 0; k < offsets.length; k++) {
      const o = offsets[k];
      const j = 9 * k;
      for (let q = 0; q < 9; q++) v[o + q] += s * jac[j + q];
    }
  }

  addVelJacobian(_m: SparseBlockMatrix, _s: number): void {}

  private massProduct(dm: Float64Array, x: Float64Array, out: Float64Array, s: number): void {
    const { dofOffset } = this.sys;
    for (let k = 0; k < dm.length; k++) {
      const r = dofOffset[this.slotRow[k]];
      const c = dofOffset[this.slotCol[k]];
      const w = s * dm[k];
      out[r] += w * x[c];
      out[r + 1] += w * x[c + 1];
      out[r + 2] += w * x[c + 2];
    }
  }

  private massBlocks(dm: Float64Array, m: SparseBlockMatrix, s: number): void {
    this.refreshOffsets(m);
    const v = m.values;
    for (let k = 0; k < dm.length; k++) {
      const o = this.offsets[k];
      const w = s * dm[k];
      v[o] += w;
      v[o + 4] += w;
      v[o + 8] += w;
    }
  }

  /** ½ vᵀ ΔM v (J): the consistent mass's share of the kinetic energy (0 when lumped). */
  kineticCorrection(): number {
    const dm = this.dm;
    if (dm === null) return 0;
    const { vel } = this.sys;
    let e = 0;
    for (let k = 0; k < dm.length; k++) {
      const r = 3 * this.slotRow[k];
      const c = 3 * this.slotCol[k];
      e += dm[k] * (vel[r] * vel[c] + vel[r + 1] * vel[c + 1] + vel[r + 2] * vel[c + 2]);
    }
    return 0.5 * e;
  }

  /** Elastic energy Σ V ψ(F) (J). */
  potentialEnergy(): number {
    const { sys, b, at, f, material, volume } = this;
    let e = 0;
    for (let k = 0; k < this.elementCount; k++) {
      deformationGradient(sys.pos, at, b, k, f);
      e += volume[k] * material.energy(f);
    }
    return e;
  }

  /** Total rest volume (m³). */
  get restVolume(): number {
    let v = 0;
    for (let e = 0; e < this.elementCount; e++) v += this.volume[e];
    return v;
  }

  /** The node positions (m, world), 3 per node, into out. */
  positions(out: Float64Array): void {
    const x = this.sys.pos;
    for (let k = 0; k < this.nodeCount; k++) {
      const i = 3 * this.nodeBodies[k];
      out[3 * k] = x[i];
      out[3 * k + 1] = x[i + 1];
      out[3 * k + 2] = x[i + 2];
    }
  }

  /**
   * The von Mises equivalent strain of element e (dimensionless): with the Green–Lagrange
   * strain E = ½ (FᵀF − I) and its deviator E′ = E − tr(E)/3 I,
   *   ε_eq = √(2/3 E′ : E′),
   * invariant under rotations of the element (it reads FᵀF only), equal to |ε| for a
   * small uniaxial strain ε at ν = ½ (E′ = ε diag(1, −½, −½)) and to γ/√3 for a small
   * simple shear γ.
   */
  equivalentStrain(e: number): number {
    const f = this.f;
    deformationGradient(this.sys.pos, this.at, this.b, e, f);
    // C = FᵀF (symmetric): C_ij = Σ_k F_ki F_kj
    const c = (i: number, j: number) => f[i] * f[j] + f[3 + i] * f[3 + j] + f[6 + i] * f[6 + j];
    const e00 = 0.5 * (c(0, 0) - 1);
    const e11 = 0.5 * (c(1, 1) - 1);
    const e22 = 0.5 * (c(2, 2) - 1);
    const e01 = 0.5 * c(0, 1);
    const e02 = 0.5 * c(0, 2);
    const e12 = 0.5 * c(1, 2);
    const m = (e00 + e11 + e22) / 3;
    const d0 = e00 - m;
    const d1 = e11 - m;
    const d2 = e22 - m;
    return Math.sqrt(
      (2 / 3) * (d0 * d0 + d1 * d1 + d2 * d2 + 2 * (e01 * e01 + e02 * e02 + e12 * e12)),
    );
  }

  /**
   * Per node, the rest-volume-weighted mean of the equivalent strain (equivalentStrain) of
   * its elements into out (a smooth field for a colour map of the surface).
   */
  nodalStrain(out: Float64Array | Float32Array): void {
    const w = this.nodeWeight;
    out.fill(0);
    w.fill(0);
    for (let e = 0; e < this.elementCount; e++) {
      const v = this.volume[e];
      const s = v * this.equivalentStrain(e);
      for (let a = 0; a < 4; a++) {
        const k = this.elements[4 * e + a];
        out[k] += s;
        w[k] += v;
      }
    }
    for (let k = 0; k < this.nodeCount; k++) out[k] /= w[k];
  }

  /** The deformation gradient F of element e at the current positions (row-major 3×3). */
  deformationGradient(e: number, out: Float64Array): void {
    deformationGradient(this.sys.pos, this.at, this.b, e, out);
  }

  /** The first Piola–Kirchhoff stress P of element e (Pa, row-major 3×3). */
  firstPiolaStress(e: number, out: Float64Array): void {
    deformationGradient(this.sys.pos, this.at, this.b, e, this.f);
    this.material.evaluate(this.f, out);
  }

  /** The Cauchy stress σ = P Fᵀ / det F of element e (Pa, row-major 3×3, symmetric). */
  cauchyStress(e: number, out: Float64Array): void {
    const { f, p } = this;
    deformationGradient(this.sys.pos, this.at, this.b, e, f);
    this.material.evaluate(f, p);
    const j =
      f[0] * (f[4] * f[8] - f[5] * f[7]) -
      f[1] * (f[3] * f[8] - f[5] * f[6]) +
      f[2] * (f[3] * f[7] - f[4] * f[6]);
    for (let i = 0; i < 3; i++)
      for (let k = 0; k < 3; k++)
        out[3 * i + k] =
          (p[3 * i] * f[3 * k] + p[3 * i + 1] * f[3 * k + 1] + p[3 * i + 2] * f[3 * k + 2]) / j;
  }

  /** The element Jacobian ∂f/∂x (12×12, row-major, node-major: [x₀ y₀ z₀ x₁ …]) of element e. */
  elementJacobian(e: number, out: Float64Array): void {
    deformationGradient(this.sys.pos, this.at, this.b, e, this.f);
    this.material.evaluate(this.f, this.p);
    this.computeElementJacobian(e);
    out.set(this.je);
  }

  /** je ← ∂f/∂x of element e at the F of the last material.evaluate (see header). */
  private computeElementJacobian(e: number): void {
    const { b, df, dp, je, material } = this;
    const o = 9 * e;
    const v = this.volume[e];
    df.fill(0);
    for (let nb = 1; nb < 4; nb++) {
      const gb = o + 3 * (nb - 1);
      for (let k = 0; k < 3; k++) {
        // dF = e_k ⊗ ∇N_b: row k is ∇N_b
        df[3 * k] = b[gb];
        df[3 * k + 1] = b[gb + 1];
        df[3 * k + 2] = b[gb + 2];
        material.differential(df, dp);
        df[3 * k] = 0;
        df[3 * k + 1] = 0;
        df[3 * k + 2] = 0;
        const col = 3 * nb + k;
        let s0 = 0;
        let s1 = 0;
        let s2 = 0;
        for (let na = 1; na < 4; na++) {
          const ga = o + 3 * (na - 1);
          const g0 = b[ga];
          const g1 = b[ga + 1];
          const g2 = b[ga + 2];
          const y0 = -v * (dp[0] * g0 + dp[1] * g1 + dp[2] * g2);
          const y1 = -v * (dp[3] * g0 + dp[4] * g1 + dp[5] * g2);
          const y2 = -v * (dp[6] * g0 + dp[7] * g1 + dp[8] * g2);
          je[12 * (3 * na) + col] = y0;
          je[12 * (3 * na + 1) + col] = y1;
          je[12 * (3 * na + 2) + col] = y2;
          s0 += y0;
          s1 += y1;
          s2 += y2;
        }
        je[col] = -s0;
        je[12 + col] = -s1;
        je[24 + col] = -s2;
      }
    }
    // the columns of node 0: ∇N₀ = −Σ ∇N_b
    for (let r = 0; r < 12; r++) {
      const row = 12 * r;
      for (let k = 0; k < 3; k++)
        je[row + k] = -(je[row + 3 + k] + je[row + 6 + k] + je[row + 9 + k]);
    }
    // symmetrize (the exact tangent is a Hessian; rounding only)
    for (let r = 0; r < 12; r++)
      for (let c = r + 1; c < 12; c++) {
        const s = 0.5 * (je[12 * r + c] + je[12 * c + r]);
        je[12 * r + c] = s;
        je[12 * c + r] = s;
      }
  }

  /** nmat[6e..] ← N = c (tr(S) I − S)⁻¹ + μ I of the exact corotational material's last evaluate. */
  private storeN(e: number, nmat: Float64Array): void {
    const mat = this.material as CorotationalMaterial;
    const { minv, c, mu } = mat;
    const o = 6 * e;
    nmat[o] = c * minv[0] + mu;
    nmat[o + 1] = c * minv[1];
    nmat[o + 2] = c * minv[2];
    nmat[o + 3] = c * minv[4] + mu;
    nmat[o + 4] = c * minv[5];
    nmat[o + 5] = c * minv[8] + mu;
  }

  /** jac ← the slots of ∂f/∂x at the current state, unless cached. */
  private refreshJacobian(): void {
    if (this.jacVersion === this.sys.stateVersion) return;
    if (this.corotational !== null) {
      this.refreshCorotated(this.corotational, this.jac, false);
      this.jacVersion = this.sys.stateVersion;
      return;
    }
    const { sys, b, at, f, p, jac, material } = this;
    jac.fill(0);
    for (let e = 0; e < this.elementCount; e++) {
      deformationGradient(sys.pos, at, b, e, f);
      material.evaluate(f, p);
      this.computeElementJacobian(e);
      this.scatterElement(e, jac);
    }
    this.jacVersion = sys.stateVersion;
  }

  /** target's slots += je, element e's 4 × 4 blocks (3 × 3, row-major). */
  private scatterElement(e: number, target: Float64Array): void {
    const { je, elementSlot } = this;
    const es = 16 * e;
    for (let na = 0; na < 4; na++)
      for (let nb = 0; nb < 4; nb++) {
        const s = elementSlot[es + 4 * na + nb];
        if (s < 0) continue;
        const o = 9 * s;
        const r0 = 12 * 3 * na + 3 * nb;
        target[o] += je[r0];
        target[o + 1] += je[r0 + 1];
        target[o + 2] += je[r0 + 2];
        target[o + 3] += je[r0 + 12];
        target[o + 4] += je[r0 + 13];
        target[o + 5] += je[r0 + 14];
        target[o + 6] += je[r0 + 24];
        target[o + 7] += je[r0 + 25];
        target[o + 8] += je[r0 + 26];
      }
  }

  /**
   * out += s (J̃ − J) x (generalized coordinates; ForceEffector.addMeanTangentProduct): J̃
   * the exact derivative of the mean step's force 2 f̄ − f(x_t) at the current positions
   * (refreshMeanJacobian), J the tangent addPosJacobian last assembled (the iteration
   * matrix's), so that W − s (J̃ − J) is the exact Newton matrix of the mean step.
   */
  addMeanTangentProduct(x: Float64Array, out: Float64Array, s: number): void {
    if (this.jacVersion < 0) this.refreshJacobian();
    // J̃ at the state of J (a chord iteration's W is an earlier iterate's)
    if (this.meanJacVersion !== this.jacVersion) this.refreshMeanJacobian();
    const { dofOffset } = this.sys;
    const { jac, meanJac, slotRow, slotCol } = this;
    for (let k = 0; k < slotRow.length; k++) {
      const r = dofOffset[slotRow[k]];
      const c = dofOffset[slotCol[k]];
      const o = 9 * k;
      const x0 = x[c];
      const x1 = x[c + 1];
      const x2 = x[c + 2];
      out[r] +=
        s *
        ((meanJac[o] - jac[o]) * x0 +
          (meanJac[o + 1] - jac[o + 1]) * x1 +
          (meanJac[o + 2] - jac[o + 2]) * x2);
      out[r + 1] +=
        s *
        ((meanJac[o + 3] - jac[o + 3]) * x0 +
          (meanJac[o + 4] - jac[o + 4]) * x1 +
          (meanJac[o + 5] - jac[o + 5]) * x2);
      out[r + 2] +=
        s *
        ((meanJac[o + 6] - jac[o + 6]) * x0 +
          (meanJac[o + 7] - jac[o + 7]) * x1 +
          (meanJac[o + 8] - jac[o + 8]) * x2);
    }
  }

  /**
   * meanJac ← the slots of J̃ (addMeanTangentProduct) at the current state: per element
   * A J_e with A = F_m F⁻¹ on the left of the element's tangent J_e where the mean force is
   * Gonzalez's (meanFactor), J_e itself elsewhere. The exact derivative of the element's
   * mean stress 2 F_m S̄ − P(F_t) is dF S̄ + 2 F_m dS̄, dS̄ = D(C_m) : ½ dC plus the
   * derivative of Gonzalez's correction, against dP = dF S + F D(C) : dC at the end
   * (S = 2 ∂W/∂C, D = ∂S/∂C, dC = dFᵀF + FᵀdF): they differ at first order by the turn of
   * F_m against F, A = F_m F⁻¹ (half the step's rotation), and beyond it by O(‖S‖/‖D‖ +
   * ‖ΔC‖), the stress over the modulus and the step's strain change, which A dP leaves
   * out. On the spinning block (spin.test.ts) A J_e took Newton 5.0 to 5.3 iterations a
   * step; the exact J̃ (through the material's differential at C_m's Cholesky factor, ten
   * differentials an element, and the correction's gradient: commit ef1cd84) 4.0 to 5.0,
   * at twice A J_e's cost a step; the end's J alone 9.3 to 9.9, linearly.
   */
  private refreshMeanJacobian(): void {
    if (this.corotational !== null) this.refreshCorotated(this.corotational, this.meanJac, true);
    else {
      const { sys, b, at, f, p, je, lf, meanJac } = this;
      meanJac.fill(0);
      for (let e = 0; e < this.elementCount; e++) {
        deformationGradient(sys.pos, at, b, e, f);
        this.material.evaluate(f, p);
        this.computeElementJacobian(e);
        if (this.meanFactor(e)) {
          for (let a = 0; a < 4; a++)
            for (let c = 0; c < 12; c++) {
              const y0 = je[12 * (3 * a) + c];
              const y1 = je[12 * (3 * a + 1) + c];
              const y2 = je[12 * (3 * a + 2) + c];
              for (let i = 0; i < 3; i++)
                je[12 * (3 * a + i) + c] = lf[3 * i] * y0 + lf[3 * i + 1] * y1 + lf[3 * i + 2] * y2;
            }
          this.meanGeometricTerm(e);
        }
        this.scatterElement(e, meanJac);
      }
    }
    this.meanJacVersion = this.jacVersion;
  }

  /**
   * The geometric part of element e's mean tangent made exact (refreshMeanJacobian, after
   * A J_e is in je, lf = A): J_e's geometric blocks ∂f_a/∂x_b = −V (g_a · S g_b) I (dP = dF S,
   * S = S(C) the end's) came out of A J_e as −V (g_a · S g_b) A, where the mean force's
   * dF S̄ gives −V (g_a · S̄ g_b) I (S̄ Gonzalez's stress, meanStress); so je's block (a, b)
   * += V [(g_a · S g_b) A − (g_a · S̄ g_b) I]. For St Venant–Kirchhoff (D = ∂S/∂C constant,
   * S̄ = S(C_m)) A J_e's material part A F D : dC = F_m D : dC is already 2 F_m dS̄, so J̃ is
   * then the exact derivative of 2 f̄ − f(x_t); for the other materials it leaves out
   * D(C_m) − D(C) and the correction's derivative, O(‖ΔC‖). Under a fast compression the
   * step's strain change makes S̄ − S(C) = ½ D : (C_t − C) as large as S: with A J_e alone a
   * 0.2 m stvk block (E = 1e7 Pa) crushed at 250/s converged linearly at h/16 (corrections
   * ×0.25 each) and stalled.
   */
  private meanGeometricTerm(e: number): void {
    const { b, je, lf, se, sm } = this;
    // S(C) into se (endEnergy), S̄ into sm (meanStress: the same F_m, C, start as meanFactor's)
    this.meanStress(e, this.endEnergy());
    const g = this.grads;
    const o = 9 * e;
    for (let k = 0; k < 3; k++) {
      g[k] = -(b[o + k] + b[o + 3 + k] + b[o + 6 + k]);
      g[3 + k] = b[o + k];
      g[6 + k] = b[o + 3 + k];
      g[9 + k] = b[o + 6 + k];
    }
    const v = this.volume[e];
    for (let a = 0; a < 4; a++)
      for (let c = 0; c < 4; c++) {
        let q = 0;
        let qm = 0;
        for (let i = 0; i < 3; i++)
          for (let j = 0; j < 3; j++) {
            const gg = g[3 * a + i] * g[3 * c + j];
            q += gg * se[3 * i + j];
            qm += gg * sm[3 * i + j];
          }
        for (let i = 0; i < 3; i++)
          for (let j = 0; j < 3; j++)
            je[12 * (3 * a + i) + 3 * c + j] += v * (q * lf[3 * i + j] - (i === j ? qm : 0));
      }
  }

  /**
   * lf ← A = F_m F⁻¹ of element e (F the end's, in f; refreshMeanJacobian); false, lf
   * untouched, where applyMeanForces takes the trapezoid's f(x) (inverted at the start, the
   * end or the mean: meanStress), whose tangent is J_e itself.
   */
  private meanFactor(e: number): boolean {
    const { f, fm, lf, finv, startF, startW } = this;
    const o = 9 * e;
    for (let k = 0; k < 9; k++) fm[k] = 0.5 * (startF[o + k] + f[k]);
    if (!(Number.isFinite(startW[e]) && determinant(f) > 0 && determinant(fm) > 0)) return false;
    mat3Invert(finv, 0, f, 0);
    for (let i = 0; i < 3; i++)
      for (let j = 0; j < 3; j++)
        lf[3 * i + j] =
          fm[3 * i] * finv[j] + fm[3 * i + 1] * finv[3 + j] + fm[3 * i + 2] * finv[6 + j];
    return true;
  }

  /**
   * The corotational tangent (materials.ts) per element block, in closed form from the
   * rest gradients g_a = ∇N_a (g_0 = −Σ g_a), their rotations h_a = R g_a (R from the
   * polar decomposition of F) and the Lamé parameters:
   *   approximate: ∂f_a/∂x_b = R K₀_ab Rᵀ = −V [μ (g_a·g_b) I + μ h_b h_aᵀ + λ h_a h_bᵀ];
   *   exact:       ∂f_a/∂x_b = R (K₀_ab + V [g_a]× N [g_b]×) Rᵀ
   *                          = R K₀_ab Rᵀ + V [h_a]× Ñ [h_b]×,  Ñ = R N Rᵀ,
   * with N = c M⁻¹ + μ I, M = tr(S) I − S, c = λ tr(S − I) − 2μ, and R [g]× Rᵀ = [R g]×.
   * K₀ is the element's stiffness at rest, where the material's differential is
   * dP = μ (dF + dFᵀ) + λ tr(dF) I: for dF = e_k g_bᵀ the force change −V dP g_a is
   * −V [μ (g_a·g_b) e_k + μ g_b (g_a)_k + λ g_a (g_b)_k]. The exact term follows from
   * the differential dP = 2μ dF + c R[w]× + λ tr(RᵀdF) R with w = M⁻¹ vee(T − Tᵀ),
   * T = RᵀdF, for dF = e_k g_bᵀ: vee(T − Tᵀ) = [g_b]× Rᵀe_k, so the force change −V dP g_a
   * is −2μV (g_a·g_b) e_k − λV (R g_a)(R g_b)_k + cV R [g_a]× M⁻¹ [g_b]× Rᵀ e_k; at rest
   * (S = I: M⁻¹ = I/2, c = −2μ) the last term is −μV R [g_a]×[g_b]× Rᵀ, which K₀ holds,
   * hence N = c M⁻¹ + μ I. Symmetric (N is; [h]×ᵀ = −[h]×), so ∂f_b/∂x_a is the
   * transpose: the 10 blocks a ≤ b of an element, about 30 multiplications each (60 with
   * the exact term), from 12 gradients instead of a stored 12 × 12 K₀ per element
   * (computeElementJacobian gives the same blocks column by column from the material's
   * differential; the tests check it against finite differences and this against it).
   */
  private refreshCorotated(mat: CorotationalMaterial, jac: Float64Array, mean: boolean): void {
    const { sys, b, at, f, p, elementSlot, rot: r, sigma, vecs, nmat, lf } = this;
    const { mu, lambda } = mat;
    const cached = this.rotVersion === sys.stateVersion ? this.rots : null;
    const g = this.grads;
    const h = this.rotatedGrads;
    jac.fill(0);
    for (let e = 0; e < this.elementCount; e++) {
      // the mean step's A = F_m F⁻¹ on the left of the blocks (refreshMeanJacobian)
      let left = false;
      if (mean) {
        deformationGradient(sys.pos, at, b, e, f);
        left = this.meanFactor(e);
      }
      if (cached !== null) for (let k = 0; k < 9; k++) r[k] = cached[9 * e + k];
      else {
        if (!mean) deformationGradient(sys.pos, at, b, e, f);
        if (nmat !== null) {
          mat.evaluate(f, p);
          r.set(mat.r);
          this.storeN(e, nmat);
        } else if (!nearestRotation(f, r)) polarDecomposition(f, r, sigma, vecs);
      }
      // g_1..g_3 = rows of D_m⁻¹, g_0 = −Σ g_a; h_a = R g_a
      const o = 9 * e;
      for (let k = 0; k < 3; k++) {
        g[3 + k] = b[o + k];
        g[6 + k] = b[o + 3 + k];
        g[9 + k] = b[o + 6 + k];
        g[k] = -(g[3 + k] + g[6 + k] + g[9 + k]);
      }
      for (let a = 0; a < 4; a++) {
        const g0 = g[3 * a];
        const g1 = g[3 * a + 1];
        const g2 = g[3 * a + 2];
        h[3 * a] = r[0] * g0 + r[1] * g1 + r[2] * g2;
        h[3 * a + 1] = r[3] * g0 + r[4] * g1 + r[5] * g2;
        h[3 * a + 2] = r[6] * g0 + r[7] * g1 + r[8] * g2;
      }
      const v = this.volume[e];
      const vmu = v * mu;
      const vlambda = v * lambda;
      // Ñ = R N Rᵀ (symmetric), exact tangent only
      let n00 = 0;
      let n01 = 0;
      let n02 = 0;
      let n11 = 0;
      let n12 = 0;
      let n22 = 0;
      if (nmat !== null) {
        const q = 6 * e;
        const m00 = nmat[q];
        const m01 = nmat[q + 1];
        const m02 = nmat[q + 2];
        const m11 = nmat[q + 3];
        const m12 = nmat[q + 4];
        const m22 = nmat[q + 5];
        // (R N)_ik = Σ_l R_il N_lk, then Ñ_ij = Σ_k (R N)_ik R_jk
        const a00 = r[0] * m00 + r[1] * m01 + r[2] * m02;
        const a01 = r[0] * m01 + r[1] * m11 + r[2] * m12;
        const a02 = r[0] * m02 + r[1] * m12 + r[2] * m22;
        const a10 = r[3] * m00 + r[4] * m01 + r[5] * m02;
        const a11 = r[3] * m01 + r[4] * m11 + r[5] * m12;
        const a12 = r[3] * m02 + r[4] * m12 + r[5] * m22;
        const a20 = r[6] * m00 + r[7] * m01 + r[8] * m02;
        const a21 = r[6] * m01 + r[7] * m11 + r[8] * m12;
        const a22 = r[6] * m02 + r[7] * m12 + r[8] * m22;
        n00 = a00 * r[0] + a01 * r[1] + a02 * r[2];
        n01 = a00 * r[3] + a01 * r[4] + a02 * r[5];
        n02 = a00 * r[6] + a01 * r[7] + a02 * r[8];
        n11 = a10 * r[3] + a11 * r[4] + a12 * r[5];
        n12 = a10 * r[6] + a11 * r[7] + a12 * r[8];
        n22 = a20 * r[6] + a21 * r[7] + a22 * r[8];
      }
      const es = 16 * e;
      for (let na = 0; na < 4; na++)
        for (let nb = na; nb < 4; nb++) {
          const sab = elementSlot[es + 4 * na + nb];
          if (sab < 0) continue;
          const a0 = h[3 * na];
          const a1 = h[3 * na + 1];
          const a2 = h[3 * na + 2];
          const c0 = h[3 * nb];
          const c1 = h[3 * nb + 1];
          const c2 = h[3 * nb + 2];
          // R K₀_ab Rᵀ: −Vμ (g_a·g_b) on the diagonal, entry (i, k) −V (λ a_i c_k + μ c_i a_k)
          const d =
            -vmu *
            (g[3 * na] * g[3 * nb] + g[3 * na + 1] * g[3 * nb + 1] + g[3 * na + 2] * g[3 * nb + 2]);
          let k00 = d - (vlambda + vmu) * a0 * c0;
          let k01 = -(vlambda * a0 * c1 + vmu * c0 * a1);
          let k02 = -(vlambda * a0 * c2 + vmu * c0 * a2);
          let k10 = -(vlambda * a1 * c0 + vmu * c1 * a0);
          let k11 = d - (vlambda + vmu) * a1 * c1;
          let k12 = -(vlambda * a1 * c2 + vmu * c1 * a2);
          let k20 = -(vlambda * a2 * c0 + vmu * c2 * a0);
          let k21 = -(vlambda * a2 * c1 + vmu * c2 * a1);
          let k22 = d - (vlambda + vmu) * a2 * c2;
          if (nmat !== null) {
            // + V [h_a]× Ñ [h_b]×: rows of P = [h_a]× Ñ, then P [h_b]×;
            // [a]× rows: (0, −a2, a1), (a2, 0, −a0), (−a1, a0, 0)
            const p00 = -a2 * n01 + a1 * n02;
            const p01 = -a2 * n11 + a1 * n12;
            const p02 = -a2 * n12 + a1 * n22;
            const p10 = a2 * n00 - a0 * n02;
            const p11 = a2 * n01 - a0 * n12;
            const p12 = a2 * n02 - a0 * n22;
            const p20 = -a1 * n00 + a0 * n01;
            const p21 = -a1 * n01 + a0 * n11;
            const p22 = -a1 * n02 + a0 * n12;
            // (q [c]×) = (q1 c2 − q2 c1, q2 c0 − q0 c2, q0 c1 − q1 c0) for a row q
            k00 += v * (p01 * c2 - p02 * c1);
            k01 += v * (p02 * c0 - p00 * c2);
            k02 += v * (p00 * c1 - p01 * c0);
            k10 += v * (p11 * c2 - p12 * c1);
            k11 += v * (p12 * c0 - p10 * c2);
            k12 += v * (p10 * c1 - p11 * c0);
            k20 += v * (p21 * c2 - p22 * c1);
            k21 += v * (p22 * c0 - p20 * c2);
            k22 += v * (p20 * c1 - p21 * c0);
          }
          // added to slot (a, b) and transposed to (b, a); A k and A kᵀ in the mean step's
          if (left) {
            const kb = this.kb;
            kb[0] = k00;
            kb[1] = k01;
            kb[2] = k02;
            kb[3] = k10;
            kb[4] = k11;
            kb[5] = k12;
            kb[6] = k20;
            kb[7] = k21;
            kb[8] = k22;
            addLeftProduct(jac, 9 * sab, lf, kb, false);
            if (nb !== na) addLeftProduct(jac, 9 * elementSlot[es + 4 * nb + na], lf, kb, true);
            continue;
          }
          const x = 9 * sab;
          jac[x] += k00;
          jac[x + 1] += k01;
          jac[x + 2] += k02;
          jac[x + 3] += k10;
          jac[x + 4] += k11;
          jac[x + 5] += k12;
          jac[x + 6] += k20;
          jac[x + 7] += k21;
          jac[x + 8] += k22;
          if (nb !== na) {
            const y = 9 * elementSlot[es + 4 * nb + na];
            jac[y] += k00;
            jac[y + 1] += k10;
            jac[y + 2] += k20;
            jac[y + 3] += k01;
            jac[y + 4] += k11;
            jac[y + 5] += k21;
            jac[y + 6] += k02;
            jac[y + 7] += k12;
            jac[y + 8] += k22;
          }
        }
    }
  }

  private refreshOffsets(m: SparseBlockMatrix): void {
    if (this.offsetsMatrix === m && this.offsetsVersion === m.structureVersion) return;
    const blk = this.sys.block;
    for (let s = 0; s < this.offsets.length; s++) {
      const o = m.offsetOf(blk[this.slotRow[s]], blk[this.slotCol[s]]);
      if (o < 0) throw new Error(`fem "${this.id}": solve block not reserved (addSolveBlocks)`);
      this.offsets[s] = o;
    }
    this.offsetsMatrix = m;
    this.offsetsVersion = m.structureVersion;
  }
}

/**
 * applyMeanForces leaves out Gonzalez's correction when its numerator W(C) − W(C_t) −
 * ½ S(C_m) : ΔC is at most this many ε (|W(C)| + |W(C_t)| + ‖S(C_m)‖ ‖C_m‖): the rounding of
 * the energies it differences (an eigen-decomposition of C for the corotational W).
 */
const MEAN_ROUNDING = 64;

/** out[o..o+8] += A K (or A Kᵀ when `transposed`), 3 × 3 row-major. */
function addLeftProduct(
  out: Float64Array,
  o: number,
  a: Float64Array,
  k: Float64Array,
  transposed: boolean,
): void {
  for (let i = 0; i < 3; i++)
    for (let j = 0; j < 3; j++) {
      let x = 0;
      for (let l = 0; l < 3; l++) x += a[3 * i + l] * (transposed ? k[3 * j + l] : k[3 * l + j]);
      out[o + 3 * i + j] += x;
    }
}

/** det F (row-major 3×3). */
function determinant(f: ArrayLike<number>): number {
  return (
    f[0] * (f[4] * f[8] - f[5] * f[7]) -
    f[1] * (f[3] * f[8] - f[5] * f[6]) +
    f[2] * (f[3] * f[7] - f[4] * f[6])
  );
}

/** out = FᵀF (F row-major at f[o..o+8]; out symmetric, row-major); returns out. */
function rightCauchyGreen(f: ArrayLike<number>, o: number, out: Float64Array): Float64Array {
  for (let i = 0; i < 3; i++)
    for (let j = i; j < 3; j++) {
      const x = f[o + i] * f[o + j] + f[o + 3 + i] * f[o + 3 + j] + f[o + 6 + i] * f[o + 6 + j];
      out[3 * i + j] = x;
      out[3 * j + i] = x;
    }
  return out;
}
