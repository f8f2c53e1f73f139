/**
 * The `moreau` command line (bin/moreau.js runs it through tsx):
 *
 *   moreau run <model.json> [--server URL] [--steps N | --duration S] [--every K]
 *              [--format csv|json] [--out FILE] [--bodies a,b] [--progress | --no-progress]
 *   moreau validate <model.json>
 *   moreau assemble <model.json> [--server URL] [--levels position,velocity,acceleration]
 *              [--max-iterations N] [--solver S] [--options JSON] [--out FILE]
 *   moreau import <robot.urdf> [--out FILE] [--floating] [--actuators none|torque|position|velocity]
 *              [--kp N] [--kd N] [--kv N] [--collision-meshes convex|mesh] [--drop-unsupported]
 *              [--package NAME=DIR] [--name NAME]
 *
 * Every command takes -h / --help. A model file may hold a Model or a create-session body
 * `{ "model": ... }`; "-" reads standard input. Without --server (or MOREAU_SERVER) the
 * engine runs in this process. Exit codes: 0 done; 1 invalid model, diverged run, server
 * error, assembly not SUCCESS; 2 bad usage or unreadable file.
 *
 * A standard output closed by its reader (`moreau run ... | head`) ends the command as it
 * ends Unix tools, quietly with status 0: the run stops at its next write and a server
 * session is deleted as after a complete run.
 */
import { createWriteStream, readFileSync } from "node:fs";
import { resolve } from "node:path";
import type { Readable, Writable } from "node:stream";
import { parseArgs } from "node:util";
import { issuesOf, issueText } from "../../schemas/issues";
import { Model } from "../../schemas/model";
import type { AssemblyOptionsIn } from "../../schemas/state";
import type { UrdfImportOptionsIn } from "../../schemas/urdf";
import { MoreauApiError, MoreauClient, MoreauConnectionError } from "../client/index";
import { loadModel, ModelError } from "../engine/index";
import { importCommand } from "./import";
import { CliError, readModelFile } from "./model-file";
import { note, writeChunk } from "./output";
import { runCommand } from "./run";

export interface CliIo {
  stdout: Writable;
  stderr: Writable & { isTTY?: boolean };
  stdin?: Readable;
  cwd?: string;
  env?: NodeJS.ProcessEnv;
}

const EXIT_CODES = `Exit codes: 0 done (also when the reader of standard output closes it early, as
with \`| head\`), 1 invalid model / diverged / server error / assembly not SUCCESS,
2 bad usage.`;

const MODEL_FILE = `A model file holds a Model (examples/*.json) or { "model": Model }; "-" reads stdin.`;

export const RUN_USAGE = `Usage: moreau run <model.json> [options]

Steps a model, in this process or on a server, and writes its trajectory: the State at
t = 0, every K steps and at the last step.

Options:
  --server URL        run on a Moreau server (default: MOREAU_SERVER, else in this process)
  --api-key KEY       the server's API key (default: MOREAU_API_KEY)
  --steps N           number of steps of solver.dt
  --duration S        simulated seconds (default 1 when --steps is not given)
  --every K           record every K steps (default: about 60 frames per simulated
                      second, K = max(1, round((1/60) / dt)); dt 0.005 gives K = 3)
  --format csv|json   output format (default: json for an --out ending in .json, else csv)
  -o, --out FILE      output file (default: standard output)
  --bodies a,b        only these bodies in the output
  --progress          always show the progress bar (standard error)
  --no-progress       never show it (default: on a terminal for runs of 2000+ steps)
  -h, --help          show this help

Output:
  csv    a header, then one row per State: time, step, per body <id>.x <id>.y <id>.z,
         <id>.qw <id>.qx <id>.qy <id>.qz (rigid bodies only), <id>.vx <id>.vy <id>.vz,
         <id>.wx <id>.wy <id>.wz (rigid bodies only), then kinetic, potential, total
  json   { name, source, dt, every, frames: [State, ...] }; a particle's body state has
         id, position and velocity only (no orientation, no angularVelocity)

${MODEL_FILE}
${EXIT_CODES}`;

export const VALIDATE_USAGE = `Usage: moreau validate <model.json>

Checks a model against the schema and builds it; prints a summary.

Options:
  -h, --help          show this help

${MODEL_FILE}
Exit codes: 0 valid, 1 invalid model, 2 bad usage.`;

