/**
 * Frictional impacts at their instants (src/engine/integrators/impact-events.ts, friction):
 * Newton's law on the normal, Coulomb's on the tangential impulse, zero duration.
 *
 * A solid sphere (m = 1 kg, R = 0.1 m, I = 2/5 m R² = 0.004 kg m²) dropped from rest
 * vertically, its centre z₀ above the floor's contact height R, moving at v_x and spinning
 * at ω_y: in flight v_x and ω_y stay, and it lands at t* = √(2 (z₀ − R)/g) at
 * v_z⁻ = −g t*. Its contact point (lever arm r = (0, 0, −R)) slides at
 * u_x⁻ = v_x − R ω_y. The impulse (P_x, 0, P_n) at it: the normal and tangential rows are
 * decoupled for a sphere (W = diag(1/m, 1/m + R²/I, ·)), so
 *     P_n = m (1 + e) |v_z⁻|,
 *     sticking, u_x⁺ = 0:  P_x = −u_x⁻ / (1/m + R²/I) = −(2/7) m u_x⁻,  when |P_x| ≤ μ P_n,
 *     else sliding:        P_x = −μ P_n sign(u_x⁻),
 * and v_x⁺ = v_x + P_x/m, ω_y⁺ = ω_y − R P_x / I ((r × P)_y = −R P_x), v_z⁺ = e |v_z⁻|,
 * then free flight again: v_z = e |v_z⁻| − g (t − t*). (Sticking, v_x⁺ = (5 v_x + 2 R ω_y)/7:
 * the angular momentum about the contact point, I ω_y + m R v_x, kept at rolling.)
 * Before (a spinning body's frictional impact left to the step's own law at its start,
 * located along the normal only), the tangential impulse held the whole step's normal
 * impulse, m g h more than the impact's; a body turning by less than 1e-3 rad a step
 * (TURN) kept that law until its frictional impacts were events too: a ball without spin
 * landing at (2, 0, −3) m/s at e = ½, μ = 0.05 left with v_x 8.3e-4 (h = 1/240 s) and
 * 8.0e-3 m/s (1/100 s) below the closed form, ω_y 0.021 and 0.20 rad/s above it.
 */
import { describe, expect, it, vi } from "vitest";
import type { ModelInput } from "../../../schemas/model";
import { loadModel } from "../../../src/engine/index";
import { ImpactEvents } from "../../../src/engine/integrators/impact-events";
import { type BodySystem, getVelocity, kineticEnergy } from "../../../src/engine/model/body-system";
import { CoulombNewton } from "../../../src/engine/solvers/nonsmooth/newton";
import { PgsSolver } from "../../../src/engine/solvers/nonsmooth/pgs";
import { ballOnFloor, s2Chain } from "../../support/models";

const g = 9.81;
const m = 1;
const R = 0.1;
const I = 0.004;

/**
 * The pendulum bob over a floor of the blocks below: a 1 kg sphere (R, I above) on a 0.5 m
 * arm hinged along y 0.59 m over the floor z = 0, released level from rest; nsc contact at
 * friction mu and restitution e, Moreau–Jean at h.
 */
function bobOverFloor(mu: number, e: number, h: number): ModelInput {
  const H = 0.59;
  const L = 0.5;
  const g = 9.81;
  return {
    gravity: [0, 0, -g],
    bodies: [
      { id: "floor", fixed: true, shapes: [{ type: "plane", normal: [0, 0, 1] }] },
      {
        id: "bob",
        mass: m,
        inertia: [I, I, I],
        position: [L, 0, H],
        shapes: [{ type: "sphere", radius: R }],
      },
    ],
    joints: [
      {
        id: "hinge",
        type: "revolute",
        a: { body: "ground", point: [0, 0, H] },
        b: { body: "bob", point: [-L, 0, 0] },
        axis: [0, 1, 0],
      },
    ],
    contact: { method: "nsc", restitution: e, friction: mu },
    solver: { integrator: "moreau-jean", dt: h },
  };
}

/** The sphere's velocities just after an impact at v_z⁻ = −vz (file comment). */
function rebound(vx: number, wy: number, vz: number, e: number, mu: number) {
  const ux = vx - R * wy;
  const pn = m * (1 + e) * vz;
  const stick = -ux / (1 / m + (R * R) / I);
  const sticking = Math.abs(stick) <= mu * pn;
  const px = sticking ? stick : -mu * pn * Math.sign(ux);
  return { vx: vx + px / m, wy: wy - (R * px) / I, vz: e * vz, sticking };
}

/**
 * The ball dropped from z0 at (vx, 0, 0), spinning at wy, through its first impact and
 * 0.1 s of flight after it: its velocities against the closed form to 1e-9, the energy
 * the start's less the impact's loss ½ m (v⁻² − v⁺²) + ½ I (ω⁻² − ω⁺²) (≥ 0: none made;
 * the flight's parabola exact under θ = ½), the balance closed.
 */
