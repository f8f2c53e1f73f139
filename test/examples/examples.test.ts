/**
 * Every model of examples/ validates with the Model schema, loads and steps, and meets a
 * physical sanity figure computed here independently (closed forms, conservation laws,
 * kinematic closure written out from the body states):
 *   pendulum            half period = exact large-amplitude period/2 (elliptic K), energy
 *   double-pendulum     energy conserved (Newmark), joints closed, motion planar
 *   slider-crank        crank angle = motor angle, slider x = closed-form loop closure,
 *                       assembled slider velocity and acceleration = derivatives of it
 *   four-bar            energy conserved, coupler length closes the loop
 *   bouncing-ball       apex heights fall by e² per bounce, no tunnelling, energy grows
 *                       only by the position projection's lift, resting normal force = m g
 *   newtons-cradle      the last ball swings out, the first stops, energy never grows
 *   ball-slope          rolls without slipping: s = (5/14) g sin α t², v = r ω
 *   box-stack           stack stands; each interface carries the weight above it
 *   cloth (Newmark)     energy non-increasing with Rayleigh damping, springs bounded
 *   spring-mass-chain   settles to the closed-form static stretches and energy
 *   whip                energy conserved (articulated), joints exact, motion planar
 * Through the API: every example posts as it is and its State after 20 steps is the
 * engine's; the pendulum and the spring-mass chain also meet their figures that way.
 */
import request from "supertest";
import { describe, expect, it } from "vitest";
import { Model } from "../../schemas/model";
import { State, type StateOut } from "../../schemas/state";
import { loadModel } from "../../src/engine/index";
import { type ExampleModel, exampleFiles, readExample } from "../support/examples";
import { rotate } from "../support/quat";
import { useServer } from "../support/server";
import {
  allFinite,
  bodyOf,
  dist,
  ellipticK,
  mechanicalEnergy,
  norm,
  rotationAngle,
  worldPoint,
} from "./helpers";

const G = 9.81;

const EXPECTED = [
  "ball-slope",
  "bouncing-ball",
  "box-stack",
  "cloth",
  "double-pendulum",
  "four-bar",
  "newtons-cradle",
  "pendulum",
  "slider-crank",
  "spring-mass-chain",
  "whip",
];

/** Steps a model n times, calling `each` with the State after every step. */
function run(model: ExampleModel, n: number, each?: (st: StateOut, k: number) => void) {
  const sim = loadModel(model);
  const initial = sim.state();
  let st = initial;
  for (let k = 1; k <= n; k++) {
    sim.step(1);
    st = sim.state();
    each?.(st, k);
  }
  return { sim, initial, final: st };
}

/** Largest distance between the two anchor points of the model's joints (not prismatic). */
function jointGap(model: ExampleModel, st: StateOut): number {
  let g = 0;
  for (const j of model.joints ?? [])
    if (j.type !== "prismatic")
      g = Math.max(
        g,
        dist(worldPoint(st, j.a.body, j.a.point), worldPoint(st, j.b.body, j.b.point)),
      );
  return g;
}

/**
 * How far a state leaves the x–z plane: the largest |y| of a centre and |ω_x|, |ω_z| of a
 * body (m, rad/s; 0 for a motion in the plane about y).
 */
function offPlane(st: StateOut): number {
  let w = 0;
  for (const b of st.bodies)
    w = Math.max(
      w,
      Math.abs(b.position[1]),
      Math.abs(b.angularVelocity[0]),
      Math.abs(b.angularVelocity[2]),
    );
  return w;
}

describe("examples/", () => {
  it("holds the eleven examples, each a valid Model", () => {
    expect(exampleFiles()).toEqual(EXPECTED.map((n) => `${n}.json`));
    for (const name of EXPECTED) {
      const r = Model.safeParse(readExample(name));
      expect(r.success, `${name}: ${r.success ? "" : r.error.message}`).toBe(true);
      if (r.success) expect(r.data.name).toBe(name);
    }
  });
});

