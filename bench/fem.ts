/**
 * Deformable-body benchmark (issue 31): a cantilever beam of linear tetrahedra under
 * gravity stepped with Newmark (β = ¼, γ = ½, h = 5 ms), the issue's 10 × 10 × 40 cells:
 * 11 × 11 × 41 = 4 961 nodes (4 840 free, the face x = 0 clamped: 14 520 dofs) and
 * 20 000 tetrahedra, 0.25 × 0.25 × 1 m, E = 1e8 Pa, ν = 0.3, ρ = 1000 kg/m³, corotational.
 * Anchor: SOFA's tetrahedral corotational FEM on this beam, about 23.5 steps/s on a CPU
 * (its published pull-request figures: one linearized step, CG of 25 iterations at a 1e-9
 * threshold). Figures: steps/s and the split of a step's time between the assembly of the
 * iteration matrix (Jacobians), the linear solves (factorizations included) and the rest
 * (force evaluations, the integrator's vectors), for
 *  - the defaults (exact tangent, Newton iterated to solver.newtonTolerance, `auto`: CG
 *    preconditioned by a reused block LDLᵀ factorization, solvers/linear/factored-pcg.ts);
 *  - the approximate tangent R K₀ Rᵀ, one linearized step (newtonIterations 1), `auto`, to
 *    the default relative residual and to linearTolerance 1e-3;
 *  - the same with `cg` on the assembled matrix (IC(0)) to 1e-6, the path before;
 *  - SOFA's CG: no preconditioner, 25 iterations (linearPreconditioner "none").
 * The first step (not timed) holds the first factorization. The tip's sag (its mid node,
 * mm) after the steps shows what a loose or capped solve costs in accuracy against the
 * converged runs. Each repetition is a fresh process (fresh-process.ts, fem-worker.ts)
 * running every variant; the table gives each repetition's steps/s and the medians.
 */
import path from "node:path";
import { fileURLToPath } from "node:url";
import { loadModel } from "../src/engine/index";
import { medianOf, runFresh } from "./fresh-process";

interface Variant {
  label: string;
  tangent: "exact" | "approximate";
  solver: Record<string, unknown>;
}

const VARIANTS: Variant[] = [
  { label: "defaults (exact tangent, Newton's default stop, auto)", tangent: "exact", solver: {} },
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

/** The tuned row compared with SOFA's figure. */
const TUNED = 2;

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
/** SOFA's published figure on this beam (steps/s). */
const SOFA_STEPS_PER_SECOND = 23.5;
/** Repetitions, each in a fresh process (fresh-process.ts), and the timed steps of each row. */
const REPETITIONS = 3;
const STEPS = 40;
const TIMEOUT_SECONDS = 900;

/** One row of one repetition: its settings' figures over the timed steps. */
export interface FemRow {
  settings: string;
  dofs: number;
  stepsPerSecond: number;
  msPerStep: number;
  /** Iteration-matrix assembly and linear solves (Simulation.timing), ms per step. */
  assemblyMs: number;
  solveMs: number;
  /** The last step's Newton iterations and linear (CG) iterations. */
  newtonIterations: number;
  linearIterations: number;
  /** The tip's sag after the steps (mm). */
  tipSagMm: number;
}

/** Every variant in this process, one after the other (what fem-worker.ts runs). */
export function measureFem(steps = STEPS): FemRow[] {
  const rows: FemRow[] = [];
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
      stepsPerSecond: (1000 * steps) / ms,
      msPerStep: ms / steps,
      assemblyMs: (sim.timing.assembly - a0) / steps,
      solveMs: (sim.timing.solve - s0) / steps,
      newtonIterations: st.solver.newtonIterations,
      linearIterations: st.solver.linearIterations,
      tipSagMm: -1000 * (tip?.position[2] ?? Number.NaN),
    });
  }
  return rows;
}

/** What fem-worker.ts prints. */
export interface FemRepetition {
  rows: FemRow[];
  /** 1-minute load average when the repetition started. */
  loadAverage: number;
}

/**
 * REPETITIONS fresh processes one after the other, each running every variant
 * (fem-worker.ts); prints each repetition's steps/s and, per variant, the medians over
 * the repetitions (steps/s, ms/step, the assembly/solve split).
 */
export async function runFemBench(reps = REPETITIONS): Promise<void> {
  const worker = path.join(path.dirname(fileURLToPath(import.meta.url)), "fem-worker.ts");
  const done: FemRepetition[] = [];
  for (let rep = 1; rep <= reps; rep++) {
    const run = await runFresh<FemRepetition>(worker, [String(STEPS)], TIMEOUT_SECONDS);
    if (run.result) done.push(run.result);
    else
      console.log(
        `repetition ${rep} failed (${run.timedOut ? "timeout" : `exit code ${run.code}`}): ${run.stderrTail.trim().split("\n").slice(-3).join(" | ")}`,
      );
  }
  console.log(
    `\n## Newmark FEM beam 10 × 10 × 40 cells, 4 961 nodes (issue 31): ${done.length} fresh processes, ${STEPS} steps each after one; load ${done.map((d) => d.loadAverage.toFixed(1)).join(", ")}`,
  );
  if (done.length === 0) return;
  const median = (k: number, pick: (r: FemRow) => number) =>
    medianOf(done.map((d) => pick(d.rows[k])));
  const rows = done[0].rows.map((first, k) => {
    const row: Record<string, string | number> = { settings: first.settings, dofs: first.dofs };
    done.forEach((d, i) => {
      row[`steps/s #${i + 1}`] = d.rows[k].stepsPerSecond.toPrecision(3);
    });
    row["median steps/s"] = median(k, (r) => r.stepsPerSecond).toPrecision(3);
    row["ms/step"] = median(k, (r) => r.msPerStep).toPrecision(3);
    row["assembly ms/step"] = median(k, (r) => r.assemblyMs).toPrecision(3);
    row["solve ms/step"] = median(k, (r) => r.solveMs).toPrecision(3);
    row["rest ms/step"] = median(k, (r) => r.msPerStep - r.assemblyMs - r.solveMs).toPrecision(3);
    row["newton it/step"] = first.newtonIterations;
    row["linear it"] = first.linearIterations;
    row["tip sag (mm)"] = first.tipSagMm.toFixed(4);
    return row;
  });
  console.table(rows);
  const tuned = medianOf(done.map((d) => d.rows[TUNED].stepsPerSecond));
  console.log(
    `"${VARIANTS[TUNED].label}": median ${tuned.toPrecision(3)} steps/s, ${(tuned / SOFA_STEPS_PER_SECOND).toFixed(2)}× SOFA's ${SOFA_STEPS_PER_SECOND}`,
  );
}
