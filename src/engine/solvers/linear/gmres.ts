/**
 * Restarted GMRES(m) (Saad & Schultz, SIAM J. Sci. Stat. Comput. 7, 1986; Saad,
 * "Iterative Methods for Sparse Linear Systems", 2nd ed., alg. 6.9 and §9.3.2) for
 * general nonsymmetric A, with right preconditioning A M⁻¹ u = b, x = M⁻¹ u: Jacobi
 * (default), block Jacobi, ILU(0) or none. Right preconditioning keeps the residual GMRES minimizes
 * equal to the true residual b − A x, so the Givens-rotated |g_{j+1}| is the true
 * residual norm in exact arithmetic; it is re-measured at every restart and at the end.
 *
 * Arnoldi uses modified Gram–Schmidt with one re-orthogonalization pass when the new
 * vector lost more than ~30% of its norm (Kahan–Parlett "twice is enough" test), the
 * Hessenberg matrix is reduced by Givens rotations as it grows, and an exact (lucky)
 * breakdown h_{j+1,j} = 0 ends the cycle with the exact solution of the subspace.
 * `maxIterations` counts inner (Arnoldi) steps over all cycles.
 *
 * `factor` accepts a CsrMatrix or a matrix-free LinearOperator; the Krylov basis
 * (m + 1 vectors of length n) and the small dense arrays are allocated once.
 */

import { checkDeadline } from "../deadline";
import { defaultMaxIterations, KrylovSolver, OperatorState, zeroSolution } from "./iterative-base";
import type {
  LinearOperator,
  LinearSolveInfo,
  LinearSolver,
  LinearSolverOptions,
} from "./linear-solver";
import { dot } from "./pattern";

export class GmresSolver extends KrylovSolver implements LinearSolver {
  readonly name = "gmres" as const;
  /** Restart length m (maxIterations counts the inner iterations of all cycles). */
  readonly restart: number;
  private n = -1;
  private basis: Float64Array = new Float64Array(0); // (m+1)·n, vector i at i·n
  private views: Float64Array[] = []; // subarray views of the basis vectors
  private h: Float64Array = new Float64Array(0); // (m+1)·m row-major
  private cs: Float64Array = new Float64Array(0);
  private sn: Float64Array = new Float64Array(0);
  private g: Float64Array = new Float64Array(0);
  private yv: Float64Array = new Float64Array(0);
  private r: Float64Array = new Float64Array(0);
  private z: Float64Array = new Float64Array(0);
  private wv: Float64Array = new Float64Array(0);

  constructor(n = 0, options: LinearSolverOptions = {}) {
    super(
      options,
      new OperatorState(
        options.preconditioner ?? "jacobi",
        false,
        ["none", "jacobi", "block-jacobi", "ilu0"],
        "gmres",
      ),
    );
    this.restart = Math.max(1, Math.floor(options.restart ?? 30));
    this.allocate(n);
  }

  protected allocate(n: number): void {
    if (this.n === n) return;
    this.n = n;
    const m = Math.min(this.restart, Math.max(n, 1));
    this.basis = new Float64Array((m + 1) * n);
    this.views = [];
    for (let i = 0; i <= m; i++) this.views.push(this.basis.subarray(i * n, (i + 1) * n));
    this.h = new Float64Array((m + 1) * m);
    this.cs = new Float64Array(m);
    this.sn = new Float64Array(m);
    this.g = new Float64Array(m + 1);
    this.yv = new Float64Array(m);
    this.r = new Float64Array(n);
    this.z = new Float64Array(n);
    this.wv = new Float64Array(n);
  }

  /** r = b − A x; returns ‖r‖₂. */
  private residual(op: LinearOperator, b: Float64Array, x: Float64Array): number {
    const n = op.n;
    const r = this.r;
    op.apply(x, r);
    for (let i = 0; i < n; i++) r[i] = b[i] - r[i];
    return Math.sqrt(dot(r, r, n));
  }

  solve(b: Float64Array, x: Float64Array): LinearSolveInfo {
    const op = this.operator();
    const n = op.n;
    const prec = this.state.precond;
    const maxIt = this.maxIterations ?? defaultMaxIterations(n);
    const m = this.cs.length;
    const { basis: V, h: H, cs, sn, g, yv, r, z, wv: w } = this;
    const bn = Math.sqrt(dot(b, b, n));
    if (bn === 0) return zeroSolution(x, n);
    const target = this.tolerance * bn;
    let beta = this.residual(op, b, x);
    let total = 0;
    while (beta > target && total < maxIt) {
      // v_0 = r/β, g = β e_1.
      const s0 = 1 / beta;
      for (let i = 0; i < n; i++) V[i] = r[i] * s0;
      g.fill(0);
      g[0] = beta;
      let j = 0;
      while (j < m && total < maxIt) {
        if ((total & 31) === 31) checkDeadline();
        // w = A M⁻¹ v_j
        prec.apply(this.views[j], z);
        op.apply(z, w);
        const w0 = Math.sqrt(dot(w, w, n));
        for (let i = 0; i <= j; i++) H[i * m + j] = 0;
        for (let pass = 0; pass < 2; pass++) {
          for (let i = 0; i <= j; i++) {
            const off = i * n;
            let hij = 0;
            for (let k = 0; k < n; k++) hij += w[k] * V[off + k];
            H[i * m + j] += hij;
            for (let k = 0; k < n; k++) w[k] -= hij * V[off + k];
          }
          const wn = Math.sqrt(dot(w, w, n));
          if (pass === 0 && wn > 0.7 * w0) break;
        }
        const hn = Math.sqrt(dot(w, w, n));
        // Previous rotations on column j, then the new one zeroing h_{j+1,j}.
        for (let i = 0; i < j; i++) {
          const a = H[i * m + j];
          const c = H[(i + 1) * m + j];
          H[i * m + j] = cs[i] * a + sn[i] * c;
          H[(i + 1) * m + j] = -sn[i] * a + cs[i] * c;
        }
        const hjj = H[j * m + j];
        const rho = Math.hypot(hjj, hn);
        if (rho === 0) {
          cs[j] = 1;
          sn[j] = 0;
        } else {
          cs[j] = hjj / rho;
          sn[j] = hn / rho;
        }
        H[j * m + j] = rho;
        g[j + 1] = -sn[j] * g[j];
        g[j] = cs[j] * g[j];
        total++;
        j++;
        if (hn === 0 || Math.abs(g[j]) <= target) break;
        const off = j * n;
        const inv = 1 / hn;
        for (let k = 0; k < n; k++) V[off + k] = w[k] * inv;
      }
      // y = H(0:j,0:j)⁻¹ g(0:j); x += M⁻¹ (V y).
      for (let i = j - 1; i >= 0; i--) {
        let s = g[i];
        for (let k = i + 1; k < j; k++) s -= H[i * m + k] * yv[k];
        const d = H[i * m + i];
        yv[i] = d !== 0 ? s / d : 0;
      }
      w.fill(0);
      for (let i = 0; i < j; i++) {
        const yi = yv[i];
        const off = i * n;
        for (let k = 0; k < n; k++) w[k] += yi * V[off + k];
      }
      prec.apply(w, z);
      for (let k = 0; k < n; k++) x[k] += z[k];
      const prev = beta;
      beta = this.residual(op, b, x);
      if (!(beta < prev) && Math.abs(g[j]) >= prev) break; // stagnation
    }
    return { iterations: total, residual: beta / bn, converged: beta <= target };
  }
}
