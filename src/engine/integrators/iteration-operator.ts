/**
 * The Newton iteration matrix of iteration-matrix.ts,
 *   W = (1 + c_v r_M) M + (w c_x + c_v r_K) K + w c_v D,   K = −∂f/∂x, D = −∂f/∂v,
 * as a matrix-free LinearOperator for the Krylov solvers: W x = (1 + c_v r_M) M x + J x
 * with J = s_x ∂f/∂x + s_v ∂f/∂v, s_x = −(w c_x + c_v r_K), s_v = −w c_v, applied by each
 * effector (JacobianProductEffector) without assembling a matrix. Usable when every
 * effector that has Jacobians offers the product; then one product costs O(springs) and
 * nothing is converted to CSR per step.
 *
 * Its block diagonal feeds the block-Jacobi preconditioner, and is one of two:
 * - `fullDiagonal`: the mass blocks plus each effector's diagonal Jacobian blocks, rebuilt
 *   at every update (stiff springs, h ω ≫ 1: W is far from M);
 * - otherwise the (scaled) mass blocks alone, a constant: the preconditioner is M⁻¹ and
 *   is not rebuilt (diagonalVersion unchanged). Building the full diagonal, inverting its
 *   blocks and applying them costs about one CG iteration per solve, which it cannot earn
 *   back when the solves take a few iterations anyway (resolved springs, W ≈ M: the full
 *   diagonal saves less than one iteration per solve there; bench/README.md, "Cloth").
 * The solver chooses (iteration-matrix.ts, FEW_ITERATIONS): the full diagonal after a
 * solve that took more than a few iterations, the mass after one that took few.
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

export class IterationOperator implements LinearOperator {
  readonly n: number;
  private readonly diag: SparseBlockMatrix;
  private massScale = 1;
  private sx = 0;
  private sv = 0;
  /** Precondition with the full block diagonal (see the header); else with the mass. */
  fullDiagonal = true;
  /** Changes exactly when the block diagonal does (LinearOperator.diagonalVersion). */
  diagonalVersion = 0;
  /** Mass scale of the diagonal when it holds the mass alone, NaN otherwise. */
  private massOnlyScale = Number.NaN;

  private constructor(
    private readonly sys: BodySystem,
    private readonly effectors: readonly JacobianProductEffector[],
  ) {
    this.n = sys.numDofs;
    this.diag = new SparseBlockMatrix(sys.blockSizes);
    this.diag.finalize();
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
    const effectors = this.effectors;
    for (let i = 0; i < effectors.length; i++)
      effectors[i].announceJacobianProduct?.(this.sx, this.sv);
  }

  /** Fixes W for scheme coefficients c at the current state (effectors evaluated there). */
  update(c: SchemeCoefficients): void {
    this.massScale = 1 + c.cv * c.rayleighMass;
    this.setCoefficients(c);
    const { sx, sv } = this;
    const full = this.fullDiagonal;
    // the mass-only diagonal stays as it is while its scale does
    const keep = !full && this.massOnlyScale === this.massScale;
    const d = keep ? null : this.diag;
    if (d !== null) {
      d.clear();
      addMassBlocks(this.sys, d, this.massScale);
      this.massOnlyScale = full ? Number.NaN : this.massScale;
      this.diagonalVersion++;
    }
    const effectors = this.effectors;
    for (let i = 0; i < effectors.length; i++)
      effectors[i].setJacobianProduct(sx, sv, full ? d : null);
  }

  apply(x: Float64Array, out: Float64Array): void {
    massMultiply(this.sys, x, out);
    const s = this.massScale;
    if (s !== 1) for (let i = 0; i < this.n; i++) out[i] *= s;
    const effectors = this.effectors;
    for (let i = 0; i < effectors.length; i++) effectors[i].addJacobianProduct(x, out);
  }

  diagonal(out: Float64Array): void {
    const d = this.diag;
    for (let b = 0; b < d.numBlocks; b++) {
      const w = d.blockSize[b];
      const o = d.offsetOf(b, b);
      for (let r = 0; r < w; r++) out[d.blockOffset[b] + r] = d.values[o + r * w + r];
    }
  }

  blockDiagonal(): SparseBlockMatrix {
    return this.diag;
  }
}
