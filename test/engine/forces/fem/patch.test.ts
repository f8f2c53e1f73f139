/**
 * The patch test: the boundary nodes of an irregular mesh (a 3 × 3 × 3 box whose interior
 * nodes are moved at random) are held at an affine field x = A X + c; the interior nodes,
 * solved for static equilibrium by Newton's method on the assembled tangent stiffness
 * (helpers.ts), must follow the same field, and every element must have the constant
 * deformation gradient A, the Green strain E = ½(AᵀA − I) and the stress of the closed
 * form, to 1e-10. The closed forms are computed here independently of the materials'
 * code (the corotational rotation from ml-matrix's SVD, the neo-Hookean A⁻ᵀ by ml-matrix's
 * inverse).
 */
import { determinant, inverse, Matrix, SingularValueDecomposition } from "ml-matrix";
import { describe, expect, it } from "vitest";
import { lame, type MaterialName } from "../../../../src/engine/forces/fem/materials";
import { boxMesh } from "../../../../src/engine/forces/fem/mesh";
import { updateDerived } from "../../../../src/engine/model/body-system";
import { mulberry32 } from "../../../support/random";
import { meshEffector, meshSystem, solveStatic } from "./helpers";

const E = 3e6;
const NU = 0.3;
const [MU, LAMBDA] = [E / (2 * (1 + NU)), (E * NU) / ((1 + NU) * (1 - 2 * NU))];

const toMatrix = (a: number[]) => new Matrix([a.slice(0, 3), a.slice(3, 6), a.slice(6, 9)]);
const flat = (m: Matrix) => m.to1DArray();

/** The first Piola–Kirchhoff stress of each material at F = A, in closed form. */
function closedFormP(material: MaterialName, a: number[]): number[] {
  const A = toMatrix(a);
  const I = Matrix.eye(3);
  switch (material) {
    case "stvk": {
      const e = A.transpose().mmul(A).sub(I).mul(0.5);
      const tr = e.trace();
      const s = e
        .clone()
        .mul(2 * MU)
        .add(I.clone().mul(LAMBDA * tr));
      return flat(A.mmul(s));
    }
    case "neo-hookean": {
      const j = determinant(A);
      const invT = inverse(A).transpose();
      return flat(
        A.clone()
          .sub(invT)
          .mul(MU)
          .add(invT.mul(LAMBDA * Math.log(j))),
      );
    }
    case "corotational": {
      const svd = new SingularValueDecomposition(A);
      const R = svd.leftSingularVectors.mmul(svd.rightSingularVectors.transpose());
      const S = R.transpose().mmul(A);
      const strain = S.sub(I);
      const tr = strain.trace();
      return flat(R.mmul(strain.mul(2 * MU).add(I.clone().mul(LAMBDA * tr))));
    }
  }
}

describe("patch test: an affine boundary displacement gives the exact constant strain and stress", () => {
  const res: [number, number, number] = [3, 3, 3];
  const base = boxMesh({
    size: [1, 0.9, 1.2],
    resolution: res,
    center: [0, 0, 0],
    orientation: [1, 0, 0, 0],
  });
  // move the 8 interior nodes at random (by up to 15 % of a cell)
  const rng = mulberry32(77);
  const nodes = Float64Array.from(base.nodes);
  const boundary: number[] = [];
  const interior: number[] = [];
  for (let k = 0; k <= 3; k++)
    for (let j = 0; j <= 3; j++)
      for (let i = 0; i <= 3; i++) {
        const n = i + 4 * (j + 4 * k);
        const inside = [i, j, k].every((c) => c > 0 && c < 3);
        (inside ? interior : boundary).push(n);
        if (inside) for (let d = 0; d < 3; d++) nodes[3 * n + d] += 0.15 * 0.3 * (2 * rng() - 1);
      }
  const mesh = { nodes, elements: base.elements };

  for (const material of ["corotational", "stvk", "neo-hookean"] as MaterialName[])
    it(`${material}: interior nodes on the field, F = A, E and P exact in all ${mesh.elements.length / 4} elements`, () => {
      expect(lame(E, NU)).toEqual([MU, LAMBDA]);
      // A = I + 0.15 G (a finite stretch, shear and rotation), c a translation
      const g = mulberry32(101);
      const a = Array.from({ length: 9 }, (_, k) => (k % 4 === 0 ? 1 : 0) + 0.15 * (2 * g() - 1));
      const c = [0.3, -0.2, 0.1];
      const field = (X: ArrayLike<number>) =>
        [0, 1, 2].map((i) => c[i] + a[3 * i] * X[0] + a[3 * i + 1] * X[1] + a[3 * i + 2] * X[2]);
      const sys = meshSystem(mesh, 1000, boundary);
      const fem = meshEffector(sys, mesh, { youngModulus: E, poissonRatio: NU, material });
      // the boundary on the field; the interior nodes start translated, undeformed
      for (const n of boundary) sys.pos.set(field(mesh.nodes.subarray(3 * n, 3 * n + 3)), 3 * n);
      for (const n of interior) for (let i = 0; i < 3; i++) sys.pos[3 * n + i] += c[i];
      updateDerived(sys);
      const r = solveStatic(sys, [fem], { tolerance: 1e-14 });
      expect(r.iterations).toBeLessThan(10);
      let posErr = 0;
      for (const n of interior) {
        const x = field(mesh.nodes.subarray(3 * n, 3 * n + 3));
        for (let i = 0; i < 3; i++) posErr = Math.max(posErr, Math.abs(sys.pos[3 * n + i] - x[i]));
      }
      expect(posErr).toBeLessThan(1e-10);

      const P = closedFormP(material, a);
      const A = toMatrix(a);
      const green = flat(A.transpose().mmul(A).sub(Matrix.eye(3)).mul(0.5));
      const pScale = Math.max(...P.map(Math.abs));
      const f = new Float64Array(9);
      const p = new Float64Array(9);
      const sigma = new Float64Array(9);
      const cauchy = flat(toMatrix(P).mmul(A.transpose()).div(determinant(A)));
      let fErr = 0;
      let eErr = 0;
      let pErr = 0;
      let sErr = 0;
      for (let e = 0; e < fem.elementCount; e++) {
        fem.deformationGradient(e, f);
        fem.firstPiolaStress(e, p);
        fem.cauchyStress(e, sigma);
        const F = toMatrix(Array.from(f));
        const ge = flat(F.transpose().mmul(F).sub(Matrix.eye(3)).mul(0.5));
        for (let k = 0; k < 9; k++) {
          fErr = Math.max(fErr, Math.abs(f[k] - a[k]));
          eErr = Math.max(eErr, Math.abs(ge[k] - green[k]));
          pErr = Math.max(pErr, Math.abs(p[k] - P[k]) / pScale);
          sErr = Math.max(sErr, Math.abs(sigma[k] - cauchy[k]) / pScale);
        }
      }
      expect(fErr).toBeLessThan(1e-10);
      expect(eErr).toBeLessThan(1e-10);
      expect(pErr).toBeLessThan(1e-10);
      expect(sErr).toBeLessThan(1e-10);
    });
});
