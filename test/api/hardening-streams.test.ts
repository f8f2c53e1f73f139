/**
 * WebSocket fan-out limits (issue 26, item 6), with real `ws` clients on 127.0.0.1:
 * - MAX_SUBSCRIBERS_PER_SESSION, MAX_SUBSCRIBERS_PER_KEY and MAX_SUBSCRIBERS refuse the
 *   upgrade with 429 `too_many_subscribers` naming the limit; a closed stream frees its place;
 * - upgrades count in the per-key rate limit (RATE_LIMIT_MAX);
 * - a stream gets at most STREAM_FPS (or ?maxFps) frames per second of wall time: on a
 *   fast step request the frames over it are skipped and counted in `dropped` (every step
 *   accounted for), the last step's frame still arrives, and an answer on the socket comes
 *   after the frame of its last step; ?maxFps over STREAM_MAX_FPS is refused with 400.
 * The frame-rate bounds are computed from the measured wall time, so a slow machine only
 * loosens them.
 */
import request from "supertest";
import { describe, expect, it } from "vitest";
import { WebSocket } from "ws";
import { RATE_BURST_SECONDS } from "../../src/server/stream";
import { FrameClient } from "../support/frames";
import { fallingBody } from "../support/models";
import { useServer } from "../support/server";
import { waitFor } from "../support/wait";

const KEY_A = "key-aaaa-0000-1111";
const KEY_B = "key-bbbb-0000-2222";
const bearer = (key: string) => ({ authorization: `Bearer ${key}` });

/** Opens a stream with headers; resolves the open socket, or the refusal's status and body. */
function upgrade(
  url: string,
  headers: Record<string, string> = {},
): Promise<{ ws: WebSocket } | { status: number; body: Record<string, unknown> }> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, { headers });
    ws.once("open", () => resolve({ ws }));
    ws.once("unexpected-response", (_req, res) => {
      let text = "";
      res.setEncoding("utf8");
      res.on("data", (d: string) => {
        text += d;
      });
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) }));
    });
    ws.once("error", reject);
  });
}

/** The message of a refusal. */
function messageOf(r: Awaited<ReturnType<typeof upgrade>>): string {
  return "body" in r ? String(r.body.message) : "";
}

async function open(url: string, headers: Record<string, string> = {}): Promise<WebSocket> {
  const r = await upgrade(url, headers);
  if (!("ws" in r)) throw new Error(`refused: ${r.status} ${JSON.stringify(r.body)}`);
  return r.ws;
}

describe("subscriber caps", () => {
  const server = useServer({
    apiKeys: [KEY_A, KEY_B],
    maxSubscribersPerSession: 2,
    maxSubscribersPerKey: 3,
    maxSubscribers: 4,
  });

  const create = async (key: string) =>
    (
      await request(server.app.server)
        .post("/v1/sessions")
        .set(bearer(key))
        .send({ model: fallingBody() })
        .expect(201)
    ).body.id as string;

  it("per session, per key and per server, each refusal naming its limit; a closed stream frees its place", async () => {
    const [a, b, c] = [await create(KEY_A), await create(KEY_A), await create(KEY_B)];
    const url = (id: string) => `${server.ws}/v1/sessions/${id}/stream`;
    const open1 = await open(url(a), bearer(KEY_A));
    await open(url(a), bearer(KEY_A));
    const third = await upgrade(url(a), bearer(KEY_A));
    expect(third).toMatchObject({
      status: 429,
      body: {
        error: "too_many_subscribers",
        details: { limit: "MAX_SUBSCRIBERS_PER_SESSION", max: 2 },
      },
    });
    expect(messageOf(third)).toContain("MAX_SUBSCRIBERS_PER_SESSION");

    await open(url(b), bearer(KEY_A)); // the key's third
    expect(await upgrade(url(b), bearer(KEY_A))).toMatchObject({
      status: 429,
      body: {
        error: "too_many_subscribers",
        details: { limit: "MAX_SUBSCRIBERS_PER_KEY", max: 3 },
      },
    });

    await open(url(c), bearer(KEY_B)); // the server's fourth
    expect(await upgrade(url(c), bearer(KEY_B))).toMatchObject({
      status: 429,
      body: { error: "too_many_subscribers", details: { limit: "MAX_SUBSCRIBERS", max: 4 } },
    });
    const s = await request(server.app.server)
      .get(`/v1/sessions/${a}`)
      .set(bearer(KEY_A))
      .expect(200);
    expect(s.body.subscribers).toBe(2);

    // a place comes back when a stream closes
    open1.close();
    const again = await waitFor(async () => {
      const r = await upgrade(url(c), bearer(KEY_B));
      return "ws" in r ? r.ws : null;
    });
    expect(again.readyState).toBe(WebSocket.OPEN);
  });
});

describe("upgrades and the per-key rate limit", () => {
  const server = useServer({
    apiKeys: [KEY_A, KEY_B],
    rateLimitMax: 4,
    rateLimitWindowMs: 600_000,
  });

  it("each upgrade counts: past RATE_LIMIT_MAX the next one is 429 rate_limited", async () => {
    const id = (
      await request(server.app.server)
        .post("/v1/sessions")
        .set(bearer(KEY_A))
        .send({ model: fallingBody() })
        .expect(201)
    ).body.id as string; // 1
    const url = `${server.ws}/v1/sessions/${id}/stream`;
    for (let i = 0; i < 3; i++) (await open(url, bearer(KEY_A))).close(); // 2, 3, 4
    expect(await upgrade(url, bearer(KEY_A))).toMatchObject({
      status: 429,
      body: { error: "rate_limited" },
    });
    await request(server.app.server).get(`/v1/sessions/${id}`).set(bearer(KEY_A)).expect(429);
    // another key goes on
    await request(server.app.server).get("/v1/sessions").set(bearer(KEY_B)).expect(200);
  });
});

