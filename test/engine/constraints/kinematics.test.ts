/**
 * The pair kinematics and row primitives of kinematics.ts, directly:
 * - rotate / rotateInverse are R s and Rᵀ s (R from the test's own quaternion formula),
 *   at the offsets given, and undo each other;
 * - axisFrame is right-handed orthonormal (n × u = w) with n the normalized axis, on both
 *   sides of its |n_x| = 0.9 switch, and refuses a zero axis;
 * - PairKinematics.update gives p = x + R s, d = p_b − p_a, p_b − x_a, ground as the world;
 *   updateVelocities gives ḋ (against the central difference of d along the motion) and
 *   the centripetal terms ω × (ω × r);
 * - dotRate is d(e·f)/dt for vectors fixed in a and b (central difference);
 * - angleJacobian on the revolute manifold reduces to [0, −n_a] (a), [0, n_a] (b).
 */
import { describe, expect, it } from "vitest";
import {
  angleJacobian,
  axisFrame,
  dotRate,
  PairKinematics,
  rotate,
  rotateInverse,
} from "../../../src/engine/constraints/kinematics";
import {
  addPositionIncrement,
  getVelocity,
  PositionSnapshot,
  restorePositions,
} from "../../../src/engine/model/body-system";
import { rotationMatrix } from "../../support/quat";
import { mulberry32 } from "../../support/random";
import { randomBody, randQuat, randVec, system } from "./helpers";
import { cross } from "./joint-checks";

const dot = (a: ArrayLike<number>, b: ArrayLike<number>) => a[0] * b[0] + a[1] * b[1] + a[2] * b[2];

describe("rotate, rotateInverse", () => {
  it("are R s and Rᵀ s at the given offsets, and undo each other", () => {
    const r = mulberry32(7);
    for (let trial = 0; trial < 5; trial++) {
      const Rm = rotationMatrix(randQuat(r));
      const R = Float64Array.from([0, 0, ...Rm.flat()]); // at offset 2
      const s = Float64Array.from([9, ...randVec(r)]); // at offset 1
      const out = new Float64Array(5);
      rotate(out, R, s, 2, 1, 2);
      for (let i = 0; i < 3; i++) expect(out[2 + i]).toBeCloseTo(dot(Rm[i], s.subarray(1)), 14);
      const back = new Float64Array(3);
      rotateInverse(back, R, out, 0, 2, 2);
      for (let i = 0; i < 3; i++) expect(back[i]).toBeCloseTo(s[1 + i], 14);
      expect(out[0] + out[1]).toBe(0);
    }
  });
});

describe("axisFrame", () => {
  it("a right-handed orthonormal frame with n = axis/|axis|, both sides of |n_x| = 0.9", () => {
    const r = mulberry32(8);
    const axes = [
      [5, 0.1, -0.2],
      [0, 0, 3],
      [-1, 0, 0],
      ...Array.from({ length: 6 }, () => randVec(r)),
    ];
    const f = new Float64Array(9);
    for (const axis of axes) {
      axisFrame(axis, f);
      const len = Math.hypot(...axis);
      const [n, u, w] = [f.subarray(0, 3), f.subarray(3, 6), f.subarray(6, 9)];
      for (let i = 0; i < 3; i++) expect(n[i]).toBeCloseTo(axis[i] / len, 15);
      for (const [a, b, want] of [
        [n, n, 1],
        [u, u, 1],
        [w, w, 1],
        [n, u, 0],
        [n, w, 0],
        [u, w, 0],
      ] as const)
        expect(dot(a, b)).toBeCloseTo(want, 14);
      const nxu = cross(n, u);
      for (let i = 0; i < 3; i++) expect(nxu[i]).toBeCloseTo(w[i], 14);
    }
    expect(() => axisFrame([0, 0, 0], f)).toThrow(/axis must be a non-zero vector/);
  });
});

