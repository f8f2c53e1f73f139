/**
 * The assembly analysis (src/engine/analysis/assembly.ts) against independent solutions.
 *
 * Assembly analysis of the planar slider-crank (crank 0.1 m, 1 kg; rod 0.3 m, 2 kg; slider
 * 0.5 kg; gravity −y; crank driven at 10 rad/s) against the closed-form kinematics and
 * Newton–Euler inverse dynamics of slider-crank-fixture.ts.
 *
 * Double pendulum of two point masses on distance constraints, in the xy plane with
 * gravity −y: accelerations and link tensions from the assembly analysis against the
 * closed form.
 *
 * Angles θ₁, θ₂ from the downward vertical: p₁ = l₁(sin θ₁, −cos θ₁),
 * p₂ = p₁ + l₂(sin θ₂, −cos θ₂). Lagrange's equations give (e.g. myPhysicsLab's
 * double pendulum), with Δ = θ₁ − θ₂, D = 2m₁ + m₂ − m₂ cos 2Δ:
 *   θ̈₁ = [−g(2m₁ + m₂) sin θ₁ − m₂ g sin(θ₁ − 2θ₂) − 2 sin Δ m₂ (θ̇₂² l₂ + θ̇₁² l₁ cos Δ)] / (l₁ D)
 *   θ̈₂ = [2 sin Δ (θ̇₁² l₁ (m₁ + m₂) + g (m₁ + m₂) cos θ₁ + θ̇₂² l₂ m₂ cos Δ)] / (l₂ D)
 * and the particle accelerations a₁ = l₁(θ̈₁ t₁ − θ̇₁² e₁), a₂ = a₁ + l₂(θ̈₂ t₂ − θ̇₂² e₂),
 * with e_i = (sin θ_i, −cos θ_i) along link i (away from the pivot) and
 * t_i = (cos θ_i, sin θ_i). Tensions T_i (positive pulling) from Newton's law along the
 * links: particle 2: m₂ a₂ = m₂ g − T₂ e₂ ⇒ T₂ = m₂ (g − a₂)·e₂;
 * particle 1: m₁ a₁ = m₁ g − T₁ e₁ + T₂ e₂ ⇒ T₁ = (m₁ (g − a₁) + T₂ e₂)·e₁.
 * The engine's distance multiplier (assembly sign: constraint force −Gᵀλ) is the tension.
 *
 * Redundant constraints: a door hanging on two coaxial revolute hinges (10 rows on 6
 * dofs, one free rotation: 5 rows redundant). At rest with its centre of mass on the
 * hinge axis it stays at rest; only the total reaction is determined (it balances
 * gravity), and the multipliers returned must be the minimum-norm ones: here computed
 * independently as λ = G y with (GᵀG + εI) y = Gᵀλ (dense, ε → 0 regularized normal
 * equations), since every minimum-norm solution of Gᵀλ = g lies in range(G).
 * Also: a long chain whose G M⁻¹ Gᵀ is block tridiagonal assembles quickly; and with
 * active nonsmooth contacts the analysis is not performed (UNSUPPORTED_CONTACTS, state
 * untouched).
 *
 * `assemble` (./analyse) is the analysis with its wire form, as the service answers it;
 * `analyse` is the engine's function alone.
 */
import { describe, expect, it } from "vitest";
import type { JointSpec } from "../../../schemas/model";
import type { AssemblyResultOut } from "../../../schemas/state";
import { assemble as analyse } from "../../../src/engine/analysis/assembly";
import { createConstraints } from "../../../src/engine/constraints/build";
import { ConstraintSet } from "../../../src/engine/constraints/constraint-set";
import { projectPositions } from "../../../src/engine/constraints/project";
import { loadModel } from "../../../src/engine/index";
import { csrToDense } from "../../../src/engine/math/csr";
import { addPositionIncrement, BodySystem } from "../../../src/engine/model/body-system";
import { bodyInit } from "../../support/body-init";
import { solveDense } from "../../support/dense-solve";
import { sphericalChain } from "../../support/models";
import { modelSystem } from "../../support/system";
import { assemble } from "./analyse";
import { type SliderCrankSolution, sliderCrank } from "./slider-crank-fixture";
import {
  buildSliderCrank,
  defaultOptions,
  gravityAndGyroscopic,
  zQuat,
} from "./slider-crank-model";

const deg = Math.PI / 180;
const g = 9.81;

function norm(v: readonly number[]) {
  return Math.hypot(...v);
}

/** |a − b|∞ ≤ tol · scale, per component, with a message. */
function close(
  a: readonly number[],
  b: readonly number[],
  scale: number,
  tol: number,
  what: string,
) {
  for (let i = 0; i < b.length; i++)
    expect(Math.abs(a[i] - b[i]), `${what}[${i}]: ${a[i]} vs ${b[i]}`).toBeLessThanOrEqual(
      tol * scale,
    );
}

/** Same rotation (q and −q are the same). */
function closeQuat(a: readonly number[], b: readonly number[], tol: number, what: string) {
  const s = a[0] * b[0] + a[1] * b[1] + a[2] * b[2] + a[3] * b[3] < 0 ? -1 : 1;
  close(
    a.map((x) => s * x),
    b,
    1,
    tol,
    what,
  );
}

