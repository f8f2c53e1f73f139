/**
 * `npm run build`'s step for the browser bundle of the client: writes it to the file named
 * by the first argument (package.json: dist/client.js, beside the built server, which
 * serves it at /client.js: src/server/client-bundle.ts).
 *
 *   tsx src/client/browser/build.ts dist/client.js
 */
import { mkdir, writeFile } from "node:fs/promises";
import { dirname } from "node:path";
import { bundleClient } from "./bundle";

const out = process.argv[2];
if (!out) {
  console.error("usage: tsx src/client/browser/build.ts <output file>");
  process.exit(2);
}
await mkdir(dirname(out), { recursive: true });
await writeFile(out, await bundleClient());
