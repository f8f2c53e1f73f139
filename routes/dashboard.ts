/**
 * The live dashboard at GET / and its assets, served by the server itself (no build step
 * and no separate server at run time):
 * - public/ (index.html, the page's ES modules and CSS) by @fastify/static, one route per
 *   file found at start-up (wildcard: false, so unknown paths still reach the service's
 *   JSON 404 handler);
 * - the browser builds of three.js and uPlot straight from node_modules under /vendor/
 *   (the page's import map names them): only the files the page imports are exposed;
 * - the model files of examples/ under /examples/<name>.json, and their list at
 *   GET /examples (`{ examples: [{ id, name, file, bodies, joints, forces, contact,
 *   integrator }] }`) for the dashboard's model picker.
 * These routes are hidden from the OpenAPI document (they are not part of API v1) and are
 * public when access control is on (they hold no data; the page asks for a key and sends
 * it with its API calls and stream: src/server/auth.ts).
 */
import { readdirSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import fastifyStatic from "@fastify/static";
import type { FastifyPluginAsync } from "fastify";

const here = dirname(fileURLToPath(import.meta.url));
export const PUBLIC_DIR = resolve(here, "../public");
export const EXAMPLES_DIR = resolve(here, "../examples");

const require = createRequire(import.meta.url);
/** node_modules/three/build (the package's `require` entry is build/three.cjs) */
const THREE_BUILD = dirname(require.resolve("three"));
const THREE_ADDONS = resolve(THREE_BUILD, "../examples/jsm");
/** node_modules/uplot/dist (main: dist/uPlot.cjs.js) */
const UPLOT_DIST = dirname(require.resolve("uplot"));

/** URL path under /vendor/ → [directory, file] */
export const VENDOR_FILES: Record<string, [string, string]> = {
  "three/three.module.js": [THREE_BUILD, "three.module.js"],
  "three/three.core.js": [THREE_BUILD, "three.core.js"],
  "three/addons/controls/OrbitControls.js": [THREE_ADDONS, "controls/OrbitControls.js"],
  // convex shapes: the hull of their points, drawn by three's ConvexGeometry
  "three/addons/geometries/ConvexGeometry.js": [THREE_ADDONS, "geometries/ConvexGeometry.js"],
  "three/addons/math/ConvexHull.js": [THREE_ADDONS, "math/ConvexHull.js"],
  "uplot/uPlot.esm.js": [UPLOT_DIST, "uPlot.esm.js"],
  "uplot/uPlot.min.css": [UPLOT_DIST, "uPlot.min.css"],
};

export interface ExampleEntry {
  id: string;
  name: string;
  file: string;
  bodies: number;
  joints: number;
  forces: number;
  contact: string | null;
  integrator: string;
}

/** The examples found in examples/ (read once at start-up; unreadable files are skipped). */
export function listExamples(dir = EXAMPLES_DIR): ExampleEntry[] {
  let files: string[];
  try {
    files = readdirSync(dir).filter((f) => f.endsWith(".json"));
  } catch {
    return [];
  }
  const out: ExampleEntry[] = [];
  for (const f of files.sort()) {
    try {
      const m = JSON.parse(readFileSync(join(dir, f), "utf8")) as {
        name?: string;
        bodies?: unknown[];
        joints?: unknown[];
        forces?: unknown[];
        contact?: { method?: string };
        solver?: { integrator?: string };
      };
      out.push({
        id: f.slice(0, -5),
        name: m.name ?? f.slice(0, -5),
        file: `/examples/${f}`,
        bodies: m.bodies?.length ?? 0,
        joints: m.joints?.length ?? 0,
        forces: m.forces?.length ?? 0,
        contact: m.contact ? (m.contact.method ?? "nsc") : null,
        integrator: m.solver?.integrator ?? "moreau-jean",
      });
    } catch {
      // not a model file: not listed
    }
  }
  return out;
}

const dashboard: FastifyPluginAsync = async (app) => {
  // every route of this plugin (and of @fastify/static inside it) is public
  app.addHook("onRoute", (route) => {
    route.config = { ...route.config, public: true };
  });
  await app.register(fastifyStatic, {
    root: PUBLIC_DIR,
    prefix: "/",
    wildcard: false,
    index: "index.html",
    cacheControl: true,
    maxAge: 0,
  });

  for (const [path, [dir, file]] of Object.entries(VENDOR_FILES))
    app.get(`/vendor/${path}`, { schema: { hide: true } }, (_req, reply) =>
      reply.header("cache-control", "public, max-age=86400").sendFile(file, dir),
    );

  const examples = listExamples();
  const byFile = new Map(examples.map((e) => [e.file.slice("/examples/".length), e]));
  app.get("/examples", { schema: { hide: true } }, async () => ({ examples }));
  app.get<{ Params: { file: string } }>(
    "/examples/:file",
    { schema: { hide: true } },
    (req, reply) => {
      if (!byFile.has(req.params.file)) return reply.callNotFound();
      return reply.type("application/json; charset=utf-8").sendFile(req.params.file, EXAMPLES_DIR);
    },
  );
};

export default dashboard;