function landing(z0: number, vx: number, wy: number, e: number, mu: number, h: number) {
  const sim = loadModel(
    ballOnFloor({ restitution: e, friction: mu }, { z: z0, vx, wy }, { dt: h }) as ModelInput,
  );
  const vz = Math.sqrt(2 * g * (z0 - R));
  const want = rebound(vx, wy, vz, e, mu);
  const arrival = vz / g;
  const E0 = sim.state().energy.total;
  while (sim.time < arrival + 0.1) sim.step(1);
  const b = sim.state().bodies[0];
  expect(Math.abs(b.velocity[0] - want.vx)).toBeLessThan(1e-9);
  expect(Math.abs(b.angularVelocity[1] - want.wy)).toBeLessThan(1e-9);
  expect(Math.abs(b.velocity[2] - (want.vz - g * (sim.time - arrival)))).toBeLessThan(1e-9);
  expect(Math.abs(b.velocity[1]) + Math.abs(b.angularVelocity[0])).toBeLessThan(1e-12);
  const lost =
    0.5 * m * (vx * vx + vz * vz - want.vx ** 2 - want.vz ** 2) +
    0.5 * I * (wy * wy - want.wy ** 2);
  expect(lost).toBeGreaterThanOrEqual(0);
  const { energy } = sim.state();
  expect(Math.abs(energy.total - (E0 - lost))).toBeLessThan(1e-8);
  expect(Math.abs(energy.error)).toBeLessThan(1e-8);
  return want.sticking;
}

describe("impact events with friction: a spinning sphere landing obliquely on a rough floor", () => {
  for (const { mu, e, sticking } of [
    { mu: 0.1, e: 0.5, sticking: false },
    { mu: 0.5, e: 0.5, sticking: true },
    { mu: 0.04, e: 1, sticking: false },
  ])
    for (const h of [0.005, 1 / 60])
      it(`μ = ${mu}, e = ${e}, h = ${h.toPrecision(3)} s: ${sticking ? "sticks" : "slides"}, rebounds as the closed form, energy not made`, () => {
        expect(landing(0.6, 3, 10, e, mu, h)).toBe(sticking);
      });
});

describe("impact events with friction: a sphere turning by less than TURN a step lands at (2, 0, −3) m/s", () => {
  // dropped from z₀ = R + 3²/(2 g): v_z⁻ = −3 m/s, P_n = 4.5 N s at e = ½; its spin, if any,
  // below 1e-3 rad a step at both steps (0.05 rad/s × 1/100 s), so its impact was left to
  // the step's law before. μ = 0.125: the stick impulse (2/7) 2 = 0.571 N s just above
  // μ P_n = 0.5625 (it slides), below μ (P_n + m g h) (the step's law's normal impulse).
  const z0 = R + 9 / (2 * g);
  for (const { mu, wy, sticking } of [
    { mu: 0.05, wy: 0, sticking: false },
    { mu: 0.125, wy: 0, sticking: false },
    { mu: 0.3, wy: 0, sticking: true },
    { mu: 0.05, wy: 0.05, sticking: false },
    { mu: 0.3, wy: -0.05, sticking: true },
  ])
    for (const h of [1 / 240, 1 / 100])
      it(`μ = ${mu}, ω_y = ${wy} rad/s, h = ${h.toPrecision(3)} s: ${sticking ? "sticks" : "slides"} as the closed form`, () => {
        expect(landing(z0, 2, wy, 0.5, mu, h)).toBe(sticking);
      });
});

describe("impact events with friction: the ball bouncing down to rest, rolling", () => {
  // The same ball at (2, 0, −3) m/s, no spin, e = 0.8, μ = 0.05: its bounces k = 0, 1, …
  // land at V_k = 3 e^k at t_k = t₀ + Σ_{j<k} 2 e V_j / g (t₀ = 3/g), each the impact of
  // the file comment from the last one's v_x, ω_y (sliding at k = 0, 1: u_x from 2 to
  // 1.055 and 0.299 m/s, sticking at k = 2, rolling after: u_x = 0, no tangential impulse). The steps resolve a rebound
  // whose flight against gravity is more than four steps, e V_k > 2 g h; the first that
  // is not ends at rest (its restitution 0: ImpactEvents.rowRestitution), P_n = m V_k, and
  // the ball rolls on at (5 v_x + 2 R ω_y)/7 = 10/7 m/s (its angular momentum about the
  // contact point, m R v_x + I ω_y = 0.2 N m s, kept by every impulse at that point).
  // energy.error: each impact's change of kinetic energy is the contacts' work, its
  // velocities' before less after (removedEnergy); the flights are exact (θ = ½ under
  // constant gravity) and rolling does no work: what is left is rounding, of the 5.6 J.
  const e = 0.8;
  const mu = 0.05;
  const z0 = R + 9 / (2 * g);
  for (const h of [1 / 240, 1 / 100])
    it(`h = ${h.toPrecision(3)} s: every bounce as the recurrence to 1e-9, then rolling at 10/7 m/s; energy.error below 1e-12 J`, () => {
      const sim = loadModel(
        ballOnFloor({ restitution: e, friction: mu }, { z: z0, vx: 2 }, { dt: h }) as ModelInput,
      );
      // the recurrence: each bounce's time, rebound speed and v_x, ω_y after it
      const bounces: { t: number; vz: number; vx: number; wy: number }[] = [];
      let t = 3 / g;
      let V = 3;
      let vx = 2;
      let wy = 0;
      let regimes = "";
      while (e * V > 2 * g * h) {
        const after = rebound(vx, wy, V, e, mu);
        regimes += after.sticking ? "s" : "S";
        vx = after.vx;
        wy = after.wy;
        bounces.push({ t, vz: e * V, vx, wy });
        t += (2 * e * V) / g;
        V *= e;
      }
      const rest = t;
      const last = rebound(vx, wy, V, 0, mu);
      expect(bounces.length).toBeGreaterThanOrEqual(10);
      // (two sliding impacts, then sticking)
      expect(regimes.startsWith("SSs")).toBe(true);
      const vRoll = (5 * 2) / 7;
      expect(Math.abs(last.vx - vRoll)).toBeLessThan(1e-12);
      let k = 0;
      let vzBefore = 0;
      const n = Math.round((rest + 1) / h);
      for (let i = 0; i < n; i++) {
        sim.step(1);
        const s = sim.state();
        const b = s.bodies[0];
        // a step that ends rising after falling holds bounce k
        if (k < bounces.length && vzBefore < 0 && b.velocity[2] > 0) {
          const want = bounces[k];
          expect(sim.time).toBeGreaterThan(want.t);
          expect(sim.time - h).toBeLessThanOrEqual(want.t);
          expect(Math.abs(b.velocity[0] - want.vx)).toBeLessThan(1e-9);
          expect(Math.abs(b.angularVelocity[1] - want.wy)).toBeLessThan(1e-9);
          expect(Math.abs(b.velocity[2] - (want.vz - g * (sim.time - want.t)))).toBeLessThan(1e-9);
          k++;
        }
        vzBefore = b.velocity[2];
        expect(Math.abs(s.energy.error)).toBeLessThan(1e-12);
      }
      expect(k).toBe(bounces.length);
      // at rest on the floor from the unresolved impact on, rolling
      const b = sim.state().bodies[0];
      expect(Math.abs(b.position[2] - R)).toBeLessThan(1e-9);
      expect(Math.abs(b.velocity[2])).toBeLessThan(1e-9);
      expect(Math.abs(b.velocity[0] - vRoll)).toBeLessThan(1e-9);
      expect(Math.abs(b.angularVelocity[1] - vRoll / R)).toBeLessThan(1e-8);
      const { energy } = sim.state();
      expect(Math.abs(energy.error)).toBeLessThan(1e-12);
      expect(Math.abs(energy.kinetic - 0.5 * (m + I / (R * R)) * vRoll * vRoll)).toBeLessThan(1e-9);
    });
});

