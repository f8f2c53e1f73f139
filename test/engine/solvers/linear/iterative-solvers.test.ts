import { describe, expect, test } from "vitest";
import { csrFromTriplets } from "../../../../src/engine/math/csr";
import { ConjugateGradientSolver } from "../../../../src/engine/solvers/linear/cg";
import { GmresSolver } from "../../../../src/engine/solvers/linear/gmres";
import type { LinearOperator } from "../../../../src/engine/solvers/linear/linear-solver";
import { MinresSolver } from "../../../../src/engine/solvers/linear/minres";
import {
  Ic0Preconditioner,
  IdentityPreconditioner,
  Ilu0Preconditioner,
  JacobiPreconditioner,
  type Preconditioner,
} from "../../../../src/engine/solvers/linear/preconditioners";
import {
  denseLuReference,
  randomKkt,
  randomNonsymmetric,
  randomSpd,
  randomVector,
  relativeError,
  relativeResidual,
} from "./helpers";

const SIZES = [5, 20, 60, 200];
const TOL = 1e-13;

describe("Krylov solvers against ml-matrix dense LU", () => {
  for (const n of SIZES) {
    test(`CG and MINRES on random SPD, n = ${n}`, () => {
      const a = randomSpd(n, 6, 11 * n);
      const b = randomVector(n, 3 * n);
      const ref = denseLuReference(a, b);
      const solvers = [
        new ConjugateGradientSolver(n, { tolerance: TOL, preconditioner: "none" }),
        new ConjugateGradientSolver(n, { tolerance: TOL, preconditioner: "jacobi" }),
        new ConjugateGradientSolver(n, { tolerance: TOL, preconditioner: "ic0" }),
        new MinresSolver(n, { tolerance: TOL, preconditioner: "none" }),
        new MinresSolver(n, { tolerance: TOL, preconditioner: "jacobi" }),
        new GmresSolver(n, { tolerance: TOL, preconditioner: "ilu0" }),
      ];
      for (const s of solvers) {
        s.factor(a);
        const x = new Float64Array(n);
        const info = s.solve(b, x);
        const label = `${s.name}`;
        expect(info.converged, label).toBe(true);
        expect(info.residual, label).toBeLessThanOrEqual(TOL);
        expect(relativeResidual(a, x, b), label).toBeLessThan(2 * TOL);
        expect(relativeError(x, ref), label).toBeLessThan(1e-10);
      }
    });

    test(`GMRES on random nonsymmetric, n = ${n}`, () => {
      const a = randomNonsymmetric(n, 5, 13 * n);
      const b = randomVector(n, 5 * n);
      const ref = denseLuReference(a, b);
      for (const preconditioner of ["none", "jacobi", "ilu0"] as const)
        for (const restart of [5, 30]) {
          const s = new GmresSolver(n, {
            tolerance: TOL,
            preconditioner,
            restart,
            maxIterations: 2000,
          });
          s.factor(a);
          const x = new Float64Array(n);
          const info = s.solve(b, x);
          const label = `${preconditioner} m=${restart}`;
          expect(info.converged, label).toBe(true);
          expect(relativeResidual(a, x, b), label).toBeLessThan(2 * TOL);
          expect(relativeError(x, ref), label).toBeLessThan(1e-10);
        }
    });

    test(`MINRES on the indefinite KKT matrix, n = ${n} + ${Math.ceil(n / 3)}`, () => {
      const a = randomKkt(n, Math.ceil(n / 3), 23 * n);
      const b = randomVector(a.rows, 7 * n);
      const ref = denseLuReference(a, b);
      for (const preconditioner of ["none", "jacobi"] as const) {
        const s = new MinresSolver(a.rows, { tolerance: TOL, preconditioner });
        s.factor(a);
        const x = new Float64Array(a.rows);
        const info = s.solve(b, x);
        expect(info.converged, preconditioner).toBe(true);
        expect(relativeError(x, ref), preconditioner).toBeLessThan(1e-10);
      }
    });
  }

  test("CG detects an indefinite matrix (pᵀAp ≤ 0) and reports converged = false", () => {
    const a = csrFromTriplets(2, 2, [0, 1], [0, 1], [1, -1]);
    const s = new ConjugateGradientSolver(2, { preconditioner: "none" });
    s.factor(a);
    const x = new Float64Array(2);
    expect(s.solve(Float64Array.of(1, 1), x).converged).toBe(false);
  });

  test("iteration limit reached → converged = false, residual reported", () => {
    const a = randomSpd(200, 6, 5, 0.001);
    const b = randomVector(200, 6);
    const s = new ConjugateGradientSolver(200, {
      tolerance: 1e-14,
      maxIterations: 3,
      preconditioner: "none",
    });
    s.factor(a);
    const x = new Float64Array(200);
    const info = s.solve(b, x);
    expect(info.converged).toBe(false);
    expect(info.iterations).toBe(3);
    expect(info.residual).toBeCloseTo(relativeResidual(a, x, b), 12);
  });

  test("initial guess is used; zero right-hand side gives x = 0", () => {
    const n = 60;
    const a = randomSpd(n, 6, 8);
    const b = randomVector(n, 9);
    const ref = denseLuReference(a, b);
    for (const s of [new ConjugateGradientSolver(n), new MinresSolver(n), new GmresSolver(n)]) {
      s.factor(a);
      const x = Float64Array.from(ref);
      const info = s.solve(b, x);
      expect(info.iterations, s.name).toBe(0);
      expect(info.converged).toBe(true);
      const z = randomVector(n, 10);
      expect(s.solve(new Float64Array(n), z).converged).toBe(true);
      expect(Array.from(z).every((v) => v === 0)).toBe(true);
    }
  });
});