export const ASSEMBLE_USAGE = `Usage: moreau assemble <model.json> [options]

Assembly analysis: positions, velocities and accelerations that satisfy the joints,
and the joint reactions; writes the AssemblyResult as JSON.

Options:
  --server URL        run on a Moreau server (default: MOREAU_SERVER, else in this process)
  --api-key KEY       the server's API key (default: MOREAU_API_KEY)
  --levels L          comma-separated: position,velocity,acceleration (default: all)
  --max-iterations N  Newton iterations of the position level
  --solver S          sparse-lu | sparse-qr | minres | gmres
  --options JSON      any AssemblyOptions, e.g. '{"relTolerance":1e-12}'
  -o, --out FILE      write the AssemblyResult there (default: standard output)
  -h, --help          show this help

${MODEL_FILE}
${EXIT_CODES}`;

export const IMPORT_USAGE = `Usage: moreau import <robot.urdf> [options]

Converts a URDF robot description (xacro expanded) into a Moreau model and writes it as
JSON. Links become rigid bodies (mass, centre of mass, inertia), <collision> boxes,
cylinders and spheres their shapes; revolute, continuous, prismatic and fixed joints
become joints with their limits; every moving joint with a non-zero <limit effort> gets
an actuator (--actuators) whose effortLimit is that effort; <dynamics damping> becomes a
velocity servo towards 0; <mimic> becomes the joint's mimic coupling. What has no
counterpart is a warning (standard error) or, for collision meshes whose files are
missing, an error. Mesh files (STL, OBJ) are read from disk:
package://PKG/... from --package PKG=DIR or a folder named PKG above the URDF.

Options:
  -o, --out FILE        write the model there (default: standard output)
  --floating            the root link is a free body (default: fixed where it is)
  --actuators TYPE      none | torque (default) | position (--kp, --kd) | velocity (--kv)
  --kp N, --kd N        the position servos' gains (N·m/rad, N·m·s/rad; N/m, N·s/m)
  --kv N                the velocity servos' gain
  --collision-meshes M  convex (default: the hull of a collision mesh) | mesh (its triangles)
  --drop-unsupported    drop collision meshes whose files are missing, with a warning
  --balance-inertia     an inertia no body has (largest principal moment over the sum of
                        the other two): its moments set to their mean (MuJoCo's
                        balanceinertia), with a warning; default: refused at its line
  --package NAME=DIR    where package://NAME/ is (repeatable)
  --name NAME           the model's name (default: the robot's)
  -h, --help            show this help

Exit codes: 0 done, 1 the URDF cannot be imported (each problem named with its line),
2 bad usage or an unreadable file.`;

export const USAGE = `moreau — multibody simulation (Moreau engine and server)

Usage:
  moreau run <model.json> [options]        step a model, write its trajectory
  moreau validate <model.json>             check a model against the schema
  moreau import <robot.urdf> [options]     convert a URDF robot into a model
  moreau assemble <model.json> [options]   assembly analysis (positions, velocities,
                                           accelerations, joint reactions)
  moreau --version

\`moreau <command> --help\` (or \`moreau help <command>\`) shows a command's options.

${MODEL_FILE}
${EXIT_CODES}`;

const COMMAND_USAGE = new Map([
  ["run", RUN_USAGE],
  ["validate", VALIDATE_USAGE],
  ["assemble", ASSEMBLE_USAGE],
  ["import", IMPORT_USAGE],
]);

function version(): string {
  try {
    const pkg = JSON.parse(
      readFileSync(new URL("../../package.json", import.meta.url), "utf8"),
    ) as { version?: string };
    return pkg.version ?? "unknown";
  } catch {
    return "unknown";
  }
}

function positiveInt(name: string, v: string | undefined): number | null {
  if (v === undefined) return null;
  const n = Number(v);
  if (!Number.isInteger(n) || n < 1)
    throw new CliError(`${name} must be a positive integer, got "${v}"`);
  return n;
}

function positiveNumber(name: string, v: string | undefined): number | null {
  if (v === undefined) return null;
  const n = Number(v);
  if (!Number.isFinite(n) || n <= 0)
    throw new CliError(`${name} must be a positive number, got "${v}"`);
  return n;
}