describe("pendulum", () => {
  const model = readExample("pendulum");
  it("swings to the other side in half the exact large-amplitude period, energy conserved", () => {
    // compound pendulum: rod of mass m, length 1, hinged at one end, released horizontal
    const m = 1;
    const d = 0.5;
    const I = 1 / 12 + m * d * d; // about the hinge
    const theta0 = Math.PI / 2;
    const halfPeriod = 2 * Math.sqrt(I / (m * G * d)) * ellipticK(Math.sin(theta0 / 2));
    let turn = Number.NaN;
    let prevW = 0;
    let prevT = 0;
    let worstEnergy = 0;
    let worstHinge = 0;
    const { initial } = run(model, Math.round(1.5 / model.solver.dt), (st) => {
      const w = bodyOf(st, "rod").angularVelocity[1];
      // the first turning point: ω_y changes sign (linear interpolation between steps)
      if (Number.isNaN(turn) && prevW > 0 && w <= 0)
        turn = prevT + ((st.time - prevT) * prevW) / (prevW - w);
      prevW = w;
      prevT = st.time;
      worstEnergy = Math.max(worstEnergy, Math.abs(mechanicalEnergy(model, st)));
      worstHinge = Math.max(worstHinge, norm(worldPoint(st, "rod", [0, 0, -0.5])));
      expect(st.energy.total).toBeCloseTo(mechanicalEnergy(model, st), 9);
    });
    expect(mechanicalEnergy(model, initial)).toBeCloseTo(0, 12);
    expect(Math.abs(turn / halfPeriod - 1)).toBeLessThan(2e-3); // 0.9667 s
    expect(worstEnergy).toBeLessThan(1e-3 * m * G * d);
    expect(worstHinge).toBeLessThan(1e-6);
  });
});

describe("double-pendulum", () => {
  const model = readExample("double-pendulum");
  it("conserves energy (Newmark), keeps its joints closed and its motion in the x–z plane", () => {
    let worstEnergy = 0;
    let worstGap = 0;
    let worstPlanar = 0;
    const { final } = run(model, Math.round(2 / model.solver.dt), (st) => {
      worstEnergy = Math.max(worstEnergy, Math.abs(mechanicalEnergy(model, st)));
      worstGap = Math.max(worstGap, jointGap(model, st));
      worstPlanar = Math.max(worstPlanar, offPlane(st));
    });
    expect(allFinite(final)).toBe(true);
    // energy scale: m g L of one link = 4.9 J
    expect(worstEnergy).toBeLessThan(0.02);
    expect(worstGap).toBeLessThan(1e-6);
    expect(worstPlanar).toBeLessThan(1e-9);
  });
});

describe("whip", () => {
  const model = readExample("whip");
  it("a 20-link chain whipping down in joint coordinates: energy kept, joints exact, planar", () => {
    let worstEnergy = 0;
    let worstGap = 0;
    let worstPlanar = 0;
    const first = loadModel(model).state();
    const e0 = mechanicalEnergy(model, first);
    // 4 s: the fall, the whip through the bottom and the swing back
    const { final } = run(model, 960, (st) => {
      worstEnergy = Math.max(worstEnergy, Math.abs(mechanicalEnergy(model, st) - e0));
      worstGap = Math.max(worstGap, jointGap(model, st));
      worstPlanar = Math.max(worstPlanar, offPlane(st));
    });
    expect(allFinite(final)).toBe(true);
    // m g L of the whole chain (1 kg, 1 m) = 9.81 J; measured 5.3e-3 J (5.4e-4 m g L) at
    // the default stepTolerance
    expect(worstEnergy).toBeLessThan(2e-3 * 9.81);
    // the joints are the coordinates: their anchors agree to rounding
    expect(worstGap).toBeLessThan(1e-12);
    expect(worstPlanar).toBeLessThan(1e-9);
  });
});

