/**
 * The articulated integrator turns a revolute joint by more than π in one step, and its
 * joint coordinates (joint-coordinate.ts: what actuators, joint limits, sensors and the
 * State read) follow: the integrator steps each hinge's angle itself, unbounded, and
 * tells the coordinate its unwrapped value at every stage and at the step's end
 * (JointCoordinate.guide), where the coordinate alone can only take the branch of its
 * reading nearest the step's start (a step turning the joint by less than π).
 *
 * References, independent of the engine:
 * - A rod spinning about a hinge at r rad/s (no gravity) with a position servo whose
 *   target ramps at the same rate, q*(t) = r t, q̇* = r: the servo's law
 *   k_p (q* − q) + k_d (q̇* − q̇) is zero along the ramp, so the rod turns uniformly,
 *   q(t) = r t, q̇ = r, τ = 0, its kinetic energy ½ I_p r² constant (I_p = m L²/3 about
 *   the pivot). At 5 ms a step turns it by 3.25 rad at r = 650 (just over π) and by 10 rad
 *   at r = 2000; below π/dt = 628 rad/s it was already exact (600: 3 rad a step).
 *   Before: at 650 rad/s the angle after 2 s read 25.7 rad for 1300, rate 13113 rad/s,
 *   effort 1401 N·m, kinetic energy 2.9e7 J (a runaway, not flagged diverged); at 2000 rad/s
 *   −25.7 rad, rate 40955 rad/s. Now the angle is r t to 4e-11 rad (650) and 1.2e-10 rad
 *   (2000) over 4 s, |τ| ≤ 2e-10 N·m, energy.error 1e-9 J and 2e-8 J.
 * - The same servo taking the rod from rest onto the ramp r = 2000 rad/s: the lag
 *   e = r t − q obeys I_p ë + k_d ė + k_p e = 0 from e(0) = 0, ė(0) = r (underdamped:
 *   ω_n = √(k_p/I_p), ζ = k_d/(2√(k_p I_p)), ω_d = ω_n √(1 − ζ²)),
 *   e(t) = (r/ω_d) e^{−ζω_n t} sin ω_d t, the effort k_p e + k_d ė.
 * - The same rod spinning freely (no actuator): the State's coordinate and a jointPosition
 *   sensor read r t.
 * - The same rod hinged to the end of an arm a motor holds still (a hinge between two
 *   moving bodies of the tree): the elbow's coordinate reads r t.
 * - A rod on a hinge a motor turns at 900 rad/s (4.5 rad a step): its coordinate reads the
 *   motor's angle.
 */
import { describe, expect, it } from "vitest";
import type { ModelInput } from "../../../schemas/model";
import { loadModel, loadSnapshot } from "../../../src/engine/index";

const M = 1;
const L = 1;
/** The rod's inertia about the pivot (kg·m²): m L²/12 + m (L/2)². */
const I_PIVOT = (M * L * L) / 3;
const H = 0.005;

/**
 * The rod along +x from the origin, hinged there about +y, spinning at `rate` about y;
 * `rodEnd` "b": the joint from the ground to the rod (its coordinate the rod's turn about
 * +y), "a": the ends swapped (the coordinate is the ground's turn relative to the rod: the
 * rod's turn with its sign changed).
 */
function spinningRod(
  rate: number,
  o: {
    servo?: boolean;
    rodEnd?: "a" | "b";
    motor?: boolean;
    /** The rod at rest at the start (else turning at `rate`). */
    atRest?: boolean;
  } = {},
): ModelInput {
  const rodEnd = { body: "rod", point: [-L / 2, 0, 0] };
  const groundEnd = { body: "ground", point: [0, 0, 0] };
  const swapped = o.rodEnd === "a";
  // the coordinate's rate: the rod's spin about +y, negated when the rod is end a
  const q = swapped ? -rate : rate;
  return {
    gravity: [0, 0, 0],
    bodies: [
      {
        id: "rod",
        mass: M,
        position: [L / 2, 0, 0],
        inertia: [1e-3, (M * L * L) / 12, (M * L * L) / 12],
        // turning about the pivot: the centre's velocity ω × (L/2, 0, 0)
        ...(o.motor || o.atRest
          ? {}
          : { angularVelocity: [0, rate, 0], velocity: [0, 0, (-rate * L) / 2] }),
      },
    ],
    joints: [
      {
        id: "hinge",
        type: "revolute",
        a: swapped ? rodEnd : groundEnd,
        b: swapped ? groundEnd : rodEnd,
        axis: [0, 1, 0],
      },
    ],
    ...(o.servo
      ? {
          actuators: [
            { id: "servo", joint: "hinge", type: "position", target: { rate: q }, kp: 50, kd: 5 },
          ],
        }
      : {}),
    ...(o.motor ? { motors: [{ id: "drive", joint: "hinge", angle: { rate: q } }] } : {}),
    sensors: [{ id: "angle", type: "jointPosition", joint: "hinge" }],
    solver: { integrator: "articulated", dt: H },
  } as ModelInput;
}

