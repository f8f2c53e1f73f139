/**
 * The iteration matrix W = (1 + c_v r_M) M + (w c_x + c_v r_K) K + w c_v D and its solver
 * (iteration-matrix.ts) against a dense reference built here: the forces written out in
 * closed form, K = −∂f/∂x and D = −∂f/∂v by central differences of them, M from the masses
 * and the rotated inertias, and W x = rhs solved by ml-matrix's LU.
 * - particles and damped springs (f_b = −(k (l − l₀) + c l̇) û on the end b): the dense
 *   solver of `auto`, sparse LU on W's CSR, GMRES on the matrix-free operator;
 * - free anisotropic rigid bodies (the gyroscopic torque τ = −ω × (R I Rᵀ ω), whose
 *   Jacobians are nonsymmetric): `auto` above the dense size inverts W's 6×6 blocks one by
 *   one (block-diagonal path), sparse LU the whole W;
 * - the mass-only W (w = 0, r_K = 0): M⁻¹ rhs / (1 + c_v r_M);
 * - the products M x and K x;
 * - in a simulation, `auto`'s block inverses take sparse LU's steps on tumbling boxes (the
 *   sparse LU path is checked against the physics in gyroscopic-jacobian.test.ts and
 *   rigid-body.test.ts).
 */
import { Matrix, solve } from "ml-matrix";
import { describe, expect, it } from "vitest";
import type { ModelInput } from "../../../schemas/model";
import { SchemeCoefficients } from "../../../src/engine/dynamics/stepper";
import { createForceEffectors } from "../../../src/engine/forces/build";
import { loadModel } from "../../../src/engine/index";
import { IterationMatrix } from "../../../src/engine/integrators/iteration-matrix";
import type { LinearSolverName } from "../../../src/engine/solvers/linear/linear-solver";
import { axisAngle, qmul, rotationMatrix } from "../../support/quat";
import { mulberry32 } from "../../support/random";
import { modelSystem } from "../../support/system";

/** Central-difference step (m, rad, m/s, rad/s). */
const FD_STEP = 1e-6;

/** A mechanical system written out for the reference: forces f(x ⊕ δx, v) and M. */
interface Reference {
  n: number;
  /** The model's generalized velocity (linear, then angular for a rigid body). */
  v: number[];
  /**
   * Generalized force (N, N·m) at the model's configuration moved by the increment δx
   * (m; rad, a world-frame rotation vector: q ← exp(δθ) ⊗ q) with the velocities v.
   */
  force(dx: readonly number[], v: readonly number[]): number[];
  mass(): Matrix;
}

/** −∂f/∂x and −∂f/∂v by central differences at δx = 0. */
function jacobians(ref: Reference): { K: Matrix; D: Matrix } {
  const { n } = ref;
  const K = new Matrix(n, n);
  const D = new Matrix(n, n);
  const zero = new Array<number>(n).fill(0);
  for (let j = 0; j < n; j++) {
    const dx = zero.slice();
    dx[j] = FD_STEP;
    const fp = ref.force(dx, ref.v);
    dx[j] = -FD_STEP;
    const fm = ref.force(dx, ref.v);
    const vp = ref.v.slice();
    vp[j] += FD_STEP;
    const gp = ref.force(zero, vp);
    vp[j] -= 2 * FD_STEP;
    const gm = ref.force(zero, vp);
    for (let i = 0; i < n; i++) {
      K.set(i, j, -(fp[i] - fm[i]) / (2 * FD_STEP));
      D.set(i, j, -(gp[i] - gm[i]) / (2 * FD_STEP));
    }
  }
  return { K, D };
}

/** W of the file comment, dense. */
function denseIterationMatrix(ref: Reference, c: SchemeCoefficients): Matrix {
  const { K, D } = jacobians(ref);
  return ref
    .mass()
    .mul(1 + c.cv * c.rayleighMass)
    .add(K.mul(c.w * c.cx + c.cv * c.rayleighStiffness))
    .add(D.mul(c.w * c.cv));
}

function coefficients(h: number, rayleighMass: number, rayleighStiffness: number) {
  // Newmark β = ¼, γ = ½
  const c = new SchemeCoefficients();
  c.cx = 0.25 * h * h;
  c.cv = 0.5 * h;
  c.w = 1;
  c.rayleighMass = rayleighMass;
  c.rayleighStiffness = rayleighStiffness;
  return c;
}

function randomVector(n: number, seed: number): Float64Array {
  const r = mulberry32(seed);
  return Float64Array.from({ length: n }, () => 2 * r() - 1);
}

function maxAbs(x: ArrayLike<number>): number {
  let m = 0;
  for (let i = 0; i < x.length; i++) m = Math.max(m, Math.abs(x[i]));
  return m;
}

