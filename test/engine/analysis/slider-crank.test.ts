/**
 * Assembly analysis of the planar slider-crank (crank 0.1 m, 1 kg; rod 0.3 m, 2 kg; slider
 * 0.5 kg; gravity −y; crank driven at 10 rad/s) against the closed-form kinematics and
 * Newton–Euler inverse dynamics of slider-crank-fixture.ts.
 */
import { describe, expect, it } from "vitest";
import type { AssemblyResultOut } from "../../../schemas/state";
import { assemble } from "./analyse";
import { type SliderCrankSolution, sliderCrank } from "./slider-crank-fixture";
import {
  buildSliderCrank,
  defaultOptions,
  gravityAndGyroscopic,
  zQuat,
} from "./slider-crank-model";

const deg = Math.PI / 180;

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
