/**
 * The articulated integrator (solver.integrator "articulated": joint coordinates,
 * Featherstone's articulated-body algorithm, Tsitouras' 5(4) pair with error control;
 * src/engine/integrators/articulated.ts, src/engine/dynamics/articulated-body.ts) against
 * references computed here from the physics alone: closed forms (the compound pendulum's
 * period by the complete elliptic integral, computed by the arithmetic–geometric mean;
 * the steady conical pendulum; uniform acceleration on an incline and under a constant
 * torque), conservation laws (energy, angular momentum, computed here from the bodies'
 * state and the model's masses and inertias, never from the engine's energy report), a
 * one-dof reduction integrated by RK4 (the bead on the spinning rod) and generalized-α of
 * this engine at a 50× finer step (the double pendulum's first second).
 *
 * Every mechanism runs for many periods. The tolerances say what error is expected and
 * why; each is at least a hundred times below what a wrong sign or a missing term (the
 * parallel-axis term, a reaction's centripetal part, a gyroscopic term) would give.
 * Measured figures print with LONG_RUN_REPORT=1.
 */
import { describe, expect, it } from "vitest";
import { chainModel } from "../../../bench/scenes";
import type { ModelInput } from "../../../schemas/model";
import { loadModel, loadSnapshot } from "../../../src/engine/index";
import { TSITOURAS_5_4 } from "../../../src/engine/integrators/articulated";
import { pendulumPeriod } from "../../support/closed-forms";
import { HINGED_ROD_INERTIA, hingedRods, randomTree, rodPendulum } from "../../support/models";
import {
  add,
  cross,
  dot,
  norm,
  type Quat,
  Rk4,
  report,
  rotate,
  scale,
  sub,
  unwrap,
  type Vec3,
} from "./long-run/helpers";

const G = 9.81;

// ---------------------------------------------------------------------------------------
// references and read-outs, independent of the engine

const conj = (q: readonly number[]): Quat => [q[0], -q[1], -q[2], -q[3]];
const qmul = (a: readonly number[], b: readonly number[]): Quat => [
  a[0] * b[0] - a[1] * b[1] - a[2] * b[2] - a[3] * b[3],
  a[0] * b[1] + a[1] * b[0] + a[2] * b[3] - a[3] * b[2],
  a[0] * b[2] - a[1] * b[3] + a[2] * b[0] + a[3] * b[1],
  a[0] * b[3] + a[1] * b[2] - a[2] * b[1] + a[3] * b[0],
];
/** The rotation by `angle` about the y axis. */
const aboutY = (angle: number): Quat => [Math.cos(angle / 2), 0, Math.sin(angle / 2), 0];

interface BodyState {
  position: number[];
  orientation: number[];
  velocity: number[];
  angularVelocity: number[];
}
interface Inertial {
  mass: number;
  /** principal inertia about the centre, body frame */
  inertia: Vec3;
}

/** I_w ω = R I_b Rᵀ ω. */
function worldInertiaTimes(b: BodyState, inertia: Vec3, w: Vec3): Vec3 {
  const local = rotate(conj(b.orientation), w);
  return rotate(b.orientation, [
    inertia[0] * local[0],
    inertia[1] * local[1],
    inertia[2] * local[2],
  ]);
}

/** ½ m v² + ½ ωᵀ I_w ω + m g z of the bodies (gravity −g along z). */
function mechanicalEnergy(bodies: readonly BodyState[], inertials: readonly Inertial[], g = G) {
  let e = 0;
  bodies.forEach((b, i) => {
    const { mass, inertia } = inertials[i];
    const v = b.velocity as Vec3;
    const w = b.angularVelocity as Vec3;
    e += 0.5 * mass * dot(v, v) + 0.5 * dot(w, worldInertiaTimes(b, inertia, w));
    e += mass * g * b.position[2];
  });
  return e;
}

/** Σ I_w ω + m x × v about the origin (world). */
function angularMomentum(bodies: readonly BodyState[], inertials: readonly Inertial[]): Vec3 {
  let L: Vec3 = [0, 0, 0];
  bodies.forEach((b, i) => {
    const { mass, inertia } = inertials[i];
    L = add(L, worldInertiaTimes(b, inertia, b.angularVelocity as Vec3));
    L = add(L, scale(mass, cross(b.position as Vec3, b.velocity as Vec3)));
  });
  return L;
}

/** Where a body's point (body frame) is in the world. */
const worldPoint = (b: BodyState, p: Vec3): Vec3 =>
  add(b.position as Vec3, rotate(b.orientation, p));

/**
 * The instant in [0, h] where the cubic Hermite interpolant of (f0, f0') at 0 and (f1, f1')
 * at h crosses zero (f0, f1 of opposite signs), by bisection.
 */
function hermiteRoot(f0: number, d0: number, f1: number, d1: number, h: number): number {
  const at = (s: number) => {
    const s2 = s * s;
    const s3 = s2 * s;
    return (
      (2 * s3 - 3 * s2 + 1) * f0 +
      (s3 - 2 * s2 + s) * h * d0 +
      (-2 * s3 + 3 * s2) * f1 +
      (s3 - s2) * h * d1
    );
  };
  let lo = 0;
  let hi = 1;
  for (let i = 0; i < 60; i++) {
    const mid = 0.5 * (lo + hi);
    if (Math.sign(at(mid)) === Math.sign(f0)) lo = mid;
    else hi = mid;
  }
  return 0.5 * (lo + hi) * h;
}

const articulated = (dt: number, extra: Record<string, unknown> = {}) =>
  ({ integrator: "articulated" as const, dt, ...extra }) as NonNullable<ModelInput["solver"]>;

// ---------------------------------------------------------------------------------------
// models

/**
 * A rod (mass m, length L, along its body x, inertia m L²/12 transverse) pinned at its end
 * to the ground at the origin by the revolute joint "pin" about y, at rest at the angle θ0
 * from the downward vertical: centre d (sin θ0, 0, −cos θ0), d = L/2.
 */
function compoundPendulum(o: { m: number; L: number; theta0: number; dt: number }): ModelInput {
  const d = o.L / 2;
  return {
    bodies: [
      {
        id: "rod",
        mass: o.m,
        position: [d * Math.sin(o.theta0), 0, -d * Math.cos(o.theta0)],
        // body x onto (sin θ0, 0, −cos θ0): a turn of π/2 − θ0 about y
        orientation: aboutY(Math.PI / 2 - o.theta0),
        inertia: [1e-3, (o.m * o.L * o.L) / 12, (o.m * o.L * o.L) / 12],
      },
    ],
    joints: [
      {
        id: "pin",
        type: "revolute",
        a: { body: "ground" },
        b: { body: "rod", point: [-d, 0, 0] },
        axis: [0, 1, 0],
      },
    ],
    solver: articulated(o.dt),
  };
}

/**
 * A 1 m rod (1 kg, inertia [1/12, 1/12, 0.001] kg·m² about its centre, body z along it) on
 * the revolute joint "hinge" about y at the origin, released horizontal along +x; `rod` and
 * `hinge` add to the body and the joint.
 */
function hingedRod(
  solver: Record<string, unknown>,
  rod: Record<string, unknown> = {},
  hinge: Record<string, unknown> = {},
): ModelInput {
  return {
    gravity: [0, 0, -G],
    bodies: [
      {
        id: "rod",
        mass: 1,
        inertia: [1 / 12, 1 / 12, 0.001],
        position: [0.5, 0, 0],
        orientation: [Math.SQRT1_2, 0, Math.SQRT1_2, 0],
        ...rod,
      },
    ],
    joints: [
      {
        id: "hinge",
        type: "revolute",
        a: { point: [0, 0, 0] },
        b: { body: "rod", point: [0, 0, -0.5] },
        axis: [0, 1, 0],
        ...hinge,
      },
    ],
    solver,
  } as ModelInput;
}

/** The rods of hingedRods (test/support/models.ts), the double pendulum's. */
const ROD: Inertial = { mass: 1, inertia: HINGED_ROD_INERTIA };
const doublePendulum = hingedRods;

// ---------------------------------------------------------------------------------------

describe("articulated: the Runge–Kutta pair's order conditions", () => {
  // Butcher's conditions Σ b Φ(τ) = 1/γ(τ) for every rooted tree τ up to the order, written
  // out (Hairer, Nørsett & Wanner, "Solving ODEs I", §II.2, Table 2.2), with the nodes
  // c_i = Σ_j a_ij checked first: the fifth-order weights b (the last row of a) satisfy the
  // 17 conditions of order ≤ 5, the embedded b̂ = b − e the 8 of order ≤ 4 and not all of
  // order 5 (else e would estimate nothing)
  const { c, a, e } = TSITOURAS_5_4;
  const s = c.length;
  const b = a[s - 1].concat(0);
  const bHat = b.map((x, i) => x - e[i]);
  const A = (i: number, j: number) => (j < a[i].length ? a[i][j] : 0);
  const sum = (f: (i: number) => number) => {
    let t = 0;
    for (let i = 0; i < s; i++) t += f(i);
    return t;
  };
  // (A v)_i and the trees' elementary weights as vectors over the stages
  const Av = (v: readonly number[]) =>
    Array.from({ length: s }, (_, i) => sum((j) => A(i, j) * v[j]));
  const pow = (k: number) => c.map((x) => x ** k);
  const times = (u: readonly number[], v: readonly number[]) => u.map((x, i) => x * v[i]);
  const one = c.map(() => 1);
  const Ac = Av(c);
  const conditions: [string, readonly number[], number][] = [
    ["1", one, 1],
    ["c", c, 1 / 2],
    ["c²", pow(2), 1 / 3],
    ["Ac", Ac, 1 / 6],
    ["c³", pow(3), 1 / 4],
    ["c·Ac", times(c, Ac), 1 / 8],
    ["Ac²", Av(pow(2)), 1 / 12],
    ["AAc", Av(Ac), 1 / 24],
    ["c⁴", pow(4), 1 / 5],
    ["c²·Ac", times(pow(2), Ac), 1 / 10],
    ["(Ac)²", times(Ac, Ac), 1 / 20],
    ["c·Ac²", times(c, Av(pow(2))), 1 / 15],
    ["Ac³", Av(pow(3)), 1 / 20],
    ["c·AAc", times(c, Av(Ac)), 1 / 30],
    ["A(c·Ac)", Av(times(c, Ac)), 1 / 40],
    ["AAc²", Av(Av(pow(2))), 1 / 60],
    ["AAAc", Av(Av(Ac)), 1 / 120],
  ];
  const residual = (w: readonly number[], [, phi, g]: [string, readonly number[], number]) =>
    Math.abs(sum((i) => w[i] * phi[i]) - g);

  it("nodes are the rows' sums; b has order 5, b̂ order 4 but not 5", () => {
    for (let i = 0; i < s; i++) expect(Math.abs(sum((j) => A(i, j)) - c[i])).toBeLessThan(1e-14);
    for (const cond of conditions) expect(residual(b, cond), cond[0]).toBeLessThan(1e-14);
    for (const cond of conditions.slice(0, 8))
      expect(residual(bHat, cond), cond[0]).toBeLessThan(1e-14);
    expect(Math.max(...conditions.slice(8).map((cond) => residual(bHat, cond)))).toBeGreaterThan(
      1e-4,
    );
  });
});

