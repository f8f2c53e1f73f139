/**
 * GET /client.js: the dashboard's API client, which is the browser bundle of src/client
 * (src/client/browser/bundle.ts), public like the dashboard's other assets
 * (routes/dashboard.ts: they hold no data).
 *
 * Where the bundle comes from: the built server (dist/main.js) serves dist/client.js beside
 * it, which `npm run build` writes (a production install has no esbuild to build it); a
 * server run from source (this module is TypeScript: tsx, vitest) builds it in memory with
 * esbuild at the first request, once per process, so tests and development need no build
 * step. Either way the text is read or built once and kept; a failure is answered 500 and
 * tried again at the next request.
 */
import { readFile } from "node:fs/promises";
import type { FastifyInstance } from "fastify";
import { ApiError } from "./errors";

/** Run from source (tsx, vitest) rather than from dist/. */
const FROM_SOURCE = import.meta.url.endsWith(".ts");
/** dist/client.js, beside the built server dist/main.js (package.json "build") */
const BUILT = new URL("./client.js", import.meta.url);

let bundle: Promise<string> | null = null;

/** The bundle's JavaScript text (built or read once per process). */
export function clientBundle(): Promise<string> {
  if (bundle) return bundle;
  const p = FROM_SOURCE
    ? import("../client/browser/bundle").then((m) => m.bundleClient())
    : readFile(BUILT, "utf8");
  bundle = p;
  p.catch(() => {
    if (bundle === p) bundle = null;
  });
  return p;
}

/** Registers GET /client.js (hidden from the OpenAPI document, public with API keys). */
export function registerClientBundle(app: FastifyInstance): void {
  app.get(
    "/client.js",
    { schema: { hide: true }, config: { public: true } },
    async (_req, reply) => {
      let text: string;
      try {
        text = await clientBundle();
      } catch (err) {
        throw new ApiError(
          "internal",
          FROM_SOURCE
            ? `the browser bundle of the client could not be built: ${(err as Error).message}`
            : `the browser bundle of the client is missing (${BUILT.pathname}): npm run build writes it`,
        );
      }
      return reply
        .type("text/javascript; charset=utf-8")
        .header("cache-control", "no-cache")
        .send(text);
    },
  );
}
