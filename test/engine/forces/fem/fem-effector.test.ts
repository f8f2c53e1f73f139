/**
 * The tetrahedral elements and their materials (src/engine/forces/fem): the Jacobian of
 * the elastic forces against central finite differences of the forces (the project's
 * Jacobian check, test/engine/forces/jacobian-check.ts) at random deformed and rotated
 * configurations for every material, the forces against the energy's gradient, zero force
 * under a rigid rotation of an undeformed mesh, the approximate corotational tangent, and
 * inverted elements. The element data the State reports (the equivalent strain in closed
 * form for a stretch, rotated; the Cauchy stress P Fᵀ/det F; node positions through the
 * node table) and the consistent mass ΔM = ρV/20 (1 + δ_ab) − ρV/4 δ_ab written out. The
 * explicit step's stability bound (addExplicitRates) against the highest eigenvalue of
 * M^{-1/2} K M^{-1/2} (ml-matrix) at rest and deformed.
 */
import { determinant, EigenvalueDecomposition, Matrix } from "ml-matrix";
import { describe, expect, it } from "vitest";
import { FemEffector } from "../../../../src/engine/forces/fem/fem-effector";
import type { MaterialName } from "../../../../src/engine/forces/fem/materials";
import { boxMesh, type TetMesh } from "../../../../src/engine/forces/fem/mesh";
import { SparseBlockMatrix } from "../../../../src/engine/math/block-matrix";
import {
  type BodySystem,
  clearForces,
  getForces,
  updateDerived,
} from "../../../../src/engine/model/body-system";
import { MatrixType } from "../../../../src/engine/solvers/linear/linear-solver";
import { gaussian, mulberry32 } from "../../../support/random";
import {
  checkJacobians,
  denseJacobian,
  energyGradientErrors,
  generalizedForce,
  highestMode,
} from "../jacobian-check";
import { meshEffector, meshSystem, randomRotation } from "./helpers";

const MATERIALS: MaterialName[] = ["corotational", "stvk", "neo-hookean"];
const E = 2e4;

/** x = c + Q (A X) + noise: A = I + strain·G (G Gaussian), Q a random rotation. */
function deform(mesh: TetMesh, strain: number, noise: number) {
  return (sys: BodySystem, rng: () => number) => {
    const q = randomRotation(rng);
    const a = Array.from({ length: 9 }, (_, k) => (k % 4 === 0 ? 1 : 0) + strain * gaussian(rng));
    const c = [gaussian(rng), gaussian(rng), gaussian(rng)];
    const n = mesh.nodes.length / 3;
    for (let k = 0; k < n; k++) {
      const X = mesh.nodes.subarray(3 * k, 3 * k + 3);
      const ax = [0, 1, 2].map((i) => a[3 * i] * X[0] + a[3 * i + 1] * X[1] + a[3 * i + 2] * X[2]);
      for (let i = 0; i < 3; i++)
        sys.pos[3 * k + i] =
          c[i] +
          q[3 * i] * ax[0] +
          q[3 * i + 1] * ax[1] +
          q[3 * i + 2] * ax[2] +
          noise * gaussian(rng);
    }
    updateDerived(sys);
  };
}

const singleTet: TetMesh = {
  nodes: Float64Array.of(0, 0, 0, 1, 0.1, 0, 0.2, 0.9, 0.1, 0.1, 0.2, 1.1),
  elements: Int32Array.of(0, 1, 2, 3),
};
/** 2 × 1 × 1 cells: 12 nodes, 10 tetrahedra of both parities. */
const smallBox = boxMesh({
  size: [2, 1, 1],
  resolution: [2, 1, 1],
  center: [0.3, -0.2, 0.1],
  orientation: [0.9, 0.1, 0.3, -0.2],
});

