/**
 * Coulomb friction of compliant contact (contact.method "smc", compliant.ts: a tangential
 * spring with history, k_t = (2/7) k, c_t = (2/7) d, capped at μ F_n) against closed forms,
 * under the integrators compliant contact runs with: newmark (β = ¼, γ = ½),
 * generalized-alpha, moreau-jean, backward-euler, symplectic-euler and articulated. Default law: linear
 * k = 1e5 N/m, stepDamping ½ (d = ½ h k), h = 5 ms.
 *
 *  - A 1 kg cube (0.2 m) on a slope (gravity tilted by θ), μ = 0.5: at tan θ = 0.3 < μ it
 *    stays: its creep is the springs' elastic stretch, bounded by μ m g cos θ/k_t (1.6e-4 m)
 *    and not growing (newmark and generalized-alpha over 30 s, at h = 10 ms); at
 *    tan θ = 0.7 > μ it slides with a = g (sin θ − μ cos θ): its acceleration over [1, 2] s
 *    from the velocities within 0.5 %, x(2 s) within 1 % of ½ a t² (the first steps' stick
 *    before the springs reach the cap).
 *  - The cube pushed at v0 = 2 m/s on a flat floor, μ = 0.4: stops at v0²/(2 μ g) (within
 *    1.5 %: backward Euler's first order) at t = v0/(μ g) (within two steps) and stays, the
 *    net tangential force on it (the contactForce sensor's) then 0. Each corner's spring
 *    keeps a self-equilibrated part (the caps differed while the deceleration's torque
 *    loaded the front corners: ±μ ΔF_n/2 = ±0.39 N), which is the model's.
 *  - A solid sphere (r = 0.1 m, I = 2/5 m r²), μ = 0.3: rolling at v = ω r = 2 m/s it
 *    keeps rolling (v within 0.3 % after 1.5 s, |v − ω r| < 5 mm/s: the material contact
 *    point turns by ω h a step, its tangential path r (ω h − sin ω h) a step short of the
 *    rolling one); thrown at v0 = 2 m/s with backspin ω0 = 30 rad/s it reaches rolling at
 *    the angular momentum about the contact line's value v = (5 v0 − 2 ω0 r)/7 (within 1 %).
 *  - A ball (r = 0.1 m) landing at 1 m/s on a hertz floor (no gravity, undamped) spinning at
 *    60 rad/s, μ = 0.3: it slides through the whole impact, so Coulomb's law gives the
 *    horizontal impulse μ times the normal one, Δv_x = μ Δv_z: exactly under backward Euler
 *    (each step's impulse is h times its end's force, μ F_n in slip), within 4 % under the
 *    trapezoidal schemes (their steps weigh the start's force, whose history's stretch
 *    k_t rescales). Before, k_t = 0 for a contact found separated (hertz's stiffness at
 *    contact), so no friction in the first step of the impact: 0.53–0.92 of it under
 *    backward Euler, 0.90 under newmark at E = 1e6.
 *  - Two free bodies (a ball on a ball, a ball on a cube; 1 kg, isotropic inertia, no
 *    gravity, a soft law k = 1e3 N/m so the sliding contact lasts 14 steps), spinning, in
 *    frictional contact (μ = 0.5) under symplectic Euler, whose step conserves the linear
 *    and angular momentum of forces with no net force and moment at the step's start: both
 *    kept to rounding over 2 s. The friction acted at each body's own material point, its
 *    pair's moment the penetration times F_t: the angular momentum changed by 6.8e-4 of
 *    0.070 kg m²/s (1 %).
 *  - Energy: in each run |energy.error| stays below 0.1 % of energy.dissipated (the slip's
 *    work, μ F_n times the sliding distance: 2.0 J for the cube on the floor), 1 % under
 *    backward Euler (its own first-order loss: 0.5 % of the 13 J the sliding cube loses).
 *  - Per-pair μ and a PATCH of μ; a step the simulation refuses (energyDriftLimit) leaves
 *    the springs' history as it was: the run continues bit for bit as one that never took
 *    it (without restoring the history held at the step's start: 5e-8 m off in 50 steps).
 * Each failed before friction was modelled: the models were refused (friction under smc).
 */
