/**
 * The OpenAPI document (GET /docs/json, issue 26 item 12): the bearer security scheme,
 * required on every operation but /health and /ready; a server; a unique operationId on
 * every operation; and `@redocly/cli lint` (its recommended rules) finds no error in it.
 */
import { execFile } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { MoreauApp } from "../../src/server/app";
import { startApp } from "../support/server";

const run = promisify(execFile);
const REDOCLY = createRequire(import.meta.url).resolve("@redocly/cli/bin/cli.js");

interface Operation {
  operationId?: string;
  security?: Record<string, string[]>[];
  responses?: Record<string, unknown>;
}
interface OpenApi {
  openapi: string;
  servers?: { url: string }[];
  security?: Record<string, string[]>[];
  components: { securitySchemes?: Record<string, { type: string; scheme?: string }> };
  paths: Record<string, Record<string, Operation>>;
}

let app: MoreauApp;
let doc: OpenApi;
const dir = mkdtempSync(join(tmpdir(), "moreau-openapi-"));
beforeAll(async () => {
  app = await startApp({ apiKeys: ["a-key-of-the-server"] });
  const r = await app.inject({
    method: "GET",
    url: "/docs/json",
    headers: { authorization: "Bearer a-key-of-the-server" },
  });
  expect(r.statusCode).toBe(200);
  doc = r.json() as OpenApi;
});
afterAll(async () => {
  await app?.close();
  rmSync(dir, { recursive: true, force: true });
});

const operations = () =>
  Object.entries(doc.paths).flatMap(([path, ops]) =>
    Object.entries(ops).map(([method, op]) => ({ path, method, op })),
  );

describe("the OpenAPI document", () => {
  it("declares the bearer scheme, required but on /health and /ready, and a server", () => {
    expect(doc.components.securitySchemes?.bearerAuth).toMatchObject({
      type: "http",
      scheme: "bearer",
    });
    expect(doc.security).toEqual([{ bearerAuth: [] }]);
    expect(doc.servers?.length).toBeGreaterThan(0);
    for (const { path, op } of operations()) {
      if (path === "/health" || path === "/ready") expect(op.security, path).toEqual([]);
      else expect(op.security, path).toBeUndefined(); // the document's: bearer
    }
  });

  it("names every operation with a unique operationId", () => {
    const ops = operations();
    expect(ops.length).toBeGreaterThanOrEqual(19);
    const ids = ops.map(({ path, method, op }) => op.operationId ?? `(none: ${method} ${path})`);
    expect(ids.filter((id) => id.startsWith("(none"))).toEqual([]);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it("passes `redocly lint` with no error", async () => {
    const file = join(dir, "openapi.json");
    writeFileSync(file, JSON.stringify(doc));
    const out = await run(process.execPath, [REDOCLY, "lint", file, "--format=json"], {
      env: {
        PATH: process.env.PATH,
        HOME: process.env.HOME,
        REDOCLY_TELEMETRY: "off",
        REDOCLY_SUPPRESS_UPDATE_NOTICE: "true",
      },
      timeout: 30_000,
    }).catch((err: { stdout?: string; message: string }) => {
      // exits 1 on errors: its report is still on stdout
      if (err.stdout) return { stdout: err.stdout };
      throw err;
    });
    const report = JSON.parse(out.stdout) as {
      totals: { errors: number; warnings: number };
      problems: {
        ruleId: string;
        severity: string;
        message: string;
        location: { pointer: string }[];
      }[];
    };
    const errors = report.problems
      .filter((p) => p.severity === "error")
      .map((p) => `${p.ruleId} ${p.location[0]?.pointer}: ${p.message}`);
    expect(errors).toEqual([]);
    expect(report.totals.errors).toBe(0);
  }, 40_000);
});
