/**
 * Access hardening (issue 26, item 11), on the loopback interface:
 * - wrong-key guesses are limited per client address (AUTH_FAILURE_MAX per
 *   AUTH_FAILURE_WINDOW_MS): past the limit the address is answered 429 before its key is
 *   checked, even a right one, while another address (127.0.0.2) goes on; a missing header
 *   is no guess; the window ends;
 * - security headers on every answer (JSON, errors, the dashboard page, Swagger UI);
 * - ALLOWED_HOSTS: another Host is 421 (upgrades too), /health answers any;
 * - CORS_ORIGINS: off by default; when set, allowed origins get CORS headers (errors
 *   included) and preflights without a key, other origins none;
 * - the new variables are read from the environment and bad values name the variable.
 */
import { request as httpRequest } from "node:http";
import request from "supertest";
import { describe, expect, it } from "vitest";
import { WebSocket } from "ws";
import { loadConfig } from "../../src/server/config";
import { startApp, useServer } from "../support/server";
import { waitFor } from "../support/wait";

const KEY = "right-key-0000-1111";
const WRONG = "wrong-key-0000-2222";

/** GET path from a given local address of the loopback (127.0.0.x) with headers. */
function getFrom(
  port: number,
  localAddress: string,
  path: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; headers: Record<string, unknown>; body: Record<string, unknown> }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      { host: "127.0.0.1", port, localAddress, path, headers, agent: false },
      (res) => {
        let text = "";
        res.setEncoding("utf8");
        res.on("data", (d: string) => {
          text += d;
        });
        res.on("end", () =>
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            body: text ? JSON.parse(text) : {},
          }),
        );
      },
    );
    req.on("error", reject);
    req.end();
  });
}

const bearer = (key: string) => ({ authorization: `Bearer ${key}` });

describe("wrong-key guesses (AUTH_FAILURE_MAX per address)", () => {
  const server = useServer({ apiKeys: [KEY], authFailureMax: 3, authFailureWindowMs: 600_000 });

  it("past the limit an address gets 429 before any key check; other addresses go on", async () => {
    for (let i = 0; i < 3; i++) {
      const r = await getFrom(server.port, "127.0.0.1", "/v1/sessions", bearer(WRONG));
      expect(r.status).toBe(401);
    }
    const blocked = await getFrom(server.port, "127.0.0.1", "/v1/sessions", bearer(WRONG));
    expect(blocked.status).toBe(429);
    expect(blocked.body).toMatchObject({
      error: "rate_limited",
      details: { limit: "AUTH_FAILURE_MAX", max: 3 },
    });
    expect(Number(blocked.headers["retry-after"])).toBeGreaterThan(0);
    // the right key is not even looked at from this address now
    expect((await getFrom(server.port, "127.0.0.1", "/v1/sessions", bearer(KEY))).status).toBe(429);
    // another address is not affected
    expect((await getFrom(server.port, "127.0.0.2", "/v1/sessions", bearer(KEY))).status).toBe(200);
    expect((await getFrom(server.port, "127.0.0.2", "/v1/sessions", bearer(WRONG))).status).toBe(
      401,
    );
    // probes stay public
    expect((await getFrom(server.port, "127.0.0.1", "/health")).status).toBe(200);
  });

  it("a request without a key is no guess", async () => {
    for (let i = 0; i < 6; i++)
      expect((await getFrom(server.port, "127.0.0.3", "/v1/sessions")).status).toBe(401);
    expect((await getFrom(server.port, "127.0.0.3", "/v1/sessions", bearer(KEY))).status).toBe(200);
  });

  it("a wrong key on a WebSocket upgrade counts too", async () => {
    // from a fresh address (127.0.0.1 is blocked by the test above)
    const statuses: number[] = [];
    for (let i = 0; i < 4; i++)
      statuses.push(
        await new Promise<number>((resolve, reject) => {
          const ws = new WebSocket(`ws://127.0.0.1:${server.port}/v1/sessions/x/stream`, {
            headers: bearer(WRONG),
            localAddress: "127.0.0.4",
          });
          ws.once("unexpected-response", (_req, res) => resolve(res.statusCode ?? 0));
          ws.once("open", () => resolve(101));
          ws.once("error", reject);
        }),
      );
    expect(statuses).toEqual([401, 401, 401, 429]);
  });
});