async function openOut(
  file: string | undefined,
  io: CliIo,
): Promise<{ out: Writable; close: () => Promise<void> }> {
  if (!file || file === "-") return { out: io.stdout, close: async () => {} };
  const path = resolve(io.cwd ?? process.cwd(), file);
  const out = createWriteStream(path);
  await new Promise<void>((res, rej) => {
    out.once("open", () => res());
    out.once("error", (e) => rej(new CliError(`cannot write ${file}: ${e.message}`)));
  });
  return {
    out,
    close: () =>
      new Promise<void>((res, rej) => {
        out.end((e?: Error | null) => (e ? rej(e) : res()));
      }),
  };
}

async function cmdRun(args: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    allowNegative: true,
    options: {
      server: { type: "string" },
      steps: { type: "string" },
      duration: { type: "string" },
      every: { type: "string" },
      format: { type: "string" },
      out: { type: "string", short: "o" },
      bodies: { type: "string" },
      progress: { type: "boolean" },
      "api-key": { type: "string" },
      help: { type: "boolean", short: "h" },
    },
  });
  if (values.help) return usage(io, RUN_USAGE);
  if (positionals.length !== 1) throw new CliError("run takes one model file");
  const steps = positiveInt("--steps", values.steps);
  const duration = positiveNumber("--duration", values.duration);
  if (steps !== null && duration !== null)
    throw new CliError("give --steps or --duration, not both");
  const format = values.format ?? (values.out?.endsWith(".json") ? "json" : "csv");
  if (format !== "csv" && format !== "json") throw new CliError(`--format must be csv or json`);
  const model = await readModelFile(positionals[0], io.cwd ?? process.cwd(), io.stdin);
  const server = values.server ?? io.env?.MOREAU_SERVER ?? null;
  const { out, close } = await openOut(values.out, io);
  try {
    const r = await runCommand(
      {
        model,
        server: server || null,
        apiKey: values["api-key"] ?? io.env?.MOREAU_API_KEY ?? null,
        steps,
        duration,
        every: positiveInt("--every", values.every),
        format,
        bodies: values.bodies
          ? values.bodies
              .split(",")
              .map((s) => s.trim())
              .filter(Boolean)
          : null,
        progress: values.progress ?? null,
      },
      out,
      io.stderr,
    );
    if (values.out)
      await note(
        io.stderr,
        `${r.rows} states (${r.steps} steps, t = ${r.time.toPrecision(6)} s) written to ${values.out}\n`,
      );
  } finally {
    await close();
  }
  return 0;
}

async function cmdValidate(args: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: { help: { type: "boolean", short: "h" } },
  });
  if (values.help) return usage(io, VALIDATE_USAGE);
  if (positionals.length !== 1) throw new CliError("validate takes one model file");
  const file = positionals[0];
  const json = await readModelFile(file, io.cwd ?? process.cwd(), io.stdin);
  const parsed = Model.safeParse(json);
  if (!parsed.success) {
    const lines = issuesOf(parsed.error).map((i) => `  ${issueText(i)}`);
    await note(io.stderr, `${file}: invalid model\n${lines.join("\n")}\n`);
    return 1;
  }
  try {
    loadModel(json); // the engine builds it too (catches what the schema cannot)
  } catch (err) {
    const msg = err instanceof ModelError ? err.message : (err as Error).message;
    await note(io.stderr, `${file}: the model cannot be built: ${msg}\n`);
    return 1;
  }
  const m = parsed.data;
  const dynamic = m.bodies.filter((b) => !b.fixed).length;
  const plural = (n: number, w: string) => `${n} ${w}${n === 1 ? "" : "s"}`;
  await writeChunk(
    io.stdout,
    `${file}: valid model "${m.name}": ${m.bodies.length} ${m.bodies.length === 1 ? "body" : "bodies"} (${dynamic} dynamic), ${plural(m.forces.length, "force")}, ${plural(m.joints.length, "joint")}, ${plural(m.motors.length, "motor")}; ${m.contact ? `contact ${m.contact.method}` : "no contact"}; ${m.solver.integrator}, dt ${m.solver.dt} s\n`,
  );
  return 0;
}

