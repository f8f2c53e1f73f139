/**
 * Hyperelastic materials of the tetrahedral elements (tet.ts, fem-effector.ts), as the
 * strain energy density ψ(F) (J/m³), the first Piola–Kirchhoff stress P = ∂ψ/∂F (Pa) and
 * its differential dP = (∂P/∂F) : dF, the material part of the element's tangent
 * stiffness. F is the deformation gradient, row-major 3×3. μ and λ are the Lamé
 * parameters, from Young's modulus E and Poisson's ratio ν:
 *   μ = E / (2 (1 + ν)),   λ = E ν / ((1 + ν)(1 − 2ν)).
 *
 * corotational (corotated linear elasticity; Müller et al. 2002, SOFA's and ArtiSynth's
 * corotational FEM): with the polar decomposition F = R S (polar.ts, R a rotation also
 * for inverted elements),
 *   ψ = μ ‖S − I‖² + λ/2 tr(S − I)²,   P = R [2μ (S − I) + λ tr(S − I) I] = 2μ (F − R) + λ tr(S − I) R,
 * which is −R K₀ (Rᵀx − X) per element (K₀ the linear element stiffness, S − I the
 * corotated small strain). Exact tangent (tangent "exact"), including the variation of R:
 *   dP = 2μ dF + (λ tr(S − I) − 2μ) dR + λ tr(Rᵀ dF) R,   dR = R [w]×,
 *   (tr(S) I − S) w = vee(Rᵀ dF − dFᵀ R)
 * (from dF = dR S + R dS and [w]× S + S [w]× = [(tr(S) I − S) w]×). tr(S) I − S has the
 * eigenvalues σ_j + σ_k; near σ_j + σ_k = 0 (an element flattened and inverted so that
 * two singular values cancel) the exact tangent is unbounded, and the sums are clamped
 * at 1e-6 σ₁ (a bounded approximation there). Approximate tangent (tangent
 * "approximate"): the standard R K₀ Rᵀ, dP = R [2μ sym(Rᵀ dF) + λ tr(Rᵀ dF) I], which
 * leaves out dR. Its error, exact minus approximate, is
 *   2μ R skew(Rᵀ dF) + (λ tr(S − I) − 2μ) dR,
 * zero at rest and in any rigid motion (S = I: dR = R skew(Rᵀ dF)), and otherwise of the
 * order of the stress: relative error O(‖S − I‖) with the strain. It is symmetric
 * positive semidefinite everywhere (K₀ is, and R · Rᵀ is a congruence), so the solve
 * matrix stays SPD and Rayleigh stiffness damping never adds energy; but it is not the
 * force's derivative, so Newton converges linearly instead of quadratically (to the same
 * solution: the force is the same).
 *
 * stvk (St Venant–Kirchhoff): E = ½ (FᵀF − I), S₂ = λ tr(E) I + 2μ E,
 *   ψ = μ E : E + λ/2 tr(E)²,   P = F S₂,   dP = dF S₂ + F (λ tr(dE) I + 2μ dE),  dE = sym(Fᵀ dF).
 *
 * neo-hookean (compressible): J = det F,
 *   ψ = μ/2 (tr(FᵀF) − 3) − μ ln J + λ/2 (ln J)²,   P = μ F + h′(J) cof F,
 *   dP = μ dF + h″(J) (cof F : dF) cof F + h′(J) d(cof F)
 * with h(J) = −μ ln J + λ/2 (ln J)², h′ = (λ ln J − μ)/J, h″ = (μ + λ − λ ln J)/J² and
 * cof F = J F⁻ᵀ = ∂J/∂F (no inverse is formed). Below J₀ = 0.01 (a volume compressed to
 * 1 %) h continues as its second-order Taylor expansion at J₀, so an element crushed or
 * inverted by a large step gets a finite, strongly restoring force instead of NaN
 * (ψ stays C²).
 *
 * Each material keeps, after `evaluate(F)`, what `differential` needs at that F; an
 * instance serves one element at a time. No allocation after construction.
 */
import { nearestRotation, polarDecomposition, symmetricEigen3 } from "./polar";

export type MaterialName = "corotational" | "stvk" | "neo-hookean";

