/**
 * Hostile input on the live surface, while sessions run: inputs and PATCHes mutated at
 * random places (fast-check) to a running session, random bytes, msgpack and JSON text on
 * its WebSocket, and the findings of the audit that made this file:
 *
 * - a model whose energy overflows double precision (`"velocity": [1e300, 0, 0]`, a spring's
 *   `"restLength": 1e300`) was created (201) with an energy reference of Infinity, which its
 *   snapshot wrote as null: GET /snapshot gave a document POST /v1/sessions refused
 *   (`snapshot.simulation.memory.energyReference: expected number, received null`), so its
 *   checkpoint could not bring it back after a restart or a worker loss. Now 400 naming it:
 *   the body, force or joint and its field (a box `"halfExtents"` of 1e308 too, whose
 *   inertia overflows: it was refused at ["model"] with a message naming a mass, velocity,
 *   stiffness, rest length or height).
 * - `POST /run {"realtimeFactor": 1e-300}` (valid: positive) armed the run pump's timer for
 *   5e300 ms, which Node fires after 1 ms with a TimeoutOverflowWarning: the worker woke
 *   every millisecond, warning each time, for as long as the run lasted.
 *
 * Every answer is a 2xx or a 4xx with the service's error body (issue paths for
 * validation), never a 5xx; no worker is restarted (moreau_worker_restarts_total); a
 * bystander session running meanwhile keeps stepping, untouched. Loopback only; bounded
 * run counts (~10 s).
 */
import fc from "fast-check";
import { pack } from "msgpackr";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import type { WorkerOutbound } from "../../src/server/protocol";
import { WorkerRuntime } from "../../src/server/worker-runtime";
import { FrameClient } from "../support/frames";
import { sample } from "../support/metrics";
import { fallingBody, rodPendulum, springParticle } from "../support/models";
import { startServer, type TestServer } from "../support/server";
import { waitFor } from "../support/wait";

let server: TestServer;
let bystander: string;
let bystanderStep = 0;

async function call(method: string, path: string, body?: unknown, raw?: string) {
  const r = await fetch(`${server.url}${path}`, {
    method,
    headers: body === undefined && raw === undefined ? {} : { "content-type": "application/json" },
    body: raw ?? (body === undefined ? undefined : JSON.stringify(body)),
  });
  const text = await r.text();
  return { status: r.status, text, json: () => JSON.parse(text) };
}

/** A 2xx, or a 4xx with { error, message } and well-formed issues; never a 5xx. */
function checkAnswer(r: { status: number; text: string }, what: string) {
  expect(r.status, `${what} → ${r.status} ${r.text.slice(0, 300)}`).toBeLessThan(500);
  if (r.status < 400) return;
  const body = JSON.parse(r.text);
  expect(typeof body.error, what).toBe("string");
  expect(body.message.length, what).toBeGreaterThan(0);
  for (const i of body.details?.issues ?? []) {
    expect(Array.isArray(i.path), what).toBe(true);
    expect(typeof i.message, what).toBe("string");
  }
}

async function create(model: unknown): Promise<string> {
  const r = await call("POST", "/v1/sessions", { model });
  expect(r.status, r.text).toBe(201);
  return r.json().id as string;
}

async function restarts(): Promise<number> {
  return sample(
    await (await fetch(`${server.url}/metrics`)).text(),
    "moreau_worker_restarts_total",
  );
}

/** The bystander is running and has stepped since the last look. */
async function bystanderMoves(): Promise<void> {
  const before = bystanderStep;
  bystanderStep = await waitFor(async () => {
    const s = (await call("GET", `/v1/sessions/${bystander}`)).json();
    expect(s.status).toBe("running");
    return s.step > before ? (s.step as number) : null;
  });
}

beforeAll(async () => {
  server = await startServer({ workers: 2, requestTimeoutMs: 5000 });
  bystander = await create(springParticle({ name: "bystander", dt: 0.001 }));
  expect((await call("POST", `/v1/sessions/${bystander}/run`, { realtimeFactor: 1 })).status).toBe(
    202,
  );
});
afterAll(async () => {
  await bystanderMoves();
  expect(await restarts()).toBe(0);
  await server.app.close();
});

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };

/** Replacement values a hostile client would try. */
const hostile: fc.Arbitrary<Json> = fc.oneof(
  fc.constantFrom<Json>(
    "NaN",
    "Infinity",
    "1e999",
    -1,
    0,
    1e300,
    -1e300,
    5e-324,
    1e8,
    2 ** 53 + 2,
    null,
    true,
    "",
    "ghost",
    "ball",
    "rod",
    "servo",
    [],
    {},
    [0, 0, 0],
    [0, 0, 0, 0],
    [1e300, 1e300, 1e300],
    [1e-320, 0, 0, 0],
    new Array(2000).fill(1),
  ),
  fc.double(),
  fc.integer(),
  fc.string({ maxLength: 20 }),
);