describe("articulated: compound pendulum on a revolute joint (θ0 = 2.5 rad)", () => {
  const m = 1.3;
  const L = 0.8;
  const d = L / 2;
  const Ip = (m * L * L) / 12 + m * d * d; // parallel-axis theorem
  const theta0 = 2.5;
  const T = pendulumPeriod(Ip, m, d, theta0);
  // the step is a quarter period / 100: the bottom of the swing falls on step boundaries
  // (steps 100, 300, 500, …) in the exact motion
  const quarter = 100;
  const h = T / (4 * quarter);
  const periods = 24;

  it("period (elliptic integral), energy and the reaction at the bottom of the swing", () => {
    const sim = loadModel(compoundPendulum({ m, L, theta0, dt: h }));
    const inertial: Inertial[] = [{ mass: m, inertia: [1e-3, (m * L * L) / 12, (m * L * L) / 12] }];
    const E0 = -m * G * d * Math.cos(theta0);
    const rateBottom2 = (2 * m * G * d * (1 - Math.cos(theta0))) / Ip;
    // θ from the centre's position, θ̇ = −ω_y (a turn about +y takes the centre to −x)
    let prevTheta = theta0;
    let prevRate = 0;
    const upward: number[] = []; // instants θ crosses 0 going up
    let energy = 0;
    let reaction = 0; // |F − F(θ)| / (m g) at every step, F(θ) the closed form below
    let bottomRadial = 0;
    let bottomTangential = 0;
    let bottomAngle = 0;
    let torque = 0;
    const steps = Math.round(periods * 4 * quarter + 2 * quarter);
    for (let n = 1; n <= steps; n++) {
      sim.step(1);
      const st = sim.state();
      const b = st.bodies[0];
      const theta = Math.atan2(b.position[0], -b.position[2]);
      const rate = -b.angularVelocity[1];
      if (prevTheta < 0 && theta >= 0)
        upward.push((n - 1) * h + hermiteRoot(prevTheta, prevRate, theta, rate, h));
      prevTheta = theta;
      prevRate = rate;
      energy = Math.max(energy, Math.abs(mechanicalEnergy(st.bodies, inertial) - E0) / (m * G * d));
      // F = m (a − g): radially (out from the pivot, e_r = (sin θ, 0, −cos θ))
      // −m d θ̇² − m g cos θ, tangentially (e_t = (cos θ, 0, sin θ)) m d θ̈ + m g sin θ
      // = m g sin θ (1 − m d²/I_p); θ̇² from energy conservation at this θ
      const F = st.joints[0].force as Vec3;
      const er: Vec3 = [Math.sin(theta), 0, -Math.cos(theta)];
      const et: Vec3 = [Math.cos(theta), 0, Math.sin(theta)];
      const rate2 = (2 * m * G * d * (Math.cos(theta) - Math.cos(theta0))) / Ip;
      const exact = add(
        scale(-m * d * rate2 - m * G * Math.cos(theta), er),
        scale(m * G * Math.sin(theta) * (1 - (m * d * d) / Ip), et),
      );
      reaction = Math.max(reaction, norm(sub(F, exact)) / (m * G));
      // the rod turns about a principal axis through the pivot: no moment about it
      torque = Math.max(torque, norm(st.joints[0].torque as Vec3) / (m * G * d));
      if (n % (2 * quarter) === quarter) {
        // the bottom of the swing: pulled up by m g + m d θ̇², θ̇² = 2 m g d (1 − cos θ0)/I_p,
        // no tangential part (measured along e_r, e_t at the simulated θ, which is the
        // phase error away from 0)
        bottomRadial = Math.max(
          bottomRadial,
          Math.abs(-dot(F, er) - (m * G + m * d * rateBottom2)) / (m * G),
        );
        bottomTangential = Math.max(bottomTangential, Math.abs(dot(F, et)) / (m * G));
        bottomAngle = Math.max(bottomAngle, Math.abs(theta));
      }
    }
    const crossings = upward.length;
    const measured = (upward[crossings - 1] - upward[0]) / (crossings - 1);
    report("articulated compound pendulum", {
      T,
      measured,
      periodError: Math.abs(measured - T) / T,
      crossings,
      energy,
      reaction,
      bottomRadial,
      bottomTangential,
      bottomAngle,
      torque,
    });
    expect(crossings - 1).toBeGreaterThanOrEqual(periods - 1);
    // the period over 23 periods (crossings interpolated by cubic Hermite on θ, θ̇: exact
    // to ~1e-12 s at this step): the Runge–Kutta steps (here one sub-step each, their
    // local error ~1e-13 m, far under the 1e-6 m tolerance) leave ~3e-10 of the period,
    // measured. The small-angle period 2π √(I_p/(m g d)) is 39 % shorter and one without
    // the parallel-axis term 50 %: the bound is 30 times the measured error
    expect(Math.abs(measured - T) / T).toBeLessThan(1e-8);
    // energy (kinetic and potential, summed here): measured 7e-10 m g d, drifting
    // linearly as an explicit scheme's does
    expect(energy).toBeLessThan(1e-8);
    // the reaction against the closed form at the simulated angle (θ̇² of energy
    // conservation at that θ): they differ by the state's error only, measured 1e-9 m g;
    // the centripetal part alone is 2.7 m g at the bottom, gravity's 1 m g
    expect(reaction).toBeLessThan(1e-7);
    // at the bottom steps: m g + m d θ̇² = 3.7 m g, to the same 1e-9 m g (the simulated
    // θ there, the phase error, grows as t² with the energy's drift: ≤ 1.5e-7 rad after
    // 24 periods, changing the radial part by O(θ²) and giving a tangential part of
    // m g θ (1 − m d²/I_p) ≤ 4e-8 m g)
    expect(bottomAngle).toBeLessThan(1e-6);
    expect(bottomRadial).toBeLessThan(1e-7);
    expect(bottomTangential).toBeLessThan(1e-7);
    // the rod turns about a principal axis through the pivot: the joint holds no moment
    // (rounding only)
    expect(torque).toBeLessThan(1e-12);
  });

  it("at a coarse step (T/8, the controller sub-stepping) it returns to θ0 every period", () => {
    // 8 steps a period: each step of 0.3 s is taken in ~4.5 sub-steps of error ≤ 1e-6 m
    // (the centre's displacement; 2.5e-6 rad at d = 0.4 m). Over 24 periods, ~860
    // sub-steps: at most 2e-3 rad if every error added up; measured 3e-4 rad, and the
    // energy 1.3e-4 m g d. With the control off (null) the same steps, one sub-step each,
    // end 1.3 rad off and 1.2 m g d away.
    const coarse = T / 8;
    const run = (stepTolerance?: null) => {
      const model = compoundPendulum({ m, L, theta0, dt: coarse });
      if (stepTolerance === null) model.solver = articulated(coarse, { stepTolerance });
      return loadModel(model);
    };
    const sim = run();
    const inertial: Inertial[] = [{ mass: m, inertia: [1e-3, (m * L * L) / 12, (m * L * L) / 12] }];
    const E0 = -m * G * d * Math.cos(theta0);
    let substeps = 0;
    let energy = 0;
    let worst = 0;
    for (let k = 1; k <= 24 * 8; k++) {
      sim.step(1);
      substeps += sim.lastStepStats.substeps;
      const st = sim.state();
      energy = Math.max(energy, Math.abs(mechanicalEnergy(st.bodies, inertial) - E0) / (m * G * d));
      if (k % 8 === 0) {
        const p = st.bodies[0].position;
        worst = Math.max(worst, Math.abs(Math.atan2(p[0], -p[2]) - theta0));
      }
    }
    report("articulated compound pendulum, coarse", { substeps, worst, energy });
    expect(substeps).toBeGreaterThan(2 * 24 * 8);
    expect(worst).toBeLessThan(2e-3);
    expect(energy).toBeLessThan(2e-3);
    const off = run(null);
    off.step(24 * 8);
    const p = off.state().bodies[0].position;
    expect(Math.abs(Math.atan2(p[0], -p[2]) - theta0)).toBeGreaterThan(0.1);
  });
});

