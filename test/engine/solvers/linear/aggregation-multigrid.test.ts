/**
 * The two-level aggregation preconditioner B = D⁻¹ + P Wc⁻¹ Pᵀ (aggregation-multigrid.ts) on
 * spring networks' Newton matrices W = M + c_x Σ k ûûᵀ written out here: the aggregates,
 * B r against D⁻¹ r + P (PᵀWP)⁻¹ Pᵀ r formed densely (and CG's fused direction update and
 * its update of x and r with the first pass against apply), PCG with B against a dense solve (ml-matrix), B symmetric positive definite (also with a
 * coarse term of another W), and the CG iterations against block Jacobi on a 32 × 32
 * stiff cloth (counts, not time).
 */
import { Matrix, solve } from "ml-matrix";
import { describe, expect, it } from "vitest";
import { toDefaultsModel } from "../../../../bench/compare/engines/moreau";
import { clothScene } from "../../../../bench/compare/scene";
import { SchemeCoefficients } from "../../../../src/engine/dynamics/stepper";
import { loadModel } from "../../../../src/engine/index";
import { SparseBlockMatrix } from "../../../../src/engine/math/block-matrix";
import {
  AggregationMultigrid,
  aggregateNodes,
  makeStepKernel,
} from "../../../../src/engine/solvers/linear/aggregation-multigrid";
import {
  CgRun,
  cgVectors,
  confirmNever,
  conjugateGradients,
} from "../../../../src/engine/solvers/linear/cg";
import {
  BlockJacobiPreconditioner,
  type Preconditioner,
} from "../../../../src/engine/solvers/linear/preconditioners";
import { mulberry32 } from "../../../support/random";

/** Newmark's c_x = h² β at h = 1/240 s, β = 0.3025 (the stiff cloth's, s²). */
const CX = 0.3025 / 240 ** 2;

/**
 * W = M + c_x K of an n × n cloth of particles of mass 1/n² kg (spacing 1/(n − 1) m,
 * positions perturbed by up to `wrinkle` m out of plane, so that the springs point in 3-d)
 * with structural and shear springs of stiffness k at rest: K = Σ k ûûᵀ over the springs'
 * [[1, −1], [−1, 1]] pattern. Also its dense form.
 */
function clothMatrix(
  n: number,
  k: number,
  wrinkle: number,
  seed: number,
): { w: SparseBlockMatrix; dense: Matrix } {
  const rand = mulberry32(seed);
  const nb = n * n;
  const x = new Float64Array(3 * nb);
  for (let j = 0; j < n; j++)
    for (let i = 0; i < n; i++) {
      const b = j * n + i;
      x[3 * b] = i / (n - 1);
      x[3 * b + 1] = j / (n - 1);
      x[3 * b + 2] = wrinkle * (2 * rand() - 1);
    }
  const springs: [number, number][] = [];
  for (let j = 0; j < n; j++)
    for (let i = 0; i < n; i++) {
      const b = j * n + i;
      if (i + 1 < n) springs.push([b, b + 1]);
      if (j + 1 < n) springs.push([b, b + n]);
      if (i + 1 < n && j + 1 < n) springs.push([b, b + n + 1]);
      if (i > 0 && j + 1 < n) springs.push([b, b + n - 1]);
    }
  const w = new SparseBlockMatrix(new Array(nb).fill(3));
  for (const [a, b] of springs) {
    w.addBlock(a, b);
    w.addBlock(b, a);
  }
  w.finalize();
  const dense = new Matrix(3 * nb, 3 * nb);
  const mass = 1 / nb;
  for (let b = 0; b < nb; b++)
    for (let r = 0; r < 3; r++) {
      w.addEntry(b, b, r, r, mass);
      dense.set(3 * b + r, 3 * b + r, mass);
    }
  for (const [a, b] of springs) {
    const d = [0, 1, 2].map((r) => x[3 * b + r] - x[3 * a + r]);
    const l = Math.hypot(d[0], d[1], d[2]);
    for (let r = 0; r < 3; r++)
      for (let c = 0; c < 3; c++) {
        const v = (CX * k * d[r] * d[c]) / (l * l);
        for (const [p, q, sign] of [
          [a, a, 1],
          [b, b, 1],
          [a, b, -1],
          [b, a, -1],
        ] as const) {
          w.addEntry(p, q, r, c, sign * v);
          dense.set(3 * p + r, 3 * q + c, dense.get(3 * p + r, 3 * q + c) + sign * v);
        }
      }
  }
  return { w, dense };
}