import { describe, expect, it } from "vitest";
import { loadModel } from "../../../src/engine/index";

const G = 9.81;
const H = 0.005;
const FLOOR = {
  id: "floor",
  fixed: true,
  shapes: [{ type: "plane", normal: [0, 0, 1], offset: 0 }],
};
const CUBE = { type: "box", halfExtents: [0.1, 0.1, 0.1] };
const KT = (2 / 7) * 1e5;
const INTEGRATORS = [
  "newmark",
  "generalized-alpha",
  "moreau-jean",
  "backward-euler",
  "symplectic-euler",
  "articulated",
] as const;

/** The cube on a slope of tan θ (gravity tilted about y: downhill is +x), μ. */
function slope(integrator: string, tanTheta: number, mu: number, dt = H) {
  const th = Math.atan(tanTheta);
  return loadModel({
    gravity: [G * Math.sin(th), 0, -G * Math.cos(th)],
    bodies: [FLOOR, { id: "box", mass: 1, position: [0, 0, 0.1], shapes: [CUBE] }],
    contact: { method: "smc", friction: mu },
    sensors: [{ id: "f", type: "contactForce", bodies: ["floor", "box"] }],
    solver: { dt, integrator },
  });
}

/** |energy.error| against energy.dissipated: 1 %, backward Euler's own first order; 0.1 %. */
function expectEnergyBooked(integrator: string, energy: { error: number; dissipated: number }) {
  expect(energy.dissipated).toBeGreaterThan(0);
  const share = integrator === "backward-euler" ? 1e-2 : 1e-3;
  expect(Math.abs(energy.error)).toBeLessThan(share * energy.dissipated);
}

describe("a cube on a slope", () => {
  it.each(["newmark", "generalized-alpha"])(
    "%s: at tan θ = 0.3 < μ = 0.5 it stays for 30 s, its creep the springs' stretch",
    (integrator) => {
      const dt = 0.01;
      const sim = slope(integrator, 0.3, 0.5, dt);
      const bound = (0.5 * G * Math.cos(Math.atan(0.3))) / KT;
      let largest = 0;
      let at10 = 0;
      for (let k = 1; k <= 30 / dt; k++) {
        sim.step(1);
        const x = sim.state().bodies[1].position[0];
        largest = Math.max(largest, Math.abs(x));
        if (k === 10 / dt) at10 = x;
      }
      const s = sim.state();
      expect(largest).toBeLessThan(bound);
      expect(Math.abs(s.bodies[1].position[0] - at10)).toBeLessThan(1e-9);
      // at rest the contacts hold the whole weight, tangential part included
      const th = Math.atan(0.3);
      const f = s.observation;
      expect(f[0]).toBeCloseTo(-G * Math.sin(th), 6);
      expect(f[2]).toBeCloseTo(G * Math.cos(th), 6);
    },
  );

  it.each(INTEGRATORS)("%s: at tan θ = 0.3 it stays (3 s)", (integrator) => {
    const sim = slope(integrator, 0.3, 0.5);
    const bound = (0.5 * G * Math.cos(Math.atan(0.3))) / KT;
    for (let k = 1; k <= 3 / H; k++) {
      sim.step(1);
      expect(Math.abs(sim.state().bodies[1].position[0])).toBeLessThan(bound);
    }
  });

  it.each(INTEGRATORS)("%s: at tan θ = 0.7 it slides at g (sin θ − μ cos θ)", (integrator) => {
    const mu = 0.5;
    const th = Math.atan(0.7);
    const a = G * (Math.sin(th) - mu * Math.cos(th));
    const sim = slope(integrator, 0.7, mu);
    sim.step(Math.round(1 / H));
    const s1 = sim.state().bodies[1];
    sim.step(Math.round(1 / H));
    const s = sim.state();
    const x2 = s.bodies[1].position[0];
    // v(2) = v(1) + a·1 (x(2) − x(1) − v(1) has backward Euler's ½ a h extra)
    const measured = s.bodies[1].velocity[0] - s1.velocity[0];
    expect(Math.abs(measured / a - 1)).toBeLessThan(5e-3);
    expect(Math.abs(x2 / (0.5 * a * 4) - 1)).toBeLessThan(1e-2);
    expectEnergyBooked(integrator, s.energy);
  });
});

