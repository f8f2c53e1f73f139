/**
 * The dashboard tests' harness: a server of the given configuration on an ephemeral
 * 127.0.0.1 port (test/support/server.ts) and a browser context of its own in its test
 * worker's headless Chromium (global-setup.ts: Debian's /usr/bin/chromium driven by
 * playwright-core, WebGL through SwiftShader, no GPU), one of each per test file
 * (useDashboard), with the page helpers every dashboard test needs.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Browser, type BrowserContext, chromium, type Page } from "playwright-core";
import { afterAll, beforeAll, inject } from "vitest";
import type { MoreauApp } from "../../src/server/app";
import type { ConfigInput } from "../../src/server/config";
import { startServer } from "../support/server";

/** What a started harness holds. */
interface Started {
  app: MoreauApp;
  base: string;
  browser: Browser;
  context: BrowserContext;
  page: Page;
  filesDir: string;
  pageErrors: string[];
}

export interface Dashboard {
  readonly app: MoreauApp;
  /** The server's http://127.0.0.1:<port>. */
  readonly base: string;
  readonly context: BrowserContext;
  readonly page: Page;
  /** A folder of the file's own (removed afterwards): a place for files to upload. */
  readonly filesDir: string;
  /** Uncaught errors of the page. */
  readonly pageErrors: string[];
  /** Evaluates an expression over `d = window.moreauDashboard` in the page. */
  dash<T>(expr: string): Promise<T>;
  /** Waits until an expression over `d` is truthy. */
  waitDash(cond: string, timeout?: number): Promise<void>;
  /** Loads the dashboard (GET /) and waits until it is ready (`body[data-ready=true]`). */
  open(): Promise<void>;
  /** POSTs `body` as JSON to the server's `path`. */
  post(path: string, body: unknown): Promise<Response>;
  /**
   * Creates a session from examples/<name>.json through the page (the example list, then
   * Create) and waits until its stream is open with its scene and a first state; returns
   * the new session's id.
   */
  createFromExample(name: string): Promise<string>;
}

async function start(config: ConfigInput): Promise<Started> {
  const { app, url } = await startServer(config);
  const filesDir = mkdtempSync(join(tmpdir(), "moreau-dashboard-"));
  let browser: Browser | undefined;
  try {
    // this test worker's browser (VITEST_POOL_ID counts the workers from 1)
    const endpoints = inject("chromiumWsEndpoints");
    if (!endpoints)
      throw new Error("no Chromium: list this file in vitest.config.ts DASHBOARD (its project)");
    const worker = Number(process.env.VITEST_POOL_ID ?? 1) - 1;
    browser = await chromium.connect(endpoints[worker % endpoints.length]);
    const context = await browser.newContext({ viewport: { width: 1200, height: 720 } });
    const page = await context.newPage();
    page.setDefaultTimeout(10_000);
    const pageErrors: string[] = [];
    page.on("pageerror", (e) => pageErrors.push(e.message));
    return { app, base: url, browser, context, page, filesDir, pageErrors };
  } catch (e) {
    // no browser: do not leave the server and the folder behind
    await browser?.close();
    await app.close();
    rmSync(filesDir, { recursive: true, force: true });
    throw e;
  }
}

async function stop(s: Started): Promise<void> {
  await s.context.close();
  // the connection only: the browser itself is the run's (global-setup.ts)
  await s.browser.close();
  await s.app.close();
  rmSync(s.filesDir, { recursive: true, force: true });
}

/**
 * The server (with `config` over the test defaults) and Chromium for the test file it is
 * called in: started in beforeAll, closed in afterAll. The fields (app, page, …) read the
 * running harness, so read them in tests and hooks, not when the file is collected; the
 * functions (dash, post, …) may be taken apart at any time.
 */
export function useDashboard(config: ConfigInput = {}): Dashboard {
  let started: Started | undefined;
  beforeAll(async () => {
    started = await start(config);
  });
  afterAll(async () => {
    if (started) await stop(started);
  });
  const s = (): Started => {
    if (!started) throw new Error("useDashboard: not started (read it inside a test)");
    return started;
  };
  const inPage = (expr: string) =>
    `(() => { const d = window.moreauDashboard; return ${expr}; })()`;
  const h: Dashboard = {
    get app() {
      return s().app;
    },
    get base() {
      return s().base;
    },
    get context() {
      return s().context;
    },
    get page() {
      return s().page;
    },
    get filesDir() {
      return s().filesDir;
    },
    get pageErrors() {
      return s().pageErrors;
    },
    dash: <T>(expr: string) => s().page.evaluate(inPage(expr)) as Promise<T>,
    async waitDash(cond, timeout = 10_000) {
      await s().page.waitForFunction(inPage(cond), null, { timeout, polling: 50 });
    },
    async open() {
      const { page, base } = s();
      await page.goto(`${base}/`);
      await page.waitForSelector("body[data-ready=true]", { timeout: 15_000 });
    },
    post: (path, body) =>
      fetch(`${s().base}${path}`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(body),
      }),
    async createFromExample(name) {
      const { page } = s();
      const before = await h.dash<string | null>("d.state.sessionId");
      await page.selectOption("#example-select", `/examples/${name}.json`);
      // the example is loaded into the model text (its name is written in it)
      await page.waitForFunction(
        (n) =>
          (document.getElementById("model-text") as HTMLTextAreaElement).value.includes(`"${n}"`),
        name,
      );
      await page.click("#create-btn");
      await h.waitDash(
        `d.state.sessionId && d.state.sessionId !== ${JSON.stringify(before)} && d.state.scenesReceived >= 1 && d.state.statesReceived >= 1 && d.streamStatus === 'open'`,
      );
      return h.dash<string>("d.state.sessionId");
    },
  };
  return h;
}
