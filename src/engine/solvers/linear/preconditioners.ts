/**
 * Preconditioners for the Krylov solvers, z = M⁻¹ r:
 * - Jacobi: M = diag(A) (|diag(A)| with `absolute`, the SPD variant MINRES needs); zero
 *   diagonal entries are replaced by 1 (no scaling of that row).
 * - Block Jacobi: M = the block diagonal of A, one block per body (3×3 particle, 6×6 rigid
 *   body), read from the diagonal blocks of a SparseBlockMatrix; each block is inverted
 *   explicitly (Gauss–Jordan with partial pivoting), so applying M⁻¹ is one small dense
 *   product per block. It keeps a particle's coupling between x, y and z, which scalar
 *   Jacobi loses when springs are not axis-aligned. M is SPD when A's diagonal blocks are.
 *   A singular block falls back to the inverse of its diagonal (1 where that is 0).
 * - IC(0): incomplete Cholesky with no fill, A ≈ L Lᵀ on the pattern of tril(A)
 *   (Meijerink & van der Vorst, Math. Comp. 31, 1977). When a pivot is not positive the
 *   factorization is retried on A + α·diag(A), α = 1e-3, 1e-2, … (Manteuffel's shifted
 *   IC, Math. Comp. 34, 1980), so it always exists for A with a positive diagonal.
 * - ILU(0): incomplete LU with no fill on the pattern of A (Saad, "Iterative Methods for
 *   Sparse Linear Systems", 2nd ed., alg. 10.4, IKJ variant). A pivot smaller than
 *   √ε·max|a_ij| (zero included) is replaced by that value, with the pivot's sign, so the
 *   preconditioner stays defined and bounded.
 * IC(0) and ILU(0) need the matrix (a CsrMatrix with full storage; IC(0) reads its lower
 * triangle). Their pattern is analysed once per sparsity pattern and refreshed without
 * allocation.
 */
import type { SparseBlockMatrix } from "../../math/block-matrix";
import type { CsrMatrix } from "../../math/csr";
import { mat3InvertChecked } from "../../math/mat3";
import type { LinearOperator } from "./linear-solver";
import { dot, PatternCache } from "./pattern";

export interface Preconditioner {
  /**
   * z = M⁻¹ r (z and r distinct, length n); returns rᵀz, which CG and MINRES need next
   * and which costs nothing extra while z is formed.
   */
  apply(r: Float64Array, z: Float64Array): number;
  /**
   * CG's next direction with the preconditioning in one pass where that saves one over the
   * vectors: z = M⁻¹ r and p ← z + (rᵀz / rzPrevious) p, returning rᵀz; the same numbers
   * as `apply` followed by that update (conjugateGradients uses it when present).
   */
  applyDirection?(r: Float64Array, z: Float64Array, p: Float64Array, rzPrevious: number): number;
}

/**
 * A preconditioner that does its first pass over r within CG's update of x and r, so that
 * r is read once an iteration instead of twice (conjugateGradients uses it when present).
 * Its two steps take and give their scalars in `scalars` (STEP_ALPHA, STEP_RR, STEP_RZ),
 * not as arguments and results: V8 passes a double to a call it does not inline, and
 * returns one from it, as a new heap number, and these run once a CG iteration (with the
 * calls within them, 2.7 KB a step on the stiff cloth of the benchmark at the defaults,
 * S3-32-stiff: test/engine/simulation/step-allocation.test.ts).
 */
export interface ResidualStepPreconditioner extends Preconditioner {
  /** The steps' scalars (length ≥ 3; see the indices). */
  readonly scalars: Float64Array;
  /**
   * x ← x + α p and r ← r − α q (α = scalars[STEP_ALPHA]), entry by entry, with the part
   * of z = M⁻¹ r that reads r entry by entry done in the same loop; rᵀr summed in index
   * order (the new r) into scalars[STEP_RR].
   */
  stepResidual(
    x: Float64Array,
    p: Float64Array,
    r: Float64Array,
    q: Float64Array,
    z: Float64Array,
  ): void;
  /**
   * After stepResidual, finishes z = M⁻¹ r and CG's p ← z + (rᵀz / rzPrevious) p
   * (rzPrevious = scalars[STEP_RZ]), leaving rᵀz in scalars[STEP_RZ]: the same numbers as
   * applyDirection (or apply and the update) on that r. Not calling it (the run ends there)
   * leaves z unfinished.
   */
  completeDirection(z: Float64Array, p: Float64Array): void;
}

