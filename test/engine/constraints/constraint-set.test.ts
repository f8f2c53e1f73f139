/**
 * ConstraintSet (global G, C, Ct, Qc, reactions) against dense references computed here
 * (dense-scene.ts). The Gram matrix S = G M⁻¹ Gᵀ: schur.test.ts; the projections:
 * project.test.ts.
 */
import { describe, expect, it } from "vitest";
import type { JointSpec } from "../../../schemas/model";
import { createConstraints } from "../../../src/engine/constraints/build";
import { ConstraintSet } from "../../../src/engine/constraints/constraint-set";
import {
  BodyKind,
  PositionSnapshot,
  setPositionsFrom,
} from "../../../src/engine/model/body-system";
import { mulberry32 } from "../../support/random";
import { denseG, scene, transpose } from "./dense-scene";
import { randomBody, system } from "./helpers";

describe("ConstraintSet", () => {
  it("stacks rows (joints, then motors) and places each Jacobian block at its body's dofs", () => {
    const { sys, set } = scene(1);
    const ids = set.constraints.map((c) => `${c.id}:${c.rows}`);
    expect(ids).toEqual([
      "hinge:5",
      "ball:3",
      "rope:1",
      "slide:5",
      "weld:6",
      "tether:1",
      "spin:1",
      "push:1",
    ]);
    expect(set.numRows).toBe(23);
    expect(set.rowLabel(set.rowOffset[4] + 2)).toBe('joint "weld" row 2');
    expect(set.rowLabel(set.rowOffset[7])).toBe('motor "push" row 0');
    set.updateJacobian(0.2);
    const G = denseG(set);
    for (let k = 0; k < set.constraints.length; k++) {
      const c = set.constraints[k];
      const jA = new Float64Array(6 * c.rows);
      const jB = new Float64Array(6 * c.rows);
      c.jacobian(0.2, jA, jB);
      for (let i = 0; i < c.rows; i++) {
        const row = new Array<number>(sys.numDofs).fill(0);
        for (const [b, j] of [
          [c.bodyA, jA],
          [c.bodyB, jB],
        ] as const) {
          if (b < 0 || sys.dofOffset[b] < 0) continue;
          const w = sys.kind[b] === BodyKind.RIGID ? 6 : 3;
          for (let q = 0; q < w; q++) row[sys.dofOffset[b] + q] += j[6 * i + q];
        }
        expect(G[set.rowOffset[k] + i]).toEqual(row);
      }
    }
    // Gᵀ y
    const y = Float64Array.from({ length: set.numRows }, (_, i) => Math.sin(i + 1));
    const gty = new Float64Array(sys.numDofs);
    set.multiplyTranspose(y, gty);
    const ref = transpose(G).map((col) => col.reduce((s, g, i) => s + g * y[i], 0));
    for (let j = 0; j < sys.numDofs; j++) expect(gty[j]).toBeCloseTo(ref[j], 13);
    // G x
    const x = Float64Array.from({ length: sys.numDofs }, (_, i) => Math.cos(2 * i + 1));
    const gx = new Float64Array(set.numRows);
    set.multiply(x, gx);
    for (let r = 0; r < set.numRows; r++)
      expect(gx[r]).toBeCloseTo(
        G[r].reduce((s, g, j) => s + g * x[j], 0),
        13,
      );
  });

  it("Gᵀ y (gathered by body) has the bits of a row-by-row scatter, overwrites every dof, takes other values", () => {
    const { sys, set } = scene(3);
    set.updateJacobian(0.1);
    const { rowPtr, colIdx } = set.G;
    // y with zero rows (skipped), G's own values and another array of its layout
    const y = Float64Array.from({ length: set.numRows }, (_, i) =>
      i % 4 === 1 ? 0 : Math.sin(3 * i + 1),
    );
    const other = Float64Array.from(set.G.values, (v, p) => v * 1.3 - 0.01 * p);
    for (const values of [set.G.values, other]) {
      const ref = new Float64Array(sys.numDofs);
      for (let r = 0; r < set.numRows; r++) {
        if (y[r] === 0) continue;
        for (let p = rowPtr[r]; p < rowPtr[r + 1]; p++) ref[colIdx[p]] += values[p] * y[r];
      }
      const out = new Float64Array(sys.numDofs).fill(Number.NaN);
      set.multiplyTranspose(y, out, values);
      for (let j = 0; j < sys.numDofs; j++) expect(Object.is(out[j], ref[j])).toBe(true);
    }
  });

  it("spherical joints write G's rows themselves (jacobianInto): the blocks' values on every kind of end", () => {
    const r = mulberry32(5);
    const sys = system([
      randomBody(r, "R1", "rigid"),
      randomBody(r, "R2", "rigid"),
      randomBody(r, "P1", "particle"),
      randomBody(r, "F", "fixed"),
      randomBody(r, "R3", "rigid"),
    ]);
    const pt = (body: string, x: number, y: number, z: number) => ({
      body,
      point: [x, y, z] as [number, number, number],
    });
    const ball = (id: string, a: string, b: string): JointSpec => ({
      id,
      type: "spherical",
      a: pt(a, 0.3, -0.1, 0.2),
      b: pt(b, -0.2, 0.05, 0.1),
    });
    const set = new ConstraintSet(
      sys,
      createConstraints(
        [
          ball("ab", "R1", "R2"),
          ball("ba", "R2", "R1"), // b's columns before a's
          ball("ground", "ground", "R3"),
          ball("particle", "P1", "R3"),
          ball("fixed", "R2", "F"),
          ball("both", "R3", "P1"),
        ],
        [],
        sys,
      ),
    );
    expect(set.constraints.every((c) => c.jacobianInto !== undefined)).toBe(true);
    set.G.values.fill(Number.NaN);
    set.updateJacobian(0);
    const { rowPtr, colIdx, values } = set.G;
    for (let k = 0; k < set.constraints.length; k++) {
      const c = set.constraints[k];
      const jA = new Float64Array(6 * c.rows);
      const jB = new Float64Array(6 * c.rows);
      c.jacobian(0, jA, jB);
      for (let i = 0; i < c.rows; i++) {
        const row = new Map<number, number>();
        for (const [b, j] of [
          [c.bodyA, jA],
          [c.bodyB, jB],
        ] as const) {
          if (b < 0 || sys.dofOffset[b] < 0) continue;
          const w = sys.kind[b] === BodyKind.RIGID ? 6 : 3;
          for (let q = 0; q < w; q++) row.set(sys.dofOffset[b] + q, j[6 * i + q]);
        }
        // G's stored entries of the row, entry for entry (signed zeros included)
        const r = set.rowOffset[k] + i;
        expect(rowPtr[r + 1] - rowPtr[r]).toBe(row.size);
        for (let p = rowPtr[r]; p < rowPtr[r + 1]; p++)
          expect(Object.is(values[p], row.get(colIdx[p]))).toBe(true);
      }
    }
  });

  it("chainIncrements: G J is the derivative of C(x₀ ⊕ u) with respect to u (central differences, turns of up to 1.4 rad)", () => {
    const { sys, set, r } = scene(8, false);
    const n = sys.numDofs;
    const m = set.numRows;
    const t = 0.3;
    const x0 = new PositionSnapshot(sys);
    // u: every dof moved, rigid bodies turned by up to 0.8 rad about each axis
    const u = Float64Array.from({ length: n }, () => 0.8 * (2 * r() - 1));
    const C = (v: Float64Array) => {
      setPositionsFrom(sys, x0, v, 1);
      const out = new Float64Array(m);
      set.residual(t, out);
      return out;
    };
    setPositionsFrom(sys, x0, u, 1);
    set.updateJacobian(t);
    set.chainIncrements(u);
    const GJ = denseG(set);
    const eps = 1e-6;
    let worst = 0;
    let scale = 0;
    let plainWorst = 0;
    set.updateJacobian(t);
    const G = denseG(set);
    for (let j = 0; j < n; j++) {
      const up = Float64Array.from(u);
      const down = Float64Array.from(u);
      up[j] += eps;
      down[j] -= eps;
      const cp = C(up);
      const cm = C(down);
      for (let i = 0; i < m; i++) {
        const fd = (cp[i] - cm[i]) / (2 * eps);
        worst = Math.max(worst, Math.abs(GJ[i][j] - fd));
        plainWorst = Math.max(plainWorst, Math.abs(G[i][j] - fd));
        scale = Math.max(scale, Math.abs(fd));
      }
    }
    expect(worst).toBeLessThan(1e-8 * scale);
    // without J the rotation columns are off by about |φ|/2 of their size
    expect(plainWorst).toBeGreaterThan(0.05 * scale);
  });

  it("reactions: one per constraint, ids in order; linear in λ", () => {
    const { set } = scene(3);
    const l = Float64Array.from({ length: set.numRows }, (_, i) => Math.cos(3 * i));
    const reactions = (scale: number) =>
      set.constraints.map((c, k) => {
        const force = new Float64Array(3);
        const torque = new Float64Array(3);
        set.reaction(k, l, force, torque, scale);
        return { id: c.id, force: [...force], torque: [...torque] };
      });
    const a = reactions(1);
    const b = reactions(-2);
    expect(a.map((s) => s.id)).toEqual([
      "hinge",
      "ball",
      "rope",
      "slide",
      "weld",
      "tether",
      "spin",
      "push",
    ]);
    a.forEach((s, k) => {
      for (let i = 0; i < 3; i++) {
        expect(b[k].force[i]).toBeCloseTo(-2 * s.force[i], 12);
        expect(b[k].torque[i]).toBeCloseTo(-2 * s.torque[i], 12);
      }
    });
    // A revolute motor applies a pure torque; a prismatic motor a pure force.
    expect(a[6].force).toEqual([0, 0, 0]);
    expect(Math.hypot(...a[7].torque)).toBeLessThan(1e-14);
  });
});
