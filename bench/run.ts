/**
 * `npm run bench`: the engine and service benchmarks, printed as tables. Figures are
 * wall-clock on this machine; run nothing else meanwhile. Options:
 *   --only <name>   run one group (cloth, ...)
 */
import { loadModel } from "../src/index";
import { clothModel } from "./scenes";

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

/** Newmark cloth (structural + shear springs, two corners pinned, h = 0.01). */
function benchCloth(): void {
  const rows: Row[] = [];
  for (const n of [32, 100]) {
    const sim = loadModel(
      clothModel({ n, pin: "corners", dt: 0.01, stiffness: 100, damping: 0.1 }),
    );
    const warm = n > 50 ? 5 : 20;
    sim.step(warm);
    const a0 = sim.timing.assembly;
    const s0 = sim.timing.solve;
    const steps = n > 50 ? 50 : 300;
    const t0 = performance.now();
    sim.step(steps);
    const ms = performance.now() - t0;
    rows.push({
      scene: `cloth ${n}x${n} (${sim.system.numDofs} dof)`,
      "steps/s": fmt((1000 * steps) / ms),
      "ms/step": fmt(ms / steps),
      "assembly ms/step": fmt((sim.timing.assembly - a0) / steps),
      "linear solve ms/step": fmt((sim.timing.solve - s0) / steps),
    });
  }
  table("Newmark cloth, h = 0.01 (issue 2)", rows);
}

const groups: Record<string, () => void | Promise<void>> = { cloth: benchCloth };

const only = process.argv.indexOf("--only");
const names = only >= 0 ? [process.argv[only + 1]] : Object.keys(groups);
for (const name of names) {
  const g = groups[name];
  if (!g)
    throw new Error(`unknown bench group "${name}"; known: ${Object.keys(groups).join(", ")}`);
  await g();
}
