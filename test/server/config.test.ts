/** Configuration: embedded defaults, environment variables, and errors naming the variable. */
import { availableParallelism } from "node:os";
import { describe, expect, it } from "vitest";
import { ConfigError, loadConfig, resolveConfig, watchdogGraceMs } from "../../src/server/config";

describe("loadConfig", () => {
  it("has the documented defaults", () => {
    const c = loadConfig({});
    expect(c).toEqual({
      port: 8080,
      host: "127.0.0.1",
      workers: Math.max(1, availableParallelism()),
      maxSessions: 64,
      maxBodies: 10_000,
      maxStepsPerRequest: 1_000_000,
      maxPendingInputs: 10_000,
      recordingStatesMaxBytes: 64 * 1024 * 1024,
      maxBodyBytes: 1024 * 1024,
      maxModelBytes: 12 * 1024 * 1024,
      sessionIdleTtl: 3600,
      logLevel: "info",
      requestTimeoutMs: 30_000,
      workerMemoryMb: 2048,
      streamMaxBufferedBytes: 1024 * 1024,
      streamCommandsMaxBytes: 64 * 1024 * 1024,
      frameQueueBytes: 16 * 1024 * 1024,
      shutdownTimeoutMs: 10_000,
      dataDir: "",
      checkpointEverySteps: 1000,
      checkpointMinIntervalMs: 1000,
      checkpointWaitMs: 2000,
      checkpointMemoryBytes: 256 * 1024 * 1024,
      apiKeys: [],
      maxSessionsPerKey: 16,
      rateLimitMax: 1200,
      rateLimitWindowMs: 60_000,
      authFailureMax: 30,
      authFailureWindowMs: 60_000,
      maxSubscribersPerSession: 32,
      maxSubscribersPerKey: 64,
      maxSubscribers: 1000,
      streamFps: 60,
      streamMaxFps: 240,
      maxConnections: 2048,
      headersTimeoutMs: 10_000,
      receiveTimeoutMs: 60_000,
      keepAliveTimeoutMs: 72_000,
      connectionTimeoutMs: 60_000,
      maxDrainBytes: 64 * 1024 * 1024,
      allowedHosts: [],
      corsOrigins: [],
      redisUrl: "",
      nodeId: "",
      nodeUrl: "",
      nodePublicUrl: "",
      clusterRedirect: false,
      leaseTtlMs: 10_000,
      clusterPrefix: "moreau:",
      testHooks: false,
    });
  });

  it("reads every variable; empty ones count as unset", () => {
    const c = loadConfig({
      PORT: "9000",
      HOST: "0.0.0.0",
      WORKERS: "3",
      MAX_SESSIONS: "5",
      MAX_BODIES: "100",
      MAX_STEPS_PER_REQUEST: "1000",
      MAX_PENDING_INPUTS: "50",
      MAX_BODY_BYTES: "4096",
      SESSION_IDLE_TTL: "0.5",
      LOG_LEVEL: "warn",
      REQUEST_TIMEOUT_MS: "250",
      STREAM_MAX_BUFFERED_BYTES: "2048",
      STREAM_COMMANDS_MAX_BYTES: "131072",
      WORKER_MEMORY_MB: "512",
      WORKER_SESSION_MEMORY_MB: "300",
      FRAME_QUEUE_BYTES: "65536",
      SHUTDOWN_TIMEOUT_MS: "0",
      TEST_HOOKS: "true",
    });
    expect(c).toMatchObject({
      port: 9000,
      host: "0.0.0.0",
      workers: 3,
      maxSessions: 5,
      maxBodies: 100,
      maxStepsPerRequest: 1000,
      maxPendingInputs: 50,
      maxBodyBytes: 4096,
      sessionIdleTtl: 0.5,
      logLevel: "warn",
      requestTimeoutMs: 250,
      streamMaxBufferedBytes: 2048,
      streamCommandsMaxBytes: 131072,
      workerMemoryMb: 512,
      workerSessionMemoryMb: 300,
      frameQueueBytes: 65536,
      shutdownTimeoutMs: 0,
      testHooks: false, // never from the environment
    });
    expect(loadConfig({ PORT: "", HOST: "  " }).port).toBe(8080);
  });

  it("reads persistence and access-control variables; API_KEY and API_KEYS add up", () => {
    const c = loadConfig({
      DATA_DIR: "./data",
      CHECKPOINT_EVERY_STEPS: "0",
      API_KEY: "first-key-0001",
      API_KEYS: " second-key-0002, third-key-0003 ,,first-key-0001",
      MAX_SESSIONS_PER_KEY: "4",
      RATE_LIMIT_MAX: "0",
      RATE_LIMIT_WINDOW_MS: "1000",
    });
    expect(c).toMatchObject({
      dataDir: "./data",
      checkpointEverySteps: 0,
      apiKeys: ["first-key-0001", "second-key-0002", "third-key-0003"],
      maxSessionsPerKey: 4,
      rateLimitMax: 0,
      rateLimitWindowMs: 1000,
    });
    // a bad key is reported without echoing it
    let message = "";
    try {
      loadConfig({ API_KEY: "short" });
    } catch (err) {
      message = (err as Error).message;
    }
    expect(message).toMatch(/API_KEY\/API_KEYS: an API key has at least 8 characters/);
    expect(message).not.toContain("short");
  });

  it("rejects bad values naming the variable", () => {
    expect(() => loadConfig({ PORT: "http" })).toThrow(ConfigError);
    expect(() => loadConfig({ PORT: "70000" })).toThrow(/PORT="70000"/);
    expect(() => loadConfig({ WORKERS: "0" })).toThrow(/WORKERS/);
    expect(() => loadConfig({ LOG_LEVEL: "loud" })).toThrow(/LOG_LEVEL/);
    expect(() => loadConfig({ MAX_SESSIONS: "1.5" })).toThrow(/MAX_SESSIONS/);
    expect(() => loadConfig({ WORKER_SESSION_MEMORY_MB: "4096" })).toThrow(
      /WORKER_SESSION_MEMORY_MB="4096": must not exceed WORKER_MEMORY_MB \(2048\)/,
    );
    // beyond what a snapshot's controls.pending holds (schemas/snapshot.ts)
    expect(() => loadConfig({ MAX_PENDING_INPUTS: "100001" })).toThrow(/MAX_PENDING_INPUTS/);
  });

  it("resolveConfig fills defaults into a partial object", () => {
    expect(resolveConfig({ workers: 2 }).workers).toBe(2);
    expect(resolveConfig({}).port).toBe(8080);
    expect(() => resolveConfig({ workers: -1 })).toThrow(ConfigError);
  });

  it("the watchdog grace is max(1 s, REQUEST_TIMEOUT_MS / 2)", () => {
    expect(watchdogGraceMs(resolveConfig({ requestTimeoutMs: 300 }))).toBe(1000);
    expect(watchdogGraceMs(resolveConfig({ requestTimeoutMs: 30_000 }))).toBe(15_000);
  });
});