/** Indices of ResidualStepPreconditioner.scalars: α in, rᵀr out, rᵀz in and out. */
export const STEP_ALPHA = 0;
export const STEP_RR = 1;
export const STEP_RZ = 2;

/** Whether m does its first pass within CG's update (ResidualStepPreconditioner). */
export function stepsResidual(m: Preconditioner): m is ResidualStepPreconditioner {
  return "stepResidual" in m && "completeDirection" in m;
}

export class IdentityPreconditioner implements Preconditioner {
  constructor(readonly n: number) {}
  apply(r: Float64Array, z: Float64Array): number {
    let rz = 0;
    for (let i = 0; i < this.n; i++) {
      const ri = r[i];
      z[i] = ri;
      rz += ri * ri;
    }
    return rz;
  }
}

export class JacobiPreconditioner implements Preconditioner {
  readonly invDiag: Float64Array;
  constructor(
    readonly n: number,
    /** Use |a_ii| (keeps M SPD for indefinite A). */
    readonly absolute = false,
  ) {
    this.invDiag = new Float64Array(n);
  }

  /** Sets M from the diagonal d. */
  setDiagonal(d: Float64Array): void {
    for (let i = 0; i < this.n; i++) {
      const v = this.absolute ? Math.abs(d[i]) : d[i];
      this.invDiag[i] = v !== 0 && Number.isFinite(v) ? 1 / v : 1;
    }
  }

  updateFromCsr(a: CsrMatrix): void {
    const d = this.invDiag;
    d.fill(0);
    for (let i = 0; i < a.rows; i++)
      for (let k = a.rowPtr[i]; k < a.rowPtr[i + 1]; k++)
        if (a.colIdx[k] === i) d[i] += a.values[k];
    this.setDiagonal(d);
  }

  /** From op.diagonal when available, else identity. `work` has length n. */
  updateFromOperator(op: LinearOperator, work: Float64Array): void {
    if (op.diagonal) {
      op.diagonal(work);
      this.setDiagonal(work);
    } else this.invDiag.fill(1);
  }

  apply(r: Float64Array, z: Float64Array): number {
    const d = this.invDiag;
    let rz = 0;
    for (let i = 0; i < this.n; i++) {
      const ri = r[i];
      const zi = ri * d[i];
      z[i] = zi;
      rz += ri * zi;
    }
    return rz;
  }
}

/**
 * One 3 × 3 block of block Jacobi: z[o..o+2] = B r[o..o+2] with B the row-major inverse
 * block at inv[p..p+8]; returns rz + r·z summed term by term (the order a loop adding to
 * rz makes).
 */
function jacobiBlock3(
  inv: Float64Array,
  p: number,
  r: Float64Array,
  o: number,
  z: Float64Array,
  rz: number,
): number {
  const r0 = r[o];
  const r1 = r[o + 1];
  const r2 = r[o + 2];
  const z0 = inv[p] * r0 + inv[p + 1] * r1 + inv[p + 2] * r2;
  const z1 = inv[p + 3] * r0 + inv[p + 4] * r1 + inv[p + 5] * r2;
  const z2 = inv[p + 6] * r0 + inv[p + 7] * r1 + inv[p + 8] * r2;
  z[o] = z0;
  z[o + 1] = z1;
  z[o + 2] = z2;
  return rz + r0 * z0 + r1 * z1 + r2 * z2;
}

export class BlockJacobiPreconditioner implements Preconditioner {
  private numBlocks = 0;
  private offset: Int32Array = new Int32Array(1);
  /** Start of block b's inverse (row-major) in `inv`. */
  private start: Int32Array = new Int32Array(1);
  private inv: Float64Array = new Float64Array(0);
  /** Gauss–Jordan work: [block | I], at most 6 × 12. */
  private work: Float64Array = new Float64Array(0);
  /** Number of singular blocks replaced by their diagonal in the last update. */
  singularBlocks = 0;

  /** M = the diagonal blocks of m (allocates only when the block sizes change). */
  update(m: SparseBlockMatrix): void {
    this.layout(m);
    const { offset, start, inv } = this;
    this.singularBlocks = 0;
    for (let b = 0; b < this.numBlocks; b++) {
      const nb = offset[b + 1] - offset[b];
      if (!this.invert(m.values, m.offsetOf(b, b), nb, inv, start[b])) this.singularBlocks++;
    }
  }