describe("slider-crank", () => {
  const model = readExample("slider-crank");
  const r = 0.1;
  const L = 0.3;
  const omega = 2 * Math.PI;
  /** slider x for crank angle φ (tip at r (sin φ, 0, cos φ)): r sin φ + √(L² − r² cos² φ) */
  const sliderX = (phi: number) => r * Math.sin(phi) + Math.sqrt(L * L - (r * Math.cos(phi)) ** 2);

  it("follows its motor; the slider moves as the closed-form loop closure says", () => {
    let worstCrank = 0;
    let worstSlider = 0;
    let worstGap = 0;
    const { final } = run(model, Math.round(1.25 / model.solver.dt), (st) => {
      const phi = omega * st.time;
      const axis = rotate(bodyOf(st, "crank").orientation, [0, 0, 1]);
      worstCrank = Math.max(worstCrank, dist(axis, [Math.sin(phi), 0, Math.cos(phi)]));
      const x = bodyOf(st, "slider").position;
      worstSlider = Math.max(worstSlider, dist(x, [sliderX(phi), 0, 0]));
      worstGap = Math.max(worstGap, jointGap(model, st));
    });
    expect(allFinite(final)).toBe(true);
    expect(worstCrank).toBeLessThan(1e-6);
    expect(worstSlider).toBeLessThan(1e-6);
    expect(worstGap).toBeLessThan(1e-6);
  });

  it("assembles at t = 0 with the slider's velocity and acceleration of the closed form", () => {
    const res = loadModel(model).assemble();
    expect(res.exitFlag).toBe("SUCCESS");
    // derivatives of x(ω t) at t = 0 by central differences of the closed form
    const h = 1e-4;
    const v = (sliderX(omega * h) - sliderX(-omega * h)) / (2 * h);
    const a = (sliderX(omega * h) - 2 * sliderX(0) + sliderX(-omega * h)) / (h * h);
    const slider = res.bodies.find((b) => b.id === "slider")!;
    expect(slider.velocity[0]).toBeCloseTo(v, 6); // r ω = 0.628 m/s
    expect(Math.abs(slider.acceleration[0] - a)).toBeLessThan(1e-4 * Math.abs(a));
  });
});

describe("four-bar", () => {
  const model = readExample("four-bar");
  it("conserves energy and keeps the coupler length closing the loop", () => {
    const e0 = mechanicalEnergy(model, loadModel(model).state());
    let worstEnergy = 0;
    let worstLoop = 0;
    const { final } = run(model, Math.round(2 / model.solver.dt), (st) => {
      worstEnergy = Math.max(worstEnergy, Math.abs(mechanicalEnergy(model, st) - e0));
      // B on the crank and C on the rocker, each from its own body: |BC| = 0.35
      const B = worldPoint(st, "crank", [0, 0, 0.05]);
      const C = worldPoint(st, "rocker", [0, 0, 0.15]);
      worstLoop = Math.max(
        worstLoop,
        Math.abs(dist(B, C) - 0.35),
        norm(worldPoint(st, "crank", [0, 0, -0.05])),
        dist(worldPoint(st, "rocker", [0, 0, -0.15]), [0.4, 0, 0]),
      );
    });
    expect(allFinite(final)).toBe(true);
    expect(worstEnergy).toBeLessThan(5e-3 * e0); // e0 = 1.59 J
    expect(worstLoop).toBeLessThan(1e-6);
  });
});

