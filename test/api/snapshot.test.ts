/**
 * Snapshots over HTTP: GET /v1/sessions/:id/snapshot gives the whole session in a
 * versioned document; POST /v1/sessions { snapshot } resumes it and POST .../fork copies a
 * session at its step — both continue bit-identically (sha256 of the state arrays, computed
 * here from the document's base64 float64 bytes); a bad snapshot is a 400 with its path.
 */
import request from "supertest";
import { beforeAll, describe, expect, it } from "vitest";
import { divergingSpring, hangingChain, slidingBoxNsc, springPairNewmark } from "../support/models";
import { useServer } from "../support/server";
import { stateHash } from "../support/snapshot";
import { createSession, step } from "./helpers";

const server = useServer({ workers: 2 });
const api = () => request(server.app.server);

interface Doc {
  format: string;
  version: number;
  session: { id: string; name: string; status: string; message: string | null; step: number };
  simulation: {
    step: number;
    time: number;
    hash: string;
    state: Record<"position" | "orientation" | "velocity" | "angularVelocity", string>;
    parameters: { solver: Record<string, unknown>; gravity: number[] };
    memory: { integrator: { acceleration?: string; accelerationValid?: boolean } };
  };
}

async function snapshot(id: string): Promise<Doc> {
  const r = await api().get(`/v1/sessions/${id}/snapshot`).expect(200);
  return r.body as Doc;
}

const chain = {
  name: "chain",
  ...hangingChain({
    joints: [{ type: "revolute", axis: [0, 1, 0] }, { type: "spherical" }],
    mass: 1,
    inertia: [0.01, 0.01, 0.002],
  }),
  motors: [{ id: "m0", joint: "j0", angle: { offset: 0, rate: 2 } }],
};

describe("GET /v1/sessions/:id/snapshot", () => {
  it("is a versioned document with model, patched parameters, state and solver memory", async () => {
    const id = await createSession(server.app, springPairNewmark);
    await step(server.app, id, 20);
    await api()
      .patch(`/v1/sessions/${id}`)
      .send({ gravity: [0, 0, -5], solver: { velocityDamping: 0.1 } })
      .expect(200);
    await step(server.app, id, 5);
    const doc = await snapshot(id);
    expect(doc.format).toBe("moreau.session");
    expect(doc.version).toBe(1);
    expect(doc.session).toMatchObject({
      id,
      name: springPairNewmark.name,
      status: "ready",
      step: 25,
    });
    expect(doc.simulation.step).toBe(25);
    expect(doc.simulation.time).toBeCloseTo(0.05, 12);
    expect(doc.simulation.parameters.gravity).toEqual([0, 0, -5]);
    expect(doc.simulation.parameters.solver.velocityDamping).toBe(0.1);
    expect(doc.simulation.memory.integrator.accelerationValid).toBe(true);
    // a_t: 6 + 6 dofs (two rigid bodies) as float64
    expect(
      Buffer.from(doc.simulation.memory.integrator.acceleration ?? "", "base64").byteLength,
    ).toBe(8 * 12);
    expect(stateHash(doc)).toBe(doc.simulation.hash);
  });

  it("404 for an unknown session", async () => {
    const r = await api().get("/v1/sessions/nope/snapshot").expect(404);
    expect(r.body.error).toBe("not_found");
  });
});

