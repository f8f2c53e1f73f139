/**
 * A box (1 kg, 0.4 × 0.2 × 0.3 m: half width b = 0.2 along x, half height c = 0.15)
 * released from rest tilted α₀ = 0.1 rad about one bottom edge (along y) on a frictionless
 * floor at e = 1, moreau-jean at h = 1/240 s, for 10 s.
 * Closed form. Frictionless, the floor pushes only vertically: the centre's x stays, its
 * height z(θ) = b sin θ + c cos θ on the pivot edge, ż = (b cos θ − c sin θ) θ̇, so
 *   ½ (I_c + m (b cos θ − c sin θ)²) θ̇² + m g z(θ) = m g z(α₀),   I_c = m (b² + c²)/3,
 * and the fall from α₀ to flat takes t_q = ∫₀^α₀ dθ / θ̇(θ) (quadrature below, θ = α₀(1 − s²)
 * to take the 1/√ end at α₀). Landing flat on both edges, Newton's law at e = 1 on each
 * (the frictionless impulses P₁, P₂ ≥ 0 both, which holds for 2b² > c²) reverses the
 * velocity: v_z⁺ = −v_z⁻, ω⁺ = −ω⁻, and the box rises back on the same edge to α₀. So the
 * flat landings come at (2k + 1) t_q (t_q = 0.0787 s: 64 in 10 s), the amplitude stays α₀
 * and T + V its start's.
 * Before (the free body's persistent pivot on Newton's law along the step's start rows):
 * the linearised turn lifted the pivot by ½ (hω)² c (8e-6 m at 2.5 rad/s), past the
 * 1 µm activation band; let go, it fell up to 8e-5 m into the floor and was taken back by
 * small impacts, and at a flat landing the pivot, µm off the floor, missed the other edge's
 * impact and the box hopped: 237 impacts in 10 s (the closed form's 64), amplitude down to
 * 0.04 rad, ΔE = −1.0e-3 J. Now such a body's pushing contacts take the midpoint law and the hold
 * (moreau-jean.ts, "Free bodies turning on a contact").
 * With friction that holds the pivot (μ = 1; a 0.3 × 0.2 m section, b = 0.15, c = 0.1) the
 * box turns about the fixed edge, J = I_c + m (b² + c²) in place of the frictionless one's,
 * and at e = 1 the reversal lands it back on the same edge too: its impulse −2 m v_cm, in
 * the ratio c/b = 0.67 tangential to normal, lies in the cones (t_q = 0.0791 s: 63 landings
 * in 10 s). Before: 71 landings and some 220 other impacts, the amplitude down to
 * 0.074 rad, ΔE −0.0385 J of 0.142 J.
 */
import { describe, expect, it } from "vitest";
import { loadModel } from "../../../src/engine/index";
import { boxOnEdge } from "../../support/models";

const g = 9.81;
const m = 1;
const alpha0 = 0.1;
const h = 1 / 240;
const T = 10;

/**
 * The fall from α₀ to flat (s) of a box of half width b and half height c on its edge:
 * frictionless (`fixed` false) or on a pivot that does not slide (file comment).
 */
function quarterTime(b: number, c: number, fixed: boolean): number {
  const Ic = (m * (b * b + c * c)) / 3;
  const z = (t: number) => b * Math.sin(t) + c * Math.cos(t);
  const N = 20000;
  let sum = 0;
  for (let i = 0; i < N; i++) {
    const s = (i + 0.5) / N;
    const th = alpha0 * (1 - s * s);
    const lever = fixed ? b * b + c * c : (b * Math.cos(th) - c * Math.sin(th)) ** 2;
    const rate = Math.sqrt((2 * m * g * (z(alpha0) - z(th))) / (Ic + m * lever));
    sum += (2 * alpha0 * s) / N / rate;
  }
  return sum;
}

