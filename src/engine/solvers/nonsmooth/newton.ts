import { grow } from "../../math/grow";
import { projectOnCone } from "./cone";
import { LemkeSolver } from "./lemke";
import { contactResidual } from "./residual";
import type { NonsmoothProblem } from "./types";

/**
 * A small dense Coulomb problem's polish (the frictional impact's, impact-events.ts
 * solveImpact: a few contacts, at most some 30 rows), from a Gauss–Seidel iterate that
 * stalled, in two stages, each iterate kept only where it lowers the residual:
 * 1. slipLcp: where every loaded contact slips, the slip directions held, an LCP in the
 *    normal impulses alone solved exactly by Lemke's pivots (below);
 * 2. Levenberg–Marquardt on the natural map of the exact Coulomb problem (types.ts;
 *    Alart & Curnier 1991, Siconos' fc3d_NaturalMap), from stage 1's last iterate:
 *
 *   F_i(r) = r_i − P_{K_μi}(r_i − ũ_i),   ũ_i = u_i + μ_i ‖u_it‖ e_n,   u = W r + q,
 *
 * zero exactly at a solution (r ∈ K ∋ ũ* ⊥ r: Coulomb's law with maximal dissipation), and
 * max_i ‖F_i‖₂ is residual.ts' "coulomb" residual itself (its step ρ = 1), the number the
 * caller's tolerance reads. Its generalized Jacobian, contact block i,
 *   J_i = E_i − D_i (E_i − U_i W_i),
 * E_i selecting r_i, W_i W's three rows of contact i, D_i ∈ ∂P_K at z = r_i − ũ_i (below)
 * and U_i = ∂ũ_i/∂u_i = I + μ e_n (0, û_tᵀ) (û_t = u_t/‖u_t‖; at u_t = 0 the element
 * U = I of its Clarke Jacobian; checked against central differences).
 * W is rank-deficient where contacts are redundant (a box's corners on a floor: the
 * 6-link chain's 21 rows of rank 12), so J is singular along W's null space and a plain
 * Newton step is not defined: the step minimizes ‖J δ + F‖² + λ ‖δ‖² ([J; √λ I] by
 * Householder QR with column pivoting, not the normal equations, whose condition is
 * squared), λ by Nielsen's gain-ratio update (Madsen, Nielsen & Tingleff 2004, §3.2).
 * The candidate kept is the natural map's own step P_K(r − ũ(r)) = r − F(r) (each
 * contact's impulse in its cone, and 0 exactly where it leaves, as Gauss–Seidel's).
 * Measured on the chain's stalls: stage 1 ends the all-sliding ones (to 1e-17 m/s, where
 * Levenberg–Marquardt alone crept: the load a link moves between its corners lies along a
 * near null direction of the sliding contacts' J, 0.1 % of F a step); stage 2 ends some
 * with a sticking contact in 1 to 7 steps and leaves the rest (a plain Gauss–Newton step
 * with a line search, and λ = ‖F‖ (Fan & Yuan 2005), did no better). A polish, not a
 * solver: its merit θ = ½ ‖F‖² has stationary points off the solutions (Gauss–Newton from
 * r = 0 on the sticking box of newton.test.ts stopped at ‖F‖ = 6e-3).
 *
 * ∂P_K at z = (z_n, z_t), t = ‖z_t‖, μ > 0 (cone.ts projectOnCone's three cases):
 *   t ≤ μ z_n (inside): I;   μ t ≤ −z_n (polar): 0;   else, with r_n = (z_n + μ t)/(1 + μ²),
 *   ẑ = z_t/t:  ∂r_n/∂z_n = 1/(1 + μ²),  ∂r_n/∂z_t = μ ẑᵀ/(1 + μ²),
 *   ∂r_t/∂z_n = μ ẑ/(1 + μ²),  ∂r_t/∂z_t = μ² ẑ ẑᵀ/(1 + μ²) + (μ r_n/t)(I − ẑ ẑᵀ);
 * μ = 0 (the ray r_t = 0): diag([z_n > 0], 0, 0).
 */
/**
 * The relative size (to the first pivot's) below which the least-squares step's pivoted
 * QR takes J's columns left for dependent (leastSquares).
 */
