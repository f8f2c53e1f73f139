import { projectOnCone } from "./cone";
import { DenseDelassus } from "./delassus";
import type { DelassusOperator, NonsmoothProblem, ResidualMeasure } from "./types";

/**
 * The one residual every solver reports: the natural-map (projection) residual
 *   e = max over contacts i of ‖r_i − P_K(r_i − v_i)‖₂
 * (∞-norm over contacts, Euclidean within a contact), zero exactly at a solution, with
 * - "lcp" (contactDim 1): K = [0, ∞), v = w = W r + q, so r − P(r − w) = min(r, w) and
 *   e = ‖min(r, w)‖∞;
 * - "coulomb" (contactDim 3): K = K_μ and v = ũ = u + μ‖u_t‖ e_n (De Saxcé), the residual of
 *   the exact Coulomb problem, as Siconos' fc3d_compute_error with ρ = 1 (absolute, not
 *   divided by ‖q‖);
 * - "ccp": same with v = u, the KKT residual of the cone-complementarity QP
 *   min ½ rᵀW r + qᵀr, r ∈ K that APGD and BB solve (K ∋ r ⊥ u ∈ K*).
 * Units: r is in N·s and u in m/s; the step ρ = 1 in r − ρ v makes e a mixed quantity that
 * behaves like an impulse error for heavy bodies (W small) and like a velocity error for
 * light ones. Tolerances are absolute in these units (the model's `solver.tolerance`).
 * NaN anywhere propagates to the result (Math.max keeps NaN).
 */

const z = new Float64Array(3);
/** One contact's residual (frictionResidual). */
const local = new Float64Array(1);

/** ‖min(r, w)‖∞ over the first m entries (w = W r + q). */
export function lcpResidual(m: number, r: Float64Array, w: Float64Array): number {
  let e = 0;
  for (let i = 0; i < m; i++) e = Math.max(e, Math.abs(Math.min(r[i], w[i])));
  return e;
}

/**
 * "lcp-local": ‖min(W_ii r_i, w_i)‖∞ over the first m entries, W_ii = diag[9i] (the
 * DiagonalCache layout, stride 9). It is W_ii times the natural-map residual with PGS's own
 * step ρ_i = 1/W_ii, |min(r_i, w_i/W_ii)|, so it is in the units of w and zero exactly at a
 * solution (W_ii > 0). Read for a position-level LCP (w a gap in m, r in kg·m): e ≤ tol says
 * no gap is below −tol, and a contact with a multiplier is separated by at most tol, or its
 * multiplier moves its own gap by at most tol (W_ii r_i ≤ tol).
 */
export function lcpLocalResidual(
  m: number,
  r: Float64Array,
  w: Float64Array,
  diag: Float64Array,
): number {
  let e = 0;
  for (let i = 0; i < m; i++) e = Math.max(e, Math.abs(Math.min(diag[9 * i] * r[i], w[i])));
  return e;
}

/**
 * ‖r_i − P_{K_μ}(r_i − v_i)‖₂ of friction contact i into out[io], μ = mu[i], with impulse
 * (rn, r1, r2) = r[ir..ir+2] and local velocity (un, u1, u2) = u[iu..iu+2]:
 * v = u + μ‖u_t‖e_n when deSaxce (exact Coulomb), v = u otherwise. Arrays and offsets in
 * and out, not doubles, for the velocity-form sweep's calls (cone.ts, file comment: a
 * returned double is a heap number too, 340 B a step on S1-100 at the defaults).
 */
export function contactResidual(
  out: Float64Array,
  io: number,
  mu: Float64Array,
  i: number,
  r: Float64Array,
  ir: number,
  u: Float64Array,
  iu: number,
  deSaxce: boolean,
): void {
  const m = mu[i];
  const rn = r[ir];
  const r1 = r[ir + 1];
  const r2 = r[ir + 2];
  const un = u[iu];
  const u1 = u[iu + 1];
  const u2 = u[iu + 2];
  const vn = deSaxce ? un + m * Math.sqrt(u1 * u1 + u2 * u2) : un;
  z[0] = rn - vn;
  z[1] = r1 - u1;
  z[2] = r2 - u2;
  projectOnCone(z, 0, mu, i);
  const a = rn - z[0];
  const b = r1 - z[1];
  const c = r2 - z[2];
  out[io] = Math.sqrt(a * a + b * b + c * c);
}

