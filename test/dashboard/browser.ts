/**
 * Headless Debian Chromium (/usr/bin/chromium) driven by playwright-core for the
 * dashboard tests (WebGL through SwiftShader, no GPU), with a server of the given
 * configuration on an ephemeral 127.0.0.1 port.
 */
import { mkdtempSync, rmSync } from "node:fs";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type BrowserContext, chromium, type Page } from "playwright-core";
import { buildApp, type MoreauApp } from "../../src/server/app";
import type { ConfigInput } from "../../src/server/config";

const CHROMIUM_ARGS = [
  "--headless",
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

export interface DashboardHarness {
  app: MoreauApp;
  base: string;
  context: BrowserContext;
  page: Page;
  userDataDir: string;
  /** Uncaught errors of the page. */
  pageErrors: string[];
  /** Evaluates an expression over `d = window.moreauDashboard` in the page. */
  dash<T>(expr: string): Promise<T>;
  /** Waits until an expression over `d` is truthy. */
  waitDash(cond: string, timeout?: number): Promise<void>;
  close(): Promise<void>;
}

export async function startDashboard(config: ConfigInput = {}): Promise<DashboardHarness> {
  const app = await buildApp({ workers: 1, logLevel: "silent", ...config });
  await app.listen({ port: 0, host: "127.0.0.1" });
  const base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
  const userDataDir = mkdtempSync(join(tmpdir(), "moreau-chromium-"));
  const context = await chromium.launchPersistentContext(userDataDir, {
    executablePath: "/usr/bin/chromium",
    headless: true,
    args: CHROMIUM_ARGS,
    viewport: { width: 1200, height: 720 },
  });
  const page = context.pages()[0] ?? (await context.newPage());
  page.setDefaultTimeout(10_000);
  const pageErrors: string[] = [];
  page.on("pageerror", (e) => pageErrors.push(e.message));
  return {
    app,
    base,
    context,
    page,
    userDataDir,
    pageErrors,
    dash: <T>(expr: string) =>
      page.evaluate(
        `(() => { const d = window.moreauDashboard; return ${expr}; })()`,
      ) as Promise<T>,
    async waitDash(cond: string, timeout = 10_000) {
      await page.waitForFunction(
        `(() => { const d = window.moreauDashboard; return ${cond}; })()`,
        null,
        { timeout, polling: 50 },
      );
    },
    async close() {
      await context.close();
      await app.close();
      rmSync(userDataDir, { recursive: true, force: true });
    },
  };
}