describe("matrix-free operators", () => {
  // Shifted 2-D 5-point Laplacian on a k×k grid, c·I − Δ_h (Dirichlet), applied by its
  // stencil without any matrix; the dense reference assembles the same stencil.
  const k = 14;
  const n = k * k;
  const shift = 0.5;
  const stencilOperator = (sym: boolean): LinearOperator => ({
    n,
    apply(x, out) {
      for (let i = 0; i < k; i++)
        for (let j = 0; j < k; j++) {
          const p = i * k + j;
          let s = (4 + shift) * x[p];
          if (i > 0) s -= x[p - k];
          if (i < k - 1) s -= x[p + k];
          // Nonsymmetric variant: a convection term skews the horizontal neighbours.
          if (j > 0) s -= (sym ? 1 : 1.4) * x[p - 1];
          if (j < k - 1) s -= (sym ? 1 : 0.6) * x[p + 1];
          out[p] = s;
        }
    },
    diagonal(out) {
      out.fill(4 + shift);
    },
  });
  const assemble = (sym: boolean) => {
    const ri: number[] = [];
    const ci: number[] = [];
    const vi: number[] = [];
    for (let i = 0; i < k; i++)
      for (let j = 0; j < k; j++) {
        const p = i * k + j;
        ri.push(p);
        ci.push(p);
        vi.push(4 + shift);
        const nb: [boolean, number, number][] = [
          [i > 0, p - k, 1],
          [i < k - 1, p + k, 1],
          [j > 0, p - 1, sym ? 1 : 1.4],
          [j < k - 1, p + 1, sym ? 1 : 0.6],
        ];
        for (const [ok, q, c] of nb)
          if (ok) {
            ri.push(p);
            ci.push(q);
            vi.push(-c);
          }
      }
    return csrFromTriplets(n, n, ri, ci, vi);
  };

  test("CG, MINRES (symmetric stencil) and GMRES (convective stencil) as operators", () => {
    const b = randomVector(n, 1);
    const refSym = denseLuReference(assemble(true), b);
    const refNon = denseLuReference(assemble(false), b);
    const op = stencilOperator(true);
    for (const s of [
      new ConjugateGradientSolver(n, { tolerance: TOL }),
      new MinresSolver(n, { tolerance: TOL }),
    ]) {
      s.factor(op);
      const x = new Float64Array(n);
      expect(s.solve(b, x).converged, s.name).toBe(true);
      expect(relativeError(x, refSym), s.name).toBeLessThan(1e-10);
    }
    for (const preconditioner of ["none", "jacobi"] as const) {
      const g = new GmresSolver(n, { tolerance: TOL, preconditioner, restart: 20 });
      g.factor(stencilOperator(false));
      const x = new Float64Array(n);
      expect(g.solve(b, x).converged).toBe(true);
      expect(relativeError(x, refNon)).toBeLessThan(1e-10);
    }
  });

  test("IC(0)/ILU(0) need a CsrMatrix", () => {
    expect(() =>
      new ConjugateGradientSolver(n, { preconditioner: "ic0" }).factor(stencilOperator(true)),
    ).toThrow();
    expect(() =>
      new GmresSolver(n, { preconditioner: "ilu0" }).factor(stencilOperator(false)),
    ).toThrow();
  });
});

describe("CG's confirmation of the recursive residual", () => {
  /** A CSR matrix as an operator that counts its products. */
  function counted(a: ReturnType<typeof randomSpd>) {
    const op = {
      n: a.rows,
      products: 0,
      apply(x: Float64Array, out: Float64Array) {
        op.products++;
        for (let i = 0; i < a.rows; i++) {
          let s = 0;
          for (let k = a.rowPtr[i]; k < a.rowPtr[i + 1]; k++) s += a.values[k] * x[a.colIdx[k]];
          out[i] = s;
        }
      },
    };
    return op;
  }

  test("a loose tolerance reached quickly is reported without the extra product", () => {
    const n = 120;
    const a = randomSpd(n, 6, 77);
    const b = randomVector(n, 78);
    for (const [tolerance, extra] of [
      [1e-4, 0],
      [1e-10, 1],
    ] as const) {
      const op = counted(a);
      const s = new ConjugateGradientSolver(n, { tolerance, preconditioner: "none" });
      s.factor(op);
      const x = new Float64Array(n);
      const info = s.solve(b, x);
      expect(info.converged).toBe(true);
      expect(op.products).toBe(info.iterations + extra);
      // the reported residual is the true one to rounding, confirmed or not
      expect(Math.abs(relativeResidual(a, x, b) - info.residual)).toBeLessThan(1e-12);
      expect(relativeResidual(a, x, b)).toBeLessThanOrEqual(tolerance * (1 + 1e-9));
    }
  });
});

describe("preconditioners", () => {
  test("apply returns rᵀz with z = M⁻¹r (identity, Jacobi, IC(0), ILU(0))", () => {
    const n = 60;
    const a = randomSpd(n, 6, 91);
    const r = randomVector(n, 92);
    const preconditioners: Preconditioner[] = [new IdentityPreconditioner(n)];
    const jacobi = new JacobiPreconditioner(n);
    jacobi.updateFromCsr(a);
    const ic0 = new Ic0Preconditioner();
    ic0.update(a);
    const ilu0 = new Ilu0Preconditioner();
    ilu0.update(a);
    preconditioners.push(jacobi, ic0, ilu0);
    for (const p of preconditioners) {
      const z = new Float64Array(n);
      const rz = p.apply(r, z);
      let ref = 0;
      for (let i = 0; i < n; i++) ref += r[i] * z[i];
      expect(rz).toBeCloseTo(ref, 12);
      expect(rz).toBeGreaterThan(0); // M SPD
    }
  });
});
