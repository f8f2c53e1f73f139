/**
 * Commands on a stream socket (`{ type: "inputs" | "step" }`), with real `ws` clients on
 * 127.0.0.1, under the bounds that hold for the REST routes:
 * - answers obey STREAM_MAX_BUFFERED_BYTES like state frames: a client that stops reading
 *   holds its own commands back (the next one starts once the previous answer is written),
 *   and one that sends on regardless is closed with 1008; an error answer quotes at most
 *   MAX_ECHO_CHARS of a key or value the client sent (a 60 kB unknown key was echoed whole);
 * - a socket has at most MAX_PENDING_COMMANDS commands waiting for their answers, one more
 *   is refused with `too_many_commands` naming the limit, and the commands still queued
 *   when the client goes away are dropped (they kept the worker busy with no one to answer);
 * - every command counts against the key's RATE_LIMIT_MAX budget, as a request does;
 * - ?maxFps below STREAM_MIN_FPS is refused with 400 (a 1e-9 rate overflowed Node's timers:
 *   a 1 ms loop of warnings, and the held frame never sent).
 * No bound depends on the machine's speed: a blocked worker (testHooks) keeps commands
 * queued for as long as the test needs.
 */
import { pack, unpack } from "msgpackr";
import request from "supertest";
import { describe, expect, it } from "vitest";
import { type RawData, WebSocket } from "ws";
import type { MoreauApp } from "../../src/server/app";
import { MAX_ECHO_CHARS } from "../../src/server/errors";
import type { TestHook } from "../../src/server/protocol";
import {
  MAX_PENDING_COMMANDS,
  MESSAGE_TOO_BIG_REASON,
  STREAM_MAX_MESSAGE_BYTES,
  STREAM_MIN_FPS,
} from "../../src/server/stream";
import { FrameClient } from "../support/frames";
import { fallingBody } from "../support/models";
import { useServer } from "../support/server";
import { sleep, waitFor } from "../support/wait";
import { createSession, getState } from "./helpers";

type Message = { type: string; ref?: unknown; [k: string]: unknown };

/** A stream client with request headers that records its decoded JSON messages. */
async function connect(url: string, headers: Record<string, string> = {}) {
  const ws = new WebSocket(url, { headers });
  const messages: Message[] = [];
  ws.on("message", (data: RawData) => messages.push(JSON.parse(data.toString())));
  await new Promise<void>((resolve, reject) => {
    ws.once("open", () => resolve());
    ws.once("error", reject);
    ws.once("unexpected-response", (_req, res) =>
      reject(new Error(`unexpected-response ${res.statusCode}`)),
    );
  });
  const answers = () => messages.filter((m) => m.type !== "scene" && m.type !== "state");
  return { ws, messages, answers };
}

/** The refusal of an upgrade: its status and JSON body. */
function refusal(
  url: string,
): Promise<{ status: number; body: { error: string; message: string; details: unknown } }> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url);
    ws.once("open", () => reject(new Error("upgraded")));
    ws.once("error", reject);
    ws.once("unexpected-response", (_req, res) => {
      let text = "";
      res.setEncoding("utf8");
      res.on("data", (d: string) => {
        text += d;
      });
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) }));
    });
  });
}

/** Blocks worker 0 for `ms` (testHooks): requests to it wait until then. */
const block = (app: MoreauApp, ms: number) =>
  app.moreau.sessions.pool.request(0, {
    kind: "test",
    hook: { action: "block", ms } satisfies TestHook,
  });

/** The server's end of the only stream of a session. */
const serverSocket = (app: MoreauApp, id: string) => {
  const [sub] = app.moreau.sessions.streams.subscribers(id);
  if (!sub) throw new Error("no subscriber");
  return sub.ws;
};