describe("articulated: spherical pendulum in steady conical motion", () => {
  // a rod (mass m, inertia I_a along its axis, I_t across) hung from the origin by a
  // spherical joint at the distance l from its centre on its axis, the axis at the cone
  // angle α from the downward vertical, turning rigidly at Ω about z: with
  // L = I_p Ω ẑ, dL/dt = Ω ẑ × L must equal the gravity moment m g l sin α ŷ, which gives
  // Ω² = m g l / (cos α (m l² + I_t − I_a)) (a point mass: g/(l cos α))
  const m = 0.7;
  const l = 0.6;
  const Ia = 0.004;
  const It = 0.03;
  const alpha = 0.7;
  const Omega = Math.sqrt((m * G * l) / (Math.cos(alpha) * (m * l * l + It - Ia)));
  const revolutions = 30;
  const h = 0.01;

  it("the height, the cone angle and the turning rate stay those of the closed form", () => {
    const e: Vec3 = [Math.sin(alpha), 0, -Math.cos(alpha)];
    const sim = loadModel({
      bodies: [
        {
          id: "bob",
          mass: m,
          position: scale(l, e),
          orientation: aboutY(Math.PI / 2 - alpha),
          inertia: [Ia, It, It],
          velocity: [0, Omega * l * Math.sin(alpha), 0],
          angularVelocity: [0, 0, Omega],
        },
      ],
      joints: [
        {
          id: "ball",
          type: "spherical",
          a: { body: "ground", point: [0, 0, 0] },
          b: { body: "bob", point: [-l, 0, 0] },
        },
      ],
      solver: articulated(h),
    });
    const steps = Math.round((revolutions * 2 * Math.PI) / Omega / h);
    let height = 0;
    let cone = 0;
    let phase = 0;
    let reaction = 0;
    let azimuth = 0;
    let axis = 0;
    for (let n = 1; n <= steps; n++) {
      sim.step(1);
      const st = sim.state();
      const b = st.bodies[0];
      const p = b.position as Vec3;
      height = Math.max(height, Math.abs(p[2] + l * Math.cos(alpha)));
      cone = Math.max(cone, Math.abs(Math.atan2(Math.hypot(p[0], p[1]), -p[2]) - alpha));
      // the rod's axis stays along the radius (it does not spin off it)
      axis = Math.max(axis, norm(sub(rotate(b.orientation, [1, 0, 0]), scale(1 / l, p))));
      azimuth = unwrap(azimuth, Math.atan2(p[1], p[0]));
      phase = Math.max(phase, Math.abs(azimuth - Omega * n * h));
      // F = m (a − g) = m g ẑ − m Ω² ρ (towards the axis)
      const exact: Vec3 = [-m * Omega * Omega * p[0], -m * Omega * Omega * p[1], m * G];
      reaction = Math.max(reaction, norm(sub(st.joints[0].force as Vec3, exact)) / (m * G));
    }
    report("articulated conical pendulum", { Omega, steps, height, cone, axis, phase, reaction });
    // in joint coordinates the steady motion is a uniform turn of the joint's relative
    // quaternion about z at a constant relative ω (its rates vanish on the orbit): each
    // Runge–Kutta step is then a turn about z with a phase error only, so the height, the
    // cone angle, the rod's direction along the radius and the reaction are kept to
    // rounding (measured ≤ 6e-15), the phase to 1e-11 rad over 30 revolutions. The bounds
    // allow 100 times the phase error for all; a wrong or missing term (gyroscopic,
    // centripetal) makes the motion unsteady, a nutation of order one, and leaving
    // I_t − I_a out of Ω would put the phase 0.3 rad off per revolution
    expect(height).toBeLessThan(1e-9 * l);
    expect(cone).toBeLessThan(1e-9);
    expect(axis).toBeLessThan(1e-9);
    expect(reaction).toBeLessThan(1e-9);
    expect(phase).toBeLessThan(1e-9);
  });
});

describe("articulated: torque-free asymmetric body (intermediate-axis flips)", () => {
  const inertia: Vec3 = [1, 2, 3];
  const mass = 2.5;
  const w0: Vec3 = [0.02, 2, 0.02];
  const v0: Vec3 = [0.3, -0.2, 0.1];
  const x0: Vec3 = [1, 2, 3];
  const h = 0.01;
  const duration = 80;

  it("conserves the world angular momentum and the kinetic energy; moves uniformly", () => {
    const sim = loadModel({
      gravity: [0, 0, 0],
      bodies: [{ id: "box", mass, inertia, position: x0, velocity: v0, angularVelocity: w0 }],
      solver: articulated(h),
    });
    const inertial = [{ mass, inertia }];
    const L0: Vec3 = [inertia[0] * w0[0], inertia[1] * w0[1], inertia[2] * w0[2]];
    const E0 = 0.5 * (dot(w0, L0) + mass * dot(v0, v0));
    let flips = 0;
    let prevSpin = w0[1];
    let momentum = 0;
    let energy = 0;
    let drift = 0;
    const steps = Math.round(duration / h);
    for (let n = 1; n <= steps; n++) {
      sim.step(1);
      const b = sim.state().bodies[0];
      // ω in the body frame: its y part changes sign at each flip
      const spin = rotate(conj(b.orientation), b.angularVelocity as Vec3)[1];
      if (Math.sign(spin) !== Math.sign(prevSpin)) flips++;
      prevSpin = spin;
      const Lw = worldInertiaTimes(b, inertia, b.angularVelocity as Vec3);
      momentum = Math.max(momentum, norm(sub(Lw, L0)) / norm(L0));
      const e = mechanicalEnergy([b], inertial, 0);
      energy = Math.max(energy, Math.abs(e - E0) / E0);
      drift = Math.max(drift, norm(sub(b.position as Vec3, add(x0, scale(n * h, v0)))));
    }
    report("articulated free body", { flips, momentum, energy, drift });
    expect(flips).toBeGreaterThanOrEqual(8);
    // near the unstable axis errors grow as e^{λt}, λ = ω_y √((I2 − I1)(I3 − I2)/(I1 I3))
    // ≈ 1.2/s, before the flip turns them back; measured 7e-12 (momentum) and 3e-12
    // (energy) relative over 8 flips. A missing gyroscopic term ω × I ω would leave the
    // body spinning about y without a flip, its world momentum turning by order one
    expect(momentum).toBeLessThan(1e-9);
    expect(energy).toBeLessThan(1e-9);
    // the translation is integrated exactly (zero acceleration): rounding of positions
    // ~30 m over 8000 steps, measured 4e-12 m
    expect(drift).toBeLessThan(1e-10);
  });
});

describe("articulated: a free-floating hinged pair (a tree without ground)", () => {
  // two bars joined by the revolute "hinge" about the axis e, in no joint to the ground:
  // the first is the tree's free root. Initial state: a common tumble Ω, the second bar
  // turning at 5 rad/s about e relative to the first, velocities consistent at the hinge point
  const m1 = 1.5;
  const m2 = 0.8;
  const I1: Vec3 = [0.01, 0.2, 0.21];
  const I2: Vec3 = [0.005, 0.06, 0.062];
  const x1: Vec3 = [0, 0, 0];
  const x2: Vec3 = [0.65, 0, 0];
  const P: Vec3 = [0.4, 0, 0]; // the hinge, 0.4 m from the first bar's centre
  const e: Vec3 = [0, 0.6, 0.8];
  const Omega: Vec3 = [0.7, -1.1, 0.4];
  const w2 = add(Omega, scale(5, e));
  const V: Vec3 = [0.2, 0.1, 3];
  const v2 = sub(add(V, cross(Omega, sub(P, x1))), cross(w2, sub(P, x2)));
  const h = 0.01;
  const duration = 20;

  it("its centre of mass falls on a parabola; momentum about it and energy are kept", () => {
    const sim = loadModel({
      bodies: [
        { id: "b1", mass: m1, inertia: I1, position: x1, velocity: V, angularVelocity: Omega },
        { id: "b2", mass: m2, inertia: I2, position: x2, velocity: v2, angularVelocity: w2 },
      ],
      joints: [
        {
          id: "hinge",
          type: "revolute",
          a: { body: "b1", point: sub(P, x1) },
          b: { body: "b2", point: sub(P, x2) },
          axis: e,
        },
      ],
      solver: articulated(h),
    });
    const inertials: Inertial[] = [
      { mass: m1, inertia: I1 },
      { mass: m2, inertia: I2 },
    ];
    const M = m1 + m2;
    const c0 = scale(1 / M, add(scale(m1, x1), scale(m2, x2)));
    const vc = scale(1 / M, add(scale(m1, V), scale(m2, v2)));
    // momentum about the centre of mass: Σ I_w ω + m (x − c) × (v − v_c), at t = 0 with
    // identity orientations
    const about = (bodies: readonly BodyState[]) => {
      const c = scale(
        1 / M,
        add(scale(m1, bodies[0].position as Vec3), scale(m2, bodies[1].position as Vec3)),
      );
      const v = scale(
        1 / M,
        add(scale(m1, bodies[0].velocity as Vec3), scale(m2, bodies[1].velocity as Vec3)),
      );
      let L: Vec3 = [0, 0, 0];
      bodies.forEach((b, i) => {
        const { mass, inertia } = inertials[i];
        L = add(L, worldInertiaTimes(b, inertia, b.angularVelocity as Vec3));
        L = add(L, scale(mass, cross(sub(b.position as Vec3, c), sub(b.velocity as Vec3, v))));
      });
      return { c, v, L };
    };
    const start = [
      { position: x1, orientation: [1, 0, 0, 0], velocity: V, angularVelocity: Omega },
      { position: x2, orientation: [1, 0, 0, 0], velocity: v2, angularVelocity: w2 },
    ];
    const L0 = about(start).L;
    const E0 = mechanicalEnergy(start, inertials);
    let centre = 0;
    let momentum = 0;
    let energy = 0;
    let gap = 0;
    let relative = 0;
    const steps = Math.round(duration / h);
    for (let n = 1; n <= steps; n++) {
      sim.step(1);
      const bodies = sim.state().bodies;
      const t = n * h;
      const { c, L } = about(bodies);
      const exact = add(add(c0, scale(t, vc)), [0, 0, -0.5 * G * t * t]);
      centre = Math.max(centre, norm(sub(c, exact)));
      momentum = Math.max(momentum, norm(sub(L, L0)) / norm(L0));
      energy = Math.max(energy, Math.abs(mechanicalEnergy(bodies, inertials) - E0) / E0);
      gap = Math.max(
        gap,
        norm(sub(worldPoint(bodies[0], sub(P, x1)), worldPoint(bodies[1], sub(P, x2)))),
      );
      // the relative rotation stays about the hinge axis (in the first bar's frame: e)
      const q = qmul(conj(bodies[0].orientation), bodies[1].orientation);
      relative = Math.max(relative, norm(cross([q[1], q[2], q[3]], e)));
    }
    report("articulated floating pair", { centre, momentum, energy, gap, relative });
    // the centre of mass is a parabola, but not a coordinate (the root bar's centre is):
    // the sub-steps' errors reach it as they reach the rest, measured 2.5e-8 m over 20 s;
    // momentum about it 8e-9 and energy 4e-8 relative. A hinge reaction not equal and
    // opposite on the two bars would bend the parabola by metres
    expect(centre).toBeLessThan(1e-6);
    expect(momentum).toBeLessThan(1e-6);
    expect(energy).toBeLessThan(1e-6);
    // the hinge holds by construction: rounding
    expect(gap).toBeLessThan(1e-12);
    expect(relative).toBeLessThan(1e-12);
  });
});