describe("a cube pushed on a flat floor", () => {
  it.each(INTEGRATORS)("%s: stops at v0²/(2 μ g), at v0/(μ g), and stays", (integrator) => {
    const [mu, v0] = [0.4, 2];
    const sim = loadModel({
      gravity: [0, 0, -G],
      bodies: [
        FLOOR,
        { id: "box", mass: 1, position: [0, 0, 0.1], velocity: [v0, 0, 0], shapes: [CUBE] },
      ],
      contact: { method: "smc", friction: mu },
      sensors: [{ id: "f", type: "contactForce", bodies: ["floor", "box"] }],
      solver: { dt: H, integrator },
    });
    let stop = -1;
    let xStop = 0;
    for (let k = 1; k <= 1.5 / H; k++) {
      sim.step(1);
      const b = sim.state().bodies[1];
      if (stop < 0 && b.velocity[0] <= 0) {
        stop = k * H;
        xStop = b.position[0];
      }
    }
    expect(Math.abs(stop - v0 / (mu * G))).toBeLessThanOrEqual(2 * H);
    expect(Math.abs(xStop / ((v0 * v0) / (2 * mu * G)) - 1)).toBeLessThan(1.5e-2);
    const s = sim.state();
    // at rest: where it stopped (the springs' give back, μ g/k_t), no net tangential force
    expect(Math.abs(s.bodies[1].position[0] - xStop)).toBeLessThan((mu * G) / KT);
    expect(Math.abs(s.bodies[1].velocity[0])).toBeLessThan(1e-6);
    expect(Math.hypot(s.observation[0], s.observation[1])).toBeLessThan(1e-6);
    expectEnergyBooked(integrator, s.energy);
  });
});

describe("a solid sphere on a flat floor (μ = 0.3)", () => {
  const [m, r] = [1, 0.1];
  const I = 0.4 * m * r * r;
  const ball = (integrator: string, v0: number, w0: number) =>
    loadModel({
      gravity: [0, 0, -G],
      bodies: [
        FLOOR,
        {
          id: "ball",
          mass: m,
          inertia: [I, I, I],
          position: [0, 0, r],
          velocity: [v0, 0, 0],
          angularVelocity: [0, w0, 0],
          shapes: [{ type: "sphere", radius: r }],
        },
      ],
      contact: { method: "smc", friction: 0.3 },
      solver: { dt: H, integrator },
    });

  it.each(INTEGRATORS)("%s: rolling at v = ω r it keeps rolling", (integrator) => {
    const sim = ball(integrator, 2, 20);
    sim.step(Math.round(1.5 / H));
    const b = sim.state().bodies[1];
    expect(Math.abs(b.velocity[0] / 2 - 1)).toBeLessThan(3e-3);
    expect(Math.abs(b.velocity[0] - b.angularVelocity[1] * r)).toBeLessThan(5e-3);
  });

  it.each(INTEGRATORS)(
    "%s: with backspin it reaches rolling at (5 v0 − 2 ω0 r)/7",
    (integrator) => {
      const [v0, w0] = [2, 30]; // backspin: ω_y = −ω0
      const sim = ball(integrator, v0, -w0);
      sim.step(Math.round(1.5 / H));
      const s = sim.state();
      const b = s.bodies[1];
      expect(Math.abs(b.velocity[0] / ((5 * v0 - 2 * w0 * r) / 7) - 1)).toBeLessThan(1e-2);
      expect(Math.abs(b.velocity[0] - b.angularVelocity[1] * r)).toBeLessThan(5e-3);
      expectEnergyBooked(integrator, s.energy);
    },
  );
});