describe("impact events with friction: a pendulum bob jammed by its friction on the floor", () => {
  // A 1 kg bob (sphere R = 0.1 m, I = 0.004 kg m²) on a 0.5 m arm hinged along y at
  // H = 0.59 m over the floor z = 0, released level from rest (the pendulums over a floor
  // of impact-events.test.ts): it meets the floor at x_c = √(L² − (H − R)²) = 0.0995 m
  // before the bottom, turning at ω⁻ = √(2 m g (H − R) / I_h), I_h = m L² + I = 0.254 kg m²
  // (energy: T = ½ I_h ω², its drop H − R = 0.49 m).
  // One degree of freedom, ω = ω_y: the contact point p = (x_c, 0, 0), p − hinge =
  // (x_c, 0, −H), moves at ω ŷ × (p − hinge) = ω (−H, 0, −x_c), so
  //     u_n = a ω, u_t = b ω along x,  a = −x_c, b = −H,
  // and an impulse (P_t, 0, P_n) at p turns it by I_h Δω = ((p − hinge) × P)_y = a P_n + b P_t
  // (the hinge's reaction, in the same impact, has no moment about its axis): the contact's
  // Delassus matrix W = [a; b][a b]/I_h has rank 1.
  // Moreau's law with the tangential restitution 0 (w_n = u_n⁺ + e u_n⁻ ≥ 0 ⊥ P_n ≥ 0,
  // Coulomb's on u_t⁺) has no solution at e > 0 once μ |b| > |a| (μ > x_c/H = 0.169): P_n = 0
  // leaves w_n = (1 + e) u_n⁻ < 0; sticking (u_t⁺ = 0) is ω⁺ = 0, w_n = e u_n⁻ < 0; and
  // P_n > 0 with w_n = 0 is ω⁺ = −e ω⁻, sliding backwards (u_t⁺ = −e u_t⁻), where Coulomb's
  // P_t = −μ P_n sign(u_t⁺) gives I_h Δω = P_n (a + μ |b| sign ω⁻), of ω⁻'s sign: away from
  // −(1 + e) ω⁻. Its Gauss–Seidel then ran its 100000 sweeps along W's null space (P_n
  // 3.1e6 N s, P_t/P_n = x_c/H): at e = 1 the bob left at 285 m/s (1/100 s) and the run failed
  // (Newton, 1/240 s) or diverged (1/100 s) in its 2nd second; at e = ½ each impact halved ω
  // into the floor, 16 in a step, and the bob stopped dead. Moreau's law on the mean
  // velocity w = u⁺ + e u⁻ in both rows (ImpactEvents' fallback, file comment, friction) has
  // one: w = [a; b] (ω⁺ + e ω⁻), P_n = 0 is excluded as above, so w_n = 0: ω⁺ = −e ω⁻ with
  // w_t = 0 (the impulse inside the cone: P_t = 0, P_n = −(1 + e) I_h ω⁻ / a) — the
  // frictionless rebound, q̇⁺ = −e q̇⁻ (the bob's velocity v⁺ = −e v⁻), and at e = 1 the
  // kinetic energy kept: ΔT = −(1 − e) PᵀWP / (2 (1 + e)) = 0, never more.
  const g = 9.81;
  const H = 0.59;
  const L = 0.5;
  const Ih = L * L + I;
  const arrival = Math.sqrt((2 * g * (H - R)) / Ih);
  const pendulum = (mu: number, e: number, h: number) => loadModel(bobOverFloor(mu, e, h));
  for (const { mu, e } of [
    { mu: 0.3, e: 1 },
    { mu: 0.3, e: 0.5 },
    { mu: 0, e: 1 },
  ])
    for (const h of [1 / 240, 1 / 100])
      it(`μ = ${mu}, e = ${e}, h = ${h.toPrecision(3)} s: 20 s, each impact ω⁺ = −e ω⁻ (v⁺ = −e v⁻), the energy never rising`, () => {
        const sim = pendulum(mu, e, h);
        // each impact's velocities before and after (ImpactEvents.impact, at its instant)
        const impacts: { z: number; w: number[]; v: number[][] }[] = [];
        const proto = ImpactEvents.prototype as unknown as { impact(t: number, h: number): void };
        const impact = proto.impact;
        const spy = vi.spyOn(proto, "impact").mockImplementation(function (this: unknown, t, dt) {
          const before = sim.state().bodies[1];
          impact.call(this, t, dt);
          const after = sim.state().bodies[1];
          impacts.push({
            z: before.position[2],
            w: [before.angularVelocity[1], after.angularVelocity[1]],
            v: [before.velocity, after.velocity],
          });
        });
        const E0 = sim.state().energy.total;
        let rise = 0;
        let last = E0;
        let top = E0;
        try {
          while (sim.time < 20 - h / 2) {
            sim.step(1);
            const { total } = sim.state().energy;
            rise = Math.max(rise, total - last);
            top = Math.max(top, total);
            last = total;
          }
        } finally {
          spy.mockRestore();
        }
        const { energy } = sim.state();
        const swing = m * g * (H - R);
        // 26 impacts at e = 1 (level to the floor and back: 0.78 s); at e = ½ the rebounds
        // fall to one the steps cannot resolve, met at rest (7 at 1/100 s, 8 at 1/240 s)
        expect(impacts.length).toBeGreaterThanOrEqual(e === 1 ? 25 : 7);
        impacts.forEach(({ z, w, v }, k) => {
          // at the floor, at its instant
          expect(Math.abs(z - R)).toBeLessThan(1e-9);
          // the arrivals e^k ω⁻ (the swing between impacts keeps its energy; measured within
          // 3.6e-4 at 1/100 s: the smooth steps' energy error)
          if (e ** k > 0.05) expect(Math.abs(w[0] / (e ** k * arrival) - 1)).toBeLessThan(1e-3);
          const resting = e < 1 && k === impacts.length - 1 && Math.abs(w[1]) < 1e-12;
          if (resting) {
            // the last, a rebound the steps cannot resolve, ends at rest on the floor
            expect(w[0]).toBeLessThan(0.05 * arrival);
            return;
          }
          // q̇⁺ = −e q̇⁻ (measured to 3e-15 relative)
          expect(Math.abs(w[1] + e * w[0])).toBeLessThan(1e-12 * w[0]);
          for (let c = 0; c < 3; c++) expect(Math.abs(v[1][c] + e * v[0][c])).toBeLessThan(1e-12);
        });
        // the energy never rises: no step's T + V above the last's by more than the smooth
        // θ-step's own ripple, the same without friction (measured 1.4e-5 J at 1/240 s,
        // 1.9e-4 J at 1/100 s; 5e13 J at an impact before), nor above the start's by 1e-4 J
        // (0 and 4.0e-5 J)
        expect(rise).toBeLessThan(2.5e-4 * (h / 0.01) ** 2);
        expect(top - E0).toBeLessThan(1e-4);
        // the balance: at e = 1 no impact works (dissipated to rounding), at e = ½ the
        // swing m g (H − R) is all spent at the impacts, the bob at rest on the floor;
        // energy.error measured 2.2e-4 J (1/240 s) and 1.1e-3 J (1/100 s) at e = 1, 5.9e-4 and
        // 3.4e-3 J at e = ½, of the 4.8 J swing
        expect(Math.abs(energy.error)).toBeLessThan(5e-3);
        if (e === 1) expect(Math.abs(energy.dissipated)).toBeLessThan(1e-9);
        else {
          expect(Math.abs(energy.dissipated - swing)).toBeLessThan(5e-3);
          const bob = sim.state().bodies[1];
          expect(Math.hypot(...bob.velocity)).toBeLessThan(1e-9);
          expect(Math.abs(bob.position[2] - R)).toBeLessThan(1e-9);
        }
      });
});