describe("FEM Jacobians: exact tangents against central differences of the forces", () => {
  for (const material of MATERIALS)
    for (const nu of [0.3, 0.45])
      it(`${material}, ν = ${nu}: one tet and a 10-tet box, random stretch, shear and rotation`, () => {
        for (const [mesh, fixed] of [
          [singleTet, []],
          [smallBox, [0, 5]],
        ] as [TetMesh, number[]][]) {
          const res = checkJacobians(
            () => meshSystem(mesh, 1000, fixed),
            (sys) => meshEffector(sys, mesh, { youngModulus: E, poissonRatio: nu, material }),
            { configurations: 6, seed: 17, randomize: deform(mesh, 0.25, 0.03), tolerance: 1e-6 },
          );
          for (const e of res.position) expect(e).toBeLessThan(1e-6);
          expect(Math.min(...res.positionNorm)).toBeGreaterThan(100);
          // no velocity dependence
          for (const v of res.velocityNorm) expect(v).toBe(0);
          expect(res.types.every((t) => t === MatrixType.SYMMETRIC)).toBe(true);
        }
      });

  it("an inverted element: finite restoring forces and exact Jacobians (corotational, neo-Hookean)", () => {
    // node 3 pushed through the face (0, 1, 2): det F < 0
    const inverted = (sys: BodySystem, rng: () => number) => {
      deform(singleTet, 0.05, 0.01)(sys, rng);
      // reflect node 3 through the plane of nodes 0, 1, 2
      const p = (k: number) => [0, 1, 2].map((i) => sys.pos[3 * k + i]);
      const [a, b, c, d] = [p(0), p(1), p(2), p(3)];
      const u = [0, 1, 2].map((i) => b[i] - a[i]);
      const v = [0, 1, 2].map((i) => c[i] - a[i]);
      const n = [u[1] * v[2] - u[2] * v[1], u[2] * v[0] - u[0] * v[2], u[0] * v[1] - u[1] * v[0]];
      const nn = Math.hypot(...n);
      const h = [0, 1, 2].reduce((s, i) => s + (d[i] - a[i]) * n[i], 0) / nn;
      for (let i = 0; i < 3; i++) sys.pos[9 + i] = d[i] - 1.5 * h * (n[i] / nn);
      updateDerived(sys);
    };
    for (const material of ["corotational", "neo-hookean"] as MaterialName[]) {
      const res = checkJacobians(
        () => meshSystem(singleTet, 1000),
        (sys) => meshEffector(sys, singleTet, { youngModulus: E, poissonRatio: 0.3, material }),
        { configurations: 4, seed: 23, randomize: inverted },
      );
      for (const e of res.position) expect(e).toBeLessThan(1e-6);
      // the force on node 3 points back through the face (it un-inverts the element)
      const sys = meshSystem(singleTet, 1000);
      const fem = meshEffector(sys, singleTet, { youngModulus: E, poissonRatio: 0.3, material });
      inverted(sys, mulberry32(4));
      const F = new Float64Array(9);
      fem.deformationGradient(0, F);
      const J =
        F[0] * (F[4] * F[8] - F[5] * F[7]) -
        F[1] * (F[3] * F[8] - F[5] * F[6]) +
        F[2] * (F[3] * F[7] - F[4] * F[6]);
      expect(J).toBeLessThan(0);
      const f = generalizedForce(sys, fem, 0);
      const before = fem.potentialEnergy();
      const step = 1e-4 / Math.hypot(f[9], f[10], f[11]);
      for (let i = 0; i < 3; i++) sys.pos[9 + i] += step * f[9 + i];
      updateDerived(sys);
      expect(Number.isFinite(before)).toBe(true);
      expect(fem.potentialEnergy()).toBeLessThan(before);
    }
  });

  it("the forces are minus the gradient of the potential energy (every material)", () => {
    for (const material of MATERIALS) {
      const errors = energyGradientErrors(
        () => meshSystem(smallBox, 1000, [3]),
        (sys) => meshEffector(sys, smallBox, { youngModulus: E, poissonRatio: 0.35, material }),
        { configurations: 4, seed: 31, randomize: deform(smallBox, 0.2, 0.03), h: 1e-6 },
      );
      for (const e of errors) expect(e).toBeLessThan(1e-7);
    }
  });
});

