/**
 * Issue 26, item 2 (first part): one request must not hold a worker for gigabytes. Dense
 * factorizations (dense-lu, the dense least-squares QR behind sparse-qr) are refused above
 * DENSE_MAX_ORDER (the saddle-point system's order: dofs plus constraint rows), at model
 * validation, on PATCH and for assembly requests, with 400 and the path. Before this fix
 * a 3000-particle chain with dense-lu took 2 GB and a 1500-link assembly with sparse-qr
 * 2.8 GB until the watchdog restarted the worker.
 */
import request from "supertest";
import { describe, expect, it } from "vitest";
import { DENSE_MAX_ORDER, systemOrder } from "../../schemas/cost";
import { sphericalChain } from "../support/models";
import { useServer } from "../support/server";
import { createSession } from "./helpers";

/** A chain of n rigid links joined by spherical joints (6 dofs + 3 rows per link). */
function chain(n: number, solver: Record<string, unknown> = {}) {
  return {
    ...sphericalChain({ links: n, length: 0.1, mass: 1, inertia: [0.01, 0.01, 0.01], prefix: "l" }),
    solver,
  };
}

const server = useServer();

describe("dense factorizations above their size limit", () => {
  const big = Math.ceil(DENSE_MAX_ORDER / 9) + 1; // 9 per link
  it("the order counts dofs and joint rows", () => {
    expect(
      systemOrder({
        bodies: [
          { kind: "rigid", fixed: false },
          { kind: "particle", fixed: false },
          { kind: "rigid", fixed: true },
        ],
        joints: [{ type: "revolute" }, { type: "spherical" }],
        motors: [{}],
      }),
    ).toBe(6 + 3 + 5 + 3 + 1);
  });

  it("a model with dense-lu above the limit: 400 at solver.linearSolver; below it is accepted", async () => {
    const r = await request(server.app.server)
      .post("/v1/sessions")
      .send({ model: chain(big, { linearSolver: "dense-lu" }) });
    expect(r.status).toBe(400);
    const issue = r.body.details.issues.find(
      (i: { path: unknown[] }) => i.path.join(".") === "model.solver.linearSolver",
    );
    expect(issue.message).toContain(`limit of ${DENSE_MAX_ORDER}`);
    await request(server.app.server)
      .post("/v1/sessions")
      .send({ model: chain(10, { linearSolver: "dense-lu" }) })
      .expect(201);
  });

  it("a PATCH to dense-lu on a large session: 400 at solver.linearSolver, nothing changed", async () => {
    const id = await createSession(server.app, chain(big));
    const r = await request(server.app.server)
      .patch(`/v1/sessions/${id}`)
      .send({ solver: { linearSolver: "dense-lu" } });
    expect(r.status).toBe(400);
    expect(r.body.details.issues[0].path).toEqual(["solver", "linearSolver"]);
    await request(server.app.server).post(`/v1/sessions/${id}/step`).send({ steps: 1 }).expect(200);
  });

  it("assembly with sparse-qr above the limit: 400 at options.solver (POST /v1/assembly) and at solver (a session's)", async () => {
    const a = await request(server.app.server)
      .post("/v1/assembly")
      .send({ model: chain(big), options: { solver: "sparse-qr" } });
    expect(a.status).toBe(400);
    expect(a.body.details.issues[0].path).toEqual(["options", "solver"]);
    const id = await createSession(server.app, chain(big));
    const b = await request(server.app.server)
      .post(`/v1/sessions/${id}/assembly`)
      .send({ solver: "sparse-qr" });
    expect(b.status).toBe(400);
    expect(b.body.details.issues[0].path).toEqual(["solver"]);
  });
});
