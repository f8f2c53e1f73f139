/**
 * ParticleSpringSet's symmetric Jacobian approximation and its matrix-free products:
 *  - symmetric mode equals the formula A⁺ = −k ûûᵀ − (max(s, 0)/l)(I − ûûᵀ), B = −c ûûᵀ
 *    written out here, is SPD-claimed and −A⁺ ⪰ 0 in every state (compressed included);
 *  - undamped and in tension it is the exact Jacobian (finite differences);
 *  - addJacobianProduct and the blocks setJacobianProduct adds (diagonal, or all) equal the assembled s_x ∂f/∂x + s_v ∂f/∂v
 *    times a vector / its diagonal blocks, in both modes, also with the springs in runs
 *    of moving and still ends (the product's two loops); announced before the forces,
 *    the product the law computes with them is the one pinned, kept while the springs
 *    are evaluated at another state;
 *  - the exact Jacobians of every block kind against finite differences, and the forces
 *    and energy equal one SpringEffector per spring;
 *  - addExplicitRows (symplectic Euler's stability bound, its largest row) above the largest eigenvalues
 *    of the assembled M^{-1/2} K M^{-1/2} and M^{-1/2} D M^{-1/2} (ml-matrix) in random
 *    states, and k/m, c/m exactly for one particle on one spring.
 */
import { EigenvalueDecomposition, Matrix } from "ml-matrix";
import { describe, expect, it } from "vitest";
import {
  type ParticleSpring,
  ParticleSpringSet,
} from "../../../src/engine/forces/particle-springs";
import { SpringEffector } from "../../../src/engine/forces/spring";
import { SparseBlockMatrix } from "../../../src/engine/math/block-matrix";
import { MatrixType } from "../../../src/engine/solvers/linear/linear-solver";
import { mulberry32 } from "../../support/random";
import {
  checkJacobians,
  denseJacobian,
  expectExactJacobians,
  explicitBound,
  generalizedForce,
  highestMode,
  particle,
  randomizeState,
  system,
} from "./jacobian-check";

const four = () =>
  system(
    particle("p", 1, [0, 0, 0]),
    particle("q", 2, [1, 0.2, 0]),
    particle("r", 0.5, [0.4, 1, 0.3]),
    particle("anchor", 1, [2, 0, 1], true),
  );

/**
 * The four springs on `four`, with each one's damping (N s/m) and rest length (m): p–q
 * (40 N/m, attached at pointOnQ in q's frame), q–r (25), the ground point (0, 0, 1)–r (10)
 * and anchor–p (15).
 */
function fourSprings(
  damping: readonly number[],
  restLength: readonly number[],
  pointOnQ: readonly number[] = [0, 0, 0],
): ParticleSpring[] {
  const ends: [number, readonly number[], number, readonly number[], number][] = [
    [0, [0, 0, 0], 1, pointOnQ, 40],
    [1, [0, 0, 0], 2, [0, 0, 0], 25],
    [-1, [0, 0, 1], 2, [0, 0, 0], 10],
    [3, [0, 0, 0], 0, [0, 0, 0], 15],
  ];
  return ends.map(([bodyA, pointA, bodyB, pointB, stiffness], i) => ({
    bodyA,
    pointA,
    bodyB,
    pointB,
    stiffness,
    damping: damping[i],
    restLength: restLength[i],
  }));
}

/** One damping and one rest length for all four springs (q–r keeps rest length 0). */
const springs = (damping: number, rest: number): ParticleSpring[] =>
  fourSprings([damping, damping, damping, damping], [rest, 0, rest, rest]);

function symmetricSet(sys: ReturnType<typeof four>, damping: number, rest: number) {
  const set = new ParticleSpringSet(sys, "springs", springs(damping, rest));
  set.symmetricJacobian = true;
  return set;
}