function compare(res: AssemblyResultOut, sol: SliderCrankSolution, tol: number) {
  const body = (id: string) => res.bodies.find((b) => b.id === id)!;
  const ref = { crank: sol.crank, rod: sol.rod, slider: sol.slider };
  const xs = Math.max(...Object.values(ref).map((b) => norm(b.x)));
  const vs = Math.max(...Object.values(ref).map((b) => Math.max(norm(b.v), Math.abs(b.omega))));
  const as = Math.max(...Object.values(ref).map((b) => Math.max(norm(b.a), Math.abs(b.alpha))));
  for (const [id, b] of Object.entries(ref)) {
    const e = body(id);
    close(e.position, [b.x[0], b.x[1], 0], xs, tol, `${id} position`);
    closeQuat(e.orientation, zQuat(b.angle), tol, `${id} orientation`);
    close(e.velocity, [b.v[0], b.v[1], 0], vs, tol, `${id} velocity`);
    close(e.angularVelocity, [0, 0, b.omega], vs, tol, `${id} angular velocity`);
    close(e.acceleration, [b.a[0], b.a[1], 0], as, tol, `${id} acceleration`);
    close(e.angularAcceleration, [0, 0, b.alpha], as, tol, `${id} angular acceleration`);
  }
  const react = (id: string) => res.reactions.find((r) => r.id === id)!;
  const expected: Record<string, { force: number[]; torque: number[] }> = {
    j1: { force: [sol.F1[0], sol.F1[1], 0], torque: [0, 0, 0] },
    j2: { force: [sol.F2[0], sol.F2[1], 0], torque: [0, 0, 0] },
    j3: { force: [sol.F3[0], sol.F3[1], 0], torque: [0, 0, 0] },
    j4: { force: [0, sol.N4, 0], torque: [0, 0, 0] },
  };
  if (res.reactions.some((r) => r.id === "m1"))
    expected.m1 = { force: [0, 0, 0], torque: [0, 0, sol.tau] };
  else expected.m4 = { force: [sol.P, 0, 0], torque: [0, 0, 0] };
  const fs = Math.max(...Object.values(expected).map((e) => norm(e.force)));
  const ts = Math.max(...Object.values(expected).map((e) => norm(e.torque)), fs * 0.1);
  for (const [id, e] of Object.entries(expected)) {
    const r = react(id);
    close(r.force, e.force, fs, tol, `${id} force`);
    close(r.torque, e.torque, ts, tol, `${id} torque`);
  }
}

