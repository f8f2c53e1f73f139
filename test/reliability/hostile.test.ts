/**
 * Hostile and bad input, property-based (fast-check) over the model schema and the routes:
 * random JSON bodies, valid models mutated at random places (NaN and Infinity as JSON
 * extensions and as strings, negative / zero / huge numbers, degenerate shapes, unknown and
 * duplicated ids, self- and cyclic references, deep nesting, huge arrays, wrong types), raw
 * bodies (oversize, wrong content types, deep nesting) and random ids. Every answer is a
 * 2xx or a 4xx with the service's error body — a clear message and, for validation, zod's
 * issue paths — never a 5xx; and a sentinel session's state never changes.
 */
import { brotliCompressSync, deflateSync, gzipSync } from "node:zlib";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { MoreauApp } from "../../src/server/app";
import { fallingBody, springParticle } from "../support/models";
import { startApp } from "../support/server";
import { stateHash } from "../support/snapshot";

let app: MoreauApp;
let sentinel: string;
let sentinelHash: string;

type Method = "GET" | "POST" | "PATCH" | "DELETE";
async function send(
  method: Method,
  url: string,
  payload?: string,
  contentType = "application/json",
) {
  const r = await app.inject({
    method,
    url,
    payload,
    headers: payload === undefined ? {} : { "content-type": contentType },
  });
  return { status: r.statusCode, text: r.body, json: () => JSON.parse(r.body) };
}

/** A 2xx, or a 4xx with { error, message } and well-formed issues; never a 5xx. */
function checkAnswer(r: { status: number; text: string }, what: string) {
  expect(r.status, `${what} → ${r.status} ${r.text.slice(0, 300)}`).toBeLessThan(500);
  if (r.status < 400) return;
  const body = JSON.parse(r.text);
  expect(typeof body.error, what).toBe("string");
  expect(typeof body.message, what).toBe("string");
  expect(body.message.length).toBeGreaterThan(0);
  if (body.error === "invalid_request" || body.error === "invalid_model") {
    const issues = body.details?.issues;
    if (issues !== undefined)
      for (const i of issues) {
        expect(Array.isArray(i.path), what).toBe(true);
        expect(typeof i.message, what).toBe("string");
      }
  }
}

async function sessionHash(id: string): Promise<string> {
  const r = await send("GET", `/v1/sessions/${id}/snapshot`);
  expect(r.status).toBe(200);
  return stateHash(r.json());
}

beforeAll(async () => {
  app = await startApp({
    workers: 2,
    maxBodyBytes: 1 << 20,
    maxModelBytes: 1 << 20,
    maxSessions: 1000,
    requestTimeoutMs: 5000,
  });
  const r = await send("POST", "/v1/sessions", JSON.stringify({ model: springParticle() }));
  sentinel = r.json().id;
  await send("POST", `/v1/sessions/${sentinel}/step`, JSON.stringify({ steps: 10 }));
  sentinelHash = await sessionHash(sentinel);
});
afterAll(async () => {
  // nothing above touched the sentinel
  expect(await sessionHash(sentinel)).toBe(sentinelHash);
  expect((await send("GET", `/v1/sessions/${sentinel}`)).json().step).toBe(10);
  expect((await send("GET", "/health")).status).toBe(200);
  await app.close();
});