/** The box's flat landings, worst figures over T (file comment). */
function rock(b: number, c: number, friction: number) {
  const sim = loadModel(
    boxOnEdge({
      mass: m,
      halfExtents: [b, 0.1, c],
      tilt: alpha0,
      g,
      restitution: 1,
      friction,
      dt: h,
    }),
  );
  const E0 = sim.state().energy.total;
  const landings: number[] = [];
  let amplitude = 0;
  let swingMax = 0;
  let energy = 0;
  let pivotLift = 0;
  for (let k = 0; k < Math.round(T / h); k++) {
    sim.step(1);
    const st = sim.state();
    const box = st.bodies[1];
    const q = box.orientation;
    const phi = 2 * Math.atan2(q[2], q[0]);
    energy = Math.max(energy, Math.abs(st.energy.total - E0));
    // the pivot edge's height (it stays the pivot: file comment)
    pivotLift = Math.max(pivotLift, box.position[2] - b * Math.sin(phi) - c * Math.cos(phi));
    // a flat landing: both edges struck (four corners in contact)
    if (st.solver.impacts > 0 && st.contacts.length >= 4) {
      landings.push((k + 1) * h);
      if (landings.length > 1) amplitude = Math.max(amplitude, Math.abs(alpha0 - swingMax));
      swingMax = 0;
    }
    swingMax = Math.max(swingMax, Math.abs(phi));
  }
  const tq = quarterTime(b, c, friction > 0);
  let time = 0;
  for (let k = 0; k < landings.length; k++)
    time = Math.max(time, Math.abs(landings[k] - (2 * k + 1) * tq));
  return {
    landings: landings.length,
    expected: Math.floor((T / tq + 1) / 2),
    time,
    amplitude,
    energy,
    pivotLift,
  };
}

describe("a box rocking on an edge at e = 1 (10 s)", () => {
  it("frictionless: keeps its amplitude, its energy and the closed form's flat landings", () => {
    const r = rock(0.2, 0.15, 0);
    // (measured: 64 landings, the closed form's 64 (t_q = 0.07870 s), each reported within
    // 1.12 steps after (2k + 1) t_q; each swing's largest |θ| at the steps' ends within
    // 6.0e-5 rad of α₀; |E − E₀| ≤ 5.6e-6 J; the pivot up 1.0e-7 m at most. Before: 11
    // landings, the swings 0.027 rad short, |E − E₀| up to 1.0e-3 J, the pivot 3.7 cm up
    // where the box hopped)
    expect(r.landings).toBe(r.expected);
    expect(r.time).toBeLessThan(1.5 * h);
    expect(r.amplitude).toBeLessThan(2e-4);
    expect(r.energy).toBeLessThan(1e-5);
    expect(r.pivotLift).toBeLessThan(1e-6);
  });

  it("on a pivot friction holds (μ = 1): the fixed pivot's flat landings, amplitude and energy", () => {
    const r = rock(0.15, 0.1, 1);
    // (measured: 63 landings, the closed form's 63; each within 0.026 s of (2k + 1) t_q,
    // the swings within 5.2e-4 rad of α₀ and |E − E₀| ≤ 7.6e-4 J (0.5 % of the 0.142 J at
    // flat). Before the sticking drift's take-back over the whole step
    // (NonsmoothContact.takeBackTime; rocking-pivot.test.ts) 0.051 s, 1.9e-3 rad and
    // 2.6e-3 J, gained in the steps after each landing, where the pivot crept 1.5e-5 m a
    // landing (0.98 mm in 10 s, now 0.21 mm). Before the midpoint law: 71 landings, up to
    // 1.18 s off, the swings 0.030 rad short, |E − E₀| up to 0.042 J. Since a frictional
    // impact whose Gauss–Seidel stalls on a rank-deficient Delassus matrix (the four corners
    // of a flat landing: 12 rows of rank 6) takes Moreau's law, met to ≤ 1e-4 of its speed
    // and now polished exact (impact-events.ts IMPACT_STALL, solvers/nonsmooth/newton.ts),
    // where the law on w took such landings before: 1.02e-3 rad and 1.34e-3 J, the same with
    // and without the polish, so Moreau's law's own loss at these landings, not its solve's)
    expect(r.landings).toBe(r.expected);
    expect(r.time).toBeLessThan(0.04);
    expect(r.amplitude).toBeLessThan(1.5e-3);
    expect(r.energy).toBeLessThan(2e-3);
  });
});
