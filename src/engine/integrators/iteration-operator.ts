/**
 * The Newton iteration matrix of iteration-matrix.ts,
 *   W = (1 + c_v r_M) M + (w c_x + c_v r_K) K + w c_v D,   K = −∂f/∂x, D = −∂f/∂v,
 * as a matrix-free LinearOperator for the Krylov solvers: W x = (1 + c_v r_M) M x + J x
 * with J = s_x ∂f/∂x + s_v ∂f/∂v, s_x = −(w c_x + c_v r_K), s_v = −w c_v, applied by each
 * effector (JacobianProductEffector) without assembling a matrix. Usable when every
 * effector that has Jacobians offers the product; then one product costs O(springs) and
 * nothing is converted to CSR per step.
 *
 * What it holds for the preconditioner (`preconditioning`) is one of three:
 * - "multigrid": W itself in 3×3 blocks (the mass plus every block of each effector's
 *   Jacobian) at the first update of each step (after `announce`) and of the mode, the full
 *   block diagonal at the others: the two-level preconditioner
 *   (solvers/linear/aggregation-multigrid.ts) makes its coarse term from the step's first
 *   W (W moves little between the Newton iterates of a step, and a coarse term of an
 *   earlier W keeps the preconditioner SPD) and its block Jacobi from every update's
 *   diagonal. Made from the step's own state, the coarse term needs no record in a
 *   snapshot. For very stiff springs (the stiff cloth: block Jacobi leaves the modes that
 *   stretch no spring to CG, hundreds of iterations a step); particles only;
 * - "diagonal": the mass blocks plus each effector's diagonal Jacobian blocks, rebuilt at
 *   every update, for block Jacobi (stiff springs, h ω ≫ 1: W is far from M);
 * - "mass": the (scaled) mass blocks alone, a constant: the preconditioner is M⁻¹ and is
 *   not rebuilt (diagonalVersion unchanged). Building the full diagonal, inverting its
 *   blocks and applying them costs about one CG iteration per solve, which it cannot earn
 *   back when the solves take a few iterations anyway (resolved springs, W ≈ M: the full
 *   diagonal saves less than one iteration per solve there; bench/README.md, "Cloth").
 * The solver chooses from the iterations of the last solve (iteration-matrix.ts,
 * `nextPreconditioning`).
 */

import type { SchemeCoefficients } from "../dynamics/stepper";
import {
  type ForceEffector,
  hasJacobianProduct,
  type JacobianProductEffector,
} from "../forces/effector";
import { SparseBlockMatrix } from "../math/block-matrix";
import { addMassBlocks, type BodySystem, massMultiply } from "../model/body-system";
import type { LinearOperator } from "../solvers/linear/linear-solver";

/** What the operator's updates build for the preconditioner (see the header). */
export type OperatorPreconditioning = "mass" | "diagonal" | "multigrid";

/** The preconditioning of a new operator's first solve. */
export const INITIAL_PRECONDITIONING: OperatorPreconditioning = "diagonal";

export class IterationOperator implements LinearOperator {
  readonly n: number;
  private readonly diag: SparseBlockMatrix;
  /** W assembled ("multigrid" preconditioning), made on first use; null before. */
  private full: SparseBlockMatrix | null = null;
  /** Whether the last update assembled W into `full` (see the header). */
  private fullFresh = false;
  /** Changes at every assembly of `full` (LinearOperator.assembledVersion). */
  assembledVersion = 0;
  /** The next "multigrid" update assembles W (set at `announce`; also on entering the mode). */
  private assembleNext = true;
  /** The preconditioning of the last update. */
  private lastMode: OperatorPreconditioning = INITIAL_PRECONDITIONING;
  private massScale = 1;
  private sx = 0;
  private sv = 0;
  /** What the next updates build for the preconditioner (see the header). */
  preconditioning: OperatorPreconditioning = INITIAL_PRECONDITIONING;
  /** Whether every block is 3×3 (particles): "multigrid" is possible. */
  readonly particlesOnly: boolean;
  /** Changes exactly when the block diagonal does (LinearOperator.diagonalVersion). */
  diagonalVersion = 0;
  /** Mass scale of the diagonal when it holds the mass alone, NaN otherwise. */
  private massOnlyScale = Number.NaN;
  /**
   * Particles only: each dof's mass (kg; a BodySystem's masses are fixed once built), so
   * that a product's mass term is one pass over the dofs (massMultiply reads a body's
   * offset, kind and mass per body: 7 of a product's ~60 µs on the benchmark's cloth).
   * Empty otherwise.
   */
  private readonly dofMass: Float64Array;

