/**
 * StepWork, the energy balance's work of a step (step-work.ts), on its own: a damper on two
 * particles (F = −c v, its whole force dissipative) whose velocities a "step" changes from
 * v0 to v1, against the formulas written out here:
 *  - with the scheme's weight w: −h v̄ · ((1 − w) F0 + w F1), v̄ = ½ (v0 + v1);
 *  - the Rayleigh mass damping's force R = −r_M M v weighed as the scheme does,
 *    −h v̄ · ((1 − w_R) R0 + w_R R1): newmark's w_R = w, the θ-schemes' w_R = 1 (not the
 *    trapezoid of its power 2 r_M T, which books h/4 Δvᵀ C Δv more at w = ½);
 *  - an integrator's own quadrature (dissipatedWork) taken as it is;
 *  - the integrator's removedEnergy added; the end values carried to the next start while
 *    the state stays, recomputed after it changes or after invalidate();
 *  - compliant contact's no-pull clamp (compliant.ts, "The clamp's release"): a box corner
 *    pressed into a linear floor, its force held at 0 at both ends of a segment, books the
 *    elastic energy ½ k (δ_s² − δ_e²) it let go; held at 0 at the start only and pushing
 *    at the end, the ends' weighing of its dissipative force (−k δ_s at the start's lever
 *    arm, −d u_e at the end's), as written out here.
 */
import { describe, expect, it } from "vitest";
import type {
  ConstraintSet,
  ConstraintSet as Constraints,
} from "../../../src/engine/constraints/constraint-set";
import { createContactBehavior } from "../../../src/engine/contact/behaviors";
import { CompliantContactEffector } from "../../../src/engine/contact/compliant";
import { DamperEffector } from "../../../src/engine/forces/damper";
import { CollisionDetector } from "../../../src/engine/geometry/index";
import type { AccelerationStepper } from "../../../src/engine/integrators/acceleration-step";
import { type Integrator, IntegratorMemory } from "../../../src/engine/integrators/integrator";
import {
  addPositionIncrement,
  BodySystem,
  setVelocity,
} from "../../../src/engine/model/body-system";
import { StepWork } from "../../../src/engine/simulation/step-work";
import { bodyInit } from "../../support/body-init";
import { axisAngle } from "../../support/quat";
import { particle, system } from "../forces/jacobian-check";

const C = 0.7;
const H = 0.01;
const V0 = [0.3, -0.2, 0.5, -0.1, 0.4, 0.2];
const V1 = [0.1, 0.6, -0.3, 0.5, -0.2, 0.05];

function setup(
  integrator: Partial<Integrator>,
  rayleighMass = 0,
  name: "newmark" | "moreau-jean" = "newmark",
) {
  const sys = system(particle("p", 0.5, [0, 0, 0]), particle("q", 2, [1, 0, 0]));
  const damper = new DamperEffector(sys, { id: "d", linear: C, angular: 0 });
  // R = −r_M M v (the particles' masses 0.5 and 2)
  const rayleighForce = (rM: number, _rK: number, out: Float64Array) => {
    for (let i = 0; i < 6; i++) out[i] = -rM * MASS[i] * sys.vel[i];
  };
  // (no servos: nothing of AccelerationStepper.lawRoundingWork)
  const stepper = {
    removedEnergy: 0,
    rayleighForce,
    stiffForceChange: () => false,
    lawRoundingWork: () => 0,
  };
  const constraints = { numRows: 0, timeDependent: false };
  const work = new StepWork({
    system: sys,
    stepper: stepper as unknown as AccelerationStepper,
    constraints: constraints as unknown as ConstraintSet,
    lambda: new Float64Array(0),
    memory: new IntegratorMemory(sys.numDofs),
    compliant: null,
    dissipative: [damper],
    solver: () => ({ integrator: name, rayleighMass, rayleighStiffness: 0 }),
    integrator: () => integrator as Integrator,
  });
  return { sys, stepper, work };
}