describe("the failure window ends", () => {
  const server = useServer({ apiKeys: [KEY], authFailureMax: 2, authFailureWindowMs: 300 });

  it("an address blocked by its guesses may try again after AUTH_FAILURE_WINDOW_MS", async () => {
    await getFrom(server.port, "127.0.0.1", "/v1/sessions", bearer(WRONG));
    await getFrom(server.port, "127.0.0.1", "/v1/sessions", bearer(WRONG));
    expect((await getFrom(server.port, "127.0.0.1", "/v1/sessions", bearer(KEY))).status).toBe(429);
    await waitFor(
      async () =>
        (await getFrom(server.port, "127.0.0.1", "/v1/sessions", bearer(KEY))).status === 200,
      5000,
      50,
    );
  });
});

/** The headers every answer carries. */
function expectSecurityHeaders(h: Record<string, unknown>, html: boolean) {
  expect(h["x-content-type-options"]).toBe("nosniff");
  expect(h["x-frame-options"]).toBe("DENY");
  expect(h["referrer-policy"]).toBe("no-referrer");
  expect(h["cross-origin-resource-policy"]).toBe("same-origin");
  expect(h["cross-origin-opener-policy"]).toBe("same-origin");
  const csp = String(h["content-security-policy"]);
  expect(csp).toContain("frame-ancestors 'none'");
  if (html) expect(csp).not.toContain("default-src");
  else expect(csp).toContain("default-src 'none'");
}

describe("security headers", () => {
  const server = useServer({ apiKeys: [KEY] });

  it("on data, errors, the dashboard and the API docs", async () => {
    const api = () => request(server.app.server);
    expectSecurityHeaders((await api().get("/health").expect(200)).headers, false);
    expectSecurityHeaders(
      (await api().get("/v1/sessions").set(bearer(KEY)).expect(200)).headers,
      false,
    );
    expectSecurityHeaders((await api().get("/v1/sessions").expect(401)).headers, false);
    expectSecurityHeaders(
      (await api().get("/nowhere").set(bearer(KEY)).expect(404)).headers,
      false,
    );
    expectSecurityHeaders(
      (await api().post("/v1/sessions").set(bearer(KEY)).send({ model: {} }).expect(400)).headers,
      false,
    );
    // a URL the router cannot decode (Fastify's frameworkErrors)
    expectSecurityHeaders((await api().get("/v1/sessions/%zz").expect(400)).headers, false);
    const page = await api().get("/").expect(200);
    expect(page.headers["content-type"]).toMatch(/^text\/html/);
    expectSecurityHeaders(page.headers, true);
    const docs = await api().get("/docs/").set(bearer(KEY)).redirects(2);
    expect(docs.status).toBe(200);
    expect(docs.headers["content-type"]).toMatch(/^text\/html/);
    expectSecurityHeaders(docs.headers, true);
  });
});

describe("ALLOWED_HOSTS", () => {
  const server = useServer({ allowedHosts: ["moreau.example", "*.moreau.test", "127.0.0.1:1"] });

  it("answers the listed hosts, 421 to others; the probes answer any", async () => {
    const host = (h: string, path = "/v1/sessions") =>
      getFrom(server.port, "127.0.0.1", path, { host: h });
    expect((await host("moreau.example")).status).toBe(200);
    expect((await host("MOREAU.example:8080")).status).toBe(200);
    expect((await host("a.b.moreau.test")).status).toBe(200);
    const evil = await host("evil.example");
    expect(evil.status).toBe(421);
    expect(evil.body).toMatchObject({ error: "misdirected_request" });
    expect(String(evil.body.message)).toContain("ALLOWED_HOSTS");
    expect((await host("moreau.test")).status).toBe(421); // *.moreau.test: subdomains only
    expect((await host(`127.0.0.1:${server.port}`)).status).toBe(421); // only port 1 listed
    expect((await host("evil.example", "/health")).status).toBe(200);
    expect((await host("evil.example", "/ready")).status).toBe(200);
    // WebSocket upgrades too
    const status = await new Promise<number>((resolve, reject) => {
      const ws = new WebSocket(`ws://127.0.0.1:${server.port}/v1/sessions/x/stream`, {
        headers: { host: "evil.example" },
      });
      ws.once("unexpected-response", (_req, res) => resolve(res.statusCode ?? 0));
      ws.once("open", () => resolve(101));
      ws.once("error", reject);
    });
    expect(status).toBe(421);
  });
});