function maxDiff(x: ArrayLike<number>, y: ArrayLike<number>): number {
  let m = 0;
  for (let i = 0; i < x.length; i++) m = Math.max(m, Math.abs(x[i] - y[i]));
  return m;
}

/** x = W⁻¹ rhs by ml-matrix's LU of the dense W. */
function denseSolve(W: Matrix, rhs: Float64Array): number[] {
  return solve(W, Matrix.columnVector(Array.from(rhs))).getColumn(0);
}

/** The model's system and effectors, W factored at c with `linearSolver`, and W⁻¹ rhs. */
function engineSolve(
  model: ModelInput,
  linearSolver: LinearSolverName,
  c: SchemeCoefficients,
  rhs: Float64Array,
) {
  const { system, spec } = modelSystem(model);
  const { effectors } = createForceEffectors(spec.forces, system, spec.gravity, true);
  const iteration = new IterationMatrix(system, effectors, linearSolver, false);
  iteration.announce(c);
  iteration.factor(c);
  const x = new Float64Array(system.numDofs);
  const krylovIterations = iteration.solve(c, rhs, x, 1e-13, null);
  return { iteration, system, x, krylovIterations };
}

// ---------------------------------------------------------------- particles and springs

const PARTICLES = [
  { mass: 0.1, position: [0, 0, 0], velocity: [0.3, -0.2, 0.5] },
  { mass: 0.2, position: [0.7, 0.1, -0.1], velocity: [-0.4, 0.1, 0.2] },
  { mass: 0.15, position: [0.2, 0.6, 0.3], velocity: [0.1, 0.6, -0.3] },
];
/** Fixed anchor of the first spring (m). */
const ANCHOR = [-0.5, 0.2, 0.1];
/** [end a (-1: the anchor), end b, k (N/m), c (N s/m), l₀ (m)]: stretched and compressed. */
const SPRINGS: [number, number, number, number, number][] = [
  [-1, 0, 2000, 1.5, 0.3],
  [0, 1, 1500, 2, 0.5],
  [1, 2, 800, 0.5, 0.9],
  [0, 2, 1200, 1, 0.4],
];

function springModel(): ModelInput {
  return {
    gravity: [0, 0, -9.81],
    bodies: PARTICLES.map((p, i) => ({ id: `p${i}`, kind: "particle" as const, ...p })),
    forces: SPRINGS.map(([a, b, stiffness, damping, restLength], i) => ({
      id: `s${i}`,
      type: "spring" as const,
      a: a < 0 ? { body: "ground", point: ANCHOR as [number, number, number] } : { body: `p${a}` },
      b: { body: `p${b}` },
      stiffness,
      damping,
      restLength,
    })),
  } as ModelInput;
}

const springReference: Reference = {
  n: 3 * PARTICLES.length,
  v: PARTICLES.flatMap((p) => p.velocity),
  force(dx, v) {
    const x = PARTICLES.flatMap((p, i) => p.position.map((c, k) => c + dx[3 * i + k]));
    const f = PARTICLES.flatMap((p) => [0, 0, -9.81 * p.mass]);
    for (const [a, b, k, c, l0] of SPRINGS) {
      const xa = a < 0 ? ANCHOR : x.slice(3 * a, 3 * a + 3);
      const va = a < 0 ? [0, 0, 0] : v.slice(3 * a, 3 * a + 3);
      const d = [0, 1, 2].map((i) => x[3 * b + i] - xa[i]);
      const l = Math.hypot(...d);
      const u = d.map((di) => di / l);
      const rate = [0, 1, 2].reduce((s, i) => s + u[i] * (v[3 * b + i] - va[i]), 0);
      const s = k * (l - l0) + c * rate;
      for (let i = 0; i < 3; i++) {
        f[3 * b + i] -= s * u[i];
        if (a >= 0) f[3 * a + i] += s * u[i];
      }
    }
    return f;
  },
  mass: () => Matrix.diag(PARTICLES.flatMap((p) => [p.mass, p.mass, p.mass])),
};

