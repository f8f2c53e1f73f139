/**
 * Determinism of the service: the same model and the same sequence of requests give
 * bit-identical states (sha256 of the state arrays of GET /snapshot, decoded here) whatever
 * the number of workers, the number of stream subscribers and the order in which other
 * sessions are stepped or run meanwhile.
 */
import request from "supertest";
import { afterAll, expect, it } from "vitest";
import type { MoreauApp } from "../../src/server/app";
import { FrameClient } from "../support/frames";
import { fallingBody, hangingChain, springParticle } from "../support/models";
import { startServer } from "../support/server";
import { stateHash } from "../support/snapshot";

const apps: MoreauApp[] = [];
const clients: FrameClient[] = [];
afterAll(async () => {
  for (const c of clients) c.close();
  for (const a of apps) await a.close();
});

/** A jointed chain with a motor and a spring, Newmark with Newton iterations. */
const chain = {
  name: "chain",
  ...hangingChain({
    joints: [
      { type: "revolute", axis: [0, 1, 0] },
      { type: "spherical" },
      { type: "revolute", axis: [1, 0, 0] },
    ],
    mass: (i) => 1 + i,
    inertia: [0.01, 0.012, 0.002],
    angularVelocity: (i) => [0.1 * i, 0, 0],
  }),
  motors: [{ id: "m0", joint: "j0", angle: { type: "sine", amplitude: 0.5, frequency: 2 } }],
  forces: [
    {
      id: "s",
      type: "spring",
      a: { body: "l2" },
      b: { body: "ground", point: [0.3, 0, -1.2] },
      stiffness: 50,
      restLength: 0.2,
    },
  ],
  solver: {
    integrator: "newmark",
    dt: 0.002,
    newtonTolerance: 1e-12,
    gamma: 0.55,
  },
};

/** Spheres on a plane and on each other, compliant contact. */
const pile = {
  name: "pile",
  bodies: [
    { id: "floor", kind: "rigid", fixed: true, shapes: [{ type: "plane" }] },
    ...[0, 1, 2].map((i) => ({
      id: `s${i}`,
      kind: "rigid",
      mass: 1,
      position: [0.03 * i, 0.01 * i, 0.105 + 0.21 * i],
      shapes: [{ type: "sphere", radius: 0.1 }],
    })),
  ],
  contact: { method: "smc", behavior: { type: "linear", stiffness: 1e4, damping: 2 } },
  solver: { integrator: "backward-euler", dt: 0.001 },
};

interface Noise {
  /** sessions created before the target (they push it onto another worker) */
  before: number;
  subscribers: number;
  /** step other sessions in parallel with every request, in a rotating order */
  interleave: boolean;
}

/** The request sequence on a new session of `model`; hashes after each request. */
async function scenario(
  app: MoreauApp,
  port: number,
  model: unknown,
  noise: Noise,
): Promise<string[]> {
  const api = () => request(app.server);
  const others: string[] = [];
  for (let i = 0; i < noise.before; i++) {
    const m =
      i % 2 === 0
        ? springParticle({ stiffness: 100 + i, name: `o${i}` })
        : fallingBody({ z0: 5, dt: 0.004, name: `o${i}` });
    others.push((await api().post("/v1/sessions").send({ model: m }).expect(201)).body.id);
  }
  if (others.length > 0)
    await api().post(`/v1/sessions/${others[0]}/run`).send({ realtimeFactor: null }).expect(202);
  const id = (await api().post("/v1/sessions").send({ model }).expect(201)).body.id as string;
  for (let k = 0; k < noise.subscribers; k++) {
    const q = ["every=1", "every=3&format=msgpack", "every=7&fields=bodies,energy"][k % 3];
    const c = new FrameClient(`ws://127.0.0.1:${port}/v1/sessions/${id}/stream?${q}`);
    clients.push(c);
    await c.open();
  }
  const hashes: string[] = [];
  let turn = 0;
  const withNoise = async (main: () => Promise<unknown>) => {
    if (!noise.interleave || others.length < 2) {
      await main();
    } else {
      const steppers = others.slice(1).map(
        (o, i) => () =>
          api()
            .post(`/v1/sessions/${o}/step`)
            .send({ steps: 20 + 7 * i }),
      );
      turn++;
      const order = [
        ...steppers.slice(turn % steppers.length),
        ...steppers.slice(0, turn % steppers.length),
      ];
      await Promise.all([
        ...order.slice(0, 1).map((f) => f()),
        main(),
        ...order.slice(1).map((f) => f()),
      ]);
    }
    hashes.push(stateHash((await api().get(`/v1/sessions/${id}/snapshot`).expect(200)).body));
  };
  await withNoise(() => api().post(`/v1/sessions/${id}/step`).send({ steps: 60 }).expect(200));
  await withNoise(() =>
    api()
      .patch(`/v1/sessions/${id}`)
      .send({ gravity: [0.5, 0, -9] })
      .expect(200),
  );
  await withNoise(() => api().post(`/v1/sessions/${id}/step`).send({ duration: 0.05 }).expect(200));
  await withNoise(() => api().post(`/v1/sessions/${id}/step`).send({ steps: 1 }).expect(200));
  await withNoise(() => api().post(`/v1/sessions/${id}/reset`).expect(200));
  await withNoise(() => api().post(`/v1/sessions/${id}/step`).send({ steps: 90 }).expect(200));
  if (others.length > 0) await api().post(`/v1/sessions/${others[0]}/pause`).expect(200);
  for (const o of others) await api().delete(`/v1/sessions/${o}`).expect(204);
  return hashes;
}

it("bit-identical states for 1 or 3 workers, 0 or 3 subscribers, with or without other sessions", async () => {
  const { app: one, port: p1 } = await startServer({ workers: 1 });
  const { app: three, port: p3 } = await startServer({ workers: 3 });
  apps.push(one, three);
  for (const model of [chain, pile]) {
    const quiet = await scenario(one, p1, model, { before: 0, subscribers: 0, interleave: false });
    const busy = await scenario(three, p3, model, { before: 4, subscribers: 3, interleave: true });
    const busyOne = await scenario(one, p1, model, { before: 3, subscribers: 2, interleave: true });
    // every request but the PATCH (which leaves the state as it is) moves the state
    expect(quiet[1]).toBe(quiet[0]);
    expect(new Set(quiet).size).toBe(quiet.length - 1);
    expect(busy).toEqual(quiet);
    expect(busyOne).toEqual(quiet);
  }
  // the streams did carry frames meanwhile
  expect(clients.every((c) => c.raw.length > 1)).toBe(true);
}, 60_000);