describe("FEM: rigid motion of an undeformed mesh", () => {
  it("a 90° rotation (and a translation) gives zero elastic force and energy, every material", () => {
    const mesh = boxMesh({
      size: [1, 0.6, 0.4],
      resolution: [3, 2, 2],
      center: [0, 0, 0],
      orientation: [1, 0, 0, 0],
    });
    const s = Math.SQRT1_2;
    const turns = [
      [0, -1, 0, 1, 0, 0, 0, 0, 1], // 90° about z
      [1, 0, 0, 0, 0, -1, 0, 1, 0], // 90° about x
      [0, 0, 1, 0, 1, 0, -1, 0, 0], // 90° about y
      [s, -s, 0, s, s, 0, 0, 0, 1], // 45° about z: entries that are not 0 or ±1
    ];
    const volume = (0.24 / mesh.elements.length) * 4;
    const h = 0.2;
    for (const material of MATERIALS)
      for (const q of turns) {
        const sys = meshSystem(mesh, 1000);
        const fem = meshEffector(sys, mesh, { youngModulus: 1e8, poissonRatio: 0.3, material });
        const n = mesh.nodes.length / 3;
        for (let k = 0; k < n; k++) {
          const X = mesh.nodes.subarray(3 * k, 3 * k + 3);
          for (let i = 0; i < 3; i++)
            sys.pos[3 * k + i] = 5 + q[3 * i] * X[0] + q[3 * i + 1] * X[1] + q[3 * i + 2] * X[2];
        }
        updateDerived(sys);
        const f = generalizedForce(sys, fem, 0);
        let fmax = 0;
        for (const x of f) fmax = Math.max(fmax, Math.abs(x));
        // against the force of a unit strain on an element, E V / h ≈ 1e6 N
        expect(fmax / ((1e8 * volume) / h)).toBeLessThan(1e-13);
        // the energy vanishes to rounding (ψ sums terms of order μ), against E × volume
        expect(Math.abs(fem.potentialEnergy()) / (1e8 * 0.24)).toBeLessThan(1e-15);
        expect(fem.restVolume).toBeCloseTo(0.24, 14);
      }
  });
});

