/**
 * Every force effector's exact position and velocity Jacobians against central finite
 * differences of its applyForces, over several random (rotated, moving) configurations.
 */
import { describe, expect, it } from "vitest";
import { DamperEffector } from "../../../src/engine/forces/damper";
import { FrameSpringEffector } from "../../../src/engine/forces/frame-spring";
import { GravityEffector } from "../../../src/engine/forces/gravity";
import { GyroscopicEffector } from "../../../src/engine/forces/gyroscopic";
import { ParticleSpringSet } from "../../../src/engine/forces/particle-springs";
import { PointForceEffector } from "../../../src/engine/forces/point-force";
import { SpringEffector } from "../../../src/engine/forces/spring";
import {
  addPositionIncrement,
  getVelocity,
  setVelocity,
} from "../../../src/engine/model/body-system";
import { MatrixType } from "../../../src/engine/solvers/linear/linear-solver";
import { mulberry32 } from "../../support/random";
import {
  checkJacobians,
  denseJacobian,
  particle,
  randomizeState,
  rigid,
  system,
} from "./jacobian-check";

const pp = () => system(particle("p", 1, [0, 0, 0]), particle("q", 2, [1, 0.2, 0]));
const pr = () => system(particle("p", 1, [0, 0, 0]), rigid("r", 2, [1, 0, 0]));
const rr = () =>
  system(
    rigid("r1", 1, [0, 0, 0], { orientation: [0.9, 0.1, -0.3, 0.2] }),
    rigid("r2", 2, [1, 0.5, 0]),
  );
const rg = () => system(rigid("r", 2, [0.3, 0, 1], { orientation: [0.7, 0.2, 0.1, -0.4] }));
const rFixed = () => system(rigid("r", 2, [0, 0, 1]), rigid("base", 1, [1, 1, 0], { fixed: true }));

/** The check must see a non-trivial Jacobian, and every error below the tolerance. */
function expectExact(res: ReturnType<typeof checkJacobians>, needVel: boolean) {
  for (const e of [...res.position, ...res.velocity]) expect(e).toBeLessThan(1e-6);
  expect(Math.min(...res.positionNorm)).toBeGreaterThan(0.1);
  if (needVel) expect(Math.min(...res.velocityNorm)).toBeGreaterThan(0.01);
}

describe("spring Jacobians (FD check)", () => {
  const spring = (a: number, pa: number[], b: number, pb: number[], extra = {}) => ({
    id: "s",
    bodyA: a,
    pointA: pa,
    bodyB: b,
    pointB: pb,
    stiffness: 40,
    damping: 1.5,
    restLength: 0.8,
    ...extra,
  });

  it("particle–particle (offset points, damping)", () => {
    const res = checkJacobians(
      pp,
      (s) => new SpringEffector(s, spring(0, [0.1, 0, 0], 1, [0, 0.2, 0])),
      {
        configurations: 6,
      },
    );
    expectExact(res, true);
    // with damping and l0 > 0 the position Jacobian is nonsymmetric
    expect(res.types.every((t) => t === MatrixType.GENERAL)).toBe(true);
  });

  it("particle–particle without damping: SPD in tension, SYMMETRIC in compression", () => {
    const res = checkJacobians(
      pp,
      (s) =>
        new SpringEffector(s, spring(0, [0, 0, 0], 1, [0, 0, 0], { damping: 0, restLength: 1.2 })),
      { configurations: 8, seed: 3 },
    );
    expectExact(res, false);
    // the helper verified each claim; both cases occur over the random configurations
    expect(res.types).toContain(MatrixType.SPD);
    expect(res.types).toContain(MatrixType.SYMMETRIC);
  });

  it("particle–rigid", () => {
    const res = checkJacobians(
      pr,
      (s) => new SpringEffector(s, spring(0, [0, 0, 0], 1, [0.3, -0.2, 0.5])),
      {
        configurations: 6,
      },
    );
    expectExact(res, true);
  });

  it("rigid–rigid", () => {
    const res = checkJacobians(
      rr,
      (s) => new SpringEffector(s, spring(0, [0.2, 0.1, -0.3], 1, [-0.4, 0.3, 0.2])),
      { configurations: 6 },
    );
    expectExact(res, true);
  });

  it("rigid–ground and rigid–fixed rigid body", () => {
    expectExact(
      checkJacobians(rg, (s) => new SpringEffector(s, spring(-1, [1, 2, 0], 0, [0.2, 0.5, -0.1]))),
      true,
    );
    expectExact(
      checkJacobians(
        rFixed,
        (s) => new SpringEffector(s, spring(1, [0.5, 0, 0.3], 0, [0.2, 0.5, -0.1])),
      ),
      true,
    );
  });

  it("zero rest length (rigid–rigid, particle–particle)", () => {
    const opts = { restLength: 0, damping: 0.7 };
    expectExact(
      checkJacobians(
        rr,
        (s) => new SpringEffector(s, spring(0, [0.2, 0, 0.1], 1, [0, -0.3, 0.2], opts)),
      ),
      true,
    );
    const res = checkJacobians(
      pp,
      (s) => new SpringEffector(s, spring(0, [0, 0, 0], 1, [0, 0, 0], opts)),
    );
    expectExact(res, true);
    expect(res.types.every((t) => t === MatrixType.SPD)).toBe(true);
  });

  it("same rigid body at both ends (internal spring): no net load, no Jacobian", () => {
    const res = checkJacobians(
      rg,
      (s) => new SpringEffector(s, spring(0, [0.5, 0, 0], 0, [0, 0.4, 0.1])),
    );
    for (const e of [...res.position, ...res.velocity]) expect(e).toBeLessThan(1e-6);
    // the four chain-rule terms cancel: the analytic Jacobian is zero up to roundoff
    for (const n of [...res.positionNorm, ...res.velocityNorm]) expect(n).toBeLessThan(1e-12);
  });
});

