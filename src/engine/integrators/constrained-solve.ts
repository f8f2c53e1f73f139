/**
 * The linear solve of one Newton iteration with bilateral constraints:
 *     [ W  Gᵀ ] [ Δa ]   [ R  ]
 *     [ G  0  ] [ μ  ] = [ r_c ],        constraint forces Gᵀλ with λ = −μ,
 * where W is the iteration matrix of iteration-matrix.ts, G the constraint Jacobian at
 * the current iterate and r_c the constraint right-hand side (velocity level: G v_{t+h} = −Ct
 * ⇒ r_c = −(G v + Ct)/c_v; acceleration level when c_v = 0: r_c = Qc − G a).
 *
 * Three paths, chosen by the structure of W:
 * - W = s·M (block-diagonal mass only): the Schur complement S = G W⁻¹ Gᵀ = G M⁻¹ Gᵀ / s,
 *   S μ = G W⁻¹ R − r_c, Δa = W⁻¹ (R − Gᵀ μ); S is factored by the semidefinite LDLᵀ, so
 *   redundant joints give finite, minimum-norm-like multipliers.
 * - W block-diagonal (per-body Jacobians only: gyroscopic terms, dampers; no coupling
 *   springs): the same Schur complement with W's inverted diagonal blocks; S may be
 *   nonsymmetric (its pattern is symmetric) and is factored as L D U by the same
 *   semidefinite factorization, without pivoting. For a chain S is block tridiagonal, so a
 *   step costs O(links).
 * - otherwise: the whole saddle-point matrix (KktMatrix) by sparse LU with pivoting
 *   (W may be nonsymmetric: gyroscopic and damping Jacobians).
 * After `factor`, `solve` may be called again with other right-hand sides (contacts use
 * it with r_c = 0 to apply impulses with the joints held).
 *
 * Velocity-level rows held at a step's end, G(x) v + Ct = 0, have the Jacobian
 * G̃ = G + (c_x/c_v) ∂(G v)/∂x (constraints/constraint-set.ts velocityRows): the lower
 * block is then G̃ while the forces stay Gᵀλ, [W Gᵀ; G̃ 0], and the Schur complement
 * S̃ = G̃ W⁻¹ Gᵀ is nonsymmetric (the block-diagonal and KKT paths take it; the mass path,
 * whose S is the projections' symmetric one, does not).
 */

import type { ConstraintSet } from "../constraints/constraint-set";
import { type ProjectionWorkspace, projectionWorkspace } from "../constraints/project";
import type { SparseBlockMatrix } from "../math/block-matrix";
import type { CsrMatrix } from "../math/csr";
import { KktMatrix } from "../math/kkt";
import { invertDecoupled6, invertSmall, mat6MulVec } from "../math/small-dense";
import { type BodySystem, massSolve } from "../model/body-system";
import { SemidefiniteLdlt } from "../solvers/linear/semidefinite-ldlt";
import { SparseLuSolver } from "../solvers/linear/sparse-lu";

/** Relative regularization of the constraint block (see factorGeneral). */
const REGULARIZATION = 1e-10;

/** max_i 1/|A_ii| over the diagonal of a CSR matrix (0 when the diagonal is empty). */
function maxInverseDiagonal(a: CsrMatrix): number {
  let m = 0;
  for (let i = 0; i < a.rows; i++)
    for (let k = a.rowPtr[i]; k < a.rowPtr[i + 1]; k++)
      if (a.colIdx[k] === i && a.values[k] !== 0) m = Math.max(m, 1 / Math.abs(a.values[k]));
  return m;
}

export class ConstrainedSolve {
  private readonly n: number;
  private readonly m: number;
  /**
   * The block-diagonal path's L D U of S = G W⁻¹ Gᵀ (S in the projection workspace's
   * MassSchurComplement, whose S.values nothing else reads: the projections load their
   * S straight into their factorization).
   */
  private readonly schurLdlt = new SemidefiniteLdlt();
  /** The mass path's S = G M⁻¹ Gᵀ and its factorization, shared with the projections. */
  private readonly projection: ProjectionWorkspace;
  private kkt: KktMatrix | null = null;
  private readonly lu = new SparseLuSolver({});
  private readonly rhs: Float64Array;
  private readonly sol: Float64Array;
  private readonly tmpN: Float64Array;
  private readonly tmpM: Float64Array;
  private massScale = 1;
  private mode: "mass" | "blocks" | "kkt" = "mass";
  /** Inverses of W's diagonal blocks (block-diagonal path), per body at blockInverseOffset. */
  private readonly blockInverse: Float64Array;
  private readonly blockInverseOffset: Int32Array;
  /** 1 where a body's inverse is decoupled (invertDecoupled6): two 3×3 blocks. */
  private readonly blockDecoupled: Uint8Array;
  private readonly work36 = new Float64Array(36);
  /** factorMixed's S̃ columns in G's layout, and its L D U. */
  private readonly mixedColumns: Float64Array;
  private readonly mixedLdlt = new SemidefiniteLdlt();
  /** The KKT path's upper block for the symmetric joints (mixedForce), in G's layout. */
  private readonly mixedUpper: Float64Array;
  /** The KKT path's ε (factorGeneral). */
  private regularization = 0;
  /**
   * The rows G̃ (G's layout) the last factorization took for its lower block, null for G
   * itself: the caller's array, which must stay as it is while the factorization is used.
   */
  private rows: Float64Array | null = null;

