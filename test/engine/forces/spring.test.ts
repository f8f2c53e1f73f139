/**
 * Axial spring: closed-form forces, energies, momentum balance and degenerate lengths; its
 * exact Jacobians against central finite differences over random configurations; its
 * explicit stability bound (addExplicitRows) above the highest modes of M^{-1/2} K M^{-1/2}
 * and M^{-1/2} D M^{-1/2}, and k/m_eff exactly for one body at rest.
 */
import { describe, expect, it } from "vitest";
import { SpringEffector } from "../../../src/engine/forces/spring";
import { clearForces } from "../../../src/engine/model/body-system";
import { MatrixType } from "../../../src/engine/solvers/linear/linear-solver";
import { mulberry32 } from "../../support/random";
import {
  checkExplicitBound,
  checkJacobians,
  denseJacobian,
  energyGradientErrors,
  expectExactJacobians,
  explicitBound,
  highestMode,
  particle,
  particlePair,
  particleRigid,
  randomizeState,
  rigid,
  rigidAlone,
  rigidAndFixed,
  rigidPair,
  system,
} from "./jacobian-check";

const S = Math.SQRT1_2;

describe("spring forces in closed form", () => {
  it("ground–particle: f = −(k (l − l0) + c l̇) û", () => {
    const sys = system(particle("p", 1, [3, 4, 0]));
    sys.vel.set([1, 0, 0]);
    const sp = new SpringEffector(sys, {
      id: "s",
      bodyA: -1,
      bodyB: 0,
      stiffness: 10,
      damping: 5,
      restLength: 2,
    });
    clearForces(sys);
    sp.applyForces(0);
    // l = 5, û = (0.6, 0.8, 0), l̇ = 0.6, s = 10·3 + 5·0.6 = 33
    expect(sys.force[0]).toBeCloseTo(-33 * 0.6, 12);
    expect(sys.force[1]).toBeCloseTo(-33 * 0.8, 12);
    expect(sys.force[2]).toBe(0);
    expect(sp.length).toBeCloseTo(5, 14);
    expect(sp.lengthRate).toBeCloseTo(0.6, 14);
    // ½ k (l − l0)² = ½·10·9
    expect(sp.potentialEnergy()).toBeCloseTo(45, 12);
  });

  it("rigid end: the point rotates with the body and the torque is r × f", () => {
    // body at the origin turned 90° about z: body point (1,0,0) is at world (0,1,0)
    const sys = system(rigid("r", 1, [0, 0, 0], { orientation: [S, 0, 0, S] }));
    const sp = new SpringEffector(sys, {
      id: "s",
      bodyA: -1,
      pointA: [2, 1, 0],
      bodyB: 0,
      pointB: [1, 0, 0],
      stiffness: 4,
      restLength: 1,
    });
    clearForces(sys);
    sp.applyForces(0);
    // d = (0,1,0) − (2,1,0) = (−2,0,0), l = 2, û = (−1,0,0): f_b = −4·1·û = (4,0,0)
    expect(Array.from(sys.force)).toEqual([4, 0, 0].map((v) => expect.closeTo(v, 12)));
    // τ = (0,1,0) × (4,0,0) = (0,0,−4)
    expect(Array.from(sys.torque)).toEqual([0, 0, -4].map((v) => expect.closeTo(v, 12)));
    expect(sp.potentialEnergy()).toBeCloseTo(2, 12);
  });

  it("particle–particle: equal and opposite", () => {
    const sys = system(particle("a", 1, [0, 0, 0]), particle("b", 1, [0, 0, 3]));
    const sp = new SpringEffector(sys, {
      id: "s",
      bodyA: 0,
      bodyB: 1,
      stiffness: 2,
      restLength: 1,
    });
    clearForces(sys);
    sp.applyForces(0);
    expect(Array.from(sys.force)).toEqual([0, 0, 4, 0, 0, -4]);
  });

  it("default rest length is the configuration's distance: no force there", () => {
    const sys = system(
      rigid("r", 1, [0, 0, 1], { orientation: [0.8, 0.6, 0, 0] }),
      particle("p", 1, [2, 1, 0]),
    );
    const sp = new SpringEffector(sys, {
      id: "s",
      bodyA: 0,
      pointA: [0.1, 0.2, 0.3],
      bodyB: 1,
      stiffness: 100,
    });
    clearForces(sys);
    sp.applyForces(0);
    for (const v of [...sys.force, ...sys.torque]) expect(Math.abs(v)).toBeLessThan(1e-12);
    expect(sp.potentialEnergy()).toBeLessThan(1e-28);
    expect(sp.restLength).toBeGreaterThan(1);
  });

  it("zero rest length is linear: f = −k d − c ḋ, smooth through l = 0", () => {
    const sys = system(particle("a", 1, [1, 2, 3]), particle("b", 1, [1.5, 2, 2]));
    sys.vel.set([0, 0, 0, 0.2, -0.4, 1]);
    const sp = new SpringEffector(sys, {
      id: "s",
      bodyA: 0,
      bodyB: 1,
      stiffness: 3,
      damping: 2,
      restLength: 0,
    });
    clearForces(sys);
    sp.applyForces(0);
    // d = (0.5, 0, −1), ḋ = (0.2, −0.4, 1)
    const fb = [-3 * 0.5 - 2 * 0.2, 2 * 0.4, 3 - 2];
    for (let k = 0; k < 3; k++) {
      expect(sys.force[3 + k]).toBeCloseTo(fb[k], 12);
      expect(sys.force[k]).toBeCloseTo(-fb[k], 12);
    }
    expect(sp.potentialEnergy()).toBeCloseTo(0.5 * 3 * 1.25, 12);
    // coincident points: no NaN, only the damping force remains
    sys.pos.set([1, 2, 3, 1, 2, 3]);
    clearForces(sys);
    sp.applyForces(0);
    expect(Array.from(sys.force.subarray(3))).toEqual(
      [-0.4, 0.8, -2].map((v) => expect.closeTo(v, 12)),
    );
    const k = denseJacobian(sys, sp, "position");
    expect(k.every(Number.isFinite)).toBe(true);
    expect(k[0]).toBe(-3); // ∂f_a/∂x_a = −k I
  });

  it("positive rest length with coincident points: zero force, finite Jacobians", () => {
    const sys = system(particle("a", 1, [1, 1, 1]), rigid("r", 1, [1, 1, 0]));
    sys.vel.set([0.3, 0, 0, 0, 1, 0]);
    const sp = new SpringEffector(sys, {
      id: "s",
      bodyA: 0,
      bodyB: 1,
      pointB: [0, 0, 1],
      stiffness: 3,
      damping: 1,
      restLength: 0.5,
    });
    clearForces(sys);
    sp.applyForces(0);
    for (const v of [...sys.force, ...sys.torque]) expect(v).toBe(0);
    expect(denseJacobian(sys, sp, "position").every(Number.isFinite)).toBe(true);
    expect(denseJacobian(sys, sp, "velocity").every(Number.isFinite)).toBe(true);
    expect(sp.potentialEnergy()).toBeCloseTo(0.5 * 3 * 0.25, 14);
  });
});