describe("answers and a client that stops reading", () => {
  const server = useServer({ streamMaxBufferedBytes: 64 * 1024 });

  it("an error answer quotes at most MAX_ECHO_CHARS of an unknown key, not all 60 kB of it", async () => {
    const id = await createSession(server.app, fallingBody());
    const c = await connect(`${server.ws}/v1/sessions/${id}/stream?every=1000000`);
    const key = "k".repeat(60_000);
    c.ws.send(JSON.stringify({ type: "step", steps: 1, [key]: 1, ref: 7 }));
    c.ws.send(`{"type":"step","steps":1,"${key}`); // not JSON at all
    await waitFor(() => c.answers().length === 2);
    const [bad, unreadable] = c.answers();
    expect(bad).toMatchObject({ type: "error", ref: 7, error: "invalid_request" });
    const text = JSON.stringify(bad);
    expect(text.length).toBeLessThan(1000);
    expect(text).toContain(`${"k".repeat(MAX_ECHO_CHARS)}…`);
    expect(text).not.toContain("k".repeat(MAX_ECHO_CHARS + 1));
    expect(unreadable).toMatchObject({ type: "error", error: "invalid_request" });
    expect(JSON.stringify(unreadable).length).toBeLessThan(1000);
    c.ws.close();
  });

  it("a message of STREAM_MAX_MESSAGE_BYTES is taken; one byte more closes the socket with 1009", async () => {
    const id = await createSession(server.app, fallingBody());
    const c = await connect(`${server.ws}/v1/sessions/${id}/stream?every=1000000`);
    // an inputs command padded to the limit exactly (JSON whitespace), then to one byte more
    const command = JSON.stringify({
      type: "inputs",
      inputs: [{ type: "bodyState", id: "ball", velocity: [0, 0, 1] }],
      ref: 1,
    });
    const padded = (bytes: number) =>
      `${command.slice(0, -1)}${" ".repeat(bytes - command.length)}}`;
    c.ws.send(padded(STREAM_MAX_MESSAGE_BYTES));
    await waitFor(() => c.answers().length === 1);
    expect(c.answers()[0]).toMatchObject({ type: "inputs", ref: 1, pending: 0 });
    const closed = new Promise<[number, string]>((resolve) =>
      c.ws.once("close", (code, reason) => resolve([code, reason.toString()])),
    );
    c.ws.send(padded(STREAM_MAX_MESSAGE_BYTES + 1));
    // the reason names the bound (ws closed with 1009 alone)
    expect(await closed).toEqual([1009, MESSAGE_TOO_BIG_REASON]);
    expect(MESSAGE_TOO_BIG_REASON).toContain(`${STREAM_MAX_MESSAGE_BYTES} bytes`);
    expect(MESSAGE_TOO_BIG_REASON).toContain("STREAM_MAX_MESSAGE_BYTES");
    // the session is served on: the inputs taken at once (it is not stepping)
    const s = await getState(server.app, id);
    expect(s.bodies[0].velocity).toEqual([0, 0, 1]);
  });

  it("the audit's flood (a paused reader sent 60 kB unknown keys) buffers no more than the bound", async () => {
    const id = await createSession(server.app, fallingBody());
    const c = await connect(`${server.ws}/v1/sessions/${id}/stream?every=1000000`);
    await waitFor(() => c.messages.length === 2); // scene, step 0
    const ws = serverSocket(server.app, id);
    c.ws.pause(); // reads nothing from now on
    const limit = server.app.moreau.config.streamMaxBufferedBytes;
    let maxBuffered = 0;
    const sampler = setInterval(() => {
      maxBuffered = Math.max(maxBuffered, ws.bufferedAmount);
    }, 2);
    // 400 × 60 kB = 24 MB of answers before: more than loopback's socket buffers hold
    const message = JSON.stringify({ type: "step", steps: 1, ["k".repeat(60_000)]: 1 });
    try {
      for (let i = 0; i < 400; i++) {
        c.ws.send(message);
        if (i % 50 === 49) await waitFor(() => c.ws.bufferedAmount === 0, 20_000);
      }
      await waitFor(() => c.ws.bufferedAmount === 0, 20_000);
      await sleep(200);
    } finally {
      clearInterval(sampler);
    }
    maxBuffered = Math.max(maxBuffered, ws.bufferedAmount);
    expect(maxBuffered).toBeLessThanOrEqual(limit + 1000);
    c.ws.terminate();
  });

  /**
   * A session of 500 particles (a bodies-only frame is about 75 kB) streamed to a client
   * that stopped reading, stepped until the server's socket holds more than
   * STREAM_MAX_BUFFERED_BYTES (loopback's buffers full first), or 50 requests.
   */
  async function pausedReaderSocketFull() {
    const bodies = Array.from({ length: 500 }, (_, i) => ({
      id: `p${i}`,
      kind: "particle",
      mass: 1,
      position: [i, 0, 0],
    }));
    const id = await createSession(server.app, { bodies, solver: { dt: 0.01 } });
    const c = await connect(`${server.ws}/v1/sessions/${id}/stream?fields=bodies&maxFps=240`);
    await waitFor(() => c.messages.length === 2);
    const ws = serverSocket(server.app, id);
    const limit = server.app.moreau.config.streamMaxBufferedBytes;
    c.ws.pause();
    for (let i = 0; i < 50 && ws.bufferedAmount <= limit; i++)
      await request(server.app.server).post(`/v1/sessions/${id}/step`).send({ steps: 50 });
    return { id, c, ws, limit };
  }

  it("a paused reader holds its commands back; sending on regardless closes the socket with 1008", async () => {
    const { id, c, ws, limit } = await pausedReaderSocketFull();
    expect(ws.bufferedAmount).toBeGreaterThan(limit);
    const before = (await getState(server.app, id)).step;
    // the first command runs, its answer waits for the client to read, the others wait behind
    for (let i = 0; i < MAX_PENDING_COMMANDS; i++)
      c.ws.send(JSON.stringify({ type: "step", steps: 1, ref: i }));
    await sleep(300);
    expect((await getState(server.app, id)).step).toBe(before + 1);
    expect(ws.readyState).toBe(WebSocket.OPEN);
    // one more, with nothing read: no room for it nor for its refusal
    c.ws.send(JSON.stringify({ type: "step", steps: 1, ref: "over" }));
    await waitFor(() => ws.readyState === WebSocket.CLOSED, 10_000);
    await sleep(200);
    // the commands it left queued never ran
    expect((await getState(server.app, id)).step).toBe(before + 1);
    c.ws.terminate();
  });

  it("a client that reads again gets every answer, in order, after the frames of its steps", async () => {
    const { id, c } = await pausedReaderSocketFull();
    const before = (await getState(server.app, id)).step;
    for (let i = 0; i < 5; i++) c.ws.send(JSON.stringify({ type: "step", steps: 1, ref: i }));
    await sleep(200);
    c.ws.resume();
    await waitFor(() => c.answers().length === 5, 20_000);
    expect(c.answers()).toEqual(
      [1, 2, 3, 4, 5].map((k, i) =>
        expect.objectContaining({ type: "stepped", ref: i, step: before + k }),
      ),
    );
    // each answer follows the frame of its step
    for (const a of c.answers()) {
      const at = c.messages.indexOf(a);
      const frame = c.messages.slice(0, at).findLast((m) => m.type === "state");
      expect(frame?.step).toBe(a.step);
    }
    c.ws.close();
  });
});

