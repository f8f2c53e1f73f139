/**
 * The `moreau` command line: run (local and against a server, CSV and JSON, --every,
 * --duration, --bodies, the progress bar, a diverging run), validate, assemble, usage
 * errors, and the bin/moreau.js launcher in a child process (with a model on stdin).
 * Trajectories are checked against recurrences and closed forms written out here:
 * symplectic Euler on a zero-length spring (v ← v − h k/m x, x ← x + h v) and a body
 * falling under gravity with the θ = 1/2 scheme (exact for constant acceleration).
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { PassThrough } from "node:stream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AssemblyResult, State } from "../../schemas/state";
import { main } from "../../src/cli/main";
import { buildApp, type MoreauApp } from "../../src/server/app";

const ROOT = resolve(import.meta.dirname, "../..");
const G = 9.81;
const dir = mkdtempSync(join(tmpdir(), "moreau-cli-"));

function file(name: string, content: unknown): string {
  const p = join(dir, name);
  writeFileSync(p, typeof content === "string" ? content : JSON.stringify(content));
  return p;
}

const K = 100;
const M = 1;
const X0 = 1;
const H = 0.001;
const springModel = {
  name: "spring",
  gravity: [0, 0, 0],
  bodies: [{ id: "p", kind: "particle", mass: M, position: [X0, 0, 0] }],
  forces: [
    {
      id: "s",
      type: "spring",
      a: { body: "p" },
      b: { body: "ground" },
      stiffness: K,
      restLength: 0,
    },
  ],
  solver: { integrator: "symplectic-euler", dt: H },
};

function recurrence(n: number) {
  let x = X0;
  let v = 0;
  for (let i = 0; i < n; i++) {
    v -= H * (K / M) * x;
    x += H * v;
  }
  return { x, v };
}

const fallModel = {
  name: "fall",
  bodies: [
    { id: "ball", mass: 2, inertia: [0.1, 0.1, 0.1], position: [0, 0, 10] },
    { id: "wall", fixed: true, position: [5, 0, 0] },
  ],
  solver: { dt: 0.01 },
};

async function cli(args: string[], env: NodeJS.ProcessEnv = {}) {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  const out: Buffer[] = [];
  const err: Buffer[] = [];
  stdout.on("data", (c: Buffer) => out.push(c));
  stderr.on("data", (c: Buffer) => err.push(c));
  const code = await main(args, { stdout, stderr, cwd: dir, env });
  return { code, out: Buffer.concat(out).toString(), err: Buffer.concat(err).toString() };
}

function parseCsv(text: string) {
  const [head, ...rows] = text.trim().split("\n");
  const cols = head.split(",");
  return rows.map((r) => {
    const v = r.split(",").map(Number);
    return Object.fromEntries(cols.map((c, i) => [c, v[i]])) as Record<string, number>;
  });
}

describe("moreau run (local)", () => {
  it("writes CSV rows at t = 0 and every K steps that follow the symplectic Euler recurrence", async () => {
    const r = await cli([
      "run",
      file("spring.json", springModel),
      "--steps",
      "50",
      "--every",
      "10",
    ]);
    expect(r.code, r.err).toBe(0);
    const rows = parseCsv(r.out);
    expect(rows.map((x) => x.step)).toEqual([0, 10, 20, 30, 40, 50]);
    for (const row of rows) {
      const { x, v } = recurrence(row.step);
      expect(row["p.x"]).toBeCloseTo(x, 12);
      expect(row["p.vx"]).toBeCloseTo(v, 12);
      expect(row.time).toBeCloseTo(row.step * H, 12);
      // energy columns: ½ m v² and ½ k x²
      expect(row.kinetic).toBeCloseTo(0.5 * M * v * v, 10);
      expect(row.potential).toBeCloseTo(0.5 * K * x * x, 10);
    }
    expect(r.out.split("\n")[0]).toBe(
      "time,step,p.x,p.y,p.z,p.qw,p.qx,p.qy,p.qz,p.vx,p.vy,p.vz,p.wx,p.wy,p.wz,kinetic,potential,total",
    );
  });

  it("writes JSON States to --out (format from the extension); --duration and the last step", async () => {
    const r = await cli([
      "run",
      file("fall.json", fallModel),
      "--duration",
      "0.25",
      "--every",
      "10",
      "--out",
      "fall.json.out.json",
      "--bodies",
      "ball",
    ]);
    expect(r.code, r.err).toBe(0);
    expect(r.err).toMatch(/4 states \(25 steps, t = 0\.25/);
    const doc = JSON.parse(readFileSync(join(dir, "fall.json.out.json"), "utf8"));
    expect(doc).toMatchObject({ name: "fall", source: "local", dt: 0.01, every: 10 });
    const frames = doc.frames.map((f: unknown) => State.parse(f));
    expect(frames.map((f: { step: number }) => f.step)).toEqual([0, 10, 20, 25]);
    for (const f of frames) {
      expect(f.bodies.map((b: { id: string }) => b.id)).toEqual(["ball"]);
      expect(f.bodies[0].position[2]).toBeCloseTo(10 - 0.5 * G * f.time * f.time, 10);
      expect(f.bodies[0].velocity[2]).toBeCloseTo(-G * f.time, 10);
    }
  });

  it("shows a progress bar on standard error when asked", async () => {
    const r = await cli([
      "run",
      file("spring2.json", springModel),
      "--steps",
      "3000",
      "--every",
      "1000",
      "--progress",
    ]);
    expect(r.code, r.err).toBe(0);
    expect(r.err).toContain("spring |");
    expect(r.err).toMatch(/100% \| 3000\/3000 steps \| t = 3\.000 s/);
    expect(parseCsv(r.out).map((x) => x.step)).toEqual([0, 1000, 2000, 3000]);
  });

  it("stops with exit code 1 when the run diverges, leaving a complete JSON document", async () => {
    const diverging = {
      ...springModel,
      name: "diverging",
      forces: [{ ...springModel.forces[0], stiffness: 1e8 }],
      solver: { integrator: "symplectic-euler", dt: 0.01 },
    };
    const r = await cli(["run", file("div.json", diverging), "--steps", "500", "--format", "json"]);
    expect(r.code).toBe(1);
    expect(r.err).toMatch(/moreau: .*(diverged|non-finite|blew up)/);
    const doc = JSON.parse(r.out);
    expect(doc.frames.length).toBeGreaterThanOrEqual(1);
    expect(doc.frames[0].step).toBe(0);
  });

  it("reports an invalid model with its issue paths (exit 1)", async () => {
    const bad = { ...springModel, forces: [{ ...springModel.forces[0], b: { body: "nowhere" } }] };
    const r = await cli(["run", file("bad.json", bad)]);
    expect(r.code).toBe(1);
    expect(r.err).toContain("forces.0.b.body");
    expect(r.err).toContain('unknown body "nowhere"');
  });
});

describe("moreau run --server", () => {
  let app: MoreauApp;
  let url: string;
  beforeAll(async () => {
    app = await buildApp({ workers: 1, logLevel: "silent" });
    await app.listen({ port: 0, host: "127.0.0.1" });
    url = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await app.close();
  });

  it("writes the same trajectory as the local run, and deletes its session", async () => {
    const model = file("spring-remote.json", { model: springModel }); // a create-session body
    const local = await cli(["run", model, "--steps", "40", "--every", "7"]);
    const remote = await cli(["run", model, "--steps", "40", "--every", "7", "--server", url]);
    expect(remote.code, remote.err).toBe(0);
    expect(remote.out).toBe(local.out);
    expect(parseCsv(remote.out).map((x) => x.step)).toEqual([0, 7, 14, 21, 28, 35, 40]);
    const viaEnv = await cli(["run", model, "--steps", "40", "--every", "7"], {
      MOREAU_SERVER: url,
    });
    expect(viaEnv.out).toBe(local.out);
    const list = await (await fetch(`${url}/v1/sessions`)).json();
    expect(list.sessions).toEqual([]);
  });

  it("assembles on the server as locally", async () => {
    const ex = join(ROOT, "examples/slider-crank.json");
    const local = await cli(["assemble", ex]);
    const remote = await cli(["assemble", ex, "--server", url]);
    expect(remote.code, remote.err).toBe(0);
    expect(JSON.parse(remote.out)).toEqual(JSON.parse(local.out));
  });

  it("sends --api-key (or MOREAU_API_KEY) to a server with access control", async () => {
    const KEY = "cli-test-key-0123456789";
    const keyed = await buildApp({ workers: 1, logLevel: "silent", apiKeys: [KEY] });
    await keyed.listen({ port: 0, host: "127.0.0.1" });
    const keyedUrl = `http://127.0.0.1:${(keyed.server.address() as AddressInfo).port}`;
    try {
      const model = file("spring-keyed.json", springModel);
      const refused = await cli(["run", model, "--steps", "5", "--server", keyedUrl]);
      expect(refused.code).toBe(1);
      expect(refused.err).toContain("API key");
      const ok = await cli(["run", model, "--steps", "5", "--server", keyedUrl, "--api-key", KEY]);
      expect(ok.code, ok.err).toBe(0);
      expect(parseCsv(ok.out).at(-1)?.["p.x"]).toBeCloseTo(recurrence(5).x, 12);
      const viaEnv = await cli(["run", model, "--steps", "5", "--server", keyedUrl], {
        MOREAU_API_KEY: KEY,
      });
      expect(viaEnv.out).toBe(ok.out);
    } finally {
      await keyed.close();
    }
  });

  it("reports an unreachable server (exit 1)", async () => {
    const r = await cli(["run", file("s3.json", springModel), "--server", "http://127.0.0.1:1"]);
    expect(r.code).toBe(1);
    expect(r.err).toMatch(/moreau: POST http:\/\/127\.0\.0\.1:1\/v1\/sessions/);
  });
});

describe("moreau validate / assemble / usage", () => {
  it("validates every example", async () => {
    for (const name of ["pendulum", "cloth", "bouncing-ball"]) {
      const r = await cli(["validate", join(ROOT, `examples/${name}.json`)]);
      expect(r.code, r.err).toBe(0);
      expect(r.out).toContain(`valid model "${name}"`);
    }
  });

  it("rejects an invalid model with zod's paths (exit 1)", async () => {
    const r = await cli([
      "validate",
      file("v.json", {
        bodies: [{ id: "a", mass: -1, kind: "particle" }],
        joints: [{ id: "j", type: "spherical", a: { body: "a" }, b: { body: "zz" } }],
      }),
    ]);
    expect(r.code).toBe(1);
    expect(r.err).toContain("invalid model");
    expect(r.err).toContain("bodies.0.mass");
    expect(r.err).toContain("joints.0.b.body");
  });

  it("assembles the slider-crank: slider velocity r ω at the crank's top position", async () => {
    const r = await cli([
      "assemble",
      join(ROOT, "examples/slider-crank.json"),
      "--levels",
      "position,velocity",
    ]);
    expect(r.code, r.err).toBe(0);
    const res = AssemblyResult.parse(JSON.parse(r.out));
    expect(res.exitFlag).toBe("SUCCESS");
    const slider = res.bodies.find((b) => b.id === "slider")!;
    expect(slider.velocity[0]).toBeCloseTo(0.1 * 2 * Math.PI, 8);
  });

  it("usage errors exit with 2", async () => {
    const both = await cli(["run", file("u.json", springModel), "--steps", "2", "--duration", "1"]);
    expect(both.code).toBe(2);
    expect(both.err).toContain("not both");
    expect((await cli(["run", file("u2.json", springModel), "--bogus"])).code).toBe(2);
    expect((await cli(["frobnicate"])).code).toBe(2);
    expect((await cli(["run", join(dir, "missing.json")])).code).toBe(2);
    const help = await cli(["--help"]);
    expect(help.code).toBe(0);
    expect(help.out).toContain("moreau run <model.json>");
  });
});

describe("bin/moreau.js", () => {
  it("runs the command line through tsx, reading a model from stdin", () => {
    const r = spawnSync(
      process.execPath,
      [join(ROOT, "bin/moreau.js"), "run", "-", "--steps", "3"],
      {
        input: JSON.stringify(springModel),
        encoding: "utf8",
        cwd: dir,
        timeout: 30_000,
      },
    );
    expect(r.status, r.stderr).toBe(0);
    const rows = parseCsv(r.stdout);
    expect(rows.map((x) => x.step)).toEqual([0, 1, 2, 3]);
    expect(rows[3]["p.x"]).toBeCloseTo(recurrence(3).x, 12);
  });
});
