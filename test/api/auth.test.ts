/**
 * Access control with API keys: every route but /health and /ready needs
 * `Authorization: Bearer <key>` (WebSocket upgrades too, refused before the upgrade);
 * sessions belong to the key that made them (another key gets 404 everywhere, and does
 * not see them in lists); per-key session quotas; a per-key rate limit with the service's
 * error body. Without keys nothing of this applies.
 */
import request from "supertest";
import { describe, expect, it } from "vitest";
import { WebSocket } from "ws";
import { bearerProtocol, keyId } from "../../src/server/auth";
import { fallingBody } from "../support/models";
import { startApp, useServer } from "../support/server";

const A = "alpha-key-0123456789";
const B = "beta-key-9876543210";
const server = useServer({
  workers: 1,
  apiKeys: [A, B],
  maxSessionsPerKey: 3,
  rateLimitMax: 1000,
});
const api = () => request(server.app.server);
const as = (key: string) => ({ authorization: `Bearer ${key}` });

async function create(key: string): Promise<string> {
  const r = await api()
    .post("/v1/sessions")
    .set(as(key))
    .send({ model: fallingBody() })
    .expect(201);
  return r.body.id as string;
}

/** Status of a WebSocket upgrade (101 when it opened) and the subprotocol selected. */
function upgrade(
  path: string,
  headers: Record<string, string> = {},
  protocols: string[] = [],
  selected: { protocol?: string } = {},
): Promise<number> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(`ws://127.0.0.1:${server.port}${path}`, protocols, { headers });
    ws.once("open", () => {
      selected.protocol = ws.protocol;
      ws.close();
      resolve(101);
    });
    ws.once("unexpected-response", (_req, res) => {
      resolve(res.statusCode ?? 0);
      res.resume();
    });
    ws.once("error", (e) => reject(e));
  });
}

