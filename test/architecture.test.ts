/**
 * The engine's layering (issue 27): the folders of src/engine are stages in one dependency
 * order, and no file imports from a later stage than its own. The service (src/server,
 * src/cli, src/client) uses the engine only through its public entry, src/engine/index.ts;
 * the client (a library for remote users) knows nothing of the engine or the server.
 * src/formats (file formats turned into models: URDF) is a library of the service: the
 * server and the command line use it, and it imports nothing of src/ but itself (its
 * output is a model of schemas/, which the engine then loads).
 *
 *   math → solvers (linear algebra, nonsmooth kernels) → geometry (collision) → model
 *   (bodies, inertias, the state codec) → forces → constraints → dynamics (the step's
 *   interfaces: the Newton stepper, the one-step nonsmooth problem) → actuators, contact →
 *   integrators → analysis → simulation (build and step) → src/engine/index.ts
 *
 * Tests mirror the engine's files (MuJoCo's engine_<stage>.c ↔ engine_<stage>_test.cc):
 * src/engine/<stage>/<file>.ts is tested by test/engine/<stage>/<file>.test.ts, unless it
 * holds no code to run (only types, interfaces and re-exports).
 *
 * schemas/ is the single source of the wire format and sits below all of it: the engine and
 * the service import schemas (for types, constants and validity checks such as
 * schemas/cost.ts), never the reverse, so no file under schemas/ imports from src/.
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { transformSync } from "esbuild";
import { describe, expect, it } from "vitest";

const SRC = resolve(import.meta.dirname, "../src");
const SCHEMAS = resolve(import.meta.dirname, "../schemas");

/** Engine stages in dependency order; folders on one line may not import each other. */
const STAGES: string[][] = [
  ["math"],
  ["solvers"],
  ["geometry"],
  ["model"],
  ["forces"],
  ["constraints"],
  ["dynamics"],
  ["actuators", "contact"],
  ["integrators"],
  ["analysis"],
  ["simulation"],
  ["index.ts"],
];
const SERVICE = ["server", "cli", "client"];
const FORMATS = "formats";

/**
 * The stage key of a file under src/: its folder under src/engine, or index.ts for the
 * engine's entry; a service file's folder under src/.
 */
function keyOf(file: string): string {
  const rel = relative(SRC, file).split("/");
  if (rel[0] !== "engine") return rel[0];
  return rel.length === 2 ? "index.ts" : rel[1];
}

function rankOf(key: string): number {
  return STAGES.findIndex((s) => s.includes(key));
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) return sourceFiles(p);
    return p.endsWith(".ts") ? [p] : [];
  });
}

