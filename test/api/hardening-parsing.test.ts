/**
 * Issue 26, item 5: what a request costs before it is refused. A full server (or key) is
 * refused before the body is read (a malformed body then answers 429, not the 400 its
 * parsing would give), and a body nested deeper than MAX_JSON_DEPTH is refused before it is
 * parsed, with 400 naming the limit and the path where it is passed (it named the limit
 * alone), whatever its size. Bodies that carry a model (create,
 * assembly: up to MAX_MODEL_BYTES) are parsed and validated in a worker, never on the event
 * loop, with the same answers.
 */
import request from "supertest";
import { describe, expect, it } from "vitest";
import { MAX_ECHO_CHARS } from "../../src/server/errors";
import { MAX_JSON_DEPTH, tooDeep } from "../../src/server/request-body";
import { fallingBody } from "../support/models";
import { startApp, useServer } from "../support/server";

const server = useServer({ maxSessions: 1 });

describe("cost before refusal", () => {
  it("tooDeep counts brackets outside strings and names where the limit is passed", () => {
    const nest = (n: number, inner: string) => `${"[".repeat(n)}${inner}${"]".repeat(n)}`;
    expect(tooDeep('{"a":[1,{"b":"[[[{{"}]}')).toBeNull();
    expect(tooDeep('"\\"[["')).toBeNull();
    // MAX_JSON_DEPTH levels pass; one more is refused at the path of the container opened
    // below them: 31 arrays under the root object, each the first element of its parent
    expect(tooDeep(`{"a":${nest(MAX_JSON_DEPTH - 1, "1")}}`)).toBeNull();
    const zeros = Array(MAX_JSON_DEPTH - 1).fill(0);
    expect(tooDeep(`{"a":${nest(MAX_JSON_DEPTH, "1")}}`)).toEqual(["a", ...zeros]);
    expect(tooDeep("[".repeat(1000))).toEqual(Array(MAX_JSON_DEPTH).fill(0));
    // keys (escapes decoded, brackets and colons inside them ignored), indices counted past
    // commas at their own level only, a key of a closed object forgotten
    const deep = `{"x":{"k":1},"m\\"[:":[0,[1,2],{"q":{}},${nest(MAX_JSON_DEPTH - 1, "0")}]}`;
    expect(tooDeep(deep)).toEqual(['m"[:', 3, ...Array(MAX_JSON_DEPTH - 2).fill(0)]);
    // a long key quoted at MAX_ECHO_CHARS characters
    const long = `{"${"k".repeat(5000)}":${nest(MAX_JSON_DEPTH, "")}}`;
    expect(tooDeep(long)?.[0]).toBe(`${"k".repeat(MAX_ECHO_CHARS)}…`);
  });

  it("a body nested deeper than the limit: 400 naming it, before parsing", async () => {
    const deep = `{"model":${"[".repeat(5000)}${"]".repeat(5000)}}`;
    const r = await request(server.app.server)
      .post("/v1/sessions")
      .set("content-type", "application/json")
      .send(deep);
    expect(r.status).toBe(400);
    const path = ["model", ...Array(MAX_JSON_DEPTH - 1).fill(0)];
    expect(r.body.message).toBe(
      `the JSON body nests deeper than ${MAX_JSON_DEPTH} levels at ${JSON.stringify(path)}`,
    );
    expect(r.body.details).toEqual({ limit: MAX_JSON_DEPTH, path });
  });

  it("a deep value in a model names its path; the same in a small body read by the event loop", async () => {
    const model = fallingBody();
    const text = JSON.stringify({ model }).replace(
      '"position":[',
      `"position":[${"[".repeat(40)}${"]".repeat(40)},`,
    );
    const r = await request(server.app.server)
      .post("/v1/sessions")
      .set("content-type", "application/json")
      .send(text);
    expect(r.status).toBe(400);
    const path = ["model", "bodies", 0, "position", ...Array(MAX_JSON_DEPTH - 4).fill(0)];
    expect(r.body.details.path).toEqual(path);
    const p = await request(server.app.server)
      .patch("/v1/sessions/none")
      .set("content-type", "application/json")
      .send(`{"gravity":[0,0,${"[".repeat(40)}${"]".repeat(40)}]}`);
    expect(p.status).toBe(400);
    expect(p.body.details.path).toEqual(["gravity", 2, ...Array(MAX_JSON_DEPTH - 2).fill(0)]);
  });

  it("a full server answers 429 without reading the body (a malformed one is not parsed)", async () => {
    await request(server.app.server)
      .post("/v1/sessions")
      .send({ model: fallingBody() })
      .expect(201);
    const r = await request(server.app.server)
      .post("/v1/sessions")
      .set("content-type", "application/json")
      .send(`{"model": ${"x".repeat(100_000)}`);
    expect(r.status).toBe(429);
    expect(r.body.error).toBe("too_many_sessions");
  });
});