describe("ParticleSpringSet symmetric Jacobian", () => {
  it("undamped and in tension, it is the exact Jacobian (FD) and SPD", () => {
    // rest length 0.05 ≪ the random separations (box ±1 m): every axial spring is stretched
    const res = checkJacobians(four, (s) => symmetricSet(s, 0, 0.05), { configurations: 6 });
    for (const e of res.position) expect(e).toBeLessThan(1e-6);
    expect(res.types.every((t) => t === MatrixType.SPD)).toBe(true);
  });

  it("equals −k ûûᵀ − (max(s,0)/l) P and −c ûûᵀ, with −A⁺ ⪰ 0, compressed and damped", () => {
    const rng = mulberry32(4);
    let compressed = 0;
    for (let trial = 0; trial < 8; trial++) {
      const sys = system(particle("p", 1, [0, 0, 0]), particle("q", 1, [1, 0, 0]));
      const k = 40;
      const c = 1.5;
      const rest = 1.2;
      const set = new ParticleSpringSet(sys, "s", [
        {
          bodyA: 0,
          pointA: [0, 0, 0],
          bodyB: 1,
          pointB: [0, 0, 0],
          stiffness: k,
          damping: c,
          restLength: rest,
        },
      ]);
      set.symmetricJacobian = true;
      randomizeState(sys, rng, 1, 1.5);
      generalizedForce(sys, set, 0);
      const d = [0, 1, 2].map((i) => sys.pos[3 + i] - sys.pos[i]);
      const v = [0, 1, 2].map((i) => sys.vel[3 + i] - sys.vel[i]);
      const l = Math.hypot(d[0], d[1], d[2]);
      const u = d.map((x) => x / l);
      const s = k * (l - rest) + c * (u[0] * v[0] + u[1] * v[1] + u[2] * v[2]);
      if (s < 0) compressed++;
      const sp = Math.max(s, 0) / l;
      const jp = denseJacobian(sys, set, "position");
      const jv = denseJacobian(sys, set, "velocity");
      for (let i = 0; i < 3; i++)
        for (let j = 0; j < 3; j++) {
          const uu = u[i] * u[j];
          const a = -k * uu - sp * ((i === j ? 1 : 0) - uu);
          // block (b, b) = A, (b, a) = −A (b = particle q, dofs 3..5)
          expect(jp[(3 + i) * 6 + 3 + j]).toBeCloseTo(a, 10);
          expect(jp[(3 + i) * 6 + j]).toBeCloseTo(-a, 10);
          expect(jv[(3 + i) * 6 + 3 + j]).toBeCloseTo(-c * uu, 10);
        }
      const negJ = new Matrix(6, 6);
      for (let i = 0; i < 6; i++) for (let j = 0; j < 6; j++) negJ.set(i, j, -jp[i * 6 + j]);
      const ev = new EigenvalueDecomposition(negJ, { assumeSymmetric: true }).realEigenvalues;
      expect(Math.min(...ev)).toBeGreaterThan(-1e-10);
      expect(set.jacobianType).toBe(MatrixType.SPD);
    }
    expect(compressed).toBeGreaterThan(0);
  });

  it("switched at one state, the assembled Jacobian is the new mode's (no stale blocks)", () => {
    const rng = mulberry32(31);
    const sys = four();
    randomizeState(sys, rng);
    const set = new ParticleSpringSet(sys, "s", springs(0.8, 0.9));
    const exact = denseJacobian(sys, set, "position");
    set.symmetricJacobian = true;
    const switched = denseJacobian(sys, set, "position");
    const fresh = symmetricSet(sys, 0.8, 0.9);
    expect(Array.from(switched)).toEqual(Array.from(denseJacobian(sys, fresh, "position")));
    expect(Array.from(switched)).not.toEqual(Array.from(exact));
  });

  it("changes the Jacobian, never the force", () => {
    const a = four();
    const b = four();
    const exact = new ParticleSpringSet(a, "s", springs(0.8, 0.9));
    const sym = symmetricSet(b, 0.8, 0.9);
    const rng = mulberry32(2);
    randomizeState(a, rng);
    b.pos.set(a.pos);
    b.vel.set(a.vel);
    const fa = generalizedForce(a, exact, 0);
    const fb = generalizedForce(b, sym, 0);
    expect(Array.from(fb)).toEqual(Array.from(fa));
    expect(exact.jacobianType).toBe(MatrixType.GENERAL);
  });
});

/** J x (onto a non-zero `out`: products add) and diag(J) against the dense jp + jv. */
function expectProduct(
  set: ParticleSpringSet,
  n: number,
  jp: Float64Array,
  jv: Float64Array,
  x: Float64Array,
  diag: SparseBlockMatrix,
): void {
  const out = Float64Array.from({ length: n }, (_, i) => i);
  set.addJacobianProduct(x, out);
  for (let i = 0; i < n; i++) {
    let ref = i;
    for (let j = 0; j < n; j++) ref += (jp[i * n + j] + jv[i * n + j]) * x[j];
    expect(out[i]).toBeCloseTo(ref, 11);
  }
  for (let b = 0; b < diag.numBlocks; b++) {
    const o = diag.blockOffset[b];
    const off = diag.offsetOf(b, b);
    for (let r = 0; r < 3; r++)
      for (let c = 0; c < 3; c++)
        expect(diag.values[off + 3 * r + c]).toBeCloseTo(
          jp[(o + r) * n + o + c] + jv[(o + r) * n + o + c],
          11,
        );
  }
}