describe("impact events with friction: the jammed bob's fallback law, its convergence said", () => {
  // The jammed bob of the block above (μ = 0.3, e = 1, h = 1/100 s): Moreau's law has no
  // solution (its Gauss–Seidel stops at IMPACT_SOLVE's 100000 sweeps, residual 3.6 m/s, the
  // impact's own speed: a jam, not a stall, IMPACT_STALL) and the law on w = u⁺ + e u⁻ has
  // ω⁺ = −e ω⁻, which one sweep finds (residual 1e-14 m/s). Whether that fallback converged
  // was never looked at: a fallback stopped short too was taken silently, the step's
  // contactConverged true. Here the fallback's Gauss–Seidel is held to 0 sweeps (its polish too), its impulse
  // 0, which leaves its law unmet by the impact's speed (w_n = (1 + e) u_n⁻): every impact
  // step must say contactConverged false, its residual in contactResidual, and the other
  // steps true; that impulse is taken as it stands (the bob's ω the same across the impact).
  // The held run stops at its first impact's step (the bob then left in the floor, the
  // step's own law failed 0.6 s later). (Until IMPACT_STALL a hold to 5 sweeps and a tolerance of 0 did: a residual of 1e-14
  // m/s is now a solve.)
  const h = 1 / 100;
  const run = (capped: boolean) => {
    const sim = loadModel(bobOverFloor(0.3, 1, h));
    const proto = ImpactEvents.prototype as unknown as Proto;
    const { impact, solveImpact } = proto;
    const solve = PgsSolver.prototype.solve;
    const polish = CoulombNewton.prototype.polish;
    let fallback = false;
    const across: number[] = [];
    const spies = [
      vi.spyOn(proto, "solveImpact").mockImplementation(function (this: Events, k, kc, d, dt, et) {
        fallback = et === 1;
        try {
          return solveImpact.call(this, k, kc, d, dt, et);
        } finally {
          fallback = false;
        }
      }),
      // the fallback's polish (CoulombNewton, after its sweeps' stall) held too
      vi.spyOn(CoulombNewton.prototype, "polish").mockImplementation(function (
        this: CoulombNewton,
        ...args
      ) {
        return capped && fallback ? Number.POSITIVE_INFINITY : polish.apply(this, args);
      }),
      vi.spyOn(proto, "impact").mockImplementation(function (this: Events, t, dt) {
        const before = sim.state().bodies[1].angularVelocity[1];
        impact.call(this, t, dt);
        across.push(sim.state().bodies[1].angularVelocity[1] - before);
      }),
      vi.spyOn(PgsSolver.prototype, "solve").mockImplementation(function (
        this: PgsSolver,
        problem,
        r,
        options,
      ) {
        const held = capped && fallback && options !== undefined;
        return solve.call(this, problem, r, held ? { ...options, maxIterations: 0 } : options);
      }),
    ];
    const steps: { impacts: number; converged: boolean; residual: number }[] = [];
    try {
      while (sim.time < 10 - h / 2 && !(capped && across.length > 0)) {
        sim.step(1);
        const { solver } = sim.state();
        steps.push({
          impacts: solver.impacts,
          converged: solver.contactConverged,
          residual: solver.contactResidual,
        });
      }
    } finally {
      for (const s of spies) s.mockRestore();
    }
    return { steps, across };
  };
  it("a fallback stopped short says contactConverged false, its residual of the impact's speed, the other steps true (10 s free)", () => {
    const free = run(false);
    const held = run(true);
    // (13 impacts in 10 s: level to the floor and back in 0.78 s)
    expect(free.steps.filter((s) => s.impacts > 0).length).toBeGreaterThanOrEqual(12);
    // the fallback converging, every step says so (the control)
    for (const s of free.steps) expect(s.converged).toBe(true);
    // (the first impact at 0.39 s)
    expect(held.steps.length).toBeGreaterThan(30);
    expect(held.steps.filter((s) => s.impacts > 0).length).toBe(1);
    for (const s of held.steps) {
      expect(s.converged).toBe(s.impacts === 0);
      // the law unmet by about the impact's speed (measured 1.6 m/s; u_n⁻ = −0.61 m/s,
      // u_t⁻ = −3.6 m/s)
      if (s.impacts > 0) expect(s.residual).toBeGreaterThan(0.1);
    }
    // the held fallback's impulse (0) taken as it stands; the free one's ω⁺ = −e ω⁻
    for (const dw of held.across) expect(dw).toBe(0);
    for (const dw of free.across) expect(Math.abs(dw)).toBeGreaterThan(10);
  });
});