describe("model bodies are parsed and validated in a worker", () => {
  it("while the only worker is busy, /health answers and the create waits for the worker", async () => {
    const t = await startApp({ workers: 1, testHooks: true });
    try {
      const order: string[] = [];
      // the worker computes for 1.5 s without yielding
      const blocked = t.moreau.sessions.pool
        .request(0, { kind: "test", hook: { action: "block", ms: 1500 } }, 60_000)
        .then(() => order.push("worker free"));
      // a 0.6 MB model whose last body is invalid
      const bodies = Array.from({ length: 9000 }, (_, i) => ({
        id: `b${i}`,
        kind: "particle",
        mass: i === 8999 ? "heavy" : 1,
        position: [i, 0, 0],
      }));
      const created = request(t.server)
        .post("/v1/sessions")
        .send({ model: { bodies } })
        .then((r) => {
          order.push("create answered");
          return r;
        });
      const assembled = request(t.server)
        .post("/v1/assembly")
        .send({ model: { bodies }, options: {} })
        .then((r) => {
          order.push("assembly answered");
          return r;
        });
      expect((await request(t.server).get("/health")).status).toBe(200);
      order.push("health");
      const [r, a] = await Promise.all([created, assembled, blocked]);
      // validated on the event loop, the 400s would have come before the worker was free
      expect(order.slice(0, 2)).toEqual(["health", "worker free"]);
      expect(order.slice(2).sort()).toEqual(["assembly answered", "create answered"]);
      for (const x of [r, a]) {
        expect(x.status).toBe(400);
        expect(x.body.error).toBe("invalid_model");
        expect(x.body.details.issues[0].path).toEqual(["model", "bodies", 8999, "mass"]);
      }
    } finally {
      await t.close();
    }
  });

  it("the worker answers as the route would: 400 with paths, 413 over MAX_BODIES, 201", async () => {
    const t = await startApp({ maxBodies: 10 });
    try {
      const post = (body: string) =>
        request(t.server).post("/v1/sessions").set("content-type", "application/json").send(body);
      let r = await post("");
      expect([r.status, r.body.error]).toEqual([400, "invalid_request"]);
      r = await post('{"model": ');
      // with the parser's reason, where it stopped
      expect(r.body.message).toMatch(/not valid JSON.*: Unexpected end of JSON input$/);
      r = await post('{"model": {"bodies": [}}');
      expect(r.body.message).toMatch(/not valid JSON.*: Unexpected token '}'/);
      r = await post('{"model": {"bodies": []}, "__proto__": {"x": 1}}');
      expect([r.status, r.body.error]).toEqual([400, "invalid_request"]);
      // the refused key named where it is ("Body is not valid JSON" said nothing of it)
      r = await post('{"model": {"bodies": [{"id": "b", "constructor": {"prototype": {}}}]}}');
      expect([r.status, r.body.details.path]).toEqual([
        400,
        ["model", "bodies", 0, "constructor", "prototype"],
      ]);
      expect(r.body.message).toBe(
        'the JSON body carries a "prototype" key at ["model","bodies",0,"constructor"], which is refused (it could alter object prototypes)',
      );
      r = await post(JSON.stringify({ model: fallingBody(), extra: 1 }));
      expect(r.status).toBe(400);
      expect(r.body.details.issues[0].message).toMatch(/extra/);
      r = await post("{}");
      expect(r.body.details.issues.map((i: { message: string }) => i.message)).toContain(
        'give exactly one of "model", "snapshot" or "recording"',
      );
      const many = Array.from({ length: 11 }, (_, i) => ({
        id: `b${i}`,
        kind: "particle",
        mass: 1,
      }));
      r = await post(JSON.stringify({ recording: { model: { bodies: many } } }));
      expect([r.status, r.body.details]).toEqual([413, { bodies: 11, limit: 10 }]);
      r = await post(JSON.stringify({ model: fallingBody() }));
      expect(r.status).toBe(201);
      expect(r.body.counts).toEqual({
        bodies: 1,
        forces: 0,
        joints: 0,
        motors: 0,
        actuators: 0,
        sensors: 0,
      });
    } finally {
      await t.close();
    }
  });
});
