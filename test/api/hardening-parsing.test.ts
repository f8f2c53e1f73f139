/**
 * Issue 26, item 5: what a request costs before it is refused. A full server (or key) is
 * refused before the body is read (a malformed body then answers 429, not the 400 its
 * parsing would give), and a body nested deeper than MAX_JSON_DEPTH is refused before it is
 * parsed, with 400 naming the limit, whatever its size. Bodies that carry a model (create,
 * assembly: up to MAX_MODEL_BYTES) are parsed and validated in a worker, never on the event
 * loop, with the same answers.
 */
import request from "supertest";
import { describe, expect, it } from "vitest";
import { jsonDepth, MAX_JSON_DEPTH } from "../../src/server/request-body";
import { fallingBody } from "../support/models";
import { startApp, useServer } from "../support/server";

const server = useServer({ maxSessions: 1 });

describe("cost before refusal", () => {
  it("jsonDepth counts brackets outside strings", () => {
    expect(jsonDepth('{"a":[1,{"b":"[[[{{"}]}')).toBe(3);
    expect(jsonDepth('"\\"[["')).toBe(0);
    expect(jsonDepth("[".repeat(1000))).toBe(MAX_JSON_DEPTH + 1);
  });

  it("a body nested deeper than the limit: 400 naming it, before parsing", async () => {
    const deep = `{"model":${"[".repeat(5000)}${"]".repeat(5000)}}`;
    const r = await request(server.app.server)
      .post("/v1/sessions")
      .set("content-type", "application/json")
      .send(deep);
    expect(r.status).toBe(400);
    expect(r.body.message).toContain(`deeper than ${MAX_JSON_DEPTH} levels`);
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
      expect(r.body.counts).toEqual({ bodies: 1, forces: 0, joints: 0, motors: 0 });
    } finally {
      await t.close();
    }
  });
});