  private layout(m: SparseBlockMatrix): void {
    const nb = m.numBlocks;
    let same = nb === this.numBlocks;
    for (let b = 0; same && b <= nb; b++) same = this.offset[b] === m.blockOffset[b];
    if (same) return;
    this.numBlocks = nb;
    this.offset = Int32Array.from(m.blockOffset);
    this.start = new Int32Array(nb + 1);
    let widest = 0;
    for (let b = 0; b < nb; b++) {
      const w = m.blockSize[b];
      this.start[b + 1] = this.start[b] + w * w;
      widest = Math.max(widest, w);
    }
    this.inv = new Float64Array(this.start[nb]);
    this.work = new Float64Array(2 * widest * widest);
  }

  /** out[o..] = A⁻¹ for the row-major w×w block A = a[ia..]; false when A is singular. */
  private invert(a: Float64Array, ia: number, w: number, out: Float64Array, o: number): boolean {
    // the particle case by the adjugate; a near-singular one goes on to the pivoted elimination
    if (w === 3 && mat3InvertChecked(out, o, a, ia)) return true;
    const g = this.work;
    const w2 = 2 * w;
    let scale = 0;
    for (let r = 0; r < w; r++)
      for (let c = 0; c < w; c++) {
        const v = a[ia + r * w + c];
        g[r * w2 + c] = v;
        g[r * w2 + w + c] = r === c ? 1 : 0;
        scale = Math.max(scale, Math.abs(v));
      }
    let ok = scale > 0 && Number.isFinite(scale);
    for (let k = 0; ok && k < w; k++) {
      let p = k;
      for (let r = k + 1; r < w; r++) if (Math.abs(g[r * w2 + k]) > Math.abs(g[p * w2 + k])) p = r;
      const pivot = g[p * w2 + k];
      if (!(Math.abs(pivot) > 1e-14 * scale)) ok = false;
      else {
        if (p !== k)
          for (let c = 0; c < w2; c++) {
            const t = g[k * w2 + c];
            g[k * w2 + c] = g[p * w2 + c];
            g[p * w2 + c] = t;
          }
        const ip = 1 / pivot;
        for (let c = 0; c < w2; c++) g[k * w2 + c] *= ip;
        for (let r = 0; r < w; r++) {
          const f = g[r * w2 + k];
          if (r === k || f === 0) continue;
          for (let c = 0; c < w2; c++) g[r * w2 + c] -= f * g[k * w2 + c];
        }
      }
    }
    for (let r = 0; r < w; r++)
      for (let c = 0; c < w; c++) {
        if (ok) out[o + r * w + c] = g[r * w2 + w + c];
        else {
          const d = a[ia + r * w + r];
          out[o + r * w + c] = r !== c ? 0 : d !== 0 && Number.isFinite(d) ? 1 / d : 1;
        }
      }
    return ok;
  }

  /**
   * apply for a matrix of 3×3 blocks only (particles), adding r's blocks by group as it
   * goes: sums[3 g(b) ..] += r_b with g = groupOf (the two-level preconditioner's
   * restriction, aggregation-multigrid.ts, in the same pass over r). Returns rᵀz.
   */
  applyGrouping(r: Float64Array, z: Float64Array, groupOf: Int32Array, sums: Float64Array): number {
    const inv = this.inv;
    let rz = 0;
    for (let b = 0; b < this.numBlocks; b++) {
      const o = 3 * b;
      rz = jacobiBlock3(inv, 9 * b, r, o, z, rz);
      const g = 3 * groupOf[b];
      sums[g] += r[o];
      sums[g + 1] += r[o + 1];
      sums[g + 2] += r[o + 2];
    }
    return rz;
  }

  /**
   * The inverse blocks (9 a block, row-major) when every block is 3×3 (for a kernel of its
   * own: aggregation-multigrid.ts); replaced when the layout changes.
   */
  get inverses3(): Float64Array {
    return this.inv;
  }

