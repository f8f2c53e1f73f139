/**
 * Server configuration: embedded defaults, overridden by environment variables (parsed and
 * checked with zod; a bad value stops the start with a message naming the variable).
 *
 * | variable                  | default            | meaning                                             |
 * |---------------------------|--------------------|-----------------------------------------------------|
 * | PORT                      | 8080               | TCP port (0: any free port)                         |
 * | HOST                      | 127.0.0.1          | interface; 0.0.0.0 (or ::) listens on all of them   |
 * | WORKERS                   | one per core       | solver worker threads                               |
 * | MAX_SESSIONS              | 64                 | live sessions; beyond: 429                          |
 * | MAX_BODIES                | 10000              | bodies per model; beyond: 413                       |
 * | MAX_STEPS_PER_REQUEST     | 1000000            | steps one POST /step may ask for; beyond: 400       |
 * | MAX_PENDING_INPUTS        | 10000              | inputs an inputs request (REST or stream) may leave |
 * |                           |                    | scheduled for later steps in a session (at most     |
 * |                           |                    | 100000, what a snapshot holds); beyond: 400. Every  |
 * |                           |                    | answered change rewrites them in its checkpoint     |
 * | RECORDING_STATES_MAX_BYTES| 67108864 (64 MiB)  | JSON of the replayed states one GET recording?every |
 * |                           |                    | answer holds; beyond: 409 (at most 512 MiB, V8's    |
 * |                           |                    | longest string)                                     |
 * | MAX_BODY_BYTES            | 1048576 (1 MiB)    | request body size but for the routes below; beyond: |
 * |                           |                    | 413                                                 |
 * | MAX_MODEL_BYTES           | 12582912 (12 MiB)  | body size of POST /v1/sessions, /v1/assembly and    |
 * |                           |                    | /v1/models/urdf (a model, snapshot or recording, a  |
 * |                           |                    | URDF and its meshes); beyond: 413. These            |
 * |                           |                    | bodies are parsed and validated in a worker, never  |
 * |                           |                    | on the event loop. A 100×100 cloth (10 000 bodies,  |
 * |                           |                    | MAX_BODIES; 39 402 springs) is 5 MB as a model and  |
 * |                           |                    | 9.5 MB as a snapshot (defaults written out)         |
 * | SESSION_IDLE_TTL          | 3600               | s without a request or a stream before a session    |
 * |                           |                    | is deleted; 0 keeps sessions forever                |
 * | LOG_LEVEL                 | info               | pino level: fatal error warn info debug trace silent|
 * | REQUEST_TIMEOUT_MS        | 30000              | time limit of one request to a worker (see below)   |
 * | WORKER_MEMORY_MB          | 2048               | heap of one solver worker; beyond, that worker ends |
 * |                           |                    | and its sessions are rebuilt from checkpoints       |
 * | WORKER_SESSION_MEMORY_MB  | WORKER_MEMORY_MB/2 | estimated memory (heap and ArrayBuffers) of the     |
 * |                           |                    | sessions one worker may hold                        |
 * |                           |                    | (sessions/memory.ts); a session past it on every    |
 * |                           |                    | worker: 507; rebuilds keep to it too                |
 * | STREAM_MAX_BUFFERED_BYTES | 1048576 (1 MiB)    | a WebSocket client's unsent bytes beyond which its  |
 * |                           |                    | frames are dropped                                  |
 * | STREAM_COMMANDS_MAX_BYTES | 67108864 (64 MiB)  | bytes of the commands (messages) all stream sockets |
 * |                           |                    | hold awaiting their answers; beyond, one more is    |
 * |                           |                    | refused (`too_many_commands` naming it)             |
 * | FRAME_QUEUE_BYTES         | 16777216 (16 MiB)  | encoded frames in flight from one worker to the     |
 * |                           |                    | event loop beyond which the worker drops frames     |
 * | SHUTDOWN_TIMEOUT_MS       | 10000              | grace for in-flight requests on SIGTERM             |
 * | DATA_DIR                  | (unset: off)       | folder for session checkpoints (see below), e.g.    |
 * |                           |                    | ./data; relative to the working directory           |
 * | CHECKPOINT_EVERY_STEPS    | 1000               | with DATA_DIR: also checkpoint a session every this |
 * |                           |                    | many steps (0: only with an answered change, a      |
 * |                           |                    | run's end and shutdown)                             |
 * | CHECKPOINT_MIN_INTERVAL_MS | 1000              | least time between two checkpoints of a session's   |
 * |                           |                    | steps (0: none); an answered change, a run's end    |
 * |                           |                    | and shutdown are written at once                    |
 * | CHECKPOINT_WAIT_MS        | 2000               | a run held at its checkpoint goes on after this     |
 * |                           |                    | long without the write confirmed (a stuck store)    |
 * | CHECKPOINT_MEMORY_BYTES   | 268435456 (256 MiB)| last checkpoints kept in memory for all sessions,   |
 * |                           |                    | to rebuild them after a worker loss (0: none)       |
 * | API_KEY / API_KEYS        | (unset: no keys)   | one key / comma-separated keys; when set, every     |
 * |                           |                    | route but /health and /ready needs                  |
 * |                           |                    | `Authorization: Bearer <key>`                       |
 * | MAX_SESSIONS_PER_KEY      | 16                 | live sessions one key may own; beyond: 429          |
 * | RATE_LIMIT_MAX            | 1200               | with keys: requests per key per window; beyond: 429 |
 * |                           |                    | (0: no rate limit)                                  |
 * | RATE_LIMIT_WINDOW_MS      | 60000              | the rate limit's window                             |
 * | AUTH_FAILURE_MAX          | 30                 | with keys: wrong keys one client address may send   |
 * |                           |                    | per window; beyond: 429 before any key is checked   |
 * |                           |                    | (0: no limit)                                       |
 * | AUTH_FAILURE_WINDOW_MS    | 60000              | that limit's window                                 |
 * | MAX_SUBSCRIBERS_PER_SESSION | 32               | WebSocket streams of one session; beyond: 429       |
 * | MAX_SUBSCRIBERS_PER_KEY   | 64                 | with keys: streams of one API key; beyond: 429      |
 * | MAX_SUBSCRIBERS           | 1000               | streams of the whole server; beyond: 429            |
 * | STREAM_FPS                | 60                 | frames per second (wall time) one stream gets at    |
 * |                           |                    | most unless it asks for another rate (?maxFps=)     |
 * | STREAM_MAX_FPS            | 240                | the largest ?maxFps a client may ask for            |
 * | MAX_CONNECTIONS           | 2048               | open TCP connections (streams included); beyond,    |
 * |                           |                    | new ones are closed at once (0: no cap)             |
 * | HEADERS_TIMEOUT_MS        | 10000              | time to send a request's headers; beyond: 408 and   |
 * |                           |                    | the connection is closed                            |
 * | RECEIVE_TIMEOUT_MS        | 60000              | time to send a whole request (headers and body)     |
 * | KEEP_ALIVE_TIMEOUT_MS     | 72000              | an idle keep-alive connection is closed after it    |
 * | CONNECTION_TIMEOUT_MS     | 60000              | a connection on which no byte moves either way for  |
 * |                           |                    | this long is closed, unless its request is being    |
 * |                           |                    | computed (REQUEST_TIMEOUT_MS bounds that); 0: off   |
 * | MAX_DRAIN_BYTES           | 67108864 (64 MiB)  | a body over its limit is read and discarded up to   |
 * |                           |                    | this size so the client reads its 413; beyond,      |
 * |                           |                    | the connection is closed                            |
 * | ALLOWED_HOSTS             | (unset: any)       | comma-separated Host names (`name`, `name:port`,    |
 * |                           |                    | `*.domain`); another Host header is answered 421    |
 * |                           |                    | (/health and /ready answer any)                     |
 * | CORS_ORIGINS              | (unset: no CORS)   | comma-separated origins (https://app.example:8443)  |
 * |                           |                    | allowed to call the API from a browser, or *        |
 * | REDIS_URL                 | (unset: one node)  | redis://host:port: this server is a node of a       |
 * |                           |                    | cluster (src/server/cluster/); unset, nothing       |
 * |                           |                    | changes and nothing else is needed                  |
 * | NODE_ID                   | <hostname>-<port>  | this node's name in the cluster (unique)            |
 * | NODE_URL                  | http://HOST:PORT   | where the other nodes reach this one (HOST 0.0.0.0: |
 * |                           |                    | the hostname)                                       |
 * | NODE_PUBLIC_URL           | NODE_URL           | where clients reach this node (CLUSTER_REDIRECT)    |
 * | CLUSTER_REDIRECT          | false              | true: answer 307 to the owner's NODE_PUBLIC_URL     |
 * |                           |                    | instead of forwarding a request to it               |
 * | LEASE_TTL_MS              | 10000              | a session's lease; a dead node's sessions are taken |
 * |                           |                    | over within it (renewed every third of it)          |
 * | CLUSTER_PREFIX            | moreau:            | prefix of this cluster's Redis keys                 |
 *
 * REQUEST_TIMEOUT_MS: a step request checks its deadline between steps and ends with 504
 * `timeout` (the session keeps the state it reached). A request the worker does not answer
 * within the deadline plus a grace of max(1 s, REQUEST_TIMEOUT_MS / 2) (one step that never
 * ends) terminates that worker: it is replaced and every session it held goes to `error`.
 *
 * DATA_DIR: sessions are checkpointed (src/server/persistence.ts) when created, paused,
 * reset, patched or given inputs (the answer waits for the write: an acknowledged change
 * survives a crash), every CHECKPOINT_EVERY_STEPS steps and on graceful shutdown, into
 * DATA_DIR/sessions/<id>.json (written to a temporary file and renamed, so a file is
 * always whole); deleting a session deletes its file. On start the server restores every
 * checkpointed session at its last checkpoint, paused (runs do not resume by themselves).
 *
 * API keys: sessions belong to the key that created them (another key gets 404), each key
 * may own MAX_SESSIONS_PER_KEY sessions and make RATE_LIMIT_MAX requests per
 * RATE_LIMIT_WINDOW_MS (@fastify/rate-limit). Without keys there is no access control, so
 * HOST defaults to 127.0.0.1 and the start-up log says so. A client address that sends
 * AUTH_FAILURE_MAX wrong keys within AUTH_FAILURE_WINDOW_MS is answered 429 until the
 * window ends, whatever key it sends (src/server/auth.ts).
 *
 * Streams (src/server/stream.ts): an upgrade past MAX_SUBSCRIBERS_PER_SESSION,
 * MAX_SUBSCRIBERS_PER_KEY or MAX_SUBSCRIBERS is refused before the upgrade (429
 * `too_many_subscribers`, details.limit names the variable); upgrades count in the
 * per-key rate limit like any request. Each stream gets at most STREAM_FPS frames per
 * second of wall time on average (bursts of up to 2 s of frames pass, so a short step
 * request shows every step), or its `?maxFps=` (at most STREAM_MAX_FPS); the frames over
 * it are skipped and counted in the next frame's `dropped`, the latest one being sent
 * when the rate allows, so the last state always arrives.
 *
 * Cluster (REDIS_URL, src/server/cluster/): sessions live on any node; every node answers
 * every request (forwarded to the owner, or 307 with CLUSTER_REDIRECT), streams reach any
 * node through Redis Streams, quotas and rate limits are counted in Redis, checkpoints go
 * to Redis (DATA_DIR is not read), and a dead node's sessions are taken over from their
 * last checkpoint within LEASE_TTL_MS.
 *
 * Connections (src/server/app.ts): HEADERS_TIMEOUT_MS and RECEIVE_TIMEOUT_MS bound how
 * long a client may take to send a request (Node's headersTimeout / requestTimeout: 408
 * and close), KEEP_ALIVE_TIMEOUT_MS how long an idle keep-alive connection stays,
 * CONNECTION_TIMEOUT_MS how long a connection may go without a byte either way (not
 * while its answer is being computed), MAX_CONNECTIONS how many may be open at once.
 */
