/**
 * An in-process server for the tests that talk to it over real sockets (the command line
 * against --server, the dashboard in Chromium): buildApp with one worker and quiet logs,
 * listening on an ephemeral 127.0.0.1 port. (Tests that only need requests use supertest on
 * an app that is not listening, test/api/helpers.ts startApp; tests of the server process
 * spawn it, bench/server-load.ts startServer.)
 */
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll } from "vitest";
import { buildApp, type MoreauApp } from "../../src/server/app";
import type { ConfigInput } from "../../src/server/config";

export interface TestServer {
  app: MoreauApp;
  /** http://127.0.0.1:<port>, no trailing slash. */
  url: string;
  port: number;
}

/** Builds the app with `config` over the test defaults and starts listening. */
export async function startServer(config: ConfigInput = {}): Promise<TestServer> {
  const app = await buildApp({ workers: 1, logLevel: "silent", ...config });
  await app.listen({ port: 0, host: "127.0.0.1" });
  const { port } = app.server.address() as AddressInfo;
  return { app, url: `http://127.0.0.1:${port}`, port };
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
    get port() {
      return running().port;
    },
  };
}