export interface ElasticMaterial {
  readonly name: MaterialName;
  /** True when the tangent is positive semidefinite at every F (approximate corotational). */
  readonly positiveTangent: boolean;
  /** ψ(F) (J/m³); writes P(F) into p and keeps what `differential` needs. */
  evaluate(f: Float64Array, p: Float64Array): number;
  /** dP for dF at the F of the last `evaluate` (the tangent the Jacobian uses). */
  differential(df: Float64Array, dp: Float64Array): void;
  /** ψ(F) alone (J/m³). */
  energy(f: Float64Array): number;
  /**
   * The energy as a function of the right Cauchy–Green tensor, W(C) = ψ(F) for C = FᵀF and
   * det F > 0 (J/m³), and the second Piola–Kirchhoff stress S = 2 ∂W/∂C (Pa) into s (both
   * row-major, symmetric), at any symmetric positive definite C, not only one of an F at
   * hand: the energy–momentum force of the symmetric step takes S at the mean
   * ½ (C_t + C_{t+h}) (fem-effector.ts applyMeanForces). Every material here is isotropic
   * and frame-indifferent, so ψ depends on F through C alone (for det F > 0).
   */
  greenEnergy(c: Float64Array, s: Float64Array): number;
  /**
   * An upper bound (Pa) of the operator norm of the exact tangent dF ↦ dP = (∂²ψ/∂F²) : dF
   * (Frobenius norm on both sides) at a deformation gradient F known by `c`
   * (StretchBounds: bounds of the eigenvalues σ_i² of C = FᵀF, its invariants and det F):
   * the largest stiffness of the material there, whatever the tangent its Jacobian reports
   * (fem-effector.ts addExplicitRates; the explicit step's stability). max(2μ + 3λ, 2μ) at
   * rest for corotational and stvk, the tangent's norm; neo-hookean's, 6μ + 3λ there, does
   * not see its terms cancel.
   */
  tangentBound(c: StretchBounds): number;
  /**
   * The smallest principal stretch σ₃ (of F, det F > 0) at which the material still models
   * the solid, below which (or inverted, det F ≤ 0) a run ends `diverged`
   * (FemEffector.strainFault); absent: none, the material's energy bars compression itself.
   */
  readonly leastStretch?: number;
}

/**
 * What tangentBound reads of F, without its singular values σ₁ ≥ σ₂ ≥ σ₃ where F is not
 * inverted (an eigen-decomposition per element was twice the cost of the forces): with
 * C = FᵀF, I₁ = tr C = Σ σ_i², D = ‖C − I₁/3 I‖² and the deviations d_i = σ_i² − I₁/3
 * (Σ d_i = 0, Σ d_i² = D), |d_i| ≤ √(2D/3) (the extreme one when the other two are equal),
 * so σ_i² lies in [lo, hi] = [I₁/3 − √(2D/3), I₁/3 + √(2D/3)], exact at rest and in a
 * uniform stretch; I₂ = ‖cof F‖² = Σ_{j<k} σ_j² σ_k² = (I₁² − ‖C‖²)/2 and J = det F = σ₁σ₂σ₃
 * exactly (I₂ ≥ σ₁²σ₂², so also σ₃² ≥ J²/I₂). An inverted element (J ≤ 0) gets its
 * singular values (`sigma`, the eigenvalues of C; `exact`).
 */
export class StretchBounds {
  /** Bounds (≥ 0) of the eigenvalues σ_i² of FᵀF. */
  lo = 1;
  hi = 1;
  /** I₁ = ‖F‖², I₂ = ‖cof F‖² and J = det F. */
  i1 = 3;
  i2 = 3;
  j = 1;
  /** Whether `sigma` holds σ₁ ≥ σ₂ ≥ σ₃ ≥ 0 (set for J ≤ 0 only). */
  exact = false;
  readonly sigma = new Float64Array(3);
  private readonly c = new Float64Array(9);
  private readonly vectors = new Float64Array(9);

  /** Sets the bounds from F (row-major 3×3). */
  set(f: ArrayLike<number>): void {
    const c00 = f[0] * f[0] + f[3] * f[3] + f[6] * f[6];
    const c11 = f[1] * f[1] + f[4] * f[4] + f[7] * f[7];
    const c22 = f[2] * f[2] + f[5] * f[5] + f[8] * f[8];
    const c01 = f[0] * f[1] + f[3] * f[4] + f[6] * f[7];
    const c02 = f[0] * f[2] + f[3] * f[5] + f[6] * f[8];
    const c12 = f[1] * f[2] + f[4] * f[5] + f[7] * f[8];
    const i1 = c00 + c11 + c22;
    const m = i1 / 3;
    const off = 2 * (c01 * c01 + c02 * c02 + c12 * c12);
    const r = Math.sqrt((2 / 3) * ((c00 - m) ** 2 + (c11 - m) ** 2 + (c22 - m) ** 2 + off));
    const j =
      f[0] * (f[4] * f[8] - f[5] * f[7]) -
      f[1] * (f[3] * f[8] - f[5] * f[6]) +
      f[2] * (f[3] * f[7] - f[4] * f[6]);
    const i2 = 0.5 * (i1 * i1 - (c00 * c00 + c11 * c11 + c22 * c22 + off));
    this.i1 = i1;
    this.i2 = i2;
    this.j = j;
    this.hi = m + r;
    this.lo = Math.max(m - r, i2 > 0 ? (j * j) / i2 : 0, 0);
    this.exact = !(j > 0);
    if (!this.exact) return;
    const c = this.c;
    c[0] = c00;
    c[1] = c01;
    c[2] = c02;
    c[4] = c11;
    c[5] = c12;
    c[8] = c22;
    const sigma = this.sigma;
    symmetricEigen3(c, 0, sigma, 0, this.vectors, 0);
    for (let k = 0; k < 3; k++) sigma[k] = Math.sqrt(Math.max(sigma[k], 0));
    this.hi = sigma[0] * sigma[0];
    this.lo = sigma[2] * sigma[2];
  }
}