/** A step from V0 to V1: begin at t = 0, the velocities changed, the work at t + H. */
function step(s: ReturnType<typeof setup>, from = V0, to = V1): number {
  setVelocity(s.sys, Float64Array.from(from));
  s.work.begin(0, H);
  setVelocity(s.sys, Float64Array.from(to));
  return s.work.work(0, H);
}

/** The particles' masses per dof. */
const MASS = [0.5, 0.5, 0.5, 2, 2, 2];

/** −h v̄ · ((1 − w) R0 + w R1) with the Rayleigh mass damping's R = −r M v. */
function rayleighWork(r: number, w: number, v0: number[], v1: number[], h: number): number {
  let sum = 0;
  for (let i = 0; i < v0.length; i++)
    sum += 0.5 * (v0[i] + v1[i]) * r * MASS[i] * ((1 - w) * v0[i] + w * v1[i]);
  return h * sum;
}

/** −h v̄ · ((1 − w) F0 + w F1) with F = −c v. */
function schemeWork(w: number, v0 = V0, v1 = V1, h = H): number {
  let sum = 0;
  for (let i = 0; i < v0.length; i++)
    sum += 0.5 * (v0[i] + v1[i]) * ((1 - w) * C * v0[i] + w * C * v1[i]);
  return h * sum;
}

