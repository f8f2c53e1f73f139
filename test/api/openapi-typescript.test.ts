/**
 * The OpenAPI document (GET /docs/json) with a common generator: openapi-typescript turns it
 * into TypeScript types, and every examples/*.json model type-checks (tsc, strict) as the
 * create-session request body, leaving out what has a default.
 *
 * openapi-typescript 7 needs TypeScript 5's compiler API (a peer dependency), which this
 * repository's TypeScript 7 does not have, so 6.7.6 is pinned. It is run with
 * defaultNonNullable: true, the default of version 7: a property with a `default` in a
 * component is then typed as always present (the request schemas carry their defaults in
 * their descriptions for that reason, routes/docs.ts).
 */
import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { promisify } from "node:util";
import openapiTS, { type OpenAPI3 } from "openapi-typescript";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { MoreauApp } from "../../src/server/app";
import { EXAMPLES_DIR, exampleFiles } from "../support/examples";
import { startApp } from "../support/server";

const run = promisify(execFile);
const TSC = join(
  dirname(createRequire(import.meta.url).resolve("typescript/package.json")),
  "bin/tsc",
);

let app: MoreauApp;
let doc: OpenAPI3;
const dir = mkdtempSync(join(tmpdir(), "moreau-openapi-ts-"));
beforeAll(async () => {
  app = await startApp();
  const r = await app.inject({ method: "GET", url: "/docs/json" });
  expect(r.statusCode).toBe(200);
  doc = r.json() as OpenAPI3;
});
afterAll(async () => {
  await app?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** A TypeScript module typing each example, written as a literal, as a create-session body. */
function examplesModule(): string {
  const lines = [
    `import type { paths } from "./openapi";`,
    `type CreateSession = paths["/v1/sessions"]["post"]["requestBody"]["content"]["application/json"];`,
    `type Created = paths["/v1/sessions"]["post"]["responses"]["201"]["content"]["application/json"];`,
  ];
  const files = exampleFiles();
  expect(files.length).toBeGreaterThanOrEqual(10);
  for (const [i, f] of files.sort().entries())
    lines.push(
      `// ${f}`,
      `export const example${i}: CreateSession = { model: ${readFileSync(join(EXAMPLES_DIR, f), "utf8")} };`,
    );
  // the types are not `any`: wrong and missing fields are errors, answers are typed
  lines.push(
    "// @ts-expect-error a mass is a number",
    `export const wrongType: CreateSession = { model: { bodies: [{ id: "a", mass: "heavy" }] } };`,
    "// @ts-expect-error a model needs bodies",
    "export const noBodies: CreateSession = { model: {} };",
    "export const sessionId = (s: Created): string => s.id;",
  );
  return `${lines.join("\n")}\n`;
}

describe("openapi-typescript", () => {
  it("types every example model as a create-session request body", async () => {
    writeFileSync(join(dir, "openapi.d.ts"), await openapiTS(doc, { defaultNonNullable: true }));
    writeFileSync(join(dir, "examples.ts"), examplesModule());
    writeFileSync(
      join(dir, "tsconfig.json"),
      JSON.stringify({
        compilerOptions: {
          strict: true,
          noEmit: true,
          target: "ES2022",
          module: "preserve",
          moduleResolution: "bundler",
          types: [],
        },
        files: ["examples.ts"],
      }),
    );
    const out = await run(process.execPath, [TSC, "-p", dir], { timeout: 30_000 }).catch(
      (err: { stdout?: string; message: string }) => ({ stdout: err.stdout ?? err.message }),
    );
    expect(out.stdout.split("\n").filter((l) => l.includes("error TS"))).toEqual([]);
  }, 20_000);
});
