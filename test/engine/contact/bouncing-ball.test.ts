/**
 * The bouncing ball of Siconos' examples with Moreau–Jean (θ = 1/2) and the Newton impact
 * law, against closed forms derived here.
 *
 * m = 1, R = 0.1, dropped from rest with its centre at z = 1 onto the plane z = 0: the
 * centre falls H = 0.9 m to contact, at t* = √(2H/g), with speed V = √(2gH).
 * - Free flight under constant gravity is integrated exactly by the θ = 1/2 scheme
 *   (x_{n+1} = x_n + h(v_n + v_{n+1})/2 with v_{n+1} = v_n − g h is the parabola).
 * - The impulse acts in the step [t_k, t_k + h] whose predicted gap g + h u_n is ≤ 0,
 *   so t_k lies within one step of t*.
 * - The contact solve applies Newton's law between the impact step's ends (impulse
 *   m(1 + e)|v⁻| + m g h, v⁻ the velocity at the step's start) and the impact located
 *   within the step (integrators/impact-location.ts) makes the end state exact: the ball
 *   at gap d above the floor reaches it at τ = 2d/(|v⁻| + V_c), V_c = √(v⁻² + 2 g d),
 *   leaves at e V_c and ends the step at v⁺ = e V_c − g(h − τ), z⁺ = R + e V_c (h − τ) −
 *   ½ g (h − τ)²: the k-th apex height above z = R is e^{2k} H to round-off (asserted to
 *   1 %, as before the location; integrators/impact-location.test.ts has the long runs).
 *   The reported impulse is the step's, the located share included: P = m(v⁺ − v⁻) + m g h.
 * - e = 0.5, h = 0.001: the bounce times form the geometric series 2V/g·Σ e^k, so the
 *   Zeno point is t* + (2V/g) e/(1 − e) = 1.285 s; by t = 1.3 s the ball rests at
 *   z = R (to the last impact's penetration, ≤ h|v|/4 ≪ 1e-5) and then stays: a resting
 *   contact has u⁻ = 0, q = −g h, the impulse is m g h and v⁺ = 0 exactly.
 * - Its contact is active once its gap closes within the step (g + h u_n⁻ ≤ 0, not
 *   Siconos' γ = ½: NonsmoothContact.locatedBodies), so the located impact leaves no
 *   penetration. TimeSteppingProjectOnConstraints: an inelastic ball's penetration during
 *   its impact, up to h V/2 ≈ 1 cm without it, stays below 1e-6 m with it.
 */
import { describe, expect, it } from "vitest";
import { loadModel } from "../../../src/engine/index";

const g = 9.81;
const R = 0.1;
const H = 0.9;

/** The ball; `solver` adds to Moreau–Jean θ = ½ at h (default: without the position projection). */
function ball(
  e: number,
  h: number,
  solver: Record<string, unknown> = { projectOnConstraints: false },
) {
  return loadModel({
    gravity: [0, 0, -g],
    bodies: [
      {
        id: "ball",
        mass: 1,
        position: [0, 0, 1],
        inertia: [0.004, 0.004, 0.004],
        shapes: [{ type: "sphere", radius: R }],
      },
      { id: "floor", fixed: true, shapes: [{ type: "plane", normal: [0, 0, 1], offset: 0 }] },
    ],
    contact: { method: "nsc", restitution: e },
    solver: { integrator: "moreau-jean", dt: h, theta: 0.5, ...solver },
  });
}

/** The deepest penetration (m) of the ball of restitution e over its first 2 s at h. */
function worstPenetration(e: number, h: number, solver: Record<string, unknown>): number {
  const sim = ball(e, h, solver);
  let worst = 0;
  for (let k = 0; k < 2 / h; k++) {
    sim.step(1);
    worst = Math.max(worst, R - sim.state().bodies[0].position[2]);
  }
  return worst;
}