import { availableParallelism } from "node:os";
import { z } from "zod";
import { issuesOf, issueText } from "../../schemas/issues";
import { MAX_PENDING_INPUTS } from "../../schemas/snapshot";
import { RECORDING_STATES_MAX_BYTES } from "./protocol";
import { STREAM_MAX_MESSAGE_BYTES } from "./stream";

const int = (min: number, max: number) => z.coerce.number().int().min(min).max(max);

/** A list from an array or a comma-separated string (blank entries ignored). */
const list = <T extends z.ZodType>(item: T) =>
  z
    .preprocess(
      (v) =>
        typeof v === "string"
          ? v
              .split(",")
              .map((x) => x.trim())
              .filter((x) => x !== "")
          : v,
      z.array(item),
    )
    .default([]);

export const ServerConfig = z
  .object({
    port: int(0, 65535).default(8080),
    host: z.string().min(1).default("127.0.0.1"),
    workers: int(1, 256).default(() => Math.max(1, availableParallelism())),
    maxSessions: int(1, 1_000_000).default(64),
    maxBodies: int(1, 10_000_000).default(10_000),
    maxStepsPerRequest: int(1, 1e12).default(1_000_000),
    maxPendingInputs: int(1, MAX_PENDING_INPUTS).default(10_000),
    recordingStatesMaxBytes: int(1024, 2 ** 29).default(RECORDING_STATES_MAX_BYTES),
    maxBodyBytes: int(1024, 2 ** 31 - 1).default(1024 * 1024),
    maxModelBytes: int(1024, 2 ** 31 - 1).default(12 * 1024 * 1024),
    sessionIdleTtl: z.coerce.number().min(0).default(3600),
    logLevel: z
      .enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"])
      .default("info"),
    requestTimeoutMs: int(1, 2 ** 31 - 1).default(30_000),
    workerMemoryMb: int(64, 1_048_576).default(2048),
    /** absent: half of workerMemoryMb (sessions/memory.ts workerBudgetBytes) */
    workerSessionMemoryMb: int(1, 1_048_576).optional(),
    streamMaxBufferedBytes: int(1024, 2 ** 31 - 1).default(1024 * 1024),
    // at least one message of STREAM_MAX_MESSAGE_BYTES
    streamCommandsMaxBytes: int(STREAM_MAX_MESSAGE_BYTES, 2 ** 53 - 1).default(64 * 1024 * 1024),
    frameQueueBytes: int(64 * 1024, 2 ** 31 - 1).default(16 * 1024 * 1024),
    shutdownTimeoutMs: int(0, 2 ** 31 - 1).default(10_000),
    /** Checkpoint folder; "" turns persistence off. */
    dataDir: z.string().default(""),
    checkpointEverySteps: int(0, 1e12).default(1000),
    checkpointMinIntervalMs: int(0, 2 ** 31 - 1).default(1000),
    checkpointWaitMs: int(0, 2 ** 31 - 1).default(2000),
    checkpointMemoryBytes: int(0, 2 ** 53 - 1).default(256 * 1024 * 1024),
    /** API keys (empty: no access control). From API_KEY and API_KEYS (comma-separated). */
    apiKeys: z
      .array(z.string().min(8, "an API key has at least 8 characters").max(512))
      .default([]),
    maxSessionsPerKey: int(1, 1_000_000).default(16),
    rateLimitMax: int(0, 1e9).default(1200),
    rateLimitWindowMs: int(1, 2 ** 31 - 1).default(60_000),
    authFailureMax: int(0, 1e9).default(30),
    authFailureWindowMs: int(1, 2 ** 31 - 1).default(60_000),
    maxSubscribersPerSession: int(1, 1_000_000).default(32),
    maxSubscribersPerKey: int(1, 1_000_000).default(64),
    maxSubscribers: int(1, 1_000_000).default(1000),
    streamFps: z.coerce.number().gt(0).max(1e6).default(60),
    streamMaxFps: z.coerce.number().gt(0).max(1e6).default(240),
    maxConnections: int(0, 1e9).default(2048),
    headersTimeoutMs: int(1, 2 ** 31 - 1).default(10_000),
    receiveTimeoutMs: int(1, 2 ** 31 - 1).default(60_000),
    keepAliveTimeoutMs: int(1, 2 ** 31 - 1).default(72_000),
    connectionTimeoutMs: int(0, 2 ** 31 - 1).default(60_000),
    maxDrainBytes: int(0, 2 ** 53 - 1).default(64 * 1024 * 1024),
    /** Host names the server answers to (empty: any); from ALLOWED_HOSTS (comma-separated). */
    allowedHosts: list(
      z
        .string()
        .regex(
          /^(\*\.)?[A-Za-z0-9.-]+(:\d{1,5})?$|^\[[0-9A-Fa-f:.]+\](:\d{1,5})?$/,
          "a host name, name:port, *.domain or [IPv6]:port",
        )
        .transform((h) => h.toLowerCase()),
    ),
    /** Origins allowed by CORS (empty: CORS off; ["*"]: any); from CORS_ORIGINS (comma-separated). */
    corsOrigins: list(
      z
        .string()
        .regex(
          /^\*$|^https?:\/\/[A-Za-z0-9.-]+(:\d{1,5})?$|^https?:\/\/\[[0-9A-Fa-f:.]+\](:\d{1,5})?$/,
          "an origin such as https://app.example or http://127.0.0.1:5173 (no path), or *",
        )
        .transform((o) => o.toLowerCase()),
    ),
    /** Redis of a cluster ("" or unset: a single server, today's behaviour). */
    redisUrl: z
      .string()
      .regex(/^$|^rediss?:\/\/\S+$/, "a redis:// or rediss:// URL")
      .default(""),
    /** This node's name in the cluster ("": <hostname>-<port>). */
    nodeId: z
      .string()
      .regex(/^[A-Za-z0-9_.-]{0,64}$/, "letters, digits, _ . - (at most 64)")
      .default(""),
    /** Where the other nodes reach this one ("": http://HOST:PORT). */
    nodeUrl: z.union([z.literal(""), z.url({ protocol: /^https?$/ })]).default(""),
    /** Where clients reach this node ("": NODE_URL). */
    nodePublicUrl: z.union([z.literal(""), z.url({ protocol: /^https?$/ })]).default(""),
    clusterRedirect: z
      .union([
        z.boolean(),
        z.enum(["true", "false", "1", "0"]).transform((v) => v === "true" || v === "1"),
      ])
      .default(false),
    leaseTtlMs: int(300, 600_000).default(10_000),
    clusterPrefix: z
      .string()
      .regex(/^[A-Za-z0-9_.:-]{1,64}$/, "letters, digits, _ . : - (at most 64)")
      .default("moreau:"),
    /** Enables fault-injection messages to workers (tests only; never read from the environment). */
    testHooks: z.boolean().default(false),
  })
  .superRefine((c, ctx) => {
    if (c.headersTimeoutMs > c.receiveTimeoutMs)
      ctx.addIssue({
        code: "custom",
        path: ["headersTimeoutMs"],
        message: `must not exceed RECEIVE_TIMEOUT_MS (${c.receiveTimeoutMs})`,
      });
    if (c.workerSessionMemoryMb !== undefined && c.workerSessionMemoryMb > c.workerMemoryMb)
      ctx.addIssue({
        code: "custom",
        path: ["workerSessionMemoryMb"],
        message: `must not exceed WORKER_MEMORY_MB (${c.workerMemoryMb})`,
      });
    if (c.streamFps > c.streamMaxFps)
      ctx.addIssue({
        code: "custom",
        path: ["streamFps"],
        message: `must not exceed STREAM_MAX_FPS (${c.streamMaxFps})`,
      });
  });