describe("PairKinematics", () => {
  const r = mulberry32(9);
  const sys = system([randomBody(r, "A", "rigid"), randomBody(r, "B", "rigid")]);
  const sa = Float64Array.from(randVec(r, 0.5));
  const sb = Float64Array.from(randVec(r, 0.5));

  it("update: p = x + R s, d = p_b − p_a, p_b − x_a; ground is the world frame", () => {
    const k = new PairKinematics();
    k.update(sys, 0, sa, 1, sb);
    const x = (b: number) => Array.from(sys.pos.subarray(3 * b, 3 * b + 3));
    const R = (b: number) => rotationMatrix(Array.from(sys.quat.subarray(4 * b, 4 * b + 4)));
    const pa = x(0).map((xi, i) => xi + dot(R(0)[i], sa));
    const pb = x(1).map((xi, i) => xi + dot(R(1)[i], sb));
    for (let i = 0; i < 3; i++) {
      expect(k.pa[i]).toBeCloseTo(pa[i], 14);
      expect(k.pb[i]).toBeCloseTo(pb[i], 14);
      expect(k.d[i]).toBeCloseTo(pb[i] - pa[i], 14);
      expect(k.pbxa[i]).toBeCloseTo(pb[i] - x(0)[i], 14);
    }
    const g = new PairKinematics();
    g.update(sys, -1, sa, 1, sb);
    for (let i = 0; i < 3; i++) {
      expect(g.xa[i]).toBe(0);
      expect(g.pa[i]).toBe(sa[i]);
      expect(g.d[i]).toBeCloseTo(pb[i] - sa[i], 14);
    }
  });

  it("updateVelocities: ḋ is the rate of d along the motion; c = ω × (ω × r)", () => {
    const k = new PairKinematics();
    k.update(sys, 0, sa, 1, sb);
    k.updateVelocities(sys, 0, 1);
    const u = new Float64Array(12);
    getVelocity(sys, u);
    const snap = new PositionSnapshot(sys);
    const dAt = (tau: number) => {
      addPositionIncrement(sys, u, tau);
      const m = new PairKinematics();
      m.update(sys, 0, sa, 1, sb);
      restorePositions(sys, snap);
      return Array.from(m.d);
    };
    const h = 1e-5;
    const [dp, dm] = [dAt(h), dAt(-h)];
    for (let i = 0; i < 3; i++) expect(k.dd[i]).toBeCloseTo((dp[i] - dm[i]) / (2 * h), 8);
    const wa = Array.from(sys.omega.subarray(0, 3));
    const cA = cross(wa, cross(wa, k.ra));
    for (let i = 0; i < 3; i++) expect(k.ca[i]).toBeCloseTo(cA[i], 13);
  });

  it("dotRate: d(e·f)/dt for e fixed in a and f fixed in b", () => {
    const e0 = Float64Array.from(randVec(r));
    const f0 = Float64Array.from(randVec(r));
    const ef = () => {
      const e = new Float64Array(3);
      const f = new Float64Array(3);
      rotate(e, sys.rotation, e0, 0, 0, 0);
      rotate(f, sys.rotation, f0, 0, 0, 9);
      return { e, f };
    };
    const k = new PairKinematics();
    k.update(sys, 0, sa, 1, sb);
    k.updateVelocities(sys, 0, 1);
    const { e, f } = ef();
    const rate = dotRate(k, e, 0, f, 0);
    const u = new Float64Array(12);
    getVelocity(sys, u);
    const snap = new PositionSnapshot(sys);
    const at = (tau: number) => {
      addPositionIncrement(sys, u, tau);
      const v = ef();
      restorePositions(sys, snap);
      return dot(v.e, v.f);
    };
    const h = 1e-5;
    expect(rate).toBeCloseTo((at(h) - at(-h)) / (2 * h), 8);
  });
});

describe("angleJacobian", () => {
  it("on the manifold (u_b ⊥ n_a) the row is [0, −n_a] for a and [0, n_a] for b: φ̇ = n·(ω_b − ω_a)", () => {
    const f = new Float64Array(9);
    axisFrame([1, 2, -2], f);
    const n = f.subarray(0, 3);
    const ua = f.subarray(3, 6);
    const wa = f.subarray(6, 9);
    // b turned by 0.8 rad about n: u_b = cos 0.8 u_a + sin 0.8 w_a
    const ub = Float64Array.from([0, 1, 2], (i) => Math.cos(0.8) * ua[i] + Math.sin(0.8) * wa[i]);
    const jA = new Float64Array(6);
    const jB = new Float64Array(6);
    angleJacobian(ua, wa, ub, jA, jB, 0);
    for (let i = 0; i < 3; i++) {
      expect(jA[i]).toBe(0);
      expect(jB[i]).toBe(0);
      expect(jA[3 + i]).toBeCloseTo(-n[i], 14);
      expect(jB[3 + i]).toBeCloseTo(n[i], 14);
    }
  });
});
