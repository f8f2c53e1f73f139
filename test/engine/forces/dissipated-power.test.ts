/**
 * ForceEffector.applyDissipativeForces (the energy balance's dissipative forces,
 * simulation/monitor.ts) against the effector's own velocity-dependent force: at random
 * configurations and velocities u, F_d = F(u) − F(0) entry by entry, with F the
 * generalized force [f; τ] that applyForces adds (every damping here is linear in the
 * velocities, so F(u) − F(0) is exactly the damping's force), and its power −F_d · u ≥ 0.
 * The two sides come from different code: the force law on one, the dissipative part on
 * the other.
 */
import { describe, expect, it } from "vitest";
import { DamperEffector } from "../../../src/engine/forces/damper";
import type { ForceEffector } from "../../../src/engine/forces/effector";
import { FrameSpringEffector } from "../../../src/engine/forces/frame-spring";
import { ParticleSpringSet } from "../../../src/engine/forces/particle-springs";
import { SpringEffector } from "../../../src/engine/forces/spring";
import {
  type BodySystem,
  clearForces,
  getForces,
  getVelocity,
  setVelocity,
} from "../../../src/engine/model/body-system";
import { mulberry32 } from "../../support/random";
import {
  generalizedForce,
  particle,
  randomizeState,
  rigid,
  rigidPair,
  system,
} from "./jacobian-check";

/** F(u) − F(0) at the current state: the velocity-dependent part of applyForces' force. */
function dampingForce(sys: BodySystem, eff: ForceEffector): Float64Array {
  const u = new Float64Array(sys.numDofs);
  getVelocity(sys, u);
  const moving = generalizedForce(sys, eff, 0);
  setVelocity(sys, new Float64Array(sys.numDofs));
  const still = generalizedForce(sys, eff, 0);
  setVelocity(sys, u);
  return moving.map((f, i) => f - still[i]);
}

/**
 * applyDissipativeForces against dampingForce at `configurations` random states; returns
 * the powers −F_d · u.
 */
function checkPower(sys: BodySystem, eff: ForceEffector, configurations = 6, seed = 7): number[] {
  const rng = mulberry32(seed);
  const powers: number[] = [];
  const u = new Float64Array(sys.numDofs);
  const fd = new Float64Array(sys.numDofs);
  for (let k = 0; k < configurations; k++) {
    randomizeState(sys, rng);
    const expected = dampingForce(sys, eff);
    clearForces(sys);
    eff.applyDissipativeForces?.(0);
    getForces(sys, fd);
    const scale = Math.max(1, ...Array.from(expected, Math.abs));
    for (let i = 0; i < fd.length; i++)
      expect(Math.abs(fd[i] - expected[i])).toBeLessThanOrEqual(1e-12 * scale);
    getVelocity(sys, u);
    let power = 0;
    for (let i = 0; i < u.length; i++) power -= fd[i] * u[i];
    expect(power).toBeGreaterThanOrEqual(0);
    powers.push(power);
  }
  return powers;
}

describe("the dissipative forces are the effectors' damping forces", () => {
  it("an axial spring between offset points of two rigid bodies: c l̇²", () => {
    const sys = rigidPair();
    const eff = new SpringEffector(sys, {
      id: "s",
      bodyA: 0,
      pointA: [0.2, -0.1, 0.3],
      bodyB: 1,
      pointB: [-0.3, 0.2, 0.1],
      stiffness: 40,
      damping: 1.5,
      restLength: 0.7,
    });
    expect(Math.min(...checkPower(sys, eff))).toBeGreaterThan(1e-3);
  });

  it("a zero-length spring (isotropic damping, c |ḋ|²) and a rigid body on ground", () => {
    const sys = system(rigid("a", 2, [0, 0, 0]));
    const eff = new SpringEffector(sys, {
      id: "s",
      bodyA: 0,
      pointA: [0.4, 0.1, 0],
      bodyB: -1,
      pointB: [1, 2, 0],
      stiffness: 10,
      damping: 0.8,
      restLength: 0,
    });
    expect(Math.min(...checkPower(sys, eff))).toBeGreaterThan(1e-3);
  });

  it("the particles' vectorized springs, axial and zero-length, to fixed points too", () => {
    const sys = system(
      particle("p", 0.5, [0, 0, 0]),
      particle("q", 0.7, [1, 0, 0]),
      particle("r", 0.9, [0, 1, 0]),
      particle("w", 1, [1, 1, 0], true),
    );
    const eff = new ParticleSpringSet(sys, "springs", [
      { bodyA: 0, pointA: [0, 0, 0], bodyB: 1, pointB: [0, 0, 0], stiffness: 5, damping: 0.3 },
      { bodyA: 1, pointA: [0, 0, 0], bodyB: 2, pointB: [0, 0, 0], stiffness: 7, damping: 0.6 },
      {
        bodyA: 2,
        pointA: [0, 0, 0],
        bodyB: 3,
        pointB: [0, 0, 0],
        stiffness: 3,
        damping: 0.9,
        restLength: 0,
      },
      { bodyA: -1, pointA: [0, 0, 2], bodyB: 0, pointB: [0, 0, 0], stiffness: 2, damping: 0.2 },
      // undamped: no power
      { bodyA: 0, pointA: [0, 0, 0], bodyB: 2, pointB: [0, 0, 0], stiffness: 9, damping: 0 },
    ]);
    expect(Math.min(...checkPower(sys, eff))).toBeGreaterThan(1e-3);
  });

  it("a frame spring: c |ḋ|² + c_r |ω_b − ω_a|²", () => {
    const sys = rigidPair();
    const eff = new FrameSpringEffector(sys, {
      id: "fs",
      bodyA: 0,
      pointA: [0.5, 0, 0],
      bodyB: 1,
      pointB: [-0.5, 0, 0],
      stiffness: 10,
      rotaryStiffness: 4,
      damping: 0.7,
      rotaryDamping: 0.3,
    });
    expect(Math.min(...checkPower(sys, eff))).toBeGreaterThan(1e-3);
  });

  it("a damper on a particle and a rigid body: c_lin |v|² + c_ang |ω|²", () => {
    const sys = system(particle("p", 1, [0, 0, 0]), rigid("a", 2, [1, 0, 0]));
    const eff = new DamperEffector(sys, { id: "d", linear: 0.4, angular: 0.25 });
    expect(Math.min(...checkPower(sys, eff))).toBeGreaterThan(1e-3);
  });
});
