/**
 * One step of the oscillator x'' = −ω² x under the engine's one-step schemes, solved in
 * closed form here (the schemes are linear in (x, v) for a linear spring, so Newton's
 * first iterate is the step):
 * - the θ-method with force weight w (integrators/theta-scheme.ts):
 *     v₁ = v₀ − hω² ((1 − w) x₀ + w x₁),   x₁ = x₀ + h ((1 − θ) v₀ + θ v₁)
 *   ⇒ v₁ (1 + h²ω² wθ) = v₀ − hω² x₀ − h²ω² w (1 − θ) v₀;
 * - Newmark (β, γ) with a₀ = −ω² x₀:
 *     x₁ = x₀ + h v₀ + h² ((½ − β) a₀ + β a₁),  a₁ = −ω² x₁,  v₁ = v₀ + h ((1 − γ) a₀ + γ a₁).
 */

export interface OscillatorState {
  x: number;
  v: number;
}

export function thetaMethodStep(
  s: OscillatorState,
  h: number,
  omega2: number,
  theta: number,
  w: number,
): OscillatorState {
  const v =
    (s.v - h * omega2 * s.x - h * h * omega2 * w * (1 - theta) * s.v) /
    (1 + h * h * omega2 * w * theta);
  return { x: s.x + h * ((1 - theta) * s.v + theta * v), v };
}

export function newmarkStep(
  s: OscillatorState,
  h: number,
  omega2: number,
  beta: number,
  gamma: number,
): OscillatorState {
  const a0 = -omega2 * s.x;
  const x = (s.x + h * s.v + h * h * (0.5 - beta) * a0) / (1 + beta * h * h * omega2);
  const a1 = -omega2 * x;
  return { x, v: s.v + h * ((1 - gamma) * a0 + gamma * a1) };
}

/** The generalized-α state: (x, v), the free acceleration A = −ω² x and the pseudo-acceleration a. */
export interface AlphaState extends OscillatorState {
  A: number;
  a: number;
}

/**
 * One step of Chung–Hulbert's generalized-α (integrators/generalized-alpha.ts, no joints):
 *   (1 − α_m) a₁ + α_m a₀ = (1 − α_f) A₁ + α_f A₀,   A₁ = −ω² x₁,
 *   x₁ = x₀ + h v₀ + h² ((½ − β) a₀ + β a₁),   v₁ = v₀ + h ((1 − γ) a₀ + γ a₁),
 * solved for x₁ (linear): x₁ (1 + h²β (1 − α_f) ω²/(1 − α_m)) = x₀ + h v₀ + h²(½ − β) a₀
 * + h²β (α_f A₀ − α_m a₀)/(1 − α_m). The memory starts with a₀ = A₀.
 */
export function generalizedAlphaStep(
  s: AlphaState,
  h: number,
  omega2: number,
  c: { alphaM: number; alphaF: number; beta: number; gamma: number },
): AlphaState {
  const { alphaM: am, alphaF: af, beta, gamma } = c;
  const X = s.x + h * s.v + h * h * (0.5 - beta) * s.a;
  const x =
    (X + (h * h * beta * (af * s.A - am * s.a)) / (1 - am)) /
    (1 + (h * h * beta * (1 - af) * omega2) / (1 - am));
  const A = -omega2 * x;
  const a = ((1 - af) * A + af * s.A - am * s.a) / (1 - am);
  return { x, v: s.v + h * ((1 - gamma) * s.a + gamma * a), A, a };
}