async function cmdAssemble(args: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: {
      server: { type: "string" },
      levels: { type: "string" },
      "max-iterations": { type: "string" },
      solver: { type: "string" },
      options: { type: "string" },
      out: { type: "string", short: "o" },
      "api-key": { type: "string" },
      help: { type: "boolean", short: "h" },
    },
  });
  if (values.help) return usage(io, ASSEMBLE_USAGE);
  if (positionals.length !== 1) throw new CliError("assemble takes one model file");
  let options: Record<string, unknown> = {};
  if (values.options) {
    try {
      options = JSON.parse(values.options) as Record<string, unknown>;
    } catch (err) {
      throw new CliError(`--options is not valid JSON: ${(err as Error).message}`);
    }
  }
  if (values.levels) options.levels = values.levels.split(",").map((s) => s.trim());
  const maxIt = positiveInt("--max-iterations", values["max-iterations"]);
  if (maxIt !== null) options.maxIterations = maxIt;
  if (values.solver) options.solver = values.solver;
  const model = await readModelFile(positionals[0], io.cwd ?? process.cwd(), io.stdin);
  const server = values.server ?? io.env?.MOREAU_SERVER ?? null;
  let result: { exitFlag: string };
  if (server) {
    try {
      const apiKey = values["api-key"] ?? io.env?.MOREAU_API_KEY;
      result = await new MoreauClient(server, { apiKey }).assemble(
        model,
        options as AssemblyOptionsIn,
      );
    } catch (err) {
      if (err instanceof MoreauApiError && err.status === 400)
        throw new CliError(
          `invalid request:\n${err
            .issueLines()
            .map((l) => `  ${l}`)
            .join("\n")}`,
          1,
        );
      throw err;
    }
  } else {
    let sim: ReturnType<typeof loadModel>;
    try {
      sim = loadModel(model);
    } catch (err) {
      if (err instanceof ModelError)
        throw new CliError(
          `invalid model:\n${err.issues.map((i) => `  ${issueText(i)}`).join("\n")}`,
          1,
        );
      throw err;
    }
    try {
      result = sim.assemble(options as AssemblyOptionsIn);
    } catch (err) {
      throw new CliError(`invalid assembly options: ${(err as Error).message}`);
    }
  }
  const { out, close } = await openOut(values.out, io);
  try {
    await writeChunk(out, `${JSON.stringify(result, null, 2)}\n`);
  } finally {
    await close();
  }
  if (result.exitFlag !== "SUCCESS") {
    await note(io.stderr, `assembly: ${result.exitFlag}\n`);
    return 1;
  }
  return 0;
}

async function cmdImport(args: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: {
      out: { type: "string", short: "o" },
      floating: { type: "boolean" },
      actuators: { type: "string" },
      kp: { type: "string" },
      kd: { type: "string" },
      kv: { type: "string" },
      "drop-unsupported": { type: "boolean" },
      "balance-inertia": { type: "boolean" },
      "collision-meshes": { type: "string" },
      package: { type: "string", multiple: true },
      name: { type: "string" },
      help: { type: "boolean", short: "h" },
    },
  });
  if (values.help) return usage(io, IMPORT_USAGE);
  if (positionals.length !== 1) throw new CliError("import takes one URDF file");
  const packages = new Map<string, string>();
  for (const p of values.package ?? []) {
    const eq = p.indexOf("=");
    if (eq <= 0) throw new CliError(`--package takes NAME=DIR, got "${p}"`);
    packages.set(p.slice(0, eq), resolve(io.cwd ?? process.cwd(), p.slice(eq + 1)));
  }
  const type = values.actuators ?? "torque";
  const kp = positiveNumber("--kp", values.kp);
  const kv = positiveNumber("--kv", values.kv);
  const kd = values.kd === undefined ? 0 : Number(values.kd);
  if (!Number.isFinite(kd) || kd < 0)
    throw new CliError(`--kd must be a number ≥ 0, got "${values.kd}"`);
  let actuators: UrdfImportOptionsIn["actuators"];
  if (type === "none" || type === "torque") actuators = { type };
  else if (type === "position") {
    if (kp === null) throw new CliError("--actuators position needs --kp");
    actuators = { type, kp, kd };
  } else if (type === "velocity") {
    if (kv === null) throw new CliError("--actuators velocity needs --kv");
    actuators = { type, kv };
  } else
    throw new CliError(`--actuators must be none, torque, position or velocity, got "${type}"`);
  const collisionMeshes = values["collision-meshes"] ?? "convex";
  if (collisionMeshes !== "convex" && collisionMeshes !== "mesh")
    throw new CliError(`--collision-meshes must be convex or mesh, got "${collisionMeshes}"`);
  const r = await importCommand({
    file: positionals[0],
    cwd: io.cwd ?? process.cwd(),
    packages,
    options: {
      floating: values.floating ?? false,
      actuators,
      dropUnsupported: values["drop-unsupported"] ?? false,
      balanceInertia: values["balance-inertia"] ?? false,
      collisionMeshes,
      ...(values.name !== undefined ? { name: values.name } : {}),
    },
  });
  for (const m of r.missing) await note(io.stderr, `warning: mesh file not found: ${m}\n`);
  for (const w of r.warnings) await note(io.stderr, `warning: ${w}\n`);
  const { out, close } = await openOut(values.out, io);
  try {
    await writeChunk(out, r.json);
  } finally {
    await close();
  }
  if (values.out) await note(io.stderr, `model written to ${values.out}\n`);
  return 0;
}