const baseModels: unknown[] = [
  fallingBody(),
  springParticle(),
  {
    name: "chain",
    bodies: [
      { id: "a", kind: "rigid", mass: 1, inertia: [0.1, 0.1, 0.1], position: [0, 0, -0.5] },
      {
        id: "b",
        kind: "rigid",
        mass: 2,
        shapes: [{ type: "box", halfExtents: [0.1, 0.2, 0.3] }],
        position: [0, 0, -1.5],
      },
    ],
    joints: [
      {
        id: "j0",
        type: "revolute",
        a: { body: "ground" },
        b: { body: "a", point: [0, 0, 0.5] },
        axis: [0, 1, 0],
      },
      {
        id: "j1",
        type: "distance",
        a: { body: "a", point: [0, 0, -0.5] },
        b: { body: "b", point: [0, 0, 0.5] },
      },
    ],
    motors: [{ id: "m", joint: "j0", angle: { offset: 0, rate: 1 } }],
    forces: [
      {
        id: "f",
        type: "pointForce",
        at: { body: "b" },
        force: [1, 0, { type: "sine", amplitude: 1, frequency: 2 }],
      },
    ],
    solver: { integrator: "newmark", dt: 0.01, newtonIterations: 3 },
  },
  {
    name: "contact",
    bodies: [
      { id: "floor", kind: "rigid", fixed: true, shapes: [{ type: "plane", normal: [0, 0, 1] }] },
      {
        id: "ball",
        kind: "rigid",
        mass: 1,
        position: [0, 0, 0.3],
        shapes: [{ type: "sphere", radius: 0.1 }],
      },
      {
        id: "cap",
        kind: "rigid",
        mass: 1,
        position: [0.5, 0, 0.3],
        shapes: [{ type: "capsule", radius: 0.05, halfLength: 0.2 }],
      },
    ],
    contact: {
      method: "nsc",
      restitution: 0.5,
      friction: 0.3,
      pairs: [{ bodies: ["ball", "floor"], friction: 0.1 }],
    },
    solver: { dt: 0.005 },
  },
  {
    name: "smc",
    bodies: [
      { id: "floor", kind: "rigid", fixed: true, shapes: [{ type: "plane" }] },
      {
        id: "p",
        kind: "particle",
        mass: 0.5,
        position: [0, 0, 0.2],
        shapes: [{ type: "sphere", radius: 0.1 }],
      },
    ],
    forces: [
      { id: "d", type: "damper", linear: 0.1 },
      {
        id: "fs",
        type: "frameSpring",
        a: { body: "p" },
        b: { body: "ground" },
        stiffness: 10,
        rotaryStiffness: 1,
      },
    ],
    contact: { method: "smc", behavior: { type: "hertz", youngModulus: 1e7 } },
    solver: { integrator: "backward-euler", dt: 0.002, linearSolver: "cg" },
  },
];

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };

/** Every path to a value inside v (to depth 12, and 64 entries per array). */
function paths(v: Json, prefix: (string | number)[] = []): (string | number)[][] {
  const out: (string | number)[][] = [prefix];
  if (prefix.length >= 12) return out;
  if (Array.isArray(v))
    for (let i = 0; i < Math.min(v.length, 64); i++) out.push(...paths(v[i], [...prefix, i]));
  else if (v !== null && typeof v === "object")
    for (const [k, x] of Object.entries(v)) out.push(...paths(x, [...prefix, k]));
  return out;
}

const NAN = "\u0000NaN\u0000";
const INF = "\u0000Infinity\u0000";
const NEG_INF = "\u0000-Infinity\u0000";
/** Markers written into the JSON text as 5000 nested arrays and a 20000-entry array. */
const DEEP = "\u0000deep\u0000";
const HUGE = "\u0000huge\u0000";

/** Replacement values a hostile client would try. */
const hostileValue: fc.Arbitrary<Json> = fc.oneof(
  fc.constantFrom<Json>(
    NAN,
    INF,
    NEG_INF,
    "NaN",
    "Infinity",
    "-Infinity",
    "1e999",
    -1,
    0,
    -0,
    1e308,
    -1e308,
    5e-324,
    1e12,
    1e-12,
    null,
    true,
    "",
    "ghost",
    "ground",
    "a",
    "j0",
    [],
    {},
    [0, 0, 0],
    [0, 0, 0, 0],
    [1e308, 1e308, 1e308],
    [
      [1, 2, 3],
      [4, 5, 6],
      [7, 8, 9],
    ],
    DEEP,
    HUGE,
    { type: "sphere", radius: 0 },
    { type: "box", halfExtents: [0, 1, 1] },
    { type: "capsule", radius: 0.1, halfLength: -1 },
    { type: "plane", normal: [0, 0, 0] },
    { body: "a", point: [0, 0, 0] },
    { body: "b" },
    { body: "nobody" },
  ),
  fc.double(),
  fc.integer(),
  fc.string({ maxLength: 40 }),
);

type Mutation =
  | { kind: "set"; at: number; value: Json }
  | { kind: "delete"; at: number }
  | { kind: "dup"; at: number };

const mutation: fc.Arbitrary<Mutation> = fc.oneof(
  fc.record({ kind: fc.constant("set" as const), at: fc.nat(), value: hostileValue }),
  fc.record({ kind: fc.constant("delete" as const), at: fc.nat() }),
  fc.record({ kind: fc.constant("dup" as const), at: fc.nat() }),
);