describe("impact events: a pendulum bob meeting an inelastic floor (e = 0) stops on it", () => {
  // The bob of the block above (1 kg, R = 0.1 m, I = 0.004 kg m², 0.5 m arm hinged 0.59 m
  // over the floor, released level) at e = 0: u_n = a ω with a = −x_c ≠ 0, so Moreau's law
  // u_n⁺ ≥ 0 ⊥ P_n ≥ 0 at the impact takes ω⁺ = 0 (P_n > 0: P_n = 0 leaves u_n⁺ = u_n⁻ < 0),
  // and with friction too: ω⁺ = 0 is u_t⁺ = b ω⁺ = 0, sticking, reached by P_t = 0,
  // P_n = −I_h ω⁻/a inside the cone (one degree of freedom, W of rank 1). Then gravity's
  // moment about the hinge keeps pressing it on the floor: it rests at its arrival pose,
  // the centre at (x_c, 0, R), x_c = √(L² − (H − R)²), and the impact dissipates the
  // kinetic energy T⁻ it arrived with, nothing after. Before (a jointed body's e = 0
  // contacts not events, the step's own contact law taking them over the step), it
  // bounced: ω after the impact −1.35 rad/s at 1/100 s (−0.41 at 1/240 s), energy.error
  // +1.06 J (+0.32 J), and 1.05e3 J at μ = 0.3, 1/100 s (the step's contact solve drifting
  // along W's null space).
  const g = 9.81;
  const H = 0.59;
  const L = 0.5;
  const Ih = L * L + I;
  const arrival = Math.sqrt((2 * g * (H - R)) / Ih);
  const xc = Math.sqrt(L * L - (H - R) ** 2);
  for (const mu of [0, 0.3])
    for (const h of [1 / 240, 1 / 100])
      it(`μ = ${mu}, h = ${h.toPrecision(3)} s: ω⁺ = 0 at its instant, then at rest on the floor for 6 s; the arrival's energy dissipated`, () => {
        const sim = loadModel(bobOverFloor(mu, 0, h));
        const impacts: { z: number; T: number; w: number[]; v: number }[] = [];
        const proto = ImpactEvents.prototype as unknown as { impact(t: number, h: number): void };
        const impact = proto.impact;
        const spy = vi.spyOn(proto, "impact").mockImplementation(function (this: unknown, t, dt) {
          const before = sim.state();
          impact.call(this, t, dt);
          const after = sim.state().bodies[1];
          impacts.push({
            z: before.bodies[1].position[2],
            T: before.energy.kinetic,
            w: [before.bodies[1].angularVelocity[1], after.angularVelocity[1]],
            v: Math.hypot(...after.velocity),
          });
        });
        let errorAtImpact = Number.NaN;
        try {
          while (sim.time < 6 - h / 2) {
            sim.step(1);
            if (impacts.length === 0) continue;
            const s = sim.state();
            const bob = s.bodies[1];
            if (Number.isNaN(errorAtImpact)) errorAtImpact = s.energy.error;
            // at rest on the floor at the arrival pose from the impact on
            expect(Math.abs(bob.angularVelocity[1])).toBeLessThan(1e-12);
            expect(Math.hypot(...bob.velocity)).toBeLessThan(1e-12);
            expect(Math.abs(bob.position[0] - xc)).toBeLessThan(1e-9);
            expect(Math.abs(bob.position[2] - R)).toBeLessThan(1e-9);
            // nothing booked after it: the balance as at the impact's step
            expect(Math.abs(s.energy.error - errorAtImpact)).toBeLessThan(1e-9);
          }
        } finally {
          spy.mockRestore();
        }
        // one impact, at the floor, at the swing's closed-form rate (within the smooth
        // steps' energy error), ending at ω⁺ = 0
        expect(impacts.length).toBe(1);
        const [{ z, T, w, v }] = impacts;
        expect(Math.abs(z - R)).toBeLessThan(1e-9);
        expect(Math.abs(w[0] / arrival - 1)).toBeLessThan(1e-3);
        expect(Math.abs(w[1])).toBeLessThan(1e-12);
        expect(v).toBeLessThan(1e-12);
        const { energy } = sim.state();
        // the impact's loss is the arrival's kinetic energy, to the rounding
        expect(Math.abs(energy.dissipated - T)).toBeLessThan(1e-9);
        // the rest the smooth swing's own error (measured −5.9e-4 J at 1/240 s, −3.4e-3 J at
        // 1/100 s: those of the e = ½ runs above)
        expect(Math.abs(energy.error)).toBeLessThan(5e-3);
      });
});

