/**
 * The dense Delassus matrix from W's block LDLᵀ factors (src/engine/contact/ldlt-delassus.ts:
 * H W⁻¹ Hᵀ = (L⁻¹ P Hᵀ)ᵀ D⁻¹ (L⁻¹ P Hᵀ) with sparse forward sweeps over elimination-tree
 * reaches).
 *
 *  - Against a dense reference: W a random sparse SPD block matrix, H written out in the
 *    test from the contact frames (a contact's row k is +e_k on side b's particle, −e_k on
 *    side a's, −w_i e_k on a triangle side's node i), H W⁻¹ Hᵀ by an LU solve of ml-matrix;
 *    with friction (rows n, t1, t2) and without (n only), contacts with the world, between
 *    two particles and against triangles, to 1e-10 of the largest entry.
 *  - In a simulation: a fem block of 32 nodes (96 unknowns: factored PCG, above the dense
 *    size) resting on a plane under nonsmooth contact with friction is stepped through this
 *    path (no per-row solve), and its contact forces carry its weight, Σ P_n n_z / h = m g,
 *    to the solver tolerance.
 */
import { Matrix, solve } from "ml-matrix";
import { afterEach, describe, expect, it, vi } from "vitest";
import { ContactSet } from "../../../src/engine/contact/contact-set";
import { LdltDelassus } from "../../../src/engine/contact/ldlt-delassus";
import { loadModel } from "../../../src/engine/index";
import { BodySystem } from "../../../src/engine/model/body-system";
import { BlockLdlt } from "../../../src/engine/solvers/linear/block-ldlt";
import { bodyInit } from "../../support/body-init";
import { mulberry32 } from "../../support/random";
import { blockMatrix, randomSpdBlocks } from "../solvers/linear/block-matrices";

afterEach(() => {
  vi.restoreAllMocks();
});

/** nb particles at random points of the unit cube. */
function particles(nb: number, rand: () => number): BodySystem {
  return new BodySystem(
    Array.from({ length: nb }, (_, k) =>
      bodyInit(`p${k}`, "particle", { position: [rand(), rand(), rand()] }),
    ),
  );
}

/** A contact of the set: its sides' particles (−1: the world) or a triangle side. */
interface Contact {
  a: number;
  b: number;
  triangle?: { nodes: [number, number, number]; weights: [number, number, number] };
}

/** The set of `contacts`, each with a random unit normal. */
function contactSet(sys: BodySystem, contacts: Contact[], rand: () => number): ContactSet {
  const set = new ContactSet(sys);
  set.reset(contacts.length);
  for (const c of contacts) {
    const v = [rand() - 0.5, rand() - 0.5, rand() - 0.5];
    const l = Math.hypot(v[0], v[1], v[2]);
    const normal = Float64Array.from(v, (x) => x / l);
    const point = Float64Array.from([rand(), rand(), rand()]);
    const i = set.push(
      c.a,
      c.b,
      new Float64Array([set.count]),
      normal,
      point,
      new Float64Array([0]),
      0,
    );
    if (c.triangle)
      set.setTriangle(
        i,
        Int32Array.from(c.triangle.nodes),
        Float64Array.from(c.triangle.weights),
        0,
      );
  }
  return set;
}

/** H (m × 3nb) written out from the frames: row dim·i + k of contact i along e_k (see top). */
function jacobian(set: ContactSet, contacts: Contact[], dim: number, nb: number): Matrix {
  const H = Matrix.zeros(dim * contacts.length, 3 * nb);
  contacts.forEach((c, i) => {
    for (let k = 0; k < dim; k++) {
      const e = Array.from(set.frame.subarray(9 * i + 3 * k, 9 * i + 3 * k + 3));
      const add = (particle: number, weight: number) => {
        if (particle < 0) return;
        for (let d = 0; d < 3; d++)
          H.set(
            dim * i + k,
            3 * particle + d,
            H.get(dim * i + k, 3 * particle + d) + weight * e[d],
          );
      };
      add(c.b, 1);
      if (c.triangle) for (let t = 0; t < 3; t++) add(c.triangle.nodes[t], -c.triangle.weights[t]);
      else add(c.a, -1);
    }
  });
  return H;
}

describe("H W⁻¹ Hᵀ from W's block LDLᵀ factors", () => {
  it("equals a dense solve's, with and without friction, for world, particle and triangle contacts", () => {
    const rand = mulberry32(4242);
    const nb = 60;
    const { pairs, dense } = randomSpdBlocks(nb, 3, 17);
    const W = blockMatrix(nb, pairs, dense);
    const ldlt = new BlockLdlt();
    expect(ldlt.factor(W)).toBe(true);
    const sys = particles(nb, rand);
    const contacts: Contact[] = [
      { a: -1, b: 3 },
      { a: -1, b: 41 },
      { a: 7, b: 12 },
      { a: 59, b: 0 },
      { a: 20, b: 33, triangle: { nodes: [20, 21, 50], weights: [0.2, 0.5, 0.3] } },
      // a weight of exactly 0 (the vertex over the triangle's edge): node 9 takes no part
      { a: 8, b: 2, triangle: { nodes: [8, 9, 44], weights: [0.6, 0, 0.4] } },
      { a: -1, b: 12 },
    ];
    const set = contactSet(sys, contacts, rand);
    const delassus = new LdltDelassus();
    for (const dim of [3, 1] as const) {
      const H = jacobian(set, contacts, dim, nb);
      const reference = H.mmul(solve(dense, H.transpose()));
      const m = dim * contacts.length;
      const scale = 0.7;
      const out = new Float64Array(m * m);
      const rhs = new Float64Array(3 * nb).fill(1); // scratch: dirty on entry
      delassus.build(ldlt.factors(), set, dim, scale, rhs, out);
      expect(rhs.every((x) => x === 0)).toBe(true);
      const largest = Math.max(...reference.to1DArray().map(Math.abs));
      for (let p = 0; p < m; p++)
        for (let q = 0; q < m; q++)
          expect(
            Math.abs(out[p * m + q] - scale * reference.get(p, q)),
            `dim ${dim}, entry (${p}, ${q})`,
          ).toBeLessThan(1e-10 * scale * largest);
    }
  });

  it("steps a fem block resting on a plane (nsc, friction): Σ P_n n_z / h = m g", () => {
    const build = vi.spyOn(LdltDelassus.prototype, "build");
    const h = 0.005;
    const size = [0.3, 0.3, 0.1];
    const sim = loadModel({
      gravity: [0, 0, -9.81],
      bodies: [
        { id: "floor", fixed: true, shapes: [{ type: "plane", normal: [0, 0, 1], offset: 0 }] },
      ],
      fem: [
        {
          id: "block",
          // 4 × 4 × 2 = 32 nodes, the bottom 16 on the plane (1 mm above it)
          box: { size, resolution: [3, 3, 1], center: [0, 0, 0.051] },
          density: 1000,
          youngModulus: 1e5,
          poissonRatio: 0.3,
        },
      ],
      contact: { method: "nsc", friction: 0.5 },
      solver: { integrator: "moreau-jean", dt: h, theta: 1, tolerance: 1e-10, maxIterations: 2000 },
    });
    sim.step(200);
    expect(build).toHaveBeenCalled();
    const st = sim.state();
    expect(st.contacts.length).toBe(16);
    let force = 0;
    for (const c of st.contacts) force += c.normalForce * c.normal[2];
    const weight = size[0] * size[1] * size[2] * 1000 * 9.81;
    // measured: 1e-15
    expect(Math.abs(force / weight - 1)).toBeLessThan(1e-6);
  });
});
