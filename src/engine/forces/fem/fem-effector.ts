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
 * The corotational tangents are assembled in closed form from the rest stiffness K₀
 * (refreshCorotated), the others from the material's differential column by column.
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
import type { BodySystem } from "../../model/body-system";
import { MatrixType, type MatrixTypeFlags } from "../../solvers/linear/linear-solver";
import type { ForceEffector } from "../effector";
import {
  CorotationalMaterial,
  createMaterial,
  type ElasticMaterial,
  type MaterialName,
} from "./materials";
import { nearestRotation, polarDecomposition } from "./polar";
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
   * The corotational material's rest stiffness K₀ = ∂f/∂x at F = I per element (144 a
   * element, as elementJacobian), or null for the other materials: the Jacobian is then
   * assembled block by block from R K₀ Rᵀ (refreshCorotated).
   */
  private readonly k0: Float64Array | null;
  /**
   * With k0: each element's R (9 a element) from the last applyForces, at `rotVersion`
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
  private readonly rot = new Float64Array(9);
  private readonly sigma = new Float64Array(3);
  private readonly vecs = new Float64Array(9);
  /** g_0..g_3 = ∇N_a of one element (refreshCorotated). */
  private readonly grads = new Float64Array(12);
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
    this.k0 = null;
    this.rots = null;
    this.nmat = null;
    if (this.material instanceof CorotationalMaterial) {
      this.rots = new Float64Array(9 * m);
      if (this.material.exact) this.nmat = new Float64Array(6 * m);
      // K₀ of every element: its Jacobian at rest (exact there for either tangent)
      const k0 = new Float64Array(144 * m);
      const { f, p } = this;
      for (let e = 0; e < m; e++) {
        f.fill(0);
        f[0] = f[4] = f[8] = 1;
        this.material.evaluate(f, p);
        this.computeElementJacobian(e);
        k0.set(this.je, 144 * e);
      }
      this.k0 = k0;
    }
    this.slotRow = Int32Array.from(rows);
    this.slotCol = Int32Array.from(cols);
    this.jac = new Float64Array(9 * rows.length);
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

  applyForces(_t: number): void {
    const { sys, b, at, moving, f, p, material, volume, rots, nmat } = this;
    const x = sys.pos;
    const force = sys.force;
    // the corotational material's R (and N), kept for the Jacobian at this state
    // (refreshCorotated)
    const r = rots !== null ? (material as CorotationalMaterial).r : null;
    for (let e = 0; e < this.elementCount; e++) {
      deformationGradient(x, at, b, e, f);
      material.evaluate(f, p);
      if (r !== null) (rots as Float64Array).set(r, 9 * e);
      if (nmat !== null) this.storeN(e, nmat);
      const o = 9 * e;
      const v = volume[e];
      // f_a = −V P ∇N_a (a = 1..3), f_0 = −Σ f_a
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
    if (rots !== null) this.rotVersion = sys.stateVersion;
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
    if (this.k0 !== null) {
      this.refreshCorotated(this.k0);
      this.jacVersion = this.sys.stateVersion;
      return;
    }
    const { sys, b, at, f, p, je, jac, elementSlot, material } = this;
    jac.fill(0);
    for (let e = 0; e < this.elementCount; e++) {
      deformationGradient(sys.pos, at, b, e, f);
      material.evaluate(f, p);
      this.computeElementJacobian(e);
      const es = 16 * e;
      for (let na = 0; na < 4; na++)
        for (let nb = 0; nb < 4; nb++) {
          const s = elementSlot[es + 4 * na + nb];
          if (s < 0) continue;
          const o = 9 * s;
          const r0 = 12 * 3 * na + 3 * nb;
          jac[o] += je[r0];
          jac[o + 1] += je[r0 + 1];
          jac[o + 2] += je[r0 + 2];
          jac[o + 3] += je[r0 + 12];
          jac[o + 4] += je[r0 + 13];
          jac[o + 5] += je[r0 + 14];
          jac[o + 6] += je[r0 + 24];
          jac[o + 7] += je[r0 + 25];
          jac[o + 8] += je[r0 + 26];
        }
    }
    this.jacVersion = sys.stateVersion;
  }

  /**
   * The corotational tangent (materials.ts) per element block, from the rest stiffness K₀
   * (R from the polar decomposition of F):
   *   approximate: ∂f_a/∂x_b = R K₀_ab Rᵀ;
   *   exact:       ∂f_a/∂x_b = R (K₀_ab + V [g_a]× N [g_b]×) Rᵀ,  N = c M⁻¹ + μ I,
   * g_a = ∇N_a (rest frame), M = tr(S) I − S, c = λ tr(S − I) − 2μ. The exact form follows
   * from the material's differential dP = 2μ dF + c R[w]× + λ tr(RᵀdF) R with
   * w = M⁻¹ vee(T − Tᵀ), T = RᵀdF, for dF = e_k g_bᵀ: vee(T − Tᵀ) = [g_b]× Rᵀe_k, so
   * the force change −V dP g_a is −2μV (g_a·g_b) e_k − λV (R g_a)(R g_b)_k
   * + cV R [g_a]× M⁻¹ [g_b]× Rᵀ e_k; at rest (S = I: M⁻¹ = I/2, c = −2μ) the last term is
   * −μV R [g_a]×[g_b]× Rᵀ, which K₀ holds, hence N = c M⁻¹ + μ I. Symmetric (N is;
   * [g]×ᵀ = −[g]×), so K_ba = K_abᵀ: the 10 blocks a ≤ b in about 100 multiplications
   * each instead of nine differentials and a 12 × 12 product per element
   * (computeElementJacobian, which the tests check against finite differences and this
   * against it).
   */
  private refreshCorotated(k0: Float64Array): void {
    const { sys, b, at, f, p, jac, elementSlot, rot: r, sigma, vecs, nmat } = this;
    const cached = this.rotVersion === sys.stateVersion ? this.rots : null;
    const g = this.grads;
    jac.fill(0);
    for (let e = 0; e < this.elementCount; e++) {
      if (cached !== null) for (let k = 0; k < 9; k++) r[k] = cached[9 * e + k];
      else {
        deformationGradient(sys.pos, at, b, e, f);
        if (nmat !== null) {
          const mat = this.material as CorotationalMaterial;
          mat.evaluate(f, p);
          r.set(mat.r);
          this.storeN(e, nmat);
        } else if (!nearestRotation(f, r)) polarDecomposition(f, r, sigma, vecs);
      }
      const ke = 144 * e;
      const es = 16 * e;
      const v = this.volume[e];
      if (nmat !== null) {
        // g_1..g_3 = rows of D_m⁻¹, g_0 = −Σ g_a
        const o = 9 * e;
        for (let k = 0; k < 3; k++) {
          g[3 + k] = b[o + k];
          g[6 + k] = b[o + 3 + k];
          g[9 + k] = b[o + 6 + k];
          g[k] = -(g[3 + k] + g[6 + k] + g[9 + k]);
        }
      }
      for (let na = 0; na < 4; na++)
        for (let nb = na; nb < 4; nb++) {
          const sab = elementSlot[es + 4 * na + nb];
          if (sab < 0) continue;
          const r0 = ke + 36 * na + 3 * nb;
          let k00 = k0[r0];
          let k01 = k0[r0 + 1];
          let k02 = k0[r0 + 2];
          let k10 = k0[r0 + 12];
          let k11 = k0[r0 + 13];
          let k12 = k0[r0 + 14];
          let k20 = k0[r0 + 24];
          let k21 = k0[r0 + 25];
          let k22 = k0[r0 + 26];
          if (nmat !== null) {
            // + V [g_a]× N [g_b]×: rows of P = [g_a]× N, then P [g_b]×
            const n = 6 * e;
            const n00 = nmat[n];
            const n01 = nmat[n + 1];
            const n02 = nmat[n + 2];
            const n11 = nmat[n + 3];
            const n12 = nmat[n + 4];
            const n22 = nmat[n + 5];
            const a0 = g[3 * na];
            const a1 = g[3 * na + 1];
            const a2 = g[3 * na + 2];
            const c0 = g[3 * nb];
            const c1 = g[3 * nb + 1];
            const c2 = g[3 * nb + 2];
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
          // T = K_ab Rᵀ: T_ij = Σ_k K_ik R_jk
          const t00 = k00 * r[0] + k01 * r[1] + k02 * r[2];
          const t01 = k00 * r[3] + k01 * r[4] + k02 * r[5];
          const t02 = k00 * r[6] + k01 * r[7] + k02 * r[8];
          const t10 = k10 * r[0] + k11 * r[1] + k12 * r[2];
          const t11 = k10 * r[3] + k11 * r[4] + k12 * r[5];
          const t12 = k10 * r[6] + k11 * r[7] + k12 * r[8];
          const t20 = k20 * r[0] + k21 * r[1] + k22 * r[2];
          const t21 = k20 * r[3] + k21 * r[4] + k22 * r[5];
          const t22 = k20 * r[6] + k21 * r[7] + k22 * r[8];
          // (R T)_ij = Σ_k R_ik T_kj, added to slot (a, b) and transposed to (b, a)
          const sba = elementSlot[es + 4 * nb + na];
          for (let i = 0; i < 3; i++) {
            const a0 = r[3 * i];
            const a1 = r[3 * i + 1];
            const a2 = r[3 * i + 2];
            const x0 = a0 * t00 + a1 * t10 + a2 * t20;
            const x1 = a0 * t01 + a1 * t11 + a2 * t21;
            const x2 = a0 * t02 + a1 * t12 + a2 * t22;
            const o = 9 * sab + 3 * i;
            jac[o] += x0;
            jac[o + 1] += x1;
            jac[o + 2] += x2;
            if (nb !== na) {
              const q = 9 * sba + i;
              jac[q] += x0;
              jac[q + 3] += x1;
              jac[q + 6] += x2;
            }
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