describe("StepWork", () => {
  it("weighs the dissipative forces as the scheme does", () => {
    for (const w of [0, 0.5, 5 / 9, 1]) {
      const s = setup({ forceWeight: w });
      expect(step(s)).toBeCloseTo(schemeWork(w), 15);
    }
  });

  it("adds the integrator's removedEnergy and takes its own quadrature as it is", () => {
    const s = setup({ forceWeight: 0.5 });
    setVelocity(s.sys, Float64Array.from(V0));
    s.work.begin(0, H);
    s.stepper.removedEnergy = 0.25;
    setVelocity(s.sys, Float64Array.from(V1));
    expect(s.work.work(0, H)).toBeCloseTo(schemeWork(0.5) + 0.25, 15);
    const own = setup({ dissipatedWork: 3 });
    expect(step(own)).toBe(3);
  });

  it("weighs the Rayleigh mass damping's force as the scheme does: newmark's w, the θ-schemes' end", () => {
    const r = 0.4;
    const T = (v: number[]) =>
      0.5 * (0.5 * (v[0] ** 2 + v[1] ** 2 + v[2] ** 2) + 2 * (v[3] ** 2 + v[4] ** 2 + v[5] ** 2));
    // the trapezoid of the power 2 r T, booked before: h/4 Δvᵀ (r M) Δv more at w = ½
    const trapezoid = 0.5 * H * 2 * r * (T(V0) + T(V1));
    const dv = V1.map((v, i) => v - V0[i]);
    const over = (H / 4) * r * dv.reduce((a, d, i) => a + MASS[i] * d * d, 0);
    expect(over).toBeGreaterThan(1e-4);
    expect(rayleighWork(r, 0.5, V0, V1, H) + over).toBeCloseTo(trapezoid, 15);
    for (const w of [0.5, 5 / 9]) {
      const s = setup({ forceWeight: w }, r);
      expect(step(s)).toBeCloseTo(schemeWork(w) + rayleighWork(r, w, V0, V1, H), 14);
    }
    // moreau-jean at θ = ½: the forces at ½, Rayleigh's at the end alone
    const theta = setup({ forceWeight: 0.5 }, r, "moreau-jean");
    expect(step(theta)).toBeCloseTo(schemeWork(0.5) + rayleighWork(r, 1, V0, V1, H), 14);
  });

  it("weighs a split step sub-step by sub-step (h/4, h/4, h/2), its last sub-step at the end", () => {
    // the velocity after each sub-step; the quadrature over the whole step from V0 to V1
    // would miss what the force did in between. With Rayleigh mass damping r: its force
    // weighed as the forces over each sub-step
    const Va = V1.map((v, i) => 3 * v - V0[i]);
    const Vb = V0.map((v) => -v);
    const r = 0.4;
    for (const w of [0.5, 1]) {
      const rayleigh = (v0: number[], v1: number[], h: number) => rayleighWork(r, w, v0, v1, h);
      const s = setup({ forceWeight: w }, r);
      setVelocity(s.sys, Float64Array.from(V0));
      s.work.begin(0, H);
      setVelocity(s.sys, Float64Array.from(Va));
      s.work.substepDone(0, H / 4);
      setVelocity(s.sys, Float64Array.from(Vb));
      s.work.substepDone(H / 4, H / 4);
      setVelocity(s.sys, Float64Array.from(V1));
      // the observer is told of the last sub-step too; `work` counts it
      s.work.substepDone(H / 2, H / 2);
      const expected =
        schemeWork(w, V0, Va, H / 4) +
        schemeWork(w, Va, Vb, H / 4) +
        schemeWork(w, Vb, V1, H / 2) +
        rayleigh(V0, Va, H / 4) +
        rayleigh(Va, Vb, H / 4) +
        rayleigh(Vb, V1, H / 2);
      expect(s.work.work(0, H)).toBeCloseTo(expected, 14);
      expect(Math.abs(expected - schemeWork(w) - rayleigh(V0, V1, H))).toBeGreaterThan(1e-3);
      // the next step starts afresh from the split step's end
      s.work.commit();
      s.work.begin(H, H);
      setVelocity(s.sys, Float64Array.from(V0));
      expect(s.work.work(H, H)).toBeCloseTo(schemeWork(w, V1, V0) + rayleigh(V1, V0, H), 14);
    }
  });

  it("weighs sub-steps told for part of the dofs (Moreau–Jean's groups apart) over theirs, the others' over their whole segment", () => {
    // particle p (dofs 0–2) takes sub-steps h/4, h/4, h/2 of its own while q (dofs 3–5)
    // steps over the whole step (the contact step): p's work is the sum over its sub-steps,
    // q's the whole step's, each −h v̄ · ((1 − w) F0 + w F1) with F = −c v over its dofs
    const p = Uint8Array.from([1, 1, 1, 0, 0, 0]);
    const only = (v: number[], mask: Uint8Array, want: number) =>
      v.map((x, i) => (mask[i] === want ? x : 0));
    const Va = V1.map((v, i) => 3 * v - V0[i]);
    const Vb = V0.map((v) => -v);
    const Vc = V1.map((v, i) => 0.5 * (v + Va[i]));
    for (const w of [0.5, 1]) {
      const s = setup({ forceWeight: w });
      setVelocity(s.sys, Float64Array.from(V0));
      s.work.begin(0, H);
      // the smooth step's sub-steps move every dof; only p's are its (q's are overwritten
      // by the contact step: Vc below)
      setVelocity(s.sys, Float64Array.from(Va));
      s.work.substepDone(0, H / 4, p);
      setVelocity(s.sys, Float64Array.from(Vb));
      s.work.substepDone(H / 4, H / 4, p);
      setVelocity(s.sys, Float64Array.from(V1));
      s.work.substepDone(H / 2, H / 2, p);
      const end = [...only(V1, p, 1).slice(0, 3), ...Vc.slice(3)];
      setVelocity(s.sys, Float64Array.from(end));
      const expected =
        schemeWork(w, only(V0, p, 1), only(Va, p, 1), H / 4) +
        schemeWork(w, only(Va, p, 1), only(Vb, p, 1), H / 4) +
        schemeWork(w, only(Vb, p, 1), only(V1, p, 1), H / 2) +
        schemeWork(w, only(V0, p, 0), only(Vc, p, 0), H);
      expect(s.work.work(0, H)).toBeCloseTo(expected, 14);
    }
    // a halved step (Moreau–Jean's failed contact solve): p's sub-steps h/4, h/4 within the
    // first half, told whole at its end, then the second half whole
    const s = setup({ forceWeight: 0.5 });
    setVelocity(s.sys, Float64Array.from(V0));
    s.work.begin(0, H);
    setVelocity(s.sys, Float64Array.from(Va));
    s.work.substepDone(0, H / 4, p);
    const mid = [...Vb.slice(0, 3), ...Vc.slice(3)];
    setVelocity(s.sys, Float64Array.from(mid));
    s.work.substepDone(H / 4, H / 4, p);
    s.work.substepDone(0, H / 2);
    setVelocity(s.sys, Float64Array.from(V1));
    const expected =
      schemeWork(0.5, only(V0, p, 1), only(Va, p, 1), H / 4) +
      schemeWork(0.5, only(Va, p, 1), only(mid, p, 1), H / 4) +
      schemeWork(0.5, only(V0, p, 0), only(mid, p, 0), H / 2) +
      schemeWork(0.5, mid, V1, H / 2);
    expect(s.work.work(0, H)).toBeCloseTo(expected, 14);
  });

  it("weighs a (sub-)step at the end `projecting` reads, before the integrator's projection moves it, and starts the next from the projected state", () => {
    // Moreau–Jean's step 8 moves the state after the step's velocity update (here: the
    // velocities, as a velocity projection would): the forces the update applied are the
    // ones at the end read before it (a sub-step of h/4, then the rest to the step's end,
    // then the joints' projection after the step, Simulation's, which `solved` leaves)
    const Va = V1.map((v, i) => 3 * v - V0[i]);
    const Pa = Va.map((v) => 0.5 * v);
    const P1 = V1.map((v) => -v);
    const P2 = V1.map((v) => 2 * v);
    for (const w of [0.5, 1]) {
      const s = setup({ forceWeight: w, projectionOrder: "positions-first" });
      setVelocity(s.sys, Float64Array.from(V0));
      s.work.begin(0, H);
      setVelocity(s.sys, Float64Array.from(Va));
      s.work.projecting(H / 4);
      setVelocity(s.sys, Float64Array.from(Pa));
      s.work.substepDone(0, H / 4);
      setVelocity(s.sys, Float64Array.from(V1));
      s.work.projecting(H);
      setVelocity(s.sys, Float64Array.from(P1));
      s.work.solved(0, H);
      setVelocity(s.sys, Float64Array.from(P2));
      const expected = schemeWork(w, V0, Va, H / 4) + schemeWork(w, Pa, V1, (3 * H) / 4);
      expect(s.work.work(0, H)).toBeCloseTo(expected, 14);
      // read after the moves, the ends' forces were the projected ones
      const after = schemeWork(w, V0, Pa, H / 4) + schemeWork(w, Pa, P2, (3 * H) / 4);
      expect(Math.abs(after - expected)).toBeGreaterThan(1e-3);
      // the next step starts from the projected end (P2)
      s.work.commit();
      s.work.begin(H, H);
      setVelocity(s.sys, Float64Array.from(V0));
      expect(s.work.work(H, H)).toBeCloseTo(schemeWork(w, P2, V0), 14);
      // a sub-step read by `projecting` and then rejected (halved) is not taken: the halves'
      // own ends are
      s.work.commit();
      s.work.begin(2 * H, H);
      setVelocity(s.sys, Float64Array.from(V1));
      s.work.projecting(3 * H);
      setVelocity(s.sys, Float64Array.from(V0));
      s.work.substepDone(2 * H, H / 2);
      setVelocity(s.sys, Float64Array.from(Va));
      expect(s.work.work(2 * H, H)).toBeCloseTo(
        schemeWork(w, V0, V0, H / 2) + schemeWork(w, V0, Va, H / 2),
        14,
      );
    }
  });

  it("starts the segment after a projection that follows sub-steps told already (projected) from the projected state", () => {
    // a smooth step that split itself told its sub-steps up to t = H/2 (the last one's end is
    // the next start), `projecting` there reads no segment, the projection moves the state
    // (here the velocities: Pa), and `projected` takes the next segment's start there: the
    // rest of the step is weighed from Pa, not from the state before the move (Va)
    const Va = V1.map((v, i) => 3 * v - V0[i]);
    const Pa = Va.map((v) => 0.5 * v);
    for (const w of [0.5, 1]) {
      const s = setup({ forceWeight: w, projectionOrder: "velocities-first" });
      setVelocity(s.sys, Float64Array.from(V0));
      s.work.begin(0, H);
      setVelocity(s.sys, Float64Array.from(Va));
      s.work.substepDone(0, H / 2);
      s.work.projecting(H / 2);
      setVelocity(s.sys, Float64Array.from(Pa));
      s.work.projected(H / 2);
      setVelocity(s.sys, Float64Array.from(V1));
      s.work.projecting(H);
      const expected = schemeWork(w, V0, Va, H / 2) + schemeWork(w, Pa, V1, H / 2);
      expect(s.work.work(0, H)).toBeCloseTo(expected, 14);
      // weighed from the state before the move, the damper's start force was C Va off
      const stale = schemeWork(w, V0, Va, H / 2) + schemeWork(w, Va, V1, H / 2);
      expect(Math.abs(stale - expected)).toBeGreaterThan(1e-3);
    }
  });

  it("carries a committed step's end to the next start while the state stays, not after a change or invalidate()", () => {
    const s = setup({ forceWeight: 0.5 });
    step(s);
    s.work.commit();
    // the next step starts where the last ended (V1) without the state being touched
    s.work.begin(H, H);
    setVelocity(s.sys, Float64Array.from(V0));
    expect(s.work.work(H, H)).toBeCloseTo(schemeWork(0.5, V1, V0), 15);
    s.work.commit();
    // an external change of the velocities (a new stateVersion): the start is read afresh
    const V2 = V1.map((v) => -2 * v);
    expect(step(s, V2, V1)).toBeCloseTo(schemeWork(0.5, V2, V1), 15);
    s.work.commit();
    // invalidate(): read afresh too (the forces at this state changed, e.g. an input)
    s.work.invalidate();
    s.work.begin(2 * H, H);
    setVelocity(s.sys, Float64Array.from(V0));
    expect(s.work.work(2 * H, H)).toBeCloseTo(schemeWork(0.5, V1, V0), 15);
  });
});

