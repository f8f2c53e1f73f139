/**
 * Issue 26, item 2 (deadlines inside the solver loops): one step that takes longer than
 * REQUEST_TIMEOUT_MS is abandoned cooperatively (src/engine/solvers/deadline.ts checks in the
 * Newton, nonsmooth and Krylov loops and the sparse factorizations), so the worker is not
 * replaced and the other sessions on it live on. Before, the only way out was the
 * watchdog terminating the worker, which took every co-located session to `error`.
 *
 * The slow step: 600 spheres stacked in 30 columns of 20 on a plane, with friction, the PGS asked
 * for 10⁵ sweeps to an unreachable tolerance (its residual stalls near round-off, above
 * 1e-300), far more than 300 ms of work.
 */
import request from "supertest";
import { describe, expect, it } from "vitest";
import { fallingBody } from "../support/models";
import { useServer } from "../support/server";
import { waitFor } from "../support/wait";
import { createSession, step } from "./helpers";

const r = 0.05;
const slow = {
  bodies: [
    { id: "floor", fixed: true, shapes: [{ type: "plane", normal: [0, 0, 1] }] },
    ...Array.from({ length: 600 }, (_, i) => ({
      id: `s${i}`,
      mass: 0.1,
      position: [0.3 * Math.floor(i / 20), 0, r + 2 * r * (i % 20)],
      shapes: [{ type: "sphere", radius: r }],
    })),
  ],
  contact: { method: "nsc", friction: 0.5 },
  solver: { maxIterations: 100_000, tolerance: 1e-300 },
};

const server = useServer({ workers: 1, requestTimeoutMs: 300 });

const restarts = async () => {
  const m = await request(server.app.server).get("/metrics");
  return Number(/^moreau_worker_restarts_total (\S+)/m.exec(m.text)?.[1] ?? "0");
};

describe("a step longer than the time limit", () => {
  it("a step request answers 504 with the state of the last good step; the worker and its other session live on", async () => {
    const other = await createSession(server.app, fallingBody());
    await step(server.app, other, 10);
    const id = await createSession(server.app, slow);
    const res = await request(server.app.server).post(`/v1/sessions/${id}/step`).send({ steps: 1 });
    expect(res.status).toBe(504);
    expect(res.body.details.stepsDone).toBe(0);
    // answered by the step itself, not by the watchdog replacing the worker
    expect(await restarts()).toBe(0);
    const s = await request(server.app.server).get(`/v1/sessions/${id}`).expect(200);
    expect(s.body.status).toBe("ready");
    expect(s.body.step).toBe(0);
    expect((await step(server.app, other, 5)).step).toBe(15);
  });

  it("a run whose step passes the limit ends diverged with the reason, the last good state kept; nothing else is affected", async () => {
    const other = await createSession(server.app, fallingBody());
    const id = await createSession(server.app, slow);
    await request(server.app.server)
      .post(`/v1/sessions/${id}/run`)
      .send({ realtimeFactor: null })
      .expect(202);
    const s = await waitFor(async () => {
      const b = (await request(server.app.server).get(`/v1/sessions/${id}`)).body;
      return b.status === "diverged" ? b : null;
    }, 20_000);
    expect(s.message).toContain("ran past the time limit");
    expect(s.step).toBe(0);
    expect(await restarts()).toBe(0);
    expect((await step(server.app, other, 3)).step).toBe(3);
  });
});
