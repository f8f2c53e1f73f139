/**
 * A benchmark repetition in a fresh Node process, so that no repetition inherits another's
 * JIT state, heap or deoptimizations: `node --import tsx <script> <args>` prints its
 * result as one line `RESULT {json}` (printResult) on stdout; runFresh spawns it, waits
 * (killing it after a timeout) and parses the last such line. Used by the engine
 * comparison (compare/run.ts, compare/worker.ts) and the fem benchmark (fem.ts,
 * fem-worker.ts).
 */
import { spawn } from "node:child_process";
import path from "node:path";
import { fileURLToPath } from "node:url";

export const RESULT_PREFIX = "RESULT ";
/** The repository's root: the fresh processes' working directory. */
export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");

/** Prints `result` as the process's result line (read by runFresh). */
export function printResult(result: unknown): void {
  process.stdout.write(`${RESULT_PREFIX}${JSON.stringify(result)}\n`);
}

/** What a fresh process gave back. */
export interface FreshRun<T> {
  /** The parsed result line, or null when the process printed none. */
  result: T | null;
  /** Exit code (null when killed). */
  code: number | null;
  /** Killed after the timeout. */
  timedOut: boolean;
  /** The last 4000 characters of its stderr. */
  stderrTail: string;
  wallSeconds: number;
}

/** Runs `node --import tsx <script> <args>` in ROOT; never rejects. */
export function runFresh<T>(
  script: string,
  args: string[],
  timeoutSeconds: number,
): Promise<FreshRun<T>> {
  const started = performance.now();
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ["--import", "tsx", script, ...args], {
      cwd: ROOT,
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d: Buffer) => {
      stdout += d.toString();
    });
    child.stderr.on("data", (d: Buffer) => {
      stderr = (stderr + d.toString()).slice(-4000);
    });
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      if (child.pid !== undefined) process.kill(child.pid, "SIGKILL");
    }, 1000 * timeoutSeconds);
    child.on("close", (code) => {
      clearTimeout(timer);
      const line = stdout
        .split("\n")
        .reverse()
        .find((l) => l.startsWith(RESULT_PREFIX));
      resolve({
        result: line ? (JSON.parse(line.slice(RESULT_PREFIX.length)) as T) : null,
        code,
        timedOut,
        stderrTail: stderr,
        wallSeconds: (performance.now() - started) / 1000,
      });
    });
  });
}

/** The median of the finite values (NaN when there is none). */
export function medianOf(xs: number[]): number {
  const s = xs.filter(Number.isFinite).sort((a, b) => a - b);
  if (s.length === 0) return Number.NaN;
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : 0.5 * (s[m - 1] + s[m]);
}
