/**
 * "No request may lose acknowledged work": with DATA_DIR set, every change answered 2xx is
 * on disk before the answer leaves. Each round below makes changes to a server process,
 * kills it with SIGKILL right after the last answer (nothing of it runs after the kill: no
 * shutdown checkpoint), starts a new server on the same DATA_DIR and finds every
 * acknowledged change there, read through its physics:
 *
 * - a falling body (moreau-jean θ = 1/2 integrates a constant acceleration exactly):
 *   after n steps of h, v_z = −g n h and a velocity v written at step 0 has moved it v n h;
 * - PATCH gravity, inputs over REST and over the WebSocket, reset, delete, create (round 1,
 *   with CHECKPOINT_MIN_INTERVAL_MS = 60 s, which deferred the checkpoints these asked for
 *   — the answer went out with nothing on disk, and a kill lost them);
 * - a step request that crosses CHECKPOINT_EVERY_STEPS (round 2): its answer's step is kept;
 * - fork, run and pause at its answer's step (round 3): a run answered 202 comes back
 *   running with its realtimeFactor and until (until 2026-12-07 its answer did not wait for
 *   a checkpoint holding it, and the file held no run: it came back as its creation left it,
 *   ready).
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { expect, it } from "vitest";
import { dataDirServers } from "../support/data-dir";
import { FrameClient } from "../support/frames";
import { fallingBody } from "../support/models";
import type { ServerProcess } from "../support/process";
import { waitFor } from "../support/wait";

const { dataDir, spawn, crash } = dataDirServers("moreau-ack-");

const H = 0.005;
const G = 9.81;

const start = (env: Record<string, string>) => spawn({ CHECKPOINT_EVERY_STEPS: "50", ...env });

async function create(s: ServerProcess, name: string): Promise<string> {
  const r = await s.call("POST", "/v1/sessions", { model: fallingBody({ name }) });
  expect(r.status, r.text).toBe(201);
  return r.body.id as string;
}

/** The ball's velocity and position after `steps` more steps. */
async function ballAfter(s: ServerProcess, id: string, steps: number) {
  const r = await s.call("POST", `/v1/sessions/${id}/step`, { steps });
  expect(r.status, r.text).toBe(200);
  const ball = r.body.bodies.find((b: { id: string }) => b.id === "ball");
  return {
    step: r.body.step as number,
    v: ball.velocity as number[],
    x: ball.position as number[],
  };
}

