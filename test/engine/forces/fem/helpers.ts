/**
 * Helpers of the FEM tests: a BodySystem of particles for a mesh (lumped masses, fixed
 * nodes), and a static equilibrium solve by Newton's method on the engine's assembly
 * (addPosJacobian into a SparseBlockMatrix, the sparse LDLᵀ factorization): find x with
 * Σ f(x) = 0 over the dynamic nodes,
 *   K Δx = F(x),   K = −Σ ∂f/∂x,   x ← x + Δx,
 * until ‖Δx‖∞ ≤ tolerance (1 + ‖x‖∞).
 */
import type { ForceEffector } from "../../../../src/engine/forces/effector";
import {
  FemEffector,
  type FemEffectorOptions,
} from "../../../../src/engine/forces/fem/fem-effector";
import { lumpedMasses, type TetMesh } from "../../../../src/engine/forces/fem/mesh";
import { SparseBlockMatrix } from "../../../../src/engine/math/block-matrix";
import {
  addPositionIncrement,
  BodySystem,
  clearForces,
  getForces,
} from "../../../../src/engine/model/body-system";
import { SparseLdltSolver } from "../../../../src/engine/solvers/linear/sparse-ldlt";
import { bodyInit } from "../../../support/body-init";
import { rotationMatrix } from "../../../support/quat";
import { randomQuat } from "../jacobian-check";

/** A rotation matrix (row-major) uniform on SO(3): R(q) of jacobian-check's randomQuat. */
export function randomRotation(rng: () => number): number[] {
  const q = new Float64Array(4);
  randomQuat(rng, q, 0);
  return rotationMatrix(Array.from(q)).flat();
}

/** Particles for the nodes of `mesh` (ids "n<k>"), lumped masses, `fixed` nodes fixed. */
export function meshSystem(
  mesh: TetMesh,
  density: number,
  fixed: Iterable<number> = [],
): BodySystem {
  const mass = lumpedMasses(mesh, density);
  const isFixed = new Set(fixed);
  const n = mesh.nodes.length / 3;
  return new BodySystem(
    Array.from({ length: n }, (_, k) =>
      bodyInit(`n${k}`, "particle", {
        fixed: isFixed.has(k),
        mass: mass[k] > 0 ? mass[k] : 1,
        position: [mesh.nodes[3 * k], mesh.nodes[3 * k + 1], mesh.nodes[3 * k + 2]],
      }),
    ),
  );
}

/** A FemEffector over every node of `mesh` in `sys` (node k is body k). */
export function meshEffector(
  sys: BodySystem,
  mesh: TetMesh,
  o: Omit<FemEffectorOptions, "id" | "nodeBodies" | "rest" | "elements"> & { id?: string },
): FemEffector {
  const n = mesh.nodes.length / 3;
  return new FemEffector(sys, {
    id: o.id ?? "fem",
    nodeBodies: Int32Array.from({ length: n }, (_, k) => k),
    rest: mesh.nodes,
    elements: mesh.elements,
    youngModulus: o.youngModulus,
    poissonRatio: o.poissonRatio,
    material: o.material,
    tangent: o.tangent,
  });
}

export interface StaticResult {
  iterations: number;
  /** ‖Δx‖∞ of the last iteration (m). */
  update: number;
  /** ‖F‖∞ at the solution (N). */
  residual: number;
}

/** Static equilibrium of `effectors` on sys's dynamic nodes by Newton (see header). */
export function solveStatic(
  sys: BodySystem,
  effectors: readonly ForceEffector[],
  options: { tolerance?: number; maxIterations?: number } = {},
): StaticResult {
  const tol = options.tolerance ?? 1e-13;
  const max = options.maxIterations ?? 30;
  const n = sys.numDofs;
  const m = new SparseBlockMatrix(sys.blockSizes);
  for (const e of effectors) e.addSolveBlocks(m);
  m.finalize();
  const solver = new SparseLdltSolver();
  const f = new Float64Array(n);
  const dx = new Float64Array(n);
  const force = () => {
    clearForces(sys);
    for (const e of effectors) e.applyForces(0);
    getForces(sys, f);
  };
  let update = Number.POSITIVE_INFINITY;
  let it = 0;
  for (; it < max; it++) {
    force();
    m.clear();
    for (const e of effectors) e.addPosJacobian(m, -1);
    solver.factor(m.toCsr());
    dx.fill(0);
    solver.solve(f, dx);
    addPositionIncrement(sys, dx, 1);
    update = 0;
    let xmax = 0;
    for (let i = 0; i < n; i++) update = Math.max(update, Math.abs(dx[i]));
    for (const x of sys.pos) xmax = Math.max(xmax, Math.abs(x));
    if (update <= tol * (1 + xmax)) {
      it++;
      break;
    }
  }
  force();
  let residual = 0;
  for (let i = 0; i < n; i++) residual = Math.max(residual, Math.abs(f[i]));
  return { iterations: it, update, residual };
}
