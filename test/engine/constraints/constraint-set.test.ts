/**
 * ConstraintSet (global G, C, Ct, Qc, reactions), the mass-weighted Gram matrix
 * S = G M⁻¹ Gᵀ, the semidefinite LDLᵀ and the position / velocity projections, against
 * dense references computed here (dense M from masses and world inertias, dense
 * Gaussian elimination).
 */
import { describe, expect, it, vi } from "vitest";
import type { JointSpec, MotorSpec } from "../../../schemas/model";
import { createConstraints } from "../../../src/engine/constraints/build";
import { ConstraintSet } from "../../../src/engine/constraints/constraint-set";
import {
  projectionWorkspace,
  projectPositions,
  projectVelocities,
} from "../../../src/engine/constraints/project";
import { MassSchurComplement } from "../../../src/engine/constraints/schur";
import { type CsrMatrix, csrFromTriplets, csrToDense } from "../../../src/engine/math/csr";
import { quatDifference } from "../../../src/engine/math/quat";
import {
  addPositionIncrement,
  BodyKind,
  type BodySystem,
  getVelocity,
  PositionSnapshot,
  setVelocity,
} from "../../../src/engine/model/body-system";
import { SemidefiniteLdlt } from "../../../src/engine/solvers/linear/semidefinite-ldlt";
import { sphericalChain } from "../../support/models";
import { mulberry32 } from "../../support/random";
import { modelSystem } from "../../support/system";
import { solveDense } from "../analysis/slider-crank-fixture";
import { randomBody, system } from "./helpers";

/** With `weld` the set is over-determined (R2 fixed twice), without it regular. */
function scene(seed: number, weld = true) {
  const r = mulberry32(seed);
  const sys = system([
    randomBody(r, "R1", "rigid"),
    randomBody(r, "R2", "rigid"),
    randomBody(r, "P1", "particle"),
    randomBody(r, "F", "fixed"),
    randomBody(r, "R3", "rigid"),
  ]);
  const pt = (b: string, x: number, y: number, z: number) => ({
    body: b,
    point: [x, y, z] as [number, number, number],
  });
  const joints: JointSpec[] = [
    {
      id: "hinge",
      type: "revolute",
      a: pt("ground", 0, 0, 0),
      b: pt("R1", 0.1, 0.2, 0),
      axis: [0, 0.6, 0.8],
    },
    { id: "ball", type: "spherical", a: pt("R1", 0.3, 0, 0), b: pt("R2", -0.2, 0, 0.1) },
    { id: "rope", type: "distance", a: pt("R2", 0, 0.1, 0), b: pt("P1", 0, 0, 0) },
    {
      id: "slide",
      type: "prismatic",
      a: pt("F", 0, 0, 0.2),
      b: pt("R3", 0.1, 0, 0),
      axis: [1, 1, 0],
    },
    ...(weld
      ? [
          {
            id: "weld",
            type: "fixed",
            a: pt("R3", 0, 0.2, 0),
            b: pt("R2", 0, 0, -0.1),
          } as JointSpec,
        ]
      : []),
    { id: "tether", type: "distance", a: pt("P1", 0, 0, 0), b: pt("ground", 1, 2, 3) },
  ];
  const motors: MotorSpec[] = [
    { id: "spin", joint: "hinge", angle: { offset: 0, rate: 3 } },
    {
      id: "push",
      joint: "slide",
      offset: { type: "sine", amplitude: 0.1, frequency: 2, phase: 0, offset: 0 },
    },
  ];
  const set = new ConstraintSet(sys, createConstraints(joints, motors, sys));
  return { sys, set, r };
}

function denseMass(sys: BodySystem): number[][] {
  const n = sys.numDofs;
  const M = Array.from({ length: n }, () => new Array<number>(n).fill(0));
  for (let b = 0; b < sys.numBodies; b++) {
    const d = sys.dofOffset[b];
    if (d < 0) continue;
    for (let i = 0; i < 3; i++) M[d + i][d + i] = sys.mass[b];
    if (sys.kind[b] === BodyKind.RIGID)
      for (let i = 0; i < 3; i++)
        for (let j = 0; j < 3; j++) M[d + 3 + i][d + 3 + j] = sys.inertiaWorld[9 * b + 3 * i + j];
  }
  return M;
}