describe("spring momentum balance and energy", () => {
  const twoRigid = () =>
    system(
      rigid("r1", 1, [0, 0, 0]),
      rigid("r2", 2, [1, 0.5, 0.2], { orientation: [0.5, 0.5, 0.5, 0.5] }),
    );

  /** Σ f and Σ (x × f + τ) about the world origin. */
  function netLoad(sys: ReturnType<typeof twoRigid>) {
    const f = [0, 0, 0];
    const m = [0, 0, 0];
    for (let b = 0; b < sys.numBodies; b++) {
      const [x, y, z] = sys.pos.subarray(3 * b, 3 * b + 3);
      const [fx, fy, fz] = sys.force.subarray(3 * b, 3 * b + 3);
      f[0] += fx;
      f[1] += fy;
      f[2] += fz;
      m[0] += y * fz - z * fy + sys.torque[3 * b];
      m[1] += z * fx - x * fz + sys.torque[3 * b + 1];
      m[2] += x * fy - y * fx + sys.torque[3 * b + 2];
    }
    return { f, m };
  }

  /**
   * A spring-damper (k = 50, c = 3, rest length `restLength`) between points of the two
   * bodies at a random state: the spring, the system and the net load it applies.
   */
  function randomlyLoaded(rng: () => number, restLength: number) {
    const sys = twoRigid();
    const sp = new SpringEffector(sys, {
      id: "s",
      bodyA: 0,
      pointA: [0.3, -0.2, 0.1],
      bodyB: 1,
      pointB: [0, 0.4, -0.5],
      stiffness: 50,
      damping: 3,
      restLength,
    });
    randomizeState(sys, rng);
    clearForces(sys);
    sp.applyForces(0);
    return { sys, sp, ...netLoad(sys) };
  }

  it("axial spring-damper between rigid bodies: zero net force and moment", () => {
    const rng = mulberry32(11);
    for (let c = 0; c < 5; c++) {
      const { sys, f, m } = randomlyLoaded(rng, 0.7);
      const scale = Math.hypot(sys.force[0], sys.force[1], sys.force[2]);
      expect(scale).toBeGreaterThan(1);
      for (let k = 0; k < 3; k++) {
        expect(Math.abs(f[k])).toBeLessThan(1e-12 * scale);
        expect(Math.abs(m[k])).toBeLessThan(1e-12 * scale);
      }
    }
  });

  it("zero-length spring: zero net force; net moment −c d × ḋ from the isotropic damper", () => {
    const { sp, f, m } = randomlyLoaded(mulberry32(12), 0);
    const d = sp.ends.d;
    const dd = sp.ends.dd;
    const expected = [
      -3 * (d[1] * dd[2] - d[2] * dd[1]),
      -3 * (d[2] * dd[0] - d[0] * dd[2]),
      -3 * (d[0] * dd[1] - d[1] * dd[0]),
    ];
    for (let k = 0; k < 3; k++) {
      expect(Math.abs(f[k])).toBeLessThan(1e-12);
      expect(m[k]).toBeCloseTo(expected[k], 10);
    }
  });

  it("the elastic force is −∇V of ½ k (l − l0)² (rigid–rigid, zero length, rigid–ground)", () => {
    // the spring between ends (a, pa) and (b, pb), k = 20 N/m, rest length l0 (m)
    const between =
      (a: number, pa: number[], b: number, pb: number[], restLength = 0.6) =>
      (s: ReturnType<typeof twoRigid>) =>
        new SpringEffector(s, {
          id: "s",
          bodyA: a,
          pointA: pa,
          bodyB: b,
          pointB: pb,
          stiffness: 20,
          restLength,
        });
    const cases = [
      between(0, [0.3, 0, 0.1], 1, [0, 0.2, -0.4]),
      between(0, [0.3, 0, 0.1], 1, [0, 0.2, -0.4], 0),
      between(-1, [1, 1, 1], 1, [0, 0.2, -0.4]),
    ];
    for (const make of cases)
      for (const e of energyGradientErrors(twoRigid, make)) expect(e).toBeLessThan(1e-7);
  });
});

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
      particlePair,
      (s) => new SpringEffector(s, spring(0, [0.1, 0, 0], 1, [0, 0.2, 0])),
      {
        configurations: 6,
      },
    );
    expectExactJacobians(res, true);
    // with damping and l0 > 0 the position Jacobian is nonsymmetric
    expect(res.types.every((t) => t === MatrixType.GENERAL)).toBe(true);
  });

  it("particle–particle without damping: SPD in tension, SYMMETRIC in compression", () => {
    const res = checkJacobians(
      particlePair,
      (s) =>
        new SpringEffector(s, spring(0, [0, 0, 0], 1, [0, 0, 0], { damping: 0, restLength: 1.2 })),
      { configurations: 8, seed: 3 },
    );
    expectExactJacobians(res, false);
    // the helper verified each claim; both cases occur over the random configurations
    expect(res.types).toContain(MatrixType.SPD);
    expect(res.types).toContain(MatrixType.SYMMETRIC);
  });

  it("particle–rigid", () => {
    const res = checkJacobians(
      particleRigid,
      (s) => new SpringEffector(s, spring(0, [0, 0, 0], 1, [0.3, -0.2, 0.5])),
      {
        configurations: 6,
      },
    );
    expectExactJacobians(res, true);
  });

  it("rigid–rigid", () => {
    const res = checkJacobians(
      rigidPair,
      (s) => new SpringEffector(s, spring(0, [0.2, 0.1, -0.3], 1, [-0.4, 0.3, 0.2])),
      { configurations: 6 },
    );
    expectExactJacobians(res, true);
  });

  it("rigid–ground and rigid–fixed rigid body", () => {
    expectExactJacobians(
      checkJacobians(
        rigidAlone,
        (s) => new SpringEffector(s, spring(-1, [1, 2, 0], 0, [0.2, 0.5, -0.1])),
      ),
      true,
    );
    expectExactJacobians(
      checkJacobians(
        rigidAndFixed,
        (s) => new SpringEffector(s, spring(1, [0.5, 0, 0.3], 0, [0.2, 0.5, -0.1])),
      ),
      true,
    );
  });

  it("zero rest length (rigid–rigid, particle–particle)", () => {
    const opts = { restLength: 0, damping: 0.7 };
    expectExactJacobians(
      checkJacobians(
        rigidPair,
        (s) => new SpringEffector(s, spring(0, [0.2, 0, 0.1], 1, [0, -0.3, 0.2], opts)),
      ),
      true,
    );
    const res = checkJacobians(
      particlePair,
      (s) => new SpringEffector(s, spring(0, [0, 0, 0], 1, [0, 0, 0], opts)),
    );
    expectExactJacobians(res, true);
    expect(res.types.every((t) => t === MatrixType.SPD)).toBe(true);
  });

  it("same rigid body at both ends (internal spring): no net load, no Jacobian", () => {
    const res = checkJacobians(
      rigidAlone,
      (s) => new SpringEffector(s, spring(0, [0.5, 0, 0], 0, [0, 0.4, 0.1])),
    );
    for (const e of [...res.position, ...res.velocity]) expect(e).toBeLessThan(1e-6);
    // the four chain-rule terms cancel: the analytic Jacobian is zero up to roundoff
    for (const n of [...res.positionNorm, ...res.velocityNorm]) expect(n).toBeLessThan(1e-12);
  });
});

