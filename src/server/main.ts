/**
 * The server's entry. `npm start` builds it (esbuild, `npm run build`: dist/main.js and
 * the worker threads' dist/worker.js) and runs `node dist/main.js` — node itself, so that
 * SIGTERM reaches this process; the Docker image runs the same file. Reads the
 * configuration from the environment (src/server/config.ts), starts the workers and listens — a
 * worker that cannot start does not stop it: the server listens degraded (/ready 503 naming
 * the cause) while the pool retries the start (worker-pool.ts start). HOST
 * defaults to 127.0.0.1 (this machine only); set HOST=0.0.0.0 to listen on all interfaces
 * (containers).
 *
 * Without API_KEY / API_KEYS there is no access control: HOST still defaults to 127.0.0.1 and
 * the start-up line says so (and warns when HOST exposes such a server beyond this machine).
 * With DATA_DIR the start-up restores checkpointed sessions (logged) and shutdown
 * checkpoints every session.
 *
 * SIGTERM / SIGINT: graceful shutdown — stop accepting connections and sessions, close
 * streams with 1001, stop runs, checkpoint every session (first, with DATA_DIR), let
 * in-flight requests finish (an answer its client has stopped reading is dropped after
 * 1 s: app.ts); those still running SHUTDOWN_TIMEOUT_MS after the signal are answered 503
 * `shutting_down` (sessions/shutdown.ts); checkpoint again, stop the workers, exit 0. Only a
 * shutdown stuck FORCE_EXIT_GRACE_MS past SHUTDOWN_TIMEOUT_MS (a disk that hangs) exits 1.
 */
import { buildApp } from "./app";
import { ConfigError, loadConfig } from "./config";

/** How long past SHUTDOWN_TIMEOUT_MS the last checkpoints and the workers' stop may take. */
const FORCE_EXIT_GRACE_MS = 5000;

async function main(): Promise<void> {
  let config: ReturnType<typeof loadConfig>;
  try {
    config = loadConfig();
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`moreau: ${err.message}\n`);
      process.exit(2);
    }
    throw err;
  }
  const app = await buildApp(config);
  await app.listen({ port: config.port, host: config.host });
  const address = app.server.address();
  const port = typeof address === "object" && address ? address.port : config.port;
  const keys = config.apiKeys.length;
  const hostSet = Boolean(process.env.HOST?.trim());
  const local = ["127.0.0.1", "localhost", "::1"].includes(config.host);
  let where = `moreau listening on ${config.host}:${port}`;
  if (keys === 0)
    where += hostSet
      ? "; no API_KEY set: access control is off"
      : " (HOST not set: this machine only, since no API_KEY is set and access control is off; HOST=0.0.0.0 listens on all interfaces)";
  else where += `; access control on (${keys} API key${keys > 1 ? "s" : ""})`;
  app.log.info(
    {
      host: config.host,
      port,
      workers: config.workers,
      maxSessions: config.maxSessions,
      auth: keys > 0 ? "api-key" : "off",
      dataDir: config.dataDir || null,
      sessions: app.moreau.sessions.size,
      docs: `http://${config.host.includes(":") ? `[${config.host}]` : config.host}:${port}/docs`,
    },
    where,
  );
  if (keys === 0 && !local)
    app.log.warn(
      { host: config.host },
      "listening beyond this machine without API keys: anyone who can reach it can use it (set API_KEY)",
    );

  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    app.log.info({ signal, timeoutMs: config.shutdownTimeoutMs }, "shutting down");
    setTimeout(() => {
      app.log.error(
        `shutdown still not done ${FORCE_EXIT_GRACE_MS} ms past SHUTDOWN_TIMEOUT_MS; exiting`,
      );
      process.exit(1);
    }, config.shutdownTimeoutMs + FORCE_EXIT_GRACE_MS).unref();
    // a keep-alive connection whose request was in flight when the shutdown began would stay
    // open (and hold the server's close) until its keep-alive timeout: close each as soon as
    // its answer is out
    setInterval(() => app.server.closeIdleConnections(), 50).unref();
    app.close().then(
      () => {
        app.log.info("shut down");
        process.exit(0);
      },
      (err) => {
        app.log.error({ err }, "error during shutdown");
        process.exit(1);
      },
    );
  };
  process.on("SIGTERM", () => stop("SIGTERM"));
  process.on("SIGINT", () => stop("SIGINT"));
}

main().catch((err) => {
  process.stderr.write(`moreau: failed to start: ${(err as Error)?.stack ?? err}\n`);
  process.exit(1);
});