describe("resume and fork continue bit-identically", () => {
  for (const [name, model] of [
    ["newmark with newton iterations", springPairNewmark],
    ["joints and a motor", chain],
    ["nonsmooth contact with friction", slidingBoxNsc],
  ] as const) {
    it(`POST { snapshot }: ${name}`, async () => {
      const a = await createSession(server.app, model);
      await step(server.app, a, 60);
      const doc = await snapshot(a);
      const r = await api().post("/v1/sessions").send({ snapshot: doc }).expect(201);
      const b = r.body.id as string;
      expect(b).not.toBe(a);
      expect(r.body).toMatchObject({ step: 60, status: "ready", name: model.name });
      expect(stateHash(await snapshot(b))).toBe(stateHash(doc));
      const sa = await step(server.app, a, 90);
      const sb = await step(server.app, b, 90);
      expect(sb).toEqual(sa);
      const [da, db] = [await snapshot(a), await snapshot(b)];
      expect(db.simulation.step).toBe(150);
      expect(stateHash(db)).toBe(stateHash(da));
      expect(db.simulation.memory).toEqual(da.simulation.memory);
    });
  }

  it("POST /fork, /pause and /reset take no body or {}: a key sent is a 400 naming it, nothing done", async () => {
    const a = await createSession(server.app, springPairNewmark);
    await step(server.app, a, 10);
    const count = async () => (await api().get("/v1/sessions").expect(200)).body.sessions.length;
    const before = await count();
    for (const route of ["fork", "pause", "reset"]) {
      const r = await api().post(`/v1/sessions/${a}/${route}`).send({ name: "copy" }).expect(400);
      expect(r.body.error).toBe("invalid_request");
      // zod's strict-object issue, as every route's: at the body's root, naming the key
      expect(r.body.details.issues).toEqual([
        expect.objectContaining({
          path: [],
          message: expect.stringMatching(/Unrecognized key.*"name"/),
        }),
      ]);
    }
    // refused, nothing done: no fork made, the session still at step 10
    expect(await count()).toBe(before);
    expect((await api().get(`/v1/sessions/${a}`).expect(200)).body.step).toBe(10);
    // none, or an empty object, is fine
    const f1 = await api().post(`/v1/sessions/${a}/fork`).expect(201);
    const f2 = await api().post(`/v1/sessions/${a}/fork`).send({}).expect(201);
    expect([f1.body.step, f2.body.step]).toEqual([10, 10]);
    await api().post(`/v1/sessions/${a}/pause`).send({}).expect(200);
    await api().post(`/v1/sessions/${a}/reset`).send({}).expect(200);
  });

  it("POST /v1/sessions/:id/fork copies at the current step; the two then evolve apart", async () => {
    const a = await createSession(server.app, springPairNewmark);
    await step(server.app, a, 40);
    const before = stateHash(await snapshot(a));
    const r = await api().post(`/v1/sessions/${a}/fork`).expect(201);
    const f = r.body.id as string;
    expect(r.headers.location).toBe(`/v1/sessions/${f}`);
    expect(r.body).toMatchObject({ step: 40, status: "ready" });
    expect(stateHash(await snapshot(f))).toBe(before);
    // stepping the fork leaves the source alone
    await step(server.app, f, 30);
    expect(stateHash(await snapshot(a))).toBe(before);
    await step(server.app, a, 30);
    expect(stateHash(await snapshot(a))).toBe(stateHash(await snapshot(f)));
    // a PATCH of one does not reach the other
    await api()
      .patch(`/v1/sessions/${f}`)
      .send({ gravity: [0, 0, 0] })
      .expect(200);
    expect((await snapshot(a)).simulation.parameters.gravity).toEqual([0, 0, -9.81]);
  });

  it("keeps diverged (with its message); a running session resumes paused", async () => {
    const d = await createSession(server.app, divergingSpring());
    await api().post(`/v1/sessions/${d}/step`).send({ steps: 200 }).expect(422);
    const dd = await snapshot(d);
    expect(dd.session.status).toBe("diverged");
    const r = await api().post("/v1/sessions").send({ snapshot: dd }).expect(201);
    expect(r.body.status).toBe("diverged");
    expect(r.body.message).toBe(dd.session.message);

    const run = await createSession(server.app, chain);
    await api().post(`/v1/sessions/${run}/run`).send({ realtimeFactor: 1 }).expect(202);
    const rd = await snapshot(run);
    expect(rd.session.status).toBe("running");
    const f = await api().post("/v1/sessions").send({ snapshot: rd }).expect(201);
    expect(f.body.status).toBe("paused");
    expect(f.body.step).toBe(rd.simulation.step);
    const fk = await api().post(`/v1/sessions/${run}/fork`).expect(201);
    expect(fk.body.status).toBe("paused");
    await api().post(`/v1/sessions/${run}/pause`).expect(200);
  });
});