describe("articulated: a hinge turning more than π a step", () => {
  for (const r of [650, 2000])
    for (const rodEnd of ["b", "a"] as const)
      it(`a position servo on a ramp of ${r} rad/s (${((r * H) / Math.PI).toFixed(2)} π a step, the rod as end ${rodEnd}): q = r t, τ = 0, energy kept, over 4 s`, () => {
        const sim = loadModel(spinningRod(r, { servo: true, rodEnd }));
        const q = rodEnd === "a" ? -r : r;
        const steps = Math.round(4 / H);
        let angle = 0;
        let rate = 0;
        let effort = 0;
        let sensor = 0;
        for (let k = 1; k <= steps; k++) {
          sim.step(1);
          const s = sim.state();
          const t = k * H;
          angle = Math.max(angle, Math.abs(s.joints[0].coordinates[0] - q * t));
          rate = Math.max(rate, Math.abs(s.joints[0].rates[0] - q));
          effort = Math.max(effort, Math.abs(s.actuators[0].effort));
          sensor = Math.max(sensor, Math.abs(s.observation[0] - q * t));
        }
        const s = sim.state();
        // q(4 s) = 2600 or 8000 rad: the rounding of the angle's sum over 800 steps (measured
        // 4.0e-11 and 1.2e-10 rad; 1.8e-11 and 6.1e-11 rad/s)
        expect(angle).toBeLessThan(1e-12 * r);
        expect(sensor).toBe(angle);
        expect(rate).toBeLessThan(1e-12 * r);
        // the law at that rounding (measured 4.3e-11 and 1.9e-10 N·m)
        expect(effort).toBeLessThan(1e-8);
        expect(s.energy.kinetic).toBeCloseTo(0.5 * I_PIVOT * r * r, 3);
        expect(Math.abs(s.energy.error)).toBeLessThan(1e-6);
      });

  it("the servo takes the rod from rest onto a ramp of 2000 rad/s: the lag and the effort of the closed form (I ë + k_d ė + k_p e = 0)", () => {
    // e = r t − q from e(0) = 0, ė(0) = r: e = (r/ω_d) e^{−ζω_n t} sin ω_d t (ζ = 0.61);
    // the effort k_p e + k_d ė peaks at 9741 N·m, the rod passes π/h = 628 rad/s at 0.1 s
    const r = 2000;
    const kp = 50;
    const kd = 5;
    const wn = Math.sqrt(kp / I_PIVOT);
    const zeta = kd / (2 * Math.sqrt(kp * I_PIVOT));
    const wd = wn * Math.sqrt(1 - zeta * zeta);
    const lag = (t: number) => (r / wd) * Math.exp(-zeta * wn * t) * Math.sin(wd * t);
    const lagRate = (t: number) =>
      (r / wd) * Math.exp(-zeta * wn * t) * (wd * Math.cos(wd * t) - zeta * wn * Math.sin(wd * t));
    const sim = loadModel(spinningRod(r, { servo: true, atRest: true }));
    let angle = 0;
    let rate = 0;
    let effort = 0;
    for (let k = 1; k <= 800; k++) {
      sim.step(1);
      const t = k * H;
      const s = sim.state();
      angle = Math.max(angle, Math.abs(s.joints[0].coordinates[0] - (r * t - lag(t))));
      rate = Math.max(rate, Math.abs(s.joints[0].rates[0] - (r - lagRate(t))));
      effort = Math.max(effort, Math.abs(s.actuators[0].effort - (kp * lag(t) + kd * lagRate(t))));
    }
    // measured 5.6e-9 rad, 6.6e-8 rad/s, 2.1e-7 N·m (the Runge–Kutta pair's error)
    expect(angle).toBeLessThan(1e-7);
    expect(rate).toBeLessThan(1e-6);
    expect(effort).toBeLessThan(1e-5);
    expect(Math.abs(sim.state().energy.error)).toBeLessThan(1e-3);
  });

  it("a free rod at 2000 rad/s (no actuator): the State's coordinate and the sensor read r t", () => {
    const r = 2000;
    const sim = loadModel(spinningRod(r));
    let worst = 0;
    for (let k = 1; k <= 400; k++) {
      sim.step(1);
      const s = sim.state();
      worst = Math.max(
        worst,
        Math.abs(s.joints[0].coordinates[0] - r * k * H),
        Math.abs(s.observation[0] - r * k * H),
      );
    }
    expect(worst).toBeLessThan(1e-12 * r);
  });

  it("an elbow at 2000 rad/s on an arm a motor holds still: the elbow's coordinate reads r t", () => {
    // the arm (hinged to the ground at the origin) held at its model pose by a motor at
    // angle 0, the rod hinged to its far end turning uniformly about it
    const r = 2000;
    const sim = loadModel({
      gravity: [0, 0, 0],
      bodies: [
        { id: "arm", mass: M, position: [L / 2, 0, 0], inertia: [1e-3, 1 / 12, 1 / 12] },
        {
          id: "rod",
          mass: M,
          position: [(3 * L) / 2, 0, 0],
          inertia: [1e-3, 1 / 12, 1 / 12],
          angularVelocity: [0, r, 0],
          velocity: [0, 0, (-r * L) / 2],
        },
      ],
      joints: [
        {
          id: "shoulder",
          type: "revolute",
          a: { body: "ground", point: [0, 0, 0] },
          b: { body: "arm", point: [-L / 2, 0, 0] },
          axis: [0, 1, 0],
        },
        {
          id: "elbow",
          type: "revolute",
          a: { body: "arm", point: [L / 2, 0, 0] },
          b: { body: "rod", point: [-L / 2, 0, 0] },
          axis: [0, 1, 0],
        },
      ],
      motors: [{ id: "hold", joint: "shoulder", angle: 0 }],
      solver: { integrator: "articulated", dt: H },
    } as ModelInput);
    let worst = 0;
    for (let k = 1; k <= 400; k++) {
      sim.step(1);
      const elbow = sim.state().joints.find((j) => j.id === "elbow");
      worst = Math.max(worst, Math.abs((elbow?.coordinates[0] ?? 0) - r * k * H));
    }
    expect(worst).toBeLessThan(1e-12 * r);
  });

  for (const rodEnd of ["b", "a"] as const)
    it(`a motor turning its hinge at 900 rad/s (the rod as end ${rodEnd}): the coordinate reads the motor's angle`, () => {
      const r = 900;
      const q = rodEnd === "a" ? -r : r;
      const sim = loadModel(spinningRod(r, { motor: true, rodEnd }));
      let worst = 0;
      for (let k = 1; k <= 400; k++) {
        sim.step(1);
        worst = Math.max(worst, Math.abs(sim.state().joints[0].coordinates[0] - q * k * H));
      }
      expect(worst).toBeLessThan(1e-12 * r);
    });

  it("a snapshot of the fast servo continues bit-identically (the turn count is saved)", () => {
    const r = 2000;
    const whole = loadModel(spinningRod(r, { servo: true }));
    whole.step(150);
    const copy = loadSnapshot(JSON.parse(JSON.stringify(whole.snapshot())));
    whole.step(150);
    copy.step(150);
    expect(copy.state().joints[0].coordinates[0]).toBe(whole.state().joints[0].coordinates[0]);
    expect(copy.state().bodies).toEqual(whole.state().bodies);
    expect(whole.state().joints[0].coordinates[0]).toBeCloseTo(r * 300 * H, 6);
  });
});