export type Config = z.output<typeof ServerConfig>;
export type ConfigInput = z.input<typeof ServerConfig>;

/** Environment variable of each setting. */
export const ENV_VARS: Record<Exclude<keyof Config, "testHooks" | "apiKeys">, string> = {
  port: "PORT",
  host: "HOST",
  workers: "WORKERS",
  maxSessions: "MAX_SESSIONS",
  maxBodies: "MAX_BODIES",
  maxStepsPerRequest: "MAX_STEPS_PER_REQUEST",
  maxPendingInputs: "MAX_PENDING_INPUTS",
  recordingStatesMaxBytes: "RECORDING_STATES_MAX_BYTES",
  maxBodyBytes: "MAX_BODY_BYTES",
  maxModelBytes: "MAX_MODEL_BYTES",
  sessionIdleTtl: "SESSION_IDLE_TTL",
  logLevel: "LOG_LEVEL",
  requestTimeoutMs: "REQUEST_TIMEOUT_MS",
  workerMemoryMb: "WORKER_MEMORY_MB",
  workerSessionMemoryMb: "WORKER_SESSION_MEMORY_MB",
  streamMaxBufferedBytes: "STREAM_MAX_BUFFERED_BYTES",
  streamCommandsMaxBytes: "STREAM_COMMANDS_MAX_BYTES",
  frameQueueBytes: "FRAME_QUEUE_BYTES",
  shutdownTimeoutMs: "SHUTDOWN_TIMEOUT_MS",
  dataDir: "DATA_DIR",
  checkpointEverySteps: "CHECKPOINT_EVERY_STEPS",
  checkpointMinIntervalMs: "CHECKPOINT_MIN_INTERVAL_MS",
  checkpointWaitMs: "CHECKPOINT_WAIT_MS",
  checkpointMemoryBytes: "CHECKPOINT_MEMORY_BYTES",
  maxSessionsPerKey: "MAX_SESSIONS_PER_KEY",
  rateLimitMax: "RATE_LIMIT_MAX",
  rateLimitWindowMs: "RATE_LIMIT_WINDOW_MS",
  authFailureMax: "AUTH_FAILURE_MAX",
  authFailureWindowMs: "AUTH_FAILURE_WINDOW_MS",
  maxSubscribersPerSession: "MAX_SUBSCRIBERS_PER_SESSION",
  maxSubscribersPerKey: "MAX_SUBSCRIBERS_PER_KEY",
  maxSubscribers: "MAX_SUBSCRIBERS",
  streamFps: "STREAM_FPS",
  streamMaxFps: "STREAM_MAX_FPS",
  maxConnections: "MAX_CONNECTIONS",
  headersTimeoutMs: "HEADERS_TIMEOUT_MS",
  receiveTimeoutMs: "RECEIVE_TIMEOUT_MS",
  keepAliveTimeoutMs: "KEEP_ALIVE_TIMEOUT_MS",
  connectionTimeoutMs: "CONNECTION_TIMEOUT_MS",
  maxDrainBytes: "MAX_DRAIN_BYTES",
  allowedHosts: "ALLOWED_HOSTS",
  corsOrigins: "CORS_ORIGINS",
  redisUrl: "REDIS_URL",
  nodeId: "NODE_ID",
  nodeUrl: "NODE_URL",
  nodePublicUrl: "NODE_PUBLIC_URL",
  clusterRedirect: "CLUSTER_REDIRECT",
  leaseTtlMs: "LEASE_TTL_MS",
  clusterPrefix: "CLUSTER_PREFIX",
};

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`invalid configuration: ${problems.join("; ")}`);
    this.name = "ConfigError";
  }
}

