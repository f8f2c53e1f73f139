/**
 * ContactSet against references built here:
 * - tangentFrame: (n, t1, t2) right-handed orthonormal for any unit n;
 * - push: lever arms to the surface points p_a = point − (g/2) n, p_b = point + (g/2) n,
 *   and the local relative velocity u_i = Fᵀ(v_pb − v_pa), v_p = v + ω × r, from the
 *   bodies' velocities (localVelocity, rowTimes, rowVelocity, normalVelocities);
 *   addRowTranspose gives the columns of Hᵀ (a unit impulse's generalized force: virtual
 *   power e·u = (Hᵀe)·u);
 * - the factored Delassus operator W = s H M⁻¹ Hᵀ, through the general and the mass-block
 *   paths of computeResponse, against H assembled column by column and M⁻¹ from the dense
 *   mass matrix inverted with ml-matrix;
 * - a triangle side (fem–fem): side a's velocity is −Σ w_k Fᵀ v_k, and the factored form
 *   is refused.
 */
import { inverse, Matrix } from "ml-matrix";
import { describe, expect, it } from "vitest";
import {
  blockOffsets,
  ContactSet,
  inverseMassBlocks,
  tangentFrame,
} from "../../../src/engine/contact/contact-set";
import { BodyKind, getVelocity } from "../../../src/engine/model/body-system";
import { mulberry32 } from "../../support/random";
import { randomBody, randVec, system } from "../constraints/helpers";

const cross = (a: ArrayLike<number>, b: ArrayLike<number>) => [
  a[1] * b[2] - a[2] * b[1],
  a[2] * b[0] - a[0] * b[2],
  a[0] * b[1] - a[1] * b[0],
];
const dot = (a: ArrayLike<number>, b: ArrayLike<number>) => a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
const unit = (v: number[]) => v.map((x) => x / Math.hypot(...v));

/** Rigid R1, particle P, fixed F, rigid R2, particles Q1, Q2; five contacts among them. */
function scene(seed: number) {
  const r = mulberry32(seed);
  const sys = system([
    randomBody(r, "R1", "rigid"),
    randomBody(r, "P", "particle"),
    randomBody(r, "F", "fixed"),
    randomBody(r, "R2", "rigid"),
    randomBody(r, "Q1", "particle"),
    randomBody(r, "Q2", "particle"),
  ]);
  const pairs = [
    [-1, 0],
    [1, 0],
    [1, 2],
    [0, 3],
    [3, 0], // R2 against R1 again, the other way round
  ];
  const n = pairs.length;
  const normal = new Float64Array(3 * n);
  const point = new Float64Array(3 * n);
  const gap = new Float64Array(n);
  const key = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    normal.set(unit(randVec(r)), 3 * i);
    point.set(randVec(r), 3 * i);
    gap[i] = 0.02 * (2 * r() - 1);
    key[i] = 10 + i;
  }
  const set = new ContactSet(sys);
  set.reset(n);
  for (let i = 0; i < n; i++)
    expect(set.push(pairs[i][0], pairs[i][1], key, normal, point, gap, i)).toBe(i);
  return { sys, set, pairs, normal, point, gap, r };
}

/** World velocity of body b's material point at p (0 for the world and fixed bodies). */
function pointVelocity(sys: ReturnType<typeof system>, b: number, p: number[]): number[] {
  if (b < 0 || sys.kind[b] === BodyKind.FIXED) return [0, 0, 0];
  const x = sys.pos.subarray(3 * b, 3 * b + 3);
  const w = sys.omega.subarray(3 * b, 3 * b + 3);
  const wr = cross(w, [p[0] - x[0], p[1] - x[1], p[2] - x[2]]);
  return [0, 1, 2].map((i) => sys.vel[3 * b + i] + wr[i]);
}

describe("tangentFrame", () => {
  it("is right-handed orthonormal for random and axis-aligned normals", () => {
    const r = mulberry32(1);
    const f = new Float64Array(10);
    const normals = [
      [1, 0, 0],
      [0, -1, 0],
      [0, 0, 1],
      ...Array.from({ length: 20 }, () => unit(randVec(r))),
    ];
    for (const n of normals) {
      f.set(n, 1);
      tangentFrame(f, 1);
      const [e, t1, t2] = [f.subarray(1, 4), f.subarray(4, 7), f.subarray(7, 10)];
      expect(Array.from(e)).toEqual(n);
      for (const [a, b, want] of [
        [t1, t1, 1],
        [t2, t2, 1],
        [e, t1, 0],
        [e, t2, 0],
        [t1, t2, 0],
      ] as const)
        expect(dot(a, b)).toBeCloseTo(want, 14);
      const nt1 = cross(e, t1);
      for (let i = 0; i < 3; i++) expect(nt1[i]).toBeCloseTo(t2[i], 14);
    }
  });
});