function mutate(model: Json, muts: Mutation[]): Json {
  let m: Json = JSON.parse(JSON.stringify(model));
  for (const mu of muts) {
    const all = paths(m);
    const p = all[mu.at % all.length];
    if (p.length === 0) {
      if (mu.kind === "set") m = mu.value;
      continue;
    }
    let parent = m as Record<string | number, Json>;
    for (const k of p.slice(0, -1)) parent = parent[k] as Record<string | number, Json>;
    const key = p[p.length - 1];
    if (mu.kind === "set") parent[key] = mu.value;
    else if (mu.kind === "delete") {
      if (Array.isArray(parent)) parent.splice(Number(key), 1);
      else delete parent[key];
    } else if (Array.isArray(parent)) parent.push(JSON.parse(JSON.stringify(parent[Number(key)])));
  }
  return m;
}

/** JSON text with the NaN / Infinity markers written as the (invalid) JSON extensions. */
function text(v: unknown): string {
  return JSON.stringify(v)
    .replaceAll(JSON.stringify(NAN), "NaN")
    .replaceAll(JSON.stringify(INF), "Infinity")
    .replaceAll(JSON.stringify(NEG_INF), "-Infinity")
    .replaceAll(JSON.stringify(DEEP), `${"[".repeat(5000)}0${"]".repeat(5000)}`)
    .replaceAll(JSON.stringify(HUGE), `[${new Array(20_000).fill(0).join(",")}]`);
}

describe("random and mutated models", () => {
  it("POST /v1/sessions: a 201 or a 4xx; created sessions step, answer and delete without a 5xx", async () => {
    let created = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.nat(baseModels.length - 1),
        fc.array(mutation, { minLength: 1, maxLength: 4 }),
        fc.boolean(),
        async (which, muts, wrap) => {
          const model = mutate(baseModels[which] as Json, muts);
          const r = await send("POST", "/v1/sessions", text(wrap ? { model } : model));
          checkAnswer(r, "create");
          if (r.status !== 201) return;
          created++;
          const id = r.json().id as string;
          for (const [m, url, body] of [
            ["POST", `/v1/sessions/${id}/step`, { steps: 25 }],
            ["GET", `/v1/sessions/${id}/state`, undefined],
            ["POST", `/v1/sessions/${id}/assembly`, {}],
            ["GET", `/v1/sessions/${id}/snapshot`, undefined],
            ["POST", `/v1/sessions/${id}/reset`, undefined],
            ["DELETE", `/v1/sessions/${id}`, undefined],
          ] as const)
            checkAnswer(
              await send(m, url, body === undefined ? undefined : JSON.stringify(body)),
              `${m} ${url}`,
            );
        },
      ),
      {
        numRuns: Number(process.env.HOSTILE_RUNS ?? 150),
        seed: Number(process.env.HOSTILE_SEED ?? 72026),
      },
    );
    // the mutations leave a fair share of valid models, which were stepped
    expect(created).toBeGreaterThan(10);
  }, 120_000);

  it("POST /v1/assembly (no session kept): never a 5xx", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.nat(baseModels.length - 1),
        fc.array(mutation, { maxLength: 3 }),
        async (which, muts) => {
          const model = mutate(baseModels[which] as Json, muts);
          checkAnswer(await send("POST", "/v1/assembly", text({ model })), "assembly");
        },
      ),
      { numRuns: 60, seed: 11 },
    );
  }, 60_000);

  it("arbitrary JSON bodies on every route with a body: a 4xx (or a 2xx), never a 5xx", async () => {
    const r = await send("POST", "/v1/sessions", JSON.stringify({ model: fallingBody() }));
    const id = r.json().id as string;
    const routes: [Method, string][] = [
      ["POST", "/v1/sessions"],
      ["POST", `/v1/sessions/${id}/step`],
      ["POST", `/v1/sessions/${id}/run`],
      ["PATCH", `/v1/sessions/${id}`],
      ["POST", `/v1/sessions/${id}/assembly`],
      ["POST", "/v1/assembly"],
    ];
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...routes),
        fc.jsonValue({ maxDepth: 6 }),
        async ([m, url], body) => {
          const a = await send(m, url, JSON.stringify(body));
          checkAnswer(a, `${m} ${url}`);
          if (url.endsWith("/run") && a.status === 202)
            await send("POST", `/v1/sessions/${id}/pause`);
        },
      ),
      { numRuns: 200, seed: 3 },
    );
    await send("POST", `/v1/sessions/${id}/pause`);
    await send("DELETE", `/v1/sessions/${id}`);
  }, 60_000);

  it("unknown and odd ids: 404 or 400, never a 5xx", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          fc.string({ maxLength: 200 }),
          fc.uuid(),
          fc.constantFrom("..", "%00", "%ff", "a%2fb", "ground"),
        ),
        fc.constantFrom("", "/state", "/snapshot", "/step", "/fork", "/stream", "/pause"),
        async (raw, tail) => {
          const url = `/v1/sessions/${raw.length > 0 && !raw.startsWith("%") ? encodeURIComponent(raw) : raw}${tail}`;
          const method: Method =
            tail === "/step" || tail === "/fork" || tail === "/pause" ? "POST" : "GET";
          const r = await send(method, url, method === "POST" ? "{}" : undefined);
          checkAnswer(r, url);
          expect(r.status).toBeGreaterThanOrEqual(400);
        },
      ),
      { numRuns: 150, seed: 5 },
    );
  }, 60_000);
});