describe("a spinning ball landing on a hertz floor (μ = 0.3)", () => {
  const [m, r, mu, v, w0] = [1, 0.1, 0.3, 1, 60];
  const I = 0.4 * m * r * r;
  /** Δv_x/(μ Δv_z) over the impact, and whether it slid throughout (ω r − v_x > 0). */
  function landing(integrator: string, youngModulus: number) {
    const sim = loadModel({
      gravity: [0, 0, 0],
      bodies: [
        FLOOR,
        {
          id: "ball",
          mass: m,
          inertia: [I, I, I],
          position: [0, 0, r + 0.0123],
          velocity: [0, 0, -v],
          angularVelocity: [0, w0, 0],
          shapes: [{ type: "sphere", radius: r }],
        },
      ],
      contact: {
        method: "smc",
        friction: mu,
        behavior: { type: "hertz", youngModulus, poissonRatio: 0.3, stepDamping: 0 },
      },
      solver: { dt: H, integrator },
    });
    let sliding = true;
    for (let i = 0; i < 100; i++) {
      sim.step(1);
      const b = sim.state().bodies[1];
      sliding &&= b.angularVelocity[1] * r - b.velocity[0] > 0;
      if (b.velocity[2] > 0 && b.position[2] > r + 0.01) break;
    }
    const b = sim.state().bodies[1];
    expect(b.position[2]).toBeGreaterThan(r + 0.01); // left the floor
    return { ratio: b.velocity[0] / (mu * (b.velocity[2] + v)), sliding };
  }

  for (const E of [1e6, 1e7, 1e8])
    it(`E = ${E} Pa: the horizontal impulse is μ times the normal one`, () => {
      const exact = landing("backward-euler", E);
      expect(exact.sliding).toBe(true);
      expect(Math.abs(exact.ratio - 1)).toBeLessThan(1e-9);
      for (const integrator of ["newmark", "generalized-alpha", "moreau-jean"]) {
        const run = landing(integrator, E);
        expect(run.sliding, integrator).toBe(true);
        expect(Math.abs(run.ratio - 1), integrator).toBeLessThan(0.04);
      }
    });
});

describe("two free bodies in frictional contact", () => {
  const [m, r, a] = [1, 0.1, 0.1];
  const I = 0.4 * m * r * r;
  const sphere = { type: "sphere", radius: r };
  const cube = { type: "box", halfExtents: [a, a, a] };
  /** Σ m v (N·s) and Σ (x × m v + I ω) (kg·m²/s, I isotropic) of the State's bodies. */
  function momenta(
    bodies: { position: number[]; velocity: number[]; angularVelocity: number[] }[],
  ) {
    const P = [0, 0, 0];
    const L = [0, 0, 0];
    for (const { position: x, velocity: v, angularVelocity: w } of bodies) {
      for (let k = 0; k < 3; k++) P[k] += m * v[k];
      L[0] += m * (x[1] * v[2] - x[2] * v[1]) + I * w[0];
      L[1] += m * (x[2] * v[0] - x[0] * v[2]) + I * w[1];
      L[2] += m * (x[0] * v[1] - x[1] * v[0]) + I * w[2];
    }
    return { P, L };
  }
  for (const [name, first] of [
    ["a ball on a ball", sphere],
    ["a ball on a cube", cube],
  ] as const)
    it(`${name}, symplectic Euler: linear and angular momentum kept to rounding`, () => {
      const sim = loadModel({
        gravity: [0, 0, 0],
        bodies: [
          {
            id: "a",
            mass: m,
            inertia: [I, I, I],
            velocity: [0.2, 0, 0],
            angularVelocity: [3, -20, 7],
            shapes: [first],
          },
          {
            id: "b",
            mass: m,
            inertia: [I, I, I],
            position: [0.25, 0.06, 0.05],
            velocity: [-0.2, 0, 0],
            angularVelocity: [-5, 10, 2],
            shapes: [sphere],
          },
        ],
        contact: {
          method: "smc",
          friction: 0.5,
          behavior: { type: "linear", stiffness: 1e3, stepDamping: 0.5 },
        },
        solver: { dt: H, integrator: "symplectic-euler" },
      });
      const start = momenta(sim.state().bodies);
      let touching = 0;
      let slid = 0;
      let worstP = 0;
      let worstL = 0;
      for (let i = 0; i < 400; i++) {
        sim.step(1);
        const s = sim.state();
        if (s.contacts.length > 0) touching++;
        for (const c of s.contacts) slid = Math.max(slid, Math.hypot(...c.tangentForce));
        const now = momenta(s.bodies);
        for (let k = 0; k < 3; k++) {
          worstP = Math.max(worstP, Math.abs(now.P[k] - start.P[k]));
          worstL = Math.max(worstL, Math.abs(now.L[k] - start.L[k]));
        }
      }
      expect(touching).toBeGreaterThan(5);
      expect(slid).toBeGreaterThan(1); // N: the friction acted
      expect(worstP).toBeLessThan(1e-15);
      expect(worstL).toBeLessThan(1e-14);
    });
});

