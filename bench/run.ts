/**
 * `npm run bench`: the engine and service benchmarks, printed as tables. Figures are
 * wall-clock on this machine; run nothing else meanwhile. Options:
 *   --only <name>   run one group: cloth, assembly, contact, impacts, server, control, bodies,
 *                   cluster, fem, parallel
 *   --compare       the side-by-side comparison with the peer engines (bench/compare/)
 *   --matched       the chains at matched accuracy: each engine at several of its accuracy
 *                   settings (bench/compare/matched.ts)
 */
import { loadModel } from "../src/engine/index";
import { runClusterBench } from "./cluster";
import { runContactBench } from "./contact";
import { runControlBench } from "./control";
import { runFemBench } from "./fem";
import { runImpactsBench } from "./impacts";
import { runModelBodiesBench } from "./model-bodies";
import { runParallelBench } from "./parallel";
import { chainModel, clothModel } from "./scenes";
import { runServerLoad } from "./server-load";

interface Row {
  [column: string]: string | number;
}

function table(title: string, rows: Row[]): void {
  console.log(`\n## ${title}`);
  console.table(rows);
}

function fmt(x: number, digits = 3): string {
  return x.toPrecision(digits);
}

/**
 * Newmark cloth (structural + shear springs, two corners pinned, h = 0.01), with sparse LU
 * on the exact Jacobian (damped springs make W nonsymmetric) and with `cg`, what `auto`
 * picks at this size (the springs' symmetric Jacobian on the matrix-free Newton operator,
 * block Jacobi).
 */
function benchCloth(): void {
  const rows: Row[] = [];
  for (const n of [32, 100])
    for (const linearSolver of ["sparse-lu", "cg"] as const) {
      const model = clothModel({ n, pin: "corners", dt: 0.01, stiffness: 100, damping: 0.1 });
      const sim = loadModel({ ...model, solver: { ...model.solver, linearSolver } });
      const big = n > 50;
      sim.step(big ? 2 : 10);
      const a0 = sim.timing.assembly;
      const s0 = sim.timing.solve;
      const steps = big ? 3 : 100;
      const t0 = performance.now();
      sim.step(steps);
      const ms = performance.now() - t0;
      rows.push({
        scene: `cloth ${n}x${n} (${sim.system.numDofs} dof)`,
        solver: linearSolver === "cg" ? "cg (matrix-free; auto)" : linearSolver,
        "steps/s": fmt((1000 * steps) / ms),
        "ms/step": fmt(ms / steps),
        "assembly ms/step": fmt((sim.timing.assembly - a0) / steps),
        "linear solve ms/step": fmt((sim.timing.solve - s0) / steps),
      });
    }
  table("Newmark cloth, h = 0.01 (issue 2)", rows);
}

/** Full assembly analysis (position, velocity, acceleration) of long chains (issue 3). */
function benchAssembly(): void {
  const rows: Row[] = [];
  let prev: { links: number; ms: number } | null = null;
  for (const links of [100, 1000]) {
    const sim = loadModel(chainModel({ links }));
    // swing a little so every level has work to do, then perturb nothing: assemble as is
    sim.step(20);
    const reps = links > 500 ? 3 : 10;
    sim.assemble({}); // warm-up
    const t0 = performance.now();
    let result = sim.assemble({});
    for (let r = 1; r < reps; r++) result = sim.assemble({});
    const ms = (performance.now() - t0) / reps;
    rows.push({
      chain: `${links} links (${6 * links} dof, ${3 * links} rows)`,
      "ms/analysis": fmt(ms),
      exitFlag: result.exitFlag,
      "growth vs previous": prev ? `${fmt(ms / prev.ms)}× for ${links / prev.links}× links` : "",
    });
    prev = { links, ms };
  }
  table("Assembly analysis of a chain (issue 3)", rows);
}

const groups: Record<string, () => void | Promise<void>> = {
  cloth: benchCloth,
  assembly: benchAssembly,
  contact: () => {
    runContactBench({});
  },
  impacts: () => {
    runImpactsBench();
  },
  server: async () => {
    await runServerLoad({});
  },
  control: async () => {
    await runControlBench({});
  },
  bodies: async () => {
    await runModelBodiesBench();
  },
  fem: async () => {
    await runFemBench();
  },
  cluster: async () => {
    await runClusterBench();
  },
  parallel: async () => {
    await runParallelBench();
  },
};

if (process.argv.includes("--matched")) {
  await (await import("./compare/matched")).main(process.argv.slice(2));
  process.exit(0);
}

if (process.argv.includes("--compare")) {
  await (await import("./compare/run")).main(process.argv.slice(2));
  process.exit(0);
}

const only = process.argv.indexOf("--only");
const names = only >= 0 ? [process.argv[only + 1]] : Object.keys(groups);
for (const name of names) {
  const g = groups[name];
  if (!g)
    throw new Error(`unknown bench group "${name}"; known: ${Object.keys(groups).join(", ")}`);
  await g();
}
