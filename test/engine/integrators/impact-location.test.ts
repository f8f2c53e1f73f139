/**
 * The impacts of a Moreau–Jean step located within it (impact-location.ts), against
 * closed forms derived here.
 *
 * A ball (m = 1, R = 0.1) dropped from rest with its lowest point H = 1 m above a floor:
 * it reaches the floor at V = √(2 g H), t₁ = √(2H/g); after the k-th impact it leaves at
 * e^k V, so its apex above the contact height is e^{2k} H and the next impact comes
 * 2 e^k V/g later. Between impacts the θ = ½ step is the exact parabola, so the apex and
 * the impact time of each bounce can be read off any state after it (apex z + v²/(2g), the
 * impact at t − (√(v² + 2 g z) − v)/g, z the gap, v > 0 the rebound velocity), and the
 * located step makes them exact: every bounce to round-off, over 60 s, at any step.
 * Bare Moreau–Jean (before the location) rounded the e = 1 period up to whole steps
 * (+0.13 s by 60 s at 5 ms, +0.89 s at 1/60 s), and at e < 1 its projection's lifts
 * (m g × up to h|v|(1 − e)/2 an impact) kept a ball at e = 0.8, h = 1/60 s bouncing every
 * third step to 60 s, where it rests from 4.06 s.
 *
 * A bounce whose rebound would be back on the floor within the step ends at rest (the
 * rest of its Zeno sequence), so the ball rests after its last resolved bounce, well before
 * the Zeno time t₁ + (2V/g) e/(1 − e), and then stays at rest.
 */
import { describe, expect, it } from "vitest";
import { loadModel } from "../../../src/engine/index";

const g = 9.81;
const R = 0.1;
const H = 1;
const V = Math.sqrt(2 * g * H);

const BALL = {
  id: "ball",
  mass: 1,
  position: [0, 0, R + H] as [number, number, number],
  inertia: [0.004, 0.004, 0.004] as [number, number, number],
  shapes: [{ type: "sphere" as const, radius: R }],
};
const FLOOR = {
  id: "floor",
  fixed: true,
  shapes: [{ type: "plane" as const, normal: [0, 0, 1] as [number, number, number], offset: 0 }],
};

function ball(e: number, h: number) {
  return loadModel({
    gravity: [0, 0, -g],
    bodies: [BALL, FLOOR],
    contact: { method: "nsc", restitution: e },
    solver: { integrator: "moreau-jean", dt: h },
    sensors: [{ id: "f", type: "contactForce", bodies: ["floor", "ball"] }],
  });
}

interface Bounce {
  /** Apex above the contact height (m). */
  apex: number;
  /** Time of the impact (s). */
  time: number;
}

/**
 * Steps `sim` to time T: each bounce read off its impact step (a step whose contact pushed
 * and that does not end at rest: a rebound shorter than what is left of the step ends at
 * rest, so a step holds one impact at most; one whose apex is within the step ends falling),
 * and the worst |energy.error|.
 */
function bounces(sim: ReturnType<typeof ball>, T: number) {
  const out: Bounce[] = [];
  let error = 0;
  const b = sim.state().bodies.findIndex((x) => x.id === "ball");
  while (sim.time < T - 1e-9) {
    sim.step(1);
    const st = sim.state();
    const z = st.bodies[b].position[2] - R;
    const v = st.bodies[b].velocity[2];
    error = Math.max(error, Math.abs(st.energy.error));
    const c = st.contacts.find((x) => x.bodies.includes("ball"));
    if (c !== undefined && c.normalForce > 0 && v !== 0)
      out.push({
        apex: z + (v * v) / (2 * g),
        time: st.time - (Math.sqrt(v * v + 2 * g * z) - v) / g,
      });
  }
  return { out, error, state: sim.state() };
}