describe("a refused command names what and where", () => {
  const server = useServer();

  it("its message quotes the issues with their paths, as a REST 400 does; the session is untouched", async () => {
    const id = await createSession(server.app, fallingBody());
    const c = await connect(`${server.ws}/v1/sessions/${id}/stream?every=1000000`);
    await waitFor(() => c.messages.length === 2);
    const sent = [
      {
        type: "inputs",
        inputs: [{ type: "bodyState", id: "ball", velocity: [0, "1", 0] }],
        ref: 1,
      },
      { type: "inputs", inputs: [{ type: "impulse", id: "ball" }], ref: 2, extra: 1 },
      { type: "step", steps: 0, ref: 3 },
      { type: "run", ref: 4 },
    ];
    for (const m of sent) c.ws.send(JSON.stringify(m));
    await waitFor(() => c.answers().length === sent.length);
    const [wrongType, unknownKey, zeroSteps, unknownType] = c.answers();
    expect(wrongType).toMatchObject({
      type: "error",
      ref: 1,
      error: "invalid_request",
      message:
        "invalid message: inputs.0.velocity.1: Invalid input: expected number, received string",
      details: { issues: [{ path: ["inputs", 0, "velocity", 1] }] },
    });
    expect(unknownKey).toMatchObject({
      ref: 2,
      message: 'invalid message: (root): Unrecognized key: "extra"',
    });
    expect(zeroSteps).toMatchObject({ ref: 3, error: "invalid_request" });
    expect(zeroSteps.message).toMatch(
      /^invalid message: steps: Too small: expected number to be >=1$/,
    );
    expect(unknownType).toMatchObject({ ref: 4, error: "invalid_request" });
    expect(unknownType.message).toMatch(/^invalid message: type: /);
    // the REST route's message for the same input, for comparison
    const rest = await request(server.app.server)
      .post(`/v1/sessions/${id}/inputs`)
      .send({ inputs: [{ type: "bodyState", id: "ball", velocity: [0, "1", 0] }] });
    expect(rest.status).toBe(400);
    expect(String(wrongType.message).replace(/^invalid message: /, "")).toBe(
      rest.body.message.replace(/^invalid body: /, ""),
    );
    // nothing reached the session: it is where it was created, with no input recorded
    const s = await getState(server.app, id);
    expect(s.step).toBe(0);
    expect(s.bodies[0].velocity).toEqual([0, 0, 0]);
    const rec = await request(server.app.server).get(`/v1/sessions/${id}/recording`);
    expect(rec.body.inputs).toEqual([]);
    c.ws.close();
  });

  it("in msgpack, NaN and Infinity (which JSON cannot carry) are refused at their paths, named in the message", async () => {
    const id = await createSession(server.app, fallingBody());
    const ws = new WebSocket(`${server.ws}/v1/sessions/${id}/stream?every=1000000&format=msgpack`);
    const answers: Message[] = [];
    ws.on("message", (data: RawData) => {
      const m = unpack(data as Buffer) as Message;
      if (m.type !== "scene" && m.type !== "state") answers.push(m);
    });
    await new Promise<void>((resolve, reject) => {
      ws.once("open", () => resolve());
      ws.once("error", reject);
    });
    ws.send(
      pack({
        type: "inputs",
        inputs: [{ type: "impulse", id: "ball", impulse: [0, Number.NaN, 0] }],
        ref: 1,
      }),
    );
    ws.send(pack({ type: "step", steps: Number.POSITIVE_INFINITY, ref: 2 }));
    await waitFor(() => answers.length === 2);
    expect(answers[0]).toMatchObject({
      ref: 1,
      error: "invalid_request",
      message: "invalid message: inputs.0.impulse.1: Invalid input: expected number, received NaN",
      details: { issues: [{ path: ["inputs", 0, "impulse", 1] }] },
    });
    expect(answers[1]).toMatchObject({
      ref: 2,
      error: "invalid_request",
      message: "invalid message: steps: Invalid input: expected number, received Infinity",
    });
    expect((await getState(server.app, id)).step).toBe(0);
    ws.close();
  });
});