describe("with API keys", () => {
  it("/health and /ready answer without a key", async () => {
    await api().get("/health").expect(200);
    await api().get("/ready").expect(200);
  });

  it("every other route is 401 without a valid bearer key", async () => {
    for (const [method, path] of [
      ["get", "/v1/sessions"],
      ["post", "/v1/sessions"],
      ["get", "/v1/sessions/x/state"],
      ["post", "/v1/assembly"],
      ["get", "/metrics"],
      ["get", "/docs/json"],
      ["get", "/no/such/route"],
    ] as const) {
      const r = await api()[method](path).expect(401);
      expect(r.body.error).toBe("unauthorized");
      expect(r.headers["www-authenticate"]).toMatch(/^Bearer/);
    }
    expect(
      (await api().get("/v1/sessions").set(as("not-a-real-key")).expect(401)).body.message,
    ).toBe("unknown API key");
    expect(
      (await api().get("/v1/sessions").set("authorization", `Basic ${A}`).expect(401)).body.message,
    ).toMatch(/malformed/);
    await api().get("/v1/sessions").set(as(A)).expect(200);
    await api().get("/metrics").set(as(B)).expect(200);
  });

  it("sessions belong to their key: another key gets 404 and does not list them", async () => {
    const a = await create(A);
    const b = await create(B);
    const listA = (await api().get("/v1/sessions").set(as(A)).expect(200)).body.sessions.map(
      (s: { id: string }) => s.id,
    );
    expect(listA).toContain(a);
    expect(listA).not.toContain(b);
    for (const [method, path, body] of [
      ["get", `/v1/sessions/${a}`, undefined],
      ["get", `/v1/sessions/${a}/state`, undefined],
      ["get", `/v1/sessions/${a}/snapshot`, undefined],
      ["post", `/v1/sessions/${a}/step`, { steps: 1 }],
      ["post", `/v1/sessions/${a}/run`, {}],
      ["post", `/v1/sessions/${a}/pause`, undefined],
      ["post", `/v1/sessions/${a}/reset`, undefined],
      ["post", `/v1/sessions/${a}/fork`, undefined],
      ["post", `/v1/sessions/${a}/assembly`, {}],
      ["patch", `/v1/sessions/${a}`, { gravity: [0, 0, 0] }],
      ["delete", `/v1/sessions/${a}`, undefined],
    ] as const) {
      const req = api()[method](path).set(as(B));
      const r = await (body === undefined ? req : req.send(body));
      expect(r.status, `${method} ${path}`).toBe(404);
      expect(r.body.error).toBe("not_found");
    }
    // untouched by B's attempts
    const s = (await api().get(`/v1/sessions/${a}`).set(as(A)).expect(200)).body;
    expect(s).toMatchObject({ step: 0, status: "ready" });
    await api().delete(`/v1/sessions/${a}`).set(as(A)).expect(204);
    await api().delete(`/v1/sessions/${b}`).set(as(B)).expect(204);
  });

  it("WebSocket upgrades need the key too, and the session's own key", async () => {
    const a = await create(A);
    expect(await upgrade(`/v1/sessions/${a}/stream`)).toBe(401);
    expect(await upgrade(`/v1/sessions/${a}/stream`, as("wrong-key-000000"))).toBe(401);
    expect(await upgrade(`/v1/sessions/${a}/stream`, as(B))).toBe(404);
    expect(await upgrade(`/v1/sessions/${a}/stream`, as(A))).toBe(101);
    await api().delete(`/v1/sessions/${a}`).set(as(A)).expect(204);
  });

  it("a browser's upgrade may carry the key as the subprotocol bearer.<base64url(key)>", async () => {
    const a = await create(A);
    const path = `/v1/sessions/${a}/stream`;
    const selected: { protocol?: string } = {};
    expect(await upgrade(path, {}, ["moreau", bearerProtocol(A)], selected)).toBe(101);
    expect(selected.protocol).toBe("moreau"); // the key is never echoed
    expect(await upgrade(path, {}, ["moreau", bearerProtocol("wrong-key-000000")])).toBe(401);
    expect(await upgrade(path, {}, ["moreau", bearerProtocol(B)])).toBe(404);
    // only upgrades: a REST call with the protocol header is still refused
    await api().get("/v1/sessions").set("sec-websocket-protocol", bearerProtocol(A)).expect(401);
    await api().delete(`/v1/sessions/${a}`).set(as(A)).expect(204);
  });

  it("the dashboard page and its assets are public (no data); its API calls are not", async () => {
    for (const path of ["/", "/app.js", "/client.js", "/style.css", "/examples"]) {
      const r = await api().get(path);
      expect(r.status, path).toBe(200);
    }
    await api().get("/vendor/uplot/uPlot.esm.js").expect(200);
    await api().get("/v1/sessions").expect(401);
  });

  it("a key may own MAX_SESSIONS_PER_KEY sessions; other keys are not affected", async () => {
    const mine = [await create(A), await create(A), await create(A)];
    const r = await api()
      .post("/v1/sessions")
      .set(as(A))
      .send({ model: fallingBody() })
      .expect(429);
    expect(r.body).toMatchObject({
      error: "too_many_sessions",
      details: { limit: 3, scope: "key" },
    });
    // a fork counts against the quota too
    await api().post(`/v1/sessions/${mine[0]}/fork`).set(as(A)).expect(429);
    const b = await create(B);
    await api().delete(`/v1/sessions/${mine[0]}`).set(as(A)).expect(204);
    const f = (await api().post(`/v1/sessions/${mine[1]}/fork`).set(as(A)).expect(201)).body.id;
    for (const id of [mine[1], mine[2], f])
      await api().delete(`/v1/sessions/${id}`).set(as(A)).expect(204);
    await api().delete(`/v1/sessions/${b}`).set(as(B)).expect(204);
  });

  it("concurrent creates do not beat the quota: 10 at once give exactly 3 sessions", async () => {
    const answers = await Promise.all(
      Array.from({ length: 10 }, () =>
        api().post("/v1/sessions").set(as(A)).send({ model: fallingBody() }),
      ),
    );
    const created = answers.filter((r) => r.status === 201).map((r) => r.body.id as string);
    expect(created.length).toBe(3);
    expect(answers.filter((r) => r.status === 429).length).toBe(7);
    const listed = await api().get("/v1/sessions").set(as(A)).expect(200);
    expect(listed.body.sessions.length).toBe(3);
    for (const id of created) await api().delete(`/v1/sessions/${id}`).set(as(A)).expect(204);
  });

  it("keys are kept as ids (a digest prefix), never in the clear", () => {
    expect(keyId(A)).toMatch(/^[0-9a-f]{16}$/);
    expect(keyId(A)).not.toBe(keyId(B));
  });
});

describe("the rate limit", () => {
  const limited = useServer({
    workers: 1,
    apiKeys: [A, B],
    rateLimitMax: 5,
    rateLimitWindowMs: 60_000,
  });

  it("answers 429 rate_limited per key past RATE_LIMIT_MAX; /health and other keys go on", async () => {
    const api2 = () => request(limited.app.server);
    for (let i = 0; i < 5; i++) await api2().get("/v1/sessions").set(as(A)).expect(200);
    const r = await api2().get("/v1/sessions").set(as(A)).expect(429);
    expect(r.body.error).toBe("rate_limited");
    expect(r.body.message).toMatch(/rate limit of 5 requests/);
    expect(r.headers["retry-after"]).toBeDefined();
    await api2().get("/v1/sessions").set(as(B)).expect(200);
    for (let i = 0; i < 10; i++) await api2().get("/health").expect(200);
  });
});

describe("without keys", () => {
  it("there is no access control and no rate limit", async () => {
    const open = await startApp({ workers: 1, rateLimitMax: 2 });
    try {
      for (let i = 0; i < 5; i++) await request(open.server).get("/v1/sessions").expect(200);
      await request(open.server).get("/v1/sessions").set(as("anything-at-all")).expect(200);
    } finally {
      await open.close();
    }
  });
});