  apply(r: Float64Array, z: Float64Array): number {
    const { offset, start, inv } = this;
    let rz = 0;
    for (let b = 0; b < this.numBlocks; b++) {
      const o = offset[b];
      const w = offset[b + 1] - o;
      let p = start[b];
      if (w === 3) {
        // the particle case, unrolled
        rz = jacobiBlock3(inv, p, r, o, z, rz);
        continue;
      }
      for (let i = 0; i < w; i++) {
        let s = 0;
        for (let j = 0; j < w; j++) s += inv[p++] * r[o + j];
        z[o + i] = s;
        rz += r[o + i] * s;
      }
    }
    return rz;
  }
}

/**
 * What IC(0) and ILU(0) share: their pattern (rows rp, columns ci, and src, the entry of
 * A each position takes its value from, −1 for a diagonal they insert), analysed again
 * only when A's sparsity pattern changes (PatternCache).
 */
abstract class IncompleteFactorization {
  private readonly pattern = new PatternCache();
  protected n = 0;
  protected rp: Int32Array = new Int32Array(0);
  protected ci: Int32Array = new Int32Array(0);
  protected src: Int32Array = new Int32Array(0);

  /** Builds the pattern of A (analyzed()) and the storage of the numeric factorization. */
  protected abstract analyze(a: CsrMatrix): void;

  /** Checks that A is square and analyses its pattern when it is not the last one seen. */
  protected refreshPattern(a: CsrMatrix, name: string): void {
    if (a.rows !== a.cols) throw new Error(`${name}: matrix must be square`);
    if (!this.pattern.matches(a)) {
      this.analyze(a);
      this.pattern.remember(a);
    }
  }

  /** Keeps the pattern that analyze built as lists (rp[n] entries). */
  protected analyzed(rp: Int32Array, ci: number[], src: number[]): void {
    this.n = rp.length - 1;
    this.rp = rp;
    this.ci = Int32Array.from(ci);
    this.src = Int32Array.from(src);
  }
}

export class Ic0Preconditioner extends IncompleteFactorization implements Preconditioner {
  // The pattern: the lower triangle of A, the diagonal last in each row (inserted when
  // not stored). lx: L's values on it.
  private lx: Float64Array = new Float64Array(0);
  private w: Float64Array = new Float64Array(0);
  /** Diagonal shift α of the last successful factorization (0 when none was needed). */
  shift = 0;

  update(a: CsrMatrix): void {
    this.refreshPattern(a, "ic0");
    const values = a.values;
    for (let alpha = 0; ; alpha = alpha === 0 ? 1e-3 : alpha * 10) {
      if (this.numeric(values, alpha)) {
        this.shift = alpha;
        return;
      }
      if (alpha > 1e6) throw new Error("ic0: no positive pivots even with a large diagonal shift");
    }
  }

  protected analyze(a: CsrMatrix): void {
    const n = a.rows;
    const rp = new Int32Array(n + 1);
    const ci: number[] = [];
    const src: number[] = [];
    for (let i = 0; i < n; i++) {
      let diag = -1;
      for (let k = a.rowPtr[i]; k < a.rowPtr[i + 1]; k++) {
        const c = a.colIdx[k];
        if (c < i) {
          ci.push(c);
          src.push(k);
        } else if (c === i) diag = k;
      }
      ci.push(i);
      src.push(diag);
      rp[i + 1] = ci.length;
    }
    this.analyzed(rp, ci, src);
    this.lx = new Float64Array(ci.length);
    this.w = new Float64Array(n);
  }

  /** Row-oriented IC(0) of A + α diag(A); false on a non-positive pivot. */
  private numeric(values: Float64Array, alpha: number): boolean {
    const { n, rp, ci, src, lx, w } = this;
    for (let i = 0; i < n; i++) {
      const end = rp[i + 1] - 1; // diagonal position
      // L_ik = (a_ik − Σ_{j<k} L_ij L_kj) / L_kk over the pattern; w holds row i so far.
      for (let p = rp[i]; p < end; p++) {
        const k = ci[p];
        let s = values[src[p]];
        const kd = rp[k + 1] - 1;
        for (let q = rp[k]; q < kd; q++) s -= lx[q] * w[ci[q]];
        const lik = s / lx[kd];
        lx[p] = lik;
        w[k] = lik;
      }
      const ad = src[end] >= 0 ? values[src[end]] : 0;
      let d = ad * (1 + alpha);
      for (let p = rp[i]; p < end; p++) {
        d -= lx[p] * lx[p];
        w[ci[p]] = 0;
      }
      if (!(d > 0)) return false;
      lx[end] = Math.sqrt(d);
    }
    return true;
  }