describe("W of particles and damped springs (nonsymmetric K, D) against the dense reference", () => {
  // h = 50 ms: c_x k/m up to 12, so K outweighs M in W
  const c = coefficients(0.05, 0.3, 0.002);
  const rhs = randomVector(springReference.n, 7);
  const reference = denseSolve(denseIterationMatrix(springReference, c), rhs);

  for (const solver of ["auto", "sparse-lu", "gmres"] as const)
    it(`${solver}: W⁻¹ rhs`, () => {
      const { x, krylovIterations } = engineSolve(springModel(), solver, c, rhs);
      // central differences leave ~1e-9 relative in K and D
      expect(maxDiff(x, reference)).toBeLessThan(1e-7 * maxAbs(reference));
      // GMRES runs on the matrix-free operator (iteration-operator.ts), the others factor
      expect(krylovIterations > 0).toBe(solver === "gmres");
    });

  it("sparse-ldlt: W's symmetric form factored on 3×3 node blocks, solved exactly", () => {
    // with a symmetric solver the springs give their symmetric Jacobians (same forces, a
    // different W than the reference's): the solve is checked against W itself, W x = rhs
    const { iteration, x } = engineSolve(springModel(), "sparse-ldlt", c, rhs);
    const n = springReference.n;
    const wx = new Float64Array(n);
    iteration.matrix.multiply(x, wx);
    expect(maxDiff(wx, rhs)).toBeLessThan(1e-13 * maxAbs(rhs));
    // W symmetric, so the symmetric part the block factorization reads is W
    const e = new Float64Array(n);
    const col = new Float64Array(n * n);
    for (let j = 0; j < n; j++) {
      e.fill(0);
      e[j] = 1;
      iteration.matrix.multiply(e, col.subarray(j * n, j * n + n));
    }
    for (let i = 0; i < n; i++)
      for (let j = 0; j < i; j++) expect(col[j * n + i]).toBe(col[i * n + j]);
    // the node-block factorization (block-ldlt.ts), which the contact's Delassus build reads
    const ldlt = iteration.exactFactorization(c, 1);
    expect(ldlt?.nb).toBe(PARTICLES.length);
  });

  it("assembles the same W (dense comparison of every entry)", () => {
    const { iteration } = engineSolve(springModel(), "sparse-lu", c, rhs);
    const W = denseIterationMatrix(springReference, c);
    const n = springReference.n;
    const x = new Float64Array(n);
    const column = new Float64Array(n);
    let worst = 0;
    for (let j = 0; j < n; j++) {
      x.fill(0);
      x[j] = 1;
      iteration.matrix.multiply(x, column);
      for (let i = 0; i < n; i++) worst = Math.max(worst, Math.abs(column[i] - W.get(i, j)));
    }
    expect(worst).toBeLessThan(1e-7 * Math.max(...W.abs().to1DArray()));
  });

  it("M x and K x are the masses' and the springs' stiffness' products", () => {
    const { iteration, system } = engineSolve(springModel(), "sparse-lu", c, rhs);
    const n = system.numDofs;
    const v = randomVector(n, 11);
    const out = new Float64Array(n);
    iteration.massTimes(v, out);
    const mv = springReference
      .mass()
      .mmul(Matrix.columnVector(Array.from(v)))
      .getColumn(0);
    expect(maxDiff(out, mv)).toBeLessThan(1e-15);
    iteration.stiffnessTimes(v, out);
    const { K } = jacobians(springReference);
    const kv = K.mmul(Matrix.columnVector(Array.from(v))).getColumn(0);
    expect(maxDiff(out, kv)).toBeLessThan(1e-6 * maxAbs(kv));
  });

  it("w = 0 and r_K = 0: W = (1 + c_v r_M) M, solved per body without assembly", () => {
    const explicit = coefficients(0.05, 0.3, 0);
    explicit.w = 0;
    const { iteration, x } = engineSolve(springModel(), "sparse-lu", explicit, rhs);
    expect(iteration.usesMassOnly(explicit)).toBe(true);
    const s = 1 + explicit.cv * explicit.rayleighMass;
    for (let i = 0; i < x.length; i++)
      expect(x[i]).toBeCloseTo(rhs[i] / (s * PARTICLES[Math.floor(i / 3)].mass), 14);
    // nothing assembled nor factored: no time counted
    expect(iteration.timing.assembly === 0 && iteration.timing.solve === 0).toBe(true);
  });
});

// ------------------------------------------------------------------- free rigid bodies

/**
 * Eleven free bodies (66 dofs, above the dense size 60) with three distinct inertias, each
 * a body's (the largest at most the sum of the other two).
 */
const BODIES = (() => {
  const r = mulberry32(3);
  return Array.from({ length: 11 }, (_, k) => {
    const orientation = axisAngle([r() - 0.5, r() - 0.5, r() - 0.5], 3 * r());
    return {
      id: `b${k}`,
      mass: 1 + 0.1 * k,
      inertia: [0.25 + 0.005 * k, 0.35, 0.6 - 0.01 * k] as [number, number, number],
      position: [k, 0, 0] as [number, number, number],
      orientation,
      velocity: [r(), r(), r()] as [number, number, number],
      angularVelocity: [10 + k, 20 - k, 5 + 0.5 * k] as [number, number, number],
    };
  });
})();

/** R diag(I) Rᵀ of body k rotated by exp(δθ) from its model orientation. */
function worldInertia(k: number, dTheta: readonly number[]): number[][] {
  const b = BODIES[k];
  const angle = Math.hypot(...dTheta);
  const q = angle === 0 ? b.orientation : qmul(axisAngle(dTheta, angle), b.orientation);
  const R = rotationMatrix(q);
  return [0, 1, 2].map((i) =>
    [0, 1, 2].map(
      (j) =>
        R[i][0] * b.inertia[0] * R[j][0] +
        R[i][1] * b.inertia[1] * R[j][1] +
        R[i][2] * b.inertia[2] * R[j][2],
    ),
  );
}

