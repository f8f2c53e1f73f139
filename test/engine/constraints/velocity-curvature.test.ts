/**
 * The velocity rows' curvature (constraint-set.ts velocityRows, kinematics.ts
 * addPointRowsCurvature): G̃ = G + s ∂(G u)/∂q at fixed velocities u, the Jacobian a Newton
 * step needs of velocity-level rows G(x) v + Ct = 0 held at the step's end (s = c_x/c_v).
 * Checked against central finite differences of G u computed from the constraint's own
 * Jacobian, each rigid body turned by ±ε about each world axis with its world velocities
 * held; the point rows get exactly that term, the other rows (alignments) nothing.
 */
import { describe, expect, it } from "vitest";
import type { Constraint } from "../../../src/engine/constraints/constraint";
import { ConstraintSet } from "../../../src/engine/constraints/constraint-set";
import { FixedJoint } from "../../../src/engine/constraints/fixed";
import { PrismaticJoint } from "../../../src/engine/constraints/prismatic";
import { RevoluteJoint } from "../../../src/engine/constraints/revolute";
import { SphericalJoint } from "../../../src/engine/constraints/spherical";
import { BodyKind, type BodySystem, getVelocity } from "../../../src/engine/model/body-system";
import { mulberry32 } from "../../support/random";
import { type Kind, randomBody, randVec, system, turn } from "./helpers";

const rand = mulberry32(1618);

type Make = (sys: BodySystem, a: number, b: number) => Constraint;

const JOINTS: [string, Make, number][] = [
  [
    "spherical",
    (sys, a, b) =>
      new SphericalJoint(
        "j",
        sys,
        { body: a, point: randVec(rand, 0.3) },
        { body: b, point: randVec(rand, 0.3) },
      ),
    3,
  ],
  [
    "revolute",
    (sys, a, b) =>
      new RevoluteJoint(
        "j",
        sys,
        { body: a, point: randVec(rand, 0.3) },
        { body: b, point: randVec(rand, 0.3) },
        [0, 0, 1],
      ),
    3,
  ],
  [
    "fixed",
    (sys, a, b) =>
      new FixedJoint(
        "j",
        sys,
        { body: a, point: randVec(rand, 0.3) },
        { body: b, point: randVec(rand, 0.3) },
      ),
    3,
  ],
];

/** G u at the current configuration (u the bodies' velocities), one entry per row. */
function rowVelocities(set: ConstraintSet, u: Float64Array): Float64Array {
  set.updateJacobian(0);
  const out = new Float64Array(set.numRows);
  set.multiply(u, out);
  return out;
}

/**
 * The largest |(G̃ − G)/s e − ∂(G u)/∂q e| over the point rows and every rotation dof e of
 * the rigid bodies (central differences, ε = 1e-6 rad), and the largest |(G̃ − G) e| over
 * the other rows (which get no term).
 */
function mismatch(
  sys: BodySystem,
  c: Constraint,
  pointRows: number,
): { point: number; other: number } {
  const set = new ConstraintSet(sys, [c]);
  const s = 0.7;
  set.updateJacobian(0);
  const g = Float64Array.from(set.G.values);
  const rows = new Float64Array(g.length);
  set.velocityRows(s, rows);
  const curvature = Float64Array.from(rows, (x, k) => (x - g[k]) / s);
  const u = new Float64Array(sys.numDofs);
  getVelocity(sys, u);
  const eps = 1e-6;
  let point = 0;
  let other = 0;
  for (let b = 0; b < sys.numBodies; b++) {
    if (sys.kind[b] !== BodyKind.RIGID || sys.dofOffset[b] < 0) continue;
    for (let j = 0; j < 3; j++) {
      const d = [0, 0, 0];
      d[j] = eps;
      turn(sys, b, d);
      const plus = rowVelocities(set, u);
      turn(sys, b, [-2 * d[0], -2 * d[1], -2 * d[2]]);
      const minus = rowVelocities(set, u);
      turn(sys, b, d);
      const e = new Float64Array(sys.numDofs);
      e[sys.dofOffset[b] + 3 + j] = 1;
      const predicted = new Float64Array(set.numRows);
      set.multiply(e, predicted, curvature);
      for (let r = 0; r < set.numRows; r++) {
        if (r < pointRows)
          point = Math.max(point, Math.abs(predicted[r] - (plus[r] - minus[r]) / (2 * eps)));
        else other = Math.max(other, Math.abs(predicted[r]));
      }
    }
  }
  return { point, other };
}

