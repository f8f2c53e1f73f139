/**
 * World inertias R I Rᵀ and their inverses after updateDerived, isotropic bodies included;
 * positions set from a snapshot ⊕ an increment; a move of the positions alone turning the
 * angular velocities along.
 */
import { describe, expect, it } from "vitest";
import {
  addPositionIncrement,
  BodySystem,
  kineticEnergy,
  movePositions,
  PositionSnapshot,
  setPositionsFrom,
} from "../../../src/engine/model/body-system";
import { bodyInit } from "../../support/body-init";

describe("body system world inertias", () => {
  it("R I Rᵀ for an anisotropic body, c·I for an isotropic one, at every orientation", () => {
    const c = Math.SQRT1_2;
    const sys = new BodySystem([
      bodyInit("box", "rigid", {
        inertia: [1, 0, 0, 0, 2, 0, 0, 0, 3],
        orientation: [c, 0, 0, c], // 90° about z: Ixx and Iyy swap
      }),
      bodyInit("ball", "rigid", {
        inertia: [0.4, 0, 0, 0, 0.4, 0, 0, 0, 0.4],
        position: [1, 0, 0],
        orientation: [c, c, 0, 0],
      }),
      // not on principal axes: the general R I Rᵀ and its inverse
      bodyInit("plate", "rigid", {
        inertia: [2, 0.3, 0, 0.3, 1, 0.1, 0, 0.1, 3],
        position: [2, 0, 0],
      }),
    ]);
    expect(Array.from(sys.isotropic)).toEqual([0, 1, 0]);
    const box = Array.from(sys.inertiaWorld.subarray(0, 9));
    [2, 0, 0, 0, 1, 0, 0, 0, 3].forEach((v, k) => {
      expect(box[k]).toBeCloseTo(v, 14);
    });
    const boxInv = Array.from(sys.inertiaWorldInv.subarray(0, 9));
    [0.5, 0, 0, 0, 1, 0, 0, 0, 1 / 3].forEach((v, k) => {
      expect(boxInv[k]).toBeCloseTo(v, 14);
    });
    // turn both by a rotation vector (0.3, −0.2, 0.7) rad: the ball's stays 0.4 I
    const turn = [0, 0, 0, 0.3, -0.2, 0.7];
    const du = Float64Array.from([...turn, ...turn, ...turn]);
    addPositionIncrement(sys, du, 1);
    const R = sys.rotation;
    const plate = [2, 0.3, 0, 0.3, 1, 0.1, 0, 0.1, 3];
    for (let i = 0; i < 3; i++)
      for (let j = 0; j < 3; j++) {
        let rir = 0;
        let rpr = 0;
        for (let k = 0; k < 3; k++) {
          rir += R[3 * i + k] * [1, 2, 3][k] * R[3 * j + k];
          for (let l = 0; l < 3; l++)
            rpr += R[18 + 3 * i + k] * plate[3 * k + l] * R[18 + 3 * j + l];
        }
        expect(sys.inertiaWorld[3 * i + j]).toBeCloseTo(rir, 13);
        expect(sys.inertiaWorld[9 + 3 * i + j]).toBe(i === j ? 0.4 : 0);
        expect(sys.inertiaWorldInv[9 + 3 * i + j]).toBe(i === j ? 1 / 0.4 : 0);
        expect(sys.inertiaWorld[18 + 3 * i + j]).toBeCloseTo(rpr, 13);
      }
    // the inverses: I_w I_w⁻¹ = 1 for the box and the plate
    for (const o of [0, 18])
      for (let i = 0; i < 3; i++)
        for (let j = 0; j < 3; j++) {
          let p = 0;
          for (let k = 0; k < 3; k++)
            p += sys.inertiaWorld[o + 3 * i + k] * sys.inertiaWorldInv[o + 3 * k + j];
          expect(p).toBeCloseTo(i === j ? 1 : 0, 13);
        }
  });
});

