/**
 * Frame spring (translational and rotary spring-damper between two body frames): forces,
 * Jacobians, and its explicit stability bound (addExplicitRows) above the highest modes.
 */
import { describe, expect, it } from "vitest";
import { FrameSpringEffector } from "../../../src/engine/forces/frame-spring";
import { quatRotateByVector } from "../../../src/engine/math/quat";
import { type BodySystem, clearForces, updateDerived } from "../../../src/engine/model/body-system";
import { mulberry32 } from "../../support/random";
import {
  checkExplicitBound,
  checkJacobians,
  energyGradientErrors,
  expectExactJacobians,
  explicitBound,
  highestMode,
  particleRigid,
  randomizeState,
  rigid,
  rigidAlone,
  rigidAndFixed,
  rigidPair,
  system,
} from "./jacobian-check";

const close = (v: number[], digits = 12) => v.map((x) => expect.closeTo(x, digits));

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

describe("frame spring Jacobians (FD check)", () => {
  const fs = (a: number, pa: number[], b: number, pb: number[]) => ({
    id: "fs",
    bodyA: a,
    pointA: pa,
    bodyB: b,
    pointB: pb,
    stiffness: 30,
    rotaryStiffness: 5,
    damping: 0.8,
    rotaryDamping: 0.4,
  });

  it("rigid–rigid", () => {
    const res = checkJacobians(
      rigidPair,
      (s) => new FrameSpringEffector(s, fs(0, [0.2, 0.1, 0], 1, [-0.3, 0, 0.2])),
      {
        configurations: 8,
      },
    );
    expectExactJacobians(res, true);
  });

  it("rigid–ground, ground–rigid and rigid–fixed", () => {
    expectExactJacobians(
      checkJacobians(
        rigidAlone,
        (s) => new FrameSpringEffector(s, fs(0, [0.2, 0, 0.3], -1, [0, 0, 1])),
      ),
      true,
    );
    expectExactJacobians(
      checkJacobians(
        rigidAlone,
        (s) => new FrameSpringEffector(s, fs(-1, [0, 1, 0], 0, [0.1, 0.2, 0])),
      ),
      true,
    );
    expectExactJacobians(
      checkJacobians(
        rigidAndFixed,
        (s) => new FrameSpringEffector(s, fs(1, [0, 0, 0.4], 0, [0.1, 0.2, 0])),
      ),
      true,
    );
  });

  it("particle–rigid (particle end has fixed axes)", () => {
    expectExactJacobians(
      checkJacobians(
        particleRigid,
        (s) => new FrameSpringEffector(s, fs(0, [0, 0, 0], 1, [0.1, 0.2, 0])),
      ),
      true,
    );
  });

  it("small relative rotations (series branch of J⁻¹)", () => {
    // orientations within ±2 mrad of the rest state: |θ| < 1e-2 takes the series for β
    const res = checkJacobians(
      () =>
        system(
          rigid("r1", 1, [0, 0, 0], { orientation: [1, 0, 0, 0] }),
          rigid("r2", 1, [0.1, 0, 0], { orientation: [1, 0, 0, 0] }),
        ),
      (s) => new FrameSpringEffector(s, fs(0, [0.1, 0, 0], 1, [0, 0.2, 0])),
      { configurations: 3, rotationScale: 2e-3 },
    );
    expectExactJacobians(res, true);
  });
});

describe("frame spring addExplicitRows (symplectic Euler's stability bound)", () => {
  const fs = (a: number, pa: number[], b: number, pb: number[]) => ({
    id: "fs",
    bodyA: a,
    pointA: pa,
    bodyB: b,
    pointB: pb,
    stiffness: 30,
    rotaryStiffness: 5,
    damping: 0.8,
    rotaryDamping: 0.4,
  });

  it("bounds the stiffest mode and the damping rate, at rest and moving, rigid and particle ends", () => {
    // b's frame origin placed on a's (the spring at rest in the state it is made at)
    const atRest = (a: number, pa: number[], b: number) => (sys: BodySystem) => {
      const world = [0, 1, 2].map((i) => (a < 0 ? pa[i] : sys.pos[3 * a + i]));
      if (a >= 0)
        for (let i = 0; i < 3; i++)
          for (let j = 0; j < 3; j++) world[i] += sys.rotation[9 * a + 3 * i + j] * pa[j];
      const local = [0, 1, 2].map((j) => {
        let v = 0;
        for (let i = 0; i < 3; i++)
          v += sys.rotation[9 * b + 3 * i + j] * (world[i] - sys.pos[3 * b + i]);
        return v;
      });
      return new FrameSpringEffector(sys, fs(a, pa, b, local));
    };
    const ratios = [
      checkExplicitBound(rigidPair, atRest(0, [0.2, 0.1, 0], 1)),
      checkExplicitBound(rigidAlone, atRest(-1, [0, 0, 1], 0)),
      checkExplicitBound(particleRigid, atRest(0, [0, 0, 0], 1)),
    ];
    const loaded = [
      checkExplicitBound(
        rigidPair,
        (s) => new FrameSpringEffector(s, fs(0, [0.2, 0.1, 0], 1, [-0.3, 0, 0.2])),
      ),
      checkExplicitBound(
        rigidAlone,
        (s) => new FrameSpringEffector(s, fs(0, [0.2, 0, 0.3], -1, [0, 0, 1])),
      ),
    ];
    // measured at rest 1.9–2.8 times the modes (damping 1.8–2.6: the rows add the
    // translational and rotary parts' norms, and ι bounds a full inertia's I⁻¹ by
    // Gershgorin), loaded 2.6–3.6
    for (const [stiff, damp] of ratios) {
      expect(stiff).toBeLessThan(3);
      expect(damp).toBeLessThan(3);
    }
    for (const [stiff, damp] of loaded) {
      expect(stiff).toBeLessThan(4);
      expect(damp).toBeLessThan(3);
    }
  });

  it("turned and stretched from its rest (bodies moved after it was made), still above the modes", () => {
    const rng = mulberry32(5);
    for (let c = 0; c < 6; c++) {
      const sys = rigidPair();
      const eff = new FrameSpringEffector(sys, fs(0, [0.2, 0.1, 0], 1, [-0.3, 0, 0.2]));
      randomizeState(sys, rng, 0.5, 1.5, 1.2);
      const [omega2, gamma] = explicitBound(sys, eff);
      expect(omega2).toBeGreaterThanOrEqual(highestMode(sys, eff, "position"));
      expect(gamma).toBeGreaterThanOrEqual(highestMode(sys, eff, "velocity"));
    }
  });

  it("is max(k/m, k_r/I) exactly for a body of isotropic inertia on a frame spring at its centre", () => {
    const sys = system(rigid("r", 2, [0, 0, 0], { inertia: [0.01, 0, 0, 0, 0.01, 0, 0, 0, 0.01] }));
    const eff = new FrameSpringEffector(sys, fs(-1, [0, 0, 0], 0, [0, 0, 0]));
    const [omega2, gamma] = explicitBound(sys, eff);
    expect(omega2).toBeCloseTo(5 / 0.01, 9);
    expect(gamma).toBeCloseTo(0.4 / 0.01, 9);
    expect(highestMode(sys, eff, "position")).toBeCloseTo(omega2, 9);
  });
});