/** ImpactEvents' private members the spies read (impact, solveImpact, applyImpact). */
interface Events {
  sys: BodySystem;
  P: Float64Array;
  q: Float64Array;
  rows: Int32Array | number[];
  residual: number;
  contact: {
    set: {
      rowTimes(i: number, c: number, v: Float64Array): number;
      friction: Float64Array;
      restitution: Float64Array;
    };
  };
}
interface Proto {
  impact(t: number, h: number): void;
  solveImpact(k: number, kc: number, d: number, h: number, et: number): boolean;
  applyImpact(m: number, n: number): number;
}

/** One frictional solve of an impact: its law (et), answer, residual (m/s) and ‖q‖∞ (m/s). */
interface Solve {
  et: number;
  /** Its Gauss–Seidel sweeps. */
  sweeps: number;
  solved: boolean;
  residual: number;
  speed: number;
  /** The kinetic energy (J) its impulse left. */
  energy: number;
}
interface Impact {
  /** The kinetic energy (J) before the impact and after it. */
  before: number;
  after: number;
  solves: Solve[];
  /** The law taken, its largest violation (m/s) over its contacts, over ‖q‖∞. */
  violation: number;
  /** (‖P_t‖ − μ P_n)/(μ P_n) at most (the cone). */
  cone: number;
  /** ‖P_t + μ P_n w_t/‖w_t‖‖/(μ P_n) at most over the sliding contacts (the rim, opposite w_t). */
  slide: number;
}

/**
 * The law's violation at one impact (the block below) from the velocities before (vb) and
 * after (va) it, the impulses P, the contacts rows[0..kc) and the restitution read off q.
 */
function checkLaw(ev: Events, c: Impact, kc: number, vb: Float64Array, va: Float64Array): void {
  const set = ev.contact.set;
  const taken = c.solves[c.solves.length - 1];
  const scale = taken.speed;
  for (let j = 0; j < kc; j++) {
    const i = ev.rows[j];
    const un0 = set.rowTimes(i, 0, vb);
    // the restitution the law took: the pair's, or 0 (a rebound the steps cannot resolve),
    // from q_n = u_n⁻ + e min(u_n⁻, 0)
    const e = un0 < 0 ? (ev.q[3 * j] - un0) / un0 : 0;
    if (un0 < 0) expect(Math.min(Math.abs(e), Math.abs(e - set.restitution[i]))).toBeLessThan(1e-9);
    const mu = set.friction[i];
    const pn = ev.P[3 * j];
    const p1 = ev.P[3 * j + 1];
    const p2 = ev.P[3 * j + 2];
    const wn = set.rowTimes(i, 0, va) + e * Math.min(un0, 0);
    const w1 = set.rowTimes(i, 1, va) + taken.et * e * set.rowTimes(i, 1, vb);
    const w2 = set.rowTimes(i, 2, va) + taken.et * e * set.rowTimes(i, 2, vb);
    expect(pn).toBeGreaterThanOrEqual(0);
    // w_n ≥ 0, = 0 where P_n > 0
    let v = pn > 0 ? Math.abs(wn) : Math.max(-wn, 0);
    const pt = Math.hypot(p1, p2);
    c.cone = Math.max(c.cone, pn > 0 ? (pt - mu * pn) / (mu * pn) : pt > 0 ? 1 : 0);
    const wt = Math.hypot(w1, w2);
    // sticking (w_t = 0) inside the cone, sliding on its rim against w_t (P_n = 0: the cone
    // is {0}, any w_t)
    if (pn > 0 && wt > 1e-6 * scale)
      c.slide = Math.max(
        c.slide,
        Math.hypot(p1 + (mu * pn * w1) / wt, p2 + (mu * pn * w2) / wt) / (mu * pn),
      );
    else if (pn > 0) v = Math.max(v, wt);
    c.violation = Math.max(c.violation, v / scale);
  }
}