describe("setPositionsFrom", () => {
  it("x = x₀ + s δx and q = exp(s δθ / 2) ⊗ q₀ from the snapshot, whatever the current state", () => {
    const sys = new BodySystem([
      bodyInit("rigid", "rigid", {
        mass: 2,
        inertia: [1, 0, 0, 0, 2, 0, 0, 0, 3],
        position: [0.1, -0.2, 0.3],
        orientation: [0.5, 0.5, 0.5, 0.5],
      }),
      bodyInit("particle", "particle", {
        position: [1, 2, 3],
      }),
    ]);
    const start = new PositionSnapshot(sys);
    // move away first: the result must not depend on the current positions
    addPositionIncrement(sys, Float64Array.from([5, 5, 5, 1, 2, 3, 7, 7, 7]), 1);
    const du = Float64Array.from([0.2, 0.4, -0.6, 0.3, -0.2, 0.7, -1, 0.5, 0.25]);
    const s = 0.5;
    setPositionsFrom(sys, start, du, s);
    const expectedPos = [0.1 + 0.1, -0.2 + 0.2, 0.3 - 0.3, 1 - 0.5, 2 + 0.25, 3 + 0.125];
    expectedPos.forEach((v, k) => {
      expect(sys.pos[k]).toBeCloseTo(v, 15);
    });
    // exp(θ/2) for θ = s·(0.3, −0.2, 0.7), then the Hamilton product with q₀
    const t = [0.15, -0.1, 0.35];
    const angle = Math.sqrt(t[0] ** 2 + t[1] ** 2 + t[2] ** 2);
    const k = Math.sin(angle / 2) / angle;
    const [aw, ax, ay, az] = [Math.cos(angle / 2), k * t[0], k * t[1], k * t[2]];
    const [bw, bx, by, bz] = [0.5, 0.5, 0.5, 0.5];
    const q = [
      aw * bw - ax * bx - ay * by - az * bz,
      aw * bx + ax * bw + ay * bz - az * by,
      aw * by - ax * bz + ay * bw + az * bx,
      aw * bz + ax * by - ay * bx + az * bw,
    ];
    q.forEach((v, i) => {
      expect(sys.quat[i]).toBeCloseTo(v, 14);
    });
    expect(Array.from(sys.quat.subarray(4, 8))).toEqual([1, 0, 0, 0]);
  });
});

describe("movePositions", () => {
  it("turns each rigid body's ω with the body: ω ← exp(s δθ) ω, the kinetic energy kept", () => {
    const sys = new BodySystem([
      bodyInit("box", "rigid", {
        mass: 2,
        inertia: [1, 0, 0, 0, 2, 0, 0, 0, 3],
        angularVelocity: [40, 0, 10],
        velocity: [1, 2, 3],
      }),
      bodyInit("particle", "particle", { velocity: [4, 5, 6] }),
    ]);
    const kinetic = kineticEnergy(sys);
    // a turn of α = 0.2 rad about y (s = 0.5 of 0.4): ω's x and z turn, y stays
    const alpha = 0.2;
    const du = Float64Array.from([0.1, 0, 0, 0, 0.4, 0, 0, 0, 0.3]);
    movePositions(sys, du, 0.5);
    const [c, s] = [Math.cos(alpha), Math.sin(alpha)];
    const expected = [40 * c + 10 * s, 0, -40 * s + 10 * c];
    expected.forEach((w, k) => {
      expect(sys.omega[k]).toBeCloseTo(w, 13);
    });
    // ½ ωᵀ I_world ω unchanged, the body-frame ω (40, 0, 10) kept
    expect(kineticEnergy(sys)).toBeCloseTo(kinetic, 12);
    // positions as addPositionIncrement, linear velocities untouched
    expect(sys.pos[0]).toBeCloseTo(0.05, 15);
    expect(sys.pos[5]).toBeCloseTo(0.15, 15);
    expect(Array.from(sys.vel)).toEqual([1, 2, 3, 4, 5, 6]);
    // the same turn by addPositionIncrement holds ω in the world and changes the energy
    const held = new BodySystem([
      bodyInit("box", "rigid", {
        mass: 2,
        inertia: [1, 0, 0, 0, 2, 0, 0, 0, 3],
        angularVelocity: [40, 0, 10],
      }),
    ]);
    const before = kineticEnergy(held);
    addPositionIncrement(held, Float64Array.from([0, 0, 0, 0, 0.2, 0]), 1);
    expect(Math.abs(kineticEnergy(held) - before)).toBeGreaterThan(10);
  });
});
