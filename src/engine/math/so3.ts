/**
 * Coefficients of the inverse Jacobians of SO(3)'s exponential map. With
 * exp(φ + δ) = exp(J_l(φ) δ) exp(φ) = exp(φ) exp(J_r(φ) δ) (rotation vectors in rad),
 *   J_l⁻¹(φ) = 1 − ½ [φ]× + β(θ) [φ]×²,   J_r⁻¹(φ) = J_l⁻ᵀ(φ) = 1 + ½ [φ]× + β(θ) [φ]×²,
 *   β(θ) = 1/θ² − cot(θ/2)/(2θ) = 1/12 + θ²/720 + θ⁴/30240 + …,   θ = |φ|
 * (finite for θ < 2π; Chirikjian, "Stochastic Models, Information Theory, and Lie Groups",
 * vol. 2, §10.6). Both functions take θ² and use the series where the closed form cancels.
 */

/** β(θ) = 1/θ² − cot(θ/2)/(2θ) of θ² = t2 (rad²). */
export function expInverseBeta(t2: number): number {
  if (t2 < 1e-4) return 1 / 12 + t2 / 720 + (t2 * t2) / 30240;
  const t = Math.sqrt(t2);
  return 1 / t2 - Math.cos(0.5 * t) / (2 * t * Math.sin(0.5 * t));
}

/**
 * β′(θ)/θ = −2/θ⁴ + cot(θ/2)/(2θ³) + 1/(4θ² sin²(θ/2)) = 1/360 + θ²/7560 + θ⁴/201600 + …
 * of θ² = t2 (rad²): dβ = (β′/θ) φᵀ dφ, the change of β with φ.
 */
export function expInverseBetaSlope(t2: number): number {
  if (t2 < 1e-2) return 1 / 360 + t2 / 7560 + (t2 * t2) / 201600;
  const t = Math.sqrt(t2);
  const s = Math.sin(0.5 * t);
  return -2 / (t2 * t2) + Math.cos(0.5 * t) / (2 * t2 * t * s) + 1 / (4 * t2 * s * s);
}