describe("slider-crank driven from the crank (10 rad/s)", () => {
  for (const angle of [0, 30, 90, 179.9]) {
    it(`crank at ${angle}°: positions, velocities, accelerations, reactions, motor torque`, () => {
      const sol = sliderCrank(angle * deg, 10, 0);
      // Slightly mis-assembled guess at rest: every level has work to do.
      const { sys, set } = buildSliderCrank(sol, { rodAngleError: 0.01, sliderError: 0.003 });
      const res = assemble(sys, set, gravityAndGyroscopic(sys), 0, defaultOptions());
      expect(res.exitFlag).toBe("SUCCESS");
      expect(res.residualNorm).toBeLessThanOrEqual(1e-10);
      expect(res.accelerationResidual).toBeLessThan(1e-10);
      compare(res, sol, 1e-8);
      // The motor torque, singled out: it balances the crank's Newton–Euler equation.
      const m1 = res.reactions.find((r) => r.id === "m1")!;
      expect(Math.abs(m1.torque[2] - sol.tau)).toBeLessThanOrEqual(1e-8 * Math.abs(sol.tau));
      // Planar mechanism with 3-D joints: 3 redundant joint rows, named.
      const redundant = res.warnings.filter((w) => w.includes("is redundant"));
      expect(redundant.length).toBe(3);
      for (const w of redundant) expect(w).toMatch(/^joint "j[1-4]" row [0-4] is redundant/);
    });
  }

  it("the drive follows θ(t): assembled at t = 0.05 s the crank is 0.5 rad further on", () => {
    const sol0 = sliderCrank(30 * deg, 10, 0);
    const sol = sliderCrank(30 * deg + 0.5, 10, 0);
    // Guess: the t = 0 pose with the crank, rod and slider placed for the later angle.
    const { sys, set } = buildSliderCrank(sol0);
    const guess = buildSliderCrank(sol);
    sys.pos.set(guess.sys.pos);
    sys.quat.set(guess.sys.quat);
    sys.pos[0] += 0.002; // small mis-assembly
    const res = assemble(sys, set, gravityAndGyroscopic(sys), 0.05, defaultOptions());
    expect(res.exitFlag).toBe("SUCCESS");
    compare(res, sol, 1e-8);
  });

  it("a mis-assembled guess (rod angle +0.2 rad, slider +0.05 m) assembles in ≤ 10 Newton iterations", () => {
    for (const angle of [0, 30, 90, 179.9]) {
      const sol = sliderCrank(angle * deg, 10, 0);
      const { sys, set } = buildSliderCrank(sol, { rodAngleError: 0.2, sliderError: 0.05 });
      const res = assemble(sys, set, gravityAndGyroscopic(sys), 0, defaultOptions());
      expect(res.exitFlag, `${angle}°`).toBe("SUCCESS");
      expect(res.iterations).toBeGreaterThan(0);
      expect(res.iterations).toBeLessThanOrEqual(10);
      expect(res.residualNorm).toBeLessThanOrEqual(1e-10);
      compare(res, sol, 1e-8);
    }
  });

  it("NOT_CONVERGED when the iteration limit is too small, with the numbers reported", () => {
    const sol = sliderCrank(30 * deg, 10, 0);
    const { sys, set } = buildSliderCrank(sol, { rodAngleError: 0.2, sliderError: 0.05 });
    const res = assemble(
      sys,
      set,
      gravityAndGyroscopic(sys),
      0,
      defaultOptions({ maxIterations: 1 }),
    );
    expect(res.exitFlag).toBe("NOT_CONVERGED");
    expect(res.iterations).toBe(1);
    expect(res.residualNorm).toBeGreaterThan(1e-10);
    expect(res.updateNorm).toBeGreaterThan(0);
    expect(res.warnings.some((w) => w.includes("not converged"))).toBe(true);
  });

  for (const solver of ["sparse-lu", "minres", "gmres"] as const)
    it(`the ${solver} solver gives the same answer`, () => {
      const sol = sliderCrank(30 * deg, 10, 0);
      const { sys, set } = buildSliderCrank(sol, { rodAngleError: 0.01, sliderError: 0.003 });
      const res = assemble(sys, set, gravityAndGyroscopic(sys), 0, defaultOptions({ solver }));
      expect(res.exitFlag).toBe("SUCCESS");
      compare(res, sol, 1e-8);
    });

  it("only the requested levels run (acceleration only, from consistent positions and velocities)", () => {
    const sol = sliderCrank(90 * deg, 10, 0);
    const { sys, set } = buildSliderCrank(sol, { withVelocities: true });
    const res = assemble(
      sys,
      set,
      gravityAndGyroscopic(sys),
      0,
      defaultOptions({ levels: ["acceleration"] }),
    );
    expect(res.exitFlag).toBe("SUCCESS");
    expect(res.iterations).toBe(0);
    compare(res, sol, 1e-8);
  });

  it("UNSUPPORTED_CONTACTS with active NSC contacts, state untouched", () => {
    const sol = sliderCrank(30 * deg, 10, 0);
    const { sys, set } = buildSliderCrank(sol, { rodAngleError: 0.2 });
    const before = Float64Array.from(sys.quat);
    const res = assemble(sys, set, gravityAndGyroscopic(sys), 0, defaultOptions(), { contacts: 2 });
    expect(res.exitFlag).toBe("UNSUPPORTED_CONTACTS");
    expect(Array.from(sys.quat)).toEqual(Array.from(before));
    expect(res.reactions).toEqual([]);
  });
});

describe("slider-crank driven from the slider", () => {
  /** A sine s(t) with s(0) = 0, ṡ(0) = sd, s̈(0) = sdd (frequency w/2π, w = 7 rad/s). */
  function sineThrough(sd: number, sdd: number) {
    const w = 7;
    const s = -sdd / (w * w); // A sin φ
    const c = sd / w; // A cos φ
    const amplitude = Math.hypot(s, c);
    const phase = Math.atan2(s, c);
    return {
      type: "sine" as const,
      amplitude,
      frequency: w / (2 * Math.PI),
      phase,
      offset: -amplitude * Math.sin(phase),
    };
  }

  it("regular configuration (60°): the slider drive reproduces the crank motion and its force", () => {
    const sol = sliderCrank(60 * deg, 10, 0, "slider");
    const drive = sineThrough(sol.slider.v[0], sol.slider.a[0]);
    const { sys, set } = buildSliderCrank(sol, { sliderDrive: drive, rodAngleError: 0.01 });
    // Velocity level from rest: start at a crank rate of the right sign (the slider rate
    // alone fixes it; the projection is linear so the start does not matter).
    const res = assemble(sys, set, gravityAndGyroscopic(sys), 0, defaultOptions());
    expect(res.exitFlag).toBe("SUCCESS");
    compare(res, sol, 1e-8);
  });

  for (const rate of [0, 0.5])
    it(`dead centre (crank at 0°), slider rate ${rate}: SINGULAR with finite output`, () => {
      const sol = sliderCrank(0, 0, 0, "slider");
      const { sys, set } = buildSliderCrank(sol, { sliderDrive: { offset: 0, rate } });
      const res = assemble(sys, set, gravityAndGyroscopic(sys), 0, defaultOptions());
      expect(res.exitFlag).toBe("SINGULAR");
      expect(res.warnings.some((w) => w.startsWith('motor "m4" row 0 depends'))).toBe(true);
      const numbers = [
        res.residualNorm,
        res.updateNorm,
        res.accelerationResidual,
        ...res.bodies.flatMap((b) => [
          ...b.position,
          ...b.orientation,
          ...b.velocity,
          ...b.angularVelocity,
          ...b.acceleration,
          ...b.angularAcceleration,
        ]),
        ...res.reactions.flatMap((r) => [...r.force, ...r.torque, ...r.multipliers]),
      ];
      for (const x of numbers) expect(Number.isFinite(x)).toBe(true);
    });

  it("driven from the crank, the same dead centre is regular", () => {
    const sol = sliderCrank(0, 10, 0);
    const { sys, set } = buildSliderCrank(sol);
    const res = assemble(sys, set, gravityAndGyroscopic(sys), 0, defaultOptions());
    expect(res.exitFlag).toBe("SUCCESS");
    expect(res.warnings.every((w) => !w.includes("motor"))).toBe(true);
    compare(res, sol, 1e-8);
  });
});