const rigidReference: Reference = {
  n: 6 * BODIES.length,
  v: BODIES.flatMap((b) => [...b.velocity, ...b.angularVelocity]),
  force(dx, v) {
    const f: number[] = [];
    BODIES.forEach((_, k) => {
      const I = worldInertia(k, dx.slice(6 * k + 3, 6 * k + 6));
      const w = v.slice(6 * k + 3, 6 * k + 6);
      const h = I.map((row) => row[0] * w[0] + row[1] * w[1] + row[2] * w[2]);
      // τ = −ω × h
      f.push(0, 0, 0);
      f.push(
        -(w[1] * h[2] - w[2] * h[1]),
        -(w[2] * h[0] - w[0] * h[2]),
        -(w[0] * h[1] - w[1] * h[0]),
      );
    });
    return f;
  },
  mass() {
    const M = new Matrix(this.n, this.n);
    BODIES.forEach((b, k) => {
      const I = worldInertia(k, [0, 0, 0]);
      for (let i = 0; i < 3; i++) {
        M.set(6 * k + i, 6 * k + i, b.mass);
        for (let j = 0; j < 3; j++) M.set(6 * k + 3 + i, 6 * k + 3 + j, I[i][j]);
      }
    });
    return M;
  },
};

function rigidModel(): ModelInput {
  return { gravity: [0, 0, 0], bodies: BODIES } as ModelInput;
}

describe("W of free spinning rigid bodies (gyroscopic Jacobians) against the dense reference", () => {
  // h ω up to 0.4 at h = 20 ms
  const c = coefficients(0.02, 0.1, 0.001);
  const rhs = randomVector(rigidReference.n, 5);
  const reference = denseSolve(denseIterationMatrix(rigidReference, c), rhs);

  it("auto: W's 6×6 blocks inverted one by one", () => {
    const { iteration, x } = engineSolve(rigidModel(), "auto", c, rhs);
    expect(iteration.diagonalFactored).toBe(true);
    expect(maxDiff(x, reference)).toBeLessThan(1e-7 * maxAbs(reference));
  });

  it("sparse-lu: the whole W factored", () => {
    const { iteration, x } = engineSolve(rigidModel(), "sparse-lu", c, rhs);
    expect(iteration.diagonalFactored).toBe(false);
    expect(maxDiff(x, reference)).toBeLessThan(1e-7 * maxAbs(reference));
  });
});

/**
 * Twelve free boxes (72 dofs, above the dense limit of 60) with three different half
 * extents, spinning fast about axes off their principal ones (h |ω| up to 0.15 at
 * h = 5 ms), no gravity: torque-free tumbling (Euler's equations).
 */
function tumbling(linearSolver: string) {
  const bodies = Array.from({ length: 12 }, (_, k) => ({
    id: `b${k}`,
    mass: 1 + 0.1 * k,
    position: [k, 0, 0],
    angularVelocity: [10 + k, 20 - k, 5 + 0.5 * k],
    shapes: [{ type: "box", halfExtents: [0.3, 0.15 + 0.01 * k, 0.05] }],
  }));
  return loadModel({
    gravity: [0, 0, 0],
    bodies,
    solver: { integrator: "moreau-jean", dt: 0.005, linearSolver },
  });
}

describe("`auto` on a block-diagonal W in a simulation (free anisotropic rigid bodies)", () => {
  it("takes the sparse LU's steps to the Newton tolerance", () => {
    const auto = tumbling("auto");
    const lu = tumbling("sparse-lu");
    const steps = 200;
    auto.step(steps);
    lu.step(steps);
    const a = auto.state().bodies;
    const b = lu.state().bodies;
    let dq = 0;
    let dw = 0;
    for (let k = 0; k < a.length; k++)
      for (let i = 0; i < 3; i++) {
        dq = Math.max(dq, Math.abs(a[k].orientation[i] - b[k].orientation[i]));
        dw = Math.max(dw, Math.abs(a[k].angularVelocity[i] - b[k].angularVelocity[i]));
      }
    // both converge Newton to 1e-10 (1 + ‖a‖∞) in rad/s² on the same equations
    expect(dq).toBeLessThan(1e-9);
    expect(dw).toBeLessThan(1e-7);
    // the path was taken, and the bodies tumbled (their orientations far from the start)
    const { stepper } = auto as unknown as { stepper: { iteration: IterationMatrix } };
    expect(stepper.iteration.diagonalFactored).toBe(true);
    expect(Math.min(...a.map((x) => Math.abs(x.orientation[0])))).toBeLessThan(0.9);
  });
});
