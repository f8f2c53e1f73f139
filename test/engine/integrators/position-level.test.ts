/**
 * Newmark with numerical damping (γ > ½) puts the joint rows of its Newton step at the
 * position level: the step asks C(x_g) + G(x_g) (x_{t+h} − x_g) = 0 at the configuration
 * x_g of its first iterate (newmark.ts), and the post-step projection makes the
 * velocities tangent after every step: at the end where it moved the positions, else at
 * x_g (acceleration-step.ts, projectOnConstraints).
 */
import { describe, expect, it } from "vitest";
import { chainModel } from "../../../bench/scenes";
import { loadModel } from "../../../src/engine/index";

type Vec = [number, number, number];
const dot = (a: Vec, b: Vec) => a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
const axpy = (a: Vec, s: number, b: Vec): Vec => [
  a[0] + s * b[0],
  a[1] + s * b[1],
  a[2] + s * b[2],
];
const norm = (a: Vec) => Math.sqrt(dot(a, a));
const cross = (a: Vec, b: Vec): Vec => [
  a[1] * b[2] - a[2] * b[1],
  a[2] * b[0] - a[0] * b[2],
  a[0] * b[1] - a[1] * b[0],
];

describe("Newmark γ > ½: joint rows at the position level", () => {
  it("one step of a particle on a distance link meets the linearized position constraint", () => {
    // Particle of 1 kg on a rod of L = 1 m from the origin, moving up at 2 m/s, gravity −z.
    const L = 1;
    const h = 0.01;
    const beta = 0.3025;
    const gamma = 0.6;
    const g: Vec = [0, 0, -9.81];
    const x0: Vec = [L, 0, 0];
    const v0: Vec = [0, 0, 2];
    const tolerance = 1e-8;
    const sim = loadModel({
      name: "rod",
      gravity: g,
      bodies: [{ id: "p", kind: "particle", mass: 1, position: x0, velocity: v0 }],
      joints: [{ id: "rod", type: "distance", a: { body: "ground" }, b: { body: "p" } }],
      // one linearized step (the recurrence below is its single Newton iteration)
      solver: {
        integrator: "newmark",
        dt: h,
        beta,
        gamma,
        jointTolerance: tolerance,
        newtonIterations: 1,
      },
    });
    sim.step(1);
    const st = sim.state().bodies[0];

    // The consistent start acceleration: n·a = −|v|²/L along the rod, gravity across it.
    const n0: Vec = [1, 0, 0];
    const at = axpy(axpy(g, -dot(n0, g), n0), -dot(v0, v0) / L, n0);
    // First step: Newton's guess is the mean of a_t and a_{t−h} = a_t.
    const ag = at;
    const xg = axpy(axpy(axpy(x0, h, v0), 0.5 * h * h * (1 - 2 * beta), at), h * h * beta, ag);
    // a = g + μ n_g with n_g·(x_end − x_g) = L − |x_g|,  x_end − x_g = h²β (a − a_g)
    const ng = axpy([0, 0, 0], 1 / norm(xg), xg);
    const mu = (L - norm(xg)) / (h * h * beta) - dot(ng, axpy(g, -1, ag));
    const a = axpy(g, mu, ng);
    const xEnd = axpy(xg, h * h * beta, axpy(a, -1, ag));
    // what the linearization leaves (second order in x_end − x_g): within the tolerance,
    // so the positions are not projected
    const drift = norm(xEnd) - L;
    expect(Math.abs(drift)).toBeLessThan(tolerance);
    expect(Math.abs(drift)).toBeGreaterThan(0);
    for (let i = 0; i < 3; i++) expect(st.position[i]).toBeCloseTo(xEnd[i], 13);

    // The velocity is projected nevertheless: v_{t+h} = v_t + h((1−γ) a_t + γ a) leaves
    // the rod direction free, and the positions being within the tolerance, it is made
    // tangent where the step linearized, v − n_g (n_g·v) (a particle's mass metric is
    // isotropic).
    const vNew = axpy(axpy(v0, h * (1 - gamma), at), h * gamma, a);
    const v = st.velocity as Vec;
    expect(Math.abs(dot(ng, vNew))).toBeGreaterThan(1e-6);
    const tangential = axpy(vNew, -dot(ng, vNew), ng);
    for (let i = 0; i < 3; i++) expect(v[i]).toBeCloseTo(tangential[i], 13);
  });

  it("the 100-link chain through its whip: every step ends within τ", () => {
    // The benchmark's S2-100 setting (bench/compare/engines/moreau.ts), anchor distances
    // and anchor relative velocities computed here from the body states.
    const h = 1 / 240;
    const tolerance = 5e-7;
    const base = chainModel({ links: 100, dt: h });
    const sim = loadModel({
      ...base,
      solver: {
        ...base.solver,
        beta: 0.3025,
        gamma: 0.6,
        jointTolerance: tolerance,
        gyroscopicJacobian: false,
      },
    });
    const e0 = sim.state().energy;
    let drift = 0;
    let slip = 0;
    let fastest = 0;
    let energyRise = Number.NEGATIVE_INFINITY;
    for (let n = 0; n < 1000; n++) {
      sim.step(1);
      const st = sim.state();
      // anchor k: link k−1's +x end (the origin for k = 0) and link k's −x end
      const ends = st.bodies.map((b) => {
        const [w, x, y, z] = b.orientation;
        // R e_x, the link's axis in the world
        const ex: Vec = [1 - 2 * (y * y + z * z), 2 * (x * y + w * z), 2 * (x * z - w * y)];
        const r = axpy([0, 0, 0], 0.05, ex);
        const p = b.position as Vec;
        const vp = b.velocity as Vec;
        const wx = cross(b.angularVelocity as Vec, r);
        return {
          plus: axpy(p, 1, r),
          minus: axpy(p, -1, r),
          vPlus: axpy(vp, 1, wx),
          vMinus: axpy(vp, -1, wx),
        };
      });
      for (let k = 0; k < 100; k++) {
        const pa: Vec = k === 0 ? [0, 0, 0] : ends[k - 1].plus;
        const va: Vec = k === 0 ? [0, 0, 0] : ends[k - 1].vPlus;
        const d = axpy(ends[k].minus, -1, pa);
        const dv = axpy(ends[k].vMinus, -1, va);
        drift = Math.max(drift, ...d.map(Math.abs));
        slip = Math.max(slip, ...dv.map(Math.abs));
      }
      for (const b of st.bodies) fastest = Math.max(fastest, norm(b.velocity as Vec));
      energyRise = Math.max(energyRise, st.energy.total - e0.total);
    }
    expect(fastest).toBeGreaterThan(10);
    expect(drift).toBeLessThanOrEqual(tolerance * (1 + 1e-6));
    // The velocities are tangent at the end where the positions were projected, else
    // where the step linearized (‖x_end − x_g‖ ≲ √(2 L τ) = 3e-4 m: measured 1.2e-2 m/s
    // at the whip's fastest steps, 6e-4 of the speed; the next step's position-level
    // rows take up the drift it makes).
    expect(slip).toBeLessThan(2e-2);
    expect(slip / fastest).toBeLessThan(2e-3);
    // numerical damping and projections only remove energy (m g L of one link ~ 0.01 J)
    expect(energyRise).toBeLessThan(1e-6);
  });
});