describe("articulated: double pendulum of two rods (chaotic, released horizontal)", () => {
  it("keeps its energy over 30 s", () => {
    const h = 0.005;
    const sim = loadModel(doublePendulum(articulated(h)));
    let energy = 0;
    let reported = 0;
    const steps = Math.round(30 / h);
    for (let n = 1; n <= steps; n++) {
      sim.step(1);
      const st = sim.state();
      energy = Math.max(energy, Math.abs(mechanicalEnergy(st.bodies, [ROD, ROD])) / (2 * G * 1));
      reported = Math.max(reported, Math.abs(st.energy.error) / (2 * G));
    }
    report("articulated double pendulum energy", { energy, reported });
    // E0 = 0 (both rods at z = 0, at rest); the chaotic motion whips the second rod
    // (up to 8.7 rad/s): measured 4e-8 m g L (the sum of the two rods' m g L = 2 g J)
    // with the default tolerance, 1e-6 m per sub-step; the engine's own energy.error
    // agrees with the sum computed here
    expect(energy).toBeLessThan(1e-6);
    expect(reported).toBeLessThan(1e-6);
    expect(Math.abs(reported - energy)).toBeLessThan(1e-10);
  });

  it("follows generalized-α at h = 1e-4 s over the first second", () => {
    // generalized-α at h = 1e-4 s and 2e-4 s alongside the articulated run at 5 ms,
    // compared at every 5 ms: generalized-α (ρ∞ = 1) is second order, so its own error at
    // 1e-4 s is |GA(2h) − GA(h)|/3 (Richardson), which the articulated run, far more
    // accurate, must reproduce as its distance to GA(h)
    const fine = loadModel(doublePendulum({ integrator: "generalized-alpha", dt: 1e-4 }));
    const coarse = loadModel(doublePendulum({ integrator: "generalized-alpha", dt: 2e-4 }));
    const sim = loadModel(doublePendulum(articulated(0.005)));
    const distance = (a: readonly BodyState[], b: readonly BodyState[]) => {
      let x = 0;
      let v = 0;
      for (let i = 0; i < 2; i++) {
        x = Math.max(x, norm(sub(a[i].position as Vec3, b[i].position as Vec3)));
        v = Math.max(v, norm(sub(a[i].velocity as Vec3, b[i].velocity as Vec3)));
      }
      return { x, v };
    };
    let position = 0;
    let velocity = 0;
    let gaPosition = 0;
    let gaVelocity = 0;
    let spin = 0;
    for (let k = 0; k < 200; k++) {
      fine.step(50);
      coarse.step(25);
      sim.step(1);
      const f = fine.state().bodies;
      const a = sim.state().bodies;
      const ours = distance(a, f);
      const theirs = distance(coarse.state().bodies, f);
      position = Math.max(position, ours.x);
      velocity = Math.max(velocity, ours.v);
      gaPosition = Math.max(gaPosition, theirs.x / 3);
      gaVelocity = Math.max(gaVelocity, theirs.v / 3);
      spin = Math.max(spin, Math.abs(a[1].angularVelocity[1]));
    }
    report("articulated double pendulum vs generalized-α", {
      position,
      velocity,
      gaPosition,
      gaVelocity,
      spin,
    });
    // the second rod reaches 8.7 rad/s: generalized-α's own error at 1e-4 s is measured
    // 6e-8 m, and the distance to it is the same 6e-8 m (the articulated run's own error
    // is far smaller). A wrong sign or a missing velocity-product term would put them
    // millimetres apart within the second
    expect(gaPosition).toBeLessThan(1e-6);
    expect(position).toBeLessThan(1.5 * gaPosition);
    expect(velocity).toBeLessThan(1.5 * gaVelocity);
  });
});

describe("articulated: a fixed joint welds two bodies into one compound pendulum", () => {
  // rod A (1 kg, 1 m along its z, hanging from the origin by the revolute "pin" about y)
  // with block B (2 kg, inertia [0.02, 0.03, 0.04], turned 0.3 rad about y) welded below
  // its end, the block's centre 1.1 m below the pivot; the whole tilted by θ0 about y
  const mA = 1;
  const mB = 2;
  const IA: Vec3 = [1 / 12, 1 / 12, 1e-3];
  const IB: Vec3 = [0.02, 0.03, 0.04];
  const qB = aboutY(0.3);
  const theta0 = 0.1;
  const M = mA + mB;
  const d = (mA * 0.5 + mB * 1.1) / M;
  // parallel-axis theorem about the pivot, about y (B's turn about y keeps its I_yy)
  const Ip = IA[1] + mA * 0.5 ** 2 + IB[1] + mB * 1.1 ** 2;
  const T = pendulumPeriod(Ip, M, d, theta0);
  const h = 0.01;
  const periods = 20;

  it("its period is the combined body's; the weld holds the relative pose", () => {
    const tilt = aboutY(theta0);
    const sim = loadModel({
      bodies: [
        {
          id: "A",
          mass: mA,
          inertia: IA,
          position: rotate(tilt, [0, 0, -0.5]),
          orientation: tilt,
        },
        {
          id: "B",
          mass: mB,
          inertia: IB,
          position: rotate(tilt, [0, 0, -1.1]),
          orientation: qmul(tilt, qB),
        },
      ],
      joints: [
        // listed first, B as its a end: the tree is found from the pin whatever the order
        {
          id: "weld",
          type: "fixed",
          a: { body: "B", point: rotate(conj(qB), [0, 0, 0.1]) },
          b: { body: "A", point: [0, 0, -0.5] },
        },
        {
          id: "pin",
          type: "revolute",
          a: { body: "ground" },
          b: { body: "A", point: [0, 0, 0.5] },
          axis: [0, 1, 0],
        },
      ],
      solver: articulated(h),
    });
    const centre = (bodies: readonly BodyState[]) =>
      scale(
        1 / M,
        add(scale(mA, bodies[0].position as Vec3), scale(mB, bodies[1].position as Vec3)),
      );
    const angle = (bodies: readonly BodyState[]) => {
      const c = centre(bodies);
      return Math.atan2(c[0], -c[2]);
    };
    // the weld: B's centre and orientation in A's frame, as in the model
    const relPos: Vec3 = [0, 0, -0.6];
    let weld = 0;
    let prev = angle(sim.state().bodies);
    let prevRate = 0;
    const upward: number[] = [];
    const steps = Math.round((periods + 1.5) * (T / h));
    for (let n = 1; n <= steps; n++) {
      sim.step(1);
      const bodies = sim.state().bodies;
      const theta = angle(bodies);
      // both bodies turn at the same rate about y: θ̇ = −ω_y
      const rate = -bodies[0].angularVelocity[1];
      if (prev < 0 && theta >= 0)
        upward.push((n - 1) * h + hermiteRoot(prev, prevRate, theta, rate, h));
      prev = theta;
      prevRate = rate;
      const inA = rotate(
        conj(bodies[0].orientation),
        sub(bodies[1].position as Vec3, bodies[0].position as Vec3),
      );
      const qRel = qmul(conj(bodies[0].orientation), bodies[1].orientation);
      weld = Math.max(
        weld,
        norm(sub(inA, relPos)),
        norm(sub(bodies[0].angularVelocity as Vec3, bodies[1].angularVelocity as Vec3)),
        Math.hypot(qRel[0] - qB[0], qRel[1] - qB[1], qRel[2] - qB[2], qRel[3] - qB[3]),
      );
    }
    const measured = (upward[upward.length - 1] - upward[0]) / (upward.length - 1);
    report("articulated welded pendulum", { T, measured, rel: Math.abs(measured - T) / T, weld });
    expect(upward.length - 1).toBeGreaterThanOrEqual(periods);
    // over 20 periods (one sub-step per step, amplitude 0.1 rad): measured 1e-12 of the
    // period. Forgetting B's own inertia would change T by 0.5 %, its parallel-axis term
    // by 64 %, a weld that let B turn by more
    expect(Math.abs(measured - T) / T).toBeLessThan(1e-9);
    // the weld is a constant relative pose, held by construction: rounding, measured 4e-15
    expect(weld).toBeLessThan(1e-13);
  });
});

describe("articulated: prismatic joints", () => {
  it("a slider on a rail inclined at α: s = −½ g sin α t², normal reaction m g cos α", () => {
    const alpha = 0.4;
    const m = 2;
    const e: Vec3 = [Math.cos(alpha), 0, Math.sin(alpha)]; // up the rail
    const n: Vec3 = [-Math.sin(alpha), 0, Math.cos(alpha)]; // the rail's normal, upwards
    const h = 0.01;
    const sim = loadModel({
      bodies: [{ id: "slider", mass: m, inertia: [0.1, 0.2, 0.3] }],
      joints: [
        {
          id: "rail",
          type: "prismatic",
          a: { body: "ground", point: [0, 0, -0.1] },
          b: { body: "slider", point: [0, 0, -0.1] },
          axis: e,
        },
      ],
      solver: articulated(h),
    });
    let position = 0;
    let velocity = 0;
    let force = 0;
    let torque = 0;
    let turn = 0;
    const steps = 300;
    for (let k = 1; k <= steps; k++) {
      sim.step(1);
      const st = sim.state();
      const b = st.bodies[0];
      const t = k * h;
      const s = -0.5 * G * Math.sin(alpha) * t * t;
      position = Math.max(position, norm(sub(b.position as Vec3, scale(s, e))));
      velocity = Math.max(
        velocity,
        norm(sub(b.velocity as Vec3, scale(-G * Math.sin(alpha) * t, e))),
      );
      turn = Math.max(turn, norm(b.angularVelocity as Vec3), Math.abs(b.orientation[0] - 1));
      // the rail's force on the slider: m g cos α along n, nothing along the rail; its
      // moment about the joint point (0.1 m below the centre) balances the force's about
      // the centre: τ_P = (x_c − P) × F
      const F = st.joints[0].force as Vec3;
      const exactF = scale(m * G * Math.cos(alpha), n);
      force = Math.max(force, norm(sub(F, exactF)) / (m * G));
      torque = Math.max(
        torque,
        norm(sub(st.joints[0].torque as Vec3, cross([0, 0, 0.1], exactF))) / (m * G),
      );
    }
    report("articulated incline", { position, velocity, force, torque, turn });
    // a constant acceleration: the fifth-order pair is exact on a quadratic, up to rounding of
    // positions up to 17 m from the start (measured 2e-13 m, 1e-13 m/s)
    expect(position).toBeLessThan(1e-11);
    expect(velocity).toBeLessThan(1e-11);
    expect(turn).toBeLessThan(1e-15);
    // the reaction: m g cos α normal, exact to rounding (measured 0); a wrong sign on
    // the rail's direction would add 2 m g sin α along it
    expect(force).toBeLessThan(1e-12);
    expect(torque).toBeLessThan(1e-12);
  });

  it("a bead on a freely spinning rod: angular momentum and energy conserved, s(t) of the reduced equation", () => {
    // rod (revolute about z at its centre) and bead (prismatic along the rod); gravity
    // along z is carried by the joints and does no work. With L = (I0 + m s²) ω
    // conserved (I0 the rod's and the bead's own I_zz), s̈ = ω² s.
    const rod: Inertial = { mass: 1, inertia: [0.01, 0.1, 0.1] };
    const bead: Inertial = { mass: 0.5, inertia: [1e-3, 1e-3, 1e-3] };
    const s0 = 0.2;
    const w0 = 3;
    const h = 0.005;
    const duration = 10;
    const sim = loadModel({
      bodies: [
        { id: "rod", mass: rod.mass, inertia: rod.inertia, angularVelocity: [0, 0, w0] },
        {
          id: "bead",
          mass: bead.mass,
          inertia: bead.inertia,
          position: [s0, 0, 0],
          velocity: [0, w0 * s0, 0],
          angularVelocity: [0, 0, w0],
        },
      ],
      joints: [
        {
          id: "spin",
          type: "revolute",
          a: { body: "ground" },
          b: { body: "rod" },
          axis: [0, 0, 1],
        },
        {
          id: "slide",
          type: "prismatic",
          a: { body: "rod" },
          b: { body: "bead" },
          axis: [1, 0, 0],
        },
      ],
      solver: articulated(h),
    });
    const I0 = rod.inertia[2] + bead.inertia[2];
    const Lz = (I0 + bead.mass * s0 * s0) * w0;
    const E0 = 0.5 * Lz * w0;
    // the reduced equation, RK4 with 20 steps per engine step (error ~1e-12)
    const ref = new Rk4(
      (_t, y, dy) => {
        const w = Lz / (I0 + bead.mass * y[0] * y[0]);
        dy[0] = y[1];
        dy[1] = w * w * y[0];
      },
      [s0, 0],
    );
    let momentum = 0;
    let energy = 0;
    let radius = 0;
    let plane = 0;
    const steps = Math.round(duration / h);
    for (let k = 1; k <= steps; k++) {
      sim.step(1);
      ref.advance(h / 20, 20);
      const st = sim.state();
      const L = angularMomentum(st.bodies, [rod, bead]);
      momentum = Math.max(momentum, Math.abs(L[2] - Lz) / Lz, Math.hypot(L[0], L[1]) / Lz);
      energy = Math.max(energy, Math.abs(mechanicalEnergy(st.bodies, [rod, bead], 0) - E0) / E0);
      const p = st.bodies[1].position as Vec3;
      radius = Math.max(radius, Math.abs(Math.hypot(p[0], p[1]) - ref.y[0]) / ref.y[0]);
      // the bead stays on the rod's axis, in the plane z = 0
      const axis = rotate(st.bodies[0].orientation, [1, 0, 0]);
      plane = Math.max(plane, Math.abs(p[2]), norm(cross(axis, p)));
    }
    report("articulated bead on a rod", { s: ref.y[0], momentum, energy, radius, plane });
    expect(ref.y[0]).toBeGreaterThan(5); // the bead has flown out, ω fallen by ~800×
    // measured 7e-13 relative (momentum, energy) and 4e-13 (radius, against RK4 at h/20,
    // whose own error is ~1e-13); omitting the Coriolis term 2 ω × ê ṡ would break L by
    // order one, and a wrong sign of the centrifugal term would keep the bead in
    expect(momentum).toBeLessThan(1e-10);
    expect(energy).toBeLessThan(1e-10);
    expect(radius).toBeLessThan(1e-10);
    expect(plane).toBeLessThan(1e-12);
  });
});