/** `v` with the value at one of its paths (chosen by `at`) replaced by `value`, or a key added. */
function mutate(v: Json, at: number, value: Json, addKey: boolean): Json {
  const copy = JSON.parse(JSON.stringify(v)) as Json;
  const slots: [Record<string | number, Json>, string | number][] = [];
  const walk = (x: Json) => {
    if (x === null || typeof x !== "object") return;
    const parent = x as Record<string | number, Json>;
    for (const k of Object.keys(x)) {
      slots.push([parent, Array.isArray(x) ? Number(k) : k]);
      walk(parent[k]);
    }
  };
  walk(copy);
  const [parent, key] = slots[at % slots.length];
  if (addKey && !Array.isArray(parent)) parent.unknownKey = value;
  else parent[key] = value;
  return copy;
}

describe("mid-run", () => {
  it("inputs and PATCHes mutated at random to a running session: 200, 4xx with paths, or diverged", async () => {
    const target = await create(
      rodPendulum({
        mass: 1,
        length: 1,
        axis: [0, 1, 0],
        servo: { type: "position", kp: 50, kd: 5 },
        solver: { dt: 0.005 },
      }),
    );
    const valid: Json[] = [
      { inputs: [{ type: "actuator", id: "servo", value: 0.5 }] },
      {
        inputs: [{ type: "bodyState", id: "rod", velocity: [0, 0, 1], angularVelocity: [0, 1, 0] }],
      },
      {
        inputs: [{ type: "impulse", id: "rod", impulse: [0, 0, 1], point: [0.5, 0, 0] }],
        step: 1_000_000,
      },
      { gravity: [0, 0, -1], solver: { velocityDamping: 0.01 } },
    ];
    await fc.assert(
      fc.asyncProperty(
        fc.nat(valid.length - 1),
        fc.nat(),
        hostile,
        fc.boolean(),
        async (which, at, value, addKey) => {
          const s = (await call("GET", `/v1/sessions/${target}`)).json();
          expect(s.status, s.message).not.toBe("error");
          if (s.status === "diverged") await call("POST", `/v1/sessions/${target}/reset`);
          if (s.status !== "running")
            await call("POST", `/v1/sessions/${target}/run`, { realtimeFactor: 1 });
          const body = mutate(valid[which], at, value, addKey);
          const patch = which === valid.length - 1;
          const r = await call(
            patch ? "PATCH" : "POST",
            patch ? `/v1/sessions/${target}` : `/v1/sessions/${target}/inputs`,
            body,
          );
          checkAnswer(r, JSON.stringify(body).slice(0, 200));
        },
      ),
      { numRuns: 120, seed: 20261206 },
    );
    const s = (await call("GET", `/v1/sessions/${target}`)).json();
    expect(["running", "diverged"]).toContain(s.status);
    await bystanderMoves();
  }, 60_000);
});

describe("the WebSocket", () => {
  it("random bytes, msgpack and JSON text: an answer to each, the socket open, the session intact", async () => {
    const id = await create(fallingBody({ name: "ws-target" }));
    const ws = new FrameClient(`${server.ws}/v1/sessions/${id}/stream?fields=energy`);
    await ws.open();
    const answers = () =>
      ws.messages.filter((m) => {
        const t = (m as { type: string }).type;
        return t === "error" || t === "inputs" || t === "stepped";
      }).length;
    const messages = fc.sample(
      fc.oneof(
        fc.uint8Array({ maxLength: 64 }).map((b) => Buffer.from(b)),
        fc.jsonValue({ maxDepth: 4 }).map((v) => pack(v)),
        fc.jsonValue({ maxDepth: 4 }).map((v) => JSON.stringify(v)),
        fc.string({ maxLength: 40 }),
        fc.tuple(fc.nat(), hostile, fc.boolean()).map(([at, v, add]) =>
          JSON.stringify(
            mutate(
              {
                type: "inputs",
                inputs: [{ type: "bodyState", id: "ball", velocity: [0, 0, 1] }],
              },
              at,
              v,
              add,
            ),
          ),
        ),
      ),
      { numRuns: 150, seed: 7 },
    );
    // and the extremes: nesting past any stack, a frame of 0xc1 (never used), huge lengths
    messages.push(
      `${"[".repeat(30_000)}${"]".repeat(30_000)}`,
      Buffer.concat([Buffer.alloc(60_000, 0x91), Buffer.from([0xc0])]),
      Buffer.from([0xc1]),
      Buffer.from([0xdd, 0xff, 0xff, 0xff, 0xff]),
      Buffer.from([0xdb, 0xff, 0xff, 0xff, 0xf0, 0x41]),
      pack({ type: "step", steps: 1e300 }),
      pack({ type: "step", steps: 3 }),
    );
    // a client that waits for each answer (at most MAX_PENDING_COMMANDS may be pending)
    for (let i = 0; i < messages.length; i++) {
      ws.ws.send(messages[i]);
      await waitFor(async () => answers() > i);
    }
    expect(ws.closed).toBe(null);
    // the last one stepped the session, which nothing before had
    const stepped = ws.messages.filter((m) => (m as { type: string }).type === "stepped");
    expect(stepped).toEqual([expect.objectContaining({ step: 3 })]);
    ws.close();
    const s = (await call("GET", `/v1/sessions/${id}`)).json();
    expect(s.status).not.toBe("error");
    await bystanderMoves();
  }, 60_000);
});