describe("impact location: an elastic ball bounces for 60 s", () => {
  for (const h of [0.005, 1 / 60]) {
    it(`h = ${h.toPrecision(3)} s: every apex H, every impact at t₁ + 2(k − 1)V/g, to round-off`, () => {
      const { out, error, state } = bounces(ball(1, h), 60);
      const t1 = Math.sqrt((2 * H) / g);
      // 60 s holds 1 + ⌊(60 − t₁) g/(2V)⌋ = 66 impacts
      expect(out).toHaveLength(1 + Math.floor(((60 - t1) * g) / (2 * V)));
      out.forEach((b, k) => {
        expect(Math.abs(b.apex - H)).toBeLessThan(1e-12);
        expect(Math.abs(b.time - (t1 + (2 * k * V) / g))).toBeLessThan(1e-9);
      });
      // the energy m g (H + R) kept, nothing counted as dissipated
      expect(Math.abs(state.energy.total - g * (H + R))).toBeLessThan(1e-11);
      expect(Math.abs(state.energy.dissipated)).toBeLessThan(1e-11);
      expect(error).toBeLessThan(1e-11);
    });
  }
});

describe("impact location: a ball at e < 1 follows e^{2k} H and rests", () => {
  for (const e of [0.5, 0.8, 0.9])
    for (const h of [0.005, 1 / 60])
      it(`e = ${e}, h = ${h.toPrecision(3)} s: apexes and impact times exact, at rest from the last bounce to 60 s`, () => {
        const sim = ball(e, h);
        const { out, error } = bounces(sim, 60);
        const t1 = Math.sqrt((2 * H) / g);
        let tk = t1;
        out.forEach((b, k) => {
          if (k > 0) tk += (2 * e ** k * V) / g;
          expect(Math.abs(b.apex - e ** (2 * (k + 1)) * H)).toBeLessThan(1e-12);
          expect(Math.abs(b.time - tk)).toBeLessThan(1e-9);
        });
        // The bounces end where a rebound's flight, 2 e^k V/g, is shorter than what is left
        // of its impact step after the impact, h − τ with τ ≥ −h (a lift undone): the next
        // impact's rebound, 2 e^{n+1} V/g after the n-th, ends at rest.
        const n = out.length;
        expect((2 * e ** (n + 1) * V) / g).toBeLessThan(2 * h);
        expect(n).toBeGreaterThan(2);
        const st = sim.state();
        // at rest on the floor (the projection leaves it within its tolerance 2e-3 R)
        expect(st.bodies[0].velocity[2]).toBe(0);
        expect(Math.abs(st.bodies[0].position[2] - R)).toBeLessThanOrEqual(2e-4);
        // all of m g H dissipated, the balance closed to round-off
        const z = st.bodies[0].position[2] - R;
        expect(Math.abs(st.energy.dissipated - g * (H - z))).toBeLessThan(1e-11);
        expect(error).toBeLessThan(1e-11);
      });
});