  constructor(
    private readonly sys: BodySystem,
    private readonly set: ConstraintSet,
  ) {
    this.n = sys.numDofs;
    this.m = set.numRows;
    this.projection = projectionWorkspace(set);
    this.mixedColumns = new Float64Array(set.G.values.length);
    this.mixedUpper = new Float64Array(set.G.values.length);
    this.rhs = new Float64Array(this.n + this.m);
    this.sol = new Float64Array(this.n + this.m);
    this.tmpN = new Float64Array(this.n);
    this.tmpM = new Float64Array(this.m);
    this.blockInverseOffset = new Int32Array(sys.numBodies).fill(-1);
    this.blockDecoupled = new Uint8Array(sys.numBodies);
    let size = 0;
    for (let b = 0; b < sys.numBodies; b++) {
      const k = sys.block[b];
      if (k < 0) continue;
      this.blockInverseOffset[b] = size;
      size += sys.blockSizes[k] ** 2;
    }
    this.blockInverse = new Float64Array(size);
  }

  /**
   * Factors with W = massScale·M at the current configuration (G already updated). S is
   * then the projections' G M⁻¹ Gᵀ (constraints/project.ts), factored in the set's
   * projection workspace, whose chord iterations may then start from it; `alreadyFactored`
   * when a projection has just factored it there at this configuration.
   */
  factorMass(massScale: number, alreadyFactored = false): void {
    this.mode = "mass";
    this.rows = null;
    this.massScale = massScale;
    if (!alreadyFactored) this.projection.factorCurrent();
  }

  /**
   * Factors with a general W (CSR, same pattern on every call; G already updated). With
   * `factor` false only takes W for factorMixed, which factors the symmetric joints' own
   * saddle point. `rows`: the lower block's rows G̃ instead of G (see the file comment).
   */
  factorGeneral(w: CsrMatrix, factor = true, rows: Float64Array | null = null): void {
    this.mode = "kkt";
    this.rows = rows;
    if (this.kkt === null || this.kkt.w !== w) this.kkt = new KktMatrix(w, this.set.G);
    // ε ≈ 1e-10 ‖S‖ with S = G W⁻¹ Gᵀ ~ max 1/W_ii: redundant joint rows (a closed
    // planar loop of revolute joints) make the saddle point singular; the regularized
    // system gives the minimum-norm-like multipliers and meets G Δa = r_c to ε|μ|.
    this.regularization = REGULARIZATION * maxInverseDiagonal(w);
    if (!factor) return;
    this.kkt.refresh(this.regularization, null, rows);
    this.lu.factor(this.kkt.matrix);
  }

  /**
   * Factors with a block-diagonal W (matrix.isBlockDiagonal(); G already updated).
   * Returns false when a diagonal block is singular (the caller falls back to the KKT).
   * `schur` false inverts W's blocks only (the symmetric joints factor their own mixed
   * matrix instead, factorMixed). `rows`: the rows G̃ instead of G (see the file comment).
   */
  factorBlockDiagonal(
    matrix: SparseBlockMatrix,
    schur = true,
    rows: Float64Array | null = null,
  ): boolean {
    const sys = this.sys;
    for (let b = 0; b < sys.numBodies; b++) {
      const k = sys.block[b];
      if (k < 0) continue;
      const n = sys.blockSizes[k];
      const o = this.blockInverseOffset[b];
      const ia = matrix.offsetOf(k, k);
      const decoupled = n === 6 && invertDecoupled6(this.blockInverse, o, matrix.values, ia);
      this.blockDecoupled[b] = decoupled ? 1 : 0;
      if (decoupled) continue;
      if (!invertSmall(this.blockInverse, o, matrix.values, ia, n, this.work36)) return false;
    }
    this.mode = "blocks";
    this.rows = rows;
    if (!schur) return true;
    this.schurLdlt.factor(
      this.projection.schur.updateBlockInverse(
        this.blockInverse,
        this.blockInverseOffset,
        this.blockDecoupled,
        rows ?? this.set.G.values,
      ),
      false,
    );
    return true;
  }