describe("raw bodies", () => {
  it("NaN and Infinity as JSON extensions, or as strings: 400", async () => {
    for (const v of ["NaN", "Infinity", "-Infinity", '"NaN"', '"Infinity"', "1e999"]) {
      const r = await send(
        "POST",
        "/v1/sessions",
        `{"model":{"bodies":[{"id":"p","kind":"particle","mass":${v}}]}}`,
      );
      expect(r.status, v).toBe(400);
      checkAnswer(r, v);
      if (v.startsWith('"') || v === "1e999")
        expect(r.json().details.issues[0].path).toEqual(["model", "bodies", 0, "mass"]);
    }
  });

  it("deep nesting, huge arrays and oversize bodies: 400 or 413", async () => {
    const depth = 200_000;
    let r = await send(
      "POST",
      "/v1/sessions",
      `{"model":${"[".repeat(depth)}${"]".repeat(depth)}}`,
    );
    expect(r.status).toBe(400);
    r = await send("POST", "/v1/sessions", `${'{"a":'.repeat(50_000)}1${"}".repeat(50_000)}`);
    expect(r.status).toBe(400);
    const bodies = Array.from({ length: 10_001 }, (_, i) => ({
      id: `b${i}`,
      mass: 1,
      kind: "particle",
    }));
    r = await send("POST", "/v1/sessions", JSON.stringify({ model: { bodies } }));
    expect(r.status).toBe(413);
    expect(r.json().error).toBe("payload_too_large");
    r = await send(
      "POST",
      "/v1/sessions",
      JSON.stringify({ model: { bodies: [], pad: "x".repeat(2 << 20) } }),
    );
    expect(r.status).toBe(413);
    r = await send(
      "POST",
      "/v1/sessions/x/step",
      JSON.stringify({ steps: new Array(300_000).fill(1) }),
    );
    expect([400, 404, 413]).toContain(r.status);
    checkAnswer(r, "huge array");
  });

  it("wrong content types: 415; empty or malformed JSON: 400", async () => {
    const body = JSON.stringify({ model: fallingBody() });
    for (const ct of [
      "text/plain",
      "application/xml",
      "application/x-www-form-urlencoded",
      "multipart/form-data; boundary=x",
      "image/png",
    ]) {
      const r = await send("POST", "/v1/sessions", body, ct);
      expect(r.status, ct).toBe(415);
      expect(r.json().error).toBe("unsupported_media_type");
    }
    for (const bad of ["", "{", '{"model":', "[1,2", "\u0000", '{"__proto__":{"x":1}}']) {
      const r = await send("POST", "/v1/sessions", bad);
      expect(r.status, JSON.stringify(bad)).toBe(400);
      checkAnswer(r, bad);
    }
  });

  it("a compressed body (Content-Encoding): 415 naming the header, nothing created", async () => {
    const body = JSON.stringify({ model: fallingBody() });
    const before = (await app.inject({ method: "GET", url: "/v1/sessions" })).json().sessions
      .length;
    for (const [coding, payload] of [
      ["gzip", gzipSync(body)],
      ["br", brotliCompressSync(body)],
      ["deflate, gzip", gzipSync(deflateSync(body))],
      // a body that is not compressed at all, sent with the header: refused the same (the
      // header is what is wrong), not read as identity
      ["gzip", Buffer.from(body)],
    ] as const) {
      const r = await app.inject({
        method: "POST",
        url: "/v1/sessions",
        payload,
        headers: { "content-type": "application/json", "content-encoding": coding },
      });
      // before: 400 invalid_request "Body is not valid JSON … Unexpected token '\u001f'"
      // (the last case: 201, the session created)
      expect(r.statusCode, `${coding} → ${r.body.slice(0, 200)}`).toBe(415);
      expect(r.headers["accept-encoding"]).toBe("identity");
      expect(r.json()).toEqual({
        error: "unsupported_media_type",
        message: `Content-Encoding "${coding}" is not supported: send the body uncompressed (JSON as UTF-8, Content-Encoding identity or none)`,
        details: { header: "content-encoding", value: coding, accepted: ["identity"] },
      });
    }
    // identity is no coding; nor is the header on a request without a body
    const plain = await app.inject({
      method: "POST",
      url: "/v1/sessions",
      payload: body,
      headers: { "content-type": "application/json", "content-encoding": "identity" },
    });
    expect(plain.statusCode).toBe(201);
    const read = await app.inject({
      method: "GET",
      url: `/v1/sessions/${plain.json().id}`,
      headers: { "content-encoding": "gzip" },
    });
    expect(read.statusCode).toBe(200);
    const after = (await app.inject({ method: "GET", url: "/v1/sessions" })).json().sessions.length;
    expect(after).toBe(before + 1);
    await app.inject({ method: "DELETE", url: `/v1/sessions/${plain.json().id}` });
  });

  it("cycles of references: closed loops run, self-references and unknown ids are 400 with paths", async () => {
    const ring = {
      name: "four-bar",
      gravity: [0, 0, -9.81],
      bodies: ["a", "b", "c"].map((id, i) => ({
        id,
        kind: "rigid",
        mass: 1,
        inertia: [0.01, 0.01, 0.01],
        position: [i, 0, 0],
      })),
      joints: [
        {
          id: "j0",
          type: "spherical",
          a: { body: "ground", point: [-0.5, 0, 0] },
          b: { body: "a", point: [-0.5, 0, 0] },
        },
        {
          id: "j1",
          type: "spherical",
          a: { body: "a", point: [0.5, 0, 0] },
          b: { body: "b", point: [-0.5, 0, 0] },
        },
        {
          id: "j2",
          type: "spherical",
          a: { body: "b", point: [0.5, 0, 0] },
          b: { body: "c", point: [-0.5, 0, 0] },
        },
        {
          id: "j3",
          type: "spherical",
          a: { body: "c", point: [0.5, 0, 0] },
          b: { body: "a", point: [0.5, 0, 0] },
        },
      ],
    };
    const r = await send("POST", "/v1/sessions", JSON.stringify({ model: ring }));
    expect(r.status).toBe(201);
    const id = r.json().id;
    const s = await send("POST", `/v1/sessions/${id}/step`, JSON.stringify({ steps: 20 }));
    expect([200, 422]).toContain(s.status);
    checkAnswer(s, "ring step");
    await send("DELETE", `/v1/sessions/${id}`);

    const self = {
      ...ring,
      joints: [{ id: "j", type: "spherical", a: { body: "a" }, b: { body: "a" } }],
    };
    let e = await send("POST", "/v1/sessions", JSON.stringify({ model: self }));
    expect(e.status).toBe(400);
    expect(e.json().details.issues[0].path).toEqual(["model", "joints", 0, "b", "body"]);
    const motorLoop = { ...ring, motors: [{ id: "j0", joint: "j0", angle: 1 }] };
    e = await send("POST", "/v1/sessions", JSON.stringify({ model: motorLoop }));
    expect(e.status).toBe(400);
    expect(e.json().details.issues.map((i: { path: unknown[] }) => i.path)).toContainEqual([
      "model",
      "motors",
      0,
      "id",
    ]);
  });
});