function closedForm(m1: number, m2: number, l1: number, l2: number, th: number[], w: number[]) {
  const [t1, t2] = th;
  const [w1, w2] = w;
  const dl = t1 - t2;
  const D = 2 * m1 + m2 - m2 * Math.cos(2 * dl);
  const a1t =
    (-g * (2 * m1 + m2) * Math.sin(t1) -
      m2 * g * Math.sin(t1 - 2 * t2) -
      2 * Math.sin(dl) * m2 * (w2 * w2 * l2 + w1 * w1 * l1 * Math.cos(dl))) /
    (l1 * D);
  const a2t =
    (2 *
      Math.sin(dl) *
      (w1 * w1 * l1 * (m1 + m2) +
        g * (m1 + m2) * Math.cos(t1) +
        w2 * w2 * l2 * m2 * Math.cos(dl))) /
    (l2 * D);
  const e1 = [Math.sin(t1), -Math.cos(t1)];
  const e2 = [Math.sin(t2), -Math.cos(t2)];
  const tg1 = [Math.cos(t1), Math.sin(t1)];
  const tg2 = [Math.cos(t2), Math.sin(t2)];
  const p1 = [l1 * e1[0], l1 * e1[1]];
  const p2 = [p1[0] + l2 * e2[0], p1[1] + l2 * e2[1]];
  const v1 = [l1 * w1 * tg1[0], l1 * w1 * tg1[1]];
  const v2 = [v1[0] + l2 * w2 * tg2[0], v1[1] + l2 * w2 * tg2[1]];
  const acc1 = [0, 1].map((i) => l1 * (a1t * tg1[i] - w1 * w1 * e1[i]));
  const acc2 = [0, 1].map((i) => acc1[i] + l2 * (a2t * tg2[i] - w2 * w2 * e2[i]));
  const gv = [0, -g];
  const T2 = m2 * ((gv[0] - acc2[0]) * e2[0] + (gv[1] - acc2[1]) * e2[1]);
  const T1 =
    (m1 * (gv[0] - acc1[0]) + T2 * e2[0]) * e1[0] + (m1 * (gv[1] - acc1[1]) + T2 * e2[1]) * e1[1];
  return { p1, p2, v1, v2, acc1, acc2, T1, T2, e1, e2 };
}

describe("double pendulum of point masses on distance constraints", () => {
  const configs = [
    { m1: 1, m2: 1, l1: 1, l2: 1, th: [0.3, -0.4], w: [0, 0] },
    { m1: 1.5, m2: 0.7, l1: 0.8, l2: 1.3, th: [1.1, 2.4], w: [2.0, -3.5] },
    { m1: 0.2, m2: 3, l1: 2, l2: 0.5, th: [-2.5, 0.9], w: [-1.2, 4.0] },
  ];
  for (const c of configs)
    it(`m = (${c.m1}, ${c.m2}), l = (${c.l1}, ${c.l2}), θ = (${c.th}), θ̇ = (${c.w})`, () => {
      const ref = closedForm(c.m1, c.m2, c.l1, c.l2, c.th, c.w);
      const v3 = (p: number[]): [number, number, number] => [p[0], p[1], 0];
      const particle = (id: string, m: number, p: number[], v: number[]) => ({
        id,
        kind: "particle" as const,
        fixed: false,
        mass: m,
        inertia: [1, 0, 0, 0, 1, 0, 0, 0, 1],
        position: v3(p),
        orientation: [1, 0, 0, 0],
        velocity: v3(v),
        angularVelocity: [0, 0, 0],
      });
      const sys = new BodySystem([
        particle("p1", c.m1, ref.p1, ref.v1),
        particle("p2", c.m2, ref.p2, ref.v2),
      ]);
      const joints: JointSpec[] = [
        {
          id: "l1",
          type: "distance",
          a: { body: "ground", point: [0, 0, 0] },
          b: { body: "p1", point: [0, 0, 0] },
          length: c.l1,
        },
        {
          id: "l2",
          type: "distance",
          a: { body: "p1", point: [0, 0, 0] },
          b: { body: "p2", point: [0, 0, 0] },
          length: c.l2,
        },
      ];
      const set = new ConstraintSet(sys, createConstraints(joints, [], sys));
      const gravity = (_t: number, out: Float64Array) => {
        out.fill(0);
        out[1] = -g * c.m1;
        out[4] = -g * c.m2;
      };
      const res = assemble(sys, set, gravity, 0, defaultOptions());
      expect(res.exitFlag).toBe("SUCCESS");
      expect(res.warnings).toEqual([]);
      const scaleA = Math.max(Math.hypot(...ref.acc1), Math.hypot(...ref.acc2), g);
      const [b1, b2] = res.bodies;
      for (let i = 0; i < 2; i++) {
        expect(Math.abs(b1.acceleration[i] - ref.acc1[i])).toBeLessThanOrEqual(1e-10 * scaleA);
        expect(Math.abs(b2.acceleration[i] - ref.acc2[i])).toBeLessThanOrEqual(1e-10 * scaleA);
      }
      expect(Math.abs(b1.acceleration[2])).toBeLessThanOrEqual(1e-10 * scaleA);
      const scaleT = Math.max(Math.abs(ref.T1), Math.abs(ref.T2));
      const [r1, r2] = res.reactions;
      expect(Math.abs(r1.multipliers[0] - ref.T1)).toBeLessThanOrEqual(1e-10 * scaleT);
      expect(Math.abs(r2.multipliers[0] - ref.T2)).toBeLessThanOrEqual(1e-10 * scaleT);
      // The reaction on b is the tension pulling b back along the link: −T e.
      for (let i = 0; i < 2; i++) {
        expect(Math.abs(r1.force[i] + ref.T1 * ref.e1[i])).toBeLessThanOrEqual(1e-10 * scaleT);
        expect(Math.abs(r2.force[i] + ref.T2 * ref.e2[i])).toBeLessThanOrEqual(1e-10 * scaleT);
      }
    });
});

