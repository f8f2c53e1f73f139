/**
 * The chains at matched accuracy (`npm run bench -- --matched`, issue 29): the comparison's
 * S2 protocol (compare/protocol.ts: a throw-away instance, then 2000 timed steps of
 * h = 1/240 s from rest, the probes after every step outside the timed region) run by each
 * engine at several of its own accuracy settings, so that speed can be read at equal
 * accuracy instead of at each engine's h alone:
 *  - the peers (Rapier, Bullet) take k sub-steps of h/k for every step of h, k = 1, 2, 4, …
 *    (their only accuracy setting: neither states an error);
 *  - Moreau's set-up (`moreau`, Newmark with numerical damping) likewise;
 *  - Moreau's defaults (`moreau-defaults`, articulated) at solver.stepTolerance 1e-7 … 1e-4 m
 *    (its error control takes the sub-steps the tolerance asks for), the default 1e-6.
 * A row's steps/s counts steps of h (k engine steps each). The summary gives, for each
 * bound on the energy drift max |E − E0| / (m g L), each engine's fastest valid setting
 * within it (valid: the comparison's verdict, joints not apart by half a link).
 *
 * Each repetition of a configuration is one fresh process (this file with `--one <config>
 * <scene>`, as compare/worker.ts), one at a time, in rounds (every configuration's first
 * repetition, then every second, …, as compare/run.ts); a row is the median steps/s of its
 * repetitions (the probes are the same in each: the runs are deterministic). Options:
 * `--scenes S2-10,S2-100` (default S2-100), `--engines moreau,moreau-defaults,rapier,ammo`,
 * `--reps N` (default 3), `--timeout S` per repetition (default 300). Results:
 * bench/runs/matched-<date>.json.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { medianOf, printResult, runFresh } from "../fresh-process";
import { loadEngine } from "./engines/index";
import type { BodyStates, EngineAdapter, EngineInstance } from "./engines/types";
import { type RunResult, runScene } from "./protocol";
import { buildScene, type SceneDesc } from "./scene";

const HERE = path.dirname(fileURLToPath(import.meta.url));
const ROOT = path.resolve(HERE, "../..");

/** One accuracy setting of one engine: k sub-steps of h/k, or Moreau's stepTolerance (m). */
export interface MatchedConfig {
  engine: string;
  substeps: number;
  stepTolerance?: number;
}

/** The settings each engine runs (see the file comment). */
export const MATCHED_CONFIGS: Record<string, readonly MatchedConfig[]> = {
  rapier: [1, 2, 4, 8, 16, 32].map((k) => ({ engine: "rapier", substeps: k })),
  ammo: [1, 2, 4, 8, 16, 32].map((k) => ({ engine: "ammo", substeps: k })),
  moreau: [1, 2, 4, 8].map((k) => ({ engine: "moreau", substeps: k })),
  "moreau-defaults": [1e-4, 1e-5, 1e-6, 1e-7].map((tol) => ({
    engine: "moreau-defaults",
    substeps: 1,
    stepTolerance: tol,
  })),
};

/** Bounds on the energy drift (m g L) at which the summary compares the engines. */
export const ENERGY_BOUNDS = [1e-3, 1e-2, 0.1, 0.3];

/** A configuration's name on the command line and in the tables: rapier/k4, moreau-defaults/tol1e-6. */
export function configName(c: MatchedConfig): string {
  return c.stepTolerance !== undefined
    ? `${c.engine}/tol${c.stepTolerance.toExponential()}`
    : `${c.engine}/k${c.substeps}`;
}

export function parseConfigName(name: string): MatchedConfig {
  const m = /^([a-z-]+)\/(k(\d+)|tol([0-9.e+-]+))$/.exec(name);
  if (!m) throw new Error(`bad configuration "${name}" (engine/kN or engine/tolX)`);
  return m[3] !== undefined
    ? { engine: m[1], substeps: Number(m[3]) }
    : { engine: m[1], substeps: 1, stepTolerance: Number(m[4]) };
}

/**
 * The engine taking k steps of h/k for each step of h: built on the scene with h/k (every
 * adapter reads its step from scene.h), everything else passed through.
 */
export function substepped(engine: EngineAdapter, k: number): EngineAdapter {
  if (k === 1) return engine;
  return {
    key: engine.key,
    version: engine.version,
    init: () => engine.init(),
    method: (scene) => `${engine.method(scene)}; ${k} steps of h/${k} a step`,
    create(scene: SceneDesc): EngineInstance {
      const inner = engine.create({ ...scene, h: scene.h / k });
      return {
        step() {
          for (let i = 0; i < k; i++) inner.step();
        },
        read: (out: BodyStates) => inner.read(out),
        engineContacts: () => inner.engineContacts(),
        ...(inner.shortfall ? { shortfall: () => inner.shortfall?.() ?? false } : {}),
        dispose: () => inner.dispose(),
      };
    },
  };
}

async function adapterFor(c: MatchedConfig): Promise<EngineAdapter> {
  if (c.stepTolerance !== undefined) {
    if (c.engine !== "moreau-defaults")
      throw new Error(`a step tolerance is a setting of moreau-defaults only, not ${c.engine}`);
    return (await import("./engines/moreau")).articulatedToleranceEngine(c.stepTolerance);
  }
  return substepped(await loadEngine(c.engine), c.substeps);
}

/** One configuration on one scene (the fresh process's work). */
async function runOne(config: string, sceneId: string, maxSeconds: number): Promise<RunResult> {
  const c = parseConfigName(config);
  const engine = await adapterFor(c);
  await engine.init();
  return runScene(engine, buildScene(sceneId), { maxSeconds });
}