describe("velocity rows' curvature against finite differences", () => {
  const pairs: [Kind | "ground", Kind][] = [
    ["rigid", "rigid"],
    ["ground", "rigid"],
    ["particle", "rigid"],
    ["rigid", "particle"],
  ];
  for (const [name, make, pointRows] of JOINTS)
    for (const [ka, kb] of pairs)
      it(`${name}, ${ka}–${kb}: 10 random poses and velocities, the point rows to 1e-7 of |ω||r|, nothing elsewhere`, () => {
        for (let trial = 0; trial < 10; trial++) {
          const bodies = [
            randomBody(rand, "a", ka === "ground" ? "rigid" : ka),
            randomBody(rand, "b", kb),
          ];
          const sys = system(bodies);
          const c = make(sys, ka === "ground" ? -1 : 0, 1);
          const { point, other } = mismatch(sys, c, pointRows);
          // |ω| ≤ 3√3 rad/s, |r| ≤ 0.3√3 + the bodies' offsets: the term is O(1) m/s per rad
          expect(point).toBeLessThan(1e-7);
          expect(other).toBe(0);
        }
      });

  it("a joint without point rows (prismatic) adds nothing: G̃ = G", () => {
    const sys = system([randomBody(rand, "a", "rigid"), randomBody(rand, "b", "rigid")]);
    const set = new ConstraintSet(sys, [
      new PrismaticJoint(
        "p",
        sys,
        { body: 0, point: [0, 0, 0] },
        { body: 1, point: [0, 0, 0] },
        [1, 0, 0],
      ),
    ]);
    expect(set.hasVelocityCurvature).toBe(false);
    set.updateJacobian(0);
    const rows = new Float64Array(set.G.values.length);
    set.velocityRows(0.7, rows);
    expect(Array.from(rows)).toEqual(Array.from(set.G.values));
  });

  it("a body turning in the plane of its lever: the point's velocity ω × r changes by −ω δθ r (closed form)", () => {
    // body b spins about z at ω with its joint point at r = (ρ, 0, 0) from its centre (at
    // the origin); turning it by δθ about z moves r to (ρ cos δθ, ρ sin δθ, 0), so
    // ω × r = ω ρ (−sin δθ, cos δθ, 0) changes by −ω ρ δθ x̂ to first order
    const omega = 7;
    const rho = 0.4;
    const sys = system([
      {
        id: "b",
        kind: "rigid",
        fixed: false,
        mass: 1,
        inertia: [1, 0, 0, 0, 1, 0, 0, 0, 1],
        position: [0, 0, 0],
        orientation: [1, 0, 0, 0],
        velocity: [0, 0, 0],
        angularVelocity: [0, 0, omega],
      },
    ]);
    const set = new ConstraintSet(sys, [
      new SphericalJoint(
        "j",
        sys,
        { body: -1, point: [rho, 0, 0] },
        { body: 0, point: [rho, 0, 0] },
      ),
    ]);
    set.updateJacobian(0);
    const g = Float64Array.from(set.G.values);
    const rows = new Float64Array(g.length);
    set.velocityRows(1, rows);
    const e = new Float64Array(6);
    e[5] = 1;
    const curvature = new Float64Array(3);
    set.multiply(
      e,
      curvature,
      rows.map((x, k) => x - g[k]),
    );
    expect(curvature[0]).toBeCloseTo(-omega * rho, 14);
    expect(curvature[1]).toBeCloseTo(0, 14);
    expect(curvature[2]).toBeCloseTo(0, 14);
  });
});