describe("articulated: a constant-torque actuator on a wheel", () => {
  it("turns it by θ = ½ (τ/I) t²", () => {
    const m = 2;
    const I = 0.5;
    const tau = 1.5;
    const h = 0.01;
    const sim = loadModel({
      bodies: [{ id: "wheel", mass: m, inertia: [0.25, 0.25, I], position: [0, 0, 1] }],
      joints: [
        {
          id: "axle",
          type: "revolute",
          a: { body: "ground", point: [0, 0, 1] },
          b: { body: "wheel" },
          axis: [0, 0, 1],
        },
      ],
      actuators: [{ id: "drive", joint: "axle", type: "torque", effort: tau }],
      solver: articulated(h),
    });
    let angle = 0;
    let rate = 0;
    let force = 0;
    let theta = 0;
    const steps = 400;
    for (let k = 1; k <= steps; k++) {
      sim.step(1);
      const st = sim.state();
      const b = st.bodies[0];
      const t = k * h;
      theta = unwrap(theta, 2 * Math.atan2(b.orientation[3], b.orientation[0]));
      angle = Math.max(angle, Math.abs(theta - 0.5 * (tau / I) * t * t));
      rate = Math.max(rate, Math.abs(b.angularVelocity[2] - (tau / I) * t));
      // the axle carries the weight and no moment across its axis
      const T = st.joints[0].torque;
      force = Math.max(
        force,
        norm(sub(st.joints[0].force as Vec3, [0, 0, m * G])) / (m * G),
        Math.hypot(T[0], T[1]) / (m * G),
      );
    }
    report("articulated wheel", { theta, angle, rate, force });
    expect(theta).toBeCloseTo(0.5 * (tau / I) * 16, 9); // 24 rad after 4 s
    // a quadratic in t: the fifth-order pair is exact up to rounding (angles up to 24 rad)
    expect(angle).toBeLessThan(1e-12);
    expect(rate).toBeLessThan(1e-12);
    expect(force).toBeLessThan(1e-14);
  });
});

describe("articulated: a compliant joint limit", () => {
  // the rod of hingedRod, its hinge limited to ±0.5 rad: it falls onto the limit, whose
  // compliant law (actuators/joint-limit.ts: stiffness m̃(2π/0.02 s)², critical damping)
  // stops it; the same law as generalized-alpha's
  const model = (solver: Record<string, unknown>) =>
    hingedRod(solver, {}, { limits: { lower: -0.5, upper: 0.5 } });

  /** The joint angle every 0.1 s over 1.5 s (the fall, the impact at ~0.3 s, the rest). */
  function angles(solver: Record<string, unknown>, dt: number): number[] {
    const sim = loadModel(model({ ...solver, dt }));
    return Array.from({ length: 15 }, () => {
      sim.step(Math.round(0.1 / dt));
      return sim.state().joints[0].coordinates[0];
    });
  }

  it("follows generalized-α at h = 2.5e-5 s through the impact; its loss is counted", () => {
    const h = 1 / 240;
    const ref = angles({ integrator: "generalized-alpha" }, 2.5e-5);
    const ref2 = angles({ integrator: "generalized-alpha" }, 5e-5);
    // generalized-α's own error at 2.5e-5 s, by Richardson (second order): |r₂ − r| / 3
    // (at 1e-4 s it is 8e-5 rad from the converged answer: the kink of the law where the
    // rod meets the limit makes the step's error there first order)
    const refError = Math.max(...ref.map((r, k) => Math.abs(ref2[k] - r) / 3));
    const gap = (q: number[], from = 0) =>
      Math.max(...q.slice(from).map((x, k) => Math.abs(x - ref[from + k])));
    const coarse = angles({ integrator: "articulated" }, h);
    const tight = angles({ integrator: "articulated", stepTolerance: 1e-10 }, h);
    const sim = loadModel(model({ integrator: "articulated", dt: h }));
    const E0 = sim.state().energy.potential;
    sim.step(360);
    const st = sim.state();
    const lost = E0 - (st.energy.kinetic + st.energy.potential);
    report("articulated limit", {
      refError,
      impact: gap(coarse),
      rest: gap(coarse, 6),
      tight: gap(tight),
      lost,
      dissipated: st.energy.dissipated,
    });
    // at rest on the limit, past it by the weight's deflection m g d / k ≈ 5e-4 rad
    expect(coarse[14]).toBeGreaterThan(0.5);
    expect(coarse[14]).toBeLessThan(0.501);
    // the law's kink where the rod meets the limit is where the error estimate is least
    // sharp: at the default tolerance the rebound is off by 1.1e-3 rad (measured; the rod
    // meets the limit at 3 rad/s, so 0.4 ms), back within 1e-7 rad at rest; with the
    // tolerance at 1e-10 m it converges to the reference (measured 3.4e-6 rad, refError 1e-5)
    expect(gap(coarse)).toBeLessThan(2e-3);
    expect(gap(coarse, 6)).toBeLessThan(1e-6 + 3 * refError);
    expect(gap(tight)).toBeLessThan(1e-5 + refError);
    // the rod's drop is lost in the limit's damping: the stages' quadrature of the damping
    // power counts it to 0.2 % (measured 1.9e-3 J of 2.35 J; the trapezoid of the power at
    // the steps' ends miscounted it by 1.05 J)
    expect(lost).toBeGreaterThan(2);
    expect(Math.abs(st.energy.dissipated - lost)).toBeLessThan(0.005 * lost);
    expect(Math.abs(st.energy.error)).toBeLessThan(0.005 * lost);
  });
});