function randomVector(n: number, seed: number): Float64Array {
  const rand = mulberry32(seed);
  return Float64Array.from({ length: n }, () => 2 * rand() - 1);
}

/** PCG on W x = b from x = 0 to ‖r‖ ≤ tol ‖b‖: the solution and the iterations. */
function pcg(
  w: SparseBlockMatrix,
  m: Preconditioner,
  b: Float64Array,
  tol: number,
): { x: Float64Array; iterations: number } {
  const n = w.size;
  const x = new Float64Array(n);
  const run = new CgRun();
  run.confirm = confirmNever;
  let bb = 0;
  for (let i = 0; i < n; i++) bb += b[i] * b[i];
  const product = { apply: (v: Float64Array, out: Float64Array) => w.multiply(v, out) };
  conjugateGradients(product, m, n, b, x, cgVectors(n), tol * Math.sqrt(bb), 10 * n, run);
  return { x, iterations: run.iterations };
}

function twoLevel(coarseFrom: SparseBlockMatrix, smootherFrom = coarseFrom): AggregationMultigrid {
  const mg = new AggregationMultigrid();
  expect(mg.updateCoarse(coarseFrom)).toBe(true);
  mg.updateSmoother(smootherFrom);
  return mg;
}

describe("aggregation of the node graph", () => {
  it("covers every node with connected aggregates of up to 16 nodes on a grid with diagonals", () => {
    const n = 12;
    const { w } = clothMatrix(n, 1, 0, 1);
    const { aggregateOf, count } = aggregateNodes(w);
    const { rowStart, colBlock } = w.pattern;
    const members: number[][] = Array.from({ length: count }, () => []);
    for (let i = 0; i < n * n; i++) {
      expect(aggregateOf[i]).toBeGreaterThanOrEqual(0);
      expect(aggregateOf[i]).toBeLessThan(count);
      members[aggregateOf[i]].push(i);
    }
    for (const group of members) {
      expect(group.length).toBeGreaterThan(0);
      // connected: a walk over W's edges inside the aggregate reaches all of it
      const seen = new Set([group[0]]);
      const stack = [group[0]];
      while (stack.length > 0) {
        const i = stack.pop() ?? 0;
        for (let k = rowStart[i]; k < rowStart[i + 1]; k++) {
          const j = colBlock[k];
          if (aggregateOf[j] === aggregateOf[i] && !seen.has(j)) {
            seen.add(j);
            stack.push(j);
          }
        }
      }
      expect(seen.size).toBe(group.length);
    }
    // pass 1 roots an aggregate at (1, 1), (4, 1), … with its 8 neighbours: the 12 × 12
    // grid's 16 roots cover it exactly
    // pass 1 roots aggregates of a node and its 8 neighbours (fewer at the border), pass 2
    // attaches what is left: 16 aggregates of 4 to 16 nodes on 12 × 12
    expect(count).toBe(16);
    for (const group of members) expect(group.length).toBeLessThanOrEqual(16);
  });
});

