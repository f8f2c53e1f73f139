/**
 * The engine comparison (`npm run bench -- --compare`, or `npx tsx bench/compare/run.ts`):
 * for each scene, N rounds in which every engine runs one repetition, each in a fresh
 * process (bench/compare/worker.ts), never two at once; the median of an engine's
 * repetitions is printed as one table per scene and everything is written to
 * bench/runs/compare-<date>.json (not in git) with a description of the machine; with
 * --baseline-update the finished file replaces the baseline kept in git, the one
 * compare-*.json of bench/results/. Rounds rather than
 * an engine's repetitions back to back: on a shared machine whose speed drifts by tens of
 * per cent over minutes, a slow period then falls on every engine's repetitions alike
 * instead of on one engine's median.
 *
 * Options:
 *   --scenes S1-100,S2-10,...   scenes (default: all of COMPARE_SCENE_IDS)
 *   --engines moreau,rapier,... engines (default: DEFAULT_ENGINES, Bullet "ammo" included); an
 *                               engine set up for some scene kinds only (the Moreau
 *                               generalized-α variants: the chain) skips the others
 *   --reps N                    repetitions per scene and engine (default 3)
 *   --timeout S                 per-repetition timeout in seconds (default 600); the
 *                               worker stops its timed loop itself at 80 % of it
 *   --out DIR                   results directory (default bench/runs)
 *   --baseline FILE             an earlier results file: adds a "vs baseline" column
 *   --baseline-update           when the run is done, its file replaces the baseline:
 *                               copied to bench/results/, every other compare-* file
 *                               there deleted
 */