/**
 * The norm of the isotropic linear map dE ↦ λ tr(dE) I + 2μ dE on symmetric matrices (Pa):
 * its eigenvalues are 2μ + 3λ (dE ∝ I) and 2μ (the deviators).
 */
function linearModulus(mu: number, lambda: number): number {
  return Math.max(Math.abs(2 * mu + 3 * lambda), 2 * mu);
}

/** Lamé parameters [μ, λ] (Pa) of Young's modulus E (Pa) and Poisson's ratio ν. */
export function lame(youngModulus: number, poissonRatio: number): [number, number] {
  const e = youngModulus;
  const nu = poissonRatio;
  return [e / (2 * (1 + nu)), (e * nu) / ((1 + nu) * (1 - 2 * nu))];
}

export function createMaterial(
  name: MaterialName,
  youngModulus: number,
  poissonRatio: number,
  tangent: "exact" | "approximate" = "exact",
): ElasticMaterial {
  const [mu, lambda] = lame(youngModulus, poissonRatio);
  switch (name) {
    case "corotational":
      return new CorotationalMaterial(mu, lambda, tangent === "exact");
    case "stvk":
      return new StVenantKirchhoffMaterial(mu, lambda);
    case "neo-hookean":
      return new NeoHookeanMaterial(mu, lambda);
  }
}

/** Clamp of σ_j + σ_k relative to σ₁ in the exact corotational tangent (see header). */
const ROTATION_SUM_FLOOR = 1e-6;

export class CorotationalMaterial implements ElasticMaterial {
  readonly name = "corotational" as const;
  readonly positiveTangent: boolean;
  /** R of the polar decomposition F = R S at the last evaluate (row-major). */
  readonly r = new Float64Array(9);
  private readonly sigma = new Float64Array(3);
  private readonly v = new Float64Array(9);
  /** (tr(S) I − S)⁻¹ at the last evaluate (exact tangent; row-major, symmetric). */
  readonly minv = new Float64Array(9);
  private readonly t = new Float64Array(9);
  /** λ tr(S − I) − 2μ at the last evaluate: the factor of dR in dP = 2μ dF + c dR + λ tr(dS) R. */
  c = Number.NaN;

  constructor(
    readonly mu: number,
    readonly lambda: number,
    readonly exact: boolean,
  ) {
    this.positiveTangent = !exact;
  }

  evaluate(f: Float64Array, p: Float64Array): number {
    const { r, sigma, v, mu, lambda } = this;
    // tr(S − I) and ψ's first term μ Σ(σ_k − 1)² = μ ‖F − R‖² (S − I = Rᵀ(F − R)) need R
    // alone (nearestRotation, det F > 0), and the exact tangent (tr(S) I − S)⁻¹, by
    // cofactors of S = RᵀF unless a σ_j + σ_k would be clamped; otherwise the singular
    // values and vectors (polarDecomposition)
    let tr: number;
    let dev: number;
    if (nearestRotation(f, r) && (!this.exact || this.invertRotationSums(f))) {
      let rf = 0;
      dev = 0;
      for (let k = 0; k < 9; k++) {
        rf += r[k] * f[k];
        dev += (f[k] - r[k]) ** 2;
      }
      tr = rf - 3;
    } else {
      polarDecomposition(f, r, sigma, v);
      const e0 = sigma[0] - 1;
      const e1 = sigma[1] - 1;
      const e2 = sigma[2] - 1;
      tr = e0 + e1 + e2;
      dev = e0 * e0 + e1 * e1 + e2 * e2;
      if (this.exact) {
        const floor = ROTATION_SUM_FLOOR * Math.abs(sigma[0]) + 1e-300;
        const d0 = 1 / Math.max(sigma[1] + sigma[2], floor);
        const d1 = 1 / Math.max(sigma[0] + sigma[2], floor);
        const d2 = 1 / Math.max(sigma[0] + sigma[1], floor);
        spectralSum(v, d0, d1, d2, this.minv);
      }
    }
    const lt = lambda * tr;
    for (let k = 0; k < 9; k++) p[k] = 2 * mu * (f[k] - r[k]) + lt * r[k];
    this.c = lt - 2 * mu;
    return mu * dev + 0.5 * lambda * tr * tr;
  }