function emptyDiagonal(sys: ReturnType<typeof four>): SparseBlockMatrix {
  const diag = new SparseBlockMatrix(sys.blockSizes);
  diag.finalize();
  diag.clear();
  return diag;
}

describe("ParticleSpringSet matrix-free products", () => {
  const sx = -0.3;
  const sv = -0.05;
  /**
   * `four` at a random state with two sets of springs(0.9, 0.7) in the mode given: `set`,
   * whose products are checked, and `plain`, never asked for a product, whose assembled
   * s_x ∂f/∂x and s_v ∂f/∂v (jp, jv; n × n) are the reference.
   */
  const productCase = (symmetric: boolean, rng: () => number) => {
    const sys = four();
    const set = new ParticleSpringSet(sys, "s", springs(0.9, 0.7));
    const plain = new ParticleSpringSet(sys, "plain", springs(0.9, 0.7));
    set.symmetricJacobian = symmetric;
    plain.symmetricJacobian = symmetric;
    randomizeState(sys, rng);
    const n = sys.numDofs;
    const jp = denseJacobian(sys, plain, "position", sx);
    const jv = denseJacobian(sys, plain, "velocity", sv);
    return { sys, set, plain, n, jp, jv };
  };
  for (const symmetric of [false, true]) {
    it(`J x and diag(J) equal the assembled s_x ∂f/∂x + s_v ∂f/∂v (symmetric ${symmetric})`, () => {
      const rng = mulberry32(12);
      for (let trial = 0; trial < 4; trial++) {
        const { sys, set, n, jp, jv } = productCase(symmetric, rng);
        const x = Float64Array.from({ length: n }, () => 2 * rng() - 1);
        const diag = emptyDiagonal(sys);
        set.setJacobianProduct(sx, sv, diag);
        expectProduct(set, n, jp, jv, x, diag);
      }
    });

    it(`into a matrix with every block (the multigrid's W), all of J's blocks; alternating with the diagonal one, both stay right (symmetric ${symmetric})`, () => {
      const rng = mulberry32(14);
      for (let trial = 0; trial < 3; trial++) {
        const { sys, set, n, jp, jv } = productCase(symmetric, rng);
        const full = new SparseBlockMatrix(sys.blockSizes);
        set.addSolveBlocks(full);
        full.finalize();
        for (let round = 0; round < 2; round++) {
          full.clear();
          set.setJacobianProduct(sx, sv, full);
          for (let bi = 0; bi < full.numBlocks; bi++)
            for (let bj = 0; bj < full.numBlocks; bj++) {
              const off = full.offsetOf(bi, bj);
              const [oi, oj] = [full.blockOffset[bi], full.blockOffset[bj]];
              for (let r = 0; r < 3; r++)
                for (let c = 0; c < 3; c++) {
                  const ref = jp[(oi + r) * n + oj + c] + jv[(oi + r) * n + oj + c];
                  // a block not reserved must be zero in J
                  if (off < 0) expect(ref).toBe(0);
                  else expect(full.values[off + 3 * r + c]).toBeCloseTo(ref, 11);
                }
            }
          const diag = emptyDiagonal(sys);
          set.setJacobianProduct(sx, sv, diag);
          const x = Float64Array.from({ length: n }, () => 2 * rng() - 1);
          expectProduct(set, n, jp, jv, x, diag);
        }
      }
    });

    it(`announced: the product computed with the forces is pinned, and stays while the springs are evaluated elsewhere (symmetric ${symmetric})`, () => {
      const rng = mulberry32(13);
      for (let trial = 0; trial < 4; trial++) {
        const { sys, set, plain, n, jp, jv } = productCase(symmetric, rng);
        set.announceJacobianProduct(sx, sv);
        // the law with the product request gives the same forces
        expect(Array.from(generalizedForce(sys, set, 0))).toEqual(
          Array.from(generalizedForce(sys, plain, 0)),
        );
        const diag = emptyDiagonal(sys);
        set.setJacobianProduct(sx, sv, diag);
        randomizeState(sys, rng);
        generalizedForce(sys, set, 0);
        const x = Float64Array.from({ length: n }, () => 2 * rng() - 1);
        expectProduct(set, n, jp, jv, x, diag);
      }
    });
  }
});

