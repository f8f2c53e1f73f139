/**
 * Server processes restarted over one DATA_DIR of a test file's own (persistence across
 * crashes and restarts): the directory, a spawn on it, a crash (SIGKILL, its exit checked);
 * every process killed and the directory removed after the file.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, expect } from "vitest";
import { type ServerProcess, type SpawnServerOptions, spawnServer } from "./process";

export function dataDirServers(prefix: string) {
  const dataDir = mkdtempSync(join(tmpdir(), prefix));
  const servers: ServerProcess[] = [];
  afterAll(() => {
    for (const s of servers) s.kill();
    rmSync(dataDir, { recursive: true, force: true });
  });
  return {
    dataDir,
    /** A server on the directory, with `env` beside DATA_DIR. */
    async spawn(env: Record<string, string>, options?: SpawnServerOptions): Promise<ServerProcess> {
      const s = await spawnServer({ DATA_DIR: dataDir, ...env }, options);
      servers.push(s);
      return s;
    },
    /** SIGKILL, at once (the caller has just read the last answer). */
    async crash(s: ServerProcess): Promise<void> {
      s.kill();
      expect(await s.exited).toBe(null);
    },
  };
}
