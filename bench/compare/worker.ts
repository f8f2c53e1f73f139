/**
 * One repetition in a fresh process:
 *   node --import tsx bench/compare/worker.ts <engine> <scene> [--max-seconds s]
 * prints one line `RESULT {json}` (a RunResult, ../fresh-process.ts) on stdout and exits 0,
 * also when the run failed (the failure is in the result's status). Engine initialisation
 * (WASM) is not timed.
 */
import { printResult } from "../fresh-process";
import { loadEngine } from "./engines/index";
import { type RunResult, runScene } from "./protocol";
import { buildScene } from "./scene";

async function main(argv: string[]): Promise<RunResult> {
  const [engineKey, sceneId] = argv;
  const at = argv.indexOf("--max-seconds");
  const maxSeconds = at >= 0 ? Number(argv[at + 1]) : undefined;
  const scene = buildScene(sceneId);
  const engine = await loadEngine(engineKey);
  await engine.init();
  return runScene(engine, scene, { maxSeconds });
}

const argv = process.argv.slice(2);
let result: RunResult | { engine: string; scene: string; status: "failed"; message: string };
try {
  result = await main(argv);
} catch (err) {
  result = {
    engine: argv[0] ?? "?",
    scene: argv[1] ?? "?",
    status: "failed",
    message: `${(err as Error)?.name}: ${(err as Error)?.message ?? String(err)}`,
  };
}
printResult(result);
process.exit(0);
