/**
 * keptStep: every stream frame and State answer says which step the store holds, so a
 * client knows what a crash could lose. A run held at its checkpoint step k·K goes on after
 * CHECKPOINT_WAIT_MS without the write confirmed (README, Persistence): its frames past k·K
 * then carry the older keptStep — before, nothing told the client those steps were not kept.
 *
 * The server is a process (test/support/process.ts, as acknowledged-durable.test.ts) whose
 * checkpoint renames wait while a flag file exists (test/support/stalled-renames.mjs): a
 * DATA_DIR checkpoint is confirmed by that rename, so the store is stuck on demand.
 *
 * - stalled (once the run's 202 is answered: it waits for its checkpoint at step 0, and the
 *   run at a quarter of real time takes 1 s to step K): the run passes step K = 50 only
 *   after CHECKPOINT_WAIT_MS, and every frame
 *   (JSON over a plain socket, msgpack through the client library), the GET state answer and
 *   the session's checkpointStep say 0, the creation's checkpoint;
 * - released: the writes land and keptStep advances, a multiple of K, never past the frame;
 * - stalled again, then SIGKILL: the file holds the session at exactly the last frame's
 *   keptStep, with its run, and the restarted server runs it on from there; paused, read
 *   through its physics — a falling ball under moreau-jean's default θ = 1/2, exact for a
 *   constant acceleration: after n steps of h, v_z = −g n h and z = z0 − ½ g (n h)² — and
 *   its State and first frame say the paused step is kept.
 */
import { existsSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { expect, it } from "vitest";
import type { StateFrameOut } from "../../schemas/api";
import { MoreauClient } from "../../src/client/index";
import { dataDirServers } from "../support/data-dir";
import { FrameClient } from "../support/frames";
import { fallingBody } from "../support/models";
import type { ServerProcess } from "../support/process";
import { waitFor } from "../support/wait";

const { dataDir, spawn } = dataDirServers("moreau-kept-");
const stall = join(dataDir, "stall");
const held = `${stall}.held`;

const H = 0.005;
const G = 9.81;
const Z0 = 10;
const K = 50;
const WAIT_MS = 300;

function start(): Promise<ServerProcess> {
  return spawn(
    {
      CHECKPOINT_EVERY_STEPS: String(K),
      CHECKPOINT_MIN_INTERVAL_MS: "0",
      CHECKPOINT_WAIT_MS: String(WAIT_MS),
      MOREAU_TEST_STALL: stall,
    },
    {
      // a process starts in seconds, on a loaded machine in a minute
      timeoutMs: 90_000,
      nodeArgs: [
        "--import",
        pathToFileURL(join(import.meta.dirname, "../support/stalled-renames.mjs")).href,
      ],
    },
  );
}

type Frame = StateFrameOut & { bodies: { id: string; velocity: number[] }[] };

it("frames and State answers carry the step the store holds; a crash resumes exactly there", async () => {
  const s1 = await start();
  let r = await s1.call("POST", "/v1/sessions", { model: fallingBody({ name: "kept", z0: Z0 }) });
  expect(r.status, r.text).toBe(201);
  const id = r.body.id as string;
  r = await s1.call("GET", `/v1/sessions/${id}/state`);
  expect([r.body.step, r.body.keptStep]).toEqual([0, 0]);

  const json = new FrameClient(`ws://127.0.0.1:${s1.port}/v1/sessions/${id}/stream?fields=bodies`);
  await json.open();
  const packed: StateFrameOut[] = [];
  const lib = new MoreauClient(s1.base).stream(
    id,
    { format: "msgpack", fields: ["bodies"], reconnect: false },
    { onState: (f) => packed.push(f) },
  );
  await lib.opened();
  const frames = () => json.states() as unknown as Frame[];

  // stalled once the run's 202 (its checkpoint at step 0) is in: the step-50 checkpoint is
  // never confirmed
  const runAt = Date.now();
  r = await s1.call("POST", `/v1/sessions/${id}/run`, { realtimeFactor: 0.25 });
  expect(r.status, r.text).toBe(202);
  writeFileSync(stall, "");
  const past = await waitFor(() => frames().find((f) => f.step > K), 30_000);
  // it waited at step K for CHECKPOINT_WAIT_MS (a lower bound: a slow machine only adds)
  expect(Date.now() - runAt).toBeGreaterThanOrEqual(WAIT_MS);
  expect(past.keptStep).toBe(0);
  await waitFor(() => frames().some((f) => f.step >= 4 * K), 30_000);
  await waitFor(() => packed.some((f) => f.step >= 4 * K), 30_000);
  expect(new Set(frames().map((f) => f.keptStep))).toEqual(new Set([0]));
  expect(new Set(packed.map((f) => f.keptStep))).toEqual(new Set([0]));
  expect(lib.keptStep).toBe(0);
  r = await s1.call("GET", `/v1/sessions/${id}/state`);
  expect(r.body.step).toBeGreaterThanOrEqual(4 * K);
  expect(r.body.keptStep).toBe(0);
  expect((await s1.call("GET", `/v1/sessions/${id}`)).body.checkpointStep).toBe(0);

  // released: the writes land, keptStep advances (a checkpoint step, never past the frame's)
  rmSync(stall);
  const advanced = await waitFor(
    () => frames().find((f) => f.keptStep !== null && f.keptStep > 0),
    30_000,
  );
  await waitFor(() => packed.some((f) => f.keptStep !== null && f.keptStep > 0), 30_000);
  await waitFor(
    () => frames().some((f) => f.step >= (advanced.keptStep as number) + 2 * K),
    30_000,
  );
  for (const f of [...frames(), ...packed]) {
    expect((f.keptStep as number) % K).toBe(0);
    expect(f.keptStep).toBeLessThanOrEqual(f.step);
  }

  // stalled again, until a rename is held: the writes before it have all ended (one at a
  // time), so the store holds what the event loop last confirmed, and the frames made after
  // a State answer that says so carry it (the worker had the notice before the request)
  rmSync(held, { force: true });
  writeFileSync(stall, "");
  await waitFor(() => existsSync(held), 30_000);
  r = await s1.call("GET", `/v1/sessions/${id}/state`);
  const kept = r.body.keptStep as number;
  expect(kept).toBeGreaterThan(0);
  const last = await waitFor(() => frames().find((f) => f.step > r.body.step), 30_000);
  expect(last.keptStep).toBe(kept);
  expect(last.step).toBeGreaterThan(kept);
  lib.close();
  json.close();
  s1.kill();
  expect(await s1.exited).toBe(null);

  // the file holds exactly keptStep, with the run; restarted, the session runs on from there
  rmSync(stall);
  const file = JSON.parse(readFileSync(join(dataDir, "sessions", `${id}.json`), "utf8"));
  expect([file.snapshot.session.step, file.run]).toEqual([
    kept,
    { realtimeFactor: 0.25, until: null },
  ]);
  const s2 = await start();
  const session = (await s2.call("GET", `/v1/sessions/${id}`)).body;
  expect(session.status).toBe("running");
  expect(session.run.realtimeFactor).toBe(0.25);
  expect(session.step).toBeGreaterThanOrEqual(kept);
  r = await s2.call("POST", `/v1/sessions/${id}/pause`);
  expect(r.status, r.text).toBe(200);
  const n = r.body.step as number;
  expect(n).toBeGreaterThanOrEqual(kept);
  r = await s2.call("GET", `/v1/sessions/${id}/state`);
  const ball = r.body.bodies.find((b: { id: string }) => b.id === "ball");
  expect([r.body.step, r.body.keptStep]).toEqual([n, n]);
  expect(ball.velocity[2]).toBeCloseTo(-G * n * H, 9);
  expect(ball.position[2]).toBeCloseTo(Z0 - 0.5 * G * (n * H) ** 2, 9);
  const again = new FrameClient(`ws://127.0.0.1:${s2.port}/v1/sessions/${id}/stream`);
  await again.open();
  const first = await waitFor(() => again.states()[0] as unknown as Frame | undefined);
  expect([first.step, first.keptStep]).toEqual([n, n]);
  again.close();
  s2.kill();
}, 300_000);