  /**
   * W(C) = μ Σ (σ_k − 1)² + λ/2 (Σ σ_k − 3)² with σ_k² the eigenvalues of C (U = √C the
   * stretch, ψ's S − I = U − I for det F > 0), and S = 2 ∂W/∂C = Σ_k s_k v_k ⊗ v_k with
   * s_k = (1/σ_k) ∂W/∂σ_k = (2μ (σ_k − 1) + λ tr(U − I))/σ_k (∂σ_k/∂C = v_k ⊗ v_k/(2σ_k)).
   */
  greenEnergy(c: Float64Array, s: Float64Array): number {
    const { sigma, v, mu, lambda } = this;
    symmetricEigen3(c, 0, sigma, 0, v, 0);
    let tr = 0;
    let dev = 0;
    for (let k = 0; k < 3; k++) {
      sigma[k] = Math.sqrt(Math.max(sigma[k], 0));
      tr += sigma[k] - 1;
      dev += (sigma[k] - 1) ** 2;
    }
    const d0 = (2 * mu * (sigma[0] - 1) + lambda * tr) / sigma[0];
    const d1 = (2 * mu * (sigma[1] - 1) + lambda * tr) / sigma[1];
    const d2 = (2 * mu * (sigma[2] - 1) + lambda * tr) / sigma[2];
    spectralSum(v, d0, d1, d2, s);
    return mu * dev + 0.5 * lambda * tr * tr;
  }

  /**
   * minv ← M⁻¹, M = tr(S) I − S with S = RᵀF (its symmetric part; r holds R of det F > 0,
   * so S is positive definite and M's eigenvalues σ_j + σ_k positive), by cofactors, when
   * none of them is below the clamp ROTATION_SUM_FLOOR σ₁: the smallest eigenvalue of the
   * SPD M is at least det M / tr(M)² and σ₁ ≤ tr(S), so det M ≥ ROTATION_SUM_FLOOR tr(S)
   * tr(M)² suffices. Returns false (minv untouched) otherwise: the clamped form then.
   */
  private invertRotationSums(f: Float64Array): boolean {
    const r = this.r;
    // S_ij = Σ_k R_ki F_kj
    const s00 = r[0] * f[0] + r[3] * f[3] + r[6] * f[6];
    const s11 = r[1] * f[1] + r[4] * f[4] + r[7] * f[7];
    const s22 = r[2] * f[2] + r[5] * f[5] + r[8] * f[8];
    const s01 =
      0.5 * (r[0] * f[1] + r[3] * f[4] + r[6] * f[7] + (r[1] * f[0] + r[4] * f[3] + r[7] * f[6]));
    const s02 =
      0.5 * (r[0] * f[2] + r[3] * f[5] + r[6] * f[8] + (r[2] * f[0] + r[5] * f[3] + r[8] * f[6]));
    const s12 =
      0.5 * (r[1] * f[2] + r[4] * f[5] + r[7] * f[8] + (r[2] * f[1] + r[5] * f[4] + r[8] * f[7]));
    const trS = s00 + s11 + s22;
    const m00 = s11 + s22;
    const m11 = s00 + s22;
    const m22 = s00 + s11;
    // off-diagonal of M: −s01, −s02, −s12
    const c00 = m11 * m22 - s12 * s12;
    const c01 = s01 * m22 + s02 * s12;
    const c02 = s01 * s12 + m11 * s02;
    const c11 = m00 * m22 - s02 * s02;
    const c12 = s01 * s02 + m00 * s12;
    const c22 = m00 * m11 - s01 * s01;
    const det = m00 * c00 - s01 * c01 - s02 * c02;
    const trM = 2 * trS;
    if (!(det >= ROTATION_SUM_FLOOR * trS * trM * trM) || !Number.isFinite(det)) return false;
    const inv = 1 / det;
    const m = this.minv;
    m[0] = c00 * inv;
    m[1] = m[3] = c01 * inv;
    m[2] = m[6] = c02 * inv;
    m[4] = c11 * inv;
    m[5] = m[7] = c12 * inv;
    m[8] = c22 * inv;
    return true;
  }