describe("the command queue", () => {
  const server = useServer({ testHooks: true });

  it("holds MAX_PENDING_COMMANDS commands; one more is refused at once naming the limit", async () => {
    const id = await createSession(server.app, fallingBody());
    const c = await connect(`${server.ws}/v1/sessions/${id}/stream?every=1000000`);
    await waitFor(() => c.messages.length === 2);
    const blocked = block(server.app, 3000);
    const n = MAX_PENDING_COMMANDS + 3;
    for (let i = 0; i < n; i++) c.ws.send(JSON.stringify({ type: "step", steps: 1, ref: i }));
    // the refusals come while the worker is still blocked
    await waitFor(() => c.answers().length === 3);
    expect(c.answers()).toEqual(
      [0, 1, 2].map((k) =>
        expect.objectContaining({
          type: "error",
          ref: MAX_PENDING_COMMANDS + k,
          error: "too_many_commands",
          details: { limit: "MAX_PENDING_COMMANDS", max: MAX_PENDING_COMMANDS },
        }),
      ),
    );
    expect(String(c.answers()[0].message)).toContain(`${MAX_PENDING_COMMANDS}`);
    await blocked;
    await waitFor(() => c.answers().length === n, 20_000);
    expect(c.answers().slice(3)).toEqual(
      Array.from({ length: MAX_PENDING_COMMANDS }, (_, i) =>
        expect.objectContaining({ type: "stepped", ref: i, step: i + 1 }),
      ),
    );
    c.ws.close();
  });

  it("drops the commands still queued when the client goes away (the running one finishes)", async () => {
    const id = await createSession(server.app, fallingBody());
    const c = await connect(`${server.ws}/v1/sessions/${id}/stream?every=1000000`);
    await waitFor(() => c.messages.length === 2);
    const ws = serverSocket(server.app, id);
    let received = 0;
    ws.on("message", () => {
      received++;
    });
    const blocked = block(server.app, 3000);
    for (let i = 0; i < 20; i++) c.ws.send(JSON.stringify({ type: "step", steps: 50, ref: i }));
    await waitFor(() => received === 20);
    c.ws.terminate();
    await waitFor(
      async () =>
        (await request(server.app.server).get(`/v1/sessions/${id}`)).body.subscribers === 0,
    );
    await blocked;
    // the command running when the client left (waiting on the worker) finishes
    await waitFor(async () => (await getState(server.app, id)).step === 50, 10_000);
    await sleep(500);
    expect((await getState(server.app, id)).step).toBe(50);
  });
});

