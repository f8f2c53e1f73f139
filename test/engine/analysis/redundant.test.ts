/**
 * Redundant constraints: a door hanging on two coaxial revolute hinges (10 rows on 6
 * dofs, one free rotation: 5 rows redundant). At rest with its centre of mass on the
 * hinge axis it stays at rest; only the total reaction is determined (it balances
 * gravity), and the multipliers returned must be the minimum-norm ones: here computed
 * independently as λ = G y with (GᵀG + εI) y = Gᵀλ (dense, ε → 0 regularized normal
 * equations), since every minimum-norm solution of Gᵀλ = g lies in range(G).
 * Also: a long chain whose G M⁻¹ Gᵀ is block tridiagonal assembles quickly.
 */
import { describe, expect, it } from "vitest";
import type { JointSpec } from "../../../schemas/model";
import { createConstraints } from "../../../src/engine/constraints/build";
import { ConstraintSet } from "../../../src/engine/constraints/constraint-set";
import { projectPositions } from "../../../src/engine/constraints/project";
import { csrToDense } from "../../../src/engine/math/csr";
import { addPositionIncrement, BodySystem } from "../../../src/engine/model/body-system";
import { sphericalChain } from "../../support/models";
import { modelSystem } from "../../support/system";
import { assemble } from "./analyse";
import { solveDense } from "./slider-crank-fixture";
import { defaultOptions, gravityAndGyroscopic } from "./slider-crank-model";

const g = 9.81;

describe("door on two coaxial hinges", () => {
  it("stays at rest; total reaction balances gravity; multipliers are minimum-norm", () => {
    const m = 12;
    const z0 = 0.35; // centre of mass height on the axis (hinges at z = 0 and z = 1)
    const sys = new BodySystem([
      {
        id: "door",
        kind: "rigid",
        fixed: false,
        mass: m,
        inertia: [2, 0, 0, 0, 1.5, 0, 0, 0, 0.8],
        position: [0, 0, z0],
        orientation: [1, 0, 0, 0],
        velocity: [0, 0, 0],
        angularVelocity: [0, 0, 0],
      },
    ]);
    const hinge = (id: string, z: number): JointSpec => ({
      id,
      type: "revolute",
      a: { body: "ground", point: [0, 0, z] },
      b: { body: "door", point: [0, 0, z - z0] },
      axis: [0, 0, 1],
    });
    const set = new ConstraintSet(
      sys,
      createConstraints([hinge("h1", 0), hinge("h2", 1)], [], sys),
    );
    const res = assemble(sys, set, gravityAndGyroscopic(sys), 0, defaultOptions());
    expect(res.exitFlag).toBe("SUCCESS");
    expect(res.warnings.filter((w) => w.startsWith('joint "h2"')).length).toBe(5);
    for (const x of [...res.bodies[0].acceleration, ...res.bodies[0].angularAcceleration])
      expect(Math.abs(x)).toBeLessThan(1e-12);
    // Determined: the total force and the total moment about the centre of mass.
    const [r1, r2] = res.reactions;
    const F = [0, 1, 2].map((i) => r1.force[i] + r2.force[i]);
    expect(F[0]).toBeCloseTo(0, 10);
    expect(F[1]).toBeCloseTo(m * g, 10);
    expect(F[2]).toBeCloseTo(0, 10);
    const lever = (z: number) => [0, 0, z - z0];
    const moment = [0, 1, 2].map((i) => r1.torque[i] + r2.torque[i]);
    for (const [r, z] of [
      [r1, 0],
      [r2, 1],
    ] as const) {
      const l = lever(z);
      moment[0] += l[1] * r.force[2] - l[2] * r.force[1];
      moment[1] += l[2] * r.force[0] - l[0] * r.force[2];
      moment[2] += l[0] * r.force[1] - l[1] * r.force[0];
    }
    for (const x of moment) expect(Math.abs(x)).toBeLessThan(1e-10);
    // Minimum norm: λ = G y, (GᵀG + εI) y = Gᵀλ.
    const lambda = [...r1.multipliers, ...r2.multipliers];
    set.updateJacobian(0);
    const G = csrToDense(set.G);
    const rows = set.numRows;
    const n = sys.numDofs;
    const gt = (j: number, i: number) => G[i * n + j];
    const gtl = Array.from({ length: n }, (_, j) =>
      lambda.reduce((s, l, i) => s + gt(j, i) * l, 0),
    );
    const eps = 1e-12;
    const gtg = Array.from({ length: n }, (_, j) =>
      Array.from({ length: n }, (_, k) => {
        let s = j === k ? eps : 0;
        for (let i = 0; i < rows; i++) s += gt(j, i) * gt(k, i);
        return s;
      }),
    );
    const y = solveDense(gtg, gtl);
    const lmin = Array.from({ length: rows }, (_, i) =>
      y.reduce((s, yj, j) => s + G[i * n + j] * yj, 0),
    );
    const scale = Math.max(...lmin.map(Math.abs));
    for (let i = 0; i < rows; i++) expect(Math.abs(lambda[i] - lmin[i])).toBeLessThan(1e-8 * scale);
  });
});

describe("long chain", () => {
  it("a 300-link pendulum chain of rigid bodies with spherical joints projects in a few iterations", () => {
    const N = 300;
    // hanging straight down from the origin, 0.1 m links
    const { system: sys, spec } = modelSystem(
      sphericalChain({
        links: N,
        length: 0.1,
        mass: 0.1,
        inertia: [1e-4, 1e-4, 1e-5],
        prefix: "b",
        groundPoint: true,
        direction: [0, 0, -1],
      }),
    );
    const set = new ConstraintSet(sys, createConstraints(spec.joints, [], sys));
    const du = new Float64Array(sys.numDofs);
    // A drift-sized error (1e-4 m and rad per dof).
    for (let i = 0; i < du.length; i++) du[i] = 1e-4 * Math.sin(7 * i);
    addPositionIncrement(sys, du, 1);
    const r = projectPositions(sys, set, 0, defaultOptions());
    expect(r.converged).toBe(true);
    expect(r.residualNorm).toBeLessThanOrEqual(1e-10);
    expect(r.iterations).toBeLessThanOrEqual(6);
    expect(r.rank).toBe(3 * N);
  });
});
