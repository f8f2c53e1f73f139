/**
 * What each joint allows and forbids, checked on the motions themselves (independently
 * of the row formulas): at the model pose C = 0; every rigid motion of the pair as a
 * whole satisfies G u = 0; the joint's own relative freedom (rotation about the point,
 * about the axis, sliding along the axis, moving on the sphere) satisfies G u = 0; and
 * G has full row rank = the number of removed relative dofs. Plus build errors.
 */
import { describe, expect, it } from "vitest";
import type { JointSpec, MotorSpec } from "../../../schemas/model";
import { createConstraints } from "../../../src/engine/constraints/build";
import { ConstraintSet } from "../../../src/engine/constraints/constraint-set";
import { csrToDense } from "../../../src/engine/math/csr";
import {
  addPositionIncrement,
  PositionSnapshot,
  setPositionsFrom,
  updateDerived,
} from "../../../src/engine/model/body-system";
import { dependentRows } from "../../../src/engine/solvers/linear/sparse-qr";
import { mulberry32 } from "../../support/random";
import { randomBody, randVec, system } from "./helpers";

function cross(a: number[], b: number[]) {
  return [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]];
}

function worldPoint(sys: ReturnType<typeof system>, b: number, s: number[]) {
  const R = sys.rotation.subarray(9 * b, 9 * b + 9);
  return [0, 1, 2].map(
    (i) => sys.pos[3 * b + i] + R[3 * i] * s[0] + R[3 * i + 1] * s[1] + R[3 * i + 2] * s[2],
  );
}

function setup(type: JointSpec["type"], seed: number) {
  const r = mulberry32(seed);
  const sys = system([randomBody(r, "A", "rigid"), randomBody(r, "B", "rigid")]);
  const sa = randVec(r, 0.5);
  // b's point placed where a's point is (an assembled model pose)
  const p = worldPoint(sys, 0, sa);
  const R = sys.rotation.subarray(9, 18);
  const dp = [0, 1, 2].map((i) => p[i] - sys.pos[3 + i]);
  const sb = [0, 1, 2].map((i) => R[i] * dp[0] + R[3 + i] * dp[1] + R[6 + i] * dp[2]);
  const axisRaw = randVec(r);
  const nrm = Math.hypot(...axisRaw);
  const axis = axisRaw.map((x) => x / nrm);
  let joint: JointSpec;
  if (type === "distance") {
    // distance: b's point elsewhere
    joint = {
      id: "j",
      type,
      a: { body: "A", point: sa },
      b: { body: "B", point: [0.2, -0.1, 0.3] },
    };
  } else if (type === "revolute" || type === "prismatic")
    joint = {
      id: "j",
      type,
      a: { body: "A", point: sa },
      b: { body: "B", point: sb as [number, number, number] },
      axis: axis as [number, number, number],
    };
  else
    joint = {
      id: "j",
      type,
      a: { body: "A", point: sa },
      b: { body: "B", point: sb as [number, number, number] },
    };
  const set = new ConstraintSet(sys, createConstraints([joint], [], sys));
  return { sys, set, p, axis, r, joint };
}

/** u for: a common rigid motion V + Ω × (x − o), then b also gets the relative twist. */
function motion(
  sys: ReturnType<typeof system>,
  V: number[],
  W: number[],
  rel: { v: number[]; w: number[]; about: number[] } | null,
) {
  const u = new Float64Array(12);
  for (let b = 0; b < 2; b++) {
    const x = [0, 1, 2].map((i) => sys.pos[3 * b + i]);
    const v = cross(W, x).map((c, i) => c + V[i]);
    const w = [...W];
    if (b === 1 && rel) {
      const xr = x.map((xi, i) => xi - rel.about[i]);
      const vr = cross(rel.w, xr);
      for (let i = 0; i < 3; i++) {
        v[i] += vr[i] + rel.v[i];
        w[i] += rel.w[i];
      }
    }
    u.set(v, 6 * b);
    u.set(w, 6 * b + 3);
  }
  return u;
}

function gu(set: ConstraintSet, u: Float64Array) {
  set.updateJacobian(0);
  const out = new Float64Array(set.numRows);
  set.multiply(u, out);
  return Math.max(...Array.from(out, Math.abs));
}