describe("the server-wide bound on queued command bytes (STREAM_COMMANDS_MAX_BYTES)", () => {
  const maxBytes = 64 * 1024;
  const server = useServer({ testHooks: true, workers: 1, streamCommandsMaxBytes: maxBytes });

  it("a command that would pass it is refused at once naming it; the socket and the server go on", async () => {
    const id = await createSession(server.app, fallingBody());
    const a = await connect(`${server.ws}/v1/sessions/${id}/stream?every=1000000`);
    const b = await connect(`${server.ws}/v1/sessions/${id}/stream?every=1000000`);
    await waitFor(() => a.messages.length === 2 && b.messages.length === 2);
    // a step command padded with JSON whitespace to 30 000 bytes (each socket's own bound,
    // MAX_PENDING_COMMANDS, is far off: 2 and 1 messages)
    const big = (ref: string) => {
      const text = JSON.stringify({ type: "step", steps: 1, ref });
      return text + " ".repeat(30_000 - text.length);
    };
    const blocked = block(server.app, 3000);
    a.ws.send(big("a0"));
    a.ws.send(big("a1"));
    // 60 000 bytes held on a (the first waiting on the blocked worker): 30 000 more would pass
    await sleep(200);
    b.ws.send(big("b0"));
    await waitFor(() => b.answers().length === 1);
    expect(b.answers()[0]).toEqual({
      type: "error",
      ref: "b0",
      error: "too_many_commands",
      message: expect.stringContaining(`${maxBytes} bytes (STREAM_COMMANDS_MAX_BYTES)`),
      details: {
        limit: "STREAM_COMMANDS_MAX_BYTES",
        maxBytes,
        heldBytes: 60_000,
        bytes: 30_000,
      },
    });
    // a small one still fits, on the same socket
    b.ws.send(JSON.stringify({ type: "step", steps: 1, ref: "b1" }));
    await blocked;
    await waitFor(() => a.answers().length === 2 && b.answers().length === 2, 20_000);
    expect(a.answers().map((m) => [m.type, m.ref])).toEqual([
      ["stepped", "a0"],
      ["stepped", "a1"],
    ]);
    expect(b.answers()[1]).toMatchObject({ type: "stepped", ref: "b1" });
    // the bytes are given back with the answers: the refused command goes through now
    b.ws.send(big("b2"));
    await waitFor(() => b.answers().length === 3);
    expect(b.answers()[2]).toMatchObject({ type: "stepped", ref: "b2", step: 4 });
    expect(b.ws.readyState).toBe(WebSocket.OPEN);
    expect((await getState(server.app, id)).step).toBe(4);
    a.ws.close();
    b.ws.close();
  });
});

