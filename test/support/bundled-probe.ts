/**
 * A probe script run as its own process, bundled by esbuild the way the server's worker is
 * (vitest's module transform turns each imported binding into a getter call, whose boxing
 * an allocation count would measure instead of the engine's), with V8's gc() exposed
 * (node --expose-gc) and MOREAU_ROOT set to the repository's root. Returns the JSON the
 * probe prints on stdout.
 *
 * Optimized code is installed when it is compiled (--no-concurrent-recompilation), not when
 * a background thread finishes it: otherwise how long the warm-up runs in unoptimized code,
 * which boxes the doubles it passes around, depends on the machine's load, and so does the
 * count (a clean-clone CI run once measured 4.7 KB a step where an idle machine measures
 * 0.5–1.9 KB).
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
    execFileSync(
      process.execPath,
      ["--expose-gc", "--no-concurrent-recompilation", "--input-type=module"],
      {
        input: bundle.outputFiles[0].text,
        encoding: "utf8",
        env: { ...process.env, MOREAU_ROOT: ROOT },
      },
    ),
  ) as T;
}