const RANK_CUT = 1e-11;
/** Levenberg–Marquardt's first damping, relative to max (Jᵀ J)_jj (polish). */
const LM_TAU = 1e-6;
/** Slip speed, relative to the start's residual, above which slipLcp takes a contact's d. */
const SLIP = 1e3;
/** slipLcp's rounds of d at most. */
const SLIP_ROUNDS = 8;

export class CoulombNewton {
  private F = new Float64Array(0);
  private Ftry = new Float64Array(0);
  private u = new Float64Array(0);
  private J = new Float64Array(0);
  private A = new Float64Array(0);
  private g = new Float64Array(0);
  private step = new Float64Array(0);
  private trial = new Float64Array(0);
  private best = new Float64Array(0);
  private rhs = new Float64Array(0);
  private norms = new Float64Array(0);
  private perm = new Int32Array(0);
  /** One contact's ∂P_K (3×3) and D U (3×3), row-major, and its residual. */
  private readonly D = new Float64Array(9);
  private readonly DU = new Float64Array(9);
  private readonly z = new Float64Array(3);
  private readonly local = new Float64Array(1);
  /** The sliding contacts' LCP (slipLcp): its matrix, q, normal impulses, directions d. */
  private slipW = new Float64Array(0);
  private slipQ = new Float64Array(0);
  private slipR = new Float64Array(0);
  private dir = new Float64Array(0);
  /** slipLcp's rounds solved (its last iterate in `trial`). */
  private slipRounds = 0;
  private readonly slipProblem: NonsmoothProblem = {
    contacts: 0,
    contactDim: 1,
    W: new Float64Array(0),
    q: new Float64Array(0),
  };
  private readonly lemke = new LemkeSolver();
  /** Newton iterations of the last polish. */
  iterations = 0;

  /**
   * Polishes r (nc contacts of three rows, m = 3 nc; W dense row-major m × m, q, μ a
   * contact) in place, up to maxIterations Newton steps or the residual at `tolerance`;
   * returns the residual (residual.ts "coulomb") of the r left, at most the start's.
   */
  polish(
    nc: number,
    W: Float64Array,
    q: Float64Array,
    mu: Float64Array,
    r: Float64Array,
    tolerance: number,
    maxIterations: number,
  ): number {
    const m = 3 * nc;
    this.F = grow(this.F, m);
    this.Ftry = grow(this.Ftry, m);
    this.u = grow(this.u, m);
    this.J = grow(this.J, m * m);
    this.A = grow(this.A, 2 * m * m);
    this.g = grow(this.g, m);
    this.step = grow(this.step, m);
    this.trial = grow(this.trial, m);
    this.best = grow(this.best, m);
    this.rhs = grow(this.rhs, 2 * m);
    this.norms = grow(this.norms, m);
    this.perm = grow(this.perm, m);
    const { F, Ftry, J, A, g, step, trial, best, rhs } = this;
    this.evaluate(nc, W, q, mu, r, F);
    let bestResidual = this.residual(nc, mu, r);
    best.set(r.subarray(0, m));
    this.iterations = 0;
    bestResidual = this.slipLcp(nc, W, q, mu, r, bestResidual, tolerance);
    // Newton from the LCP's last iterate (its active set), or the start
    r.set((this.slipRounds > 0 ? trial : best).subarray(0, m));
    let theta = this.evaluate(nc, W, q, mu, r, F);
    // Levenberg–Marquardt's damping λ (Nielsen's update: Madsen, Nielsen & Tingleff,
    // "Methods for non-linear least squares problems", 2004, §3.2), its start τ max (Jᵀ J)_jj
    let lambda = -1;
    let nu = 2;
    let fresh = false;
    while (this.iterations < maxIterations && bestResidual > tolerance) {
      this.iterations++;
      if (!fresh) {
        this.jacobian(nc, W, mu, r, J);
        // g = Jᵀ F
        for (let a = 0; a < m; a++) {
          let s = 0;
          for (let k = 0; k < m; k++) s += J[k * m + a] * F[k];
          g[a] = s;
        }
        fresh = true;
      }
      if (lambda < 0) {
        let top = 0;
        for (let a = 0; a < m; a++) {
          let s = 0;
          for (let k = 0; k < m; k++) s += J[k * m + a] * J[k * m + a];
          top = Math.max(top, s);
        }
        lambda = LM_TAU * top;
      }
      // δ minimizing ‖J δ + F‖² + λ ‖δ‖²: [J; √λ I] δ = [−F; 0] in least squares
      const root = Math.sqrt(lambda);
      A.set(J.subarray(0, m * m));
      A.fill(0, m * m, 2 * m * m);
      for (let a = 0; a < m; a++) {
        A[(m + a) * m + a] = root;
        rhs[a] = -F[a];
        rhs[m + a] = 0;
      }
      leastSquares(A, 2 * m, m, rhs, step, this.perm, this.norms);
      // the model's decrease ½ δᵀ(λ δ − g) and θ's
      let predicted = 0;
      for (let a = 0; a < m; a++) {
        trial[a] = r[a] + step[a];
        predicted += 0.5 * step[a] * (lambda * step[a] - g[a]);
      }
      const th = this.evaluate(nc, W, q, mu, trial, Ftry);
      const gain = (theta - th) / predicted;
      if (predicted > 0 && gain > 0) {
        theta = th;
        r.set(trial.subarray(0, m));
        F.set(Ftry.subarray(0, m));
        fresh = false;
        const c = 2 * gain - 1;
        lambda *= Math.max(1 / 3, 1 - c * c * c);
        nu = 2;
        // the candidate: the natural map's own step from it, P_K(r − ũ) = r − F(r), in K
        // and 0 exactly where a contact leaves (the polar case: an iterate's 1e-17 N s
        // there is a load against w_n > 0), kept where its residual is the best yet
        for (let a = 0; a < m; a++) trial[a] = r[a] - F[a];
        this.evaluate(nc, W, q, mu, trial, Ftry);
        const res = this.residual(nc, mu, trial);
        if (res < bestResidual) {
          bestResidual = res;
          best.set(trial.subarray(0, m));
        }
      } else {
        lambda *= nu;
        nu *= 2;
        if (!Number.isFinite(lambda)) break;
      }
    }
    r.set(best.subarray(0, m));
    return bestResidual;
  }