describe("FEM: the approximate corotational tangent R K₀ Rᵀ", () => {
  const make = (tangent: "exact" | "approximate") => (sys: BodySystem) =>
    meshEffector(sys, smallBox, {
      youngModulus: E,
      poissonRatio: 0.3,
      material: "corotational",
      tangent,
    });

  function tangents(strain: number, seed: number) {
    const sys = meshSystem(smallBox, 1000);
    const exact = make("exact")(sys);
    const approx = make("approximate")(sys);
    deform(smallBox, strain, 0)(sys, mulberry32(seed));
    return {
      exact: denseJacobian(sys, exact, "position"),
      approx: denseJacobian(sys, approx, "position"),
      type: approx.jacobianType,
    };
  }
  const relDiff = (a: Float64Array, b: Float64Array) => {
    let e = 0;
    let s = 0;
    for (let i = 0; i < a.length; i++) {
      e = Math.max(e, Math.abs(a[i] - b[i]));
      s = Math.max(s, Math.abs(a[i]));
    }
    return e / s;
  };

  it.each(["approximate", "exact"] as const)(
    "%s: assembled from R (K₀_ab + …) Rᵀ blocks: the material's differential, element by element",
    (tangent) => {
      // approximate: R [2μ sym(RᵀdF) + λ tr(RᵀdF) I]; exact: with the variation of R, the
      // closed form R (K₀_ab + V [g_a]× N [g_b]×) Rᵀ (fem-effector.ts, refreshCorotated)
      const sys = meshSystem(smallBox, 1000);
      const fem = make(tangent)(sys);
      deform(smallBox, 0.2, 0.01)(sys, mulberry32(47));
      const assembled = denseJacobian(sys, fem, "position");
      // the same from the element Jacobians (the differential column by column), summed
      const n = smallBox.nodes.length / 3;
      const sum = new Float64Array(9 * n * n);
      const je = new Float64Array(144);
      for (let e = 0; e < fem.elementCount; e++) {
        fem.elementJacobian(e, je);
        for (let a = 0; a < 4; a++)
          for (let b = 0; b < 4; b++)
            for (let i = 0; i < 3; i++)
              for (let j = 0; j < 3; j++) {
                const row = 3 * fem.elements[4 * e + a] + i;
                const col = 3 * fem.elements[4 * e + b] + j;
                sum[3 * n * row + col] += je[12 * (3 * a + i) + 3 * b + j];
              }
      }
      expect(relDiff(sum, assembled)).toBeLessThan(1e-13);
    },
  );

  it("equals the exact tangent in rigid motion; its error grows with the strain", () => {
    const rigid = tangents(0, 41);
    expect(relDiff(rigid.exact, rigid.approx)).toBeLessThan(1e-12);
    const e3 = relDiff(tangents(1e-3, 43).exact, tangents(1e-3, 43).approx);
    const e2 = relDiff(tangents(1e-2, 43).exact, tangents(1e-2, 43).approx);
    const e1 = relDiff(tangents(1e-1, 43).exact, tangents(1e-1, 43).approx);
    // first order in the strain
    expect(e3).toBeGreaterThan(1e-5);
    expect(e2 / e3).toBeGreaterThan(7);
    expect(e2 / e3).toBeLessThan(13);
    expect(e1).toBeGreaterThan(e2);
  });

  it("is symmetric positive semidefinite (jacobianType SPD) where the exact one is indefinite", () => {
    const n = 36;
    const eig = (j: Float64Array) => {
      const m = Matrix.zeros(n, n);
      for (let r = 0; r < n; r++) for (let c = 0; c < n; c++) m.set(r, c, -j[r * n + c]);
      return new EigenvalueDecomposition(m, { assumeSymmetric: true }).realEigenvalues;
    };
    let indefinite = 0;
    for (let seed = 50; seed < 60; seed++) {
      const t = tangents(0.4, seed);
      expect(t.type).toBe(MatrixType.SPD);
      const scale = Math.max(...Array.from(t.approx, Math.abs));
      expect(Math.min(...eig(t.approx))).toBeGreaterThan(-1e-10 * scale);
      if (Math.min(...eig(t.exact)) < -1e-6 * scale) indefinite++;
    }
    expect(indefinite).toBeGreaterThan(0);
  });
});

