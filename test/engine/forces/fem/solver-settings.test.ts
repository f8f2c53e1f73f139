/**
 * The Krylov settings an elastic solid asks for (solver.linearTolerance, linearIterations;
 * bench/fem.ts): a Newmark cantilever (approximate tangent, linearized steps, cg). The
 * tip's sag after 0.1 s with each setting is compared with the default run's (CG to the
 * inexact-Newton tolerance 1e-10), not with itself: a looser relative residual η leaves an
 * error of order κ η in each step's Δa; a capped solve is taken as it is (SOFA's CG), and
 * the linear iterations the State reports are the cap; another preconditioner reaches the
 * same solution in more iterations.
 */
import { describe, expect, it } from "vitest";
import { Model } from "../../../../schemas/model";
import { loadModel } from "../../../../src/engine/index";

function beam(solver: Record<string, unknown>) {
  return loadModel({
    bodies: [{ id: "wall", fixed: true }],
    fem: [
      {
        id: "beam",
        box: { size: [1, 0.1, 0.1], resolution: [20, 2, 2], center: [0.5, 0, 0] },
        density: 1000,
        youngModulus: 1e7,
        poissonRatio: 0.3,
        tangent: "approximate",
        fixedFaces: ["-x"],
      },
    ],
    solver: {
      integrator: "newmark",
      dt: 0.005,
      newtonIterations: 1,
      linearSolver: "cg",
      ...solver,
    },
  });
}

/** Sag of the tip's mid node (m, downward) after 20 steps, and the last step's CG iterations. */
function run(solver: Record<string, unknown>) {
  const sim = beam(solver);
  sim.step(20);
  const st = sim.state();
  const tip = st.bodies.find((b) => b.id === `beam/${20 + 21 * (1 + 3 * 1)}`);
  return { sag: -(tip?.position[2] ?? Number.NaN), iterations: st.solver.linearIterations };
}

describe("Krylov settings of the Newton step", () => {
  const reference = run({});

  it("linearTolerance loosens each CG solve: fewer iterations, the same motion to κη", () => {
    expect(reference.sag).toBeGreaterThan(0.01);
    const loose = run({ linearTolerance: 1e-6 });
    expect(loose.iterations).toBeLessThan(reference.iterations);
    expect(Math.abs(loose.sag / reference.sag - 1)).toBeLessThan(1e-4);
  });

  it("linearIterations caps each CG solve, taken as it is", () => {
    const capped = run({ linearIterations: 5 });
    expect(reference.iterations).toBeGreaterThan(5);
    expect(capped.iterations).toBe(5);
    // five iterations of IC(0)-preconditioned CG: the sag within a few percent
    expect(Math.abs(capped.sag / reference.sag - 1)).toBeLessThan(0.05);
  });

  it("linearPreconditioner chooses CG's: Jacobi and none converge to the same motion, in more iterations", () => {
    for (const linearPreconditioner of ["jacobi", "none"]) {
      const other = run({ linearPreconditioner });
      expect(other.iterations, linearPreconditioner).toBeGreaterThan(reference.iterations);
      expect(Math.abs(other.sag / reference.sag - 1), linearPreconditioner).toBeLessThan(1e-6);
    }
    expect(run({ linearPreconditioner: "ic0" })).toEqual(reference);
  });

  it("`auto` runs CG with a reused block factorization on fem nodes: the step of sparse LDLᵀ", () => {
    // 17 × 10 × 10 cells: 18 × 11 × 11 = 2178 nodes, 121 clamped: 6171 dofs
    const big = (tangent: string, linearSolver: string) => {
      const sim = loadModel({
        bodies: [{ id: "wall", fixed: true }],
        fem: [
          {
            id: "beam",
            box: { size: [0.85, 0.5, 0.5], resolution: [17, 10, 10], center: [0.425, 0, 0] },
            density: 1000,
            youngModulus: 1e7,
            tangent,
            fixedFaces: ["-x"],
          },
        ],
        solver: { integrator: "newmark", dt: 0.005, newtonIterations: 1, linearSolver },
      });
      expect(sim.system.numDofs).toBe(6171);
      sim.step(2);
      const st = sim.state();
      return {
        iterations: st.solver.linearIterations,
        x: st.bodies.flatMap((b) => [...b.position]),
      };
    };
    // both tangents (the exact one symmetric, here positive definite): PCG iterations, and
    // the positions of the direct factorization to the solves' relative residual 1e-10
    // (times c_x Δa: the step moves the free end by ~1e-4 m)
    for (const tangent of ["approximate", "exact"]) {
      const auto = big(tangent, "auto");
      expect(auto.iterations).toBeGreaterThan(0);
      const ref = big(tangent, "sparse-ldlt");
      let d = 0;
      for (let i = 0; i < ref.x.length; i++) d = Math.max(d, Math.abs(auto.x[i] - ref.x[i]));
      expect(d).toBeLessThan(1e-12);
    }
  }, 60_000);

  it("a singular W names its cause and the node, with factored PCG (auto) and sparse-ldlt", () => {
    // a node's position made NaN behind the simulation's back: its elements' tangent, so W's
    // pivot block there, is not finite. Before: "linear solver cg failed (relative residual
    // 0.00e+0 after 0 iterations)" (factored PCG's direct solve, which did not iterate) and
    // "linear solver sparse-ldlt failed (a singular pivot block)"
    for (const linearSolver of ["auto", "sparse-ldlt"]) {
      const sim = loadModel({
        bodies: [{ id: "wall", fixed: true }],
        fem: [
          {
            id: "jelly",
            box: { size: [0.3, 0.3, 0.3], resolution: [3, 3, 3], center: [0, 0, 1] },
            density: 1000,
            youngModulus: 1e5,
            fixedFaces: ["-z"],
          },
        ],
        solver: { integrator: "newmark", dt: 0.005, linearSolver },
      });
      sim.step(2);
      const node = sim.system.index.get("jelly/40") ?? -1;
      sim.system.pos[3 * node] = Number.NaN;
      const name = linearSolver === "auto" ? "factored-pcg" : "sparse-ldlt";
      expect(() => sim.step(1)).toThrow(
        new RegExp(`linear solver ${name} failed: .* singular or not finite at body "jelly/40"`),
      );
    }
  });

  it("are validated: positive, the cap an integer", () => {
    const issues = (solver: Record<string, unknown>) => {
      const r = Model.safeParse({ bodies: [{ id: "a", kind: "particle", mass: 1 }], solver });
      return r.success ? [] : r.error.issues.map((i) => i.path.join("."));
    };
    expect(issues({ linearIterations: 0 })).toEqual(["solver.linearIterations"]);
    expect(issues({ linearIterations: 2.5 })).toEqual(["solver.linearIterations"]);
    expect(issues({ linearTolerance: 0 })).toEqual(["solver.linearTolerance"]);
    expect(issues({ linearPreconditioner: "ilu0" })).toEqual(["solver.linearPreconditioner"]);
    expect(
      issues({ linearTolerance: null, linearIterations: null, linearPreconditioner: null }),
    ).toEqual([]);
  });
});
