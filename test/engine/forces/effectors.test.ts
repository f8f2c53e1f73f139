/** Gravity, gyroscopic term, damper, point force and frame spring against hand values. */
import { describe, expect, it } from "vitest";
import { DamperEffector } from "../../../src/engine/forces/damper";
import { potentialEnergy } from "../../../src/engine/forces/energy";
import { FrameSpringEffector } from "../../../src/engine/forces/frame-spring";
import { GravityEffector } from "../../../src/engine/forces/gravity";
import { GyroscopicEffector } from "../../../src/engine/forces/gyroscopic";
import { PointForceEffector } from "../../../src/engine/forces/point-force";
import { quatRotateByVector } from "../../../src/engine/math/quat";
import { clearForces, updateDerived } from "../../../src/engine/model/body-system";
import { mulberry32 } from "../../support/random";
import {
  denseJacobian,
  energyGradientErrors,
  particle,
  randomizeState,
  rigid,
  system,
} from "./jacobian-check";

const S = Math.SQRT1_2;
const close = (v: number[], digits = 12) => v.map((x) => expect.closeTo(x, digits));

describe("gravity", () => {
  it("m g on dynamic bodies, nothing on fixed ones; V = −Σ m g·x; setGravity", () => {
    const sys = system(
      particle("p", 2, [1, 2, 3]),
      rigid("r", 3, [0, 0, -1]),
      rigid("base", 5, [0, 0, 10], { fixed: true }),
    );
    const g = new GravityEffector(sys, [0, 0, -9.81]);
    clearForces(sys);
    g.applyForces(0);
    expect(Array.from(sys.force)).toEqual(close([0, 0, -19.62, 0, 0, -29.43, 0, 0, 0]));
    expect(Array.from(sys.torque)).toEqual([0, 0, 0, 0, 0, 0, 0, 0, 0]);
    // V = −(2·(−9.81)·3 + 3·(−9.81)·(−1)) = 9.81·(6 − 3)
    expect(g.potentialEnergy()).toBeCloseTo(9.81 * 3, 12);
    g.setGravity([1, 0, 0]);
    clearForces(sys);
    g.applyForces(0);
    expect(Array.from(sys.force.subarray(0, 6))).toEqual([2, 0, 0, 3, 0, 0]);
    expect(g.potentialEnergy()).toBeCloseTo(-2, 14);
    expect(() => g.setGravity([0, Number.NaN, 0])).toThrow();
    expect(
      energyGradientErrors(
        () => sys,
        (s) => new GravityEffector(s, [0.3, -1, -9]),
      )[0],
    ).toBeLessThan(1e-8);
  });
});

describe("gyroscopic term", () => {
  it("τ = −ω × (I_w ω) with I_w = R I Rᵀ", () => {
    const sys = system(
      rigid("a", 1, [0, 0, 0], { inertia: [1, 0, 0, 0, 2, 0, 0, 0, 3] }),
      rigid("b", 1, [0, 0, 0], { inertia: [1, 0, 0, 0, 2, 0, 0, 0, 3], orientation: [S, 0, 0, S] }),
      particle("p", 1, [0, 0, 0]),
    );
    sys.omega.set([1, 1, 0, 1, 1, 0, 0, 0, 0]);
    const gy = new GyroscopicEffector(sys);
    clearForces(sys);
    gy.applyForces(0);
    // a: Iω = (1,2,0), ω × Iω = (0,0,1) → τ = (0,0,−1)
    // b: turned 90° about z, I_w = diag(2,1,3): Iω = (2,1,0), ω × Iω = (0,0,−1) → τ = (0,0,1)
    expect(Array.from(sys.torque)).toEqual(close([0, 0, -1, 0, 0, 1, 0, 0, 0]));
    expect(Array.from(sys.force)).toEqual([0, 0, 0, 0, 0, 0, 0, 0, 0]);
    expect(gy.bodies.length).toBe(2);
    expect(gy.potentialEnergy()).toBe(0);
  });

  it("does no work: ω·τ = 0 for random states", () => {
    const rng = mulberry32(5);
    const sys = system(rigid("a", 1, [0, 0, 0]));
    const gy = new GyroscopicEffector(sys);
    for (let k = 0; k < 10; k++) {
      randomizeState(sys, rng);
      clearForces(sys);
      gy.applyForces(0);
      const w = sys.omega;
      const t = sys.torque;
      expect(Math.abs(w[0] * t[0] + w[1] * t[1] + w[2] * t[2])).toBeLessThan(1e-14);
    }
  });
});