describe("articulated: compliant contact", () => {
  // the rod of hingedRod with a 5 cm ball at its tip: it strikes a floor 0.95 m below the
  // pivot (a spring-dashpot law, k = 1e4 N/m, d = 20 N·s/m) at ~0.3 s and bounces. The
  // contact is a force the step's stages evaluate, its contacts detected at each step's start
  const model = (solver: Record<string, unknown>) => {
    const m = hingedRod(solver, {
      shapes: [{ type: "sphere", radius: 0.05, position: [0, 0, 0.5] }],
    });
    return {
      ...m,
      bodies: [
        ...(m.bodies ?? []),
        {
          id: "floor",
          fixed: true,
          position: [0, 0, -0.95],
          shapes: [{ type: "plane", normal: [0, 0, 1] }],
        },
      ],
      contact: {
        method: "smc",
        behavior: { type: "linear", stiffness: 1e4, damping: 20, stepDamping: 0 },
      },
    } as ModelInput;
  };
  /** The hinge angle at 0.5 s (after the first bounce) and the largest |energy.error|. */
  const run = (solver: Record<string, unknown>, dt: number) => {
    const sim = loadModel(model({ ...solver, dt }));
    let error = 0;
    for (let i = 0; i < Math.round(0.5 / dt); i++) {
      sim.step(1);
      error = Math.max(error, Math.abs(sim.state().energy.error));
    }
    return { angle: sim.state().joints[0].coordinates[0], error, sim };
  };

  it("a rod striking the floor follows generalized-α at 1e-4 s, converging with the step", () => {
    const ref = run({ integrator: "generalized-alpha" }, 1e-4).angle;
    const coarse = run({ integrator: "articulated" }, 1 / 240);
    const fine = run({ integrator: "articulated" }, 1e-3);
    const gap = (x: number) => Math.abs(x - ref);
    report("articulated contact", {
      coarse: gap(coarse.angle),
      fine: gap(fine.angle),
      error: coarse.error,
    });
    // measured 2.8e-3 and 4.2e-4 rad: the contact force's onset inside a step is a kink the
    // error estimate sees least (generalized-α at h = 1/240 s: 7.5e-3 rad off)
    expect(gap(coarse.angle)).toBeLessThan(6e-3);
    expect(gap(fine.angle)).toBeLessThan(1e-3);
    expect(gap(coarse.angle) / gap(fine.angle)).toBeGreaterThan(3);
    // the contact's damping counted by the stages' quadrature: measured 6.5e-3 J at 1/240 s
    // (generalized-α and newmark at that step: 0.30 and 0.26 J over 1.5 s)
    expect(coarse.error).toBeLessThan(1e-2);
    expect(coarse.sim.state().energy.dissipated).toBeGreaterThan(0.5);
  });

  it("a column of four boxes rests on the default compliant law for 40 s: still, its energy balance flat", () => {
    // 0.2 m cubes of 1 kg stacked on a plane, the default contact behaviour (k = 1e5 N/m per
    // point, stepDamping ½) at 5 ms: the stiff contact modes (the top box's, ω ≈ 630 rad/s,
    // rocking stiffer) set the sub-steps' stability bound. At the error control's sub-steps
    // alone they rang there, fed by the scheme and drained by the damping: |v| ≈ 6e-6 m/s
    // for good and energy.error growing by 1.4e-3 J a second (a contact audit; the
    // stiffness cap, ArticulatedIntegrator's ρ, keeps them inside the stability region)
    const bodies: Record<string, unknown>[] = [
      { id: "floor", fixed: true, shapes: [{ type: "plane", normal: [0, 0, 1] }] },
    ];
    for (let i = 0; i < 4; i++)
      bodies.push({
        id: `box${i}`,
        mass: 1,
        position: [0, 0, 0.1 + 0.2 * i],
        shapes: [{ type: "box", halfExtents: [0.1, 0.1, 0.1] }],
      });
    const sim = loadModel({
      gravity: [0, 0, -G],
      bodies,
      contact: { method: "smc" },
      solver: { integrator: "articulated", dt: 0.005 },
    } as ModelInput);
    sim.step(2000);
    const settled = sim.state().energy.error;
    let speed = 0;
    for (let k = 0; k < 30; k++) {
      sim.step(200);
      for (const b of sim.state().bodies) speed = Math.max(speed, Math.hypot(...b.velocity));
    }
    expect(speed).toBeLessThan(1e-9);
    expect(Math.abs(sim.state().energy.error - settled)).toBeLessThan(1e-6);
  });
});

describe("articulated: motors prescribe a joint's coordinate", () => {
  // a rod (m = 1.5 kg, centre d = 0.4 m from the pivot) horizontal along +x at the model
  // pose, its revolute joint about +y driven at ω0 = 3 rad/s: φ = ω0 t. The motor's angle
  // is b relative to a, so with the rod as b it turns by φ (its centre at
  // d (cos φ, 0, −sin φ)), as a by −φ (d (cos φ, 0, sin φ)): s = ±1. Gravity's torque on
  // it about +y is m g d cos φ either way ((r × F)_y = −r_x F_z), which the motor cancels
  // (φ̈ = 0) with −m g d cos φ on the rod. The State reports the motor's torque on b: the
  // rod's (s = 1) or the ground's, the opposite (s = −1): −s m g d cos φ
  for (const [rod, s] of [
    ["b", 1],
    ["a", -1],
  ] as const)
    it(`a rod turned at a constant rate (the rod as end ${rod}): its angle exact, the motor's torque, its work counted`, () => {
      const m = 1.5;
      const d = 0.4;
      const w0 = 3;
      const h = 1 / 240;
      const rodEnd = { body: "rod", point: [-d, 0, 0] as Vec3 };
      const groundEnd = { point: [0, 0, 0] as Vec3 };
      const sim = loadModel({
        gravity: [0, 0, -G],
        bodies: [{ id: "rod", mass: m, inertia: [0.002, 0.09, 0.09], position: [d, 0, 0] }],
        joints: [
          {
            id: "pin",
            type: "revolute",
            a: rod === "b" ? groundEnd : rodEnd,
            b: rod === "b" ? rodEnd : groundEnd,
            axis: [0, 1, 0],
          },
        ],
        motors: [{ id: "drive", joint: "pin", angle: { rate: w0 } }],
        solver: articulated(h),
      } as ModelInput);
      let position = 0;
      let torque = 0;
      let balance = 0;
      const steps = 2400; // 10 s, 4.8 turns
      for (let k = 1; k <= steps; k++) {
        sim.step(1);
        const phi = w0 * k * h;
        const st = sim.state();
        const c = st.bodies[0].position;
        position = Math.max(
          position,
          Math.hypot(c[0] - d * Math.cos(phi), c[1], c[2] + s * d * Math.sin(phi)),
        );
        const motor = st.joints.find((j) => j.id === "drive");
        if (!motor) throw new Error("no motor entry in the State");
        torque = Math.max(torque, Math.abs(motor.torque[1] + s * m * G * d * Math.cos(phi)));
        balance = Math.max(balance, Math.abs(st.energy.error));
      }
      report(`articulated motor (revolute, rod as ${rod})`, { position, torque, balance });
      // the pose is the motor's: exact to rounding
      expect(position).toBeLessThan(1e-12);
      // the torque to the closed form (5.9 N·m at most): rounding
      expect(torque).toBeLessThan(1e-9);
      // the work the motor puts in, counted in energy.dissipated (negative: put in): at the
      // first step's start the rod at rest is set turning, ½ I_p ω0² = 1.485 J, then the
      // potential energy's swing (±5.9 J) by the stages' quadrature of its power; the
      // balance holds to rounding (5.7e-13 J measured; 1.485 J without the start's jump)
      expect(balance).toBeLessThan(1e-8);
    });

  it("a slider driven up and down: its offset exact, the motor's force m (g + s̈*)", () => {
    // a 2 kg slider on a vertical rail, offset s*(t) = A sin Ωt from the model pose:
    // the force along the rail m (g − A Ω² sin Ωt)
    const m = 2;
    const A = 0.1;
    const W = 5;
    const h = 1 / 240;
    const sim = loadModel({
      gravity: [0, 0, -G],
      bodies: [{ id: "slider", mass: m, inertia: [0.01, 0.01, 0.01], position: [0, 0, 1] }],
      joints: [
        {
          id: "rail",
          type: "prismatic",
          a: { point: [0, 0, 1] },
          b: { body: "slider" },
          axis: [0, 0, 1],
        },
      ],
      motors: [
        {
          id: "lift",
          joint: "rail",
          offset: { type: "sine", amplitude: A, frequency: W / (2 * Math.PI) },
        },
      ],
      solver: articulated(h),
    } as ModelInput);
    let position = 0;
    let force = 0;
    let balance = 0;
    for (let k = 1; k <= 1200; k++) {
      sim.step(1);
      const t = k * h;
      const st = sim.state();
      position = Math.max(position, Math.abs(st.bodies[0].position[2] - 1 - A * Math.sin(W * t)));
      const motor = st.joints.find((j) => j.id === "lift");
      if (!motor) throw new Error("no motor entry in the State");
      force = Math.max(force, Math.abs(motor.force[2] - m * (G - A * W * W * Math.sin(W * t))));
      balance = Math.max(balance, Math.abs(st.energy.error));
    }
    report("articulated motor (prismatic)", { position, force, balance });
    expect(position).toBeLessThan(1e-12);
    expect(force).toBeLessThan(1e-9);
    expect(balance).toBeLessThan(1e-8);
  });
});

describe("articulated: the S2 chain of 10 links on spherical joints", () => {
  it("2000 steps at h = 1/240 s: joints exact, energy within 2e-3 m g L", () => {
    const model = chainModel({ links: 10 });
    model.solver = articulated(1 / 240);
    const sim = loadModel(model);
    const links = model.bodies.length;
    const inertials: Inertial[] = model.bodies.map((b) => ({
      mass: b.mass as number,
      inertia: b.inertia as Vec3,
    }));
    const index = new Map(model.bodies.map((b, i) => [b.id, i]));
    const joints = model.joints ?? [];
    const mass = inertials.reduce((s, b) => s + b.mass, 0);
    const length = 0.1 * links;
    let gap = 0;
    let energy = 0;
    let maxSubsteps = 0;
    for (let k = 1; k <= 2000; k++) {
      sim.step(1);
      maxSubsteps = Math.max(maxSubsteps, sim.lastStepStats.substeps);
      const bodies = sim.state().bodies;
      const at = (end: { body?: string; point?: number[] }): Vec3 => {
        const i = index.get(end.body ?? "ground");
        const p = (end.point ?? [0, 0, 0]) as Vec3;
        return i === undefined ? p : worldPoint(bodies[i], p);
      };
      for (const j of joints) gap = Math.max(gap, norm(sub(at(j.a), at(j.b))));
      energy = Math.max(
        energy,
        Math.abs(mechanicalEnergy(bodies, inertials)) / (mass * G * length),
      );
    }
    report("articulated chain", { gap, energy, maxSubsteps });
    // joint coordinates: each child is placed at its parent's point, so the anchors agree
    // to the rounding of a 1 m chain's positions (~1e-16 m per link)
    expect(gap).toBeLessThan(1e-12 * length);
    // E0 = 0 (straight along x at z = 0, at rest); the whipping chain's energy error at the
    // default tolerance (1e-6 m per sub-step), measured ~5e-4
    expect(energy).toBeLessThan(2e-3);
  });

  it("over 40 000 steps (167 s) its energy error stays within 3e-3 m g L", () => {
    // long after the whip the chain tumbles chaotically, and an explicit pair's energy error
    // grows with the time run: Dormand and Prince's pair (this integrator's before) reached
    // 4.6e-3 to 6.6e-3 m g L after these 40 000 steps and 1.3e-2 to 1.6e-2 after 100 000 (four
    // runs with g × (1 + 10⁻³ k)), Tsitouras' 1.4e-3 at most and 1.7e-3 to 2.7e-3 (measured).
    // The largest |E|/(m g L), sampled every 100 steps
    const model = chainModel({ links: 10 });
    model.solver = articulated(1 / 240);
    const sim = loadModel(model);
    const inertials: Inertial[] = model.bodies.map((b) => ({
      mass: b.mass as number,
      inertia: b.inertia as Vec3,
    }));
    const scale = inertials.reduce((s, b) => s + b.mass, 0) * G * 0.1 * model.bodies.length;
    let worst = 0;
    for (let k = 1; k <= 400; k++) {
      sim.step(100);
      worst = Math.max(worst, Math.abs(mechanicalEnergy(sim.state().bodies, inertials)) / scale);
    }
    report("articulated chain, long run", { worst });
    expect(worst).toBeLessThan(3e-3);
  });
});

