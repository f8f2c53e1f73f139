/**
 * The typed client (src/client) against a real server, with `validate: true` so every
 * answer is also parsed by its zod schema: each REST method (inputs, recording, snapshot
 * and fork included), the error mapping (status,
 * code, zod issue paths), and the reconnecting stream (scene first, states in step order,
 * msgpack, a dropped connection reconnects with a new scene frame, deletion ends the
 * stream, an unknown session is not retried; its `sendInputs` and `step` commands answered
 * in order, a refusal and a closed connection rejecting). States are checked against the symplectic
 * Euler recurrence of a particle on a spring, written out in the test.
 */

import { beforeAll, describe, expect, it } from "vitest";
import type { SceneFrameOut, StateFrameOut } from "../../schemas/api";
import { MoreauApiError, MoreauClient, MoreauConnectionError } from "../../src/client/index";
import type { TestHook } from "../../src/server/protocol";
import { SPRING_PARTICLE, springParticle, springParticleRecurrence } from "../support/models";
import { useServer } from "../support/server";
import { waitFor } from "../support/wait";
import { dropStreams } from "./helpers";

const { stiffness: K, mass: M, dt: H } = SPRING_PARTICLE;
const springModel = springParticle();
const recurrence = (n: number) => springParticleRecurrence({}, n);

// (test hooks: a worker held while a stream command awaits its answer)
const server = useServer({ testHooks: true });
let client: MoreauClient;
beforeAll(() => {
  client = new MoreauClient(`${server.url}/`, { validate: true });
});

