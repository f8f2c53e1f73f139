/**
 * The README's Quickstart, run as written: the shell commands of the ```sh block between the
 * quickstart markers run one after the other in one bash (so `ID=$(…)` carries over), from
 * the repository's root, against the server `npm start` builds and starts. The server
 * listens on a free port, so `localhost:8080` in the commands becomes `localhost:<port>`;
 * nothing else is changed. After a command, a line `# → <status> <shape>` is the answer the
 * README shows: the test checks the HTTP status and that the answer has that shape (`…`
 * stands for any value, `,…` for more keys); every other command must exit 0 with 2xx
 * answers. The server is ready when /ready answers 200 (polled: no fixed delay).
 */
import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ROOT, type ServerProcess, spawnServer } from "../support/process";

const BEGIN = "<!-- quickstart:begin -->";
const END = "<!-- quickstart:end -->";
const README_HOST = "localhost:8080";
const run = promisify(execFile);

interface QuickstartCommand {
  /** The command as the README writes it (continuation lines included). */
  text: string;
  /** The answer shown after it: `# → <status> <shape>`. */
  expected: { status: number; shape: unknown } | null;
}

/** The commands of the README's Quickstart block, with the answers it shows. */
function quickstartCommands(readme: string): QuickstartCommand[] {
  const a = readme.indexOf(BEGIN);
  const b = readme.indexOf(END);
  if (a < 0 || b < a) throw new Error(`README.md has no ${BEGIN} … ${END} block`);
  const fence = /```sh\n([\s\S]*?)```/.exec(readme.slice(a + BEGIN.length, b));
  if (!fence) throw new Error("the quickstart block holds no ```sh fence");
  const commands: QuickstartCommand[] = [];
  let pending: string[] = [];
  for (const line of fence[1].split("\n")) {
    if (pending.length > 0) {
      pending.push(line);
      if (!line.endsWith("\\")) {
        commands.push({ text: pending.join("\n"), expected: null });
        pending = [];
      }
      continue;
    }
    const t = line.trim();
    const shown = /^#\s*→\s*(\d{3})\s+(.*)$/.exec(t);
    if (shown) {
      const last = commands.at(-1);
      if (!last || last.expected) throw new Error(`an answer without its command: ${t}`);
      last.expected = { status: Number(shown[1]), shape: parseShape(shown[2]) };
      continue;
    }
    if (t === "" || t.startsWith("#")) continue;
    if (line.endsWith("\\")) pending = [line];
    else commands.push({ text: line, expected: null });
  }
  if (pending.length > 0) throw new Error("the quickstart block ends inside a command");
  return commands;
}

/**
 * An answer's shape as the README writes it, as JSON: `"…"`, `[…]`, `{…}` and a bare `…`
 * value become null (any value), `,…` before a closing bracket is dropped (more keys).
 */
function parseShape(text: string): unknown {
  const json = text
    .replace(/"…"/g, "null")
    .replace(/\[…\]/g, "null")
    .replace(/\{…\}/g, "null")
    .replace(/,\s*…(?=\s*[}\]])/g, "")
    .replace(/:\s*…/g, ":null");
  return JSON.parse(json);
}

/** Where `actual` differs from the shape (an empty list when it has it). */
function shapeMismatches(actual: unknown, shape: unknown, path = "$"): string[] {
  if (shape === null) return actual === undefined ? [`${path} is missing`] : [];
  if (Array.isArray(shape)) {
    if (!Array.isArray(actual)) return [`${path} is not an array`];
    if (shape.length === 0) return actual.length === 0 ? [] : [`${path} is not empty`];
    if (actual.length < shape.length) return [`${path} has fewer than ${shape.length} items`];
    return shape.flatMap((s, i) => shapeMismatches(actual[i], s, `${path}[${i}]`));
  }
  if (typeof shape === "object") {
    if (typeof actual !== "object" || actual === null || Array.isArray(actual))
      return [`${path} is not an object`];
    const obj = actual as Record<string, unknown>;
    return Object.entries(shape as Record<string, unknown>).flatMap(([k, s]) =>
      k in obj ? shapeMismatches(obj[k], s, `${path}.${k}`) : [`${path}.${k} is missing`],
    );
  }
  return Object.is(actual, shape)
    ? []
    : [`${path} is ${JSON.stringify(actual)}, not ${JSON.stringify(shape)}`];
}