describe("bouncing-ball", () => {
  const model = readExample("bouncing-ball");
  it("loses a factor e² of apex height per bounce and comes to rest on m g", () => {
    const e = 0.8;
    const rad = 0.1;
    const zs: number[] = [];
    let lowest = Number.POSITIVE_INFINITY;
    // energy growth beyond the position projection's lift: a step that carries the ball
    // into the floor before its contact is active (gap > h|v|/2 at the step's start) ends
    // with the ball lifted back out at its approach velocity, adding m g × the lift, at
    // most m g h |v_z| (the depth one step can reach; the ball's mass is 1 kg)
    let energyGrowth = 0;
    const first = loadModel(model).state();
    let prevE = mechanicalEnergy(model, first);
    let prevV = bodyOf(first, "ball").velocity[2];
    const h = model.solver.dt;
    const { final } = run(model, Math.round(5 / h), (st) => {
      const z = bodyOf(st, "ball").position[2];
      zs.push(z);
      lowest = Math.min(lowest, z - rad);
      const en = mechanicalEnergy(model, st);
      energyGrowth = Math.max(energyGrowth, en - prevE - G * h * Math.abs(prevV));
      prevE = en;
      prevV = bodyOf(st, "ball").velocity[2];
    });
    // apexes: local maxima of the height after the first impact
    const apex: number[] = [];
    for (let k = 1; k + 1 < zs.length; k++)
      if (zs[k] > zs[k - 1] && zs[k] >= zs[k + 1] && zs[k] - rad > 0.02) apex.push(zs[k] - rad);
    expect(apex.length).toBeGreaterThanOrEqual(3);
    const h0 = 0.9;
    expect(apex[0] / h0).toBeCloseTo(e * e, 1);
    expect(Math.abs(apex[0] / h0 / (e * e) - 1)).toBeLessThan(0.03);
    expect(Math.abs(apex[1] / apex[0] / (e * e) - 1)).toBeLessThan(0.03);
    expect(lowest).toBeGreaterThan(-2e-3); // no tunnelling
    expect(energyGrowth).toBeLessThan(1e-5 * G * h0);
    // at rest after ~3.9 s of bounces: the floor carries the weight
    const ball = bodyOf(final, "ball");
    expect(norm(ball.velocity)).toBeLessThan(1e-3);
    const fn = final.contacts.reduce((s, c) => s + c.normalForce, 0);
    expect(Math.abs(fn / G - 1)).toBeLessThan(0.01);
  });
});

describe("newtons-cradle", () => {
  const model = readExample("newtons-cradle");
  it("passes the swing down the row: the last ball rises, the first stops", () => {
    const L = 0.3;
    const zRest = 0.1;
    const h = L * (1 - Math.cos(Math.PI / 6)); // release height of ball1, 0.0402 m
    const e0 = mechanicalEnergy(model, loadModel(model).state());
    let rise5 = 0;
    let rise1After = 0;
    let firstImpact = Number.NaN;
    let energyGrowth = 0;
    let deepest = 0;
    const { final } = run(model, Math.round(0.6 / model.solver.dt), (st) => {
      const z1 = bodyOf(st, "ball1").position[2];
      const z5 = bodyOf(st, "ball5").position[2];
      if (Number.isNaN(firstImpact) && st.contacts.some((c) => c.normalForce > 0))
        firstImpact = st.time;
      if (!Number.isNaN(firstImpact) && st.time > firstImpact + 0.05) {
        rise1After = Math.max(rise1After, z1 - zRest);
        rise5 = Math.max(rise5, z5 - zRest);
      }
      energyGrowth = Math.max(energyGrowth, mechanicalEnergy(model, st) - e0);
      for (const c of st.contacts) deepest = Math.min(deepest, c.gap);
    });
    expect(allFinite(final)).toBe(true);
    // quarter period of the small-swing pendulum ≈ 0.27 s
    expect(firstImpact).toBeGreaterThan(0.2);
    expect(firstImpact).toBeLessThan(0.35);
    expect(rise5).toBeGreaterThan(0.95 * h);
    expect(rise1After).toBeLessThan(0.05 * h);
    expect(energyGrowth).toBeLessThan(0.01 * (0.5 * G * h));
    expect(deepest).toBeGreaterThan(-1e-3);
  });
});

