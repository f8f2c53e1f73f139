/**
 * The production image without a Docker engine: the commands are read from the Dockerfile
 * itself and run here the same way.
 * - Dockerfile: multi-stage on one pinned base image (an exact node:26 release, -slim), a
 *   build stage compiling the server (`npm run build`: dist/), production dependencies
 *   only in the image, a non-root user, HEALTHCHECK on /health, HOST=0.0.0.0, CMD = the
 *   command of `npm start` (node on dist/main.js); every path it copies exists and none is
 *   excluded by .dockerignore.
 * - docker/compose.yaml: builds the Dockerfile, publishes the port, checks /health, passes
 *   every configuration variable of the server through.
 * - The image's steps in temporary directories: the build stage's build command on what it
 *   copies (its `npm ci` is the full install of the same lockfile: the repository's
 *   node_modules stand in for it), then the runtime's tree: copy what the Dockerfile
 *   copies, run its `npm ci` (with --prefer-offline: the npm cache is warm, the machine
 *   offline), check that exactly the lockfile's non-dev packages are installed, start the
 *   server with the CMD (configured by environment variables) without any TypeScript source
 *   beside it, run the HEALTHCHECK command, use /health, /ready, the dashboard, a session
 *   and the CLI, then SIGTERM: a graceful exit 0.
 */
import { execFile } from "node:child_process";
import {
  cpSync,
  existsSync,
  mkdtempSync,
  readFileSync,
  renameSync,
  rmSync,
  symlinkSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse as parseYaml } from "yaml";
import { ENV_VARS } from "../../src/server/config";
import { ROOT, type ServerProcess, spawnServer } from "../support/process";

/** A variable reference as Dockerfiles and compose files write it: ${NAME} */
const ref = (name: string) => `$${"{"}${name}}`;
const run = promisify(execFile);
const dockerfile = readFileSync(join(ROOT, "Dockerfile"), "utf8");
const pkg = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as {
  scripts: Record<string, string>;
};

/** Dockerfile instructions (continuation lines joined), with the stage they belong to. */
function instructions(text: string) {
  const joined = text.replace(/\\\n/g, " ").split("\n");
  const out: { op: string; args: string; stage: string }[] = [];
  let stage = "";
  for (const raw of joined) {
    const line = raw.trim();
    if (!line || line.startsWith("#")) continue;
    const m = /^(\w+)\s+(.*)$/.exec(line);
    if (!m) continue;
    const op = m[1].toUpperCase();
    if (op === "FROM") stage = /\bAS\s+(\S+)/i.exec(m[2])?.[1] ?? "";
    out.push({ op, args: m[2].trim(), stage });
  }
  return out;
}

const ins = instructions(dockerfile);
const argDefault = (name: string) =>
  ins.find((i) => i.op === "ARG" && i.args.startsWith(`${name}=`))?.args.split("=")[1];
const runtime = ins.filter((i) => i.stage === "runtime");
const build = ins.filter((i) => i.stage === "build");
/** Paths a stage copies from the build context. */
const copiedBy = (stage: typeof ins) =>
  stage
    .filter((i) => i.op === "COPY" && !i.args.startsWith("--from"))
    .flatMap((i) => i.args.split(/\s+/).slice(0, -1));
const copied = copiedBy(runtime);
/** The build stage's commands: its install, then the build. */
const buildRuns = build.filter((i) => i.op === "RUN").map((i) => i.args);
/** The `npm ci ...` of the deps stage (what follows `&&` only cleans the image's cache). */
const installCmd = ins
  .find((i) => i.stage === "deps" && i.op === "RUN")!
  .args.split("&&")[0]
  .trim()
  .split(/\s+/);
const cmd = JSON.parse(runtime.find((i) => i.op === "CMD")!.args) as string[];
const healthcheck = runtime.find((i) => i.op === "HEALTHCHECK")!.args;