describe("door on two coaxial hinges", () => {
  it("stays at rest; total reaction balances gravity; multipliers are minimum-norm", () => {
    const m = 12;
    const z0 = 0.35; // centre of mass height on the axis (hinges at z = 0 and z = 1)
    const sys = new BodySystem([
      bodyInit("door", "rigid", {
        mass: m,
        inertia: [2, 0, 0, 0, 1.5, 0, 0, 0, 0.8],
        position: [0, 0, z0],
      }),
    ]);
    const hinge = (id: string, z: number): JointSpec => ({
      id,
      type: "revolute",
      a: { body: "ground", point: [0, 0, z] },
      b: { body: "door", point: [0, 0, z - z0] },
      axis: [0, 0, 1],
    });
    const set = new ConstraintSet(
      sys,
      createConstraints([hinge("h1", 0), hinge("h2", 1)], [], sys),
    );
    const res = assemble(sys, set, gravityAndGyroscopic(sys), 0, defaultOptions());
    expect(res.exitFlag).toBe("SUCCESS");
    expect(res.warnings.filter((w) => w.startsWith('joint "h2"')).length).toBe(5);
    for (const x of [...res.bodies[0].acceleration, ...res.bodies[0].angularAcceleration])
      expect(Math.abs(x)).toBeLessThan(1e-12);
    // Determined: the total force and the total moment about the centre of mass.
    const [r1, r2] = res.reactions;
    const F = [0, 1, 2].map((i) => r1.force[i] + r2.force[i]);
    expect(F[0]).toBeCloseTo(0, 10);
    expect(F[1]).toBeCloseTo(m * g, 10);
    expect(F[2]).toBeCloseTo(0, 10);
    const lever = (z: number) => [0, 0, z - z0];
    const moment = [0, 1, 2].map((i) => r1.torque[i] + r2.torque[i]);
    for (const [r, z] of [
      [r1, 0],
      [r2, 1],
    ] as const) {
      const l = lever(z);
      moment[0] += l[1] * r.force[2] - l[2] * r.force[1];
      moment[1] += l[2] * r.force[0] - l[0] * r.force[2];
      moment[2] += l[0] * r.force[1] - l[1] * r.force[0];
    }
    for (const x of moment) expect(Math.abs(x)).toBeLessThan(1e-10);
    // Minimum norm: λ = G y, (GᵀG + εI) y = Gᵀλ.
    const lambda = [...r1.multipliers, ...r2.multipliers];
    set.updateJacobian(0);
    const G = csrToDense(set.G);
    const rows = set.numRows;
    const n = sys.numDofs;
    const gt = (j: number, i: number) => G[i * n + j];
    const gtl = Array.from({ length: n }, (_, j) =>
      lambda.reduce((s, l, i) => s + gt(j, i) * l, 0),
    );
    const eps = 1e-12;
    const gtg = Array.from({ length: n }, (_, j) =>
      Array.from({ length: n }, (_, k) => {
        let s = j === k ? eps : 0;
        for (let i = 0; i < rows; i++) s += gt(j, i) * gt(k, i);
        return s;
      }),
    );
    const y = solveDense(gtg, gtl);
    const lmin = Array.from({ length: rows }, (_, i) =>
      y.reduce((s, yj, j) => s + G[i * n + j] * yj, 0),
    );
    const scale = Math.max(...lmin.map(Math.abs));
    for (let i = 0; i < rows; i++) expect(Math.abs(lambda[i] - lmin[i])).toBeLessThan(1e-8 * scale);
  });
});

