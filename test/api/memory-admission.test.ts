/**
 * Sessions are admitted by their estimated memory (src/server/sessions/memory.ts) against
 * each worker's WORKER_SESSION_MEMORY_MB, not only counted against MAX_SESSIONS: a 100×100
 * cloth holds ~23 MiB of its worker's heap (measured, retained after GC), so 64 of them
 * (MAX_SESSIONS) could pass two 2 GiB workers, and a worker loss's rebuilds would pile the
 * lost sessions on the others. Here a 6 MiB budget on one worker: a 30×30 cloth (900
 * particles, 3 393 springs) is estimated at 64 KiB + 900·1536 + 3393·320 bytes = 2.42 MiB,
 * so two fit (4.83 MiB) and a third (7.25 MiB) is refused with 507 naming the budget, while
 * small sessions (a falling body: 64 KiB + 1536 bytes) still fit in what is left.
 */
import request from "supertest";
import { describe, expect, it } from "vitest";
import { clothModel } from "../../bench/scenes";
import { lightestWithRoom } from "../../src/server/sessions/memory";
import { fallingBody } from "../support/models";
import { useServer } from "../support/server";

const MiB = 2 ** 20;
const cloth = { ...clothModel({ n: 30 }), name: "cloth30" };
const clothBytes = 64 * 1024 + 900 * 1536 + 3393 * 320;

describe("admission by estimated memory (WORKER_SESSION_MEMORY_MB)", () => {
  const server = useServer({ workers: 1, workerSessionMemoryMb: 6 });
  const api = () => request(server.app.server);

  it("the third large session is refused with 507 naming the budget; small ones still fit", async () => {
    const a = await api().post("/v1/sessions").send({ model: cloth }).expect(201);
    await api().post("/v1/sessions").send({ model: cloth }).expect(201);
    const r = await api().post("/v1/sessions").send({ model: cloth }).expect(507);
    expect(r.body).toMatchObject({
      error: "insufficient_memory",
      details: {
        limit: "WORKER_SESSION_MEMORY_MB",
        budgetBytes: 6 * MiB,
        sessionBytes: clothBytes,
        heldBytes: 2 * clothBytes,
      },
    });
    expect(r.body.message).toContain("WORKER_SESSION_MEMORY_MB");
    expect(r.body.message).toContain("6.0 MiB");
    // refused, not kept: two sessions, and the worker holds two
    expect((await api().get("/v1/sessions").expect(200)).body.sessions).toHaveLength(2);
    for (let i = 0; i < 5; i++)
      await api().post("/v1/sessions").send({ model: fallingBody() }).expect(201);
    // a fork is a session too
    await api().post(`/v1/sessions/${a.body.id}/fork`).expect(507);
    // room again once one goes
    await api().delete(`/v1/sessions/${a.body.id}`).expect(204);
    await api().post("/v1/sessions").send({ model: cloth }).expect(201);
  });
});

describe("lightestWithRoom (placement of new and rebuilt sessions)", () => {
  it("the least loaded worker that keeps its sessions within the budget, or none", () => {
    // loads [0, 3]: by load alone worker 0, but it holds 5 of 6 MiB
    expect(lightestWithRoom([0, 3], [5 * MiB, 1 * MiB], 2 * MiB, 6 * MiB)).toBe(1);
    expect(lightestWithRoom([0, 3], [4 * MiB, 1 * MiB], 2 * MiB, 6 * MiB)).toBe(0);
    expect(lightestWithRoom([1, 1], [5 * MiB, 5 * MiB], 2 * MiB, 6 * MiB)).toBeNull();
    // exactly at the budget fits
    expect(lightestWithRoom([2, 1], [4 * MiB, 5 * MiB], 2 * MiB, 6 * MiB)).toBe(0);
  });
});