describe("spring addExplicitRows (symplectic Euler's stability bound)", () => {
  const spring = (a: number, pa: number[], b: number, pb: number[], restLength?: number) => ({
    id: "s",
    bodyA: a,
    pointA: pa,
    bodyB: b,
    pointB: pb,
    stiffness: 30,
    damping: 0.8,
    restLength,
  });

  it("bounds the stiffest mode and the damping rate with rigid ends, at rest, stretched, compressed, moving", () => {
    const atRest = [
      checkExplicitBound(
        rigidPair,
        (s) => new SpringEffector(s, spring(0, [0.2, 0.1, 0], 1, [-0.3, 0, 0.2])),
      ),
      checkExplicitBound(
        rigidAlone,
        (s) => new SpringEffector(s, spring(-1, [0, 0, 2], 0, [0.2, 0, 0.3])),
      ),
      checkExplicitBound(
        particleRigid,
        (s) => new SpringEffector(s, spring(0, [0, 0, 0], 1, [0.1, 0.2, 0])),
      ),
    ];
    const loaded = [
      checkExplicitBound(
        rigidPair,
        (s) => new SpringEffector(s, spring(0, [0.2, 0.1, 0], 1, [-0.3, 0, 0.2], 0.7)),
      ),
      checkExplicitBound(
        rigidPair,
        (s) => new SpringEffector(s, spring(0, [0.2, 0.1, 0], 1, [-0.3, 0, 0.2], 2.5)),
      ),
      checkExplicitBound(
        rigidAlone,
        (s) => new SpringEffector(s, spring(-1, [0, 0, 2], 0, [0.2, 0, 0.3], 0.5)),
      ),
      checkExplicitBound(
        rigidAndFixed,
        (s) => new SpringEffector(s, spring(1, [0, 0, 0.4], 0, [0.1, 0.2, 0], 0)),
      ),
    ];
    // at rest (moving) the bound is near the modes (measured 1.30–1.56 times them, damping
    // 1.20–1.35); stretched or compressed by about its length (tension ~ k l), the geometric
    // terms' norms add where the modes' partly cancel (2.4–6.4)
    for (const [stiff, damp] of atRest) {
      expect(stiff).toBeLessThan(1.7);
      expect(damp).toBeLessThan(1.5);
    }
    for (const [stiff, damp] of loaded) {
      expect(stiff).toBeLessThan(7);
      expect(damp).toBeLessThan(1.5);
    }
  });

  it("bounds k/m_eff, 1/m_eff = 1/m + (r × û)ᵀ I⁻¹ (r × û), for a body on a spring to the ground at rest", () => {
    // the full inertia of rigid(): its inverse by Cramer's rule
    const sys = system(rigid("r", 2, [0, 0, 0]));
    const p = [0.3, 0.1, -0.2];
    const anchor = [1, 0.5, 0.4];
    const sp = new SpringEffector(sys, { ...spring(-1, anchor, 0, p), damping: 0.8 });
    const d = p.map((x, i) => x - anchor[i]);
    const l = Math.hypot(...d);
    const u = d.map((x) => x / l);
    const c = [p[1] * u[2] - p[2] * u[1], p[2] * u[0] - p[0] * u[2], p[0] * u[1] - p[1] * u[0]];
    const I = Array.from(sys.inertiaWorld.subarray(0, 9));
    const det =
      I[0] * (I[4] * I[8] - I[5] * I[7]) -
      I[1] * (I[3] * I[8] - I[5] * I[6]) +
      I[2] * (I[3] * I[7] - I[4] * I[6]);
    const adj = [
      I[4] * I[8] - I[5] * I[7],
      I[2] * I[7] - I[1] * I[8],
      I[1] * I[5] - I[2] * I[4],
      I[5] * I[6] - I[3] * I[8],
      I[0] * I[8] - I[2] * I[6],
      I[2] * I[3] - I[0] * I[5],
      I[3] * I[7] - I[4] * I[6],
      I[1] * I[6] - I[0] * I[7],
      I[0] * I[4] - I[1] * I[3],
    ];
    let quad = 0;
    for (let i = 0; i < 3; i++)
      for (let j = 0; j < 3; j++) quad += (c[i] * adj[3 * i + j] * c[j]) / det;
    const inverseMass = 1 / 2 + quad;
    // the one mode: k/m_eff
    expect(highestMode(sys, sp, "position") / (30 * inverseMass) - 1).toBeCloseTo(0, 10);
    expect(highestMode(sys, sp, "velocity") / (0.8 * inverseMass) - 1).toBeCloseTo(0, 10);
    // the bound by translation and rotation rows, max(a, β) (a + β) against a² + β² (a² =
    // 1/m, β² = quad): here 1.079 times it, at most 1.21
    const a = Math.sqrt(1 / 2);
    const beta = Math.sqrt(quad);
    const rows = Math.max(a, beta) * (a + beta);
    expect(rows / inverseMass).toBeGreaterThan(1.07);
    const [omega2, gamma] = explicitBound(sys, sp);
    expect(omega2 / (30 * rows) - 1).toBeCloseTo(0, 12);
    expect(gamma / (0.8 * rows) - 1).toBeCloseTo(0, 12);
  });

  it("is k/m exactly for a spring through the centre of mass", () => {
    const sys = system(rigid("r", 2, [0, 0, 0]));
    const sp = new SpringEffector(sys, spring(-1, [0.6, 0.2, -0.4], 0, [0.3, 0.1, -0.2]));
    expect(explicitBound(sys, sp)[0]).toBeCloseTo(30 / 2, 12);
    expect(highestMode(sys, sp, "position")).toBeCloseTo(30 / 2, 10);
  });
});