describe("ball-slope", () => {
  const model = readExample("ball-slope");
  it("rolls without slipping: s = (5/14) g sin α t², v = r ω", () => {
    const alpha = (20 * Math.PI) / 180;
    const rad = 0.1;
    const n = [Math.sin(alpha), 0, Math.cos(alpha)];
    const tdir = [Math.cos(alpha), 0, -Math.sin(alpha)];
    const p0 = bodyOf(loadModel(model).state(), "ball").position;
    let worstLift = 0;
    const { final } = run(model, Math.round(1 / model.solver.dt), (st) => {
      const p = bodyOf(st, "ball").position;
      worstLift = Math.max(worstLift, Math.abs(p[0] * n[0] + p[2] * n[2] - rad));
    });
    const b = bodyOf(final, "ball");
    const t = final.time;
    const s = (b.position[0] - p0[0]) * tdir[0] + (b.position[2] - p0[2]) * tdir[2];
    const expected = (5 / 14) * G * Math.sin(alpha) * t * t;
    expect(Math.abs(s / expected - 1)).toBeLessThan(0.02);
    const v = b.velocity[0] * tdir[0] + b.velocity[2] * tdir[2];
    expect(Math.abs(v / ((5 / 7) * G * Math.sin(alpha) * t) - 1)).toBeLessThan(0.02);
    expect(Math.abs(rad * b.angularVelocity[1] - v)).toBeLessThan(0.02 * v);
    expect(worstLift).toBeLessThan(1e-3);
  });
});

describe("box-stack", () => {
  const model = readExample("box-stack");
  it("stands, and each interface carries the weight of the boxes above it", () => {
    const { initial, final } = run(model, Math.round(2 / model.solver.dt));
    expect(allFinite(final)).toBe(true);
    for (let i = 1; i <= 4; i++) {
      const b0 = bodyOf(initial, `box${i}`);
      const b = bodyOf(final, `box${i}`);
      expect(dist(b.position, b0.position)).toBeLessThan(5e-3);
      expect(rotationAngle(b.orientation)).toBeLessThan(Math.PI / 180);
      expect(norm(b.velocity)).toBeLessThan(1e-2);
    }
    // weight above interface i (floor–box1, box1–box2, ...): (4 − i) m g, m = 1 kg
    const below = ["floor", "box1", "box2", "box3"];
    below.forEach((lower, i) => {
      const upper = `box${i + 1}`;
      const fn = final.contacts
        .filter((c) => c.bodies.includes(lower) && c.bodies.includes(upper))
        .reduce((s, c) => s + c.normalForce, 0);
      expect(Math.abs(fn / ((4 - i) * G) - 1), `${lower}–${upper}: ${fn} N`).toBeLessThan(0.05);
    });
  });
});

describe("cloth", () => {
  const model = readExample("cloth");
  it("falls and swings with non-increasing energy (Rayleigh damping), springs bounded", () => {
    const first = loadModel(model).state();
    const e0 = mechanicalEnergy(model, first, first);
    const comZ = (st: StateOut) => {
      let z = 0;
      let n = 0;
      for (const b of model.bodies)
        if (!b.fixed) {
          z += bodyOf(st, b.id).position[2];
          n++;
        }
      return z / n;
    };
    let prev = e0;
    let growth = 0;
    let strain = 0;
    const springs = model.forces ?? [];
    const { final } = run(model, Math.round(1.2 / model.solver.dt), (st, k) => {
      const e = mechanicalEnergy(model, st, first);
      if (k % 40 === 0) expect(st.energy.total).toBeCloseTo(e, 8);
      growth = Math.max(growth, e - prev);
      prev = e;
      for (const f of springs) {
        const l0 = dist(
          worldPoint(first, f.a.body, f.a.point),
          worldPoint(first, f.b.body, f.b.point),
        );
        const l = dist(worldPoint(st, f.a.body, f.a.point), worldPoint(st, f.b.body, f.b.point));
        strain = Math.max(strain, Math.abs(l / l0 - 1));
      }
    });
    expect(allFinite(final)).toBe(true);
    expect(growth).toBeLessThan(1e-6 * Math.abs(e0));
    expect(mechanicalEnergy(model, final, first)).toBeLessThan(e0);
    expect(strain).toBeLessThan(0.25);
    expect(comZ(final)).toBeLessThan(comZ(first) - 0.2);
    for (const b of model.bodies.filter((x) => x.fixed))
      expect(bodyOf(final, b.id).position).toEqual(b.position);
  });
});