async function usage(io: CliIo, text: string): Promise<number> {
  await writeChunk(io.stdout, `${text}\n`);
  return 0;
}

/** The first error each output stream emitted, once watchErrors listens to it. */
const streamErrors = new WeakMap<Writable, { first: NodeJS.ErrnoException | null }>();

/**
 * An output closed by its reader (EPIPE) emits 'error', which crashes the process when
 * nobody listens; the failed write's callback hands the same error to writeChunk. The
 * listener keeps the first error (process.stdout is never destroyed, so its `errored`
 * stays null) and stays for the life of the stream: the event may come after main()
 * has returned.
 */
function watchErrors(stream: Writable): void {
  if (streamErrors.has(stream)) return;
  const seen: { first: NodeJS.ErrnoException | null } = { first: null };
  streamErrors.set(stream, seen);
  stream.on("error", (err: NodeJS.ErrnoException) => {
    seen.first ??= err;
  });
}

/** Whether the reader of the stream closed it (`| head`). */
function closedByReader(stream: Writable): boolean {
  return streamErrors.get(stream)?.first?.code === "EPIPE";
}

/** Runs the command line; resolves to the process exit code. */
export async function main(argv: string[], io?: Partial<CliIo>): Promise<number> {
  const full: CliIo = {
    stdout: io?.stdout ?? process.stdout,
    stderr: io?.stderr ?? process.stderr,
    stdin: io?.stdin ?? process.stdin,
    cwd: io?.cwd ?? process.cwd(),
    env: io?.env ?? process.env,
  };
  watchErrors(full.stdout);
  watchErrors(full.stderr);
  const [cmd, ...rest] = argv;
  try {
    switch (cmd) {
      case "run":
        return await cmdRun(rest, full);
      case "validate":
        return await cmdValidate(rest, full);
      case "assemble":
        return await cmdAssemble(rest, full);
      case "import":
        return await cmdImport(rest, full);
      case "--version":
      case "-v":
      case "version":
        await writeChunk(full.stdout, `${version()}\n`);
        return 0;
      case undefined:
      case "--help":
      case "-h":
        return await usage(full, USAGE);
      case "help": {
        const topic = rest[0] === undefined ? USAGE : COMMAND_USAGE.get(rest[0]);
        if (topic === undefined) throw new CliError(`no command "${rest[0]}"\n\n${USAGE}`);
        return await usage(full, topic);
      }
      default:
        throw new CliError(`unknown command "${cmd}"\n\n${USAGE}`);
    }
  } catch (err) {
    // whatever failed after the reader left (writes, the JSON's closing bracket) is moot
    if (closedByReader(full.stdout)) return 0;
    if (err instanceof CliError) {
      await note(full.stderr, `moreau: ${err.message}\n`);
      return err.exitCode;
    }
    // parseArgs errors (unknown or malformed options) are usage errors
    const code = (err as { code?: string }).code;
    if (typeof code === "string" && code.startsWith("ERR_PARSE_ARGS")) {
      await note(full.stderr, `moreau: ${(err as Error).message}\n`);
      return 2;
    }
    if (err instanceof MoreauConnectionError || err instanceof MoreauApiError) {
      await note(full.stderr, `moreau: ${(err as Error).message}\n`);
      return 1;
    }
    await note(full.stderr, `moreau: ${(err as Error)?.stack ?? err}\n`);
    return 1;
  }
}