/** What a configuration's run gave, as the tables show it. */
export interface MatchedRow {
  config: string;
  scene: string;
  status: string;
  stepsPerSecond: number;
  energyDrift: number;
  jointDrift: number;
  /** Each repetition's steps/s (stepsPerSecond is their median). */
  repetitions?: number[];
  message?: string;
}

/**
 * For each energy bound, each engine's fastest configuration whose run was valid ("ok")
 * with its energy drift within the bound (null: none).
 */
export function fastestWithin(
  rows: readonly MatchedRow[],
  bounds: readonly number[] = ENERGY_BOUNDS,
): { bound: number; engine: string; row: MatchedRow | null }[] {
  const engines = [...new Set(rows.map((r) => parseConfigName(r.config).engine))];
  const out: { bound: number; engine: string; row: MatchedRow | null }[] = [];
  for (const bound of bounds)
    for (const engine of engines) {
      let best: MatchedRow | null = null;
      for (const r of rows) {
        if (parseConfigName(r.config).engine !== engine || r.status !== "ok") continue;
        if (!(r.energyDrift <= bound)) continue;
        if (best === null || r.stepsPerSecond > best.stepsPerSecond) best = r;
      }
      out.push({ bound, engine, row: best });
    }
  return out;
}

function option(argv: string[], name: string): string | undefined {
  const i = argv.indexOf(name);
  return i >= 0 ? argv[i + 1] : undefined;
}

export async function main(argv: string[]): Promise<void> {
  const scenes = (option(argv, "--scenes") ?? "S2-100").split(",");
  const engines = (option(argv, "--engines") ?? "moreau,moreau-defaults,rapier,ammo").split(",");
  const timeout = Number(option(argv, "--timeout") ?? 300);
  for (const s of scenes)
    if (buildScene(s).kind !== "chain") throw new Error(`${s} is not a chain scene`);
  const reps = Number(option(argv, "--reps") ?? 3);
  const rows: MatchedRow[] = [];
  for (const scene of scenes) {
    const names: string[] = [];
    for (const engine of engines) {
      const configs = MATCHED_CONFIGS[engine];
      if (!configs)
        throw new Error(
          `unknown engine "${engine}"; known: ${Object.keys(MATCHED_CONFIGS).join(", ")}`,
        );
      for (const c of configs) names.push(configName(c));
    }
    const runs = new Map<string, (RunResult | null)[]>(names.map((n) => [n, []]));
    const failures = new Map<string, string>();
    for (let rep = 0; rep < reps; rep++)
      for (const name of names) {
        const run = await runFresh<RunResult>(
          fileURLToPath(import.meta.url),
          ["--one", name, scene, "--max-seconds", String(0.8 * timeout)],
          timeout,
        );
        runs.get(name)?.push(run.result);
        if (!run.result) failures.set(name, run.timedOut ? "timeout" : run.stderrTail.slice(-300));
      }
    for (const name of names) {
      const results = runs.get(name) ?? [];
      const r = results.find((x) => x !== null) ?? null;
      const row: MatchedRow = {
        config: name,
        scene,
        status: r?.status ?? (failures.get(name) === "timeout" ? "timeout" : "failed"),
        stepsPerSecond: medianOf(results.map((x) => x?.stepsPerSecond ?? Number.NaN)),
        energyDrift: r?.accuracy?.energyDrift ?? Number.NaN,
        jointDrift: r?.accuracy?.jointDrift ?? Number.NaN,
        repetitions: results.map((x) => Math.round(x?.stepsPerSecond ?? Number.NaN)),
        ...(r?.message ? { message: r.message } : r ? {} : { message: failures.get(name) }),
      };
      rows.push(row);
      console.log(
        `${scene} ${name.padEnd(26)} ${row.status.padEnd(9)} ${row.stepsPerSecond.toFixed(0).padStart(7)} steps/s  energy ${row.energyDrift.toExponential(2)}  joints ${row.jointDrift.toExponential(2)} m${row.message ? `  (${row.message})` : ""}`,
      );
    }
    console.log(`\n## ${scene}: each engine's fastest valid setting within an energy drift`);
    console.table(
      fastestWithin(rows.filter((r) => r.scene === scene)).map(({ bound, engine, row }) => ({
        "energy drift ≤": bound,
        engine,
        setting: row ? row.config.slice(row.config.indexOf("/") + 1) : "none",
        "steps/s": row ? Math.round(row.stepsPerSecond) : "—",
        "energy drift": row ? row.energyDrift.toExponential(2) : "—",
      })),
    );
  }
  const dir = path.join(ROOT, "bench/runs");
  mkdirSync(dir, { recursive: true });
  const file = path.join(
    dir,
    `matched-${new Date().toISOString().replace(/[:.]/g, "-").slice(0, 19)}.json`,
  );
  writeFileSync(
    file,
    `${JSON.stringify(
      {
        kind: "matched",
        date: new Date().toISOString(),
        reps,
        machine: {
          cpuModel: os.cpus()[0]?.model ?? "unknown",
          cpuCount: os.cpus().length,
          node: process.version,
          loadAverageAtEnd: os.loadavg()[0],
        },
        rows,
      },
      null,
      2,
    )}\n`,
  );
  console.log(`\nwritten ${path.relative(ROOT, file)}`);
}

const argv = process.argv.slice(2);
if (argv[0] === "--one") {
  const maxSeconds = Number(option(argv, "--max-seconds") ?? 240);
  let result: RunResult | { status: "failed"; message: string };
  try {
    result = await runOne(argv[1], argv[2], maxSeconds);
  } catch (err) {
    result = { status: "failed", message: `${(err as Error)?.message ?? String(err)}` };
  }
  printResult(result);
  process.exit(0);
}
