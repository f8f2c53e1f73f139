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
 * jacobianType: SPD with the approximate corotational tangent (R K₀ Rᵀ is positive
 * semidefinite); SYMMETRIC otherwise (an exact tangent is indefinite under strong
 * compression or buckling).
 *
 * No matrix-free product (JacobianProductEffector) on purpose: `linearSolver: "auto"` picks
 * matrix-free CG for a large system whose effectors all offer one, good for cloth springs
 * (W close to M) but not for elastic solids, whose W = M + h²β K is far from M (the
 * cantilever of the tests, 854 nodes, 160 Newmark steps with converged Newton: 31 s with
 * CG on the product, 7.4 s with the sparse LDLᵀ factorization `auto` picks without it).
 */
import type { SparseBlockMatrix } from "../../math/block-matrix";
import type { BodySystem } from "../../model/body-system";
import { MatrixType, type MatrixTypeFlags } from "../../solvers/linear/linear-solver";
import type { ForceEffector } from "../effector";
import { createMaterial, type ElasticMaterial, type MaterialName } from "./materials";
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
}

export class FemEffector implements ForceEffector {
  readonly id: string;
  readonly jacobianType: MatrixTypeFlags;
  readonly hasJacobians = true;
  readonly nodeCount: number;
  readonly elementCount: number;
  readonly material: ElasticMaterial;
  /** Rest volume of each element (m³). */
  readonly volume: Float64Array;
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
    this.material = createMaterial(o.material, o.youngModulus, o.poissonRatio, o.tangent);
    this.jacobianType = this.material.positiveTangent ? MatrixType.SPD : MatrixType.SYMMETRIC;
    this.volume = new Float64Array(m);
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
    this.slotRow = Int32Array.from(rows);
    this.slotCol = Int32Array.from(cols);
    this.jac = new Float64Array(9 * rows.length);
    this.offsets = new Int32Array(rows.length);
  }

  applyForces(_t: number): void {
    const { sys, b, at, moving, f, p, material, volume } = this;
    const x = sys.pos;
    const force = sys.force;
    for (let e = 0; e < this.elementCount; e++) {
      deformationGradient(x, at, b, e, f);
      material.evaluate(f, p);
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

  /** jac ← the slots of ∂f/∂x at the current state, unless cached. */
  private refreshJacobian(): void {
    if (this.jacVersion === this.sys.stateVersion) return;
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