/**
 * A rod of mass m (kg) and inertia Ic (kg·m², about its centre) r (m) from an axle at the
 * origin along y, its centre on +x, held by a position servo (kp, kd) at `target` (rad),
 * under gravity −z of `gravity` (m/s²), stepped by articulated at dt.
 */
function servoRod(p: {
  m: number;
  Ic: number;
  r: number;
  kp: number;
  kd: number;
  target: number;
  gravity: number;
  dt: number;
}): ModelInput {
  return {
    gravity: [0, 0, -p.gravity],
    bodies: [{ id: "rod", mass: p.m, inertia: [p.Ic, p.Ic, p.Ic], position: [p.r, 0, 0] }],
    joints: [
      {
        id: "axle",
        type: "revolute",
        a: { point: [0, 0, 0] },
        b: { body: "rod", point: [-p.r, 0, 0] },
        axis: [0, 1, 0],
      },
    ],
    actuators: [
      { id: "servo", type: "position", joint: "axle", kp: p.kp, kd: p.kd, target: p.target },
    ],
    solver: articulated(p.dt),
  } as ModelInput;
}

describe("articulated: a servo whose damping the sub-steps barely resolve", () => {
  // a rod of 0.1 kg and 1 g·m² about its centre, 5 cm from the axle, pulled to 0.3 rad by a
  // servo of kp = 2000, kd = 200, no gravity: I q̈ = −kp (q − 0.3) − kd q̇ with I the axle's
  // inertia, q = 0.3 + A e^(s₁ t) + B e^(s₂ t) from rest at 0 (s₁ ≈ −10 /s, s₂ ≈ −1.6e5 /s:
  // the sub-steps sit at the scheme's stability limit)
  const [kp, kd, Ic, m, r] = [2000, 200, 1e-3, 0.1, 0.05];
  const I = Ic + m * r * r;
  const disc = Math.sqrt(kd * kd - 4 * I * kp);
  const s1 = (-kd + disc) / (2 * I);
  const s2 = (-kd - disc) / (2 * I);
  // A + B = −0.3, s₁ A + s₂ B = 0
  const B = (0.3 * s1) / (s2 - s1);
  const A = -0.3 - B;
  const exactRate = (t: number) => A * s1 * Math.exp(s1 * t) + B * s2 * Math.exp(s2 * t);
  const exactAngle = (t: number) => 0.3 + A * Math.exp(s1 * t) + B * Math.exp(s2 * t);

  /** The largest rate and angle errors over `duration` (s) at the step dt. */
  function servoErrors(dt: number, duration: number) {
    const sim = loadModel(servoRod({ m, Ic, r, kp, kd, target: 0.3, gravity: 0, dt }));
    let rateError = 0;
    let angleError = 0;
    for (let n = 1; n <= Math.round(duration / dt); n++) {
      sim.step(1);
      const st = sim.state();
      rateError = Math.max(rateError, Math.abs(st.joints[0].rates[0] - exactRate(st.time)));
      angleError = Math.max(
        angleError,
        Math.abs(st.joints[0].coordinates[0] - exactAngle(st.time)),
      );
    }
    return { rateError, angleError, energyError: Math.abs(sim.state().energy.error as number) };
  }

  it("the rate follows the exact creep (the velocities' error weighed over the step)", () => {
    // weighed over the sub-step, the velocities' error went unseen: the rate came out
    // 0.32 rad/s at 0.1 s where it is 1.10
    const e = servoErrors(1 / 240, 0.2);
    report("articulated stiff servo", e);
    // measured 1e-8 rad/s (of 1 to 3), 6e-14 rad and 1.2e-5 J at 200 sub-steps a step,
    // hh ρ ≤ 3 (articulated.ts, STABLE_STEP); over the sub-step the rate was off by
    // 0.78 rad/s at 0.1 s, and with the sub-steps grown to the stability boundary s₂'s
    // mode rang at 1.9e-3 rad/s, 1.2e-8 rad, 1.3e-3 J (190 sub-steps and 59 rejected a step)
    expect(e.rateError).toBeLessThan(1e-5);
    expect(e.angleError).toBeLessThan(1e-6);
    expect(e.energyError).toBeLessThan(1e-4);
  });

  it("a shorter step is no less accurate (the velocities' error weighed over at least the default step)", () => {
    // weighed over the step itself, a user's shorter step loosened the velocities' control
    // in proportion; the imported arm's wrist at h = 1e-4 s ran 1.5 rad/s off
    for (const dt of [1e-3, 1e-4]) {
      const e = servoErrors(dt, 0.2);
      report(`articulated stiff servo at ${dt} s`, e);
      // measured 1.5e-7 and 1.4e-6 rad/s (2.8e-3 and 2.7e-3 at the stability boundary)
      expect(e.rateError).toBeLessThan(1e-5);
      expect(e.angleError).toBeLessThan(1e-6);
    }
  });
});

describe("articulated: a stiff servo holding a rod against gravity (the sub-steps at the stability bound)", () => {
  // the rod above (0.1 kg, 1 g·m² about its centre 5 cm from the axle along x, axis y)
  // held at q* = 0.3 rad by kp = 100 N·m/rad, kd = 10 N·m·s/rad under gravity −z: its
  // centre at r (cos q, 0, −sin q), so I q̈ = kp (q* − q) − kd q̇ + m g r cos q. At rest
  // q_e solves kp (q* − q_e) + m g r cos q_e = 0; linearized there the roots of
  // I s² + kd s + kp + m g r sin q_e are s₁ ≈ −10 /s and s₂ ≈ −7990 /s, so the exact rate
  // after 10 s is below 0.3 |s₁| e^(−100) rad/s, nothing. At h = 2 ms the sub-steps are
  // sized by s₂'s stability alone (hh |s₂| ≤ 3.51 for this pair) once the rod has settled
  const [kp, kd, Ic, m, r, target, h] = [100, 10, 1e-3, 0.1, 0.05, 0.3, 0.002];
  const I = Ic + m * r * r;
  const mgr = m * G * r;
  // q_e by Newton's iteration on kp (q* − q) + m g r cos q
  let qe = target;
  for (let k = 0; k < 20; k++)
    qe -= (kp * (target - qe) + mgr * Math.cos(qe)) / (-kp - mgr * Math.sin(qe));
  const stiffRoot = (-kd - Math.sqrt(kd * kd - 4 * I * (kp + mgr * Math.sin(qe)))) / (2 * I);

  it("at h = 2 ms over 30 s: the rate decays to rounding, the angle and the effort are the static ones", () => {
    expect(stiffRoot).toBeLessThan(-7900);
    const sim = loadModel(servoRod({ m, Ic, r, kp, kd, target, gravity: G, dt: h }));
    sim.step(Math.round(10 / h));
    const settledBalance = sim.state().energy.error as number;
    let rate = 0;
    let substeps = 0;
    const steps = Math.round(20 / h);
    for (let n = 0; n < steps; n++) {
      sim.step(1);
      const st = sim.state();
      rate = Math.max(rate, Math.abs(st.joints[0].rates[0]));
      substeps += st.solver.substeps;
    }
    const st = sim.state();
    const angle = Math.abs(st.joints[0].coordinates[0] - qe);
    // the servo's effort at rest holds gravity's torque, m g r cos q_e
    const effort = Math.abs((st.actuators[0].effort as number) + mgr * Math.cos(qe));
    const balance = Math.abs((st.energy.error as number) - settledBalance);
    report("articulated servo held at 2 ms", {
      rate,
      angle,
      effort,
      balance,
      substeps: substeps / steps,
    });
    // measured 1.4e-14 rad/s, 1.4e-15 rad, 5 sub-steps a step (hh |s₂| = 3.2: the stages
    // read ρ = 6480 /s of 7990, within the stability region all the same);
    // the elementary controller alone let the sub-steps grow past the stability boundary
    // while s₂'s mode was small, and that mode rang at 1.3e-3 rad/s for good (the effort
    // kd q̇ off, 4.3e-4 N·m, the angle 5e-9 rad, the balance 1.8e-3 J over the 20 s)
    expect(rate).toBeLessThan(1e-9);
    expect(angle).toBeLessThan(1e-12);
    expect(effort).toBeLessThan(1e-9);
    expect(balance).toBeLessThan(1e-9);
  });
});

describe("articulated: random trees of asymmetric bodies swinging in 3-D", () => {
  it("over 20 s at the defaults (5 ms): energy computed here within 1e-3 m g L, the joints exact", () => {
    for (let seed = 1; seed <= 8; seed++) {
      const { model, bodies, joints } = randomTree(seed, articulated(0.005), G);
      const byId = new Map(bodies.map((b, i) => [b.id, i]));
      const sim = loadModel(model);
      const mgL = bodies.reduce((m, b) => m + b.mass, 0) * G * 0.3;
      const E0 = mechanicalEnergy(
        bodies.map((b) => ({ ...b, velocity: [0, 0, 0], angularVelocity: [0, 0, 0] })),
        bodies,
      );
      let energy = 0;
      let anchors = 0;
      let axes = 0;
      let fastest = 0;
      for (let k = 1; k <= 4000; k++) {
        sim.step(1);
        if (k % 10 !== 0) continue;
        const st = sim.state().bodies;
        energy = Math.max(energy, Math.abs(mechanicalEnergy(st, bodies) - E0) / mgL);
        for (const b of st) fastest = Math.max(fastest, norm(b.angularVelocity as Vec3));
        for (const j of joints as {
          type: string;
          a: { body: string; point: Vec3 };
          b: { body: string; point: Vec3 };
          axis?: Vec3;
        }[]) {
          const a = j.a.body === "ground" ? null : st[byId.get(j.a.body) as number];
          const b = st[byId.get(j.b.body) as number];
          const pa = a === null ? j.a.point : worldPoint(a, j.a.point);
          anchors = Math.max(anchors, norm(sub(worldPoint(b, j.b.point), pa)));
          if (j.axis !== undefined) {
            // the axis is given in W at the model pose: carried by each end's rotation since
            const m0 = bodies[byId.get(j.b.body) as number];
            const inB = rotate(conj(m0.orientation), j.axis);
            const inA =
              a === null
                ? j.axis
                : rotate(conj(bodies[byId.get(j.a.body) as number].orientation), j.axis);
            const wa = a === null ? inA : rotate(a.orientation, inA);
            axes = Math.max(axes, norm(sub(rotate(b.orientation, inB), wa)));
          }
        }
      }
      report(`articulated random tree ${seed}`, { energy, anchors, axes, fastest });
      // measured ≤ 6e-5 m g L (links up to 67 rad/s), joints to 2e-16 m and axes to 3e-14;
      // generalized-α at the same step wanders by up to 0.24 m g L over 100 s on such
      // trees (README, Integrators)
      expect(energy).toBeLessThan(1e-3);
      expect(anchors).toBeLessThan(1e-10);
      expect(axes).toBeLessThan(1e-10);
    }
  });
});