  /**
   * With RᵀdF = X = X_s + X_k (symmetric and skew parts), RᵀdP = (2μ X_s + λ tr(X_s) I) +
   * (2μ X_k + c [w]×) with [w]× from (tr(S) I − S) w = 2 vee(X_k): the two parts map onto
   * themselves, the first with linearModulus, the second, along the eigenvectors of S,
   * with 2μ + 2c/s, s = σ_j + σ_k (clamped as in evaluate) and c = λ (Σ σ_i − 3) − 2μ
   * (zero at rest, where the rotation's variation cancels 2μ X_k). For J > 0 its size is
   * largest at a corner of s ∈ [max(2√lo, 2 √(J/σ₁)), 2√hi] (σ₂ + σ₃ ≥ 2 √(σ₂σ₃) =
   * 2 √(J/σ₁)) and Σ σ_i ∈ [max(3√lo, 3 J^⅓), min(3√hi, √(3 I₁))] (the means' and
   * Cauchy–Schwarz's inequalities); an inverted element's signed σ (the smallest negative,
   * as the polar decomposition's) give s and Σ σ_i exactly.
   */
  tangentBound(b: StretchBounds): number {
    const { mu, lambda } = this;
    const top = Math.sqrt(b.hi);
    // evaluate's clamp ROTATION_SUM_FLOOR σ₁, at most as large (σ₁² ≥ I₁/3)
    const floor = ROTATION_SUM_FLOOR * Math.sqrt(b.i1 / 3) + 1e-300;
    let sLo: number;
    let sHi: number;
    let sumLo: number;
    let sumHi: number;
    if (b.exact) {
      const s0 = b.sigma[0];
      const s1 = b.sigma[1];
      const s2 = b.sigma[2];
      sLo = s1 - s2;
      sHi = s0 + s1;
      sumLo = s0 + s1 - s2;
      sumHi = sumLo;
    } else {
      sLo = Math.max(2 * Math.sqrt(b.lo), 2 * Math.sqrt(b.j / top));
      sHi = 2 * top;
      sumLo = Math.max(3 * Math.sqrt(b.lo), 3 * Math.cbrt(b.j));
      sumHi = Math.min(3 * top, Math.sqrt(3 * b.i1));
    }
    const cLo = lambda * (sumLo - 3) - 2 * mu;
    const cHi = lambda * (sumHi - 3) - 2 * mu;
    // |2μ + 2c/s| at the corners: 1/s at its ends, c at its ends
    const rLo = 2 / Math.max(sHi, floor);
    const rHi = 2 / Math.max(sLo, floor);
    return Math.max(
      linearModulus(mu, lambda),
      Math.abs(2 * mu + cLo * rLo),
      Math.abs(2 * mu + cLo * rHi),
      Math.abs(2 * mu + cHi * rLo),
      Math.abs(2 * mu + cHi * rHi),
    );
  }

  differential(df: Float64Array, dp: Float64Array): void {
    const { r, t, mu, lambda } = this;
    // T = Rᵀ dF
    for (let i = 0; i < 3; i++)
      for (let j = 0; j < 3; j++)
        t[3 * i + j] = r[i] * df[j] + r[3 + i] * df[3 + j] + r[6 + i] * df[6 + j];
    const trT = t[0] + t[4] + t[8];
    if (!this.exact) {
      // dP = R [2μ sym(T) + λ tr(T) I]
      const q00 = 2 * mu * t[0] + lambda * trT;
      const q11 = 2 * mu * t[4] + lambda * trT;
      const q22 = 2 * mu * t[8] + lambda * trT;
      const q01 = mu * (t[1] + t[3]);
      const q02 = mu * (t[2] + t[6]);
      const q12 = mu * (t[5] + t[7]);
      for (let i = 0; i < 3; i++) {
        const a = r[3 * i];
        const b = r[3 * i + 1];
        const c = r[3 * i + 2];
        dp[3 * i] = a * q00 + b * q01 + c * q02;
        dp[3 * i + 1] = a * q01 + b * q11 + c * q12;
        dp[3 * i + 2] = a * q02 + b * q12 + c * q22;
      }
      return;
    }
    // w = (tr(S) I − S)⁻¹ vee(T − Tᵀ); dR = R [w]×
    const a0 = t[7] - t[5];
    const a1 = t[2] - t[6];
    const a2 = t[3] - t[1];
    const m = this.minv;
    const w0 = m[0] * a0 + m[1] * a1 + m[2] * a2;
    const w1 = m[3] * a0 + m[4] * a1 + m[5] * a2;
    const w2 = m[6] * a0 + m[7] * a1 + m[8] * a2;
    const c = this.c;
    const lt = lambda * trT;
    for (let i = 0; i < 3; i++) {
      const x = r[3 * i];
      const y = r[3 * i + 1];
      const z = r[3 * i + 2];
      // row i of R [w]×: [y w2 − z w1, z w0 − x w2, x w1 − y w0]
      dp[3 * i] = 2 * mu * df[3 * i] + c * (y * w2 - z * w1) + lt * x;
      dp[3 * i + 1] = 2 * mu * df[3 * i + 1] + c * (z * w0 - x * w2) + lt * y;
      dp[3 * i + 2] = 2 * mu * df[3 * i + 2] + c * (x * w1 - y * w0) + lt * z;
    }
  }

  energy(f: Float64Array): number {
    const { r, sigma, v } = this;
    polarDecomposition(f, r, sigma, v);
    const e0 = sigma[0] - 1;
    const e1 = sigma[1] - 1;
    const e2 = sigma[2] - 1;
    const tr = e0 + e1 + e2;
    return this.mu * (e0 * e0 + e1 * e1 + e2 * e2) + 0.5 * this.lambda * tr * tr;
  }
}