  private constructor(
    private readonly sys: BodySystem,
    private readonly effectors: readonly JacobianProductEffector[],
  ) {
    this.n = sys.numDofs;
    this.diag = new SparseBlockMatrix(sys.blockSizes);
    this.diag.finalize();
    this.particlesOnly = this.diag.uniform3;
    this.dofMass = new Float64Array(this.particlesOnly ? this.n : 0);
    if (this.particlesOnly)
      for (let b = 0; b < sys.numBodies; b++) {
        const o = sys.dofOffset[b];
        if (o < 0) continue;
        this.dofMass.fill(sys.mass[b], o, o + 3);
      }
  }

  /** The operator of these effectors, or null when one with Jacobians lacks the product. */
  static create(sys: BodySystem, effectors: readonly ForceEffector[]): IterationOperator | null {
    const products: JacobianProductEffector[] = [];
    for (const e of effectors) {
      if (e.hasJacobians === false) continue;
      if (!hasJacobianProduct(e)) return null;
      products.push(e);
    }
    return new IterationOperator(sys, products);
  }

  /** s_x and s_v of J for scheme coefficients c (see the header). */
  private setCoefficients(c: SchemeCoefficients): void {
    this.sx = -(c.w * c.cx + c.cv * c.rayleighStiffness);
    this.sv = -c.w * c.cv;
  }

  /**
   * Tells the effectors the coefficients of the coming updates, before the forces of the
   * Newton iterate are applied (JacobianProductEffector.announceJacobianProduct).
   */
  announce(c: SchemeCoefficients): void {
    this.setCoefficients(c);
    this.assembleNext = true;
    const effectors = this.effectors;
    for (let i = 0; i < effectors.length; i++)
      effectors[i].announceJacobianProduct?.(this.sx, this.sv);
  }

  /** Fixes W for scheme coefficients c at the current state (effectors evaluated there). */
  update(c: SchemeCoefficients): void {
    this.massScale = 1 + c.cv * c.rayleighMass;
    this.setCoefficients(c);
    const { sx, sv } = this;
    const mode = this.preconditioning;
    const massOnly = mode === "mass";
    // the mass-only diagonal stays as it is while its scale does
    const keep = massOnly && this.massOnlyScale === this.massScale;
    this.fullFresh = mode === "multigrid" && (this.assembleNext || this.lastMode !== mode);
    if (this.fullFresh) {
      this.assembleNext = false;
      this.assembledVersion++;
    }
    this.lastMode = mode;
    const d = keep ? null : this.fullFresh ? this.assembledMatrix() : this.diag;
    if (d !== null) {
      d.clear();
      addMassBlocks(this.sys, d, this.massScale);
      this.massOnlyScale = massOnly ? this.massScale : Number.NaN;
      this.diagonalVersion++;
    }
    const effectors = this.effectors;
    for (let i = 0; i < effectors.length; i++)
      effectors[i].setJacobianProduct(sx, sv, massOnly ? null : d);
  }

  /** The matrix of "multigrid" (W's pattern: the effectors' solve blocks), made once. */
  private assembledMatrix(): SparseBlockMatrix {
    if (this.full === null) {
      const m = new SparseBlockMatrix(this.sys.blockSizes);
      for (const e of this.effectors) e.addSolveBlocks(m);
      m.finalize();
      this.full = m;
    }
    return this.full;
  }

  apply(x: Float64Array, out: Float64Array): void {
    if (this.particlesOnly) {
      const dm = this.dofMass;
      for (let i = 0; i < this.n; i++) out[i] = dm[i] * x[i];
    } else massMultiply(this.sys, x, out);
    const s = this.massScale;
    if (s !== 1) for (let i = 0; i < this.n; i++) out[i] *= s;
    const effectors = this.effectors;
    for (let i = 0; i < effectors.length; i++) effectors[i].addJacobianProduct(x, out);
  }

  diagonal(out: Float64Array): void {
    const d = this.blockDiagonal();
    for (let b = 0; b < d.numBlocks; b++) {
      const w = d.blockSize[b];
      const o = d.offsetOf(b, b);
      for (let r = 0; r < w; r++) out[d.blockOffset[b] + r] = d.values[o + r * w + r];
    }
  }

  blockDiagonal(): SparseBlockMatrix {
    return this.fullFresh && this.full !== null ? this.full : this.diag;
  }

  assembled(): SparseBlockMatrix | null {
    return this.preconditioning === "multigrid" ? this.full : null;
  }
}