describe("point force Jacobians (FD check)", () => {
  it("rigid body, offset point, force and torque as time functions", () => {
    const res = checkJacobians(
      rr,
      (s) =>
        new PointForceEffector(s, {
          id: "pf",
          body: 1,
          point: [0.3, -0.5, 0.2],
          force: [
            3,
            { offset: 1, rate: 2 },
            { type: "sine", amplitude: 2, frequency: 1, phase: 0.3, offset: 0 },
          ],
          torque: [0.5, -1, 0.2],
        }),
    );
    expectExact(res, false);
    expect(res.types.every((t) => t === MatrixType.GENERAL)).toBe(true);
  });

  it("particle: no Jacobian", () => {
    const res = checkJacobians(
      pp,
      (s) => new PointForceEffector(s, { id: "pf", body: 0, point: [1, 0, 0], force: [1, 2, 3] }),
    );
    for (const e of [...res.position, ...res.velocity]) expect(e).toBe(0);
    expect(res.types.every((t) => t === MatrixType.SPD)).toBe(true);
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
      rr,
      (s) => new FrameSpringEffector(s, fs(0, [0.2, 0.1, 0], 1, [-0.3, 0, 0.2])),
      {
        configurations: 8,
      },
    );
    expectExact(res, true);
  });

  it("rigid–ground, ground–rigid and rigid–fixed", () => {
    expectExact(
      checkJacobians(rg, (s) => new FrameSpringEffector(s, fs(0, [0.2, 0, 0.3], -1, [0, 0, 1]))),
      true,
    );
    expectExact(
      checkJacobians(rg, (s) => new FrameSpringEffector(s, fs(-1, [0, 1, 0], 0, [0.1, 0.2, 0]))),
      true,
    );
    expectExact(
      checkJacobians(
        rFixed,
        (s) => new FrameSpringEffector(s, fs(1, [0, 0, 0.4], 0, [0.1, 0.2, 0])),
      ),
      true,
    );
  });

  it("particle–rigid (particle end has fixed axes)", () => {
    expectExact(
      checkJacobians(pr, (s) => new FrameSpringEffector(s, fs(0, [0, 0, 0], 1, [0.1, 0.2, 0]))),
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
    expectExact(res, true);
  });
});

