/**
 * A box (1 kg, 0.4 × 0.3 × 0.2 m: half width b = 0.2 along x, half depth 0.15 along y, half
 * height c = 0.1) released from rest tilted α₀ = 0.1 rad about its bottom edge (b, ·, −c),
 * on a floor at e = 1 with friction μ = 1, moreau-jean at its defaults (h = 5 ms), for
 * 20 s (118 flat landings). Where friction holds the pivot the edge is a hinge: it must
 * not move along the floor.
 * Closed form (the pivot fixed). With ρ = √(b² + c²), tan β = c/b and φ = θ + β, the centre
 * is at ρ(−cos φ, sin φ) (x, z) from the pivot, J = I_c + m ρ² = (4/3) m ρ², and
 *   ½ J θ̇² = m g ρ (sin(α₀ + β) − sin φ),   J θ̈ = −m g ρ cos φ,
 * so the floor's force on the box is F = m ẍ, N = m (g + z̈) with
 *   ẍ = ρ (θ̈ sin φ + θ̇² cos φ),   z̈ = ρ (θ̈ cos φ − θ̇² sin φ).
 * The pivot holds while |F|/N ≤ μ over θ ∈ [0, α₀] (0.73 at most here, at α₀), and at a flat landing
 * the e = 1 reversal's impulse −2 m v_cm (v_cm ∝ (c, b)) has tangential/normal ratio c/b =
 * 0.5: μ = 1 holds it throughout (at 0.73 of the cone).
 * Before (nonsmooth-contact.ts, takeBackTime): each flat landing's step, split at the impact
 * (impact-events.ts), asked the pivot in its last piece (~2e-5 s) to take its sticking drift
 * (~1.5e-5 m) back at D/h_piece (~0.7 m/s): the impulse went to the cone's rim, the contact
 * counted as sliding, its drift was forgotten and the pivot was kicked: 2.8e-3 m in 20 s
 * (5.9e-3 m in 60 s at 1/240 s; the 0.3 × 0.2 m section of rocking-box.test.ts 1.0e-3 m in
 * 10 s, 1.5e-5 m a landing).
 */
import { describe, expect, it } from "vitest";
import { loadModel } from "../../../src/engine/index";
import { boxOnEdge } from "../../support/models";

const g = 9.81;
const m = 1;
const b = 0.2;
const c = 0.1;
const alpha0 = 0.1;
const mu = 1;
const T = 20;
/** solver.dt's default (schemas/model.ts), s. */
const h = 0.005;

/** The largest |F|/N of the floor on the fixed pivot over θ ∈ [0, α₀] (file comment). */
function pivotFrictionRatio(): number {
  const rho = Math.hypot(b, c);
  const beta = Math.atan2(c, b);
  const J = (4 / 3) * m * rho * rho;
  let worst = 0;
  for (let i = 0; i <= 1000; i++) {
    const th = (alpha0 * i) / 1000;
    const phi = th + beta;
    const w2 = ((2 * m * g * rho) / J) * (Math.sin(alpha0 + beta) - Math.sin(phi));
    const acc = (-m * g * rho * Math.cos(phi)) / J;
    const ax = rho * (acc * Math.sin(phi) + w2 * Math.cos(phi));
    const az = rho * (acc * Math.cos(phi) - w2 * Math.sin(phi));
    worst = Math.max(worst, Math.abs(ax) / (g + az));
  }
  return worst;
}

describe("a box rocking on an edge friction holds (μ = 1, e = 1, 20 s)", () => {
  it("keeps its pivot in place and its energy", () => {
    // the pivot must stick: μ above the closed form's need while rocking and at landings
    const ratio = pivotFrictionRatio();
    expect(Math.max(ratio, c / b)).toBeLessThan(0.8 * mu);
    const sim = loadModel(
      boxOnEdge({
        mass: m,
        halfExtents: [b, 0.15, c],
        tilt: alpha0,
        g,
        restitution: 1,
        friction: mu,
      }),
    );
    const E0 = sim.state().energy.total;
    let slide = 0;
    let energy = 0;
    let error = 0;
    let landings = 0;
    for (let k = 0; k < Math.round(T / h); k++) {
      sim.step(1);
      const st = sim.state();
      const box = st.bodies[1];
      const q = box.orientation;
      const phi = 2 * Math.atan2(q[2], q[0]);
      if (st.solver.impacts > 0 && st.contacts.length >= 4) landings++;
      energy = Math.max(energy, Math.abs(st.energy.total - E0));
      error = Math.max(error, Math.abs(st.energy.error));
      // the pivot edge's x along the floor (it started at 0), while the box stands on it
      if (phi > 1e-3)
        slide = Math.max(slide, Math.abs(box.position[0] + b * Math.cos(phi) - c * Math.sin(phi)));
    }
    // (measured: the pivot within 5.8e-4 m of its start over 20 s (2.8e-3 m before), |E − E₀|
    // ≤ 9.4e-4 J of the 0.191 J rocking (5.1e-3 J before), |energy.error| ≤ 9.2e-4 J
    // (2.4e-4 J before: the slide's friction work was booked, the energy it put in with it),
    // 118 flat landings. Left: steps split by the pivot's micro-events (impact-events.ts,
    // pieces of 1e-6 s and less) where one of the edge's two corners leaves the pieces' set,
    // its drift and warm start forgotten; the two corners' take-backs then at odds, the
    // solver squeezes the edge along y (a pair of opposite tangential impulses no body
    // feels) up to the cones' rim and the pivot slides some 5e-6 m a step for a few steps)
    expect(landings).toBeGreaterThan(100);
    expect(slide).toBeLessThan(8e-4);
    expect(energy).toBeLessThan(1.5e-3);
    expect(error).toBeLessThan(1.5e-3);
  });
});