describe("commands and the per-key rate limit", () => {
  const KEY_A = "key-aaaa-0000-1111";
  const KEY_B = "key-bbbb-0000-2222";
  const bearer = (key: string) => ({ authorization: `Bearer ${key}` });
  const server = useServer({
    apiKeys: [KEY_A, KEY_B],
    rateLimitMax: 10,
    rateLimitWindowMs: 600_000,
  });

  it("each command counts as a request: past RATE_LIMIT_MAX it is answered rate_limited, not run", async () => {
    const id = (
      await request(server.app.server)
        .post("/v1/sessions")
        .set(bearer(KEY_A))
        .send({ model: fallingBody() })
        .expect(201)
    ).body.id as string; // 1
    const c = await connect(`${server.ws}/v1/sessions/${id}/stream?every=1000000`, bearer(KEY_A)); // 2
    for (let i = 0; i < 12; i++) c.ws.send(JSON.stringify({ type: "step", steps: 1, ref: i })); // 3..14
    await waitFor(() => c.answers().length === 12, 20_000);
    const answers = c.answers();
    expect(answers.slice(0, 8)).toEqual(
      Array.from({ length: 8 }, (_, i) =>
        expect.objectContaining({ type: "stepped", ref: i, step: i + 1 }),
      ),
    );
    for (const [k, a] of answers.slice(8).entries()) {
      expect(a).toMatchObject({
        type: "error",
        ref: 8 + k,
        error: "rate_limited",
        details: { limit: 10 },
      });
      expect(String(a.message)).toContain("RATE_LIMIT_MAX");
    }
    // the REST routes share the budget, spent
    await request(server.app.server).get(`/v1/sessions/${id}`).set(bearer(KEY_A)).expect(429);
    // another key goes on
    await request(server.app.server).get("/v1/sessions").set(bearer(KEY_B)).expect(200);
    c.ws.close();
  });
});

describe("?maxFps's lower bound", () => {
  const server = useServer({});

  it(`below STREAM_MIN_FPS (${STREAM_MIN_FPS}) is refused with 400 naming the parameter and the bound`, async () => {
    const id = await createSession(server.app, fallingBody());
    for (const fps of ["1e-9", String(STREAM_MIN_FPS / 2)]) {
      const r = await refusal(`${server.ws}/v1/sessions/${id}/stream?maxFps=${fps}`);
      expect(r.status).toBe(400);
      expect(r.body).toMatchObject({ error: "invalid_request" });
      expect(r.body.message).toContain("maxFps");
      expect(r.body.message).toContain(String(STREAM_MIN_FPS));
      expect(JSON.stringify(r.body.details)).toContain("maxFps");
    }
    const c = new FrameClient(`${server.ws}/v1/sessions/${id}/stream?maxFps=${STREAM_MIN_FPS}`);
    await c.open();
    await c.waitForMessages(2);
    c.close();
  });
});