describe("REST", () => {
  it("operations: health, ready, metrics", async () => {
    expect((await client.health()).status).toBe("ok");
    const ready = await client.ready();
    expect(ready).toMatchObject({ ready: true, closing: false, workers: { total: 1, alive: 1 } });
    expect(await client.metrics()).toMatch(/^# HELP /m);
  });

  it("a session's life: create, step, get, list, patch, run, pause, reset, assemble, delete", async () => {
    const s = await client.createSession(springModel);
    expect(s).toMatchObject({ name: "spring", status: "ready", step: 0, dt: H });
    expect((await client.listSessions()).map((x) => x.id)).toContain(s.id);

    const st = await client.step(s.id, { steps: 25 });
    const want = recurrence(25);
    expect(st.step).toBe(25);
    expect(st.bodies[0].position[0]).toBeCloseTo(want.x, 12);
    expect(st.bodies[0].velocity[0]).toBeCloseTo(want.v, 12);
    expect((await client.getState(s.id)).bodies).toEqual(st.bodies);
    expect((await client.step(s.id, { duration: 5 * H })).step).toBe(30);
    expect((await client.getSession(s.id)).step).toBe(30);

    const patched = await client.patch(s.id, { gravity: [0, 0, -1] });
    expect(patched.status).toBe("ready");

    const run = await client.run(s.id, { realtimeFactor: null, until: 0.2 });
    expect(run.session.run).toMatchObject({ realtimeFactor: null, until: 0.2 });
    await waitFor(async () => (await client.getSession(s.id)).status === "paused", 10_000);
    const reset = await client.reset(s.id);
    expect(reset).toMatchObject({ time: 0, step: 0 });
    expect(reset.bodies[0].position).toEqual([1, 0, 0]);

    await client.run(s.id, { realtimeFactor: 1 });
    const paused = await client.pause(s.id);
    expect(paused.status).toBe("paused");

    const asm = await client.assembleSession(s.id, { levels: ["position", "velocity"] });
    expect(asm.exitFlag).toBe("SUCCESS");

    await client.deleteSession(s.id);
    const gone = await client.getSession(s.id).catch((e: unknown) => e);
    expect(gone).toBeInstanceOf(MoreauApiError);
    expect(gone).toMatchObject({ status: 404, code: "not_found" });
  });

  it("inputs, recording, snapshot and fork", async () => {
    const s = await client.createSession(springModel);
    await client.step(s.id, { steps: 10 });
    // teleported to x = 0.5 at rest at the boundary after step 10
    const accepted = await client.sendInputs(s.id, [
      { type: "bodyState", id: "p", position: [0.5, 0, 0], velocity: [0, 0, 0] },
    ]);
    expect(accepted.step).toBe(10);
    const st = await client.step(s.id, { steps: 1 });
    const v = -H * (K / M) * 0.5;
    expect(st.bodies[0].position[0]).toBeCloseTo(0.5 + H * v, 12);

    const rec = await client.getRecording(s.id);
    expect(rec).toMatchObject({ format: "moreau.recording", end: { step: 11 } });
    expect(rec.inputs).toHaveLength(1);
    expect(rec.states).toBeUndefined();
    const replayed = await client.getRecording(s.id, 11);
    expect(replayed.states?.at(-1)?.bodies).toEqual(st.bodies);

    const snap = await client.getSnapshot(s.id);
    expect(snap.session).toMatchObject({ name: "spring", step: 11 });
    const fork = await client.forkSession(s.id);
    expect(fork).toMatchObject({ name: "spring", step: 11 });
    expect(fork.id).not.toBe(s.id);
    expect((await client.getState(fork.id)).bodies).toEqual(st.bodies);
    await client.deleteSession(fork.id);
    await client.deleteSession(s.id);
  });

  it("assembly of a posted model: a particle hanging on a zero-length spring in gravity", async () => {
    const model = { ...springModel, gravity: [0, 0, -9.81] as [number, number, number] };
    const r = await client.assemble(model, { levels: ["acceleration"] });
    // a = −(k/m) x + g at x = (1, 0, 0)
    expect(r.bodies[0].acceleration[0]).toBeCloseTo(-100, 10);
    expect(r.bodies[0].acceleration[2]).toBeCloseTo(-9.81, 10);
  });

  it("maps error answers: 400 with issue paths, 409 conflict, connection failures", async () => {
    const bad = { ...springModel, forces: [{ ...springModel.forces[0], b: { body: "nope" } }] };
    const e = (await client.createSession(bad).catch((x: unknown) => x)) as MoreauApiError;
    expect(e).toBeInstanceOf(MoreauApiError);
    expect(e.status).toBe(400);
    expect(e.code).toBe("invalid_model");
    expect(e.issueLines()).toContain(
      'model.forces.0.b.body: force "s" refers to unknown body "nope"',
    );
    expect(e.request).toBe("POST /v1/sessions");

    const s = await client.createSession(springModel);
    await client.run(s.id, { realtimeFactor: 0.01 });
    const c = (await client.step(s.id, { steps: 1 }).catch((x: unknown) => x)) as MoreauApiError;
    expect(c).toMatchObject({ status: 409, code: "conflict" });
    await client.deleteSession(s.id);

    const down = new MoreauClient("http://127.0.0.1:1", { timeoutMs: 2000 });
    await expect(down.health()).rejects.toBeInstanceOf(MoreauConnectionError);
  });
});

describe("stream", () => {
  it("scene first, then States in step order that follow the recurrence (json and msgpack)", async () => {
    const s = await client.createSession(springModel);
    for (const format of ["json", "msgpack"] as const) {
      const scenes: SceneFrameOut[] = [];
      const states: StateFrameOut[] = [];
      const stream = client.stream(
        s.id,
        { every: 2, fields: ["bodies", "energy"], format },
        { onScene: (f) => scenes.push(f), onState: (f) => states.push(f) },
      );
      await stream.opened();
      await waitFor(() => states.length >= 1);
      const start = states[0].step;
      await client.step(s.id, { steps: 10 });
      await waitFor(() => states.length >= 6);
      expect(scenes).toHaveLength(1);
      expect(scenes[0]).toMatchObject({ type: "scene", session: s.id, name: "spring" });
      expect(scenes[0].bodies.map((b) => b.id)).toEqual(["p"]);
      const steps = states.map((f) => f.step);
      expect(steps).toEqual([start, ...[2, 4, 6, 8, 10].map((k) => start + k)]);
      for (const f of states) {
        expect(f.bodies?.[0].position[0]).toBeCloseTo(recurrence(f.step).x, 12);
        expect(f.contacts).toBeUndefined();
      }
      expect(stream.dropped).toBe(0);
      stream.close();
      await stream.ended();
      expect(stream.status).toBe("closed");
    }
    await client.deleteSession(s.id);
  });

  it("reconnects after a dropped connection; the scene comes again and frames go on", async () => {
    const s = await client.createSession(springModel);
    const scenes: SceneFrameOut[] = [];
    const states: StateFrameOut[] = [];
    const statuses: string[] = [];
    const stream = client.stream(
      s.id,
      { reconnect: { initialDelayMs: 50 } },
      {
        onScene: (f) => scenes.push(f),
        onState: (f) => states.push(f),
        onStatus: (st) => statuses.push(st),
      },
    );
    await stream.opened();
    await waitFor(() => states.length >= 1);
    expect(dropStreams(server.app, s.id)).toBe(1);
    await waitFor(() => statuses.includes("reconnecting"));
    await waitFor(() => stream.status === "open" && scenes.length === 2 && states.length >= 2);
    expect(stream.reconnects).toBe(1);
    const before = states.length;
    await client.step(s.id, { steps: 3 });
    await waitFor(() => states.length >= before + 3);
    expect(states.slice(-3).map((f) => f.step)).toEqual([1, 2, 3]);
    expect((await client.getSession(s.id)).subscribers).toBe(1);

    // deleting the session ends the stream (1000), with no reconnection
    await client.deleteSession(s.id);
    await stream.ended();
    expect(stream.lastClose?.code).toBe(1000);
    expect(stream.reconnects).toBe(1);
  });

  it("asks for the frame rate `maxFps`: a rate over STREAM_MAX_FPS is refused (400)", async () => {
    const s = await client.createSession(springModel);
    const errors: Error[] = [];
    const refused = client.stream(s.id, { maxFps: 1e6 }, { onError: (e) => errors.push(e) });
    await refused.ended();
    expect(errors.some((e) => /HTTP 400/.test(e.message))).toBe(true);
    // at 1 frame per second, a burst of 2 s of frames passes whole and the rest are dropped
    const states: StateFrameOut[] = [];
    const slow = client.stream(s.id, { maxFps: 1 }, { onState: (f) => states.push(f) });
    await slow.opened();
    await waitFor(() => states.length >= 1);
    await client.step(s.id, { steps: 50 });
    await waitFor(() => states.at(-1)?.step === 50);
    expect(states.length).toBeLessThan(10);
    expect(slow.dropped).toBeGreaterThan(40);
    slow.close();
    await client.deleteSession(s.id);
  });

  it("drives a session on its socket: sendInputs and step resolve with their answers after their frames, which follow the recurrence; a refusal rejects with its code and path, a closed stream rejects what awaits", async () => {
    for (const format of ["json", "msgpack"] as const) {
      const s = await client.createSession(springModel);
      const states: StateFrameOut[] = [];
      const stream = client.stream(
        s.id,
        { every: 5, fields: ["bodies"], format, reconnect: false },
        { onState: (f) => states.push(f) },
      );
      await stream.opened();
      // the symplectic Euler recurrence with a kick J_k at each 5-step period's start:
      // v ← v + J/m at the boundary, then v ← v − h (k/m) x, x ← x + h v
      let x = SPRING_PARTICLE.x0;
      let v = 0;
      for (let k = 0; k < 10; k++) {
        const J = 0.1 * (k + 1) * (-1) ** k;
        const taken = await stream.sendInputs([{ type: "impulse", id: "p", impulse: [J, 0, 0] }]);
        expect(taken).toEqual({ step: 5 * k, pending: 0 });
        const stepped = await stream.step(5);
        expect(stepped).toMatchObject({ step: 5 * (k + 1), keptStep: null });
        expect(stepped.time).toBeCloseTo(5 * (k + 1) * H, 12);
        v += J / M;
        for (let i = 0; i < 5; i++) {
          v -= H * (K / M) * x;
          x += H * v;
        }
        // the frame of the step reached came before the answer
        const last = states.at(-1) as StateFrameOut;
        expect(last.step).toBe(5 * (k + 1));
        expect(last.bodies?.[0].position[0]).toBeCloseTo(x, 12);
        expect(last.bodies?.[0].velocity[0]).toBeCloseTo(v, 12);
      }
      expect(await stream.sendInputs([{ type: "impulse", id: "p" }], 80)).toEqual({
        step: 80,
        pending: 1,
      });
      const refused = (await stream
        .sendInputs([{ type: "actuator", id: "nope", value: 1 }])
        .catch((e: unknown) => e)) as MoreauApiError;
      expect(refused).toBeInstanceOf(MoreauApiError);
      expect(refused).toMatchObject({ status: 0, code: "invalid_request" });
      expect(refused.issueLines()[0]).toMatch(/^inputs\.0\.id: unknown actuator "nope"/);
      const zero = (await stream.step(0).catch((e: unknown) => e)) as MoreauApiError;
      expect(zero).toMatchObject({ status: 0, code: "invalid_request" });
      // a command awaiting its answer when the connection drops (its worker held meanwhile)
      const held = server.app.moreau.sessions.pool.request(0, {
        kind: "test",
        hook: { action: "block", ms: 1000 } satisfies TestHook,
      });
      const lost = stream.step(1).catch((e: unknown) => e);
      expect(dropStreams(server.app, s.id)).toBe(1);
      expect(await lost).toBeInstanceOf(MoreauConnectionError);
      await held;
      await stream.ended();
      expect(await stream.step(1).catch((e: unknown) => e)).toBeInstanceOf(MoreauConnectionError);
      await client.deleteSession(s.id);
    }
  });

  it("does not retry an unknown session (404 refusal)", async () => {
    const errors: Error[] = [];
    const stream = client.stream("no-such-session", {}, { onError: (e) => errors.push(e) });
    await stream.ended();
    expect(errors.some((e) => /HTTP 404/.test(e.message))).toBe(true);
    expect(stream.reconnects).toBe(0);
  });
});

describe("access control (API keys)", () => {
  const KEY = "client-test-key-0123456789";
  const keyed = useServer({ apiKeys: [KEY] });

  it("sends the key with every request and the stream's upgrade", async () => {
    const anonymous = new MoreauClient(keyed.url);
    const e = (await anonymous.listSessions().catch((x: unknown) => x)) as MoreauApiError;
    expect(e).toMatchObject({ status: 401, code: "unauthorized" });
    expect((await anonymous.health()).status).toBe("ok"); // probes need no key

    const c = new MoreauClient(keyed.url, { apiKey: KEY, validate: true });
    const s = await c.createSession(springModel);
    const states: StateFrameOut[] = [];
    const stream = c.stream(s.id, {}, { onState: (f) => states.push(f) });
    await stream.opened();
    await c.step(s.id, { steps: 3 });
    await waitFor(() => states.some((f) => f.step === 3));
    expect(states.at(-1)?.bodies?.[0].position[0]).toBeCloseTo(recurrence(3).x, 12);
    stream.close();
    await c.deleteSession(s.id);

    const refused = anonymous.stream(s.id, { reconnect: false });
    await refused.ended();
    expect(refused.frames).toBe(0);
  });
});