/** Fills defaults into a partial configuration (used by tests and embedding programs). */
export function resolveConfig(input: ConfigInput = {}): Config {
  const r = ServerConfig.safeParse(input);
  if (!r.success) throw new ConfigError(issuesOf(r.error).map(issueText));
  return r.data;
}

/** Reads the configuration from environment variables; empty variables count as unset. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const input: Record<string, string | string[]> = {};
  for (const [key, name] of Object.entries(ENV_VARS)) {
    const v = env[name];
    if (v !== undefined && v.trim() !== "") input[key] = v.trim();
  }
  const keys = [env.API_KEY ?? "", ...(env.API_KEYS ?? "").split(",")]
    .map((k) => k.trim())
    .filter((k) => k !== "");
  if (keys.length > 0) input.apiKeys = [...new Set(keys)];
  const r = ServerConfig.safeParse(input);
  if (!r.success)
    throw new ConfigError(
      r.error.issues.map((i) => {
        const key = String(i.path[0]);
        // never echo a key
        if (key === "apiKeys") return `API_KEY/API_KEYS: ${i.message}`;
        // a Redis URL may hold its password
        if (key === "redisUrl") return `REDIS_URL: ${i.message}`;
        const name = ENV_VARS[key as keyof typeof ENV_VARS] ?? key;
        return `${name}=${JSON.stringify(input[key])}: ${i.message}`;
      }),
    );
  return r.data;
}

/** Grace after a request's deadline before its worker is deemed stuck and replaced. */
export function watchdogGraceMs(config: Config): number {
  return Math.max(1000, config.requestTimeoutMs / 2);
}
