/**
 * Deformable-body benchmark (issue 31): a cantilever beam of linear tetrahedra under
 * gravity stepped with Newmark (β = ¼, γ = ½, h = 5 ms), the 10 × 10 × 40 cells:
 * 11 × 11 × 41 = 4 961 nodes (4 840 free, the face x = 0 clamped: 14 520 dofs) and
 * 20 000 tetrahedra, 0.25 × 0.25 × 1 m, E = 1e8 Pa, ν = 0.3, ρ = 1000 kg/m³, corotational.
 * Anchor: SOFA's tetrahedral corotational FEM on this beam, about 23.5 steps/s on a CPU
 * (its published pull-request figures: one linearized step, CG of 25 iterations at a 1e-9
 * threshold). Figures: steps/s and the split of a step's time between assembly (forces,
 * Jacobians, the iteration matrix) and the linear solves, for
 *  - the defaults (exact tangent, Newton iterated to solver.newtonTolerance, `auto`: CG
 *    preconditioned by a reused block LDLᵀ factorization, solvers/linear/factored-pcg.ts);
 *  - the approximate tangent R K₀ Rᵀ, one linearized step (newtonIterations 1), `auto`, to
 *    the default relative residual and to linearTolerance 1e-3;
 *  - the same with `cg` on the assembled matrix (IC(0)) to 1e-6, the path before;
 *  - SOFA's CG: no preconditioner, 25 iterations (linearPreconditioner "none").
 * The first step (not timed) holds the first factorization. The tip's sag (its mid node,
 * mm) after the steps shows what a loose or capped solve costs in accuracy against the
 * converged runs.
 */
import { loadModel } from "../src/engine/index";

interface Variant {
  label: string;
  tangent: "exact" | "approximate";
  solver: Record<string, unknown>;
}

const VARIANTS: Variant[] = [
  { label: "defaults (exact tangent, Newton to 1e-10, auto)", tangent: "exact", solver: {} },
  {
    label: "approximate tangent, linearized (auto)",
    tangent: "approximate",
    solver: { newtonIterations: 1 },
  },
  {
    label: "… and linearTolerance 1e-3",
    tangent: "approximate",
    solver: { newtonIterations: 1, linearTolerance: 1e-3 },
  },
  {
    label: "… cg (IC(0)) to 1e-6 instead",
    tangent: "approximate",
    solver: { newtonIterations: 1, linearSolver: "cg", linearTolerance: 1e-6 },
  },
  {
    label: "… cg, no preconditioner, 25 iterations (SOFA's CG)",
    tangent: "approximate",
    solver: {
      newtonIterations: 1,
      linearSolver: "cg",
      linearTolerance: 1e-9,
      linearIterations: 25,
      linearPreconditioner: "none",
    },
  },
];

export function beamModel(tangent: "exact" | "approximate", solver: Record<string, unknown>) {
  return {
    name: "fem-beam",
    bodies: [{ id: "wall", fixed: true }],
    fem: [
      {
        id: "beam",
        box: { size: [1, 0.25, 0.25], resolution: [40, 10, 10], center: [0.5, 0, 0] },
        density: 1000,
        youngModulus: 1e8,
        poissonRatio: 0.3,
        tangent,
        fixedFaces: ["-x"],
      },
    ],
    solver: { integrator: "newmark", dt: 0.005, ...solver },
  };
}

/** The tip's mid node (40, 5, 5) on the 41 × 11 × 11 grid. */
const TIP = 40 + 41 * (5 + 11 * 5);

export function runFemBench(steps = 40): void {
  const rows: Record<string, string | number>[] = [];
  for (const v of VARIANTS) {
    const sim = loadModel(beamModel(v.tangent, v.solver));
    sim.step(1); // warm-up (the first factorization and its ordering, JIT)
    const a0 = sim.timing.assembly;
    const s0 = sim.timing.solve;
    const t0 = performance.now();
    sim.step(steps);
    const ms = performance.now() - t0;
    const st = sim.state();
    const tip = st.bodies.find((x) => x.id === `beam/${TIP}`);
    rows.push({
      settings: v.label,
      dofs: sim.system.numDofs,
      "steps/s": ((1000 * steps) / ms).toPrecision(3),
      "ms/step": (ms / steps).toPrecision(3),
      "assembly ms/step": ((sim.timing.assembly - a0) / steps).toPrecision(3),
      "solve ms/step": ((sim.timing.solve - s0) / steps).toPrecision(3),
      "newton it/step": st.solver.newtonIterations,
      "linear it": st.solver.linearIterations,
      "tip sag (mm)": (-1000 * (tip?.position[2] ?? Number.NaN)).toFixed(4),
    });
  }
  console.log("\n## Newmark FEM beam 10 × 10 × 40 cells, 4 961 nodes (issue 31)");
  console.table(rows);
}