/** Relative import specifiers of a file (static, re-exports and dynamic imports). */
function importsOf(file: string): string[] {
  const text = readFileSync(file, "utf8");
  const out: string[] = [];
  for (const m of text.matchAll(/(?:from|import)\s*\(?\s*"(\.[^"]+)"/g)) out.push(m[1]);
  return out;
}

/** The file an import resolves to (a folder means its index.ts). */
function target(from: string, spec: string): string {
  const p = resolve(dirname(from), spec);
  try {
    if (statSync(p).isDirectory()) return join(p, "index.ts");
  } catch {
    // not a folder: a module path without its extension
  }
  return p.endsWith(".ts") ? p : `${p}.ts`;
}

const files = sourceFiles(SRC);
const edges = files.flatMap((f) =>
  importsOf(f).map((spec) => ({ from: f, spec, to: target(f, spec) })),
);
const within = (p: string) => p.startsWith(`${SRC}/`);
const show = (e: { from: string; spec: string }) => `${relative(SRC, e.from)} → "${e.spec}"`;

describe("engine layering", () => {
  it("every engine folder has a stage", () => {
    expect(edges.length).toBeGreaterThan(300);
    const keys = new Set(files.map(keyOf).filter((k) => !SERVICE.includes(k) && k !== FORMATS));
    expect([...keys].filter((k) => rankOf(k) < 0)).toEqual([]);
  });

  it("no engine file imports from a later stage (or a sibling of its stage)", () => {
    const backward = edges.filter((e) => {
      const a = keyOf(e.from);
      if (SERVICE.includes(a) || a === FORMATS || !within(e.to)) return false;
      const b = keyOf(e.to);
      if (a === b) return false;
      if (SERVICE.includes(b) || b === FORMATS) return true;
      return rankOf(b) >= rankOf(a);
    });
    expect(backward.map(show)).toEqual([]);
  });

  it("the service uses the engine only through src/engine/index.ts; the client not at all", () => {
    const wrong = edges.filter((e) => {
      const a = keyOf(e.from);
      if (!SERVICE.includes(a) || !within(e.to)) return false;
      const b = keyOf(e.to);
      if (SERVICE.includes(b)) return a === "client" ? b !== "client" : false;
      if (b === FORMATS) return a === "client";
      return a === "client" || b !== "index.ts";
    });
    expect(wrong.map(show)).toEqual([]);
  });

  it("src/formats imports nothing of src/ but itself", () => {
    const wrong = edges.filter(
      (e) => keyOf(e.from) === FORMATS && within(e.to) && keyOf(e.to) !== FORMATS,
    );
    expect(edges.some((e) => keyOf(e.from) === FORMATS)).toBe(true);
    expect(wrong.map(show)).toEqual([]);
  });

  it("the rule sees a backward import", () => {
    // the checker itself: a constraint file importing the integrators would be caught
    const a = keyOf(join(SRC, "engine/constraints/x.ts"));
    const b = keyOf(join(SRC, "engine/integrators/y.ts"));
    expect(rankOf(b)).toBeGreaterThan(rankOf(a));
    expect(keyOf(join(SRC, "engine/index.ts"))).toBe("index.ts");
    expect(keyOf(join(SRC, "server/app.ts"))).toBe("server");
    expect(rankOf("geometry")).toBeLessThan(rankOf("contact"));
  });
});

describe("schemas layering", () => {
  const schemaEdges = sourceFiles(SCHEMAS).flatMap((f) =>
    importsOf(f).map((spec) => ({ from: f, spec, to: target(f, spec) })),
  );

  it("no file under schemas/ imports from src/", () => {
    expect(schemaEdges.length).toBeGreaterThan(10);
    const wrong = schemaEdges.filter((e) => within(e.to));
    expect(wrong.map((e) => `schemas/${relative(SCHEMAS, e.from)} → "${e.spec}"`)).toEqual([]);
  });

  it("the rule sees an import of the engine", () => {
    // the checker itself: schemas/model.ts importing the monitor would be caught
    const from = join(SCHEMAS, "model.ts");
    expect(within(target(from, "../src/engine/simulation/monitor"))).toBe(true);
    expect(within(target(from, "./energy"))).toBe(false);
  });
});

/**
 * True when a source file has no code to run: what is left of it as JavaScript (esbuild
 * strips the types, interfaces and type-only imports) is at most imports and exports of
 * names (re-exports: esbuild writes `export { a } from "./x"` as an import and an export
 * list).
 */
function declaresOnly(file: string): boolean {
  const { code } = transformSync(readFileSync(file, "utf8"), { loader: "ts", format: "esm" });
  const statements = code
    .replace(/export\s*(\*|\{[^}]*\})\s*from\s*"[^"]*";/g, "")
    .replace(/export\s*\{[^}]*\};?/g, "")
    .replace(/import\s*(\{[^}]*\}|[\w*\s]+)\s*from\s*"[^"]*";/g, "");
  return statements.trim() === "";
}

describe("tests mirror the engine's files", () => {
  const ENGINE = join(SRC, "engine");
  const TESTS = resolve(import.meta.dirname, "engine");
  const engineFiles = sourceFiles(ENGINE);
  const mirror = (f: string) => join(TESTS, relative(ENGINE, f)).replace(/\.ts$/, ".test.ts");
  const exists = (p: string) => {
    try {
      return statSync(p).isFile();
    } catch {
      return false;
    }
  };

  it("every engine file with code has its test file at the same path under test/engine", () => {
    expect(engineFiles.length).toBeGreaterThan(150);
    const missing = engineFiles.filter((f) => !declaresOnly(f) && !exists(mirror(f)));
    expect(missing.map((f) => relative(SRC, f))).toEqual([]);
  });

  it("the rule tells declarations from code", () => {
    // constraints/constraint.ts declares the Constraint interface only; geometry/index.ts
    // re-exports; math/vec3.ts has functions
    expect(declaresOnly(join(ENGINE, "constraints/constraint.ts"))).toBe(true);
    expect(declaresOnly(join(ENGINE, "geometry/index.ts"))).toBe(true);
    expect(declaresOnly(join(ENGINE, "math/vec3.ts"))).toBe(false);
  });
});
