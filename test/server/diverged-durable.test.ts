/**
 * A diverged session keeps its last good state whole, so everything a session offers on
 * a state works on it: GET /snapshot resumes (POST /v1/sessions with it: 201), a fork is
 * made, and a PATCH answered after the divergence is on disk when the server is killed
 * (SIGKILL) and restarted. The undo of a failed step left the step's efforts: NaN after
 * newmark's and generalized-alpha's unconverged Newton, which the snapshot wrote as null —
 * GET /snapshot gave a document POST refused (400 at
 * snapshot.simulation.memory.efforts.actuators.0.1), a fork answered 400 invalid_request
 * blaming a snapshot the client never sent, and the restarted server set the checkpoint
 * file aside (the session and its answered PATCH gone).
 *
 * The model: a pendulum whose position servo presses it on a limit (efforts about 100 N·m),
 * 40 steps of 0.01 s, then a gravity of 1e13 m/s² that fails step 41 under every integrator
 * below. The reference is a twin session given the same requests but no step after the
 * PATCH: the diverged session's State must be the twin's (bodies, efforts, limit efforts,
 * observation), and so must the resumed, forked and restarted sessions'.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, expect, it } from "vitest";
import { type ServerProcess, spawnServer } from "../support/process";

const dataDir = mkdtempSync(join(tmpdir(), "moreau-diverged-"));
const servers: ServerProcess[] = [];
afterAll(() => {
  for (const s of servers) s.kill();
  rmSync(dataDir, { recursive: true, force: true });
});

async function start(): Promise<ServerProcess> {
  const s = await spawnServer(
    { DATA_DIR: dataDir, CHECKPOINT_MIN_INTERVAL_MS: "0" },
    // a process starts in seconds, on a loaded machine in a minute
    { timeoutMs: 90_000 },
  );
  servers.push(s);
  return s;
}

const INTEGRATORS = ["newmark", "generalized-alpha", "articulated"] as const;

function servoPendulum(integrator: string) {
  const model = JSON.parse(
    readFileSync(join(import.meta.dirname, "../../examples/pendulum.json"), "utf8"),
  );
  model.name = `diverged-${integrator}`;
  model.solver = { integrator, dt: 0.01 };
  model.joints[0].limits = { lower: -1, upper: 1 };
  model.actuators = [{ id: "servo", joint: "hinge", type: "position", target: 3, kp: 50, kd: 5 }];
  model.sensors = [{ id: "acc", type: "bodyAcceleration", body: "rod" }];
  return model;
}

/** What a State says of the dynamics (not the session's bookkeeping: keptStep, status). */
function physics(state: Record<string, unknown>) {
  const { step, time, bodies, actuators, joints, observation } = state;
  return { step, time, bodies, actuators, joints, observation };
}

it("a diverged session's snapshot resumes, its fork is made, and a PATCH after it survives a SIGKILL", async () => {
  const s1 = await start();
  const diverged: Record<string, string> = {};
  const twins: Record<string, string> = {};
  const reference: Record<string, ReturnType<typeof physics>> = {};
  for (const integrator of INTEGRATORS) {
    const model = servoPendulum(integrator);
    for (const ids of [diverged, twins]) {
      const r = await s1.call("POST", "/v1/sessions", { model });
      expect(r.status, r.text).toBe(201);
      ids[integrator] = r.body.id;
      expect((await s1.call("POST", `/v1/sessions/${r.body.id}/step`, { steps: 40 })).status).toBe(
        200,
      );
      const p = await s1.call("PATCH", `/v1/sessions/${r.body.id}`, { gravity: [0, 0, -1e13] });
      expect(p.status, p.text).toBe(200);
    }
    const id = diverged[integrator];
    const r = await s1.call("POST", `/v1/sessions/${id}/step`, { steps: 5 });
    expect(r.status, r.text).toBe(422);
    expect(r.body.error).toBe("diverged");
    expect(r.body.details.step).toBe(40);

    const state = (await s1.call("GET", `/v1/sessions/${id}/state`)).body;
    reference[integrator] = physics(
      (await s1.call("GET", `/v1/sessions/${twins[integrator]}/state`)).body,
    );
    expect(reference[integrator].step).toBe(40);
    // the last good step's efforts (the servo against the limit), finite
    expect(state.actuators[0].effort).toBeGreaterThan(90);
    expect(Math.abs(state.joints[0].limitEffort)).toBeGreaterThan(90);
    expect(physics(state)).toEqual(reference[integrator]);

    // its snapshot resumes, and its fork is made, both at the last good step
    const snapshot = await s1.call("GET", `/v1/sessions/${id}/snapshot`);
    expect(snapshot.status).toBe(200);
    const resumed = await s1.call("POST", "/v1/sessions", { snapshot: snapshot.body });
    expect(resumed.status, resumed.text).toBe(201);
    const fork = await s1.call("POST", `/v1/sessions/${id}/fork`);
    expect(fork.status, fork.text).toBe(201);
    for (const copy of [resumed.body.id, fork.body.id])
      expect(physics((await s1.call("GET", `/v1/sessions/${copy}/state`)).body)).toEqual(
        reference[integrator],
      );

    // PATCH after the divergence (answered: on disk before the answer)
    const p = await s1.call("PATCH", `/v1/sessions/${id}`, {
      gravity: [0, 0, -9.81],
      solver: { dt: 0.005 },
    });
    expect(p.status, p.text).toBe(200);
  }
  s1.kill();
  expect(await s1.exited).toBe(null);

  const s2 = await start();
  // no checkpoint was set aside as unreadable
  expect(readdirSync(dataDir).filter((f) => /corrupt|rejected|aside/i.test(f))).toEqual([]);
  for (const integrator of INTEGRATORS) {
    const id = diverged[integrator];
    const got = await s2.call("GET", `/v1/sessions/${id}`);
    expect(got.status, got.text).toBe(200);
    expect(got.body.status).toBe("diverged");
    const state = (await s2.call("GET", `/v1/sessions/${id}/state`)).body;
    expect(physics(state)).toEqual(reference[integrator]);
    // the PATCH answered before the kill is there
    const snapshot = (await s2.call("GET", `/v1/sessions/${id}/snapshot`)).body;
    expect(JSON.stringify(snapshot)).toContain('"dt":0.005');
    // and its snapshot still resumes (a diverged session, as its source: it steps after a
    // reset; README, Sessions)
    const resumed = await s2.call("POST", "/v1/sessions", { snapshot });
    expect(resumed.status, resumed.text).toBe(201);
    const copy = await s2.call("GET", `/v1/sessions/${resumed.body.id}/state`);
    expect(physics(copy.body)).toEqual(reference[integrator]);
  }
}, 240_000);