describe("bouncing ball, e = 0.9, h = 0.005", () => {
  const h = 0.005;
  const e = 0.9;

  it("free flight is the exact parabola; first impulse within one step of √(2H/g)", () => {
    const sim = ball(e, h);
    const tStar = Math.sqrt((2 * H) / g);
    let tImpact = -1;
    for (let k = 0; k < 120 && tImpact < 0; k++) {
      sim.step(1);
      const st = sim.state();
      if (st.contacts.length > 0 && st.contacts[0].normalForce > 0) tImpact = st.time - h;
      else {
        const t = st.time;
        expect(Math.abs(st.bodies[0].position[2] - (1 - 0.5 * g * t * t))).toBeLessThan(1e-12);
        expect(Math.abs(st.bodies[0].velocity[2] + g * t)).toBeLessThan(1e-12);
      }
    }
    expect(Math.abs(tImpact - tStar)).toBeLessThanOrEqual(h);
  });

  it("impact step: the exact rebound at its time within the step; impulse P = m(v⁺ − v⁻) + m g h, force P/h", () => {
    const sim = ball(e, h);
    let vMinus = 0;
    let d = 0;
    for (let k = 0; k < 120; k++) {
      vMinus = sim.state().bodies[0].velocity[2];
      d = sim.state().bodies[0].position[2] - R;
      sim.step(1);
      const st = sim.state();
      if (st.contacts.length === 0) continue;
      const c = st.contacts[0];
      const Vc = Math.sqrt(vMinus * vMinus + 2 * g * d);
      const s = h - (2 * d) / (Vc - vMinus);
      expect(st.bodies[0].velocity[2]).toBeCloseTo(e * Vc - g * s, 12);
      expect(st.bodies[0].position[2]).toBeCloseTo(R + e * Vc * s - 0.5 * g * s * s, 12);
      // the step's impulse, the contact solve's and the located share together:
      // m (v⁺ − v⁻) = −m g h + P with the located v⁺ (the contact solve's alone,
      // m(1 + e)|v⁻| + m g h, missed m g (h − (1 + e)τ))
      const P = e * Vc - g * s - vMinus + g * h;
      // Contact a is the first shape in model order (the ball), normal from a to b, and
      // the impulse is the one on b (the floor): −P ẑ.
      expect(c.bodies).toEqual(["ball", "floor"]);
      expect(c.normal.map((x) => x + 0)).toEqual([0, 0, -1]);
      expect(c.impulse[2]).toBeCloseTo(-P, 10);
      expect(c.normalForce).toBeCloseTo(P / h, 8);
      expect(c.tangentForce.map((x) => x + 0)).toEqual([0, 0, 0]);
      break;
    }
  });

  it("apex heights of the first three rebounds follow e^{2k} within 1 %", () => {
    const sim = ball(e, h);
    const apex: number[] = [];
    let prev = 0;
    for (let k = 0; k < 700 && apex.length < 3; k++) {
      sim.step(1);
      const b = sim.state().bodies[0];
      if (prev > 0 && b.velocity[2] <= 0) apex.push(b.position[2] - R);
      prev = b.velocity[2];
    }
    expect(apex).toHaveLength(3);
    apex.forEach((a, i) => {
      expect(Math.abs(a / (H * e ** (2 * (i + 1))) - 1)).toBeLessThan(0.01);
    });
  });

  it("its impacts are located within their steps: no penetration, with or without the projection", () => {
    // (its contact active once its gap closes within the step, g + h u_n⁻ ≤ 0: before, with
    // Siconos' g + h u_n⁻/2 ≤ 0, an impact in a step's second half went up to h V/2 past the
    // floor, 6.9e-3 m here without the projection and 1e-4 m with it)
    expect(worstPenetration(e, h, { projectOnConstraints: false })).toBeLessThan(1e-12);
    expect(worstPenetration(e, h, {})).toBeLessThan(1e-12);
  });
});

describe("an inelastic ball (e = 0), h = 0.005", () => {
  it("projectOnConstraints: impact penetration from millimetres to the default 2e-3·R, or below 1e-6 m", () => {
    const h = 0.005;
    // (active once g + h u_n⁻/2 ≤ 0, it goes on at most h V/2 past the floor in its step
    // before and h V/2 in its impact step, whose end positions move at (v⁻ + v⁺)/2, v⁺ = 0)
    const without = worstPenetration(0, h, { projectOnConstraints: false });
    expect(without).toBeGreaterThan(1e-3);
    expect(without).toBeLessThan(h * Math.sqrt(2 * g * H) + 1e-9);
    // the defaults: projected, to the stated tolerance 2e-3 ℓ (ℓ = R, the ball's radius)
    const byDefault = worstPenetration(0, h, {});
    expect(byDefault).toBeLessThanOrEqual(2e-3 * R);
    expect(byDefault).toBeGreaterThan(1e-6);
    expect(worstPenetration(0, h, { projectionTolerance: 1e-9 })).toBeLessThan(1e-6);
  });
});

describe("bouncing ball comes to rest, e = 0.5, h = 0.001", () => {
  it("rests within 1e-5 m of z = R by t = 1.3 s and then neither sinks nor jitters", () => {
    const h = 0.001;
    const e = 0.5;
    const V = Math.sqrt(2 * g * H);
    const zeno = Math.sqrt((2 * H) / g) + ((2 * V) / g) * (e / (1 - e));
    expect(zeno).toBeLessThan(1.3);
    const sim = ball(e, h);
    sim.step(1300);
    const z0 = sim.state().bodies[0].position[2];
    expect(Math.abs(z0 - R)).toBeLessThan(1e-5);
    let prev = z0;
    let jitter = 0;
    for (let k = 0; k < 700; k++) {
      sim.step(1);
      const z = sim.state().bodies[0].position[2];
      jitter = Math.max(jitter, Math.abs(z - prev));
      prev = z;
    }
    expect(jitter).toBeLessThan(1e-9);
    expect(Math.abs(prev - z0)).toBeLessThan(1e-9);
    const c = sim.state().contacts;
    expect(c).toHaveLength(1);
    expect(c[0].normalForce).toBeCloseTo(g, 9); // m g, the impulse m g h over h
  });
});