  /**
   * The sliding contacts' LCP (file comment): where no loaded contact sticks (every one with
   * r_n > 0 slips at ‖u_t‖ > SLIP times the residual), each contact's friction held at
   * r_t = −μ r_n d, d = u_t/‖u_t‖ of the iterate (0 where ‖u_t‖ is below that), leaves
   *   u_n = (W_nn − μ W_nt d) r_n + q_n ≥ 0 ⊥ r_n ≥ 0,
   * an LCP in the normal impulses alone, solved exactly by Lemke's pivots (its active set
   * the exact one, where the sweeps creep towards it along W's near null space); then d
   * from the new u, SLIP_ROUNDS times at most, or up to the tolerance. Each iterate better
   * than `best` is kept there; returns the best residual.
   */
  private slipLcp(
    nc: number,
    W: Float64Array,
    q: Float64Array,
    mu: Float64Array,
    r: Float64Array,
    start: number,
    tolerance: number,
  ): number {
    const m = 3 * nc;
    this.slipW = grow(this.slipW, nc * nc);
    this.slipQ = grow(this.slipQ, nc);
    this.slipR = grow(this.slipR, nc);
    this.dir = grow(this.dir, 2 * nc);
    const { slipW, slipQ, slipR, dir, u, trial, best, Ftry } = this;
    const slip = SLIP * start;
    let bestResidual = start;
    trial.set(r.subarray(0, m));
    this.slipRounds = 0;
    for (let round = 0; round < SLIP_ROUNDS; round++) {
      // u of `trial` (evaluate's), the directions d
      for (let i = 0; i < nc; i++) {
        const o = 3 * i;
        const ut = Math.hypot(u[o + 1], u[o + 2]);
        if (ut <= slip && trial[o] > 0 && mu[i] > 0) return bestResidual;
        dir[2 * i] = ut > slip ? u[o + 1] / ut : 0;
        dir[2 * i + 1] = ut > slip ? u[o + 2] / ut : 0;
      }
      for (let i = 0; i < nc; i++) {
        const n = 3 * i * m;
        for (let j = 0; j < nc; j++) {
          const c = 3 * j;
          slipW[i * nc + j] =
            W[n + c] - mu[j] * (W[n + c + 1] * dir[2 * j] + W[n + c + 2] * dir[2 * j + 1]);
        }
        slipQ[i] = q[3 * i];
      }
      const lcp = this.slipProblem;
      lcp.contacts = nc;
      lcp.W = slipW;
      lcp.q = slipQ;
      if (!this.lemke.solve(lcp, slipR).converged) return bestResidual;
      this.slipRounds++;
      for (let i = 0; i < nc; i++) {
        const o = 3 * i;
        trial[o] = slipR[i];
        trial[o + 1] = -mu[i] * slipR[i] * dir[2 * i];
        trial[o + 2] = -mu[i] * slipR[i] * dir[2 * i + 1];
      }
      this.evaluate(nc, W, q, mu, trial, Ftry);
      const res = this.residual(nc, mu, trial);
      if (res < bestResidual) {
        bestResidual = res;
        best.set(trial.subarray(0, m));
      }
      if (res <= tolerance) break;
    }
    return bestResidual;
  }

