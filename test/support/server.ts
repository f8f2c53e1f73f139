/**
 * The server in process, for the tests: buildApp with one worker and quiet logs (the
 * test's configuration over these defaults).
 * - startApp: built and ready, not listening (supertest and app.inject need no port);
 * - startServer: listening on an ephemeral 127.0.0.1 port, for what talks to it over real
 *   sockets (WebSocket streams, the client, the command line, Chromium);
 * - useServer: one listening server for a test file or describe block.
 * The server as its own process (`npm start`, the compiled server, the benchmarks) is
 * process.ts.
 */
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll } from "vitest";
import { buildApp, type MoreauApp } from "../../src/server/app";
import type { ConfigInput } from "../../src/server/config";

export interface TestServer {
  app: MoreauApp;
  /** http://127.0.0.1:<port>, no trailing slash. */
  url: string;
  /** ws://127.0.0.1:<port>, no trailing slash. */
  ws: string;
  port: number;
}

/** Builds the app with `config` over the test defaults; ready, not listening. */
export async function startApp(config: ConfigInput = {}): Promise<MoreauApp> {
  const app = await buildApp({ workers: 1, logLevel: "silent", ...config });
  await app.ready();
  return app;
}

/** Listens on an ephemeral port of 127.0.0.1; returns the port. */
async function listen(app: MoreauApp): Promise<number> {
  await app.listen({ port: 0, host: "127.0.0.1" });
  return (app.server.address() as AddressInfo).port;
}

/** Builds the app with `config` over the test defaults and starts listening. */
export async function startServer(config: ConfigInput = {}): Promise<TestServer> {
  const app = await startApp(config);
  const port = await listen(app);
  return { app, url: `http://127.0.0.1:${port}`, ws: `ws://127.0.0.1:${port}`, port };
}

/**
 * One server for the file (or the describe block) it is called in: started in beforeAll,
 * closed in afterAll. The fields read the running server, so read them in tests and hooks,
 * not when the file is collected.
 */
export function useServer(config: ConfigInput = {}): Readonly<TestServer> {
  let server: TestServer | undefined;
  beforeAll(async () => {
    server = await startServer(config);
  });
  afterAll(async () => {
    await server?.app.close();
  });
  const running = (): TestServer => {
    if (!server) throw new Error("useServer: the server is not started (read it inside a test)");
    return server;
  };
  return {
    get app() {
      return running().app;
    },
    get url() {
      return running().url;
    },
    get ws() {
      return running().ws;
    },
    get port() {
      return running().port;
    },
  };
}