/** Runs the model for `seconds`, recording each frictional impact (the block below). */
function record(model: ModelInput, seconds: number) {
  const sim = loadModel(model);
  const proto = ImpactEvents.prototype as unknown as Proto;
  const { impact, solveImpact, applyImpact } = proto;
  const solve = PgsSolver.prototype.solve;
  const impacts: Impact[] = [];
  let current: Impact | null = null;
  let contacts = 0;
  let sweeps = -1;
  const spies = [
    vi.spyOn(PgsSolver.prototype, "solve").mockImplementation(function (this: PgsSolver, p, r, o) {
      const res = solve.call(this, p, r, o);
      if (sweeps >= 0) sweeps += res.iterations;
      return res;
    }),
    vi.spyOn(proto, "solveImpact").mockImplementation(function (this: Events, k, kc, d, h, et) {
      sweeps = 0;
      const solved = solveImpact.call(this, k, kc, d, h, et);
      const swept = sweeps;
      sweeps = -1;
      let speed = 0;
      for (let j = 0; j < d * k; j++) speed = Math.max(speed, Math.abs(this.q[j]));
      contacts = kc;
      if (d === 3 && current !== null)
        current.solves.push({
          et,
          sweeps: swept,
          solved,
          residual: this.residual,
          speed,
          energy: Number.NaN,
        });
      return solved;
    }),
    vi.spyOn(proto, "applyImpact").mockImplementation(function (this: Events, m, n) {
      const after = applyImpact.call(this, m, n);
      const s = current?.solves.at(-1);
      if (s !== undefined) s.energy = after;
      return after;
    }),
    vi.spyOn(proto, "impact").mockImplementation(function (this: Events, t, h) {
      const n = this.sys.numDofs;
      const vb = new Float64Array(n);
      getVelocity(this.sys, vb);
      const c: Impact = {
        before: kineticEnergy(this.sys),
        after: 0,
        solves: [],
        violation: 0,
        cone: 0,
        slide: 0,
      };
      current = c;
      impact.call(this, t, h);
      current = null;
      const va = new Float64Array(n);
      getVelocity(this.sys, va);
      c.after = kineticEnergy(this.sys);
      if (c.solves.length > 0) {
        checkLaw(this, c, contacts, vb, va);
        impacts.push(c);
      }
    }),
  ];
  let flagged = 0;
  let worst = 0;
  const dt = (model.solver as { dt: number }).dt;
  try {
    while (sim.time < seconds - dt / 2) {
      sim.step(1);
      const s = sim.lastStepStats;
      if (!s.contactConverged) {
        flagged++;
        worst = Math.max(worst, s.contactResidual);
      }
    }
  } finally {
    for (const s of spies) s.mockRestore();
  }
  return { impacts, flagged, worst, energy: sim.state().energy };
}

