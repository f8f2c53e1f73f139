/**
 * Headless Chromium (Debian's /usr/bin/chromium through playwright-core) for the dashboard
 * test files of a run (vitest.config.ts, project "dashboard"): one browser server per test
 * worker (maxWorkers), launched before the first file, their WebSocket endpoints provided
 * to the files (inject("chromiumWsEndpoints")), closed after the last. A file connects to
 * its worker's browser (VITEST_POOL_ID) and opens a context of its own (its own storage
 * and cookies: browser.ts), so the files share the browsers' start-up (2 to 4 s of a loaded
 * machine's time each) and nothing else: two files running at once draw in two browsers,
 * as before, not in one GPU process (SwiftShader renders on the CPU, page by page).
 */
import { chromium } from "playwright-core";
import type { TestProject } from "vitest/node";

/** WebGL through SwiftShader (no GPU); nothing contacted but the test's server. */
const CHROMIUM_ARGS = [
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
  "--use-gl=angle",
  "--use-angle=swiftshader",
  "--enable-unsafe-swiftshader",
];

declare module "vitest" {
  export interface ProvidedContext {
    chromiumWsEndpoints: string[];
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const workers = Number(project.globalConfig.maxWorkers) || 1;
  const servers = await Promise.all(
    Array.from({ length: workers }, () =>
      chromium.launchServer({
        executablePath: "/usr/bin/chromium",
        headless: true,
        args: CHROMIUM_ARGS,
      }),
    ),
  );
  project.provide(
    "chromiumWsEndpoints",
    servers.map((s) => s.wsEndpoint()),
  );
  return async () => {
    await Promise.all(servers.map((s) => s.close()));
  };
}