describe("impact location: several contacts at once", () => {
  it("a box landing flat on its four corners (e = 0.5): its centre bounces as the ball, no turn", () => {
    const h = 0.005;
    const e = 0.5;
    const half = 0.05;
    const sim = loadModel({
      gravity: [0, 0, -g],
      bodies: [
        {
          id: "box",
          mass: 2,
          position: [0, 0, half + H],
          shapes: [{ type: "box", halfExtents: [0.2, 0.1, half] }],
        },
        { id: "floor", fixed: true, shapes: [{ type: "plane", normal: [0, 0, 1], offset: 0 }] },
      ],
      contact: { method: "nsc", restitution: e },
      solver: { integrator: "moreau-jean", dt: h },
    });
    let previous = 0;
    let k = 0;
    let tk = Math.sqrt((2 * H) / g);
    while (k < 3) {
      sim.step(1);
      const b = sim.state().bodies[0];
      const z = b.position[2] - half;
      const v = b.velocity[2];
      if (previous <= 0 && v > 0) {
        k++;
        if (k > 1) tk += (2 * e ** (k - 1) * V) / g;
        expect(Math.abs(z + (v * v) / (2 * g) - e ** (2 * k) * H)).toBeLessThan(1e-12);
        expect(Math.abs(sim.time - (Math.sqrt(v * v + 2 * g * z) - v) / g - tk)).toBeLessThan(1e-9);
        expect(Math.hypot(...b.angularVelocity)).toBeLessThan(1e-12);
      }
      previous = v;
    }
  });

  it("two spheres meeting head-on without gravity: momentum kept, rebound −e u, gap e|u|(h − τ)", () => {
    const h = 0.01;
    const e = 0.7;
    const [ma, mb] = [1, 3];
    const [va, vb] = [2, -1]; // approach speed 3 m/s
    const g0 = 0.006; // gap at the start of the impact step: τ = 2 ms
    const sim = loadModel({
      gravity: [0, 0, 0],
      bodies: [
        {
          id: "a",
          mass: ma,
          position: [0, 0, 0],
          velocity: [va, 0, 0],
          shapes: [{ type: "sphere", radius: R }],
        },
        {
          id: "b",
          mass: mb,
          position: [2 * R + g0, 0, 0],
          velocity: [vb, 0, 0],
          shapes: [{ type: "sphere", radius: R }],
        },
      ],
      contact: { method: "nsc", restitution: e },
      solver: { integrator: "moreau-jean", dt: h, projectOnConstraints: false },
    });
    sim.step(1);
    const st = sim.state();
    const [a, b] = st.bodies;
    const u = vb - va;
    // the reported impulse (on bodies[1]) is each sphere's momentum change, the reported
    // gap the located end gap
    const c = st.contacts[0];
    const s = c.bodies[1] === "b" ? 1 : -1;
    expect(s * c.impulse[0]).toBeCloseTo(mb * (b.velocity[0] - vb), 13);
    expect(-s * c.impulse[0]).toBeCloseTo(ma * (a.velocity[0] - va), 13);
    expect(c.gap).toBeCloseTo(b.position[0] - a.position[0] - 2 * R, 13);
    const tau = g0 / -u;
    // Newton's law at τ: relative velocity −e u, the centre of mass moving on
    const vc = (ma * va + mb * vb) / (ma + mb);
    const ua = vc + (mb / (ma + mb)) * e * u;
    const ub = vc - (ma / (ma + mb)) * e * u;
    expect(a.velocity[0]).toBeCloseTo(ua, 13);
    expect(b.velocity[0]).toBeCloseTo(ub, 13);
    expect(ma * a.velocity[0] + mb * b.velocity[0]).toBeCloseTo(ma * va + mb * vb, 13);
    expect(b.position[0] - a.position[0] - 2 * R).toBeCloseTo(-e * u * (h - tau), 13);
    expect(ma * a.position[0] + mb * b.position[0]).toBeCloseTo(
      mb * (2 * R + g0) + h * (ma * va + mb * vb),
      13,
    );
  });
});

describe("impact location: the contact report", () => {
  // The located impulse ν is the step's beside the contact solve's P, so the impulse the
  // State reports for the ball's contact is the one that, with gravity, gives the step's
  // momentum change: J = m (v⁺ − v⁻) − m g⃗ h. The contact solve's P alone missed
  // m g (h − (1 + e)τ) on each impact step (τ the impact's time within it).
  for (const h of [0.005, 1 / 60])
    it(`e = 0.5, h = ${h.toPrecision(3)} s: every step's reported impulse is m(v⁺ − v⁻) − m g⃗ h, and they sum to the momentum change`, () => {
      const e = 0.5;
      const sim = ball(e, h);
      let v = 0;
      let sum = 0;
      let impacts = 0;
      const steps = Math.round(2 / h);
      for (let k = 0; k < steps; k++) {
        sim.step(1);
        const st = sim.state();
        const b = st.bodies[0];
        const vPlus = b.velocity[2];
        const c = st.contacts[0];
        if (c !== undefined) {
          // the impulse and force reported act on bodies[1]: the ball's is signed by it
          const s = c.bodies[1] === "ball" ? 1 : -1;
          const J = c.impulse.map((x) => s * x);
          expect(Math.abs(J[2] - (vPlus - v + g * h))).toBeLessThan(1e-12);
          expect(Math.abs(J[0]) + Math.abs(J[1])).toBe(0);
          // the normal force P_n/h, the contactForce sensor (floor on ball) and the
          // simulation's total normal force all say the same
          expect(Math.abs(c.normalForce * h - Math.abs(J[2]))).toBeLessThan(1e-12);
          expect(Math.abs(st.observation[2] * h - J[2])).toBeLessThan(1e-12);
          expect(sim.contactNormalForce).toBe(c.normalForce);
          sum += J[2];
          if (vPlus > 0) {
            // a located rebound: the reported gap is the located end gap, the state's
            impacts++;
            expect(Math.abs(c.gap - (b.position[2] - R))).toBeLessThan(1e-12);
          }
        }
        v = vPlus;
      }
      // over all bounces and the rest that follows: Σ J = m (v_T − 0) + m g T
      expect(impacts).toBeGreaterThan(3);
      expect(Math.abs(sum - (v + g * steps * h))).toBeLessThan(1e-10);
      expect(v).toBe(0);
    });
});

