/**
 * Issue 26, item 5: what a request costs before it is refused. A full server (or key) is
 * refused before the body is read (a malformed body then answers 429, not the 400 its
 * parsing would give), and a body nested deeper than MAX_JSON_DEPTH is refused before it is
 * parsed, with 400 naming the limit, whatever its size.
 */
import request from "supertest";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { jsonDepth, MAX_JSON_DEPTH, type MoreauApp } from "../../src/server/app";
import { fallingBody, startApp } from "./helpers";

let app: MoreauApp;
beforeAll(async () => {
  app = await startApp({ maxSessions: 1 });
});
afterAll(async () => {
  await app.close();
});

describe("cost before refusal", () => {
  it("jsonDepth counts brackets outside strings", () => {
    expect(jsonDepth('{"a":[1,{"b":"[[[{{"}]}')).toBe(3);
    expect(jsonDepth('"\\"[["')).toBe(0);
    expect(jsonDepth("[".repeat(1000))).toBe(MAX_JSON_DEPTH + 1);
  });

  it("a body nested deeper than the limit: 400 naming it, before parsing", async () => {
    const deep = `{"model":${"[".repeat(5000)}${"]".repeat(5000)}}`;
    const r = await request(app.server)
      .post("/v1/sessions")
      .set("content-type", "application/json")
      .send(deep);
    expect(r.status).toBe(400);
    expect(r.body.message).toContain(`deeper than ${MAX_JSON_DEPTH} levels`);
  });

  it("a full server answers 429 without reading the body (a malformed one is not parsed)", async () => {
    await request(app.server).post("/v1/sessions").send({ model: fallingBody() }).expect(201);
    const r = await request(app.server)
      .post("/v1/sessions")
      .set("content-type", "application/json")
      .send(`{"model": ${"x".repeat(100_000)}`);
    expect(r.status).toBe(429);
    expect(r.body.error).toBe("too_many_sessions");
  });
});
