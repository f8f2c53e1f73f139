/**
 * A probe script run as its own process, bundled by esbuild the way the server's worker is
 * (vitest's module transform turns each imported binding into a getter call, whose boxing
 * an allocation count would measure instead of the engine's), with V8's gc() exposed
 * (node --expose-gc) and MOREAU_ROOT set to the repository's root. Returns the JSON the
 * probe prints on stdout.
 */
import { execFileSync } from "node:child_process";
import { build } from "esbuild";
import { ROOT } from "./process";

export async function runBundledProbe<T>(entry: string): Promise<T> {
  const bundle = await build({
    entryPoints: [entry],
    bundle: true,
    platform: "node",
    format: "esm",
    write: false,
    logLevel: "warning",
  });
  return JSON.parse(
    execFileSync(process.execPath, ["--expose-gc", "--input-type=module"], {
      input: bundle.outputFiles[0].text,
      encoding: "utf8",
      env: { ...process.env, MOREAU_ROOT: ROOT },
    }),
  ) as T;
}
