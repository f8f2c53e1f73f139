/**
 * `moreau run`: steps a model locally (the engine in this process, through src/engine/index.ts)
 * or on a server (a session created, stepped with POST /step and deleted at the end) and
 * writes the trajectory: the State at t = 0, then every `every` steps, and the last one.
 * `every` defaults to the step count nearest FRAME_INTERVAL of simulated time: a stepper's
 * dt resolves fast dynamics and contact far more finely than a plot or an animation needs
 * (10 s of examples/cloth.json as JSON: 39 MB with every step, 13 MB by default).
 * Requests to a server carry at most CHUNK steps so that the progress bar moves and no
 * request runs into the server's time limit.
 */

import type { Writable } from "node:stream";
import { SingleBar } from "cli-progress";
import { issueText } from "../../schemas/issues";
import type { StateOut } from "../../schemas/state";
import { MoreauApiError, MoreauClient } from "../client/index";
import { DivergenceError, loadModel, ModelError } from "../engine/index";
import { CliError } from "./model-file";
import { createWriter, type Format, type Particles } from "./output";

/** Steps per engine call or server request between progress updates. */
export const CHUNK = 1000;
/** Runs of at least this many steps show a progress bar on a terminal. */
export const PROGRESS_MIN_STEPS = 2000;
/** Simulated time (s) between recorded States by default: 60 frames per simulated second. */
export const FRAME_INTERVAL = 1 / 60;

/** The default of --every: the step count nearest FRAME_INTERVAL, at least 1. */
export function defaultEvery(dt: number): number {
  return Math.max(1, Math.round(FRAME_INTERVAL / dt));
}

export interface RunOptions {
  model: unknown;
  server: string | null;
  /** API key of a server with access control */
  apiKey?: string | null;
  steps: number | null;
  duration: number | null;
  /** null: defaultEvery(dt) */
  every: number | null;
  format: Format;
  bodies: string[] | null;
  /** true / false forces the bar on / off; null: on a terminal for long runs */
  progress: boolean | null;
}

interface Source {
  name: string;
  dt: number;
  label: string;
  particles: Particles;
  initial(): Promise<StateOut>;
  step(n: number): Promise<StateOut>;
  close(): Promise<void>;
}

function issuesText(lines: string[]): string {
  return lines.map((l) => `  ${l}`).join("\n");
}

function localSource(model: unknown): Source {
  let sim: ReturnType<typeof loadModel>;
  try {
    sim = loadModel(model);
  } catch (err) {
    if (err instanceof ModelError)
      throw new CliError(`invalid model:\n${issuesText(err.issues.map(issueText))}`, 1);
    throw err;
  }
  return {
    name: sim.model.name,
    dt: sim.solver.dt,
    label: "local",
    particles: new Set(sim.model.bodies.filter((b) => b.kind === "particle").map((b) => b.id)),
    initial: async () => sim.state(),
    step: async (n) => {
      try {
        sim.step(n);
      } catch (err) {
        if (err instanceof DivergenceError) throw new CliError(err.message, 1);
        throw err;
      }
      return sim.state();
    },
    close: async () => {},
  };
}

/**
 * The particles of a model the server accepted, read from the JSON sent: a body is a
 * particle exactly when its kind says so (the kind defaults to "rigid").
 */
function particlesOf(model: unknown): Particles {
  const bodies = (model as { bodies?: unknown } | null)?.bodies;
  const ids = new Set<string>();
  if (Array.isArray(bodies))
    for (const b of bodies as { id?: unknown; kind?: unknown }[])
      if (b?.kind === "particle" && typeof b.id === "string") ids.add(b.id);
  return ids;
}

async function remoteSource(
  server: string,
  model: unknown,
  apiKey: string | null,
): Promise<Source> {
  const client = new MoreauClient(server, { apiKey: apiKey ?? undefined });
  let session: Awaited<ReturnType<MoreauClient["createSession"]>>;
  try {
    session = await client.createSession(model);
  } catch (err) {
    if (err instanceof MoreauApiError && err.status === 400)
      throw new CliError(`invalid model (server):\n${issuesText(err.issueLines())}`, 1);
    throw err;
  }
  const id = session.id;
  return {
    name: session.name,
    dt: session.dt,
    label: client.baseUrl,
    particles: particlesOf(model),
    initial: () => client.getState(id),
    step: async (n) => {
      try {
        return await client.step(id, { steps: n });
      } catch (err) {
        if (err instanceof MoreauApiError)
          throw new CliError(`server: ${err.status} ${err.code}: ${err.message}`, 1);
        throw err;
      }
    },
    close: () => client.deleteSession(id).catch(() => undefined),
  };
}

const yieldToEventLoop = () => new Promise<void>((r) => setImmediate(r));

/** Runs the model and writes its trajectory to `out`; progress goes to `err`. */
export async function runCommand(
  o: RunOptions,
  out: Writable,
  err: Writable & { isTTY?: boolean },
): Promise<{ rows: number; steps: number; time: number }> {
  const src = o.server
    ? await remoteSource(o.server, o.model, o.apiKey ?? null)
    : localSource(o.model);
  try {
    const total = o.steps ?? Math.max(1, Math.ceil((o.duration ?? 1) / src.dt - 1e-9));
    const every = o.every ?? defaultEvery(src.dt);
    const writer = createWriter(
      o.format,
      out,
      { name: src.name, source: src.label, dt: src.dt, every },
      o.bodies,
      src.particles,
    );
    const first = await src.initial();
    if (o.bodies) {
      const known = new Set(first.bodies.map((b) => b.id));
      const unknown = o.bodies.filter((b) => !known.has(b));
      if (unknown.length) throw new CliError(`unknown bodies: ${unknown.join(", ")}`);
    }
    await writer.write(first);

    const showBar = o.progress ?? (err.isTTY === true && total >= PROGRESS_MIN_STEPS);
    const bar = showBar
      ? new SingleBar({
          stream: err,
          format: `${src.name} |{bar}| {percentage}% | {value}/{total} steps | t = {t} s | ETA {eta_formatted}`,
          noTTYOutput: err.isTTY !== true,
          notTTYSchedule: 1000,
          hideCursor: err.isTTY === true,
          etaBuffer: 50,
        })
      : null;
    bar?.start(total, 0, { t: first.time.toFixed(3) });

    let done = 0;
    let last = first;
    let lastYield = Date.now();
    try {
      while (done < total) {
        const n = Math.min(every - (done % every), total - done, CHUNK);
        last = await src.step(n);
        done += n;
        if (done % every === 0 || done === total) await writer.write(last);
        bar?.update(done, { t: last.time.toFixed(3) });
        // let the bar's timer (and signals) run during a long synchronous local run
        if (Date.now() - lastYield > 50) {
          await yieldToEventLoop();
          lastYield = Date.now();
        }
      }
    } finally {
      bar?.stop();
      await writer.end();
    }
    return { rows: writer.rows, steps: done, time: last.time };
  } finally {
    await src.close();
  }
}
