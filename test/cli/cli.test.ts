/**
 * The `moreau` command line: run (local and against a server, CSV and JSON, --every and its
 * default, --duration, --bodies, particles without rotation, the progress bar, a diverging
 * run), validate, assemble, usage errors and --help, and the bin/moreau.js launcher in a
 * child process (with a model on stdin; piped into `head`, locally and on a server).
 * Trajectories are checked against recurrences and closed forms written out here:
 * symplectic Euler on a zero-length spring (v ← v − h k/m x, x ← x + h v) and a body
 * falling under gravity with the θ = 1/2 scheme (exact for constant acceleration).
 */
import { spawn, spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { PassThrough } from "node:stream";
import { describe, expect, it } from "vitest";
import { AssemblyResult, State } from "../../schemas/state";
import { main, RUN_USAGE } from "../../src/cli/main";
import {
  divergingSpring,
  SPRING_PARTICLE,
  springParticle,
  springParticleRecurrence,
} from "../support/models";
import { startServer, useServer } from "../support/server";

const ROOT = resolve(import.meta.dirname, "../..");
const G = 9.81;
const dir = mkdtempSync(join(tmpdir(), "moreau-cli-"));

function file(name: string, content: unknown): string {
  const p = join(dir, name);
  writeFileSync(p, typeof content === "string" ? content : JSON.stringify(content));
  return p;
}

const { stiffness: K, mass: M, dt: H } = SPRING_PARTICLE;
const springModel = springParticle();
const recurrence = (n: number) => springParticleRecurrence({}, n);

const fallModel = {
  name: "fall",
  bodies: [
    { id: "ball", mass: 2, inertia: [0.1, 0.1, 0.1], position: [0, 0, 10] },
    { id: "wall", fixed: true, position: [5, 0, 0] },
  ],
  solver: { dt: 0.01 },
};

/** A particle and a rigid body, falling. */
const mixedModel = {
  name: "mixed",
  bodies: [
    { id: "ball", mass: 2, inertia: [0.1, 0.1, 0.1], position: [0, 0, 10] },
    { id: "bead", kind: "particle", mass: 1, position: [1, 0, 10] },
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
      // the energy balance: nothing dissipates, the error is the total's change
      expect(row.dissipated).toBe(0);
      expect(row.energyError).toBeCloseTo(row.total - rows[0].total, 12);
    }
    // p is a particle: no orientation, no angular velocity
    expect(r.out.split("\n")[0]).toBe(
      "time,step,p.x,p.y,p.z,p.vx,p.vy,p.vz,kinetic,potential,total,dissipated,energyError",
    );
  });

  it("leaves a particle's orientation and angular velocity out, not a rigid body's", async () => {
    const model = file("mixed.json", mixedModel);
    const json = await cli(["run", model, "--steps", "2", "--every", "1", "--format", "json"]);
    expect(json.code, json.err).toBe(0);
    const frames = JSON.parse(json.out).frames as { bodies: Record<string, unknown>[] }[];
    expect(frames).toHaveLength(3);
    for (const f of frames) {
      const [ball, bead] = f.bodies;
      expect(Object.keys(ball)).toEqual([
        "id",
        "position",
        "orientation",
        "velocity",
        "angularVelocity",
      ]);
      expect(ball.id).toBe("ball");
      expect(Object.keys(bead)).toEqual(["id", "position", "velocity"]);
      expect(bead.id).toBe("bead");
    }
    const csv = await cli(["run", model, "--steps", "2", "--every", "1"]);
    expect(csv.out.split("\n")[0]).toBe(
      "time,step,ball.x,ball.y,ball.z,ball.qw,ball.qx,ball.qy,ball.qz,ball.vx,ball.vy,ball.vz,ball.wx,ball.wy,ball.wz,bead.x,bead.y,bead.z,bead.vx,bead.vy,bead.vz,kinetic,potential,total,dissipated,energyError",
    );
    const row = parseCsv(csv.out)[2];
    expect(row["bead.vz"]).toBeCloseTo(-G * 0.02, 10);
    expect(row["ball.qw"]).toBe(1);
  });

  it("records about 60 frames per simulated second by default: every max(1, round((1/60)/dt)) steps", async () => {
    // dt 0.001: every 17 steps (0.017 s); dt 0.005: every 3 (0.015 s); dt 0.05: every step
    for (const [dt, every] of [
      [0.001, 17],
      [0.005, 3],
      [0.05, 1],
    ]) {
      const model = file(`every-${dt}.json`, { ...mixedModel, solver: { dt } });
      const r = await cli(["run", model, "--duration", "0.1", "--format", "json"]);
      expect(r.code, r.err).toBe(0);
      const doc = JSON.parse(r.out) as { every: number; frames: { time: number; step: number }[] };
      expect(doc.every).toBe(every);
      const total = Math.round(0.1 / dt);
      const steps = doc.frames.map((f) => f.step);
      expect(steps.at(-1)).toBe(total);
      // successive frames are every·dt apart in time, but for the last step
      for (let i = 1; i < doc.frames.length - 1; i++)
        expect(doc.frames[i].time - doc.frames[i - 1].time).toBeCloseTo(every * dt, 12);
      expect(steps.slice(0, -1)).toEqual(
        Array.from({ length: Math.ceil(total / every) }, (_, i) => i * every),
      );
    }
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
    // |1 − h² k/m| ≫ 1: explicit stepping blows up
    const diverging = divergingSpring();
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

/** The server of the --server runs (each deletes its session: the list stays empty). */
const server = useServer();

describe("moreau run (fem bodies)", () => {
  // a 0.2 m cube of 2 × 2 × 2 cells (27 nodes) falling freely: rigid translation, no
  // elastic force, so every node follows z₀ − ½ g t² exactly under the θ = ½ scheme
  const cube = {
    name: "cube",
    bodies: [{ id: "wall", fixed: true }],
    fem: [
      {
        id: "cube",
        box: { size: [0.2, 0.2, 0.2], resolution: [2, 2, 2], center: [0, 0, 1] },
        density: 500,
        youngModulus: 1e6,
      },
    ],
    solver: { dt: 0.01 },
  };

  it("writes the nodes as particles: CSV columns <fem>/<k>.x … .vz, and the JSON `fem` arrays", async () => {
    const model = file("cube.json", cube);
    const csv = await cli(["run", model, "--steps", "10", "--every", "5"]);
    expect(csv.code, csv.err).toBe(0);
    const head = csv.out.split("\n")[0].split(",");
    expect(head.slice(0, 8)).toEqual([
      "time",
      "step",
      "wall.x",
      "wall.y",
      "wall.z",
      "wall.qw",
      "wall.qx",
      "wall.qy",
    ]);
    expect(head.filter((c) => c.startsWith("cube/")).length).toBe(27 * 6);
    expect(head).toContain("cube/26.vz");
    expect(head).not.toContain("cube/0.qw");
    const rows = parseCsv(csv.out);
    expect(rows.map((r) => r.step)).toEqual([0, 5, 10]);
    for (const r of rows) {
      const t = r.step * 0.01;
      for (let k = 0; k < 27; k++) {
        const z0 = 0.9 + 0.1 * Math.floor(k / 9);
        // free fall, to Newton's tolerance (β h² 1e-10 (1 + |a|) a step: the fem force's
        // energy–momentum form converges linearly, measured up to 5.05e-13 m at step 10)
        expect(r[`cube/${k}.z`]).toBeCloseTo(z0 - 0.5 * G * t * t, 11);
        expect(r[`cube/${k}.vz`]).toBeCloseTo(-G * t, 11);
      }
    }
    const json = await cli(["run", model, "--steps", "10", "--every", "10", "--format", "json"]);
    const frames = JSON.parse(json.out).frames as {
      bodies: { id: string; position: number[] }[];
      fem: { id: string; positions: number[]; strain: number[] }[];
    }[];
    const last = frames[frames.length - 1];
    expect(last.fem[0].id).toBe("cube");
    for (let k = 0; k < 27; k++)
      expect(last.fem[0].positions.slice(3 * k, 3 * k + 3)).toEqual(
        last.bodies.find((b) => b.id === `cube/${k}`)?.position,
      );
    // undeformed: zero strain to rounding
    expect(Math.max(...last.fem[0].strain)).toBeLessThan(1e-12);
  });
});

describe("moreau run --server", () => {
  it("writes the same trajectory as the local run, and deletes its session", async () => {
    const { url } = server;
    const model = file("spring-remote.json", { model: springModel }); // a create-session body
    const local = await cli(["run", model, "--steps", "40", "--every", "7"]);
    const remote = await cli(["run", model, "--steps", "40", "--every", "7", "--server", url]);
    expect(remote.code, remote.err).toBe(0);
    expect(remote.out).toBe(local.out);
    // the particles are known on a server too (from the model sent)
    const mixed = file("mixed-remote.json", mixedModel);
    const mixedLocal = await cli(["run", mixed, "--steps", "5"]);
    const mixedRemote = await cli(["run", mixed, "--steps", "5", "--server", url]);
    expect(mixedRemote.out).toBe(mixedLocal.out);
    expect(mixedRemote.out).toContain(",bead.vz,kinetic");
    expect(parseCsv(remote.out).map((x) => x.step)).toEqual([0, 7, 14, 21, 28, 35, 40]);
    const viaEnv = await cli(["run", model, "--steps", "40", "--every", "7"], {
      MOREAU_SERVER: url,
    });
    expect(viaEnv.out).toBe(local.out);
    const list = await (await fetch(`${url}/v1/sessions`)).json();
    expect(list.sessions).toEqual([]);
  });

  it("assembles on the server as locally", async () => {
    const { url } = server;
    const ex = join(ROOT, "examples/slider-crank.json");
    const local = await cli(["assemble", ex]);
    const remote = await cli(["assemble", ex, "--server", url]);
    expect(remote.code, remote.err).toBe(0);
    expect(JSON.parse(remote.out)).toEqual(JSON.parse(local.out));
  });

  it("sends --api-key (or MOREAU_API_KEY) to a server with access control", async () => {
    const KEY = "cli-test-key-0123456789";
    const { app: keyed, url: keyedUrl } = await startServer({ apiKeys: [KEY] });
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

  it("every command takes --help / -h and prints its usage (exit 0)", async () => {
    for (const [cmd, usage] of [
      ["run", "Usage: moreau run <model.json> [options]"],
      ["validate", "Usage: moreau validate <model.json>"],
      ["assemble", "Usage: moreau assemble <model.json> [options]"],
    ])
      for (const args of [
        [cmd, "--help"],
        [cmd, "-h"],
        ["help", cmd],
        [cmd, "model.json", "-h"],
      ]) {
        const r = await cli(args);
        expect(r.code, `${args.join(" ")}: ${r.err}`).toBe(0);
        expect(r.out.startsWith(usage), args.join(" ")).toBe(true);
        expect(r.err).toBe("");
      }
    const run = await cli(["run", "--help"]);
    expect(run.out).toBe(`${RUN_USAGE}\n`);
    expect(run.out).toContain("--every K");
    expect(run.out).toContain("round((1/60) / dt)");
    for (const args of [["--help"], ["-h"], ["help"], []]) {
      const r = await cli(args);
      expect(r.code).toBe(0);
      expect(r.out).toContain("moreau <command> --help");
    }
    expect((await cli(["help", "frobnicate"])).code).toBe(2);
  });
});

describe("bin/moreau.js", () => {
  it("runs the command line through tsx, reading a model from stdin", () => {
    const r = spawnSync(
      process.execPath,
      [join(ROOT, "bin/moreau.js"), "run", "-", "--steps", "3", "--every", "1"],
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

  it("exits quietly with status 0 when `head` closes its standard output, stopping the run", async () => {
    // a million cloth steps would take many minutes: the run must stop at the closed pipe
    const r = await runIntoHead([join(ROOT, "examples/cloth.json"), "--steps", "1000000"], 3);
    expect(r.status, r.err).toBe(0);
    expect(r.err).toBe("");
    expect(r.lines).toHaveLength(3);
    expect(r.lines[0]).toMatch(/^time,step,p0_0\.x,p0_0\.y,p0_0\.z,p0_0\.vx,/);
    expect(r.lines[1]).toMatch(/^0,0,/);
  }, 30_000);
});

describe("bin/moreau.js --server, piped into head", () => {
  it("exits quietly with status 0 and deletes its session (JSON)", async () => {
    const { url } = server;
    const r = await runIntoHead(
      [
        join(ROOT, "examples/cloth.json"),
        "--steps",
        "1000000",
        "--every",
        "1",
        "--format",
        "json",
        "--server",
        url,
      ],
      3,
    );
    expect(r.status, r.err).toBe(0);
    expect(r.err).toBe("");
    expect(r.lines[0]).toMatch(/^\{"name":"cloth","source":"http:/);
    expect(r.lines[2]).toMatch(/^\{"time":0\.005,"step":1,/);
    const list = await (await fetch(`${url}/v1/sessions`)).json();
    expect(list.sessions).toEqual([]);
  }, 30_000);
});

/**
 * `(node bin/moreau.js run ARGS 2>ERR; echo $? >STATUS) | head -n LINES` in a real shell:
 * moreau's exit status and standard error, and what head printed.
 */
function runIntoHead(
  args: string[],
  lines: number,
): Promise<{ status: number; err: string; lines: string[] }> {
  const tag = Math.random().toString(36).slice(2);
  const errFile = join(dir, `head-${tag}.err`);
  const statusFile = join(dir, `head-${tag}.status`);
  const script = `("$0" "$@" 2>"$ERR_FILE"; echo $? >"$STATUS_FILE") | head -n ${lines}`;
  const child = spawn(
    "sh",
    ["-c", script, process.execPath, join(ROOT, "bin/moreau.js"), "run", ...args],
    { cwd: dir, env: { ...process.env, ERR_FILE: errFile, STATUS_FILE: statusFile } },
  );
  const out: Buffer[] = [];
  child.stdout.on("data", (c: Buffer) => out.push(c));
  return new Promise((res, rej) => {
    child.on("error", rej);
    child.on("close", () =>
      res({
        status: Number(readFileSync(statusFile, "utf8")),
        err: readFileSync(errFile, "utf8"),
        lines: Buffer.concat(out).toString().split("\n").filter(Boolean),
      }),
    );
  });
}
