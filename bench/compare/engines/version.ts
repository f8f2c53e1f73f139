/** The installed version of a package, read from node_modules (exports maps hide package.json). */
import { readFileSync } from "node:fs";

export function packageVersion(name: string): string {
  try {
    const url = new URL(`../../../node_modules/${name}/package.json`, import.meta.url);
    const pkg = JSON.parse(readFileSync(url, "utf8")) as { version?: string };
    return `${name} ${pkg.version ?? "?"}`;
  } catch {
    return `${name} (version unknown)`;
  }
}
