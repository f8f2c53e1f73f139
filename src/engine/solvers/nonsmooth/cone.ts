/**
 * Cone projections and the per-contact local update shared by PGS and projected Jacobi.
 * A contact's triple is (n, t1, t2) at x[off], x[off+1], x[off+2];
 * K_μ = {‖x_t‖ ≤ μ x_n} is the Coulomb cone, K_μ* = K_{1/μ} its dual.
 *
 * The per-contact kernels take their vectors as an array and an offset, and μ as the
 * problem's array and the contact's index, never as computed doubles: where V8 does not
 * inline a call (the sweeps are large, and its inlining budget runs out on one or another
 * callee depending on the order it compiles them) it passes each double argument as a
 * fresh heap number, an allocation per contact and sweep (1.7 KB a step in the
 * velocity-form sweep on the benchmark's 100 spheres at the defaults, S1-100;
 * test/engine/simulation/step-allocation.test.ts).
 */

/**
 * In-place Euclidean projection of x[off..off+2] onto K_μ, μ = mu[i] ≥ 0. Three cases:
 * inside K_μ (unchanged); inside the polar cone −K_μ* = {μ‖x_t‖ ≤ −x_n} (→ 0); otherwise
 * onto the boundary ray through x: r_n = (x_n + μ‖x_t‖)/(1 + μ²), r_t = μ r_n x_t/‖x_t‖.
 * μ = 0 degenerates to the ray {r_t = 0, r_n ≥ 0}.
 */
export function projectOnCone(x: Float64Array, off: number, mu: Float64Array, i: number): void {
  const m = mu[i];
  const xn = x[off];
  const a = x[off + 1];
  const b = x[off + 2];
  const t = Math.sqrt(a * a + b * b);
  if (t <= m * xn) return;
  if (m * t <= -xn) {
    x[off] = 0;
    x[off + 1] = 0;
    x[off + 2] = 0;
    return;
  }
  // Here t > 0: t = 0 falls in one of the two cases above whatever the sign of x_n.
  const rn = (xn + m * t) / (1 + m * m);
  const s = (m * rn) / t;
  x[off] = rn;
  x[off + 1] = a * s;
  x[off + 2] = b * s;
}

/** Projection onto K: the orthant r ≥ 0 (dim 1) or the product of cones K_μi (dim 3). */
export function projectOnK(x: Float64Array, contacts: number, dim: 1 | 3, mu: Float64Array): void {
  if (dim === 1) {
    for (let i = 0; i < contacts; i++) if (x[i] < 0) x[i] = 0;
  } else for (let i = 0; i < contacts; i++) projectOnCone(x, 3 * i, mu, i);
}

/**
 * Per-contact diagonal data the local updates need, cached once per solve:
 * the diagonal blocks, invN = 1/W_nn (0 when W_nn ≤ 0), and the tangential step
 * rhoT = 2/(W_t1t1 + W_t2t2) (0 when that trace ≤ 0).
 */
export interface LocalCoefficients {
  diag: Float64Array;
  invN: Float64Array;
  rhoT: Float64Array;
}

/**
 * Frictionless PSOR row update (Cryer's projected SOR): r_i ← max(0, r_i − ω u_i / W_ii),
 * with u_i = (W r + q)_i = u[iu] for the current r and 1/W_ii = c.invN[i]. Its fixed points
 * are exactly the LCP solutions. A zero diagonal means a zero row and column (W PSD):
 * u_i = q_i whatever r, so r_i = 0 when q_i ≥ 0 and is left unchanged otherwise (no
 * solution exists then).
 */
export function lcpRowUpdate(
  r: Float64Array,
  i: number,
  u: Float64Array,
  iu: number,
  omega: number,
  c: LocalCoefficients,
): void {
  const ui = u[iu];
  const invN = c.invN[i];
  if (invN > 0) {
    const v = r[i] - omega * ui * invN;
    r[i] = Math.max(v, 0);
  } else if (ui >= 0) r[i] = 0;
}

/**
 * One local Coulomb update of contact i (the block step of NSGS / projected Jacobi), given
 * its local velocity (un, ut1, ut2) = (W r + q)_i = u[iu..iu+2] for the current r, and
 * μ = mu[i]:
 *  1. normal: r_n ← max(0, r_n − ω u_n / W_nn)   (the normal row solved with its diagonal);
 *  2. the tangential velocity is corrected for the normal change through the block's
 *     W_tn column, u_t ← u_t + W_tn Δr_n;
 *  3. tangent: r_t ← r_t − ω ρ_t u_t with one scalar step ρ_t = 2/(W_t1t1 + W_t2t2), then
 *     radial projection onto the disc ‖r_t‖ ≤ μ r_n (as Chrono / Bullet / Siconos' local
 *     "projection on cone" solvers).
 * Why these choices: at a fixed point, step 1 is Signorini (r_n ≥ 0, u_n ≥ 0, r_n u_n = 0),
 * and step 3 gives u_t = 0 inside the disc or u_t = −κ r_t (κ ≥ 0) on its rim, because the
 * tangential step is a scalar multiple of u_t; together that is exactly Coulomb's law with
 * maximal dissipation, i.e. the De Saxcé complementarity. (A per-row or 2×2-matrix tangential
 * step followed by the radial projection would leave u_t off the sliding direction when
 * W_tt is anisotropic.) ρ_t = 1/(mean tangential diagonal) is the best scalar step on the 2×2
 * block and exact when W_tt is isotropic (a sphere on a plane: stick in one sweep).
 * The normal part uses u_n, not ũ_n = u_n + μ‖u_t‖: the split update already enforces the
 * De Saxcé conditions (ũ ⊥ r reduces to r_n u_n = 0 on the cone boundary).
 * Degenerate blocks: W_nn ≤ 0 keeps Signorini on the constant u_n as lcpRowUpdate; a zero
 * tangential trace (u_t independent of r_t) takes the maximal-dissipation r_t = −μ r_n u_t/‖u_t‖.
 */
export function coulombBlockUpdate(
  r: Float64Array,
  i: number,
  u: Float64Array,
  iu: number,
  mu: Float64Array,
  omega: number,
  c: LocalCoefficients,
): void {
  const un = u[iu];
  let ut1 = u[iu + 1];
  let ut2 = u[iu + 2];
  const m = mu[i];
  const o = 3 * i;
  const rn0 = r[o];
  let rn = rn0;
  const invN = c.invN[i];
  if (invN > 0) {
    const v = rn0 - omega * un * invN;
    rn = Math.max(v, 0);
  } else if (un >= 0) rn = 0;
  const dn = rn - rn0;
  const d = 9 * i;
  ut1 += c.diag[d + 3] * dn;
  ut2 += c.diag[d + 6] * dn;
  const rhoT = c.rhoT[i];
  let a: number;
  let b: number;
  if (rhoT > 0) {
    a = r[o + 1] - omega * rhoT * ut1;
    b = r[o + 2] - omega * rhoT * ut2;
  } else {
    // u_t does not depend on r_t: any disc point is feasible, Coulomb picks −u_t direction.
    a = -ut1;
    b = -ut2;
    const nu = Math.sqrt(a * a + b * b);
    const s = nu > 0 ? (m * rn) / nu : 0;
    a *= s;
    b *= s;
  }
  const t = Math.sqrt(a * a + b * b);
  const rad = m * rn;
  if (t > rad) {
    if (rad > 0) {
      const s = rad / t;
      a *= s;
      b *= s;
    } else {
      a = 0;
      b = 0;
    }
  }
  r[o] = rn;
  r[o + 1] = a;
  r[o + 2] = b;
}
