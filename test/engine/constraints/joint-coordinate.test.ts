/**
 * Joint coordinates and rates in State (joints[i].coordinates, .rates): the slider-crank
 * example (crank r = 0.1 m driven at φ = 2π t, rod L = 0.3 m, slider on a prismatic guide
 * along x) against its closed form, at every step for two turns:
 *   crank angle φ (wrapped to (−π, π]), rate 2π;
 *   slider x(φ) = r sin φ + √(L² − r² cos² φ), offset s = x(φ) − x(0),
 *   ṡ = φ̇ (r cos φ + r² sin φ cos φ / √(L² − r² cos² φ)).
 * Joints without a free coordinate (spherical) and motors report none.
 *
 * JointCoordinate on its own: a body on a hinge about z turned in steps of 0.9 rad (less
 * than π, as a time step) reads the unwrapped angle 0.9 k past ±π when the turn count is
 * taken at every step boundary (track); turned in steps of 4 rad it reads 4 − 2π alone,
 * and 4 k when an integrator guides it (guide: the articulated integrator, which steps
 * the angle itself), until the pose changes; the rate is g·u = ω_z; the effort λ on the
 * coordinate is the torque λ n on b; a prismatic coordinate reads the slide along its
 * (normalized) axis and the rate v·n; a revolute joint with a particle end has none.
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { createJointCoordinate } from "../../../src/engine/constraints/joint-coordinate";
import { loadModel } from "../../../src/engine/index";
import {
  addPositionIncrement,
  BodySystem,
  updateDerived,
} from "../../../src/engine/model/body-system";
import { bodyInit } from "../../support/body-init";

/** One body at the origin (rigid, or a particle) for a joint to ground. */
function oneBody(kind: "rigid" | "particle") {
  return new BodySystem([
    bodyInit("A", kind, {
      mass: 2,
      inertia: [1, 0, 0, 0, 2, 0, 0, 0, 3],
    }),
  ]);
}

const r = 0.1;
const L = 0.3;
const rate = 2 * Math.PI;
const x = (phi: number) => r * Math.sin(phi) + Math.sqrt(L * L - r * r * Math.cos(phi) ** 2);
const xdot = (phi: number) =>
  rate *
  (r * Math.cos(phi) +
    (r * r * Math.sin(phi) * Math.cos(phi)) / Math.sqrt(L * L - r * r * Math.cos(phi) ** 2));

describe("joint coordinates and rates", () => {
  it("slider-crank: crank angle and rate, slider offset and rate, every step for two turns", () => {
    const model = JSON.parse(
      readFileSync(new URL("../../../examples/slider-crank.json", import.meta.url), "utf8"),
    );
    const sim = loadModel(model);
    const h = sim.solver.dt;
    let worst = 0;
    for (let n = 1; n <= Math.round(2 / h); n++) {
      sim.step(1);
      const t = n * h;
      const phi = rate * t;
      const joints = Object.fromEntries(sim.state().joints.map((j) => [j.id, j]));
      const crank = joints["main-bearing"];
      const guide = joints.guide;
      const wrapped = Math.atan2(Math.sin(phi), Math.cos(phi));
      const dPhi = Math.atan2(
        Math.sin(crank.coordinates[0] - wrapped),
        Math.cos(crank.coordinates[0] - wrapped),
      );
      worst = Math.max(
        worst,
        Math.abs(dPhi),
        Math.abs(crank.rates[0] - rate),
        Math.abs(guide.coordinates[0] - (x(phi) - x(0))),
        Math.abs(guide.rates[0] - xdot(phi)),
      );
      expect(joints["crank-pin"].coordinates).toEqual([]);
      expect(joints.drive.coordinates).toEqual([]);
    }
    expect(worst).toBeLessThan(1e-9);
  });

  it("double pendulum: the elbow's angle and rate are the links' relative rotation about y", () => {
    const model = JSON.parse(
      readFileSync(new URL("../../../examples/double-pendulum.json", import.meta.url), "utf8"),
    );
    const sim = loadModel(model);
    // both links turn about y only: θ = 2 atan2(q_y, q_w) of their orientations
    const about = (q: number[]) => 2 * Math.atan2(q[2], q[0]);
    const wrap = (a: number) => Math.atan2(Math.sin(a), Math.cos(a));
    const s0 = sim.state();
    const [u0, l0] = s0.bodies.map((b) => about(b.orientation));
    let worst = 0;
    for (let n = 0; n < 2000; n++) {
      sim.step(1);
      const s = sim.state();
      const [upper, lower] = s.bodies;
      const shoulder = s.joints[0];
      const elbow = s.joints[1];
      worst = Math.max(
        worst,
        Math.abs(wrap(shoulder.coordinates[0] - (about(upper.orientation) - u0))),
        Math.abs(
          wrap(
            elbow.coordinates[0] -
              (about(lower.orientation) - l0 - (about(upper.orientation) - u0)),
          ),
        ),
        Math.abs(shoulder.rates[0] - upper.angularVelocity[1]),
        Math.abs(elbow.rates[0] - (lower.angularVelocity[1] - upper.angularVelocity[1])),
      );
    }
    expect(worst).toBeLessThan(1e-9);
  });
});

