/**
 * Linear tetrahedra (src/engine/forces/fem/tet.ts): the signed volume, the reference
 * inverse B = D_m⁻¹ and the deformation gradient F = D_s B against ml-matrix's
 * determinant and inverse and against affine maps x = A X + c, whose F is A exactly.
 */
import { determinant, inverse, Matrix } from "ml-matrix";
import { describe, expect, it } from "vitest";
import {
  deformationGradient,
  tetReference,
  tetSixVolume,
} from "../../../../src/engine/forces/fem/tet";
import { mulberry32 } from "../../../support/random";

/** D_m = [X₁ − X₀, X₂ − X₀, X₃ − X₀] (columns) of four points given 3 per node. */
function edgeMatrix(p: ArrayLike<number>, nodes: readonly number[]): Matrix {
  const m = new Matrix(3, 3);
  for (let a = 1; a < 4; a++)
    for (let i = 0; i < 3; i++) m.set(i, a - 1, p[3 * nodes[a] + i] - p[3 * nodes[0] + i]);
  return m;
}

/** A random tetrahedron, its nodes swapped if needed so that det D_m > 0. */
function randomTet(rng: () => number): Float64Array {
  const p = Float64Array.from({ length: 12 }, () => 2 * rng() - 1);
  if (determinant(edgeMatrix(p, [0, 1, 2, 3])) < 0)
    for (let i = 0; i < 3; i++) [p[6 + i], p[9 + i]] = [p[9 + i], p[6 + i]];
  return p;
}

describe("tetSixVolume", () => {
  it("is det D_m: 1 for the unit corner tet, −1 mirrored, ml-matrix's determinant at random", () => {
    const unit = [0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1];
    expect(tetSixVolume(unit, 0, 1, 2, 3)).toBe(1);
    expect(tetSixVolume(unit, 0, 1, 3, 2)).toBe(-1);
    expect(tetSixVolume(unit, 0, 1, 1, 2)).toBe(0);
    const rng = mulberry32(3);
    for (let k = 0; k < 10; k++) {
      const p = Float64Array.from({ length: 15 }, () => 4 * rng() - 2);
      const nodes = [4, 0, 2, 1]; // any four of the five points, in any order
      expect(tetSixVolume(p, nodes[0], nodes[1], nodes[2], nodes[3])).toBeCloseTo(
        determinant(edgeMatrix(p, nodes)),
        12,
      );
    }
  });
});

describe("tetReference", () => {
  it("writes B = D_m⁻¹ at 9e and returns V = det D_m / 6", () => {
    const rng = mulberry32(7);
    const rest = new Float64Array([...randomTet(rng), ...randomTet(rng)]);
    const nodes = Int32Array.of(0, 1, 2, 3, 4, 5, 6, 7);
    const b = new Float64Array(18);
    for (let e = 0; e < 2; e++) {
      const dm = edgeMatrix(rest, Array.from(nodes.subarray(4 * e, 4 * e + 4)));
      expect(tetReference(rest, nodes, e, b)).toBeCloseTo(determinant(dm) / 6, 13);
      const inv = inverse(dm).to1DArray();
      for (let k = 0; k < 9; k++) expect(b[9 * e + k]).toBeCloseTo(inv[k], 10);
    }
  });

  it("throws for a negatively oriented and for a flat element, naming it", () => {
    const b = new Float64Array(9);
    const unit = [0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1];
    expect(() => tetReference(unit, [0, 1, 3, 2], 0, b)).toThrow(/element 0 .*non-positive/);
    // the fourth node in the plane of the first three (a relative volume of 1e-14)
    const flat = [0, 0, 0, 1, 0, 0, 0, 1, 0, 0.3, 0.3, 1e-14];
    expect(() => tetReference(flat, [0, 1, 2, 3], 0, b)).toThrow(/degenerate/);
  });
});

describe("deformationGradient", () => {
  it("of an affine map x = A X + c is A, through the index table `at`", () => {
    const rng = mulberry32(11);
    const rest = randomTet(rng);
    const b = new Float64Array(9);
    tetReference(rest, [0, 1, 2, 3], 0, b);
    const A = Array.from({ length: 9 }, () => 2 * rng() - 1);
    const c = [0.5, -1, 2];
    // the current positions of the element's nodes at body slots 3, 0, 5, 1 of x
    const at = [3, 0, 5, 1];
    const x = new Float64Array(18).fill(Number.NaN);
    for (let a = 0; a < 4; a++)
      for (let i = 0; i < 3; i++)
        x[3 * at[a] + i] =
          A[3 * i] * rest[3 * a] +
          A[3 * i + 1] * rest[3 * a + 1] +
          A[3 * i + 2] * rest[3 * a + 2] +
          c[i];
    const f = new Float64Array(9);
    deformationGradient(x, at, b, 0, f);
    for (let k = 0; k < 9; k++) expect(f[k]).toBeCloseTo(A[k], 12);
    // the rest positions themselves: F = I
    deformationGradient(rest, [0, 1, 2, 3], b, 0, f);
    expect(Array.from(f)).toEqual([1, 0, 0, 0, 1, 0, 0, 0, 1].map((v) => expect.closeTo(v, 13)));
  });
});