import { execFileSync } from "node:child_process";
import { copyFileSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { medianOf, runFresh } from "../fresh-process";
import { DEFAULT_ENGINES, ENGINE_KEYS, engineRunsScene } from "./engines/index";
import type { RunResult, RunStatus } from "./protocol";
import { buildScene, COMPARE_SCENE_IDS, type SceneKind } from "./scene";
import { targetVerdicts } from "./targets";

const HERE = path.dirname(fileURLToPath(import.meta.url));
const ROOT = path.resolve(HERE, "../..");
const WORKER = path.join(HERE, "worker.ts");
/** The baseline kept in git: one compare-<date>.json. */
const BASELINE_DIR = path.join(ROOT, "bench/results");
/** Where runs write by default (.gitignore). */
const RUNS_DIR = path.join(ROOT, "bench/runs");

export interface CompareOptions {
  scenes: string[];
  engines: string[];
  reps: number;
  timeoutSeconds: number;
  outDir: string;
  baseline?: string;
  /** Replace the baseline in bench/results/ with this run's file once it is complete. */
  baselineUpdate: boolean;
}

/** One repetition as recorded: the worker's result, or a failure of the process itself. */
export type RepResult = RunResult & { rep: number; wallSeconds: number; loadAverage: number };

export interface Aggregate {
  scene: string;
  engine: string;
  method: string;
  version: string;
  status: RunStatus | "mixed";
  message?: string;
  reps: number;
  /** Medians over the repetitions that produced timings. */
  meanMs: number;
  medianMs: number;
  stepsPerSecond: number;
  steps: number;
  /** Accuracy of the repetition with the median mean (the runs are deterministic). */
  accuracy: RunResult["accuracy"];
  runs: RepResult[];
}

export interface CompareFile {
  kind: "moreau-compare";
  date: string;
  machine: Record<string, string | number>;
  options: Omit<CompareOptions, "outDir" | "baselineUpdate">;
  protocol: string;
  results: Aggregate[];
}

export function parseArgs(argv: string[]): CompareOptions {
  const get = (name: string) => {
    const i = argv.indexOf(name);
    return i >= 0 ? argv[i + 1] : undefined;
  };
  const list = (s: string | undefined) =>
    s
      ?.split(",")
      .map((x) => x.trim())
      .filter(Boolean);
  const scenes = list(get("--scenes")) ?? [...COMPARE_SCENE_IDS];
  const engines = list(get("--engines")) ?? [...DEFAULT_ENGINES];
  for (const s of scenes) buildScene(s); // throws on an unknown id
  for (const e of engines)
    if (!(ENGINE_KEYS as readonly string[]).includes(e))
      throw new Error(`unknown engine "${e}"; known: ${ENGINE_KEYS.join(", ")}`);
  return {
    scenes,
    engines,
    reps: Number(get("--reps") ?? 3),
    timeoutSeconds: Number(get("--timeout") ?? 600),
    outDir: path.resolve(get("--out") ?? RUNS_DIR),
    baseline: get("--baseline"),
    baselineUpdate: argv.includes("--baseline-update"),
  };
}

/**
 * Makes `file` the baseline: copies it into bench/results/ (unless it is there already) and
 * deletes every other compare-* file there, so that the directory keeps one result.
 * Returns the baseline's path.
 */
export function replaceBaseline(file: string, dir = BASELINE_DIR): string {
  mkdirSync(dir, { recursive: true });
  const target = path.join(dir, path.basename(file));
  if (path.resolve(file) !== target) copyFileSync(file, target);
  for (const name of readdirSync(dir))
    if (name.startsWith("compare-") && name !== path.basename(file)) rmSync(path.join(dir, name));
  return target;
}

function machine(): Record<string, string | number> {
  const cpus = os.cpus();
  let commit = "unknown";
  let dirty = "";
  try {
    commit = execFileSync("git", ["rev-parse", "HEAD"], { cwd: ROOT, encoding: "utf8" }).trim();
    const changes = execFileSync("git", ["status", "--porcelain"], { cwd: ROOT, encoding: "utf8" })
      .split("\n")
      .filter(Boolean).length;
    dirty = changes > 0 ? `${changes} files changed` : "clean";
  } catch {
    // not a git checkout
  }
  return {
    cpuModel: cpus[0]?.model ?? "unknown",
    cpuCount: cpus.length,
    totalMemGiB: Math.round((os.totalmem() / 2 ** 30) * 10) / 10,
    platform: `${os.platform()} ${os.release()} ${os.arch()}`,
    node: process.version,
    v8: process.versions.v8,
    gitCommit: commit,
    gitTree: dirty,
    loadAverageAtStart: Math.round(os.loadavg()[0] * 100) / 100,
  };
}

/** Runs one repetition in a fresh process (../fresh-process.ts); never rejects. */
async function runRep(
  engine: string,
  scene: string,
  rep: number,
  timeoutSeconds: number,
): Promise<RepResult> {
  const loadAverage = Math.round(os.loadavg()[0] * 100) / 100;
  const soft = Math.max(1, Math.min(0.8 * timeoutSeconds, timeoutSeconds - 30));
  const run = await runFresh<RunResult>(
    WORKER,
    [engine, scene, "--max-seconds", String(soft)],
    timeoutSeconds,
  );
  const base = { rep, wallSeconds: run.wallSeconds, loadAverage };
  if (run.result) return { ...emptyResult(engine, scene), ...run.result, ...base };
  return {
    ...emptyResult(engine, scene),
    ...base,
    status: run.timedOut ? "timeout" : "failed",
    message: run.timedOut
      ? `killed after the ${timeoutSeconds} s timeout`
      : `worker exited with code ${run.code} and no result: ${run.stderrTail.trim().split("\n").slice(-3).join(" | ")}`,
  };
}

function emptyResult(engine: string, scene: string): RunResult {
  return {
    engine,
    version: "",
    scene,
    method: "",
    status: "failed",
    steps: 0,
    stepsPlanned: 0,
    meanMs: Number.NaN,
    medianMs: Number.NaN,
    minMs: Number.NaN,
    maxMs: Number.NaN,
    stepsPerSecond: Number.NaN,
    buildMs: Number.NaN,
    accuracy: {},
  };
}

export function aggregate(runs: RepResult[]): Aggregate {
  const timed = runs.filter((r) => r.steps > 0 && Number.isFinite(r.meanMs));
  const meanMs = medianOf(timed.map((r) => r.meanMs));
  const byMean = [...timed].sort((a, b) => a.meanMs - b.meanMs);
  const mid = byMean[(byMean.length - 1) >> 1] ?? runs[0];
  const statuses = new Set(runs.map((r) => r.status));
  const status = statuses.size === 1 ? runs[0].status : "mixed";
  const message =
    status === "mixed"
      ? runs.map((r) => `rep ${r.rep}: ${r.status}${r.message ? ` (${r.message})` : ""}`).join("; ")
      : runs.find((r) => r.message)?.message;
  return {
    scene: runs[0].scene,
    engine: runs[0].engine,
    method: runs.find((r) => r.method)?.method ?? "",
    version: runs.find((r) => r.version)?.version ?? "",
    status,
    ...(message ? { message } : {}),
    reps: runs.length,
    meanMs,
    medianMs: medianOf(timed.map((r) => r.medianMs)),
    stepsPerSecond: 1000 / meanMs,
    steps: mid?.steps ?? 0,
    accuracy: mid?.accuracy ?? {},
    runs,
  };
}

const fmt = (x: number | undefined | null, digits = 3): string =>
  x === undefined || x === null || !Number.isFinite(x)
    ? "—"
    : Number(x.toPrecision(digits)).toString();
const sci = (x: number | undefined | null, digits = 2): string =>
  x === undefined || x === null || !Number.isFinite(x) ? "—" : x.toExponential(digits);

function statusText(r: Aggregate): string {
  if (r.status === "ok") return "ok";
  const planned = r.runs[0]?.stepsPlanned ?? 0;
  if (r.steps === 0 && r.status !== "failed" && r.status !== "timeout")
    return `${r.status} in warm-up`;
  return r.steps < planned ? `${r.status} at step ${r.steps}` : r.status;
}

export function tableRows(
  kind: SceneKind,
  rows: Aggregate[],
  baseline?: Map<string, Aggregate>,
): Record<string, string>[] {
  const moreau = rows.find((r) => r.engine === "moreau");
  return rows.map((r) => {
    const ratio =
      r.engine === "moreau"
        ? "—"
        : moreau && Number.isFinite(moreau.stepsPerSecond) && Number.isFinite(r.stepsPerSecond)
          ? `${fmt(moreau.stepsPerSecond / r.stepsPerSecond)}×`
          : "n/a";
    const row: Record<string, string> = {
      engine: r.engine,
      status: statusText(r),
      "steps/s": fmt(r.stepsPerSecond),
      "mean ms/step": fmt(r.meanMs),
      "median ms/step": fmt(r.medianMs),
      "Moreau speed ÷ this": ratio,
    };
    const a = r.accuracy;
    if (kind === "spheres" || kind === "hulls") {
      // H has no geometric contact count (hull–hull gaps need GJK): the engine's own only
      if (kind === "spheres") row.contacts = fmt(a.contacts, 6);
      row["engine contacts"] = fmt(a.engineContacts, 6);
      row["mean height m"] = fmt(a.meanHeight, 4);
      row["max pen. mm"] = fmt(
        a.maxPenetration === undefined ? undefined : 1000 * a.maxPenetration,
        3,
      );
    } else if (kind === "chain") {
      row["joint drift m"] = sci(a.jointDrift);
      row["energy drift"] = sci(a.energyDrift);
      row["energy drift end"] = sci(a.energyDriftFinal);
    } else {
      row["max strain"] = sci(a.maxStrain);
      row["lowest z m"] = fmt(a.lowestZ, 4);
    }
    // steps whose own solver figures say they missed a stated tolerance (Moreau's rows)
    row["steps short"] = a.shortSteps === undefined ? "—" : `${a.shortSteps}/${r.steps}`;
    if (baseline) {
      const b = baseline.get(`${r.scene}/${r.engine}`);
      row["vs baseline"] =
        b && Number.isFinite(b.stepsPerSecond) && Number.isFinite(r.stepsPerSecond)
          ? `${fmt(r.stepsPerSecond / b.stepsPerSecond)}×`
          : "—";
    }
    row.method = r.method;
    return row;
  });
}

export async function main(argv: string[]): Promise<CompareFile> {
  const o = parseArgs(argv);
  const date = new Date();
  const stamp = date.toISOString().replace(/:/g, "-").replace(/\..*/, "");
  mkdirSync(o.outDir, { recursive: true });
  const file = path.join(o.outDir, `compare-${stamp}.json`);
  let baseline: Map<string, Aggregate> | undefined;
  if (o.baseline) {
    const b = JSON.parse(readFileSync(o.baseline, "utf8")) as CompareFile;
    baseline = new Map(b.results.map((r) => [`${r.scene}/${r.engine}`, r]));
  }
  const out: CompareFile = {
    kind: "moreau-compare",
    date: date.toISOString(),
    machine: machine(),
    options: {
      scenes: o.scenes,
      engines: o.engines,
      reps: o.reps,
      timeoutSeconds: o.timeoutSeconds,
      baseline: o.baseline,
    },
    protocol:
      "../shared/BENCH-SCENES.md: h = 1/240 s; each repetition a fresh process; every step timed with process.hrtime.bigint(); steps/s = 1000 / mean ms; median of the repetitions",
    results: [],
  };
  const m = out.machine;
  console.log(
    `Engine comparison on ${m.cpuModel} × ${m.cpuCount}, ${m.totalMemGiB} GiB, node ${m.node}; ${o.reps} repetition(s) each, one process at a time.`,
  );
  if (Number(m.loadAverageAtStart) > 0.5 * Number(m.cpuCount))
    console.log(`warning: load average ${m.loadAverageAtStart} at start: timings will be noisy`);
  for (const sceneId of o.scenes) {
    const scene = buildScene(sceneId);
    const engines = o.engines.filter((e) => engineRunsScene(e, scene.kind));
    if (engines.length === 0) continue;
    const runs = new Map<string, RepResult[]>(engines.map((e) => [e, []]));
    const stopped = new Set<string>();
    for (let rep = 1; rep <= o.reps; rep++)
      for (const engine of engines) {
        if (stopped.has(engine)) continue;
        const r = await runRep(engine, sceneId, rep, o.timeoutSeconds);
        runs.get(engine)!.push(r);
        process.stdout.write(
          `  ${sceneId} ${engine} rep ${rep}: ${r.status} ${fmt(r.meanMs)} ms/step (${r.wallSeconds.toFixed(1)} s, load ${r.loadAverage})${r.message ? ` — ${r.message}` : ""}\n`,
        );
        // A build failure, a timeout or an exhausted budget will repeat: do not spend the
        // other repetitions on it.
        if (
          r.status === "timeout" ||
          r.status === "truncated" ||
          (r.status === "failed" && r.steps === 0)
        )
          stopped.add(engine);
      }
    const rows = engines.map((e) => aggregate(runs.get(e)!));
    out.results.push(...rows);
    console.log(`\n## ${scene.title} (h = 1/240 s; ${scene.protocol.timed} timed steps)`);
    console.table(tableRows(scene.kind, rows, baseline));
    for (const r of rows)
      if (r.status !== "ok" && r.message) console.log(`  ${r.engine}: ${r.status}: ${r.message}`);
    writeFileSync(file, `${JSON.stringify(out, null, 2)}\n`);
  }
  console.log("\n## Speed targets of issue 8 (peers measured in this run)");
  console.table(
    targetVerdicts(out.results).map((v) => ({
      ...v,
      met: v.met === null ? "not measured" : v.met ? "yes" : "no",
    })),
  );
  console.log(`\nresults written to ${path.relative(process.cwd(), file)}`);
  if (o.baselineUpdate)
    console.log(`baseline replaced: ${path.relative(process.cwd(), replaceBaseline(file))}`);
  return out;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url))
  await main(process.argv.slice(2));