function denseG(set: ConstraintSet): number[][] {
  const g = csrToDense(set.G);
  return Array.from({ length: set.numRows }, (_, i) =>
    Array.from(g.subarray(i * set.numDofs, (i + 1) * set.numDofs)),
  );
}

/** X = M⁻¹ B column by column (dense). */
function massSolveCols(M: number[][], B: number[][]): number[][] {
  const n = M.length;
  const cols = B[0]?.length ?? 0;
  const out = Array.from({ length: n }, () => new Array<number>(cols).fill(0));
  for (let j = 0; j < cols; j++) {
    const x = solveDense(
      M,
      B.map((row) => row[j]),
    );
    for (let i = 0; i < n; i++) out[i][j] = x[i];
  }
  return out;
}

const transpose = (A: number[][]) => A[0].map((_, j) => A.map((row) => row[j]));
const matmul = (A: number[][], B: number[][]) =>
  A.map((row) => B[0].map((_, j) => row.reduce((s, a, k) => s + a * B[k][j], 0)));

/** S = G M⁻¹ Gᵀ's lower triangle in S.values: updateInto with S's own entries as slots. */
function schurValues(schur: MassSchurComplement): CsrMatrix {
  const S = schur.S;
  S.values.fill(0);
  schur.updateInto(
    S.values,
    Int32Array.from(S.values, (_, p) => p),
  );
  return S;
}

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

  it("S = G M⁻¹ Gᵀ (its lower triangle; the upper one stays zero)", () => {
    const { sys, set } = scene(2);
    set.updateJacobian(0);
    const schur = new MassSchurComplement(set, sys);
    const S = csrToDense(schurValues(schur));
    const G = denseG(set);
    const ref = matmul(G, massSolveCols(denseMass(sys), transpose(G)));
    const m = set.numRows;
    let offDiagonal = 0;
    for (let i = 0; i < m; i++)
      for (let j = 0; j < m; j++) {
        const expected = j <= i ? ref[i][j] : 0;
        if (j < i) offDiagonal = Math.max(offDiagonal, Math.abs(ref[i][j]));
        expect(Math.abs(S[i * m + j] - expected)).toBeLessThan(1e-12 * (1 + Math.abs(expected)));
      }
    expect(offDiagonal).toBeGreaterThan(1e-3); // rows really couple
  });

  it("a fused load (S accumulated into the factor's storage) factors as factor(S), to the bit", () => {
    const { sys, set } = scene(2);
    set.updateJacobian(0);
    const schur = new MassSchurComplement(set, sys);
    const plain = new SemidefiniteLdlt();
    plain.factor(schurValues(schur));
    const fused = new SemidefiniteLdlt();
    for (let pass = 0; pass < 2; pass++) {
      // the second pass reuses the analysis and the composed slot map
      schur.updateInto(fused.beginLoad(schur.S), fused.loadSlots(schur.S));
      fused.factorLoaded();
      expect(fused.rank).toBe(plain.rank);
      expect(Array.from(fused.dropped)).toEqual(Array.from(plain.dropped));
      // a consistent right-hand side b = S y (S is singular: the scene's weld repeats rows)
      const m = set.numRows;
      const G = denseG(set);
      const S = matmul(G, massSolveCols(denseMass(sys), transpose(G)));
      const y = Array.from({ length: m }, (_, i) => Math.sin(i + 1));
      const b = Float64Array.from(S, (row) => row.reduce((acc, v, j) => acc + v * y[j], 0));
      const x1 = new Float64Array(m);
      const x2 = new Float64Array(m);
      plain.solve(b, x1);
      fused.solve(b, x2);
      expect(Array.from(x2)).toEqual(Array.from(x1));
      // and it solves S x = b (the dense G M⁻¹ Gᵀ)
      for (let i = 0; i < m; i++) {
        const sx = S[i].reduce((acc, v, j) => acc + v * x2[j], 0);
        expect(Math.abs(sx - b[i])).toBeLessThan(1e-9);
      }
    }
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

describe("SemidefiniteLdlt", () => {
  function gram(rows: number[][]) {
    const m = rows.length;
    const ri: number[] = [];
    const ci: number[] = [];
    const vi: number[] = [];
    for (let i = 0; i < m; i++)
      for (let j = 0; j < m; j++) {
        const v = rows[i].reduce((s, x, k) => s + x * rows[j][k], 0);
        ri.push(i);
        ci.push(j);
        vi.push(v);
      }
    return csrFromTriplets(m, m, ri, ci, vi);
  }

  /** For b = S y in range(S): S x = b to tol (relative) and x = 0 on the dropped rows. */
  function expectConsistentSolve(f: SemidefiniteLdlt, S: CsrMatrix, r: () => number, tol: number) {
    const Sd = csrToDense(S);
    const m = S.rows;
    const y = Array.from({ length: m }, () => r());
    const b = Float64Array.from({ length: m }, (_, i) =>
      y.reduce((s, yj, j) => s + Sd[i * m + j] * yj, 0),
    );
    const x = new Float64Array(m);
    f.solve(b, x);
    for (let i = 0; i < m; i++) {
      let sx = 0;
      for (let j = 0; j < m; j++) sx += Sd[i * m + j] * x[j];
      expect(Math.abs(sx - b[i])).toBeLessThan(tol * (1 + Math.abs(b[i])));
      if (f.dropped[i]) expect(x[i]).toBe(0);
    }
  }

  it("drops the later row of each dependent set and solves consistent systems exactly", () => {
    const r = mulberry32(8);
    const base = Array.from({ length: 5 }, () => Array.from({ length: 7 }, () => 2 * r() - 1));
    // rows: b0, b1, b0+b1, b2, 2·b2, b3, b4, b1−b3
    const add = (x: number[], y: number[], s = 1) => x.map((v, i) => v + s * y[i]);
    const rows = [
      base[0],
      base[1],
      add(base[0], base[1]),
      base[2],
      base[2].map((v) => 2 * v),
      base[3],
      base[4],
      add(base[1], base[3], -1),
    ];
    const S = gram(rows);
    const f = new SemidefiniteLdlt();
    f.factor(S);
    expect(Array.from(f.dropped)).toEqual([0, 0, 1, 0, 1, 0, 0, 1]);
    expect(f.rank).toBe(5);
    expectConsistentSolve(f, S, r, 1e-12);
  });

  /** S = A B Aᵀ with B = I + skew (nonsymmetric, positive definite symmetric part), only
   * the structural nonzeros stored (a symmetric pattern). */
  function skewGram(rows: number[][], skew: number[][]) {
    const m = rows.length;
    const n = rows[0].length;
    const B = (k: number, l: number) => (k === l ? 1 : 0) + skew[k][l] - skew[l][k];
    const ri: number[] = [];
    const ci: number[] = [];
    const vi: number[] = [];
    for (let i = 0; i < m; i++)
      for (let j = 0; j < m; j++) {
        let v = 0;
        let structural = false;
        for (let k = 0; k < n; k++)
          for (let l = 0; l < n; l++) {
            if (rows[i][k] === 0 || rows[j][l] === 0) continue;
            structural = true;
            v += rows[i][k] * B(k, l) * rows[j][l];
          }
        if (!structural) continue;
        ri.push(i);
        ci.push(j);
        vi.push(v);
      }
    return csrFromTriplets(m, m, ri, ci, vi);
  }

  /** Rows supported on 3 consecutive columns: a banded, chain-like pattern. */
  function bandRows(r: () => number, m: number) {
    return Array.from({ length: m }, (_, i) =>
      Array.from({ length: m + 2 }, (_, k) => (k >= i && k < i + 3 ? 2 * r() - 1 : 0)),
    );
  }

  it("unsymmetric values on a symmetric pattern: S = L D U matches a dense solve", () => {
    const r = mulberry32(10);
    const m = 12;
    const rows = bandRows(r, m);
    const skew = Array.from({ length: m + 2 }, () =>
      Array.from({ length: m + 2 }, () => 0.3 * r()),
    );
    const S = skewGram(rows, skew);
    const Sd = csrToDense(S);
    expect(Math.abs(Sd[1] - Sd[m])).toBeGreaterThan(1e-3); // really unsymmetric
    const f = new SemidefiniteLdlt();
    f.factor(S, false);
    expect(f.rank).toBe(m);
    const b = Float64Array.from({ length: m }, () => 2 * r() - 1);
    const x = new Float64Array(m);
    f.solve(b, x);
    const ref = solveDense(
      Array.from({ length: m }, (_, i) => Array.from(Sd.subarray(m * i, m * i + m))),
      Array.from(b),
    );
    const scale = Math.max(...ref.map(Math.abs));
    for (let i = 0; i < m; i++) expect(Math.abs(x[i] - ref[i])).toBeLessThan(1e-10 * scale);
    // the same factorization object then factors a symmetric matrix (U = Lᵀ again)
    const sym = gram(rows);
    f.factor(sym);
    f.solve(b, x);
    const Sy = csrToDense(sym);
    const refSym = solveDense(
      Array.from({ length: m }, (_, i) => Array.from(Sy.subarray(m * i, m * i + m))),
      Array.from(b),
    );
    const scaleSym = Math.max(...refSym.map(Math.abs));
    for (let i = 0; i < m; i++) expect(Math.abs(x[i] - refSym[i])).toBeLessThan(1e-10 * scaleSym);
  });

  it("unsymmetric: drops dependent rows and solves consistent systems exactly", () => {
    const r = mulberry32(11);
    const base = Array.from({ length: 4 }, () => Array.from({ length: 6 }, () => 2 * r() - 1));
    const rows = [base[0], base[1], base[0].map((v, i) => v - 2 * base[1][i]), base[2], base[3]];
    const skew = Array.from({ length: 6 }, () => Array.from({ length: 6 }, () => 0.3 * r()));
    const S = skewGram(rows, skew);
    const f = new SemidefiniteLdlt();
    f.factor(S, false);
    expect(Array.from(f.dropped)).toEqual([0, 0, 1, 0, 0]);
    expect(f.dropped[2]).toBe(1);
    expectConsistentSolve(f, S, r, 1e-11);
  });

  /**
   * Joint-like rows: 3 per joint on the 6 columns of each of its two bodies (a loop
   * 0–1–2–3–0, branches 1–4–5, so the factor fills in), a joint repeating 2–3 with rows
   * that combine the first one's, and a 1-row drive on 4–5: supernodes of 3 rows whose
   * block rows update each other.
   */
  function jointRows(r: () => number) {
    const cols = 36;
    const joint = (a: number, b: number, k = 3) =>
      Array.from({ length: k }, () =>
        Array.from({ length: cols }, (_, c) =>
          Math.floor(c / 6) === a || Math.floor(c / 6) === b ? 2 * r() - 1 : 0,
        ),
      );
    const rows = [
      ...joint(0, 1),
      ...joint(1, 2),
      ...joint(2, 3),
      ...joint(3, 0),
      ...joint(1, 4),
      ...joint(4, 5),
    ];
    const j23 = rows.slice(6, 9);
    const combo = (w: number[]) =>
      j23[0].map((_, c) => w[0] * j23[0][c] + w[1] * j23[1][c] + w[2] * j23[2][c]);
    rows.push(combo([1, 2, 0]), combo([0, 1, -1]), combo([3, 0, 1]), ...joint(4, 5, 1));
    return rows;
  }

  /**
   * S = G W Gᵀ for rows on 6-column bodies, W = blockdiag(I + skew_b) (per body, as a
   * gyroscopic W⁻¹; zero skew: symmetric), entries stored where two rows share a body.
   */
  function bodyGram(rows: number[][], skew: number) {
    const r = mulberry32(21);
    const bodies = rows[0].length / 6;
    const w = Array.from({ length: bodies }, () =>
      Array.from({ length: 6 }, (_, k) =>
        Array.from({ length: 6 }, (_, l) => (k === l ? 1 : 0) + skew * (2 * r() - 1)),
      ),
    );
    const on = (row: number[], b: number) => row.slice(6 * b, 6 * b + 6).some((x) => x !== 0);
    const ri: number[] = [];
    const ci: number[] = [];
    const vi: number[] = [];
    rows.forEach((gi, i) => {
      rows.forEach((gj, j) => {
        let v = 0;
        let structural = false;
        for (let b = 0; b < bodies; b++) {
          if (!on(gi, b) || !on(gj, b)) continue;
          structural = true;
          for (let k = 0; k < 6; k++)
            for (let l = 0; l < 6; l++) v += gi[6 * b + k] * w[b][k][l] * gj[6 * b + l];
        }
        if (!structural) return;
        ri.push(i);
        ci.push(j);
        vi.push(v);
      });
    });
    return csrFromTriplets(rows.length, rows.length, ri, ci, vi);
  }

  for (const symmetric of [true, false])
    it(`joint blocks with fill: drops the repeated joint, solves as dense (symmetric ${symmetric})`, () => {
      const r = mulberry32(symmetric ? 12 : 13);
      const rows = jointRows(r);
      const S = bodyGram(rows, symmetric ? 0 : 0.3);
      const f = new SemidefiniteLdlt();
      f.factor(S, symmetric);
      const expected = new Array<number>(rows.length).fill(0);
      expected[18] = expected[19] = expected[20] = 1;
      expect(Array.from(f.dropped)).toEqual(expected);
      expect(f.rank).toBe(rows.length - 3);
      expectConsistentSolve(f, S, r, 1e-10);
      // and the definite part alone (the repeated joint left out) as a dense solve
      const kept = rows.filter((_, i) => expected[i] === 0);
      const Sk = bodyGram(kept, symmetric ? 0 : 0.3);
      f.factor(Sk, symmetric);
      expect(f.rank).toBe(kept.length);
      const m = kept.length;
      const b = Float64Array.from({ length: m }, () => 2 * r() - 1);
      const x = new Float64Array(m);
      f.solve(b, x);
      const Sd = csrToDense(Sk);
      const ref = solveDense(
        Array.from({ length: m }, (_, i) => Array.from(Sd.subarray(m * i, m * i + m))),
        Array.from(b),
      );
      const scale = Math.max(...ref.map(Math.abs));
      for (let i = 0; i < m; i++) expect(Math.abs(x[i] - ref[i])).toBeLessThan(1e-9 * scale);
    });

  it("a dependent row inside a 3-row joint block (symmetric: the unrolled block rows)", () => {
    // joint (1, 2)'s third row is the sum of its first two: that row alone is dropped,
    // along with the repeated joint at the end, and consistent systems still solve
    const r = mulberry32(14);
    const rows = jointRows(r);
    rows[5] = rows[3].map((v, c) => v + rows[4][c]);
    const S = bodyGram(rows, 0);
    const f = new SemidefiniteLdlt();
    f.factor(S);
    const expected = new Array<number>(rows.length).fill(0);
    expected[5] = expected[18] = expected[19] = expected[20] = 1;
    expect(Array.from(f.dropped)).toEqual(expected);
    expect(f.rank).toBe(rows.length - 4);
    expectConsistentSolve(f, S, r, 1e-10);
  });

  for (const symmetric of [true, false])
    it(`refactoring one pattern after dropped rows reloads every entry (symmetric ${symmetric})`, () => {
      // the factorization keeps its symbolic analysis for the same pattern and reloads only
      // S's entries and the fill-in; the dropped rows' cleared entries must come back
      const r = mulberry32(symmetric ? 31 : 32);
      const rows = jointRows(r);
      const S = bodyGram(rows, symmetric ? 0 : 0.3);
      const f = new SemidefiniteLdlt();
      f.factor(S, symmetric);
      expect(f.rank).toBe(rows.length - 3);
      for (let i = 0; i < S.rows; i++)
        for (let p = S.rowPtr[i]; p < S.rowPtr[i + 1]; p++) if (S.colIdx[p] === i) S.values[p] += 1;
      f.factor(S, symmetric);
      expect(f.rank).toBe(rows.length);
      expectConsistentSolve(f, S, r, 1e-10);
    });

  it("matches a dense solve when definite", () => {
    const r = mulberry32(9);
    const rows = Array.from({ length: 6 }, () => Array.from({ length: 9 }, () => 2 * r() - 1));
    const S = gram(rows);
    const f = new SemidefiniteLdlt();
    f.factor(S);
    expect(f.rank).toBe(6);
    const b = Float64Array.from({ length: 6 }, () => r());
    const x = new Float64Array(6);
    f.solve(b, x);
    const Sd = csrToDense(S);
    const ref = solveDense(
      Array.from({ length: 6 }, (_, i) => Array.from(Sd.subarray(6 * i, 6 * i + 6))),
      Array.from(b),
    );
    for (let i = 0; i < 6; i++) expect(x[i]).toBeCloseTo(ref[i], 10);
  });
});

/**
 * The mass-metric velocity projection written out densely: v − M⁻¹Gᵀ (G M⁻¹ Gᵀ)⁻¹ (G v + Ct)
 * at the current positions and velocities.
 */
function denseVelocityProjection(sys: BodySystem, set: ConstraintSet, t: number): number[] {
  const v0 = new Float64Array(sys.numDofs);
  getVelocity(sys, v0);
  set.updateJacobian(t);
  const G = denseG(set);
  const ct = new Float64Array(set.numRows);
  set.velocityTerm(t, ct);
  const MiGt = massSolveCols(denseMass(sys), transpose(G));
  const rhs = G.map((row, i) => row.reduce((s, g, j) => s + g * v0[j], 0) + ct[i]);
  const mu = solveDense(matmul(G, MiGt), rhs);
  return Array.from(v0, (v, i) => v - MiGt[i].reduce((s, x, j) => s + x * mu[j], 0));
}

describe("projections in the mass metric", () => {
  function perturbed(seed: number, size: number) {
    const s = scene(seed, false);
    const du = new Float64Array(s.sys.numDofs);
    for (let i = 0; i < du.length; i++) du[i] = size * (2 * s.r() - 1);
    addPositionIncrement(s.sys, du, 1);
    return s;
  }

  it("the first Newton update is δq = −M⁻¹Gᵀ(G M⁻¹ Gᵀ)⁻¹C", () => {
    const { sys, set } = perturbed(4, 0.02);
    const t = 0.1;
    const c = new Float64Array(set.numRows);
    set.residual(t, c);
    set.updateJacobian(t);
    const G = denseG(set);
    const M = denseMass(sys);
    const MiGt = massSolveCols(M, transpose(G));
    const lam = solveDense(matmul(G, MiGt), Array.from(c));
    const dq = MiGt.map((row) => -row.reduce((s, v, j) => s + v * lam[j], 0));
    const before = new PositionSnapshot(sys);
    const res = projectPositions(sys, set, t, {
      maxIterations: 1,
      relTolerance: 0,
      absTolerance: 0,
      residualTolerance: 0,
    });
    expect(res.iterations).toBe(1);
    expect(res.converged).toBe(false);
    const rot = new Float64Array(3);
    for (let b = 0; b < sys.numBodies; b++) {
      const d = sys.dofOffset[b];
      if (d < 0) continue;
      for (let i = 0; i < 3; i++)
        expect(sys.pos[3 * b + i] - before.pos[3 * b + i]).toBeCloseTo(dq[d + i], 13);
      if (sys.kind[b] !== BodyKind.RIGID) continue;
      quatDifference(rot, 0, sys.quat, 4 * b, before.quat, 4 * b);
      for (let i = 0; i < 3; i++) expect(rot[i]).toBeCloseTo(dq[d + 3 + i], 12);
    }
    expect(res.updateNorm).toBeCloseTo(Math.max(...dq.map(Math.abs)), 14);
  });

  it("Newton converges quadratically to C = 0", () => {
    const { sys, set } = perturbed(5, 0.05);
    const res = projectPositions(sys, set, 0.3, {
      maxIterations: 20,
      relTolerance: 0,
      absTolerance: 0,
      residualTolerance: 1e-13,
    });
    expect(res.converged).toBe(true);
    expect(res.iterations).toBeLessThanOrEqual(6);
    const c = new Float64Array(set.numRows);
    set.residual(0.3, c);
    expect(Math.max(...Array.from(c, Math.abs))).toBeLessThanOrEqual(1e-13);
    expect(res.residualNorm).toBe(Math.max(...Array.from(c, Math.abs)));
  });

  /** On C = 0 at t (full Newton), then every coordinate moved by up to ±size. */
  function drifted(seed: number, size: number, t: number) {
    const s = scene(seed, false);
    const exact = { maxIterations: 30, relTolerance: 0, absTolerance: 0, residualTolerance: 1e-14 };
    expect(projectPositions(s.sys, s.set, t, exact).converged).toBe(true);
    const du = new Float64Array(s.sys.numDofs);
    for (let i = 0; i < du.length; i++) du[i] = size * (2 * s.r() - 1);
    addPositionIncrement(s.sys, du, 1);
    return s;
  }

  it("chord iterations: one factorization for a small drift, to C = 0 as Newton", () => {
    const options = {
      maxIterations: 20,
      relTolerance: 0,
      absTolerance: 0,
      residualTolerance: 1e-13,
    };
    const newton = drifted(7, 1e-5, 0.3);
    const chord = drifted(7, 1e-5, 0.3);
    const factor = vi.spyOn(projectionWorkspace(chord.set), "factorAt");
    const rc = projectPositions(chord.sys, chord.set, 0.3, { ...options, chord: true });
    const rn = projectPositions(newton.sys, newton.set, 0.3, options);
    expect(factor).toHaveBeenCalledTimes(1);
    expect(rc.converged).toBe(true);
    expect(rc.iterations).toBeLessThanOrEqual(4);
    const c = new Float64Array(chord.set.numRows);
    chord.set.residual(0.3, c);
    expect(Math.max(...Array.from(c, Math.abs))).toBeLessThanOrEqual(1e-13);
    // Both are on C = 0, reached from the same point by updates that agree to first
    // order: they differ by O(δq²) (δq ~ 1e-5 here).
    expect(rn.converged).toBe(true);
    for (let i = 0; i < chord.sys.pos.length; i++)
      expect(Math.abs(chord.sys.pos[i] - newton.sys.pos[i])).toBeLessThan(1e-8);
  });

  it("chord iterations refactor when the drift is large and still reach C = 0", () => {
    const { sys, set } = perturbed(5, 0.05);
    const factor = vi.spyOn(projectionWorkspace(set), "factorAt");
    const res = projectPositions(sys, set, 0.3, {
      maxIterations: 20,
      relTolerance: 0,
      absTolerance: 0,
      residualTolerance: 1e-13,
      chord: true,
    });
    expect(res.converged).toBe(true);
    expect(factor.mock.calls.length).toBeGreaterThan(1);
    expect(factor.mock.calls.length).toBeLessThan(res.iterations);
  });

  it("velocity projection reusing a factorization at the same positions is the exact projection", () => {
    // The correction lies in range(M⁻¹G_fᵀ), G_f that of the factorization: at the
    // current positions it ends on G v = −Ct in range(M⁻¹Gᵀ), the unique mass-metric
    // projection, whatever the time of the factorization (G does not depend on t here).
    const t = 0.25;
    const { sys, set } = drifted(6, 1e-4, t);
    projectionWorkspace(set).factorAt(t); // S at the perturbed positions
    projectPositions(sys, set, t, {
      maxIterations: 20,
      relTolerance: 0,
      absTolerance: 0,
      residualTolerance: 1e-13,
    });
    const vRef = denseVelocityProjection(sys, set, t);
    projectionWorkspace(set).factorAt(0); // a stale factorization (other time, same q)
    const res = projectVelocities(sys, set, t, "factored-configuration");
    expect(res.residualNorm).toBeLessThan(1e-11);
    const v = new Float64Array(sys.numDofs);
    getVelocity(sys, v);
    for (let i = 0; i < v.length; i++) expect(v[i]).toBeCloseTo(vRef[i], 11);
  });

  /**
   * The benchmark's 100-link chain (S2, bench/scenes.ts, without its boxes): straight
   * along x, random velocities, then drifted.
   */
  function longChain(seed: number, drift: number, t: number) {
    const r = mulberry32(seed);
    const { system: sys, spec } = modelSystem(
      sphericalChain({
        links: 100,
        length: 0.1,
        mass: 0.1,
        inertia: [6.667e-6, 8.667e-5, 8.667e-5],
        prefix: "l",
        groundPoint: true,
        velocity: () => [2 * r() - 1, 2 * r() - 1, 2 * r() - 1],
        angularVelocity: () => [5 * r() - 2.5, 5 * r() - 2.5, 5 * r() - 2.5],
      }),
    );
    const set = new ConstraintSet(sys, createConstraints(spec.joints, [], sys));
    const du = new Float64Array(sys.numDofs);
    for (let i = 0; i < du.length; i++) du[i] = drift * (2 * r() - 1);
    addPositionIncrement(sys, du, 1);
    set.residual(t, new Float64Array(set.numRows));
    return { sys, set };
  }

  it("velocity projection at the configuration of a factorization 50 µm away", () => {
    // Tangent at that configuration (G_f v = −Ct) with its factorization, no new one: an
    // oblique projection (along M⁻¹G_fᵀ) first order in the drift of G away from the
    // exact one at the current positions. (The chain's G M⁻¹ Gᵀ has κ ~ 1e4: with the
    // residual along the current G, S_f⁻¹ would amplify (S_f − S) by up to κ.)
    const t = 0;
    const { sys, set } = longChain(3, 5e-5, t);
    const ws = projectionWorkspace(set);
    ws.factorAt(t); // at the drifted positions
    const options = {
      maxIterations: 20,
      relTolerance: 0,
      absTolerance: 0,
      residualTolerance: 1e-14,
      chord: true,
    };
    projectPositions(sys, set, t, options, undefined, true); // moves the bodies by ~50 µm
    const v0 = new Float64Array(sys.numDofs);
    getVelocity(sys, v0);
    const factor = vi.spyOn(ws, "factorAt");
    const Gf = Float64Array.from(set.G.values); // G where the factorization was made
    const gv = new Float64Array(set.numRows);
    set.multiply(v0, gv, Gf);
    const before = gv.reduce((m, x) => Math.max(m, Math.abs(x)), 0);
    const res = projectVelocities(sys, set, t, "factored-configuration");
    expect(factor).not.toHaveBeenCalled();
    const v = new Float64Array(sys.numDofs);
    getVelocity(sys, v);
    // G_f v = −Ct = 0 (spherical joints), recomputed here from G_f's values
    set.multiply(v, gv, Gf);
    const after = gv.reduce((m, x) => Math.max(m, Math.abs(x)), 0);
    // one correction: exact but for the change of M⁻¹ (world inertias) since the
    // factorization, 2e-6 of the residual after this 50 µm move
    expect(after).toBeLessThan(1e-5 * before);
    expect(res.residualNorm).toBe(after);
    // the exact projection at the current positions (factored there; checked against the
    // dense projection above)
    setVelocity(sys, v0);
    factor.mockRestore();
    projectVelocities(sys, set, t);
    const vRef = new Float64Array(sys.numDofs);
    getVelocity(sys, vRef);
    let change = 0;
    for (let i = 0; i < v0.length; i++) change = Math.max(change, Math.abs(vRef[i] - v0[i]));
    // an oblique projection (along M⁻¹G_fᵀ), first order in the drift of G away from the
    // mass-orthogonal one (5e-3 of the change here)
    for (let i = 0; i < v.length; i++) expect(Math.abs(v[i] - vRef[i])).toBeLessThan(2e-2 * change);
  });

  it("velocities first: one factorization serves the velocity and the position projection", () => {
    // The θ-schemes' order (integrator.ts, ProjectionOrder): velocities made tangent at the
    // configuration the step reached, then the positions projected with the same S.
    const t = 0.4;
    const options = {
      maxIterations: 20,
      relTolerance: 0,
      absTolerance: 0,
      residualTolerance: 1e-13,
      chord: true,
    };
    const { sys, set } = drifted(8, 1e-5, t);
    const reference = drifted(8, 1e-5, t);
    const vRef = denseVelocityProjection(sys, set, t); // at the unprojected positions
    const factor = vi.spyOn(projectionWorkspace(set), "factorAt");
    projectVelocities(sys, set, t);
    const result = { iterations: 0, residualNorm: 0, updateNorm: 0, converged: false, rank: 0 };
    projectPositions(sys, set, t, options, result, true);
    expect(factor).toHaveBeenCalledTimes(1);
    expect(result.converged).toBe(true);
    expect(result.rank).toBe(set.numRows);
    const c = new Float64Array(set.numRows);
    set.residual(t, c);
    expect(Math.max(...Array.from(c, Math.abs))).toBeLessThanOrEqual(1e-13);
    // the velocities are the mass-metric projection at the unprojected positions
    const v = new Float64Array(sys.numDofs);
    getVelocity(sys, v);
    for (let i = 0; i < v.length; i++) expect(v[i]).toBeCloseTo(vRef[i], 12);
    // and the positions those of a projection that factors for itself, the same iterates
    projectPositions(reference.sys, reference.set, t, options);
    for (let i = 0; i < sys.pos.length; i++)
      expect(sys.pos[i]).toBeCloseTo(reference.sys.pos[i], 14);
  });

  it("velocity projection: G v = −Ct with the smallest kinetic-energy change", () => {
    const { sys, set } = scene(6, false);
    const t = 0.25;
    const vRef = denseVelocityProjection(sys, set, t);
    const res = projectVelocities(sys, set, t);
    expect(res.residualNorm).toBeLessThan(1e-12);
    const v = new Float64Array(sys.numDofs);
    getVelocity(sys, v);
    for (let i = 0; i < v.length; i++) expect(v[i]).toBeCloseTo(vRef[i], 12);
  });
});