describe("frame rate", () => {
  const STREAM_FPS = 5;
  const server = useServer({ streamFps: STREAM_FPS, streamMaxFps: 50 });

  /** Steps `steps` at once with a subscriber at `query`; checks the rate bound and accounting. */
  async function fastStep(query: string, fps: number, steps: number) {
    const id = (
      await request(server.app.server)
        .post("/v1/sessions")
        .send({ model: fallingBody({ z0: 1e4 }) })
    ).body.id as string;
    const t0 = performance.now();
    const c = new FrameClient(`${server.ws}/v1/sessions/${id}/stream${query}`);
    await c.open();
    await c.waitForMessages(2); // scene, step 0
    await request(server.app.server).post(`/v1/sessions/${id}/step`).send({ steps }).expect(200);
    // the frame of the last step arrives (sent when the rate allows)
    await waitFor(async () => c.states().at(-1)?.step === steps, 10_000);
    const seconds = (performance.now() - t0) / 1000;
    const states = c.states();
    // every step accounted for: received, or counted in the next frame's `dropped`
    expect(states.length + states.reduce((n, f) => n + f.dropped, 0)).toBe(steps + 1);
    for (let i = 1; i < states.length; i++)
      expect(states[i].dropped).toBe(states[i].step - states[i - 1].step - 1);
    // at most the burst plus the rate over the time it took (+ the first frame, + 1 of slack)
    expect(states.length).toBeLessThanOrEqual(fps * RATE_BURST_SECONDS + fps * seconds + 2);
    expect(states.length).toBeLessThan(steps / 4);
    c.close();
    await request(server.app.server).delete(`/v1/sessions/${id}`).expect(204);
  }

  it("STREAM_FPS by default: a 2000-step request sends a few frames, counts the rest, ends on the last", async () => {
    await fastStep("", STREAM_FPS, 2000);
  });

  it("?maxFps chooses another rate, up to STREAM_MAX_FPS", async () => {
    await fastStep("?maxFps=20&fields=bodies", 20, 2000);
  });

  it("a short request within the burst gets every frame", async () => {
    const id = (
      await request(server.app.server).post("/v1/sessions").send({ model: fallingBody() })
    ).body.id as string;
    const c = new FrameClient(`${server.ws}/v1/sessions/${id}/stream`);
    await c.open();
    await c.waitForMessages(2);
    await request(server.app.server).post(`/v1/sessions/${id}/step`).send({ steps: 5 }).expect(200);
    await c.waitForMessages(7);
    expect(c.states().map((f) => [f.step, f.dropped])).toEqual([
      [0, 0],
      [1, 0],
      [2, 0],
      [3, 0],
      [4, 0],
      [5, 0],
    ]);
    c.close();
  });

  it("an answer on the socket comes after the frame of its last step, even one held back", async () => {
    const id = (
      await request(server.app.server)
        .post("/v1/sessions")
        .send({ model: fallingBody({ z0: 1e4 }) })
    ).body.id as string;
    const c = new FrameClient(`${server.ws}/v1/sessions/${id}/stream?maxFps=0.5`);
    await c.open();
    await c.waitForMessages(2);
    c.ws.send(JSON.stringify({ type: "step", steps: 300, ref: 1 }));
    await waitFor(async () => c.messages.some((m) => (m as { type: string }).type === "stepped"));
    const at = c.messages.findIndex((m) => (m as { type: string }).type === "stepped");
    const before = c.messages.slice(0, at).filter((m) => (m as { type: string }).type === "state");
    expect((before.at(-1) as { step: number }).step).toBe(300);
    expect(c.messages[at]).toMatchObject({ type: "stepped", ref: 1, step: 300 });
    c.close();
  });

  it("messages on the socket are answered in the order they arrive, invalid ones too", async () => {
    const id = (
      await request(server.app.server)
        .post("/v1/sessions")
        .send({ model: fallingBody({ z0: 1e4 }) })
    ).body.id as string;
    const c = new FrameClient(`${server.ws}/v1/sessions/${id}/stream?fields=energy`);
    await c.open();
    await c.waitForMessages(2);
    c.ws.send(JSON.stringify({ type: "step", steps: 200, ref: 1 }));
    c.ws.send(JSON.stringify({ type: "bogus", ref: 2 }));
    c.ws.send("not json");
    c.ws.send(JSON.stringify({ type: "step", steps: 1, ref: 4 }));
    const answers = () =>
      c.messages.filter((m) => ["stepped", "error"].includes((m as { type: string }).type));
    await waitFor(async () => answers().length === 4);
    expect(answers()).toMatchObject([
      { type: "stepped", ref: 1, step: 200 },
      { type: "error", ref: 2, error: "invalid_request" },
      { type: "error", error: "invalid_request" },
      { type: "stepped", ref: 4, step: 201 },
    ]);
    c.close();
  });

  it("?maxFps over STREAM_MAX_FPS, or not > 0, is refused with 400 before the upgrade", async () => {
    const id = (
      await request(server.app.server).post("/v1/sessions").send({ model: fallingBody() })
    ).body.id as string;
    const over = await upgrade(`${server.ws}/v1/sessions/${id}/stream?maxFps=51`);
    expect(over).toMatchObject({ status: 400, body: { error: "invalid_request" } });
    expect(messageOf(over)).toContain("STREAM_MAX_FPS");
    expect(await upgrade(`${server.ws}/v1/sessions/${id}/stream?maxFps=0`)).toMatchObject({
      status: 400,
    });
    expect(await upgrade(`${server.ws}/v1/sessions/${id}/stream?maxFps=fast`)).toMatchObject({
      status: 400,
    });
  });
});