describe("bad snapshots", () => {
  let doc: Doc;
  beforeAll(async () => {
    const id = await createSession(server.app, chain);
    await step(server.app, id, 3);
    doc = await snapshot(id);
  });
  const post = (body: unknown) =>
    api()
      .post("/v1/sessions")
      .send(body as object);
  /** The document without its whole-document checksum (as an older one), to reach the other checks. */
  const copy = (): Doc & Record<string, unknown> => {
    const c = JSON.parse(JSON.stringify(doc));
    delete c.simulation.checksum;
    return c;
  };

  it("400 at the checksum for a document changed after it was written", async () => {
    const c = JSON.parse(JSON.stringify(doc));
    c.simulation.model.bodies[0].mass *= 2;
    const r = await post({ snapshot: c }).expect(400);
    expect(r.body.details.issues[0].path).toEqual(["snapshot", "simulation", "checksum"]);
  });

  it("400 naming the field that does not fit, not the checksum it changed, and the message says it in full", async () => {
    // a state array of the wrong length in a document that keeps its checksum: the field's
    // own check answers (the checksum, verified first, answered ["checksum"] alone)
    const c = JSON.parse(JSON.stringify(doc));
    c.simulation.state.position = "AAAAAAAAAAA=";
    const r = await post({ snapshot: c }).expect(400);
    const path = ["snapshot", "simulation", "state", "position"];
    expect(r.body.details.issues).toEqual([
      { path, message: expect.stringMatching(/^expected \d+ float64 values/) },
    ]);
    expect(r.body.message).toMatch(
      /^invalid snapshot: snapshot\.simulation\.state\.position: expected/,
    );
  });

  it("400 with the path of what is wrong", async () => {
    const v = copy();
    v.version = 2;
    let r = await post({ snapshot: v }).expect(400);
    expect(r.body.details.issues[0].path).toEqual(["snapshot", "version"]);

    const t = copy();
    const bytes = Buffer.from(t.simulation.state.velocity, "base64");
    bytes[9] ^= 4;
    t.simulation.state.velocity = bytes.toString("base64");
    r = await post({ snapshot: t }).expect(400);
    expect(r.body.error).toBe("invalid_request");
    expect(r.body.details.issues[0].path).toEqual(["snapshot", "simulation", "hash"]);

    const s = copy();
    s.simulation.state.position = "AAAA";
    r = await post({ snapshot: s }).expect(400);
    expect(r.body.details.issues[0].path).toEqual(["snapshot", "simulation", "state", "position"]);

    const m = copy() as unknown as { simulation: { model: { joints: { b: { body: string } }[] } } };
    m.simulation.model.joints[1].b.body = "ghost";
    r = await post({ snapshot: m }).expect(400);
    expect(r.body.details.issues[0].path).toEqual([
      "snapshot",
      "simulation",
      "model",
      "joints",
      1,
      "b",
      "body",
    ]);

    r = await post({ snapshot: { format: "moreau.session" } }).expect(400);
    expect(r.body.details.issues.length).toBeGreaterThan(0);
  });

  it("400 for contact memory of the wrong shape (nested objects), and the worker lives on", async () => {
    const id = await createSession(server.app, slidingBoxNsc);
    await step(server.app, id, 5);
    const good = await snapshot(id);
    // 20 levels (5000, the depth that once overflowed postMessage's stack, is now refused
    // before parsing: test/api/hardening-parsing.test.ts); the closed schema refuses this one
    const bad = JSON.parse(JSON.stringify(good));
    bad.simulation.memory.contact = "DEEP";
    const nested = `${'{"x":'.repeat(20)}{}${"}".repeat(20)}`;
    const text = JSON.stringify({ snapshot: bad }).replace('"DEEP"', nested);
    const r = await api()
      .post("/v1/sessions")
      .set("content-type", "application/json")
      .send(text)
      .expect(400);
    expect(r.body.error).toBe("invalid_request");
    expect(r.body.details.issues[0].path.slice(0, 4)).toEqual([
      "snapshot",
      "simulation",
      "memory",
      "contact",
    ]);
    // nothing was left behind: the same worker still steps the session and restores the
    // good snapshot
    await step(server.app, id, 5);
    const copyId = (await post({ snapshot: good }).expect(201)).body.id as string;
    await step(server.app, copyId, 5);
  });

  it("400 for two or none of model, snapshot and recording", async () => {
    let r = await post({ snapshot: doc, model: chain }).expect(400);
    expect(r.body.message).toMatch(/exactly one of "model", "snapshot" or "recording"/);
    r = await post({}).expect(400);
    expect(r.body.message).toMatch(/exactly one/);
  });
});
