/**
 * The per-key rate limit holds across a cluster (counted in Redis): two nodes in this
 * process on a redis-server of the test's own, with API keys and RATE_LIMIT_MAX 10;
 * requests of one key alternating between the nodes are refused from the 11th on, and
 * another key still passes. MAX_SESSIONS_PER_KEY holds across them too.
 */
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildApp, type MoreauApp } from "../../src/server/app";
import { springParticle } from "../support/models";
import { type RedisServer, startRedis } from "../support/redis";

const KEYS = ["key-one-12345678", "key-two-12345678"];
let redis: RedisServer;
const apps: MoreauApp[] = [];
const urls: string[] = [];

const call = (url: string, key: string, method = "GET", body?: unknown) =>
  fetch(url, {
    method,
    headers: {
      authorization: `Bearer ${key}`,
      ...(body ? { "content-type": "application/json" } : {}),
    },
    body: body ? JSON.stringify(body) : undefined,
  });

beforeAll(async () => {
  redis = await startRedis();
  for (const id of ["a", "b"]) {
    const app = await buildApp({
      workers: 1,
      logLevel: "silent",
      redisUrl: redis.url,
      nodeId: id,
      apiKeys: KEYS,
      rateLimitMax: 10,
      rateLimitWindowMs: 60_000,
      maxSessionsPerKey: 2,
    });
    await app.listen({ port: 0, host: "127.0.0.1" });
    apps.push(app);
    urls.push(`http://127.0.0.1:${(app.server.address() as AddressInfo).port}`);
  }
}, 60_000);

afterAll(async () => {
  for (const app of apps) await app.close();
  await redis?.stop();
});

describe("limits across the nodes of a cluster", () => {
  it("MAX_SESSIONS_PER_KEY counts the key's sessions on every node", async () => {
    const answers = await Promise.all(
      [0, 1, 2, 3].map((i) =>
        call(`${urls[i % 2]}/v1/sessions`, KEYS[1], "POST", { model: springParticle() }),
      ),
    );
    expect(answers.map((r) => r.status).sort()).toEqual([201, 201, 429, 429]);
  });

  it("RATE_LIMIT_MAX counts a key's requests on every node", async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 12; i++)
      statuses.push((await call(`${urls[i % 2]}/v1/sessions`, KEYS[0])).status);
    expect(statuses.slice(0, 10).every((s) => s === 200)).toBe(true);
    expect(statuses.slice(10)).toEqual([429, 429]);
  });
});