describe("StepWork with compliant contact's no-pull clamp", () => {
  // a 1 kg cube (edge 0.2 m) on its corner ρ = −(a, a, a) over a linear floor, k = 1e5 N/m,
  // d = ½ h k = 250 N·s/m (h = 5 ms)
  const [k, a, h] = [1e5, 0.1, 0.005];
  const d = 0.5 * h * k;
  const rho = [-a, -a, -a];
  function setup(w: number) {
    const sys = new BodySystem([
      bodyInit("cube", "rigid", {
        inertia: [0.02, 0, 0, 0, 0.03, 0, 0, 0, 0.04],
        orientation: axisAngle([1, -1, 0], Math.acos(1 / Math.sqrt(3)) + 0.1),
      }),
    ]);
    const detector = new CollisionDetector(
      [
        { shape: { type: "plane", normal: [0, 0, 1], offset: 0 }, body: -1 },
        { shape: { type: "box", halfExtents: [a, a, a] }, body: 0 },
      ],
      { margin: 0.01 },
    );
    const behavior = createContactBehavior({
      type: "linear",
      stiffness: k,
      damping: 0,
      stepDamping: 0.5,
      perUnitArea: false,
    });
    const compliant = new CompliantContactEffector(sys, detector, behavior, 0.01);
    compliant.stepSize = h;
    const work = new StepWork({
      system: sys,
      stepper: {
        removedEnergy: 0,
        stiffnessPower: () => 0,
        stiffForceChange: () => false,
        lawRoundingWork: () => 0,
      } as unknown as AccelerationStepper,
      constraints: { numRows: 0, timeDependent: false } as unknown as Constraints,
      lambda: new Float64Array(0),
      memory: new IntegratorMemory(sys.numDofs),
      compliant,
      dissipative: [],
      solver: () => ({ integrator: "newmark", rayleighMass: 0, rayleighStiffness: 0 }),
      integrator: () => ({ forceWeight: w }) as Integrator,
    });
    return { sys, work };
  }
  /** The corner's lever arm R ρ (m) and height (m) at the system's state. */
  function corner(sys: BodySystem) {
    const R = sys.rotation;
    const r = [0, 1, 2].map(
      (i) => R[3 * i] * rho[0] + R[3 * i + 1] * rho[1] + R[3 * i + 2] * rho[2],
    );
    return { r, z: sys.pos[2] + r[2] };
  }
  /** ż of the corner with lever arm r at velocity (v, ω). */
  const rate = (r: number[], v: number[]) => v[2] + v[3] * r[1] - v[4] * r[0];
  /** The cube placed with its corner at depth δ, turned by θ about x first, velocity v. */
  function place(sys: BodySystem, theta: number, delta: number, v: number[]) {
    addPositionIncrement(sys, Float64Array.of(0, 0, 0, theta, 0, 0), 1);
    addPositionIncrement(sys, Float64Array.of(0, 0, -delta - corner(sys).z, 0, 0, 0), 1);
    setVelocity(sys, Float64Array.from(v));
    return corner(sys);
  }
  const V0 = [0.3, -0.2, 1, 0.5, -2, 0.7];

  it("held at 0 at both ends: books ½ k (δ_s² − δ_e²), whatever the weights", () => {
    for (const w of [0.5, 5 / 9, 1]) {
      const { sys, work } = setup(w);
      const start = place(sys, 0, 1e-3, V0);
      expect(k * 1e-3 - d * rate(start.r, V0)).toBeLessThan(0);
      work.begin(0, h);
      const V1 = [0.1, 0.2, 0.9, -0.4, 1.5, 0.2];
      const end = place(sys, 0.02, 4e-4, V1);
      expect(k * 4e-4 - d * rate(end.r, V1)).toBeLessThan(0);
      expect(work.work(0, h)).toBeCloseTo(0.5 * k * (1e-3 ** 2 - 4e-4 ** 2), 14);
    }
  });

  it("held at 0 at the start, pushing at the end: the ends' weighing, the start's at its own lever arm", () => {
    for (const w of [0.5, 5 / 9, 1]) {
      const { sys, work } = setup(w);
      const start = place(sys, 0, 1e-3, V0);
      work.begin(0, h);
      const V1 = [0.1, 0.2, -0.4, -0.4, 1.5, 0.2];
      const end = place(sys, 0.02, 2e-3, V1);
      const ue = rate(end.r, V1);
      expect(k * 2e-3 - d * ue).toBeGreaterThan(0);
      // −h v̄ · ((1 − w) F_s + w F_e): F_s = −k δ_s along the start's normal direction, F_e the
      // damping −d u_e along the end's; v̄ · g = ½ (ż(v0) + ż(v1)) with each end's lever arm
      const expected =
        -0.5 *
        h *
        ((1 - w) * -k * 1e-3 * (rate(start.r, V0) + rate(start.r, V1)) +
          w * -d * ue * (rate(end.r, V0) + ue));
      expect(work.work(0, h)).toBeCloseTo(expected, 13);
      expect(Math.abs(expected)).toBeGreaterThan(1e-3);
    }
  });
});
