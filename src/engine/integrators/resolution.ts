/**
 * Whether the step resolves the model's stiffest springs, and the Newmark parameters that
 * follow when the user sets none.
 *
 * A spring of stiffness k between a moving end of mass m and a heavier or fixed one
 * oscillates at ω = √(k/m) (rad/s). The trapezoidal rule (Newmark β = ¼, γ = ½) neither
 * damps nor resolves a mode with h ω ≫ 1: it keeps its amplitude, and on springs that also
 * turn (a cloth, a net) the nonlinearity feeds it, so the springs overstretch while every
 * step converges — the 32 × 32 cloth of k = 1e4 N/m (h ω ≈ 13 at h = 1/240 s) ends at 2.6 %
 * strain where its true strain is about 0.3 %. Newmark's dissipative member γ = 0.6,
 * β = (γ + ½)²/4 = 0.3025 (spectral radius (1.5 − γ)/(γ + ½) = 0.82 as h ω → ∞) damps
 * those modes and ends that cloth at 0.5 %, at the price of first-order accuracy: a
 * resolved mode of frequency ω loses a fraction ≈ (γ − ½) h ω of its amplitude per period.
 * So the default is ¼, ½ unless some spring is not resolved (h ω > 1), and the damped
 * member then; a user who sets beta or gamma gets what they set.
 *
 * A network of particles and springs alone whose every mode the step resolves well, h ω_max
 * ≤ CENTRAL_DIFFERENCE_H_OMEGA with ω_max bounded from above (springNetworkFrequencyBound),
 * takes the central difference instead (β = 0, γ = ½): explicit in the positions, stable
 * for h ω_max < 2, second order like the trapezoidal rule and with half its phase error
 * (the frequency of a mode it resolves comes out ω (1 + (h ω)²/24) against the trapezoidal
 * rule's ω (1 − (h ω)²/12)), and with every force affine in the velocities its step is one
 * force evaluation and one solve with M + γ h D, D the dashpots' (acceleration-step.ts,
 * `solve`). On the benchmark's soft cloth (32 × 32, k = 10 N/m, h = 1/240 s, the bound's
 * h ω_max 1.69) the positions after 50 and 100 steps are 1.0e-4 and 4.7e-4 m from the run
 * at h/16, against 2.0e-4 and 8.6e-4 m for the trapezoidal rule, at 1.6 times its speed
 * (bench/README.md, "Central difference").
 */
import type { ModelSpec } from "../../../schemas/model";

/** h ω beyond which a spring's period is not resolved by the step. */
export const UNRESOLVED_H_OMEGA = 1;

/**
 * h ω_max up to which a spring network takes the central difference: its stability limit
 * is 2; the margin keeps the growth of a mode at the limit, which a bound near it would
 * let through, out of reach of the bound's slack.
 */
export const CENTRAL_DIFFERENCE_H_OMEGA = 1.8;

/** Newmark's parameters when the step resolves every spring, and when it does not. */
export const TRAPEZOIDAL = { beta: 0.25, gamma: 0.5 } as const;
export const DAMPED_NEWMARK = { beta: 0.3025, gamma: 0.6 } as const;
/** The central difference, for spring networks the step resolves well. */
export const CENTRAL_DIFFERENCE = { beta: 0, gamma: 0.5 } as const;

/**
 * For a model of particles (and fixed bodies) joined by springs, under gravity, loads and
 * dampers alone, an upper bound of its highest frequency ω_max (rad/s); null for any other
 * model (rigid bodies that move, joints, motors, actuators, contact, fem, frame springs).
 * ω_max² is the largest eigenvalue of M^{-1/2} K M^{-1/2}, K the tangent stiffness, whose
 * block for a spring is k ûûᵀ + (s/l)(I − ûûᵀ) with the tension's elastic part
 * s/l = k (l − l0)/l < k: of norm at most k in any state (a compressed spring's negative
 * s/l lowers the eigenvalues; the dashpot's share of the tension, c l̇/l, is left out:
 * small against k for a cloth's light dashpots). So by Gershgorin's theorem for blocks,
 *   ω_max² ≤ max_i Σ_{springs s at i} k_s (1 + √(m_i/m_j)) / m_i
 * (m_j the other end's mass; a fixed end adds k_s/m_i alone). `massOf` gives a body's mass
 * by id (0 for a fixed one or "ground").
 */
export function springNetworkFrequencyBound(
  model: Pick<
    ModelSpec,
    "bodies" | "forces" | "joints" | "motors" | "actuators" | "fem" | "contact"
  >,
  massOf: (id: string) => number,
): number | null {
  if (
    model.joints.length > 0 ||
    model.motors.length > 0 ||
    model.actuators.length > 0 ||
    model.fem.length > 0 ||
    model.contact != null ||
    model.bodies.some((b) => !b.fixed && b.kind !== "particle") ||
    model.forces.some((f) => f.type === "frameSpring")
  )
    return null;
  const sum = new Map<string, number>();
  const add = (id: string, k: number) => sum.set(id, (sum.get(id) ?? 0) + k);
  for (const f of model.forces) {
    if (f.type !== "spring" || f.stiffness === 0) continue;
    const ma = massOf(f.a.body);
    const mb = massOf(f.b.body);
    if (ma > 0) add(f.a.body, f.stiffness * (1 + (mb > 0 ? Math.sqrt(ma / mb) : 0)));
    if (mb > 0) add(f.b.body, f.stiffness * (1 + (ma > 0 ? Math.sqrt(mb / ma) : 0)));
  }
  let omega2 = 0;
  for (const [id, k] of sum) omega2 = Math.max(omega2, k / massOf(id));
  return Math.sqrt(omega2);
}

/**
 * The largest ω = √(k/m) (rad/s) over the model's springs, m the lighter moving end's mass
 * (kg; `massOf` gives a body's or FEM node's mass by id, 0 for a fixed one or "ground"; a
 * rigid end counts with its mass: the spring's translational mode); 0 without springs or
 * when no spring has a moving end.
 */
export function stiffestSpringFrequency(
  forces: ModelSpec["forces"],
  massOf: (id: string) => number,
): number {
  const moving = (id: string) => massOf(id) || Number.POSITIVE_INFINITY;
  let omega = 0;
  for (const f of forces) {
    if (f.type !== "spring" || f.stiffness === 0) continue;
    const m = Math.min(moving(f.a.body), moving(f.b.body));
    if (Number.isFinite(m)) omega = Math.max(omega, Math.sqrt(f.stiffness / m));
  }
  return omega;
}

/**
 * Newmark's β and γ: the user's where set (an unset one takes its trapezoidal value), else
 * the central difference for a spring network (`networkFrequency`, the bound of
 * springNetworkFrequencyBound, or null) with h ω_max ≤ CENTRAL_DIFFERENCE_H_OMEGA, else
 * the trapezoidal rule when h·ω resolves the stiffest spring, else the damped member.
 */
export function newmarkParameters(
  set: { beta?: number; gamma?: number },
  h: number,
  springFrequency: number,
  networkFrequency: number | null = null,
): { beta: number; gamma: number } {
  if (set.beta !== undefined || set.gamma !== undefined)
    return { beta: set.beta ?? TRAPEZOIDAL.beta, gamma: set.gamma ?? TRAPEZOIDAL.gamma };
  if (networkFrequency !== null && h * networkFrequency <= CENTRAL_DIFFERENCE_H_OMEGA)
    return CENTRAL_DIFFERENCE;
  return h * springFrequency > UNRESOLVED_H_OMEGA ? DAMPED_NEWMARK : TRAPEZOIDAL;
}