describe("findings", () => {
  it("a model whose energy overflows double precision is refused with 400 naming the body or force and its field, not kept unrestorable", async () => {
    const fast = fallingBody();
    fast.bodies[0] = { ...fast.bodies[0], velocity: [1e300, 0, 0] } as never;
    const far = springParticle();
    far.forces[0] = { ...far.forces[0], restLength: 1e300 };
    // a box 1e308 m long: finite mass and velocities, its inertia m (b² + c²)/3 Infinity and
    // ½ ωᵀ I ω = 0 · Infinity = NaN (a second body first, so that the index is the box's)
    const long = fallingBody();
    long.bodies = [
      { ...long.bodies[0], id: "small" },
      {
        ...long.bodies[0],
        id: "long",
        inertia: undefined,
        shapes: [
          { type: "sphere", radius: 0.1 },
          { type: "box", halfExtents: [1, 1e308, 1] },
        ],
      },
    ] as never;
    for (const [model, kind, path] of [
      [fast, "kinetic Infinity J", ["model", "bodies", 0, "velocity"]],
      [far, "potential Infinity J", ["model", "forces", 0, "restLength"]],
      [long, "kinetic NaN J", ["model", "bodies", 1, "shapes", 1, "halfExtents"]],
    ] as const) {
      const r = await call("POST", "/v1/sessions", { model });
      expect(r.status, r.text).toBe(400);
      const issue = r.json().details.issues[0];
      expect(issue.path).toEqual(path);
      expect(issue.message).toContain(kind);
      expect(r.json().message).toContain(path.join("."));
    }
    expect(
      (await call("POST", "/v1/sessions", { model: long })).json().details.issues[0].message,
    ).toMatch(/body "long".*halfExtents reaching 1e\+308/);
    // a recording of it, too (its model under "recording")
    const source = await create(springParticle());
    const recording = (await call("GET", `/v1/sessions/${source}/recording`)).json();
    const r = await call("POST", "/v1/sessions", { recording: { ...recording, model: far } });
    expect(r.status, r.text).toBe(400);
    expect(r.json().details.issues[0].path).toEqual([
      "recording",
      "model",
      "forces",
      0,
      "restLength",
    ]);
    // what is finite is kept, and its snapshot comes back
    const big = springParticle();
    big.forces[0] = { ...big.forces[0], restLength: 1e150 };
    const id = await create(big);
    const snap = await call("GET", `/v1/sessions/${id}/snapshot`);
    const back = await call("POST", "/v1/sessions", { snapshot: snap.json() });
    expect(back.status, back.text).toBe(201);
  });

  it("a run at realtimeFactor 1e-300 sleeps: no timer past what Node holds, no 1 ms loop", async () => {
    const out: WorkerOutbound[] = [];
    const rt = new WorkerRuntime(
      {
        index: 0,
        inflight: new SharedArrayBuffer(4),
        frameQueueBytes: 1 << 16,
        testHooks: false,
        stepLimitMs: 30_000,
      },
      (m) => out.push(m),
    );
    const reply = async (id: number) =>
      waitFor(async () => out.find((m) => m.kind === "reply" && m.id === id));
    rt.handle({
      id: 1,
      kind: "open",
      sessionId: "s",
      body: Buffer.from(JSON.stringify({ model: fallingBody() })),
      maxBodies: 10,
    } as never);
    await reply(1);
    const timers = vi.spyOn(globalThis, "setTimeout");
    try {
      rt.handle({
        id: 2,
        kind: "run",
        sessionId: "s",
        realtimeFactor: 1e-300,
        until: null,
      } as never);
      await reply(2);
      await new Promise((r) => setImmediate(r));
      const start = timers.mock.calls.length;
      await new Promise((r) => setTimeout(r, 100));
      const delays = timers.mock.calls.map((c) => Number(c[1] ?? 0));
      // the pump's timer: 2^31 − 1 ms at most; armed once, not every millisecond
      expect(Math.max(...delays)).toBeLessThanOrEqual(2 ** 31 - 1);
      expect(timers.mock.calls.length - start).toBeLessThanOrEqual(2);
    } finally {
      timers.mockRestore();
      rt.handle({ id: 3, kind: "pause", sessionId: "s" } as never);
      await reply(3);
    }
  });
});