describe("per-pair friction and PATCHes under smc", () => {
  it("a pair's μ holds one cube where the default lets the other slide; a PATCH of μ stops it", () => {
    const th = Math.atan(0.5);
    const cube = (id: string, y: number) => ({
      id,
      mass: 1,
      position: [0, y, 0.1],
      shapes: [CUBE],
    });
    const sim = loadModel({
      gravity: [G * Math.sin(th), 0, -G * Math.cos(th)],
      bodies: [FLOOR, cube("held", -1), cube("free", 1)],
      contact: {
        method: "smc",
        friction: 0.2,
        pairs: [{ bodies: ["floor", "held"], friction: 0.8 }],
      },
      solver: { dt: H, integrator: "newmark" },
    });
    sim.step(Math.round(1 / H));
    let s = sim.state();
    const bound = (0.8 * G * Math.cos(th)) / KT;
    expect(Math.abs(s.bodies[1].position[0])).toBeLessThan(bound);
    const a = G * (Math.sin(th) - 0.2 * Math.cos(th));
    expect(Math.abs(s.bodies[2].velocity[0] / a - 1)).toBeLessThan(1e-2);
    // μ = 0.8 for every pair: the free cube decelerates at g (0.8 cos θ − sin θ) and stops
    const v = s.bodies[2].velocity[0];
    sim.update({ contact: { friction: 0.8 } });
    const stop = v / (G * (0.8 * Math.cos(th) - Math.sin(th)));
    sim.step(Math.round((stop + 0.2) / H));
    s = sim.state();
    expect(Math.abs(s.bodies[2].velocity[0])).toBeLessThan(1e-6);
    expect(Math.abs(s.bodies[1].position[0])).toBeLessThan(bound);
  });
});

describe("the history of a step the simulation undoes", () => {
  it.each(["backward-euler", "newmark"])(
    "%s: a step refused by energyDriftLimit leaves the springs as they were (bit for bit)",
    (integrator) => {
      // a cube sliding and turning (its corners' springs change direction) and a ball with
      // backspin; b takes one step more, refused (the state and the history put back),
      // under the same PATCHes as a
      const model = {
        gravity: [0, 0, -G],
        bodies: [
          FLOOR,
          {
            id: "box",
            mass: 1,
            position: [0, 0, 0.1],
            velocity: [1, 0.3, 0],
            angularVelocity: [0, 0, 3],
            shapes: [CUBE],
          },
          {
            id: "ball",
            mass: 1,
            position: [0, 1, 0.1],
            velocity: [2, 0, 0],
            angularVelocity: [0, -30, 0],
            shapes: [{ type: "sphere", radius: 0.1 }],
          },
        ],
        contact: { method: "smc", friction: 0.5 },
        solver: { dt: H, integrator },
      };
      const a = loadModel(model);
      const b = loadModel(model);
      a.step(10);
      b.step(10);
      for (const s of [a, b]) s.update({ solver: { energyDriftLimit: 1e-15 } });
      expect(() => b.step(1)).toThrow(/energyDriftLimit/);
      for (const s of [a, b]) s.update({ solver: { energyDriftLimit: null } });
      a.step(50);
      b.step(50);
      expect(b.state().bodies).toEqual(a.state().bodies);
    },
  );
});