const readme = readFileSync(join(ROOT, "README.md"), "utf8");

describe("the README's Quickstart", () => {
  it("has shell commands with the answers they give", () => {
    const commands = quickstartCommands(readme);
    expect(commands.length).toBeGreaterThanOrEqual(5);
    for (const c of commands.filter((c) => /\bcurl\b/.test(c.text)))
      expect(c.text, "the commands call the server at its default address").toContain(README_HOST);
    expect(commands.filter((c) => c.expected).length).toBeGreaterThanOrEqual(4);
    expect(parseShape('{"a":"…","b":[…],"c":{"d":1,…},"e":…,…}')).toEqual({
      a: null,
      b: null,
      c: { d: 1 },
      e: null,
    });
  });

  describe("run as written against `npm start`", () => {
    let server: ServerProcess | undefined;
    let port = 0;
    let dir = "";

    beforeAll(async () => {
      dir = mkdtempSync(join(tmpdir(), "moreau-quickstart-"));
      // the server's defaults, as a newcomer has them (PATH and HOME), on a free port with
      // one worker
      server = await spawnServer(
        { npm_config_update_notifier: "false" },
        { command: ["npm", "start"], bareEnv: true, detached: true, timeoutMs: 50_000 },
      );
      port = server.port;
    }, 60_000);

    afterAll(async () => {
      await server?.stop("SIGTERM", 20_000); // npm start forwards it: a graceful shutdown
      if (dir) rmSync(dir, { recursive: true, force: true });
    }, 30_000);

    it("every command succeeds with the answer the README shows", async () => {
      const commands = quickstartCommands(readme);
      // one bash for all the commands; each one's output, HTTP statuses (curl writes them to
      // standard error) and exit status go to files of its own
      const script = [
        "set -o pipefail",
        "curl() { command curl -w '%{stderr}HTTP %{http_code}\\n' \"$@\"; }",
        `cd '${ROOT}'`,
        ...commands.map((c, i) => {
          const text = c.text.replaceAll(README_HOST, `localhost:${port}`);
          return `{\n${text}\n} >'${dir}/${i}.out' 2>'${dir}/${i}.err'; echo $? >'${dir}/${i}.rc'`;
        }),
      ].join("\n");
      writeFileSync(join(dir, "quickstart.sh"), script);
      await run("bash", [join(dir, "quickstart.sh")], { timeout: 45_000 });

      commands.forEach((c, i) => {
        const out = readFileSync(join(dir, `${i}.out`), "utf8");
        const err = readFileSync(join(dir, `${i}.err`), "utf8");
        const rc = Number(readFileSync(join(dir, `${i}.rc`), "utf8"));
        const what = `command ${i + 1}:\n${c.text}\n${err}\n${out.slice(0, 2000)}`;
        expect(rc, what).toBe(0);
        const statuses = [...err.matchAll(/^HTTP (\d{3})$/gm)].map((m) => Number(m[1]));
        if (/\bcurl\b/.test(c.text)) expect(statuses.length, what).toBeGreaterThan(0);
        for (const s of statuses) expect(s >= 200 && s < 300, what).toBe(true);
        if (c.expected) {
          expect(statuses.at(-1), what).toBe(c.expected.status);
          expect(shapeMismatches(JSON.parse(out), c.expected.shape), what).toEqual([]);
        }
      });
      // the id the commands kept named the session they drove: it is paused at step ≥ 200
      const sessions = (await (await fetch(`http://127.0.0.1:${port}/v1/sessions`)).json()) as {
        sessions: { status: string; step: number }[];
      };
      expect(sessions.sessions.some((s) => s.status === "paused" && s.step >= 200)).toBe(true);
    }, 60_000);
  });
});