describe("joint kinematics", () => {
  const rankOf = { spherical: 3, revolute: 5, prismatic: 5, fixed: 6, distance: 1 } as const;
  for (const type of Object.keys(rankOf) as (keyof typeof rankOf)[])
    it(`${type}: C = 0 in the model pose, rigid motions allowed, rank ${rankOf[type]}`, () => {
      for (let seed = 1; seed <= 5; seed++) {
        const { sys, set, p, axis, r } = setup(type, seed);
        const c = new Float64Array(set.numRows);
        set.residual(0, c);
        for (const x of c) expect(Math.abs(x)).toBeLessThan(1e-14);
        expect(set.numRows).toBe(rankOf[type]);
        const G = set.updateJacobian(0);
        expect(dependentRows(csrToDense(G), set.numRows, 12, 1e-8).rank).toBe(rankOf[type]);
        // Rigid motion of the pair
        expect(gu(set, motion(sys, randVec(r), randVec(r), null))).toBeLessThan(1e-13);
        const zero = [0, 0, 0];
        const rot = (w: number[]) => motion(sys, zero, zero, { v: zero, w, about: p });
        const slide = (v: number[]) => motion(sys, zero, zero, { v, w: zero, about: p });
        const someW = randVec(r);
        if (type === "spherical") expect(gu(set, rot(someW))).toBeLessThan(1e-13);
        if (type === "revolute") {
          expect(gu(set, rot(axis.map((x) => 2.3 * x)))).toBeLessThan(1e-13);
          expect(gu(set, rot(cross(axis, someW)))).toBeGreaterThan(1e-3);
          expect(gu(set, slide(axis))).toBeGreaterThan(1e-3);
        }
        if (type === "prismatic") {
          expect(gu(set, slide(axis.map((x) => -1.7 * x)))).toBeLessThan(1e-13);
          expect(gu(set, slide(cross(axis, someW)))).toBeGreaterThan(1e-3);
          expect(gu(set, rot(axis))).toBeGreaterThan(1e-3);
        }
        if (type === "fixed") {
          expect(gu(set, rot(someW))).toBeGreaterThan(1e-3);
          expect(gu(set, slide(someW))).toBeGreaterThan(1e-3);
        }
        if (type === "distance") {
          // b's point moving perpendicular to the link (b translating) keeps the distance
          const pb = worldPoint(sys, 1, [0.2, -0.1, 0.3]);
          const d = pb.map((x, i) => x - p[i]);
          expect(gu(set, slide(cross(d, someW)))).toBeLessThan(1e-13);
          expect(gu(set, slide(d))).toBeGreaterThan(1e-3);
        }
      }
    });

  it("residual and G follow every pose change (kinematics cached per poseVersion)", () => {
    for (const type of Object.keys(rankOf) as (keyof typeof rankOf)[]) {
      // two copies of one model: the first evaluated (cached) before the move, the other not
      const a = setup(type, 21);
      const b = setup(type, 21);
      const start = new PositionSnapshot(a.sys);
      const c = new Float64Array(a.set.numRows);
      a.set.residual(0, c);
      a.set.updateJacobian(0);
      const du = Float64Array.from({ length: 12 }, () => 0.2 * (2 * a.r() - 1));
      addPositionIncrement(a.sys, du, 1);
      addPositionIncrement(b.sys, du, 1);
      a.set.residual(0, c);
      const cb = new Float64Array(b.set.numRows);
      b.set.residual(0, cb);
      expect(Array.from(c)).toEqual(Array.from(cb));
      expect(Math.max(...Array.from(c, Math.abs))).toBeGreaterThan(1e-3);
      expect(Array.from(csrToDense(a.set.updateJacobian(0)))).toEqual(
        Array.from(csrToDense(b.set.updateJacobian(0))),
      );
      // back to the model pose through the snapshot path: C = 0 again
      setPositionsFrom(a.sys, start, new Float64Array(12), 1);
      a.set.residual(0, c);
      for (const x of c) expect(Math.abs(x)).toBeLessThan(1e-14);
    }
  });

  it("revolute motor angle: zero in the model pose, measures the relative rotation about the axis", () => {
    const { sys, joint, axis } = setup("revolute", 11);
    const motors: MotorSpec[] = [{ id: "m", joint: "j", angle: 0 }];
    const [, motor] = createConstraints([joint], motors, sys);
    const c = new Float64Array(1);
    motor.residual(0, c, 0);
    expect(Math.abs(c[0])).toBeLessThan(1e-14);
    // Turn b about the joint axis through the joint point by 0.7 rad: C = 0.7.
    const p = worldPoint(sys, 0, joint.a.point);
    const q = [Math.cos(0.35), ...axis.map((x) => Math.sin(0.35) * x)];
    const qb = Array.from(sys.quat.subarray(4, 8));
    const qn = [
      q[0] * qb[0] - q[1] * qb[1] - q[2] * qb[2] - q[3] * qb[3],
      q[0] * qb[1] + q[1] * qb[0] + q[2] * qb[3] - q[3] * qb[2],
      q[0] * qb[2] - q[1] * qb[3] + q[2] * qb[0] + q[3] * qb[1],
      q[0] * qb[3] + q[1] * qb[2] - q[2] * qb[1] + q[3] * qb[0],
    ];
    // x_b' = p + Rot (x_b − p)
    const xb = [0, 1, 2].map((i) => sys.pos[3 + i] - p[i]);
    const k = axis;
    const cth = Math.cos(0.7);
    const sth = Math.sin(0.7);
    const kx = cross(k, xb);
    const kd = k[0] * xb[0] + k[1] * xb[1] + k[2] * xb[2];
    for (let i = 0; i < 3; i++)
      sys.pos[3 + i] = p[i] + xb[i] * cth + kx[i] * sth + k[i] * kd * (1 - cth);
    sys.quat.set(qn, 4);
    updateDerived(sys);
    motor.residual(0, c, 0);
    expect(c[0]).toBeCloseTo(0.7, 12);
  });
});