describe("impact location beside joints", () => {
  // A pendulum (a 2 kg bob on a 1 m rod hinged at 2 m height, swinging in the x–z plane
  // far from the ball, never reaching the floor) and a box resting on the floor; with and
  // without the ball at e = 0.8. The ball's contact touches no jointed body: its impacts
  // are located (they were not, in any model with joints), and the location's moves,
  // M⁻¹ H_Lᵀ ν with the ball's rows alone, reach no other body. The resting box makes
  // every step of both runs a contact step: the steps without any active contact take the
  // smooth θ-step instead (its own step control), which alone moved the bob by 2e-4 m at
  // the ball's first impact step, location or not.
  const pendulum = (e: number, withBall: boolean) =>
    loadModel({
      gravity: [0, 0, -g],
      bodies: [
        {
          id: "bob",
          mass: 2,
          position: [3, 0, 2],
          inertia: [0.01, 0.01, 0.01],
          shapes: [{ type: "sphere", radius: 0.1 }],
        },
        {
          id: "box",
          mass: 1,
          position: [-2, 0, 0.1],
          inertia: [0.01, 0.01, 0.01],
          shapes: [{ type: "box", halfExtents: [0.1, 0.1, 0.1] }],
        },
        ...(withBall ? [BALL] : []),
        FLOOR,
      ],
      joints: [
        {
          id: "hinge",
          type: "revolute",
          a: { body: "ground", point: [2, 0, 2] },
          b: { body: "bob", point: [-1, 0, 0] },
          axis: [0, 1, 0],
        },
      ],
      contact: { method: "nsc", restitution: e },
      solver: { integrator: "moreau-jean", dt: 1 / 60 },
    });

  it("a ball at e = 0.8 beside a pendulum: apexes e^{2k} H and impact times exact, the pendulum bit for bit as without the ball", () => {
    const e = 0.8;
    const T = 8;
    const { out } = bounces(pendulum(e, true), T);
    const alone = bounces(ball(e, 1 / 60), T).out;
    expect(out).toHaveLength(alone.length);
    expect(out.length).toBeGreaterThan(5);
    const t1 = Math.sqrt((2 * H) / g);
    let tk = t1;
    out.forEach((b, k) => {
      if (k > 0) tk += (2 * e ** k * V) / g;
      expect(Math.abs(b.apex - e ** (2 * (k + 1)) * H)).toBeLessThan(1e-12);
      expect(Math.abs(b.time - tk)).toBeLessThan(1e-9);
    });
    const a = pendulum(e, true);
    const b = pendulum(e, false);
    for (let k = 0; k < T * 60; k++) {
      a.step(1);
      b.step(1);
      const [pa, pb] = [a.state().bodies[0], b.state().bodies[0]];
      expect(pa.position).toEqual(pb.position);
      expect(pa.orientation).toEqual(pb.orientation);
      expect(pa.velocity).toEqual(pb.velocity);
      expect(pa.angularVelocity).toEqual(pb.angularVelocity);
    }
    // it swung (not at rest at the start)
    expect(a.state().bodies[0].position[2]).toBeLessThan(1.9);
  });
});