export class StVenantKirchhoffMaterial implements ElasticMaterial {
  readonly name = "stvk" as const;
  readonly positiveTangent = false;
  /**
   * 1/√3: compressed along a principal axis (the others at rest), P₁₁ = (λ + 2μ)(s³ − s)/2
   * stops growing at s = 1/√3 (dP₁₁/ds = (λ + 2μ)(3s² − 1)/2), and a uniform compression's
   * too (P = (3λ/2 + μ)(s³ − s)); ψ has no barrier at det F = 0 (ψ(0) = (3μ/4 + 9λ/8) for
   * F = 0) and a rest state in every reflection (F = −I): a step that crushes an element
   * past it lands on the inverted branch and runs on there, energy and all (a block
   * compressed at 100/s, h = 10 ms: inverted in its first step, its energy 300 J → 1.7e4 J).
   */
  readonly leastStretch = 1 / Math.sqrt(3);
  private readonly f = new Float64Array(9);
  /** Second Piola–Kirchhoff stress at the last evaluate (symmetric). */
  private readonly s = new Float64Array(9);
  private readonly e = new Float64Array(9);

  constructor(
    readonly mu: number,
    readonly lambda: number,
  ) {}

  evaluate(f: Float64Array, p: Float64Array): number {
    const { s, e, mu, lambda } = this;
    this.f.set(f);
    greenStrain(f, e);
    const tr = e[0] + e[4] + e[8];
    let ee = 0;
    for (let k = 0; k < 9; k++) {
      s[k] = 2 * mu * e[k];
      ee += e[k] * e[k];
    }
    s[0] += lambda * tr;
    s[4] += lambda * tr;
    s[8] += lambda * tr;
    matMul(f, s, p);
    return mu * ee + 0.5 * lambda * tr * tr;
  }

  /** W(C) = μ E : E + λ/2 tr(E)², E = ½ (C − I), and S = λ tr(E) I + 2μ E (quadratic in C). */
  greenEnergy(c: Float64Array, s: Float64Array): number {
    const { mu, lambda } = this;
    const tr = 0.5 * (c[0] + c[4] + c[8] - 3);
    let ee = 0;
    for (let k = 0; k < 9; k++) {
      const e = 0.5 * (c[k] - (k % 4 === 0 ? 1 : 0));
      s[k] = 2 * mu * e;
      ee += e * e;
    }
    s[0] += lambda * tr;
    s[4] += lambda * tr;
    s[8] += lambda * tr;
    return mu * ee + 0.5 * lambda * tr * tr;
  }

  /**
   * dP = dF S₂ + F (λ tr(dE) I + 2μ dE), dE = sym(Fᵀ dF): at most ‖S₂‖₂ ‖dF‖ + σ₁²
   * linearModulus ‖dF‖, S₂'s eigenvalues λ tr(E) + 2μ E_i with E_i = (σ_i² − 1)/2 in
   * [(lo − 1)/2, (hi − 1)/2] and tr(E) = (I₁ − 3)/2.
   */
  tangentBound(b: StretchBounds): number {
    const { mu, lambda } = this;
    const lt = 0.5 * lambda * (b.i1 - 3);
    const stress = Math.max(Math.abs(lt + mu * (b.lo - 1)), Math.abs(lt + mu * (b.hi - 1)));
    return stress + b.hi * linearModulus(mu, lambda);
  }

  differential(df: Float64Array, dp: Float64Array): void {
    const { f, s, mu, lambda } = this;
    const de = this.e;
    // dE = sym(Fᵀ dF) (e is free after evaluate: the stress is in s)
    for (let i = 0; i < 3; i++)
      for (let j = i; j < 3; j++) {
        const x =
          0.5 *
          (f[i] * df[j] +
            f[3 + i] * df[3 + j] +
            f[6 + i] * df[6 + j] +
            f[j] * df[i] +
            f[3 + j] * df[3 + i] +
            f[6 + j] * df[6 + i]);
        de[3 * i + j] = x;
        de[3 * j + i] = x;
      }
    const tr = lambda * (de[0] + de[4] + de[8]);
    for (let k = 0; k < 9; k++) de[k] *= 2 * mu;
    de[0] += tr;
    de[4] += tr;
    de[8] += tr;
    // dP = dF S + F dS
    for (let i = 0; i < 3; i++)
      for (let j = 0; j < 3; j++)
        dp[3 * i + j] =
          df[3 * i] * s[j] +
          df[3 * i + 1] * s[3 + j] +
          df[3 * i + 2] * s[6 + j] +
          f[3 * i] * de[j] +
          f[3 * i + 1] * de[3 + j] +
          f[3 * i + 2] * de[6 + j];
  }