describe("damper", () => {
  it("f = −c v, τ = −c ω on listed (or all dynamic) bodies; Jacobian −c I", () => {
    const sys = system(
      particle("p", 1, [0, 0, 0]),
      rigid("r", 1, [0, 0, 0]),
      rigid("f", 1, [0, 0, 0], { fixed: true }),
    );
    sys.vel.set([1, 2, 3, -1, 0, 2]);
    sys.omega.set([0, 0, 0, 0.5, -2, 1]);
    const all = new DamperEffector(sys, { id: "d", linear: 2, angular: 3 });
    clearForces(sys);
    all.applyForces(0);
    expect(Array.from(sys.force.subarray(0, 6))).toEqual([-2, -4, -6, 2, 0, -4]);
    expect(Array.from(sys.torque.subarray(3, 6))).toEqual([-1.5, 6, -3]);
    expect(Array.from(all.bodies)).toEqual([0, 1]);
    const d = denseJacobian(sys, all, "velocity");
    const n = sys.numDofs; // 9
    for (let i = 0; i < n; i++)
      for (let j = 0; j < n; j++) expect(d[i * n + j]).toBe(i !== j ? 0 : i < 6 ? -2 : -3);
    const listed = new DamperEffector(sys, { id: "d2", bodies: [1, -1, 2], linear: 1, angular: 0 });
    clearForces(sys);
    listed.applyForces(0);
    expect(Array.from(sys.force.subarray(0, 6))).toEqual([0, 0, 0, 1, 0, -2]);
    expect(Array.from(listed.bodies)).toEqual([1]);
  });
});

describe("point force", () => {
  it("rigid body: f at the rotated point gives r × f, plus the torque; time functions", () => {
    const sys = system(rigid("r", 1, [0, 0, 5], { orientation: [S, 0, 0, S] }));
    const pf = new PointForceEffector(sys, {
      id: "pf",
      body: 0,
      point: [1, 0, 0],
      force: [0, 0, { type: "sine", amplitude: 2, frequency: 0.25, phase: 0, offset: 0 }],
      torque: [0, { offset: 1, rate: 2 }, 0],
    });
    clearForces(sys);
    pf.applyForces(1); // f_z = 2 sin(π/2) = 2; τ_y = 1 + 2 = 3
    expect(Array.from(sys.force)).toEqual(close([0, 0, 2]));
    // r = (0,1,0): r × f = (2,0,0); plus (0,3,0)
    expect(Array.from(sys.torque)).toEqual(close([2, 3, 0]));
    expect(pf.potentialEnergy()).toBe(0); // time-varying: not conservative
  });

  it("particles get the force only; ground nothing; constant force has V = −f·x_p", () => {
    const sys = system(particle("p", 1, [1, 2, 3]));
    const pf = new PointForceEffector(sys, {
      id: "pf",
      body: 0,
      point: [0, 0, 1],
      force: [1, -2, 0.5],
    });
    clearForces(sys);
    pf.applyForces(0);
    expect(Array.from(sys.force)).toEqual([1, -2, 0.5]);
    expect(Array.from(sys.torque)).toEqual([0, 0, 0]);
    // x_p = (1,2,4): −(1 − 4 + 2) = 1
    expect(pf.potentialEnergy()).toBeCloseTo(1, 14);
    const onGround = new PointForceEffector(sys, { id: "g", body: -1, force: [1, 1, 1] });
    clearForces(sys);
    onGround.applyForces(0);
    expect(Array.from(sys.force)).toEqual([0, 0, 0]);
    expect(onGround.potentialEnergy()).toBe(0);
  });

  it("constant force on a rigid offset point is −∇(−f·x_p)", () => {
    const errs = energyGradientErrors(
      () => system(rigid("r", 1, [0, 0, 0])),
      (s) =>
        new PointForceEffector(s, {
          id: "pf",
          body: 0,
          point: [0.4, -0.3, 0.8],
          force: [1, 2, -3],
        }),
    );
    for (const e of errs) expect(e).toBeLessThan(1e-8);
  });
});