describe("ContactSet", () => {
  it("push: lever arms to the surface points and u_i = Fᵀ(v_pb − v_pa)", () => {
    const { sys, set, pairs, normal, point, gap } = scene(2);
    const u = new Float64Array(sys.numDofs);
    getVelocity(sys, u);
    const local = new Float64Array(3 * set.count);
    set.localVelocity(u, 3, local);
    const un = new Float64Array(set.count);
    set.normalVelocities(un);
    for (let i = 0; i < set.count; i++) {
      const n = Array.from(normal.subarray(3 * i, 3 * i + 3));
      const p = Array.from(point.subarray(3 * i, 3 * i + 3));
      const pa = p.map((x, k) => x - 0.5 * gap[i] * n[k]);
      const pb = p.map((x, k) => x + 0.5 * gap[i] * n[k]);
      const [a, b] = pairs[i];
      if (a >= 0)
        for (let k = 0; k < 3; k++)
          expect(set.rA[3 * i + k]).toBeCloseTo(pa[k] - sys.pos[3 * a + k], 14);
      const va = pointVelocity(sys, a, pa);
      const vb = pointVelocity(sys, b, pb);
      const rel = [0, 1, 2].map((k) => vb[k] - va[k]);
      for (let k = 0; k < 3; k++) {
        const e = set.frame.subarray(9 * i + 3 * k, 9 * i + 3 * k + 3);
        expect(local[3 * i + k]).toBeCloseTo(dot(e, rel), 13);
        expect(set.rowTimes(i, k, u)).toBeCloseTo(dot(e, rel), 13);
        expect(set.rowVelocity(i, k)).toBeCloseTo(dot(e, rel), 13);
      }
      expect(un[i]).toBeCloseTo(local[3 * i], 13);
      expect(set.key[i]).toBe(10 + i);
    }
    expect(set.width(-1)).toBe(0);
    expect([0, 1, 2, 3].map((b) => set.width(b))).toEqual([6, 3, 0, 6]);
  });

  it("the factored Delassus operator is s H M⁻¹ Hᵀ (general and mass-block paths)", () => {
    const { sys, set, r } = scene(3);
    const n = sys.numDofs;
    const m = 3 * set.count;
    // H column by column: H e_j through localVelocity; Hᵀ rows through addRowTranspose
    const H = Matrix.zeros(m, n);
    const e = new Float64Array(n);
    const col = new Float64Array(m);
    for (let j = 0; j < n; j++) {
      e.fill(0);
      e[j] = 1;
      set.localVelocity(e, 3, col);
      for (let i = 0; i < m; i++) H.set(i, j, col[i]);
    }
    for (let i = 0; i < set.count; i++)
      for (let k = 0; k < 3; k++) {
        const g = new Float64Array(n);
        set.addRowTranspose(i, k, 1, g);
        for (let j = 0; j < n; j++) expect(g[j]).toBe(H.get(3 * i + k, j));
      }
    // dense M from masses and world inertias, inverted
    const M = Matrix.zeros(n, n);
    for (let b = 0; b < sys.numBodies; b++) {
      const d = sys.dofOffset[b];
      if (d < 0) continue;
      for (let k = 0; k < 3; k++) M.set(d + k, d + k, sys.mass[b]);
      if (sys.kind[b] === BodyKind.RIGID)
        for (let i = 0; i < 3; i++)
          for (let j = 0; j < 3; j++)
            M.set(d + 3 + i, d + 3 + j, sys.inertiaWorld[9 * b + 3 * i + j]);
    }
    const scale = 0.37;
    const W = H.mmul(inverse(M)).mmul(H.transpose()).mul(scale);
    const { yOff, size } = blockOffsets(sys);
    const Y = new Float64Array(size);
    inverseMassBlocks(sys, Y, yOff);
    const x = Float64Array.from({ length: m }, () => 2 * r() - 1);
    const want = W.mmul(Matrix.columnVector(Array.from(x))).getColumn(0);
    for (const massBlocks of [false, true]) {
      set.computeResponse(Y, yOff, 3, massBlocks);
      const out = new Float64Array(m);
      set.delassus(3, scale).multiply(x, out);
      for (let i = 0; i < m; i++) expect(out[i]).toBeCloseTo(want[i], 12);
    }
  });

  it("a triangle side: −Σ w_k Fᵀ v_k on side a, and no factored form", () => {
    const { sys, set } = scene(4);
    const nodes = Int32Array.of(1, 4, 5);
    const weights = Float64Array.of(0.2, 0.5, 0.3);
    expect(set.hasTriangles()).toBe(false);
    set.setTriangle(1, nodes, weights, 0); // contact 1: (P, R1) → (triangle P Q1 Q2, R1)
    expect(set.hasTriangles()).toBe(true);
    const u = new Float64Array(sys.numDofs);
    getVelocity(sys, u);
    const local = new Float64Array(3 * set.count);
    set.localVelocity(u, 3, local);
    const pb = [0, 1, 2].map((k) => set.point[3 + k] + 0.5 * set.gap[1] * set.frame[9 + k]);
    const vb = pointVelocity(sys, 0, pb);
    const va = [0, 1, 2].map((k) =>
      [0, 1, 2].reduce((s, p) => s + weights[p] * sys.vel[3 * nodes[p] + k], 0),
    );
    for (let k = 0; k < 3; k++) {
      const e = set.frame.subarray(9 + 3 * k, 9 + 3 * k + 3);
      expect(local[3 + k]).toBeCloseTo(dot(e, vb) - dot(e, va), 13);
    }
    expect(() => set.delassus(3, 1)).toThrow(/triangle side has no factored form/);
  });
});