describe("ParticleSpringSet matrix-free product by runs of springs", () => {
  it("springs alternating between two moving ends and a still one: J x equals the dense s_x ∂f/∂x + s_v ∂f/∂v", () => {
    // ground–r, p–q, anchor–p, q–r: four runs (still, moving, still, moving), each end
    // kind at a run's border
    const order = [2, 0, 3, 1];
    const base = springs(0.9, 0.7);
    const alternating = order.map((i) => base[i]);
    const rng = mulberry32(21);
    for (const symmetric of [false, true])
      for (let trial = 0; trial < 3; trial++) {
        const sys = four();
        const set = new ParticleSpringSet(sys, "s", alternating);
        const plain = new ParticleSpringSet(sys, "plain", base);
        set.symmetricJacobian = symmetric;
        plain.symmetricJacobian = symmetric;
        randomizeState(sys, rng);
        const n = sys.numDofs;
        const jp = denseJacobian(sys, plain, "position", -0.3);
        const jv = denseJacobian(sys, plain, "velocity", -0.05);
        const diag = emptyDiagonal(sys);
        set.setJacobianProduct(-0.3, -0.05, diag);
        const x = Float64Array.from({ length: n }, () => 2 * rng() - 1);
        expectProduct(set, n, jp, jv, x, diag);
      }
  });
});

describe("ParticleSpringSet Jacobians (FD check)", () => {
  // per-spring damping and rest lengths (the set above shares one of each)
  const mixed = fourSprings([1.5, 0.7, 0, 0.3], [0.8, 0, 0.5, 1.1], [0.1, 0, 0]);
  it("every block (particle–particle, zero length, ground, fixed body) matches finite differences", () => {
    const res = checkJacobians(four, (s) => new ParticleSpringSet(s, "springs", mixed), {
      configurations: 6,
    });
    expectExactJacobians(res, true);
  });
  it("gives the same forces as one SpringEffector per spring", () => {
    const a = four();
    const b = four();
    const set = new ParticleSpringSet(a, "springs", mixed);
    const singles = mixed.map((s, i) => new SpringEffector(b, { id: `s${i}`, ...s }));
    a.force.fill(0);
    b.force.fill(0);
    set.applyForces(0);
    for (const s of singles) s.applyForces(0);
    for (let i = 0; i < a.force.length; i++) expect(a.force[i]).toBeCloseTo(b.force[i], 13);
    expect(set.potentialEnergy()).toBeCloseTo(
      singles.reduce((e, s) => e + s.potentialEnergy(), 0),
      13,
    );
  });
});

describe("ParticleSpringSet addExplicitRows", () => {
  it("bounds the stiffest mode and the damping rate, stretched and compressed, at rest and moving", () => {
    const mixed = fourSprings([1.5, 0.7, 0, 0.3], [0.8, 0, 0.5, 1.1], [0.1, 0, 0]);
    const rng = mulberry32(9);
    for (let c = 0; c < 8; c++) {
      const sys = four();
      const set = new ParticleSpringSet(sys, "springs", mixed);
      if (c > 0) randomizeState(sys, rng);
      const out = explicitBound(sys, set);
      expect(out[0]).toBeGreaterThanOrEqual(highestMode(sys, set, "position") * (1 - 1e-12));
      expect(out[1]).toBeGreaterThanOrEqual(highestMode(sys, set, "velocity") * (1 - 1e-12));
    }
  });

  it("is exactly k/m for one particle on one spring to a fixed point", () => {
    const sys = system(particle("p", 2, [0.3, 0, 0]));
    const set = new ParticleSpringSet(sys, "springs", [
      {
        bodyA: -1,
        pointA: [0, 0, 0],
        bodyB: 0,
        pointB: [0, 0, 0],
        stiffness: 50,
        damping: 4,
        restLength: 0.2,
      },
    ]);
    const out = explicitBound(sys, set);
    expect(out[0]).toBeCloseTo(50 / 2, 12);
    expect(out[1]).toBeCloseTo(4 / 2, 12);
  });
});