describe("damper, gyroscopic and gravity Jacobians (FD check)", () => {
  it("damper on every dynamic body", () => {
    const res = checkJacobians(
      () =>
        system(
          particle("p", 1, [0, 0, 0]),
          rigid("r", 1, [1, 0, 0]),
          rigid("f", 1, [0, 0, 0], { fixed: true }),
        ),
      (s) => new DamperEffector(s, { id: "d", linear: 0.7, angular: 0.3 }),
    );
    for (const e of res.velocity) expect(e).toBeLessThan(1e-9);
    expect(Math.min(...res.velocityNorm)).toBeCloseTo(0.7, 12);
    expect(res.types.every((t) => t === MatrixType.SPD)).toBe(true);
  });

  it("damper on listed bodies", () => {
    const res = checkJacobians(
      rr,
      (s) => new DamperEffector(s, { id: "d", bodies: [1], linear: 2, angular: 0.5 }),
    );
    for (const e of res.velocity) expect(e).toBeLessThan(1e-9);
  });

  it("gyroscopic term (full inertia, rotated bodies)", () => {
    const res = checkJacobians(
      () =>
        system(
          rigid("r1", 1, [0, 0, 0]),
          particle("p", 1, [1, 0, 0]),
          rigid("r2", 3, [0, 1, 0], { inertia: [1, 0, 0, 0, 2, 0, 0, 0, 3] }),
        ),
      (s) => new GyroscopicEffector(s),
      { configurations: 6 },
    );
    expectExact(res, true);
    expect(res.types.every((t) => t === MatrixType.GENERAL)).toBe(true);
  });

  it("gyroscopic Jacobians follow the state: after setVelocity and a pose change they equal a fresh effector's", () => {
    // the effector keeps I_w ω and [ω]× I_w between its two Jacobians under stateVersion
    const make = () =>
      system(rigid("r", 3, [0, 1, 0], { inertia: [1, 0.2, 0, 0.2, 2, 0.1, 0, 0.1, 3] }));
    const sys = make();
    const rng = mulberry32(5);
    randomizeState(sys, rng);
    const eff = new GyroscopicEffector(sys);
    const before = [denseJacobian(sys, eff, "position"), denseJacobian(sys, eff, "velocity")];
    const u = new Float64Array(sys.numDofs);
    getVelocity(sys, u);
    for (let i = 3; i < 6; i++) u[i] = 2 * rng() - 1;
    setVelocity(sys, u);
    addPositionIncrement(sys, Float64Array.of(0, 0, 0, 0.3, -0.2, 0.1), 1);
    const fresh = new GyroscopicEffector(sys);
    for (const which of ["position", "velocity"] as const) {
      const a = denseJacobian(sys, eff, which);
      const b = denseJacobian(sys, fresh, which);
      expect(Array.from(a)).toEqual(Array.from(b));
    }
    // the state did change the Jacobians
    expect(denseJacobian(sys, eff, "velocity")).not.toEqual(before[1]);
  });

  it("gravity: no Jacobian, none needed", () => {
    const res = checkJacobians(rr, (s) => new GravityEffector(s, [0, 0, -9.81]));
    for (const e of [...res.position, ...res.velocity]) expect(e).toBe(0);
    for (const n of [...res.positionNorm, ...res.velocityNorm]) expect(n).toBe(0);
  });
});

describe("ParticleSpringSet Jacobians (FD check)", () => {
  const four = () =>
    system(
      particle("p", 1, [0, 0, 0]),
      particle("q", 2, [1, 0.2, 0]),
      particle("r", 0.5, [0.4, 1, 0.3]),
      particle("anchor", 1, [2, 0, 1], true),
    );
  const springs = [
    {
      bodyA: 0,
      pointA: [0, 0, 0],
      bodyB: 1,
      pointB: [0.1, 0, 0],
      stiffness: 40,
      damping: 1.5,
      restLength: 0.8,
    },
    {
      bodyA: 1,
      pointA: [0, 0, 0],
      bodyB: 2,
      pointB: [0, 0, 0],
      stiffness: 25,
      damping: 0.7,
      restLength: 0,
    },
    {
      bodyA: -1,
      pointA: [0, 0, 1],
      bodyB: 2,
      pointB: [0, 0, 0],
      stiffness: 10,
      damping: 0,
      restLength: 0.5,
    },
    {
      bodyA: 3,
      pointA: [0, 0, 0],
      bodyB: 0,
      pointB: [0, 0, 0],
      stiffness: 15,
      damping: 0.3,
      restLength: 1.1,
    },
  ];
  it("every block (particle–particle, zero length, ground, fixed body) matches finite differences", () => {
    const res = checkJacobians(four, (s) => new ParticleSpringSet(s, "springs", springs), {
      configurations: 6,
    });
    expectExact(res, true);
  });
  it("gives the same forces as one SpringEffector per spring", () => {
    const a = four();
    const b = four();
    const set = new ParticleSpringSet(a, "springs", springs);
    const singles = springs.map((s, i) => new SpringEffector(b, { id: `s${i}`, ...s }));
    a.force.fill(0);
    b.force.fill(0);
    set.applyForces(0);
    for (const s of singles) s.applyForces(0);
    for (let i = 0; i < a.force.length; i++) expect(a.force[i]).toBeCloseTo(b.force[i], 13);
    expect(set.potentialEnergy()).toBeCloseTo(
      singles.reduce((e, s) => e + s.potentialEnergy(), 0),
      13,
    );
  });
});
