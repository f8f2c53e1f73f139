/**
 * The browser bundle of the client: src/client/index.ts bundled by esbuild into one ES
 * module (the dashboard imports it from /client.js: src/server/client-bundle.ts), with two
 * modules substituted:
 * - `ws` → browser/websocket.ts, the browser's own WebSocket (stream.ts drives both through
 *   the WHATWG interface);
 * - answers.ts → browser/answers.ts, no answer schemas: zod and schemas/ would make up
 *   most of the bundle, and the page does not validate answers.
 * msgpackr's decoder is bundled (msgpackr/unpack, a few tens of kB), so `format: "msgpack"`
 * streams work in the page too.
 *
 * esbuild is a dev dependency: `npm run build` writes the bundle to dist/client.js
 * (browser/build.ts) for the production server, and a server run from source builds it in
 * memory (src/server/client-bundle.ts). Nothing here is imported by the client itself.
 */
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import type { BuildOptions, Plugin } from "esbuild";

const BROWSER_DIR = dirname(fileURLToPath(import.meta.url));
const CLIENT_DIR = dirname(BROWSER_DIR);

/** What the first line of the bundle says about it. */
export const BUNDLE_BANNER =
  "// The Moreau API client for the browser: src/client bundled by esbuild (src/client/browser/bundle.ts). Generated: do not edit.";

/** Resolves `ws` and the client's answers.ts to their browser stand-ins. */
const browserStandIns: Plugin = {
  name: "moreau-browser-stand-ins",
  setup(build) {
    build.onResolve({ filter: /^ws$/ }, () => ({ path: join(BROWSER_DIR, "websocket.ts") }));
    build.onResolve({ filter: /^\.\/answers$/ }, (args) =>
      dirname(args.importer) === CLIENT_DIR ? { path: join(BROWSER_DIR, "answers.ts") } : undefined,
    );
  },
};

/** The esbuild options of the bundle (one definition for the build script and the server). */
export const bundleOptions: BuildOptions = {
  entryPoints: [join(CLIENT_DIR, "index.ts")],
  // the repository: the paths the bundle's comments name are relative to it
  absWorkingDir: dirname(dirname(CLIENT_DIR)),
  bundle: true,
  platform: "browser",
  format: "esm",
  target: "es2022",
  plugins: [browserStandIns],
  banner: { js: BUNDLE_BANNER },
  legalComments: "none",
  logLevel: "silent",
  write: false,
};

/** Builds the bundle; its JavaScript text. */
export async function bundleClient(): Promise<string> {
  // imported here, not at the top: a production install has no esbuild
  const esbuild = await import("esbuild");
  const out = await esbuild.build({ ...bundleOptions, write: false });
  const file = out.outputFiles?.[0];
  if (!file) throw new Error("esbuild produced no output for the client bundle");
  return file.text;
}