  energy(f: Float64Array): number {
    const e = this.e;
    greenStrain(f, e);
    const tr = e[0] + e[4] + e[8];
    let ee = 0;
    for (let k = 0; k < 9; k++) ee += e[k] * e[k];
    return this.mu * ee + 0.5 * this.lambda * tr * tr;
  }
}

/** J below which the neo-Hookean volumetric term continues as its Taylor expansion. */
export const NEO_HOOKEAN_J0 = 0.01;

export class NeoHookeanMaterial implements ElasticMaterial {
  readonly name = "neo-hookean" as const;
  readonly positiveTangent = false;
  private readonly f = new Float64Array(9);
  private readonly cof = new Float64Array(9);
  private readonly dcof = new Float64Array(9);
  /** The eigenvalues and vectors of C (greenEnergy). */
  private readonly eig = new Float64Array(3);
  private readonly vec = new Float64Array(9);
  /** h′(J) and h″(J) at the last evaluate. */
  private h1 = Number.NaN;
  private h2 = Number.NaN;
  /** h, h′, h″ at J₀ (the continuation below it). */
  private readonly h0: number;
  private readonly h01: number;
  private readonly h02: number;

  constructor(
    readonly mu: number,
    readonly lambda: number,
  ) {
    const l = Math.log(NEO_HOOKEAN_J0);
    this.h0 = -mu * l + 0.5 * lambda * l * l;
    this.h01 = (lambda * l - mu) / NEO_HOOKEAN_J0;
    this.h02 = (mu + lambda - lambda * l) / (NEO_HOOKEAN_J0 * NEO_HOOKEAN_J0);
  }

  evaluate(f: Float64Array, p: Float64Array): number {
    const { cof, mu } = this;
    this.f.set(f);
    cofactor(f, cof);
    const j = f[0] * cof[0] + f[1] * cof[1] + f[2] * cof[2];
    const h = this.volumetric(j);
    for (let k = 0; k < 9; k++) p[k] = mu * f[k] + this.h1 * cof[k];
    let i1 = 0;
    for (let k = 0; k < 9; k++) i1 += f[k] * f[k];
    return 0.5 * mu * (i1 - 3) + h;
  }

  /**
   * dP = μ dF + h″(J) (cof F : dF) cof F + h′(J) d(cof F): at most μ + |h″| ‖cof F‖² +
   * |h′| (σ₁ + σ₂) times ‖dF‖ (in the singular frames d(cof F) maps dF_jj, dF_kk to the
   * diagonal with weights σ_k, σ_j and an off-diagonal dF_kj to σ_i times it, of norm at
   * most the largest row sum σ₁ + σ₂ ≤ 2√hi); ‖cof F‖² = I₂.
   */
  tangentBound(b: StretchBounds): number {
    this.volumetric(b.j);
    return this.mu + Math.abs(this.h2) * b.i2 + 2 * Math.abs(this.h1) * Math.sqrt(b.hi);
  }

  differential(df: Float64Array, dp: Float64Array): void {
    const { f, cof, dcof, mu, h1, h2 } = this;
    let dj = 0;
    for (let k = 0; k < 9; k++) dj += cof[k] * df[k];
    // d(cof F): column c is the cross product of the other two columns (cyclic)
    for (let c = 0; c < 3; c++) {
      const a = (c + 1) % 3;
      const b = (c + 2) % 3;
      // columns a, b of F and dF: d(f_a × f_b) = df_a × f_b + f_a × df_b
      const fa0 = f[a];
      const fa1 = f[3 + a];
      const fa2 = f[6 + a];
      const fb0 = f[b];
      const fb1 = f[3 + b];
      const fb2 = f[6 + b];
      const da0 = df[a];
      const da1 = df[3 + a];
      const da2 = df[6 + a];
      const db0 = df[b];
      const db1 = df[3 + b];
      const db2 = df[6 + b];
      dcof[c] = da1 * fb2 - da2 * fb1 + fa1 * db2 - fa2 * db1;
      dcof[3 + c] = da2 * fb0 - da0 * fb2 + fa2 * db0 - fa0 * db2;
      dcof[6 + c] = da0 * fb1 - da1 * fb0 + fa0 * db1 - fa1 * db0;
    }
    const s = h2 * dj;
    for (let k = 0; k < 9; k++) dp[k] = mu * df[k] + s * cof[k] + h1 * dcof[k];
  }