describe("a four-bar 1e-7 rad short of its toggle", () => {
  it("the velocity and acceleration levels meet tolerances relative to their own size: the coupler's 4600 rad/s to the closed form", () => {
    // crank 0.2 m at O2 = 0, coupler 0.2, rocker 0.2 at O4 = (0.5, 0, 0), in the x–z plane
    // about y, assembled from 1 cm off. The toggle is where coupler and rocker fold
    // straight, |A − O4| = b + c; 1e-7 rad before it they turn at ±4600 rad/s for the
    // crank's 3 rad/s. ‖G v + Ct‖∞ keeps the rounding of terms of 920 m/s (3e-9 m/s) and
    // ‖G a − Qc‖∞ that of terms of the accelerations' size, which tolerances relative to
    // Ct (3 rad/s: 4e-10) and Qc alone called NOT_CONVERGED and ACCELERATION_INACCURATE
    // (7e-6 rad before it the same with 6e-10 m/s at 555 rad/s)
    const [a, b, c, d] = [0.2, 0.2, 0.2, 0.5];
    // |A − O4|² = a² + d² − 2 a d cos θ = (b + c)²
    const toggle = Math.acos((a * a + d * d - (b + c) ** 2) / (2 * a * d));
    const th = toggle - 1e-7;
    const A = [a * Math.cos(th), 0, a * Math.sin(th)];
    const AO = [d - A[0], 0, -A[2]];
    const L = Math.hypot(AO[0], AO[2]);
    const x = (L * L + b * b - c * c) / (2 * L);
    const h = Math.sqrt(b * b - x * x);
    const u = [AO[0] / L, 0, AO[2] / L];
    const B = [A[0] + x * u[0] - h * u[2], 0, A[2] + x * u[2] + h * u[0]];
    const mid = (p: number[], q: number[]) => [0.5 * (p[0] + q[0]), 0, 0.5 * (p[2] + q[2])];
    const O4 = [d, 0, 0];
    const G = [mid([0, 0, 0], A), mid(A, B), mid(O4, B)];
    const rel = (p: number[], q: number[]) => [p[0] - q[0], 0, p[2] - q[2]];
    const w = 3;
    const sim = loadModel({
      gravity: [0, 0, -g],
      bodies: ["crank", "coupler", "rocker"].map((id, i) => ({
        id,
        mass: [0.4, 1, 0.8][i],
        position: [G[i][0] + 0.01, 0, G[i][2] - 0.01],
        inertia: [0.01, 0.01, 0.01],
      })),
      joints: [
        {
          id: "j1",
          type: "revolute",
          a: { body: "ground", point: [0, 0, 0] },
          b: { body: "crank", point: rel([0, 0, 0], G[0]) },
          axis: [0, 1, 0],
        },
        {
          id: "j2",
          type: "spherical",
          a: { body: "crank", point: rel(A, G[0]) },
          b: { body: "coupler", point: rel(A, G[1]) },
        },
        {
          id: "j3",
          type: "spherical",
          a: { body: "coupler", point: rel(B, G[1]) },
          b: { body: "rocker", point: rel(B, G[2]) },
        },
        {
          id: "j4",
          type: "revolute",
          a: { body: "ground", point: O4 },
          b: { body: "rocker", point: rel(O4, G[2]) },
          axis: [0, 1, 0],
        },
      ],
      motors: [{ id: "drive", joint: "j1", angle: { offset: 0, rate: w } }],
    } as never);
    const r = sim.assemble();
    expect(r.exitFlag, r.warnings.join("; ")).toBe("SUCCESS");
    // loop closure, ω × r = ω (r_z, 0, −r_x) about y: v_A + w3 × (B − A) = w4 × (B − O4)
    const BA = rel(B, A);
    const BO = rel(B, O4);
    const det = BA[2] * BO[0] - BO[2] * BA[0];
    const w3 = (w * (BO[2] * A[0] - A[2] * BO[0])) / det;
    const w4 = (w * (BA[2] * A[0] - A[2] * BA[0])) / det;
    expect(Math.abs(w3)).toBeGreaterThan(4000);
    // to the conditioning of the closed form's own 2 × 2 solve there
    expect(r.bodies[1].angularVelocity[1] / w3).toBeCloseTo(1, 5);
    expect(r.bodies[2].angularVelocity[1] / w4).toBeCloseTo(1, 5);
  });
});