describe("Dockerfile", () => {
  it("is multi-stage on a pinned node:26 slim image, builds the server, installs production dependencies only", () => {
    // an exact release of the active LTS line (and optionally its digest), never a moving tag
    expect(argDefault("NODE_IMAGE")).toMatch(/^node:26\.\d+\.\d+-slim(@sha256:[0-9a-f]{64})?$/);
    const froms = ins.filter((i) => i.op === "FROM").map((i) => i.args);
    expect(froms).toEqual([
      `${ref("NODE_IMAGE")} AS build`,
      `${ref("NODE_IMAGE")} AS deps`,
      `${ref("NODE_IMAGE")} AS runtime`,
    ]);
    // build: the full install of the lockfile, then `npm run build`
    expect(buildRuns[0].split(/\s+/).slice(0, 2)).toEqual(["npm", "ci"]);
    expect(buildRuns[0]).not.toContain("--omit");
    expect(buildRuns.slice(1)).toEqual(["npm run build"]);
    expect(pkg.scripts.build).toMatch(/^esbuild .*--outdir=dist/);
    expect(installCmd.slice(0, 2)).toEqual(["npm", "ci"]);
    expect(installCmd).toContain("--omit=dev");
    expect(
      runtime.some((i) => i.op === "COPY" && i.args.startsWith("--from=deps /app/node_modules")),
    ).toBe(true);
    expect(runtime.some((i) => i.op === "COPY" && i.args === "--from=build /app/dist ./dist")).toBe(
      true,
    );
  });

  it("runs as a non-root user the command of `npm start` (node on the compiled server), with a HEALTHCHECK on /health", () => {
    const user = runtime.filter((i) => i.op === "USER").at(-1)?.args;
    expect(user).toBeDefined();
    expect(["root", "0"]).not.toContain(user);
    // npm start = "exec node --enable-source-maps dist/main.js" after its build (prestart);
    // the image runs the same node command (built in the build stage)
    expect(pkg.scripts.prestart).toBe("npm run build");
    const start = pkg.scripts.start.split(/\s+/);
    expect(start[0]).toBe("exec");
    expect(cmd).toEqual(start.slice(1));
    expect(cmd[0]).toBe("node");
    expect(cmd.at(-1)).toBe("dist/main.js");
    expect(healthcheck).toMatch(
      /^--interval=\S+\s+--timeout=\S+\s+--start-period=\S+\s+--retries=\d+\s+CMD\s+\[/,
    );
    expect(healthcheck).toContain("/health");
    const env = runtime.find((i) => i.op === "ENV")!.args;
    expect(env).toMatch(/HOST=0\.0\.0\.0/);
    expect(env).toMatch(/PORT=8080/);
    expect(runtime.some((i) => i.op === "EXPOSE" && i.args === "8080")).toBe(true);
  });

  it("copies paths that exist and that .dockerignore keeps", () => {
    const ignored = readFileSync(join(ROOT, ".dockerignore"), "utf8")
      .split("\n")
      .map((l) => l.trim())
      .filter((l) => l && !l.startsWith("#"));
    expect(ignored).toContain("node_modules");
    for (const p of copied) {
      expect(existsSync(join(ROOT, p)), p).toBe(true);
      expect(ignored, p).not.toContain(p);
    }
    // a checkpoint directory the non-root user owns
    expect(runtime.some((i) => i.op === "RUN" && /chown node:node \/data/.test(i.args))).toBe(true);
    expect(copied).toEqual(
      expect.arrayContaining([
        "package.json",
        "package-lock.json",
        "src",
        "schemas",
        "public",
        "examples",
        "bin",
      ]),
    );
    for (const p of copiedBy(build)) {
      expect(existsSync(join(ROOT, p)), p).toBe(true);
      expect(ignored, p).not.toContain(p);
    }
    expect(ignored).toContain("dist");
  });
});

describe("docker/compose.yaml", () => {
  const compose = parseYaml(readFileSync(join(ROOT, "docker/compose.yaml"), "utf8")) as {
    services: Record<
      string,
      {
        build: { context: string; dockerfile: string };
        ports: string[];
        environment: Record<string, string>;
        healthcheck: { test: string[]; interval: string };
      }
    >;
  };
  const svc = compose.services.moreau;

  it("builds the Dockerfile, publishes the port, checks /health", () => {
    expect(existsSync(resolve(ROOT, "docker", svc.build.context, svc.build.dockerfile))).toBe(true);
    expect(resolve(ROOT, "docker", svc.build.context)).toBe(ROOT);
    expect(svc.ports).toEqual([`${ref("MOREAU_PORT:-8080")}:8080`]);
    expect(svc.environment.PORT).toBe("8080");
    expect(svc.environment.HOST).toBe("0.0.0.0");
    expect(svc.healthcheck.test[0]).toBe("CMD");
    expect(svc.healthcheck.test.join(" ")).toContain("http://127.0.0.1:8080/health");
    expect(svc.environment.DATA_DIR).toBe(ref("DATA_DIR:-/data"));
    expect((svc as unknown as { volumes: string[] }).volumes).toEqual(["moreau-data:/data"]);
  });

  it("passes every configuration variable of the server through", () => {
    // ENV_VARS, plus API_KEYS (the keys, read apart so that they are never echoed) and the
    // checkpoint settings read by main.ts
    expect(Object.keys(svc.environment).sort()).toEqual(
      [...Object.values(ENV_VARS), "API_KEYS"].sort(),
    );
  });
});

// ------------------------------------------------------------------ the production tree

describe("the image's commands, run here", () => {
  let dir: string;
  let server: ServerProcess | undefined;
  const env = (extra: Record<string, string>) => {
    const e: NodeJS.ProcessEnv = { PATH: process.env.PATH, HOME: process.env.HOME, ...extra };
    return e;
  };

  let buildDir: string;
  beforeAll(async () => {
    // the build stage: what it copies, the lockfile's full install (the repository's), its build
    buildDir = mkdtempSync(join(tmpdir(), "moreau-build-"));
    for (const p of copiedBy(build)) cpSync(join(ROOT, p), join(buildDir, p), { recursive: true });
    symlinkSync(join(ROOT, "node_modules"), join(buildDir, "node_modules"), "dir");
    for (const command of buildRuns.slice(1))
      await run("sh", ["-c", command], {
        cwd: buildDir,
        env: env({ npm_config_update_notifier: "false" }),
        timeout: 55_000,
      });
    // the runtime stage
    dir = mkdtempSync(join(tmpdir(), "moreau-prod-"));
    for (const p of copied) cpSync(join(ROOT, p), join(dir, p), { recursive: true });
    cpSync(join(buildDir, "dist"), join(dir, "dist"), { recursive: true });
    const [bin, ...args] = installCmd;
    await run(bin, [...args, "--prefer-offline"], {
      cwd: dir,
      env: env({ npm_config_update_notifier: "false" }),
      timeout: 55_000,
    });
  }, 60_000);

  afterAll(() => {
    server?.kill();
    if (dir) rmSync(dir, { recursive: true, force: true });
    if (buildDir) rmSync(buildDir, { recursive: true, force: true });
  });

  it("installs exactly the lockfile's production packages", () => {
    const lock = JSON.parse(readFileSync(join(dir, "package-lock.json"), "utf8")) as {
      packages: Record<string, { dev?: boolean; optional?: boolean; devOptional?: boolean }>;
    };
    const missing: string[] = [];
    const extra: string[] = [];
    for (const [path, p] of Object.entries(lock.packages)) {
      if (path === "") continue;
      const there = existsSync(join(dir, path));
      if (p.dev && there) extra.push(path);
      if (!p.dev && !p.optional && !p.devOptional && !there) missing.push(path);
    }
    expect(missing).toEqual([]);
    expect(extra).toEqual([]);
    for (const devOnly of ["vitest", "playwright-core", "typescript", "@biomejs/biome"])
      expect(existsSync(join(dir, "node_modules", devOnly)), devOnly).toBe(false);
  });

  it("starts with the image's CMD, answers /health, serves the dashboard, stops on SIGTERM", async () => {
    // no TypeScript beside it: the server and its worker threads run the compiled JavaScript
    renameSync(join(dir, "src"), join(dir, "src.away"));
    server = await spawnServer(
      { NODE_ENV: "production", HOST: "127.0.0.1", WORKERS: "1", LOG_LEVEL: "info" },
      { command: cmd, cwd: dir, bareEnv: true, readyPath: "/health", startLine: true },
    );
    const { base, port } = server;
    expect(await (await fetch(`${base}/health`)).json()).toMatchObject({ status: "ok" });
    expect(server.started?.msg).toContain(`moreau listening on 127.0.0.1:${port}`);

    // the HEALTHCHECK command, as Docker runs it (exec form) with the container's PORT
    const hc = JSON.parse(healthcheck.slice(healthcheck.indexOf("CMD") + 3).trim()) as string[];
    await run(hc[0] === "node" ? process.execPath : hc[0], hc.slice(1), {
      env: env({ PORT: String(port) }),
      timeout: 10_000,
    });

    expect((await fetch(`${base}/ready`)).status).toBe(200);
    const page = await fetch(`${base}/`);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('<script type="importmap">');
    // read the bodies: an unread 1 MB response keeps its connection busy, and the graceful
    // shutdown below would wait for this client to take it
    for (const asset of [
      "/vendor/three/three.module.js",
      "/vendor/uplot/uPlot.esm.js",
      "/client.js",
    ]) {
      const r = await fetch(`${base}${asset}`);
      expect(r.status).toBe(200);
      expect((await r.text()).length).toBeGreaterThan(1000);
    }

    // a session from an example, stepped by a worker thread of the production tree
    const model = JSON.parse(readFileSync(join(dir, "examples/spring-mass-chain.json"), "utf8"));
    const created = await fetch(`${base}/v1/sessions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ model }),
    });
    expect(created.status).toBe(201);
    const { id } = (await created.json()) as { id: string };
    const stepped = await fetch(`${base}/v1/sessions/${id}/step`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ steps: 10 }),
    });
    expect(stepped.status).toBe(200);
    expect(((await stepped.json()) as { step: number }).step).toBe(10);

    // the CLI of the production tree (it runs its TypeScript sources with tsx)
    renameSync(join(dir, "src.away"), join(dir, "src"));
    const v = await run(process.execPath, ["bin/moreau.js", "validate", "examples/pendulum.json"], {
      cwd: dir,
      env: env({}),
      timeout: 20_000,
    });
    expect(v.stdout).toContain('valid model "pendulum"');

    server.child.kill("SIGTERM");
    expect(await server.exited, server.output().slice(-3000)).toBe(0);
  }, 60_000);
});