describe("frame spring", () => {
  const make = (sys: ReturnType<typeof system>, o = {}) =>
    new FrameSpringEffector(sys, {
      id: "fs",
      bodyA: 0,
      pointA: [0.5, 0, 0],
      bodyB: 1,
      pointB: [-0.5, 0, 0],
      stiffness: 10,
      rotaryStiffness: 4,
      ...o,
    });
  const pair = () =>
    system(
      rigid("a", 1, [0, 0, 0], { orientation: [0.9, 0.3, 0.1, -0.2] }),
      rigid("b", 1, [1, 0, 0], { orientation: [0.6, -0.2, 0.7, 0.1] }),
    );

  it("relaxed in the model configuration, including a common rigid motion", () => {
    // both frames at the bodies' centres, which coincide; the rotational rest state is
    // the (different) orientations the model gives
    const sys = pair();
    sys.pos.set([0, 0, 0, 0, 0, 0]);
    const fs = make(sys, { pointA: [0, 0, 0], pointB: [0, 0, 0] });
    clearForces(sys);
    fs.applyForces(0);
    for (const v of [...sys.force, ...sys.torque]) expect(Math.abs(v)).toBeLessThan(1e-12);
    // turn both bodies by the same world rotation: θ stays 0
    const rot = [0.4, -1.1, 0.7];
    quatRotateByVector(sys.quat, 0, rot, 0, 1);
    quatRotateByVector(sys.quat, 4, rot, 0, 1);
    updateDerived(sys);
    clearForces(sys);
    fs.applyForces(0);
    for (const v of fs.theta) expect(Math.abs(v)).toBeLessThan(1e-12);
    expect(fs.potentialEnergy()).toBeLessThan(1e-24);
  });

  it("τ_b = −k_r θ for a known relative turn, f_b = −k d, energy ½k|d|² + ½k_r|θ|²", () => {
    const sys = system(rigid("a", 1, [0, 0, 0]), rigid("b", 1, [1, 0, 0]));
    const fs = make(sys); // points coincide at (0.5, 0, 0)
    // turn b by 0.3 rad about z about its centre, and move it by (0, 0.2, 0)
    quatRotateByVector(sys.quat, 4, [0, 0, 0.3], 0, 1);
    sys.pos[4] = 0.2;
    updateDerived(sys);
    clearForces(sys);
    fs.applyForces(0);
    expect(Array.from(fs.theta)).toEqual(close([0, 0, 0.3]));
    // x_B = (1,0.2,0) + R_z(0.3)(−0.5,0,0); x_A = (0.5,0,0)
    const d = [1 - 0.5 * Math.cos(0.3) - 0.5, 0.2 - 0.5 * Math.sin(0.3), 0];
    const fb = d.map((x) => -10 * x);
    expect(Array.from(sys.force)).toEqual(close([-fb[0], -fb[1], 0, fb[0], fb[1], 0]));
    // τ_b = −4·0.3 ẑ + r_b × f_b with r_b = R_z(0.3)(−0.5,0,0)
    const rb = [-0.5 * Math.cos(0.3), -0.5 * Math.sin(0.3)];
    const rbxf = rb[0] * fb[1] - rb[1] * fb[0];
    const raxf = 0.5 * -fb[1]; // r_a = (0.5,0,0), f_a = −f_b
    expect(Array.from(sys.torque)).toEqual(close([0, 0, 1.2 + raxf, 0, 0, -1.2 + rbxf]));
    expect(fs.potentialEnergy()).toBeCloseTo(
      0.5 * 10 * (d[0] ** 2 + d[1] ** 2) + 0.5 * 4 * 0.09,
      12,
    );
    // the same turn applied to a instead reverses θ
    const sys2 = system(rigid("a", 1, [0, 0, 0]), rigid("b", 1, [1, 0, 0]));
    const fs2 = make(sys2);
    quatRotateByVector(sys2.quat, 0, [0, 0, 0.3], 0, 1);
    updateDerived(sys2);
    fs2.applyForces(0);
    expect(Array.from(fs2.theta)).toEqual(close([0, 0, -0.3]));
  });

  it("damping: τ_b = −c_r (ω_b − ω_a), f_b = −c (ẋ_B − ẋ_A)", () => {
    const sys = system(rigid("a", 1, [0, 0, 0]), rigid("b", 1, [1, 0, 0]));
    const fs = make(sys, { stiffness: 0, rotaryStiffness: 0, damping: 2, rotaryDamping: 3 });
    sys.omega.set([0, 0, 1, 0.5, 0, 0]);
    clearForces(sys);
    fs.applyForces(0);
    // ẋ_A = ω_a × (0.5,0,0) = (0,0.5,0); ẋ_B = ω_b × (−0.5,0,0) = 0 → f_b = −2(0,−0.5,0)
    expect(Array.from(sys.force)).toEqual(close([0, -1, 0, 0, 1, 0]));
    // τ_b = −3 (0.5,0,−1) + r_b × f_b = (−1.5,0,3) + (−0.5,0,0)×(0,1,0) = (−1.5, 0, 2.5)
    // τ_a = (1.5,0,−3) + (0.5,0,0)×(0,−1,0) = (1.5, 0, −3.5)
    expect(Array.from(sys.torque)).toEqual(close([1.5, 0, -3.5, -1.5, 0, 2.5]));
  });

  it("undamped: zero net force and moment; forces are −∇V", () => {
    const rng = mulberry32(21);
    for (let c = 0; c < 4; c++) {
      const sys = pair();
      const fs = make(sys);
      randomizeState(sys, rng);
      clearForces(sys);
      fs.applyForces(0);
      const f = [0, 0, 0];
      const m = [0, 0, 0];
      for (let b = 0; b < 2; b++) {
        const x = sys.pos.subarray(3 * b);
        const F = sys.force.subarray(3 * b);
        for (let k = 0; k < 3; k++) f[k] += F[k];
        m[0] += x[1] * F[2] - x[2] * F[1] + sys.torque[3 * b];
        m[1] += x[2] * F[0] - x[0] * F[2] + sys.torque[3 * b + 1];
        m[2] += x[0] * F[1] - x[1] * F[0] + sys.torque[3 * b + 2];
      }
      for (let k = 0; k < 3; k++) {
        expect(Math.abs(f[k])).toBeLessThan(1e-12);
        expect(Math.abs(m[k])).toBeLessThan(1e-11);
      }
    }
    for (const e of energyGradientErrors(pair, (s) => make(s), { configurations: 6 }))
      expect(e).toBeLessThan(1e-7);
    const ground = () => system(rigid("a", 1, [0, 0, 1], { orientation: [0.8, 0, 0.6, 0] }));
    const toGround = (s: ReturnType<typeof system>) =>
      new FrameSpringEffector(s, {
        id: "g",
        bodyA: -1,
        pointA: [0, 0, 1],
        bodyB: 0,
        pointB: [0.2, 0, 0],
        stiffness: 3,
        rotaryStiffness: 2,
      });
    for (const e of energyGradientErrors(ground, toGround)) expect(e).toBeLessThan(1e-7);
  });
});

describe("potentialEnergy helper", () => {
  it("sums the effectors' energies", () => {
    const sys = system(particle("p", 2, [0, 0, 1]));
    const g = new GravityEffector(sys, [0, 0, -10]);
    const pf = new PointForceEffector(sys, { id: "pf", body: 0, force: [0, 0, 5] });
    pf.applyForces(0);
    expect(potentialEnergy([g, pf])).toBeCloseTo(20 - 5, 14);
    expect(potentialEnergy([])).toBe(0);
  });
});