describe("JointCoordinate", () => {
  const ground = { body: -1, point: [0, 0, 0] };
  const body = { body: 0, point: [0, 0, 0] };
  /** The coordinate of a hinge "h" of `axis` between the ground and body 0 of `sys`. */
  const hinge = (sys: BodySystem, axis: [number, number, number]) => {
    const q = createJointCoordinate(sys, { id: "h", type: "revolute", axis }, ground, body);
    if (q === null) throw new Error("a hinge between ground and a rigid body has a coordinate");
    return q;
  };

  it("revolute: unwrapped angle through whole turns, rate ω·n, effort as a torque about n", () => {
    const sys = oneBody("rigid");
    const q = hinge(sys, [0, 0, 2]);
    expect(q.kind).toBe("angle");
    expect([q.bodyA, q.bodyB]).toEqual([-1, 0]);
    sys.omega.set([0, 0, 2.1]);
    for (let k = 0; k <= 10; k++) {
      const angle = 0.9 * k;
      sys.quat.set([Math.cos(angle / 2), 0, 0, Math.sin(angle / 2)]);
      updateDerived(sys);
      q.evaluate();
      expect(q.value).toBeCloseTo(angle, 12);
      expect(q.rate).toBeCloseTo(2.1, 12);
      // steady rotation about the axis: q̈ = 0 = g·u̇ − Qc with u̇ = 0
      expect(Math.abs(q.quadraticTerm())).toBeLessThan(1e-12);
      q.track();
    }
    expect(q.turns).toBe(1); // 9 rad = 2π + 2.72
    const force = new Float64Array(3);
    const torque = new Float64Array(3);
    q.reaction(Float64Array.of(1.5), 0, force, torque);
    for (let i = 0; i < 3; i++) {
      expect(force[i]).toBeCloseTo(0, 14);
      expect(torque[i]).toBeCloseTo(i === 2 ? 1.5 : 0, 12);
    }
    // back to the model pose's branch: the wrapped angle 9 − 2π
    q.resetTurns();
    q.evaluate();
    expect(q.value).toBeCloseTo(9 - 2 * Math.PI, 12);
  });

  it("turned 4 rad a step (more than π): read 2π off alone; guided, the angle 4 k inside and across steps, until the pose changes", () => {
    const sys = oneBody("rigid");
    const q = hinge(sys, [0, 0, 1]);
    const turnTo = (angle: number) => {
      sys.quat.set([Math.cos(angle / 2), 0, 0, Math.sin(angle / 2)]);
      updateDerived(sys);
    };
    // alone: the branch nearest the last boundary's angle, 4 − 2π
    turnTo(4);
    q.evaluateValue();
    expect(q.value).toBeCloseTo(4 - 2 * Math.PI, 12);
    q.track();
    expect(q.turns).toBe(0);
    q.resetTurns();
    // guided at every configuration, 2000 rad/s at 5 ms: 4 k, and the turn counts taken
    for (let k = 1; k <= 10; k++) {
      // a stage inside the step, then the step's end
      for (const angle of [4 * k - 1.7, 4 * k]) {
        turnTo(angle);
        // (a guide within π of the angle suffices)
        q.guided = angle + 3;
        q.guide();
        q.evaluate();
        expect(q.value).toBeCloseTo(angle, 11);
      }
      q.track();
      expect(q.turns).toBe(Math.round((4 * k) / (2 * Math.PI)));
      expect(q.lastAngle + 2 * Math.PI * q.turns).toBeCloseTo(4 * k, 11);
    }
    // the pose changed (a restore, an input): the guide lapses, the boundary's branch again
    turnTo(40.5);
    q.evaluateValue();
    expect(q.value).toBeCloseTo(40.5, 11);
    turnTo(40 + 4);
    q.evaluateValue();
    expect(q.value).toBeCloseTo(44 - 2 * Math.PI, 11);
  });

  it("guideFrom: the held start's q plus g · Δx reads a step of 4 rad about the axis; guideStart the start again", () => {
    const sys = oneBody("rigid");
    const q = hinge(sys, [0, 0, 1]);
    q.holdStart();
    expect(q.value).toBe(0);
    // the step's increment: a rotation vector of 4 rad about z on the body's dofs
    const inc = Float64Array.of(0, 0, 0, 0, 0, 4);
    addPositionIncrement(sys, inc, 1);
    q.guideFrom(inc);
    q.evaluate();
    expect(q.value).toBeCloseTo(4, 12);
    q.track();
    expect(q.lastAngle + 2 * Math.PI * q.turns).toBeCloseTo(4, 12);
    // put back at the start (a halving's restore)
    addPositionIncrement(sys, inc, -1);
    q.guideStart();
    q.evaluate();
    expect(q.value).toBeCloseTo(0, 12);
  });

  it("evaluateValue and evaluateJacobian give evaluate's q and g, each leaving the rest as it was", () => {
    const sys = oneBody("rigid");
    const q = hinge(sys, [1, 2, 2]);
    sys.omega.set([0.3, -0.4, 1.2]);
    const angle = 1.1;
    const s = Math.sin(angle / 2) / 3;
    sys.quat.set([Math.cos(angle / 2), s, 2 * s, 2 * s]);
    updateDerived(sys);
    q.evaluate();
    const value = q.value;
    const rate = q.rate;
    const jacB = Float64Array.from(q.jacB);
    expect(value).toBeCloseTo(angle, 12);
    // ω·n with n = (1, 2, 2)/3
    expect(rate).toBeCloseTo((0.3 - 0.8 + 2.4) / 3, 12);
    // another configuration, read in parts
    sys.quat.set([1, 0, 0, 0]);
    updateDerived(sys);
    q.evaluateValue();
    expect(q.value).toBeCloseTo(0, 14);
    expect(q.rate).toBe(rate);
    expect(Array.from(q.jacB)).toEqual(Array.from(jacB));
    q.evaluateJacobian();
    q.evaluate();
    const full = Float64Array.from(q.jacB);
    q.evaluateValue();
    q.jacB.fill(0);
    q.evaluateJacobian();
    expect(Array.from(q.jacB)).toEqual(Array.from(full));
  });

  it("prismatic: the offset along the normalized axis and its rate; none for a particle hinge", () => {
    const sys = oneBody("particle");
    const n = [3 / 5, 4 / 5, 0];
    const q = createJointCoordinate(
      sys,
      { id: "s", type: "prismatic", axis: [3, 4, 0] },
      ground,
      body,
    );
    if (q === null) throw new Error("a prismatic joint has a coordinate");
    expect(q.kind).toBe("offset");
    sys.pos.set([0.7 * n[0] + 0.2 * n[1], 0.7 * n[1] - 0.2 * n[0], 0.1]);
    sys.vel.set([1, 2, 3]);
    updateDerived(sys);
    q.evaluate();
    expect(q.value).toBeCloseTo(0.7, 14);
    expect(q.rate).toBeCloseTo(n[0] + 2 * n[1], 14);
    expect(
      createJointCoordinate(sys, { id: "h", type: "revolute", axis: [0, 0, 1] }, ground, body),
    ).toBeNull();
  });
});