describe("createConstraints errors name the joint and the body", () => {
  const r = mulberry32(5);
  const sys = system([
    randomBody(r, "A", "rigid"),
    randomBody(r, "P", "particle"),
    randomBody(r, "F", "fixed"),
  ]);
  const rev = (over: Partial<JointSpec> = {}) =>
    ({
      id: "hinge",
      type: "revolute",
      a: { body: "ground", point: [0, 0, 0] },
      b: { body: "A", point: [0, 0, 0] },
      axis: [0, 0, 1],
      ...over,
    }) as JointSpec;
  it("unknown body", () => {
    expect(() =>
      createConstraints([rev({ b: { body: "nope", point: [0, 0, 0] } })], [], sys),
    ).toThrow(/joint "hinge" refers to unknown body "nope"/);
  });
  it("a body joined to itself", () => {
    expect(() => createConstraints([rev({ a: { body: "A", point: [0, 0, 0] } })], [], sys)).toThrow(
      /joint "hinge" joins body "A" to itself/,
    );
  });
  it("no dynamic body", () => {
    expect(() => createConstraints([rev({ b: { body: "F", point: [0, 0, 0] } })], [], sys)).toThrow(
      /joint "hinge".*neither of which can move/,
    );
  });
  it("unknown joint, wrong joint type, angle drive on a particle", () => {
    expect(() => createConstraints([rev()], [{ id: "m", joint: "x", angle: 1 }], sys)).toThrow(
      /motor "m" refers to unknown joint "x"/,
    );
    expect(() => createConstraints([rev()], [{ id: "m", joint: "hinge", offset: 1 }], sys)).toThrow(
      /motor "m": offset drives a prismatic joint, "hinge" is revolute/,
    );
    expect(() =>
      createConstraints(
        [rev({ b: { body: "P", point: [0, 0, 0] } })],
        [{ id: "m", joint: "hinge", angle: 1 }],
        sys,
      ),
    ).toThrow(/motor "m".*particle/);
  });
  it("a distance link between coincident points needs a length", () => {
    const pa = Array.from(sys.pos.subarray(0, 3)) as [number, number, number];
    expect(() =>
      createConstraints(
        [
          {
            id: "d",
            type: "distance",
            a: { body: "ground", point: pa },
            b: { body: "A", point: [0, 0, 0] },
          },
        ],
        [],
        sys,
      ),
    ).toThrow(/joint "d": distance needs a positive length/);
  });
});