  /** F(r) into out (u = W r + q kept in this.u); θ = ½ ‖F‖₂². */
  private evaluate(
    nc: number,
    W: Float64Array,
    q: Float64Array,
    mu: Float64Array,
    r: Float64Array,
    out: Float64Array,
  ): number {
    const m = 3 * nc;
    const { u, z } = this;
    for (let a = 0; a < m; a++) {
      let s = q[a];
      for (let b = 0; b < m; b++) s += W[a * m + b] * r[b];
      u[a] = s;
    }
    let theta = 0;
    for (let i = 0; i < nc; i++) {
      const o = 3 * i;
      const ut = Math.hypot(u[o + 1], u[o + 2]);
      z[0] = r[o] - (u[o] + mu[i] * ut);
      z[1] = r[o + 1] - u[o + 1];
      z[2] = r[o + 2] - u[o + 2];
      projectOnCone(z, 0, mu, i);
      for (let c = 0; c < 3; c++) {
        const f = r[o + c] - z[c];
        out[o + c] = f;
        theta += 0.5 * f * f;
      }
    }
    return theta;
  }

  /** max_i ‖F_i‖₂ of r, u = W r + q as `evaluate` left it (residual.ts contactResidual). */
  private residual(nc: number, mu: Float64Array, r: Float64Array): number {
    let e = 0;
    for (let i = 0; i < nc; i++) {
      contactResidual(this.local, 0, mu, i, r, 3 * i, this.u, 3 * i, true);
      e = Math.max(e, this.local[0]);
    }
    return e;
  }

  /** J = ∂F/∂r at r (file comment), u = W r + q as `evaluate` left it. */
  private jacobian(
    nc: number,
    W: Float64Array,
    mu: Float64Array,
    r: Float64Array,
    J: Float64Array,
  ): void {
    const m = 3 * nc;
    const { u, D, DU } = this;
    for (let i = 0; i < nc; i++) {
      const o = 3 * i;
      const mi = mu[i];
      const u1 = u[o + 1];
      const u2 = u[o + 2];
      const ut = Math.hypot(u1, u2);
      const zn = r[o] - (u[o] + mi * ut);
      const z1 = r[o + 1] - u1;
      const z2 = r[o + 2] - u2;
      coneJacobian(zn, z1, z2, mi, D);
      // D U: U = I + μ e_n (0, û_t)ᵀ adds μ û_t to the normal column's partners
      const h1 = ut > 0 ? (mi * u1) / ut : 0;
      const h2 = ut > 0 ? (mi * u2) / ut : 0;
      for (let a = 0; a < 3; a++) {
        const dn = D[3 * a];
        DU[3 * a] = dn;
        DU[3 * a + 1] = D[3 * a + 1] + dn * h1;
        DU[3 * a + 2] = D[3 * a + 2] + dn * h2;
      }
      // rows of contact i: E_i − D E_i + (D U) W_i
      for (let a = 0; a < 3; a++) {
        const row = (o + a) * m;
        const d0 = DU[3 * a];
        const d1 = DU[3 * a + 1];
        const d2 = DU[3 * a + 2];
        for (let b = 0; b < m; b++)
          J[row + b] = d0 * W[o * m + b] + d1 * W[(o + 1) * m + b] + d2 * W[(o + 2) * m + b];
        for (let c = 0; c < 3; c++) J[row + o + c] += (a === c ? 1 : 0) - D[3 * a + c];
      }
    }
  }
}