it("every acknowledged change survives a SIGKILL right after its answer", async () => {
  // round 1: checkpoints asked for within a minute of the last are deferred by the interval
  const s1 = await start({ CHECKPOINT_MIN_INTERVAL_MS: "60000" });
  const patched = await create(s1, "patched");
  const inputs = await create(s1, "inputs");
  const wsInputs = await create(s1, "ws-inputs");
  const reset = await create(s1, "reset");
  const deleted = await create(s1, "deleted");

  // reset: 30 steps kept by a pause first (its file must say 30 before the reset)
  expect((await s1.call("POST", `/v1/sessions/${reset}/step`, { steps: 30 })).status).toBe(200);
  expect((await s1.call("POST", `/v1/sessions/${reset}/pause`)).status).toBe(200);
  await waitFor(async () => {
    try {
      const f = readFileSync(join(dataDir, "sessions", `${reset}.json`), "utf8");
      return JSON.parse(f).snapshot.simulation.step === 30;
    } catch {
      return false;
    }
  });

  let r = await s1.call("PATCH", `/v1/sessions/${patched}`, { gravity: [0, 0, -1] });
  expect(r.status, r.text).toBe(200);
  r = await s1.call("POST", `/v1/sessions/${inputs}/inputs`, {
    inputs: [{ type: "bodyState", id: "ball", velocity: [3, 0, 0] }],
  });
  expect(r.status, r.text).toBe(200);
  expect(r.body.step).toBe(0);
  const ws = new FrameClient(`ws://127.0.0.1:${s1.port}/v1/sessions/${wsInputs}/stream`);
  await ws.open();
  ws.ws.send(
    JSON.stringify({
      type: "inputs",
      ref: 1,
      inputs: [{ type: "bodyState", id: "ball", velocity: [0, 5, 0] }],
    }),
  );
  const answer = await waitFor(async () =>
    ws.messages.find((m) => (m as { type: string }).type === "inputs"),
  );
  expect(answer).toMatchObject({ type: "inputs", ref: 1, step: 0 });
  ws.close();
  r = await s1.call("POST", `/v1/sessions/${reset}/reset`);
  expect(r.status, r.text).toBe(200);
  expect(r.body.step).toBe(0);
  expect((await s1.call("DELETE", `/v1/sessions/${deleted}`)).status).toBe(204);
  const created = await create(s1, "created");
  await crash(s1);

  // round 2: the step request crossing K = 50 waits for its checkpoint (no interval)
  const s2 = await start({ CHECKPOINT_MIN_INTERVAL_MS: "0" });
  // PATCH: g = 1 from step 0
  let b = await ballAfter(s2, patched, 100);
  expect(b.v[2]).toBeCloseTo(-1 * 100 * H, 12);
  // inputs, REST and WebSocket: the written velocity carried the ball v n h
  b = await ballAfter(s2, inputs, 100);
  expect(b.v[0]).toBe(3);
  expect(b.x[0]).toBeCloseTo(3 * 100 * H, 12);
  b = await ballAfter(s2, wsInputs, 100);
  expect(b.v[1]).toBe(5);
  expect(b.x[1]).toBeCloseTo(5 * 100 * H, 12);
  // reset: back at step 0, where the 100 steps start from
  b = await ballAfter(s2, reset, 100);
  expect(b.step).toBe(100);
  expect(b.v[2]).toBeCloseTo(-G * 100 * H, 12);
  expect((await s2.call("GET", `/v1/sessions/${deleted}`)).status).toBe(404);
  expect((await s2.call("GET", `/v1/sessions/${created}`)).status).toBe(200);

  const stepped = await create(s2, "stepped");
  b = await ballAfter(s2, stepped, 120);
  expect(b.step).toBe(120);
  await crash(s2);

  // round 3: run and pause
  const s3 = await start({ CHECKPOINT_MIN_INTERVAL_MS: "60000" });
  expect((await s3.call("GET", `/v1/sessions/${stepped}`)).body.step).toBe(120);
  b = await ballAfter(s3, stepped, 1);
  expect(b.v[2]).toBeCloseTo(-G * 121 * H, 12);
  r = await s3.call("POST", `/v1/sessions/${stepped}/fork`);
  expect(r.status, r.text).toBe(201);
  const forked = r.body.id as string;
  const running = await create(s3, "running");
  r = await s3.call("POST", `/v1/sessions/${running}/run`, { realtimeFactor: 0.5, until: 500 });
  expect(r.status, r.text).toBe(202);
  const runFrom = r.body.session.step as number;
  const paused = await create(s3, "paused");
  r = await s3.call("POST", `/v1/sessions/${paused}/run`, { realtimeFactor: null });
  expect(r.status, r.text).toBe(202);
  // far enough into the run that a checkpoint at its start would not pass for the pause's
  await waitFor(async () => (await s3.call("GET", `/v1/sessions/${paused}`)).body.step > 75);
  r = await s3.call("POST", `/v1/sessions/${paused}/pause`);
  expect(r.status, r.text).toBe(200);
  const pausedAt = r.body.step as number;
  await crash(s3);

  const s4 = await start({});
  const p = (await s4.call("GET", `/v1/sessions/${paused}`)).body;
  expect([p.status, p.step]).toEqual(["paused", pausedAt]);
  b = await ballAfter(s4, paused, 1);
  expect(b.v[2]).toBeCloseTo(-G * (pausedAt + 1) * H, 9);
  // the fork, at the step it was copied at
  b = await ballAfter(s4, forked, 1);
  expect(b.step).toBe(122);
  expect(b.v[2]).toBeCloseTo(-G * 122 * H, 12);
  // the run: resumed from the step it started at (its 202's checkpoint; the run's own were
  // within the interval), with its parameters; the ball where g n h puts it at its step
  const q = (await s4.call("GET", `/v1/sessions/${running}`)).body;
  expect(q.status).toBe("running");
  expect(q.run).toMatchObject({ realtimeFactor: 0.5, until: 500 });
  r = await s4.call("POST", `/v1/sessions/${running}/pause`);
  expect(r.status, r.text).toBe(200);
  expect(r.body.step).toBeGreaterThanOrEqual(runFrom);
  b = await ballAfter(s4, running, 1);
  expect(b.v[2]).toBeCloseTo(-G * b.step * H, 9);
  await crash(s4);
}, 120_000);