describe("spring-mass-chain", () => {
  const model = readExample("spring-mass-chain");
  const m = 0.2;
  const k = 200;
  const l = 0.2;
  /** static equilibrium: spring i carries the (6 − i) masses below it */
  const stretch = (i: number) => ((6 - i) * m * G) / k;
  const equilibrium = () => {
    let z = 0;
    let e = 0;
    for (let i = 1; i <= 5; i++) {
      z -= l + stretch(i);
      e += m * G * z + 0.5 * k * stretch(i) ** 2;
    }
    return e;
  };
  const checkSettled = (st: StateOut) => {
    const z = [0, ...[1, 2, 3, 4, 5].map((i) => bodyOf(st, `m${i}`).position[2])];
    for (let i = 1; i <= 5; i++)
      expect(Math.abs(z[i - 1] - z[i] - l - stretch(i))).toBeLessThan(1e-6);
    expect(Math.abs(st.energy.total - equilibrium())).toBeLessThan(1e-6);
  };

  it("settles to the closed-form static stretches with non-increasing energy", () => {
    let prev = Number.POSITIVE_INFINITY;
    let growth = 0;
    const { final } = run(model, Math.round(10 / model.solver.dt), (st) => {
      const e = mechanicalEnergy(model, st);
      growth = Math.max(growth, e - prev);
      prev = e;
    });
    expect(growth).toBeLessThan(1e-9);
    checkSettled(final);
  });

  describe("through the API", () => {
    const server = useServer();

    async function roundTrip(name: string, steps: number) {
      const example = readExample(name);
      const created = await request(server.app.server)
        .post("/v1/sessions")
        .send({ model: example });
      expect(created.status, created.text).toBe(201);
      const r = await request(server.app.server)
        .post(`/v1/sessions/${created.body.id}/step`)
        .send({ steps });
      expect(r.status, r.text).toBe(200);
      const remote = State.parse(r.body);
      const sim = loadModel(example);
      sim.step(steps);
      await request(server.app.server).delete(`/v1/sessions/${created.body.id}`).expect(204);
      // JSON on the wire: −0 arrives as 0; the server adds the step its store has kept,
      // null without one (README, Persistence: keptStep)
      const local = { ...(JSON.parse(JSON.stringify(sim.state())) as StateOut), keptStep: null };
      return { example, remote, local };
    }

    it("every example posts as it is (201) and steps to the engine's State, all finite", async () => {
      for (const name of EXPECTED) {
        const { remote, local } = await roundTrip(name, 20);
        expect(remote, name).toEqual(local);
        expect(remote.step).toBe(20);
        expect(allFinite(remote), name).toBe(true);
      }
    });

    it("spring-mass-chain: the server's State is the engine's, settled as computed", async () => {
      const { remote, local } = await roundTrip("spring-mass-chain", 2000);
      expect(remote).toEqual(local);
      checkSettled(remote);
    });

    it("pendulum: the server's State is the engine's; energy and hinge hold", async () => {
      const { example, remote, local } = await roundTrip("pendulum", 300);
      expect(remote).toEqual(local);
      expect(Math.abs(mechanicalEnergy(example, remote))).toBeLessThan(1e-3 * G * 0.5);
      expect(norm(worldPoint(remote, "rod", [0, 0, -0.5]))).toBeLessThan(1e-6);
    });
  });
});