  apply(r: Float64Array, z: Float64Array): number {
    const { n, rp, ci, lx } = this;
    for (let i = 0; i < n; i++) {
      const end = rp[i + 1] - 1;
      let s = r[i];
      for (let p = rp[i]; p < end; p++) s -= lx[p] * z[ci[p]];
      z[i] = s / lx[end];
    }
    for (let i = n - 1; i >= 0; i--) {
      const end = rp[i + 1] - 1;
      const zi = z[i] / lx[end];
      z[i] = zi;
      for (let p = rp[i]; p < end; p++) z[ci[p]] -= lx[p] * zi;
    }
    return dot(r, z, n);
  }
}

export class Ilu0Preconditioner extends IncompleteFactorization implements Preconditioner {
  // The pattern: that of A with the diagonal inserted when missing, columns sorted per
  // row; diag: the diagonal's position in each row; lu: L (unit diagonal) and U on it.
  private diag: Int32Array = new Int32Array(0);
  private lu: Float64Array = new Float64Array(0);
  private pos: Int32Array = new Int32Array(0);
  /** Number of zero pivots replaced in the last update. */
  replacedPivots = 0;

  update(a: CsrMatrix): void {
    this.refreshPattern(a, "ilu0");
    this.numeric(a.values);
  }

  protected analyze(a: CsrMatrix): void {
    const n = a.rows;
    const rp = new Int32Array(n + 1);
    const ci: number[] = [];
    const src: number[] = [];
    const diag = new Int32Array(n);
    for (let i = 0; i < n; i++) {
      let placed = false;
      for (let k = a.rowPtr[i]; k < a.rowPtr[i + 1]; k++) {
        const c = a.colIdx[k];
        if (!placed && c >= i) {
          if (c !== i) {
            diag[i] = ci.length;
            ci.push(i);
            src.push(-1);
          } else diag[i] = ci.length;
          placed = true;
        }
        ci.push(c);
        src.push(k);
      }
      if (!placed) {
        diag[i] = ci.length;
        ci.push(i);
        src.push(-1);
      }
      rp[i + 1] = ci.length;
    }
    this.analyzed(rp, ci, src);
    this.diag = diag;
    this.lu = new Float64Array(ci.length);
    this.pos = new Int32Array(n).fill(-1);
  }

  private numeric(values: Float64Array): void {
    const { n, rp, ci, src, diag, lu, pos } = this;
    let amax = 0;
    for (let p = 0; p < lu.length; p++) {
      lu[p] = src[p] >= 0 ? values[src[p]] : 0;
      amax = Math.max(amax, Math.abs(lu[p]));
    }
    const fix = Math.sqrt(Number.EPSILON) * (amax > 0 ? amax : 1);
    this.replacedPivots = 0;
    for (let i = 0; i < n; i++) {
      for (let p = rp[i]; p < rp[i + 1]; p++) pos[ci[p]] = p;
      for (let p = rp[i]; p < diag[i]; p++) {
        const k = ci[p];
        const lik = lu[p] / lu[diag[k]];
        lu[p] = lik;
        for (let q = diag[k] + 1; q < rp[k + 1]; q++) {
          const t = pos[ci[q]];
          if (t >= 0) lu[t] -= lik * lu[q];
        }
      }
      for (let p = rp[i]; p < rp[i + 1]; p++) pos[ci[p]] = -1;
      const d = lu[diag[i]];
      if (Math.abs(d) < fix || !Number.isFinite(d)) {
        lu[diag[i]] = d < 0 ? -fix : fix;
        this.replacedPivots++;
      }
    }
  }

  apply(r: Float64Array, z: Float64Array): number {
    const { n, rp, ci, diag, lu } = this;
    for (let i = 0; i < n; i++) {
      let s = r[i];
      for (let p = rp[i]; p < diag[i]; p++) s -= lu[p] * z[ci[p]];
      z[i] = s;
    }
    for (let i = n - 1; i >= 0; i--) {
      let s = z[i];
      for (let p = diag[i] + 1; p < rp[i + 1]; p++) s -= lu[p] * z[ci[p]];
      z[i] = s / lu[diag[i]];
    }
    return dot(r, z, n);
  }
}
