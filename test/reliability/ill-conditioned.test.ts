/**
 * Valid but ill-conditioned models (mass ratios of 1e9, stiffnesses of 1e12) with every
 * integrator and several linear solvers either run (finite states) or end `diverged` with a
 * message (422) — never a 5xx, never a stuck worker — and the session stays usable (state,
 * reset, step). A request that runs past REQUEST_TIMEOUT_MS ends with a clear `timeout`
 * error, keeps the steps it made, and neither the session nor its worker is harmed.
 */
import request from "supertest";
import { describe, expect, it } from "vitest";
import { springChain, springParticle } from "../support/models";
import { useServer } from "../support/server";

/**
 * The models run on the default request time limit (on a loaded 2-core machine a cold
 * worker's 150 steps can take longer than the short one); the time-limit test has its own
 * app with REQUEST_TIMEOUT_MS = 400.
 */
const server = useServer({ workers: 2 });
const api = () => request(server.app.server);

/** Particles of 1e-3 kg and 1e6 kg in a chain of 1e12 N/m springs (ratio 1e9). */
function stiffChain(integrator: string, linearSolver: string) {
  const n = 6;
  return {
    name: `stiff-${integrator}-${linearSolver}`,
    gravity: [0, 0, -9.81],
    ...springChain({
      particles: n,
      prefix: "p",
      mass: (i) => (i % 2 === 0 ? 1e-3 : 1e6),
      position: (i) => [0.1 * (i + 1), 0, 0],
      velocity: (i) => [0, 0, i === 0 ? 1 : 0],
      stiffness: 1e12,
      damping: 1e3,
      restLength: 0.1,
    }),
    solver: { integrator, linearSolver, dt: 0.001, newtonIterations: 5 },
  };
}

/** A 1e6 kg rigid body on a 1e-3 kg one, frame springs of 1e12, and a box on a plane (contact). */
function stiffRigid(method: "nsc" | "smc") {
  return {
    name: `rigid-${method}`,
    bodies: [
      { id: "floor", kind: "rigid", fixed: true, shapes: [{ type: "plane" }] },
      {
        id: "light",
        kind: "rigid",
        mass: 1e-3,
        position: [0, 0, 0.1],
        shapes: [{ type: "sphere", radius: 0.1 }],
      },
      {
        id: "heavy",
        kind: "rigid",
        mass: 1e6,
        position: [0, 0, 0.35],
        angularVelocity: [3, 0, 1],
        shapes: [{ type: "box", halfExtents: [0.2, 0.2, 0.15] }],
      },
    ],
    forces: [
      {
        id: "fs",
        type: "frameSpring",
        a: { body: "light" },
        b: { body: "heavy" },
        stiffness: 1e12,
        rotaryStiffness: 1e12,
      },
    ],
    // friction is nonsmooth contact's, the force law compliant contact's
    contact:
      method === "nsc"
        ? { method, friction: 0.5 }
        : { method, behavior: { type: "linear", stiffness: 1e12 } },
    solver: { integrator: method === "nsc" ? "moreau-jean" : "newmark", dt: 0.002 },
  };
}

async function exercise(model: unknown) {
  const c = await api().post("/v1/sessions").send({ model });
  expect(c.status, c.text).toBe(201);
  const id = c.body.id as string;
  const r = await api().post(`/v1/sessions/${id}/step`).send({ steps: 150 });
  expect([200, 422], r.text).toContain(r.status);
  if (r.status === 200) {
    for (const b of r.body.bodies)
      for (const x of [...b.position, ...b.velocity]) expect(Number.isFinite(x)).toBe(true);
  } else {
    expect(r.body.error).toBe("diverged");
    expect(r.body.message).toMatch(/step \d+/);
    const s = await api().get(`/v1/sessions/${id}`).expect(200);
    expect(s.body.status).toBe("diverged");
    expect(s.body.message).toBe(r.body.message);
  }
  // still usable: its state, a reset, a step
  await api().get(`/v1/sessions/${id}/state`).expect(200);
  await api().post(`/v1/sessions/${id}/reset`).expect(200);
  const again = await api().post(`/v1/sessions/${id}/step`).send({ steps: 1 });
  expect([200, 422]).toContain(again.status);
  await api().delete(`/v1/sessions/${id}`).expect(204);
  return r.status;
}

describe("ill-conditioned models run or end diverged", () => {
  for (const integrator of ["newmark", "backward-euler", "moreau-jean", "symplectic-euler"])
    for (const solver of ["auto", "cg", "gmres"])
      it(`mass ratio 1e9, k = 1e12: ${integrator} / ${solver}`, async () => {
        await exercise(stiffChain(integrator, solver));
      });

  it("symplectic Euler at k = 1e12 on 1e-3 kg is unstable and ends diverged", async () => {
    expect(await exercise({ ...stiffChain("symplectic-euler", "auto") })).toBe(422);
  });

  for (const method of ["nsc", "smc"] as const)
    it(`rigid bodies with a 1e9 mass ratio and 1e12 stiffness, ${method} contact`, async () => {
      await exercise(stiffRigid(method));
    });
});

describe("per-request time limits", () => {
  const limited = useServer({ workers: 2, requestTimeoutMs: 400 });
  const limitedApi = () => request(limited.app.server);
  it("a step request past REQUEST_TIMEOUT_MS ends with 504 timeout; session and worker go on", async () => {
    // a well-posed model that simply takes long: 10⁶ implicit steps of a 40-particle chain
    const chain = {
      ...stiffChain("newmark", "auto"),
      ...springChain({
        particles: 40,
        prefix: "p",
        mass: 0.01,
        position: (i) => [0.1 * (i + 1), 0, 0],
        stiffness: 100,
        damping: 0.01,
        restLength: 0.1,
      }),
    };
    const id = (await limitedApi().post("/v1/sessions").send({ model: chain }).expect(201)).body.id;
    const neighbour = (
      await limitedApi().post("/v1/sessions").send({ model: springParticle() }).expect(201)
    ).body.id;
    const t0 = Date.now();
    const r = await limitedApi().post(`/v1/sessions/${id}/step`).send({ steps: 1_000_000 });
    expect(r.status).toBe(504);
    expect(Date.now() - t0).toBeLessThan(3000);
    expect(r.body.error).toBe("timeout");
    expect(r.body.message).toMatch(/time limit after \d+ of 1000000 steps/);
    const done = r.body.details.stepsDone as number;
    expect(done).toBeGreaterThan(0);
    const s = await limitedApi().get(`/v1/sessions/${id}`).expect(200);
    expect(s.body).toMatchObject({ step: done, status: "ready" });
    await limitedApi().post(`/v1/sessions/${id}/step`).send({ steps: 2 }).expect(200);
    expect((await limitedApi().get(`/v1/sessions/${id}`).expect(200)).body.step).toBe(done + 2);
    // no worker was replaced and the other session is intact
    const ready = await limitedApi().get("/ready").expect(200);
    expect(ready.body.workers).toEqual({ total: 2, alive: 2, failing: [] });
    const n = await limitedApi()
      .post(`/v1/sessions/${neighbour}/step`)
      .send({ steps: 3 })
      .expect(200);
    expect(n.body.step).toBe(3);
  });
});