describe("joints no pose satisfies, and a singular start", () => {
  // The semidefinite factorization drops the row that conflicts at a singular configuration,
  // so Newton's update vanishes there with C far from zero: that stop was reported as
  // converged (SUCCESS, the dropped rows called redundant) with ‖C‖∞ = 0.05 to 1
  const gravityOnly = (sys: BodySystem) => (_t: number, out: Float64Array) => {
    out.fill(0);
    for (let b = 0; b < sys.numBodies; b++) {
      const d = sys.dofOffset[b];
      if (d >= 0) out[d + 2] = -g * sys.mass[b];
    }
  };
  const link = (id: string, anchor: [number, number, number], length: number): JointSpec => ({
    id,
    type: "distance",
    a: { body: "ground", point: anchor },
    b: { body: "p", point: [0, 0, 0] },
    length,
  });

  it("a door on two hinges whose frame points are not on one vertical line: NOT_CONVERGED naming the open joint", () => {
    // hinge axes along z through x = 0 (top) and x = 0.05 (bottom): no pose of the door
    // meets both; the least the pair can be off is 0.05 m
    const sys = new BodySystem([
      bodyInit("door", "rigid", {
        mass: 3,
        inertia: [0.2, 0, 0, 0, 0.3, 0, 0, 0, 0.1],
        position: [0.4, 0, 0],
      }),
    ]);
    const hinge = (id: string, x: number, z: number): JointSpec => ({
      id,
      type: "revolute",
      a: { body: "ground", point: [x, 0, z] },
      b: { body: "door", point: [-0.4, 0, z] },
      axis: [0, 0, 1],
    });
    const set = new ConstraintSet(
      sys,
      createConstraints([hinge("top", 0, 0.5), hinge("bottom", 0.05, -0.5)], [], sys),
    );
    const res = assemble(sys, set, gravityOnly(sys), 0, defaultOptions());
    expect(res.exitFlag).toBe("NOT_CONVERGED");
    expect(res.residualNorm).toBeGreaterThan(0.02);
    expect(res.warnings[0]).toMatch(
      /^position level not converged .*\(joint "(top|bottom)" row \d\)/,
    );
    expect(res.warnings.some((w) => w.includes("is redundant"))).toBe(false);
  });

  it("a particle between two links of 1 m from anchors 1.5 m apart: NOT_CONVERGED from the straight start, assembled off it", () => {
    // on the line through the anchors both links pull along x: G has rank 1 there. Off it
    // the particle assembles onto the circle x = 0.75, radius √(1 − 0.75²), each link
    // pushing with m g/(2 sin φ), sin φ = √(1 − 0.75²) (the particle above the anchors)
    const particle = (z: number) => {
      const sys = new BodySystem([bodyInit("p", "particle", { mass: 1, position: [0.75, 0, z] })]);
      const links = [link("left", [0, 0, 0], 1), link("right", [1.5, 0, 0], 1)];
      const set = new ConstraintSet(sys, createConstraints(links, [], sys));
      return assemble(sys, set, gravityOnly(sys), 0, defaultOptions());
    };
    const straight = particle(0);
    expect(straight.exitFlag).toBe("NOT_CONVERGED");
    expect(straight.residualNorm).toBeGreaterThan(0.1);
    expect(straight.warnings.some((w) => w.includes("is redundant"))).toBe(false);
    const off = particle(1e-3);
    expect(off.exitFlag, off.warnings.join("; ")).toBe("SUCCESS");
    const s = Math.sqrt(1 - 0.75 ** 2);
    close(off.bodies[0].position, [0.75, 0, s], 1, 1e-10, "position");
    for (const r of off.reactions) expect(Math.hypot(...r.force)).toBeCloseTo(g / (2 * s), 9);
  });
});

describe("unwrapped angles: mimic couplings past ±π, limits", () => {
  // two pendulums hinged about y: p1 (1 kg, 0.5 m) driven by a motor at 10 rad/s from 0,
  // p2 (2 kg, 0.4 m) coupled to it by a mimic q2 = m q1. A pendulum at angle q about +y
  // hangs from its pivot at L (−sin q, 0, −cos q)... measured as the model's hinge turns
  // it: p2's centre at (1, 0, 0) + L2 R_y(q2) (0, 0, −1)
  const L1 = 0.5;
  const L2 = 0.4;
  const model = (multiplier: number, limits?: { lower: number; upper: number }) => ({
    gravity: [0, 0, -g],
    bodies: [
      { id: "p1", mass: 1, position: [0, 0, -L1], inertia: [0.01, 0.01, 0.01] },
      { id: "p2", mass: 2, position: [1, 0, -L2], inertia: [0.02, 0.02, 0.02] },
    ],
    joints: [
      {
        id: "j1",
        type: "revolute",
        a: { body: "ground", point: [0, 0, 0] },
        b: { body: "p1", point: [0, 0, L1] },
        axis: [0, 1, 0],
      },
      {
        id: "j2",
        type: "revolute",
        a: { body: "ground", point: [1, 0, 0] },
        b: { body: "p2", point: [0, 0, L2] },
        axis: [0, 1, 0],
        mimic: { joint: "j1", multiplier },
        ...(limits ? { limits } : {}),
      },
    ],
    motors: [{ id: "m", joint: "j1", angle: { offset: 0, rate: 10 } }],
  });
  const at = (q: number) => [1 - L2 * Math.sin(q), 0, -L2 * Math.cos(q)];

  it("a mimic of a joint a motor turned to 4 rad follows 4 rad, as a stepped run does; the effort balances gravity", () => {
    // at t = 0.4 s the motor holds q1 = 4: q2 = 2 (the pose q1 = 4 − 2π is the same, and the
    // analysis followed it: q2 = −1.14). The mimic's effort holds p2 against gravity:
    // λ = m2 g L2 sin q2 along q2, and the motor's torque m1 g L1 sin q1 + m λ
    const sim = loadModel(model(0.5) as never);
    const r = sim.assemble({ dt: 0.4 });
    expect(r.exitFlag, r.warnings.join("; ")).toBe("SUCCESS");
    close(r.bodies[1].position, at(2), 1, 1e-10, "p2");
    const torque = (id: string) => r.reactions.find((x) => x.id === id)!.torque[1];
    const lambda = 2 * g * L2 * Math.sin(2);
    expect(Math.abs(torque("j2:mimic"))).toBeCloseTo(lambda, 9);
    // 0.144 N·m (−7.28 on the other branch)
    expect(Math.abs(torque("m"))).toBeCloseTo(Math.abs(1 * g * L1 * Math.sin(4) + 0.5 * lambda), 9);
    const stepped = loadModel({ ...model(0.5), solver: { dt: 0.001 } } as never);
    stepped.step(400);
    const s = stepped.state();
    expect(s.joints[1].coordinates[0]).toBeCloseTo(2, 6);
    close(s.bodies[1].position, r.bodies[1].position, 1, 1e-6, "stepped p2");
    // the session's own branches are left as they were (nothing applied)
    expect(sim.state().joints[0].coordinates[0]).toBe(0);
  });

  it("a follower an update sends past π keeps its branch (multiplier 2, the motor held at 1.7 rad)", () => {
    // q2 = 3.4 rad: one Newton update turns p2 from 0 by 3.4 rad; the reading nearest the
    // last one, −2.88, left ‖C‖∞ stuck at 2π (NOT_CONVERGED)
    const m = model(2);
    const sim = loadModel({
      ...m,
      motors: [{ id: "m", joint: "j1", angle: { offset: 1.7 } }],
    } as never);
    const r = sim.assemble({}, true);
    expect(r.exitFlag, r.warnings.join("; ")).toBe("SUCCESS");
    close(r.bodies[1].position, at(3.4), 1, 1e-10, "p2");
    // applied: the session reads the branches the analysis reached
    expect(sim.state().joints[1].coordinates[0]).toBeCloseTo(3.4, 10);
  });

  it("a coordinate the analysis leaves outside its limits is named in the warnings", () => {
    const sim = loadModel(model(0.5, { lower: -0.2, upper: 0.2 }) as never);
    const r = sim.assemble({ dt: 0.1 });
    // q1 = 1, q2 = 0.5 > 0.2: limits are not enforced, and the answer says so
    expect(r.exitFlag).toBe("SUCCESS");
    expect(r.warnings).toEqual([
      'joint "j2" is at 0.500000 (rad), outside its limits [-0.2, 0.2]: the analysis does not enforce limits',
    ]);
    expect(
      loadModel(model(0.5, { lower: -1, upper: 1 }) as never).assemble({ dt: 0.1 }).warnings,
    ).toEqual([]);
    // at t = 0 (dt: 0 is the time 0, not "now")
    const late = loadModel(model(0.5) as never);
    late.step(30);
    close(late.assemble({ dt: 0 }).bodies[1].position, at(0), 1, 1e-10, "p2 at t = 0");
  });
});

