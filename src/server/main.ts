/**
 * `npm start` (tsx src/server/main.ts): reads the configuration from the environment
 * (src/server/config.ts), starts the workers and listens. HOST defaults to 127.0.0.1 (this
 * machine only); set HOST=0.0.0.0 to listen on all interfaces (containers).
 *
 * Without API_KEY / API_KEYS there is no access control: HOST still defaults to 127.0.0.1 and
 * the start-up line says so (and warns when HOST exposes such a server beyond this machine).
 * With DATA_DIR the start-up restores checkpointed sessions (logged) and shutdown
 * checkpoints every session.
 *
 * SIGTERM / SIGINT: graceful shutdown — stop accepting connections and sessions, close
 * streams with 1001, stop runs, finish in-flight requests (an answer its client has stopped
 * reading is dropped after 1 s: app.ts), stop the workers, exit 0; if that takes longer
 * than SHUTDOWN_TIMEOUT_MS, exit 1.
 */
import { buildApp } from "./app";
import { ConfigError, loadConfig } from "./config";

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
    app.log.info({ signal }, "shutting down");
    setTimeout(() => {
      app.log.error("shutdown took longer than SHUTDOWN_TIMEOUT_MS; exiting");
      process.exit(1);
    }, config.shutdownTimeoutMs).unref();
    app.close().then(
      () => process.exit(0),
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
