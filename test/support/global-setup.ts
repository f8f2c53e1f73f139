/**
 * Once per `vitest run`, before any test file (vitest.config.ts `globalSetup`), in vitest's
 * main process: the server's bundle, src/server/main.ts, worker.ts and
 * cluster/lease-worker.ts bundled by esbuild as `npm run build` does (main.js and worker.js
 * side by side, cluster/lease-worker.js, which src/server/cluster/renewer.ts finds beside
 * MOREAU_WORKER_BUNDLE; packages left to node_modules). MOREAU_WORKER_BUNDLE names the worker's, which the servers the tests
 * start in process and the server processes they spawn inherit (src/server/worker-pool.ts);
 * MOREAU_SERVER_BUNDLE the server's, for tests that start many server processes
 * (test/cluster: a process through tsx's loader starts in twice the time). A worker thread loading the engine through tsx's loader takes
 * 2.4 s to start against 0.9 s for the bundle, and the suite starts a few hundred; the
 * bundle is built from the sources under test at the start of the run.
 *
 * The bundle lives under node_modules/.cache (so that its bare imports resolve to the
 * repository's node_modules) in a folder named by this process's id, removed at the end;
 * the folders of runs that were killed (their process gone) are removed at the next start.
 * Every project of the config runs its global setup: the first builds, the others share it
 * (counted, so that the last teardown removes it).
 */
import { mkdirSync, readdirSync, rmSync } from "node:fs";
import { join, resolve } from "node:path";
import { build } from "esbuild";

const ROOT = resolve(import.meta.dirname, "../..");
const CACHE = join(ROOT, "node_modules/.cache");
const PREFIX = "moreau-test-";

/** The bundle's folder (being built) and how many setups share it, across the projects' setups. */
const shared = globalThis as {
  moreauWorkerBundle?: { dir: Promise<string | null>; users: number };
};

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === "EPERM";
  }
}

/**
 * Builds the bundle; null when the sources do not build (a file being edited): the worker
 * threads then load worker.ts through tsx, as without this setup, and the tests that start
 * a server report the error themselves (esbuild has printed it).
 */
async function buildBundle(): Promise<string | null> {
  mkdirSync(CACHE, { recursive: true });
  for (const name of readdirSync(CACHE)) {
    const pid = Number(name.slice(PREFIX.length));
    if (name.startsWith(PREFIX) && Number.isInteger(pid) && !alive(pid))
      rmSync(join(CACHE, name), { recursive: true, force: true });
  }
  const dir = join(CACHE, `${PREFIX}${process.pid}`);
  const built = build({
    entryPoints: ["main", "worker", "cluster/lease-worker"].map((f) =>
      join(ROOT, `src/server/${f}.ts`),
    ),
    outdir: dir,
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node20",
    packages: "external",
    logLevel: "warning",
  });
  return built.then(
    () => dir,
    () => {
      rmSync(dir, { recursive: true, force: true });
      return null;
    },
  );
}

export default async function setup(): Promise<() => void> {
  shared.moreauWorkerBundle ??= { dir: buildBundle(), users: 0 };
  const b = shared.moreauWorkerBundle;
  b.users++;
  const dir = await b.dir;
  if (dir) {
    process.env.MOREAU_WORKER_BUNDLE = join(dir, "worker.js");
    process.env.MOREAU_SERVER_BUNDLE = join(dir, "main.js");
  }
  return () => {
    if (--b.users > 0) return;
    if (dir) rmSync(dir, { recursive: true, force: true });
    delete process.env.MOREAU_WORKER_BUNDLE;
    delete process.env.MOREAU_SERVER_BUNDLE;
    shared.moreauWorkerBundle = undefined;
  };
}