  /** out = W⁻¹ x with the inverted diagonal blocks. */
  private blockSolve(x: Float64Array, out: Float64Array): void {
    const sys = this.sys;
    const inv = this.blockInverse;
    for (let b = 0; b < sys.numBodies; b++) {
      const d = sys.dofOffset[b];
      if (d < 0) continue;
      const n = sys.blockSizes[sys.block[b]];
      const o = this.blockInverseOffset[b];
      if (n === 6) {
        mat6MulVec(out, d, inv, o, x, d, this.blockDecoupled[b] === 1);
        continue;
      }
      for (let r = 0; r < n; r++) {
        let acc = 0;
        for (let c = 0; c < n; c++) acc += inv[o + r * n + c] * x[d + c];
        out[d + r] = acc;
      }
    }
  }

  /**
   * Symmetric joints (generalized-alpha.ts): after `factorMass` or `factorBlockDiagonal`
   * at the current iterate, factors S̃ = ρ G W⁻¹ M M_t⁻¹ G_tᵀ, the exact Jacobian of the
   * position rows with respect to λ̃ when the joints' force is ρ M M_t⁻¹ G_tᵀ λ̃ (G_t, M_t:
   * the step's start configuration, `startG` in G's layout and `startInertiaInv` 9 per
   * body). After `factorGeneral(w, false)` factors the saddle point of the same system,
   * [W, −ρ M M_t⁻¹ G_tᵀ; G, −εI] (a KKT matrix with Gᵀ there instead converges only
   * linearly, at the rate the directions turn over the step: 5 % a Newton iteration on an
   * imported 6-axis arm).
   */
  factorMixed(
    startG: Float64Array,
    startInertiaInv: Float64Array,
    rho: number,
    inertia: Float64Array = this.sys.inertiaWorld,
  ): void {
    if (this.mode === "kkt") {
      const kkt = this.kkt!;
      this.mixedForce(startG, startInertiaInv, rho, inertia);
      kkt.refresh(this.regularization, this.mixedUpper);
      this.lu.factor(kkt.matrix);
      return;
    }
    const mass = this.mode === "mass";
    const { schur } = this.projection;
    const ldlt = this.mixedLdlt;
    // S̃ accumulated straight into the factorization's storage (a fused load)
    schur.updateMixed(
      startG,
      startInertiaInv,
      mass ? rho / this.massScale : rho,
      mass ? null : this.blockInverse,
      this.blockInverseOffset,
      this.blockDecoupled,
      this.mixedColumns,
      ldlt.beginLoadUnsymmetric(schur.S),
      ldlt.loadSlotsUnsymmetric(schur.S),
      inertia,
    );
    ldlt.factorLoadedUnsymmetric();
  }

  /**
   * After `factorMixed`: Δa and Δλ̃ of the symmetric joints' Newton system
   *   W Δa − ρ M M_t⁻¹ G_tᵀ Δλ̃ = R,   G Δa = r_c,
   * i.e. S̃ Δλ̃ = r_c − G W⁻¹ R and Δa = W⁻¹ R + (the columns of S̃'s right factor) Δλ̃.
   */
  solveMixed(r: Float64Array, rc: Float64Array, da: Float64Array, dLambda: Float64Array): void {
    const { n, m, set, sys } = this;
    if (this.mode === "kkt") {
      this.saddleSolve(r, rc, da, dLambda);
      return;
    }
    if (this.mode === "mass") {
      massSolve(sys, r, da);
      const s = this.massScale;
      if (s !== 1) for (let i = 0; i < n; i++) da[i] /= s;
    } else this.blockSolve(r, da);
    set.multiply(da, this.tmpM);
    for (let i = 0; i < m; i++) this.tmpM[i] = rc[i] - this.tmpM[i];
    this.mixedLdlt.solve(this.tmpM, dLambda);
    // da += V Δλ̃ with V's columns in G's layout (mixedColumns)
    set.multiplyTranspose(dLambda, this.tmpN, this.mixedColumns);
    for (let i = 0; i < n; i++) da[i] += this.tmpN[i];
  }