describe("impact events with friction: a stalled Gauss–Seidel told from a law without a solution", () => {
  // bench/impacts.ts' 6-link chain (boxes 0.1 m, 0.1 kg, spherical joints, hinged 0.35 m over
  // the floor, released level; e = ½, μ = ½, Moreau–Jean θ = ½, h = 1/240 s), 5 s: where its
  // links lie flat the impact's Delassus matrix is rank-deficient (up to 21 rows of rank 12),
  // the sweeps creep along its null space and stop at IMPACT_SOLVE's 1e5 sweeps at 4e-12 to
  // 5e-8 m/s, of impacts at 0.05 m/s. Before, a stop at the bound was taken for a law without
  // a solution: 4 steps said contactConverged false (3.0e-8 to 5.0e-8 m/s, the fallback's
  // stalls) and 3 of the 8 switches to the fallback law (w = u⁺ + e u⁻ in all rows) came
  // from a stalled Moreau law whose impulse made no energy (the fallback's other cause is
  // Kane's paradox). Each impact is checked against the law's definition on the local
  // velocities H v before and after it (ContactSet.rowTimes on the bodies' velocities, not
  // the solver's W and q):
  //     w_n = u_n⁺ + e u_n⁻ ≥ 0 ⊥ P_n ≥ 0,  ‖P_t‖ ≤ μ P_n,  w_t = 0 inside, P_t = −μ P_n w_t/‖w_t‖ on the rim,
  // w_t = u_t⁺ (Moreau's law) or u_t⁺ + e u_t⁻ (the fallback), e the pair's ½ or 0 (a rebound
  // the steps cannot resolve), and no impact making kinetic energy.
  const chain = (h: number, restitution: number): ModelInput => {
    const { bodies, joints } = s2Chain(6);
    return {
      gravity: [0, 0, -g],
      bodies: [
        ...bodies,
        { id: "floor", fixed: true, shapes: [{ type: "plane", normal: [0, 0, 1], offset: -0.35 }] },
      ],
      joints,
      contact: { method: "nsc", restitution, friction: 0.5 },
      solver: { integrator: "moreau-jean", dt: h, theta: 0.5 },
    } as ModelInput;
  };

  it("the 6-link chain, e = ½, μ = ½, 1/240 s, 5 s: no step flagged, no fallback from a stall, each impact's law met", () => {
    const { impacts, flagged, energy } = record(chain(1 / 240, 0.5), 5);
    let stopped = 0;
    let spurious = 0;
    let violation = 0;
    let cone = 0;
    let slide = 0;
    let made = 0;
    for (const c of impacts) {
      const [moreau, fallback] = c.solves;
      // Moreau's law's Gauss–Seidel stopped at its bound, above IMPACT_SOLVE's 1e-13 m/s
      if (moreau.residual > 1e-13) stopped++;
      // a fallback taken though Moreau's law was met to IMPACT_STALL and made no energy
      if (
        fallback !== undefined &&
        moreau.residual <= 1e-4 * moreau.speed &&
        moreau.energy <= c.before * (1 + 1e-12)
      )
        spurious++;
      violation = Math.max(violation, c.violation);
      cone = Math.max(cone, c.cone);
      slide = Math.max(slide, c.slide);
      made = Math.max(made, (c.after - c.before) / c.before);
    }
    // (519 impacts; 878 before, the motion after the first spurious fallback another)
    expect(impacts.length).toBeGreaterThan(400);
    // the stall is still met (2 of Moreau's law's solves stop at 1e5 sweeps), and taken
    expect(stopped).toBeGreaterThanOrEqual(1);
    expect(spurious).toBe(0);
    expect(flagged).toBe(0);
    // each law met to IMPACT_STALL (1e-4 ‖q‖∞; measured 8.3e-7), the impulse in the cone
    // (4e-16) and sliding against w_t (2.8e-5 of μ P_n), no energy made (0)
    expect(violation).toBeLessThan(1e-4);
    expect(cone).toBeLessThan(1e-12);
    expect(slide).toBeLessThan(1e-3);
    expect(made).toBeLessThanOrEqual(1e-12);
    // energy.error −8.3e-4 J (−1.4e-3 J before) of the 1.38 J the chain dissipates
    expect(Math.abs(energy.error)).toBeLessThan(1e-3);
  });

  it("the 6-link chain, e = 0, μ = ½, 1/240 s, 5 s: Gauss–Seidel's stalls stopped and polished (sweeps counted), each impact's law met", () => {
    const { impacts, flagged, energy } = record(chain(1 / 240, 0), 5);
    let sweeps = 0;
    let bound = 0;
    let short = 0;
    let violation = 0;
    let cone = 0;
    let slide = 0;
    let made = 0;
    for (const c of impacts) {
      const moreau = c.solves[0];
      sweeps += moreau.sweeps;
      if (moreau.sweeps >= 100000) bound++;
      if ((c.solves.at(-1) as Solve).residual > 1e-13) short++;
      violation = Math.max(violation, c.violation);
      cone = Math.max(cone, c.cone);
      slide = Math.max(slide, c.slide);
      made = Math.max(made, (c.after - c.before) / c.before);
    }
    // (99 impacts, 52 before: the motion another after the first polished impact)
    expect(impacts.length).toBeGreaterThan(40);
    // Moreau's law's sweeps an impact: 3413 (337,936 in all, 3 stalls at 1e5 sweeps left
    // to the sweeps where the polish fell short); before, 4782 (248,680, 2 at 1e5)
    expect(sweeps / impacts.length).toBeLessThan(4000);
    expect(bound).toBeLessThanOrEqual(short);
    expect(flagged).toBe(0);
    // each law met to IMPACT_STALL (measured 3.7e-8 ‖q‖∞; 9.2e-12 before), the impulse in
    // the cone (3.4e-16), sliding against w_t (1.3e-5 of μ P_n; 5.8e-9 before), no energy
    // made (0). The polish's tiny loads on leaving contacts (1e-17 N s against w_n = 0.015
    // m/s, a violation of 0.18 ‖q‖∞ by this measure) are its natural map's own step, 0
    expect(violation).toBeLessThan(1e-6);
    expect(cone).toBeLessThan(1e-12);
    expect(slide).toBeLessThan(1e-3);
    expect(made).toBeLessThanOrEqual(1e-12);
    // energy.error −8.6e-3 J (−7.3e-3 J before, another motion)
    expect(Math.abs(energy.error)).toBeLessThan(2e-2);
  });

  it("the jammed bob (μ = 0.3, e = 1, 1/100 s), 5 s: each impact's Moreau law jammed at its own speed, the fallback taken", () => {
    const { impacts, flagged } = record(bobOverFloor(0.3, 1, 1 / 100), 5);
    // (level to the floor and back in 0.78 s)
    expect(impacts.length).toBeGreaterThanOrEqual(6);
    for (const c of impacts) {
      const [moreau, fallback] = c.solves;
      // residual 3.63 m/s at ‖q‖∞ = 3.63 m/s (the contact's slip, |b| ω⁻ = 0.59 m × 6.15 rad/s)
      expect(moreau.solved).toBe(false);
      expect(moreau.residual).toBeGreaterThan(0.5 * moreau.speed);
      expect(fallback.solved).toBe(true);
      expect(c.violation).toBeLessThan(1e-12);
      expect(c.after).toBeLessThanOrEqual(c.before * (1 + 1e-12));
    }
    expect(flagged).toBe(0);
  });
});