describe("PCG with the two-level preconditioner", () => {
  it("solves a spring network's W as the dense solve does", () => {
    const { w, dense } = clothMatrix(7, 1e4, 0.02, 2);
    const b = randomVector(w.size, 3);
    const { x } = pcg(w, twoLevel(w), b, 1e-13);
    const ref = solve(dense, Matrix.columnVector(Array.from(b))).to1DArray();
    const scale = Math.max(...ref.map(Math.abs));
    for (let i = 0; i < w.size; i++) expect(Math.abs(x[i] - ref[i])).toBeLessThan(1e-9 * scale);
  });

  it("applies D⁻¹ r + P (Pᵀ W P)⁻¹ Pᵀ r formed densely; with CG's next direction, the same numbers", () => {
    const { w, dense } = clothMatrix(6, 1e4, 0.02, 6);
    const n = w.size;
    const mg = twoLevel(w);
    const { aggregateOf, aggregates } = mg;
    // P (n × 3·aggregates): I₃ at (node, its aggregate); D: W's diagonal blocks
    const p = new Matrix(n, 3 * aggregates);
    const d = new Matrix(n, n);
    for (let i = 0; i < n / 3; i++)
      for (let r = 0; r < 3; r++) {
        p.set(3 * i + r, 3 * aggregateOf[i] + r, 1);
        for (let c = 0; c < 3; c++) d.set(3 * i + r, 3 * i + c, dense.get(3 * i + r, 3 * i + c));
      }
    const coarse = p.transpose().mmul(dense).mmul(p);
    const r = randomVector(n, 7);
    const rv = Matrix.columnVector(Array.from(r));
    const ref = solve(d, rv)
      .add(p.mmul(solve(coarse, p.transpose().mmul(rv))))
      .to1DArray();
    const z = new Float64Array(n);
    const rz = mg.apply(r, z);
    const scale = Math.max(...ref.map(Math.abs));
    let rRef = 0;
    for (let i = 0; i < n; i++) {
      expect(Math.abs(z[i] - ref[i])).toBeLessThan(1e-10 * scale);
      rRef += r[i] * ref[i];
    }
    expect(rz).toBeCloseTo(rRef, 10);
    // applyDirection: z as apply gives it, p ← z + (rᵀz / rzPrevious) p, bit for bit
    const dir = randomVector(n, 8);
    const expected = Float64Array.from(dir, (pi, i) => z[i] + (rz / 0.37) * pi);
    const z2 = new Float64Array(n);
    expect(mg.applyDirection(r, z2, dir, 0.37)).toBe(rz);
    expect(Array.from(z2)).toEqual(Array.from(z));
    expect(Array.from(dir)).toEqual(Array.from(expected));
  });

  it("within CG's update of x and r (stepResidual, completeDirection), the numbers of apply", () => {
    const { w } = clothMatrix(6, 1e4, 0.02, 9);
    const n = w.size;
    const mg = twoLevel(w);
    const x = randomVector(n, 11);
    const p = randomVector(n, 12);
    const r = randomVector(n, 13);
    const q = randomVector(n, 14);
    const alpha = 0.731;
    // the update written out
    const x1 = Float64Array.from(x, (xi, i) => xi + alpha * p[i]);
    const r1 = Float64Array.from(r, (ri, i) => ri - alpha * q[i]);
    let rr = 0;
    for (let i = 0; i < n; i++) rr += r1[i] * r1[i];
    // B r1 from apply (checked against the dense formula above), and the next direction
    const zRef = new Float64Array(n);
    const rzRef = mg.apply(r1, zRef);
    const pRef = Float64Array.from(p, (pi, i) => zRef[i] + (rzRef / 0.37) * pi);
    const z = new Float64Array(n);
    // the scalars in and out through mg.scalars: [α, rᵀr, rᵀz]
    mg.scalars[0] = alpha;
    mg.stepResidual(x, p, r, q, z);
    expect(mg.scalars[1]).toBe(rr);
    expect(Array.from(x)).toEqual(Array.from(x1));
    expect(Array.from(r)).toEqual(Array.from(r1));
    mg.scalars[2] = 0.37;
    mg.completeDirection(z, p);
    expect(mg.scalars[2]).toBe(rzRef);
    expect(Array.from(z)).toEqual(Array.from(zRef));
    expect(Array.from(p)).toEqual(Array.from(pRef));
  });

  it("the process' step kernel: the same numbers as the block-Jacobi step with the restriction and the direction", () => {
    const { w } = clothMatrix(6, 1e4, 0.02, 15);
    const n = w.size;
    const nb = n / 3;
    const smoother = new BlockJacobiPreconditioner();
    smoother.update(w);
    const groupOf = Int32Array.from({ length: nb }, (_, i) => (7 * i) % 5);
    const [x, p, r, q] = [16, 17, 18, 19].map((seed) => randomVector(n, seed));
    const alpha = -0.413;
    // the reference: the update written out, z = D⁻¹ r from apply, the sums by group
    const x1 = Float64Array.from(x, (xi, i) => xi + alpha * p[i]);
    const r1 = Float64Array.from(r, (ri, i) => ri - alpha * q[i]);
    let rr = 0;
    for (let i = 0; i < n; i++) rr += r1[i] * r1[i];
    const zRef = new Float64Array(n);
    const rzRef = smoother.apply(r1, zRef);
    const sumsRef = new Float64Array(15);
    for (let i = 0; i < nb; i++)
      for (let c = 0; c < 3; c++) sumsRef[3 * groupOf[i] + c] += r1[3 * i + c];
    const z = new Float64Array(n);
    const sums = new Float64Array(15);
    const xc = randomVector(15, 20);
    // [α, rᵀr, (rᵀz), rᵀD⁻¹r, β]
    const scalars = Float64Array.of(alpha, 0, 0, 0, 0.77);
    const kernel = makeStepKernel(p, r, q, z, smoother.inverses3, groupOf, sums, xc, scalars);
    kernel.run(x);
    expect(scalars[1]).toBe(rr);
    expect(scalars[3]).toBe(rzRef);
    expect(Array.from(x)).toEqual(Array.from(x1));
    expect(Array.from(r)).toEqual(Array.from(r1));
    expect(Array.from(z)).toEqual(Array.from(zRef));
    for (let g = 0; g < 15; g++) expect(sums[g]).toBeCloseTo(sumsRef[g], 14);
    // the direction: z += P xc, p ← z + β p
    const zNext = Float64Array.from(
      z,
      (zi, i) => zi + xc[3 * groupOf[Math.floor(i / 3)] + (i % 3)],
    );
    const pNext = Float64Array.from(p, (pi, i) => zNext[i] + 0.77 * pi);
    kernel.direction();
    expect(Array.from(z)).toEqual(Array.from(zNext));
    expect(Array.from(p)).toEqual(Array.from(pNext));
  });

  it("is symmetric positive definite, also with the coarse term of another W", () => {
    const { w } = clothMatrix(8, 1e4, 0.02, 4);
    const { w: other } = clothMatrix(8, 3e3, 0.05, 5);
    for (const mg of [twoLevel(w), twoLevel(other, w)]) {
      const n = w.size;
      const bx = new Float64Array(n);
      const by = new Float64Array(n);
      for (let trial = 0; trial < 5; trial++) {
        const x = randomVector(n, 10 + trial);
        const y = randomVector(n, 20 + trial);
        const xx = mg.apply(x, bx);
        mg.apply(y, by);
        let xBy = 0;
        let yBx = 0;
        let direct = 0;
        for (let i = 0; i < n; i++) {
          xBy += x[i] * by[i];
          yBx += y[i] * bx[i];
          direct += x[i] * bx[i];
        }
        expect(Math.abs(xBy - yBx)).toBeLessThan(1e-12 * (Math.abs(xBy) + Math.abs(yBx)));
        expect(xx).toBeCloseTo(direct, 10);
        expect(xx).toBeGreaterThan(0);
      }
    }
  });

  it("takes far fewer CG iterations than block Jacobi on the 32 × 32 stiff cloth's W", () => {
    // the benchmark's S3-32-stiff (k = 1e4 N/m, 1 kg, h = 1/240 s, Newmark β = 0.3025,
    // γ = 0.6: its defaults) hanging from its fixed row after 60 steps, and its Newton
    // matrix W = M + c_v D + c_x K there, as the stepper assembles it for CG
    const sim = loadModel(toDefaultsModel(clothScene(32, 1e4)));
    sim.step(60);
    const h = 1 / 240;
    const c = new SchemeCoefficients();
    c.w = 1;
    c.cx = h * h * 0.3025;
    c.cv = h * 0.6;
    const stepper = (
      sim as unknown as {
        stepper: {
          assembleIterationMatrix(c: SchemeCoefficients): void;
          matrix: SparseBlockMatrix;
        };
      }
    ).stepper;
    stepper.assembleIterationMatrix(c);
    const w = stepper.matrix;
    const jacobi = new BlockJacobiPreconditioner();
    jacobi.update(w);
    const mg = twoLevel(w);
    // a smooth right-hand side (gravity-like: the residual of a falling cloth) and a rough one
    const smooth = new Float64Array(w.size);
    for (let i = 2; i < w.size; i += 3) smooth[i] = -1;
    const rough = randomVector(w.size, 7);
    for (const b of [smooth, rough])
      for (const tol of [1e-2, 1e-6]) {
        const withJacobi = pcg(w, jacobi, b, tol).iterations;
        const withTwoLevel = pcg(w, mg, b, tol).iterations;
        expect(withTwoLevel).toBeLessThan(0.5 * withJacobi);
      }
  }, 20_000);
});