describe("FEM element data", () => {
  it("elementJacobian is the 12×12 block of the assembled Jacobian of a lone element", () => {
    const sys = meshSystem(singleTet, 1000);
    const fem: FemEffector = meshEffector(sys, singleTet, {
      youngModulus: E,
      poissonRatio: 0.3,
      material: "stvk",
    });
    deform(singleTet, 0.2, 0.05)(sys, mulberry32(7));
    const je = new Float64Array(144);
    fem.elementJacobian(0, je);
    const dense = denseJacobian(sys, fem, "position");
    for (let k = 0; k < 144; k++) expect(je[k]).toBeCloseTo(dense[k], 8);
  });

  it("equivalent strain of a stretch F = Q diag(1 + ε, 1, 1): (2/3)(ε + ε²/2), the same at every node", () => {
    const sys = meshSystem(smallBox, 1000);
    const fem = meshEffector(sys, smallBox, {
      youngModulus: E,
      poissonRatio: 0.3,
      material: "stvk",
    });
    const eps = 0.04;
    const q = randomRotation(mulberry32(3));
    const c = [0.5, -1, 2]; // a translation
    for (let k = 0; k < smallBox.nodes.length / 3; k++) {
      const X = smallBox.nodes.subarray(3 * k, 3 * k + 3);
      const ax = [(1 + eps) * X[0], X[1], X[2]];
      for (let i = 0; i < 3; i++)
        sys.pos[3 * k + i] = c[i] + q[3 * i] * ax[0] + q[3 * i + 1] * ax[1] + q[3 * i + 2] * ax[2];
    }
    updateDerived(sys);
    const expected = (2 / 3) * (eps + (eps * eps) / 2);
    for (let e = 0; e < fem.elementCount; e++)
      expect(fem.equivalentStrain(e)).toBeCloseTo(expected, 12);
    const nodal = new Float64Array(fem.nodeCount);
    fem.nodalStrain(nodal);
    for (const s of nodal) expect(s).toBeCloseTo(expected, 12);
    const positions = new Float64Array(3 * fem.nodeCount);
    fem.positions(positions);
    expect(Array.from(positions)).toEqual(Array.from(sys.pos));
  });

  it("Cauchy stress σ = P Fᵀ / det F, symmetric; F and P of an element", () => {
    const sys = meshSystem(singleTet, 1000);
    const fem = meshEffector(sys, singleTet, {
      youngModulus: E,
      poissonRatio: 0.3,
      material: "neo-hookean",
    });
    deform(singleTet, 0.2, 0.05)(sys, mulberry32(9));
    const f = new Float64Array(9);
    const p = new Float64Array(9);
    const sigma = new Float64Array(9);
    fem.deformationGradient(0, f);
    fem.firstPiolaStress(0, p);
    fem.cauchyStress(0, sigma);
    const F = new Matrix([
      Array.from(f.subarray(0, 3)),
      Array.from(f.subarray(3, 6)),
      Array.from(f.subarray(6, 9)),
    ]);
    const P = new Matrix([
      Array.from(p.subarray(0, 3)),
      Array.from(p.subarray(3, 6)),
      Array.from(p.subarray(6, 9)),
    ]);
    const expected = P.mmul(F.transpose()).div(determinant(F)).to1DArray();
    const scale = Math.max(...expected.map(Math.abs));
    for (let k = 0; k < 9; k++)
      expect(Math.abs(sigma[k] - expected[k])).toBeLessThan(1e-12 * scale);
    for (const [i, j] of [
      [0, 1],
      [0, 2],
      [1, 2],
    ])
      expect(Math.abs(sigma[3 * i + j] - sigma[3 * j + i])).toBeLessThan(1e-10 * scale);
  });

  it("consistent mass: ΔM x and ½ vᵀ ΔM v with ΔM_ab = ρV/20 (1 + δ_ab) − ρV/4 δ_ab", () => {
    const rho = 800;
    const sys = meshSystem(singleTet, rho);
    const fem = new FemEffector(sys, {
      id: "fem",
      nodeBodies: [0, 1, 2, 3],
      rest: singleTet.nodes,
      elements: singleTet.elements,
      youngModulus: E,
      poissonRatio: 0.3,
      material: "corotational",
      consistentDensity: rho,
    });
    const V = fem.restVolume;
    const dm = (a: number, b: number) =>
      ((rho * V) / 20) * (1 + (a === b ? 1 : 0)) - (a === b ? (rho * V) / 4 : 0);
    const rng = mulberry32(13);
    const x = Float64Array.from({ length: 12 }, () => 2 * rng() - 1);
    const out = new Float64Array(12).fill(1);
    if (!fem.addMassProduct) throw new Error("no consistent mass");
    fem.addMassProduct(x, out, -2);
    for (let a = 0; a < 4; a++)
      for (let i = 0; i < 3; i++) {
        let s = 0;
        for (let b = 0; b < 4; b++) s += dm(a, b) * x[3 * b + i];
        expect(out[3 * a + i]).toBeCloseTo(1 - 2 * s, 12);
      }
    sys.vel.set(x);
    let kinetic = 0;
    for (let a = 0; a < 4; a++)
      for (let b = 0; b < 4; b++)
        for (let i = 0; i < 3; i++) kinetic += 0.5 * dm(a, b) * x[3 * a + i] * x[3 * b + i];
    expect(fem.kineticCorrection()).toBeCloseTo(kinetic, 12);
    // a uniform velocity: the rows of ΔM sum to zero
    sys.vel.set([0.3, -1, 2, 0.3, -1, 2, 0.3, -1, 2, 0.3, -1, 2]);
    expect(fem.kineticCorrection()).toBeCloseTo(0, 12);
    // lumped: none
    expect(
      meshEffector(sys, singleTet, {
        youngModulus: E,
        poissonRatio: 0.3,
        material: "stvk",
      }).kineticCorrection(),
    ).toBe(0);
  });
});