/**
 * A cheap sufficient test that contactResidual(μ, r, u, deSaxce = true) ≤ bound (same
 * arguments: μ = mu[i], r at r[ir], u at u[iu]), without a square root (velocity-form PGS gates its exact checks on an estimate built from it): when
 * r ∈ K_μ (r_n ≥ 0, ‖r_t‖ ≤ μ r_n, compared squared), r = P_K(r) and the projection is
 * nonexpansive, so ‖r − P_K(r − ũ)‖ ≤ ‖ũ‖, and with ũ = u + μ‖u_t‖e_n, Cauchy–Schwarz on
 * (|u_n| + μ‖u_t‖)² gives ‖ũ‖² ≤ (2 + μ²)‖u‖². Resting and sticking contacts (u ≈ 0, r
 * inside the cone) pass it; false for NaN. Exact in real arithmetic; the round-off of the
 * two computations (relative 1e-16 of |r| and |u|) can decide it only at the bound itself.
 */
export function coulombResidualBelow(
  mu: Float64Array,
  i: number,
  r: Float64Array,
  ir: number,
  u: Float64Array,
  iu: number,
  bound: number,
): boolean {
  const m = mu[i];
  const rn = r[ir];
  const r1 = r[ir + 1];
  const r2 = r[ir + 2];
  const un = u[iu];
  const u1 = u[iu + 1];
  const u2 = u[iu + 2];
  return (
    rn >= 0 &&
    r1 * r1 + r2 * r2 <= m * m * rn * rn &&
    (2 + m * m) * (un * un + u1 * u1 + u2 * u2) <= bound * bound
  );
}

/**
 * max_i ‖r_i − P_{K_μi}(r_i − v_i)‖₂ for contactDim 3, u = W r + q; v = u + μ‖u_t‖e_n when
 * deSaxce (exact Coulomb), v = u otherwise (CCP).
 */
export function frictionResidual(
  contacts: number,
  r: Float64Array,
  u: Float64Array,
  mu: Float64Array,
  deSaxce: boolean,
): number {
  let e = 0;
  for (let i = 0; i < contacts; i++) {
    const o = 3 * i;
    contactResidual(local, 0, mu, i, r, o, u, o, deSaxce);
    e = Math.max(e, local[0]);
  }
  return e;
}

/**
 * The residual in the given measure, for u = W r + q already computed; "lcp-local" needs
 * the diagonal W_ii at diag[9i].
 */
export function residualFromVelocity(
  measure: ResidualMeasure,
  contacts: number,
  r: Float64Array,
  u: Float64Array,
  mu: Float64Array | undefined,
  diag?: Float64Array,
): number {
  if (measure === "lcp") return lcpResidual(contacts, r, u);
  if (measure === "lcp-local") {
    if (!diag) throw new Error('the "lcp-local" residual needs the diagonal of W');
    return lcpLocalResidual(contacts, r, u, diag);
  }
  if (!mu) throw new Error("friction residual needs mu");
  return frictionResidual(contacts, r, u, mu, measure === "coulomb");
}

/**
 * The residual of r for a problem, computing u = W r + q itself (allocates u: for tests and
 * callers outside hot loops). Default measure: "lcp" for contactDim 1, "coulomb" for 3.
 */
export function problemResidual(
  problem: NonsmoothProblem,
  r: Float64Array,
  measure: ResidualMeasure = problem.contactDim === 1 ? "lcp" : "coulomb",
): number {
  const u = problemVelocity(problem, r);
  let diag: Float64Array | undefined;
  if (measure === "lcp-local") {
    const op = delassusOperator(problem);
    const blk = new Float64Array(9);
    diag = new Float64Array(9 * problem.contacts);
    for (let i = 0; i < problem.contacts; i++) {
      op.diagonalBlock(i, blk);
      diag[9 * i] = blk[0];
    }
  }
  return residualFromVelocity(measure, problem.contacts, r, u, problem.mu, diag);
}

/** The problem's W as an operator (a dense W wrapped). */
function delassusOperator(problem: NonsmoothProblem): DelassusOperator {
  return problem.W instanceof Float64Array
    ? new DenseDelassus(problem.W, problem.contacts, problem.contactDim)
    : problem.W;
}

/** u = W r + q (allocated, length m). */
export function problemVelocity(problem: NonsmoothProblem, r: Float64Array): Float64Array {
  const m = problem.contacts * problem.contactDim;
  const op = delassusOperator(problem);
  const u = new Float64Array(m);
  op.multiply(r, u);
  for (let i = 0; i < m; i++) u[i] += problem.q[i];
  return u;
}