describe("articulated: error control (solver.stepTolerance)", () => {
  // the double pendulum at a coarse h = 50 ms, where the sub-step controller works: at
  // 1e-5 m the steps take 1.3 sub-steps on average, at 1e-7 m 2.7
  const h = 0.05;
  const seconds = 20;
  const run = (stepTolerance: number | null) => {
    const sim = loadModel(doublePendulum(articulated(h, { stepTolerance })));
    let worst = 0;
    let energy = 0;
    let met = true;
    const substeps: number[] = [];
    for (let k = 0; k < seconds / h; k++) {
      sim.step(1);
      const s = sim.lastStepStats;
      substeps.push(s.substeps);
      met &&= s.stepToleranceMet;
      if (stepTolerance !== null) worst = Math.max(worst, s.stepError / stepTolerance);
      const e = mechanicalEnergy(sim.state().bodies, [ROD, ROD]);
      energy = Math.max(energy, Math.abs(e) / (2 * G));
    }
    return { worst, energy, met, substeps };
  };
  // the three runs, made once for the three tests below
  let runs: Record<"loose" | "tight" | "off", ReturnType<typeof run>> | undefined;
  const results = () => {
    if (runs) return runs;
    runs = { loose: run(1e-5), tight: run(1e-7), off: run(null) };
    const { loose, tight, off } = runs;
    report("articulated error control", {
      looseWorst: loose.worst,
      looseMax: Math.max(...loose.substeps),
      tightWorst: tight.worst,
      tightMax: Math.max(...tight.substeps),
      loose: loose.energy,
      tight: tight.energy,
      off: off.energy,
    });
    return runs;
  };

  it("every step's error is within the tolerance, in one sub-step or more", () => {
    const { loose, tight } = results();
    for (const r of [loose, tight]) {
      expect(r.worst).toBeLessThanOrEqual(1);
      expect(r.met).toBe(true);
      expect(Math.min(...r.substeps)).toBeGreaterThanOrEqual(1);
      // the controller is at work: some steps are taken in several sub-steps
      expect(Math.max(...r.substeps)).toBeGreaterThan(1);
    }
    // more sub-steps for the tighter tolerance (∝ tol^(−1/5) per unit time)
    const total = (r: { substeps: number[] }) => r.substeps.reduce((a, b) => a + b, 0);
    expect(total(tight)).toBeGreaterThan(total(loose));
  });

  it("stepTolerance null: one sub-step on every step", () => {
    const { off } = results();
    expect(off.substeps.every((s) => s === 1)).toBe(true);
    expect(off.met).toBe(true);
  });

  it("a tighter tolerance gives a smaller energy error (1e-7 against 1e-5 m: ≥ 10×)", () => {
    const { loose, tight, off } = results();
    // each sub-step errs by up to the tolerance and the sub-steps are ∝ tol^(−1/5): the
    // error per unit time ∝ tol^(4/5), ~40× for 100× the tolerance; measured 9e-4 and
    // 4e-7 m g L (2000×: the loose run's worst steps are near the tolerance, the tight
    // run's error is mostly rounding and far under it). Without the control (null) the
    // same run loses 0.3 m g L
    expect(tight.energy * 10).toBeLessThan(loose.energy);
    expect(loose.energy).toBeLessThan(1e-2);
    expect(off.energy).toBeGreaterThan(loose.energy);
  });
});

describe("articulated: an input moves the tree as an impulse does, Δu = M(q)⁻¹ Jᵀ p", () => {
  // before, the rates were read off the relative angular velocities alone, so an impulse at
  // a link's centre (a velocity change the joints do not carry one to one) did nothing
  const m = 2;
  const L = 1;
  const I = (m * L * L) / 12;
  const solver = { integrator: "articulated", dt: 1e-3 } as const;

  it("a rod on a pin kicked at its centre: ω = −3P/(2mL), the centre at 3P/(4m), then uniform rotation", () => {
    const P = 0.3;
    const sim = loadModel(
      rodPendulum({ mass: m, length: L, axis: [0, 1, 0], gravity: [0, 0, 0], solver }),
    );
    sim.schedule([
      {
        type: "impulse",
        id: "rod",
        impulse: [0, 0, P],
        point: [0, 0, 0],
        angularImpulse: [0, 0, 0],
      },
    ]);
    // r × p about the pin over the inertia about it, m L²/3
    const w = -(3 * P) / (2 * m * L);
    const after = sim.state().bodies[0];
    expect(after.angularVelocity[1]).toBeCloseTo(w, 12);
    expect(after.velocity[2]).toBeCloseTo((3 * P) / (4 * m), 12);
    expect(after.velocity[0]).toBeCloseTo(0, 12);
    expect(sim.state().energy.kinetic).toBeCloseTo((3 * P * P) / (8 * m), 12);
    // no gravity: it turns at ω about the pin, its centre on the circle of radius L/2, over
    // 40 s (about 1.4 turns), the kinetic energy kept
    sim.step(40_000);
    const end = sim.state().bodies[0];
    const angle = -w * sim.time; // the rotation about +y takes +x towards −z
    expect(end.position[0]).toBeCloseTo((L / 2) * Math.cos(angle), 9);
    expect(end.position[2]).toBeCloseTo((L / 2) * Math.sin(angle), 9);
    expect(end.angularVelocity[1]).toBeCloseTo(w, 9);
    expect(sim.state().energy.kinetic).toBeCloseTo((3 * P * P) / (8 * m), 12);
  });

  it("two hinged links kicked at the outer one's centre: the rates of the 2 × 2 system M u = Jᵀ p", () => {
    const P = 0.2;
    const sim = loadModel({
      bodies: [
        { id: "a", mass: m, position: [L / 2, 0, 0], inertia: [1e-3, I, I] },
        { id: "b", mass: m, position: [1.5 * L, 0, 0], inertia: [1e-3, I, I] },
      ],
      joints: [
        {
          id: "j1",
          type: "revolute",
          a: { body: "ground" },
          b: { body: "a", point: [-L / 2, 0, 0] },
          axis: [0, 1, 0],
        },
        {
          id: "j2",
          type: "revolute",
          a: { body: "a", point: [L / 2, 0, 0] },
          b: { body: "b", point: [-L / 2, 0, 0] },
          axis: [0, 1, 0],
        },
      ],
      solver,
    } as ModelInput);
    sim.schedule([
      { type: "impulse", id: "b", impulse: [0, 0, P], point: [0, 0, 0], angularImpulse: [0, 0, 0] },
    ]);
    // relative rates θ̇1, θ̇2 about +y: ω_a = θ̇1, ω_b = θ̇1 + θ̇2; v_z = −ω_y x: the centres'
    // v_az = −θ̇1 L/2, v_bz = −θ̇1 1.5 L − θ̇2 L/2; T = ½ Σ (m v² + I ω²)
    const M11 = m * (L / 2) ** 2 + I + m * (1.5 * L) ** 2 + I;
    const M12 = m * (1.5 * L) * (0.5 * L) + I;
    const M22 = m * (L / 2) ** 2 + I;
    // Jᵀ p: P times ∂v_bz/∂θ̇
    const Q1 = -1.5 * L * P;
    const Q2 = -0.5 * L * P;
    const det = M11 * M22 - M12 * M12;
    const t1 = (M22 * Q1 - M12 * Q2) / det;
    const t2 = (M11 * Q2 - M12 * Q1) / det;
    const [a, b] = sim.state().bodies;
    expect(a.angularVelocity[1]).toBeCloseTo(t1, 12);
    expect(b.angularVelocity[1]).toBeCloseTo(t1 + t2, 12);
    expect(b.velocity[2]).toBeCloseTo(-t1 * 1.5 * L - t2 * 0.5 * L, 12);
    // the kinetic energy of the impulse, ½ uᵀ M u = ½ (Jᵀp)ᵀ u
    expect(sim.state().energy.kinetic).toBeCloseTo(0.5 * (Q1 * t1 + Q2 * t2), 12);
  });

  it("an orientation written off a hinge's axis: the twist about the axis kept, the swing dropped (the hinge bent for good before)", () => {
    const sim = loadModel(
      rodPendulum({ mass: m, length: L, axis: [0, 1, 0], gravity: [0, 0, 0], solver }),
    );
    // R_y(α) ⊗ R_x(β): the hinge allows R_y(α) alone
    const [alpha, beta] = [0.5, 0.3];
    const [ca, sa, cb, sb] = [
      Math.cos(alpha / 2),
      Math.sin(alpha / 2),
      Math.cos(beta / 2),
      Math.sin(beta / 2),
    ];
    const written: [number, number, number, number] = [ca * cb, ca * sb, sa * cb, -sa * sb];
    sim.schedule([{ type: "bodyState", id: "rod", orientation: written }]);
    const rod = sim.state().bodies[0];
    const expected = [ca, 0, sa, 0];
    for (let k = 0; k < 4; k++) expect(rod.orientation[k]).toBeCloseTo(expected[k], 12);
    // its centre where the pin puts it: R_y(α) takes +x towards −z
    expect(rod.position[0]).toBeCloseTo((L / 2) * Math.cos(alpha), 12);
    expect(rod.position[1]).toBeCloseTo(0, 12);
    expect(rod.position[2]).toBeCloseTo(-(L / 2) * Math.sin(alpha), 12);
  });

  it("a velocity written on a link of the 10-link chain: kept bit for bit by a snapshot, energy balanced after", () => {
    const sim = loadModel({
      ...chainModel({ links: 10 }),
      solver: { integrator: "articulated", dt: 1 / 240 },
    });
    sim.step(100);
    sim.schedule([{ type: "bodyState", id: sim.state().bodies[4].id, velocity: [0, 0.3, 0.2] }]);
    const copy = loadSnapshot(JSON.parse(JSON.stringify(sim.snapshot())));
    sim.step(600);
    copy.step(600);
    expect(copy.stateHash()).toBe(sim.stateHash());
    // the joints still hold, and the energy from the input on is kept (explicit RK: small)
    expect(sim.state().energy.error).toBeLessThan(1e-4);
  });
});