describe("long chain", () => {
  it("a 300-link pendulum chain of rigid bodies with spherical joints projects in a few iterations", () => {
    const N = 300;
    // hanging straight down from the origin, 0.1 m links
    const { system: sys, spec } = modelSystem(
      sphericalChain({
        links: N,
        length: 0.1,
        mass: 0.1,
        inertia: [1e-4, 1e-4, 1e-5],
        prefix: "b",
        groundPoint: true,
        direction: [0, 0, -1],
      }),
    );
    const set = new ConstraintSet(sys, createConstraints(spec.joints, [], sys));
    const du = new Float64Array(sys.numDofs);
    // A drift-sized error (1e-4 m and rad per dof).
    for (let i = 0; i < du.length; i++) du[i] = 1e-4 * Math.sin(7 * i);
    addPositionIncrement(sys, du, 1);
    const r = projectPositions(sys, set, 0, defaultOptions());
    expect(r.converged).toBe(true);
    expect(r.residualNorm).toBeLessThanOrEqual(1e-10);
    expect(r.iterations).toBeLessThanOrEqual(6);
    expect(r.rank).toBe(3 * N);
  });
});

describe("active nonsmooth contacts", () => {
  it("the analysis is not performed: UNSUPPORTED_CONTACTS naming the count, the state untouched", () => {
    // a pendulum bob off its link length: a position analysis would move it
    const sys = new BodySystem([
      bodyInit("bob", "particle", {
        position: [0.3, -1.2, 0],
        velocity: [1, 0, 0],
      }),
    ]);
    const link: JointSpec = {
      id: "link",
      type: "distance",
      a: { body: "ground", point: [0, 0, 0] },
      b: { body: "bob", point: [0, 0, 0] },
      length: 1,
    };
    const set = new ConstraintSet(sys, createConstraints([link], [], sys));
    const before = [Array.from(sys.pos), Array.from(sys.vel)];
    const res = analyse(sys, set, (_t, out) => out.fill(0), 0, defaultOptions(), { contacts: 3 });
    expect(res.exitFlag).toBe("UNSUPPORTED_CONTACTS");
    expect(res.warnings[0]).toMatch(/^3 active nonsmooth contacts/);
    expect(res.multipliers).toBeNull();
    expect([Array.from(sys.pos), Array.from(sys.vel)]).toEqual(before);
    // without contacts the same call moves the bob onto its link
    expect(analyse(sys, set, (_t, out) => out.fill(0), 0, defaultOptions()).exitFlag).toBe(
      "SUCCESS",
    );
    expect(Math.hypot(sys.pos[0], sys.pos[1])).toBeCloseTo(1, 10);
  });
});