describe("CORS", () => {
  it("is off by default", async () => {
    const app = await startApp({});
    try {
      const r = await request(app.server)
        .get("/v1/sessions")
        .set("origin", "https://app.example")
        .expect(200);
      expect(r.headers["access-control-allow-origin"]).toBeUndefined();
      const pre = await request(app.server)
        .options("/v1/sessions")
        .set("origin", "https://app.example")
        .set("access-control-request-method", "POST");
      expect(pre.headers["access-control-allow-origin"]).toBeUndefined();
    } finally {
      await app.close();
    }
  });

  it("CORS_ORIGINS: allowed origins get CORS headers and keyless preflights; others none", async () => {
    const app = await startApp({ apiKeys: [KEY], corsOrigins: ["https://app.example"] });
    try {
      const api = () => request(app.server);
      const pre = await api()
        .options("/v1/sessions")
        .set("origin", "https://app.example")
        .set("access-control-request-method", "POST")
        .set("access-control-request-headers", "authorization, content-type")
        .expect(204);
      expect(pre.headers["access-control-allow-origin"]).toBe("https://app.example");
      expect(pre.headers["access-control-allow-methods"]).toContain("POST");
      expect(pre.headers["access-control-allow-headers"]).toContain("authorization");
      expect(pre.headers["access-control-allow-headers"]).toContain("content-type");
      expect(pre.headers["access-control-allow-credentials"]).toBeUndefined();

      const ok = await api()
        .get("/v1/sessions")
        .set("origin", "https://app.example")
        .set(bearer(KEY))
        .expect(200);
      expect(ok.headers["access-control-allow-origin"]).toBe("https://app.example");
      expect(ok.headers["access-control-expose-headers"]).toContain("x-request-id");
      expect(ok.headers.vary).toContain("Origin");
      // a browser reads the 401 too
      const denied = await api()
        .get("/v1/sessions")
        .set("origin", "https://app.example")
        .expect(401);
      expect(denied.headers["access-control-allow-origin"]).toBe("https://app.example");

      const other = await api()
        .get("/v1/sessions")
        .set("origin", "https://evil.example")
        .set(bearer(KEY))
        .expect(200);
      expect(other.headers["access-control-allow-origin"]).toBeUndefined();
      const otherPre = await api()
        .options("/v1/sessions")
        .set("origin", "https://evil.example")
        .set("access-control-request-method", "DELETE");
      expect(otherPre.headers["access-control-allow-origin"]).toBeUndefined();
      expect(otherPre.headers["access-control-allow-methods"]).toBeUndefined();
    } finally {
      await app.close();
    }
  });
});

describe("configuration", () => {
  it("reads the new variables; lists are comma-separated; bad values name the variable", () => {
    const c = loadConfig({
      MAX_SUBSCRIBERS_PER_SESSION: "4",
      MAX_SUBSCRIBERS_PER_KEY: "8",
      MAX_SUBSCRIBERS: "16",
      STREAM_FPS: "30",
      STREAM_MAX_FPS: "120",
      MAX_CONNECTIONS: "100",
      HEADERS_TIMEOUT_MS: "5000",
      RECEIVE_TIMEOUT_MS: "20000",
      KEEP_ALIVE_TIMEOUT_MS: "4000",
      CONNECTION_TIMEOUT_MS: "0",
      MAX_DRAIN_BYTES: "1048576",
      AUTH_FAILURE_MAX: "5",
      AUTH_FAILURE_WINDOW_MS: "1000",
      ALLOWED_HOSTS: " moreau.example, *.Moreau.test:8443 ,",
      CORS_ORIGINS: "https://app.example,http://127.0.0.1:5173",
    });
    expect(c).toMatchObject({
      maxSubscribersPerSession: 4,
      maxSubscribersPerKey: 8,
      maxSubscribers: 16,
      streamFps: 30,
      streamMaxFps: 120,
      maxConnections: 100,
      headersTimeoutMs: 5000,
      receiveTimeoutMs: 20_000,
      keepAliveTimeoutMs: 4000,
      connectionTimeoutMs: 0,
      maxDrainBytes: 1_048_576,
      authFailureMax: 5,
      authFailureWindowMs: 1000,
      allowedHosts: ["moreau.example", "*.moreau.test:8443"],
      corsOrigins: ["https://app.example", "http://127.0.0.1:5173"],
    });
    // their defaults: test/server/config.test.ts ("has the documented defaults")
    expect(() => loadConfig({ CORS_ORIGINS: "https://app.example/path" })).toThrow(/CORS_ORIGINS/);
    expect(() => loadConfig({ ALLOWED_HOSTS: "a b" })).toThrow(/ALLOWED_HOSTS/);
    expect(() => loadConfig({ HEADERS_TIMEOUT_MS: "9000", RECEIVE_TIMEOUT_MS: "5000" })).toThrow(
      /HEADERS_TIMEOUT_MS.*RECEIVE_TIMEOUT_MS/,
    );
    expect(() => loadConfig({ STREAM_FPS: "500" })).toThrow(/STREAM_FPS.*STREAM_MAX_FPS/);
  });
});
