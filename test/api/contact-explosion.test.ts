/**
 * Issue 26, item 2 (contact pairs): shapes piled into one place make O(n²) overlapping
 * pairs; beyond MAX_BROADPHASE_PAIRS per step the step fails with a message and the
 * session ends `diverged` with its last good state, instead of allocating contact sets of
 * gigabytes until the worker dies. 1000 spheres at one point: 5·10⁵ pairs (1.15 GB of
 * contact problem outside the worker's V8 heap limit, 5 s a step, where the limit was 4·10⁶).
 */
import request from "supertest";
import { describe, expect, it } from "vitest";
import { MAX_BROADPHASE_PAIRS } from "../../src/engine/geometry/broadphase";
import { fallingBody } from "../support/models";
import { useServer } from "../support/server";
import { createSession, step } from "./helpers";

const server = useServer({ workers: 1 });

describe("a contact explosion", () => {
  it("1000 spheres at one point: 422 diverged naming the pair limit; the worker's other session steps on", async () => {
    expect((1000 * 999) / 2).toBeGreaterThan(MAX_BROADPHASE_PAIRS);
    const other = await createSession(server.app, fallingBody());
    const id = await createSession(server.app, {
      bodies: Array.from({ length: 1000 }, (_, i) => ({
        id: `s${i}`,
        mass: 1,
        shapes: [{ type: "sphere", radius: 0.1 }],
      })),
      contact: { method: "nsc" },
      gravity: [0, 0, 0],
    });
    const r = await request(server.app.server).post(`/v1/sessions/${id}/step`).send({ steps: 1 });
    expect(r.status).toBe(422);
    expect(r.body.message).toContain(`more than ${MAX_BROADPHASE_PAIRS} overlapping shape pairs`);
    expect((await step(server.app, other, 2)).step).toBe(2);
  }, 60_000);
});