  /**
   * W(C) = μ/2 (tr C − 3) + h(J), J = √det C, and S = μ I + h′(J) J C⁻¹ (∂J/∂C = J C⁻¹/2);
   * C⁻¹ J² = cof C. Near rest W's terms linear in the strain cancel (μ/2 tr(C − I) against
   * −μ ln J), and the rounding of C would be 1 % of W at a strain of 1e-7 (the energy–
   * momentum force divides a difference of W by ‖ΔC‖², fem-effector.ts): so W is summed
   * over the eigenvalues c_k of C as μ/2 Σ (c_k − 1 − ln c_k) + λ/2 (ln J)² (ln c_k by
   * log1p), quadratic in each c_k − 1; below J₀ as μ/2 (tr C − 3) + h(J).
   */
  greenEnergy(c: Float64Array, s: Float64Array): number {
    const { cof, eig, vec, mu } = this;
    cofactor(c, cof);
    const det = c[0] * cof[0] + c[1] * cof[1] + c[2] * cof[2];
    const j = Math.sqrt(Math.max(det, 0));
    const h = this.volumetric(j);
    const k = j > 0 ? this.h1 / j : 0;
    for (let i = 0; i < 9; i++) s[i] = k * cof[i];
    s[0] += mu;
    s[4] += mu;
    s[8] += mu;
    if (!(j >= NEO_HOOKEAN_J0)) return 0.5 * mu * (c[0] + c[4] + c[8] - 3) + h;
    symmetricEigen3(c, 0, eig, 0, vec, 0);
    let isochoric = 0;
    let lnJ = 0;
    for (let i = 0; i < 3; i++) {
      const x = eig[i] - 1;
      const l = Math.log1p(x);
      isochoric += x - l;
      lnJ += 0.5 * l;
    }
    return 0.5 * mu * isochoric + 0.5 * this.lambda * lnJ * lnJ;
  }

  energy(f: Float64Array): number {
    cofactor(f, this.cof);
    const c = this.cof;
    const j = f[0] * c[0] + f[1] * c[1] + f[2] * c[2];
    let i1 = 0;
    for (let k = 0; k < 9; k++) i1 += f[k] * f[k];
    return 0.5 * this.mu * (i1 - 3) + this.volumetric(j);
  }

  /** h(J); sets h1 = h′(J), h2 = h″(J). */
  private volumetric(j: number): number {
    const { mu, lambda } = this;
    if (j >= NEO_HOOKEAN_J0) {
      const l = Math.log(j);
      this.h1 = (lambda * l - mu) / j;
      this.h2 = (mu + lambda - lambda * l) / (j * j);
      return -mu * l + 0.5 * lambda * l * l;
    }
    const d = j - NEO_HOOKEAN_J0;
    this.h1 = this.h01 + this.h02 * d;
    this.h2 = this.h02;
    return this.h0 + this.h01 * d + 0.5 * this.h02 * d * d;
  }
}

/** e = ½ (FᵀF − I). */
/**
 * out = Σ_k d_k v_k ⊗ v_k (row-major 3×3, symmetric), v_k the eigenvectors in v's columns
 * (v[3 i + k] is v_k's component i): a symmetric matrix from its spectrum.
 */
function spectralSum(v: Float64Array, d0: number, d1: number, d2: number, out: Float64Array): void {
  for (let i = 0; i < 3; i++)
    for (let j = i; j < 3; j++) {
      const x =
        v[3 * i] * d0 * v[3 * j] +
        v[3 * i + 1] * d1 * v[3 * j + 1] +
        v[3 * i + 2] * d2 * v[3 * j + 2];
      out[3 * i + j] = x;
      out[3 * j + i] = x;
    }
}

function greenStrain(f: Float64Array, e: Float64Array): void {
  for (let i = 0; i < 3; i++)
    for (let j = i; j < 3; j++) {
      const x = 0.5 * (f[i] * f[j] + f[3 + i] * f[3 + j] + f[6 + i] * f[6 + j] - (i === j ? 1 : 0));
      e[3 * i + j] = x;
      e[3 * j + i] = x;
    }
}

/** out = a b (3×3, row-major; out aliases neither). */
function matMul(a: Float64Array, b: Float64Array, out: Float64Array): void {
  for (let i = 0; i < 3; i++)
    for (let j = 0; j < 3; j++)
      out[3 * i + j] = a[3 * i] * b[j] + a[3 * i + 1] * b[3 + j] + a[3 * i + 2] * b[6 + j];
}

/** cof F = ∂(det F)/∂F: column c is the cross product of columns c+1 and c+2 of F. */
export function cofactor(f: ArrayLike<number>, out: Float64Array): void {
  out[0] = f[4] * f[8] - f[5] * f[7];
  out[1] = f[5] * f[6] - f[3] * f[8];
  out[2] = f[3] * f[7] - f[4] * f[6];
  out[3] = f[2] * f[7] - f[1] * f[8];
  out[4] = f[0] * f[8] - f[2] * f[6];
  out[5] = f[1] * f[6] - f[0] * f[7];
  out[6] = f[1] * f[5] - f[2] * f[4];
  out[7] = f[2] * f[3] - f[0] * f[5];
  out[8] = f[0] * f[4] - f[1] * f[3];
}