  /**
   * mixedUpper ← −ρ M M_t⁻¹ G_tᵀ in G's layout: each row's entries of a body, g_t scaled by
   * ρ for a translation (M M_t⁻¹ = I), ρ I_w I_w,t⁻¹ g_t for a rotation (I_w this iterate's
   * world inertia, I_w,t⁻¹ the start's inverse), negated (the joints' force enters the
   * dynamics rows as −ρ M M_t⁻¹ G_tᵀ Δλ̃).
   */
  private mixedForce(
    startG: Float64Array,
    startInertiaInv: Float64Array,
    rho: number,
    Iw: Float64Array,
  ): void {
    const set = this.set;
    const out = this.mixedUpper;
    const { rowSlot, rowWidth, rowBody } = set;
    for (let e = 0; e < rowSlot.length; e++) {
      const s = rowSlot[e];
      if (s < 0) continue;
      out[s] = -rho * startG[s];
      out[s + 1] = -rho * startG[s + 1];
      out[s + 2] = -rho * startG[s + 2];
      if (rowWidth[e] !== 6) continue;
      const t = 9 * rowBody[e];
      const x = startG[s + 3];
      const y = startG[s + 4];
      const z = startG[s + 5];
      const u0 = startInertiaInv[t] * x + startInertiaInv[t + 1] * y + startInertiaInv[t + 2] * z;
      const u1 =
        startInertiaInv[t + 3] * x + startInertiaInv[t + 4] * y + startInertiaInv[t + 5] * z;
      const u2 =
        startInertiaInv[t + 6] * x + startInertiaInv[t + 7] * y + startInertiaInv[t + 8] * z;
      out[s + 3] = -rho * (Iw[t] * u0 + Iw[t + 1] * u1 + Iw[t + 2] * u2);
      out[s + 4] = -rho * (Iw[t + 3] * u0 + Iw[t + 4] * u1 + Iw[t + 5] * u2);
      out[s + 5] = -rho * (Iw[t + 6] * u0 + Iw[t + 7] * u1 + Iw[t + 8] * u2);
    }
  }

  /** Δa and λ (constraint force multipliers, M a = f + Gᵀλ) for right-hand sides R, r_c. */
  solve(r: Float64Array, rc: Float64Array, da: Float64Array, lambda: Float64Array): void {
    const { n, m } = this;
    if (this.mode === "blocks") {
      // y = W⁻¹ R;  S μ = G̃ y − r_c;  Δa = W⁻¹ (R − Gᵀ μ)  (G̃ = G without `rows`)
      this.blockSolve(r, this.tmpN);
      this.set.multiply(this.tmpN, this.tmpM, this.rows ?? this.set.G.values);
      for (let i = 0; i < m; i++) this.tmpM[i] -= rc[i];
      this.schurLdlt.solve(this.tmpM, lambda);
      this.set.multiplyTranspose(lambda, this.tmpN);
      for (let i = 0; i < n; i++) this.tmpN[i] = r[i] - this.tmpN[i];
      this.blockSolve(this.tmpN, da);
    } else if (this.mode === "mass") {
      const s = this.massScale;
      // y = W⁻¹ R;  S μ = G y − r_c  with S = G M⁻¹ Gᵀ / s
      massSolve(this.sys, r, this.tmpN);
      // (s = 1 without Rayleigh mass damping: the divisions are then skipped)
      if (s !== 1) for (let i = 0; i < n; i++) this.tmpN[i] /= s;
      this.set.multiply(this.tmpN, this.tmpM);
      for (let i = 0; i < m; i++) this.tmpM[i] = s * (this.tmpM[i] - rc[i]);
      this.projection.ldlt.solve(this.tmpM, lambda); // lambda holds μ for now
      this.set.multiplyTranspose(lambda, this.tmpN);
      for (let i = 0; i < n; i++) this.tmpN[i] = r[i] - this.tmpN[i];
      massSolve(this.sys, this.tmpN, da);
      if (s !== 1) for (let i = 0; i < n; i++) da[i] /= s;
    } else this.saddleSolve(r, rc, da, lambda);
    for (let i = 0; i < m; i++) lambda[i] = -lambda[i];
  }

  /** [Δa; y] of the factored saddle point (KKT path) for right-hand sides [R; r_c]. */
  private saddleSolve(r: Float64Array, rc: Float64Array, da: Float64Array, y: Float64Array): void {
    const { n, m } = this;
    this.rhs.set(r, 0);
    this.rhs.set(rc, n);
    this.sol.fill(0);
    this.lu.solve(this.rhs, this.sol);
    da.set(this.sol.subarray(0, n));
    y.set(this.sol.subarray(n, n + m));
  }
}