describe("FEM: addExplicitRates bounds the stiffest mode", () => {
  for (const material of MATERIALS)
    it(`${material}: ω² of the highest mode of a 10-tet box, at rest and deformed, is below the bound`, () => {
      const rng = mulberry32(5);
      for (const nu of [0, 0.3, 0.45])
        for (const strain of [0, 0.1, 0.3]) {
          const sys = meshSystem(smallBox, 1000, [0, 5]);
          const fem = meshEffector(sys, smallBox, { youngModulus: E, poissonRatio: nu, material });
          if (strain > 0) deform(smallBox, strain, 0.02)(sys, rng);
          const out = new Float64Array(2);
          fem.addExplicitRates(out);
          const top = highestMode(sys, fem, "position");
          expect(out[0]).toBeGreaterThanOrEqual(top);
          expect(out[1]).toBe(0);
          // and not far above it (measured 1.25 to 7.6 times: 1.1 to 2.8 in ω, a halving
          // or two of the explicit step)
          expect(out[0]).toBeLessThan(8 * top);
        }
    });
});

describe("FemEffector's energy–momentum force (beginMeanStep, meanForces)", () => {
  for (const material of MATERIALS)
    it(`${material}: f̄ · (x₁ − x₀) = −(Ψ(x₁) − Ψ(x₀)), no moment about x_m, f̄ → f at x₁ = x₀`, () => {
      const rng = mulberry32(29);
      const sys = meshSystem(smallBox, 1000);
      const fem = meshEffector(sys, smallBox, { youngModulus: E, poissonRatio: 0.3, material });
      const n = sys.numDofs;
      for (let trial = 0; trial < 4; trial++) {
        // x₀ and x₁ two strained, rotated poses (strains of 10 %, turns of any size)
        deform(smallBox, 0.1, 0.02)(sys, rng);
        const x0 = Float64Array.from(sys.pos);
        const psi0 = fem.potentialEnergy();
        const f0 = generalizedForce(sys, fem, 0);
        fem.beginMeanStep();
        deform(smallBox, 0.1, 0.02)(sys, rng);
        const x1 = Float64Array.from(sys.pos);
        const psi1 = fem.potentialEnergy();
        fem.meanForces = true;
        const g = generalizedForce(sys, fem, 0);
        fem.meanForces = false;
        // the step's force: ½ f(x₀) + ½ (2 f̄ − f(x₀))
        const mean = Array.from({ length: n }, (_, i) => 0.5 * (f0[i] + g[i]));
        let work = 0;
        let scale = 0;
        const moment = [0, 0, 0];
        for (let k = 0; k < n / 3; k++) {
          const r = [0, 1, 2].map((i) => 0.5 * (x0[3 * k + i] + x1[3 * k + i]));
          const f = [0, 1, 2].map((i) => mean[3 * k + i]);
          for (let i = 0; i < 3; i++) {
            work += f[i] * (x1[3 * k + i] - x0[3 * k + i]);
            scale += Math.abs(f[i] * (x1[3 * k + i] - x0[3 * k + i]));
          }
          moment[0] += r[1] * f[2] - r[2] * f[1];
          moment[1] += r[2] * f[0] - r[0] * f[2];
          moment[2] += r[0] * f[1] - r[1] * f[0];
        }
        expect(Math.abs(work + (psi1 - psi0))).toBeLessThan(1e-12 * scale);
        const fNorm = Math.max(...mean.map(Math.abs));
        expect(Math.hypot(...moment)).toBeLessThan(1e-12 * fNorm * 10);
      }
      // the same pose at both ends: f̄ = f(x)
      const f1 = generalizedForce(sys, fem, 0);
      fem.beginMeanStep();
      fem.meanForces = true;
      const same = generalizedForce(sys, fem, 0);
      fem.meanForces = false;
      const fMax = Math.max(...f1.map(Math.abs));
      for (let i = 0; i < n; i++) expect(Math.abs(same[i] - f1[i])).toBeLessThan(1e-12 * fMax);
    });

  /**
   * The mean step's tangent (addMeanTangentProduct: s (J̃ − J) x, J̃ ≈ ∂(2 f̄ − f(x_t))/∂x at
   * the end, J the tangent last assembled) against central differences of the mean force,
   * h = 1e-6 of the mesh's size, in random directions, on a step that turns a strained body
   * (1 % strain, 0.1 rad about a random axis, as a spinning body's step): J̃ = A J_e with
   * A = F_m F⁻¹ takes the turn of F_m against F, which the end's tangent J misses (off by
   * 3.2e-2 of ‖J̃ x‖ here), and leaves out the stress over the modulus (5e-4).
   */
  for (const material of MATERIALS)
    it(`${material}: its tangent on a turning step against central differences`, () => {
      const rng = mulberry32(41);
      const sys = meshSystem(smallBox, 1000);
      const fem = meshEffector(sys, smallBox, { youngModulus: E, poissonRatio: 0.3, material });
      const n = sys.numDofs;
      const mean = () => {
        fem.meanForces = true;
        const g = generalizedForce(sys, fem, 0);
        fem.meanForces = false;
        return g;
      };
      for (let trial = 0; trial < 3; trial++) {
        deform(smallBox, 0.01, 0)(sys, rng);
        fem.beginMeanStep();
        // the end: the start turned by 0.1 rad about a random axis u through the origin
        // (Rodrigues: R = I + sin θ [u]× + (1 − cos θ) [u]×²)
        const axis = [gaussian(rng), gaussian(rng), gaussian(rng)];
        const an = Math.hypot(...axis);
        const u = axis.map((v) => v / an);
        const th = 0.1;
        const x0 = Float64Array.from(sys.pos);
        for (let k = 0; k < n / 3; k++) {
          const r = [0, 1, 2].map((i) => x0[3 * k + i]);
          const ur = [
            u[1] * r[2] - u[2] * r[1],
            u[2] * r[0] - u[0] * r[2],
            u[0] * r[1] - u[1] * r[0],
          ];
          const uur = [
            u[1] * ur[2] - u[2] * ur[1],
            u[2] * ur[0] - u[0] * ur[2],
            u[0] * ur[1] - u[1] * ur[0],
          ];
          for (let i = 0; i < 3; i++)
            sys.pos[3 * k + i] = r[i] + Math.sin(th) * ur[i] + (1 - Math.cos(th)) * uur[i];
        }
        updateDerived(sys);
        const x1 = Float64Array.from(sys.pos);
        const dir = Float64Array.from({ length: n }, () => gaussian(rng));
        const h = 1e-6;
        const fd = (sign: number) => {
          for (let i = 0; i < n; i++) sys.pos[i] = x1[i] + sign * h * dir[i];
          updateDerived(sys);
          return mean();
        };
        const plus = fd(1);
        const minus = fd(-1);
        sys.pos.set(x1);
        updateDerived(sys);
        // J x from the assembled tangent at x1, J̃ x − J x from the effector
        const m = new SparseBlockMatrix(sys.blockSizes);
        fem.addSolveBlocks(m);
        m.finalize();
        m.clear();
        fem.addPosJacobian(m, 1);
        const jx = new Float64Array(n);
        m.multiply(dir, jx);
        const diff = new Float64Array(n);
        fem.addMeanTangentProduct(dir, diff, 1);
        let err = 0;
        let scale = 0;
        let apart = 0;
        for (let i = 0; i < n; i++) {
          const exact = (plus[i] - minus[i]) / (2 * h);
          err = Math.max(err, Math.abs(jx[i] + diff[i] - exact));
          scale = Math.max(scale, Math.abs(exact));
          apart = Math.max(apart, Math.abs(jx[i] - exact));
        }
        // measured 5.1e-4 and 3.2e-2 of ‖J̃ x‖ (the three materials alike)
        expect(err).toBeLessThan(2e-3 * scale);
        // the end's tangent alone, what Newton converged with, linearly
        expect(apart).toBeGreaterThan(2e-2 * scale);
      }
    });

  /**
   * endMeanStep, the end of a mean step whose end state is kept (generalized-alpha and
   * newmark): it adds f(x) − f̃(x), the end's force less the mean step's 2 f̄ − f(x_t), and
   * keeps x as the next step's start, in one pass (P(F), W(C) and S(C_m) an element); the
   * next beginMeanStep at x then evaluates nothing, and the mean force from that start is
   * the one a fresh start at x gives, bit for bit. Before, the stepper took f and f̃ in two
   * passes and beginMeanStep evaluated P(F) and W(C) at x again: 2 P(F) and 3 W(C) an
   * element.
   */
  for (const material of MATERIALS)
    it(`${material}: endMeanStep adds f − f̃ and keeps the end as the next start`, () => {
      const rng = mulberry32(53);
      const sys = meshSystem(smallBox, 1000);
      const fem = meshEffector(sys, smallBox, { youngModulus: E, poissonRatio: 0.3, material });
      const twin = meshEffector(sys, smallBox, { youngModulus: E, poissonRatio: 0.3, material });
      const n = sys.numDofs;
      const mean = (e: typeof fem) => {
        e.meanForces = true;
        const g = generalizedForce(sys, e, 0);
        e.meanForces = false;
        return g;
      };
      // material calls (P(F) and W(C) alike) an element
      let calls = 0;
      const counted = fem.material as unknown as Record<string, (...a: unknown[]) => number>;
      for (const name of ["evaluate", "greenEnergy"]) {
        const plain = counted[name].bind(counted);
        counted[name] = (...a: unknown[]) => {
          calls++;
          return plain(...a);
        };
      }
      const elements = smallBox.elements.length / 4;
      for (let trial = 0; trial < 3; trial++) {
        deform(smallBox, 0.1, 0.02)(sys, rng);
        fem.beginMeanStep();
        deform(smallBox, 0.1, 0.02)(sys, rng);
        const expected = generalizedForce(sys, fem, 0);
        const g = mean(fem);
        for (let i = 0; i < n; i++) expected[i] -= g[i];
        clearForces(sys);
        calls = 0;
        fem.endMeanStep();
        expect(calls).toBe(3 * elements);
        const got = new Float64Array(n);
        getForces(sys, got);
        const scale = Math.max(...g.map(Math.abs));
        let err = 0;
        for (let i = 0; i < n; i++) err = Math.max(err, Math.abs(got[i] - expected[i]));
        expect(err).toBeLessThan(1e-12 * scale);
        // the next start at the same x: nothing evaluated, the same as a fresh start's
        calls = 0;
        fem.beginMeanStep();
        expect(calls).toBe(0);
        twin.beginMeanStep();
        deform(smallBox, 0.1, 0.02)(sys, rng);
        expect(Array.from(mean(fem))).toEqual(Array.from(mean(twin)));
      }
    });
});