/** ∂P_K at z = (zn, z1, z2) for the cone of μ (file comment) into out, 3×3 row-major. */
function coneJacobian(zn: number, z1: number, z2: number, mu: number, out: Float64Array): void {
  out.fill(0);
  if (mu === 0) {
    if (zn > 0) out[0] = 1;
    return;
  }
  const t = Math.hypot(z1, z2);
  if (t <= mu * zn) {
    out[0] = 1;
    out[4] = 1;
    out[8] = 1;
    return;
  }
  if (mu * t <= -zn) return;
  const k = 1 / (1 + mu * mu);
  const rn = (zn + mu * t) * k;
  const e1 = z1 / t;
  const e2 = z2 / t;
  const s = (mu * rn) / t;
  out[0] = k;
  out[1] = mu * k * e1;
  out[2] = mu * k * e2;
  out[3] = mu * k * e1;
  out[6] = mu * k * e2;
  const a = mu * mu * k;
  out[4] = a * e1 * e1 + s * (1 - e1 * e1);
  out[5] = a * e1 * e2 - s * e1 * e2;
  out[7] = out[5];
  out[8] = a * e2 * e2 + s * (1 - e2 * e2);
}

/**
 * x minimizing ‖A x − b‖₂ (A m × m row-major, overwritten; b overwritten) by Householder QR
 * with column pivoting (Businger & Golub 1965; Golub & Van Loan §5.4.1), its rank cut where
 * the largest column left has a norm below RANK_CUT of the first pivot's: the basic
 * solution, x's other entries 0. perm and norms are scratch (m).
 */
function leastSquares(
  A: Float64Array,
  rows: number,
  m: number,
  b: Float64Array,
  x: Float64Array,
  perm: Int32Array,
  norms: Float64Array,
): void {
  for (let j = 0; j < m; j++) perm[j] = j;
  let rank = m;
  let first = 0;
  for (let k = 0; k < m; k++) {
    // the pivot: the column of k.. with the largest norm over rows k..
    let p = k;
    let best = -1;
    for (let j = k; j < m; j++) {
      let s = 0;
      for (let i = k; i < rows; i++) s += A[i * m + j] * A[i * m + j];
      norms[j] = s;
      if (s > best) {
        best = s;
        p = j;
      }
    }
    const alpha = Math.sqrt(best);
    if (k === 0) first = alpha;
    if (!(alpha > RANK_CUT * first)) {
      rank = k;
      break;
    }
    if (p !== k) {
      for (let i = 0; i < rows; i++) {
        const t = A[i * m + k];
        A[i * m + k] = A[i * m + p];
        A[i * m + p] = t;
      }
      const t = perm[k];
      perm[k] = perm[p];
      perm[p] = t;
    }
    // Householder v = a + sign(a_k) ‖a‖ e_k on rows k.., H = I − 2 v vᵀ/(vᵀ v)
    const akk = A[k * m + k];
    const r = akk >= 0 ? -alpha : alpha;
    const v0 = akk - r;
    const vv = alpha * alpha - akk * akk + v0 * v0;
    A[k * m + k] = v0;
    for (let j = k + 1; j < m; j++) {
      let s = 0;
      for (let i = k; i < rows; i++) s += A[i * m + k] * A[i * m + j];
      const f = (2 * s) / vv;
      for (let i = k; i < rows; i++) A[i * m + j] -= f * A[i * m + k];
    }
    let s = 0;
    for (let i = k; i < rows; i++) s += A[i * m + k] * b[i];
    const f = (2 * s) / vv;
    for (let i = k; i < rows; i++) b[i] -= f * A[i * m + k];
    A[k * m + k] = r;
  }
  // R x = Qᵀ b on the leading rank × rank block
  for (let i = rank - 1; i >= 0; i--) {
    let s = b[i];
    for (let j = i + 1; j < rank; j++) s -= A[i * m + j] * norms[j];
    norms[i] = s / A[i * m + i];
  }
  for (let j = 0; j < m; j++) x[perm[j]] = j < rank ? norms[j] : 0;
}
