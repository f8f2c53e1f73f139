/**
 * /metrics' moreau_steps_short_total{tolerance}: the steps that ended short of a stated
 * tolerance, counted by the workers from each step's solver figures. Two sessions whose
 * shortfalls are known: a particle held 0.3 m from two ground points 1 m apart (no position
 * meets both joints: jointToleranceMet false at every step), and a box dropped on the
 * floor with one contact sweep a step against a 1e-12 m/s tolerance (contactConverged and
 * projectionConverged false at the steps in contact). The counts equal those of the same
 * models stepped here in process, step by step from their figures.
 */
import request from "supertest";
import { describe, expect, it } from "vitest";
import type { ModelInput } from "../../schemas/model";
import { loadModel } from "../../src/engine/index";
import { sample } from "../support/metrics";
import { impossibleJoints } from "../support/models";
import { useServer } from "../support/server";
import { waitFor } from "../support/wait";
import { createSession, step } from "./helpers";

const server = useServer({ workers: 1 });

// (θ = 0.6: velocity-level joints, which the post-step projection reports open)
const joints = impossibleJoints("moreau-jean", 0.01, 0.6);

const starvedBox: ModelInput = {
  gravity: [0, 0, -9.81],
  bodies: [
    {
      id: "box",
      kind: "rigid",
      mass: 1,
      inertia: [0.02 / 3, 0.02 / 3, 0.02 / 3],
      position: [0, 0, 0.12],
      shapes: [{ type: "box", halfExtents: [0.1, 0.1, 0.1] }],
    },
    {
      id: "floor",
      kind: "rigid",
      fixed: true,
      shapes: [{ type: "plane", normal: [0, 0, 1], offset: 0 }],
    },
  ],
  contact: { method: "nsc", friction: 0.5, restitution: 0.5 },
  solver: {
    integrator: "moreau-jean",
    dt: 0.002,
    tolerance: 1e-12,
    maxIterations: 1,
    projectionIterations: 1,
    projectionTolerance: 1e-12,
  },
} as ModelInput;

const FIGURES = [
  ["newton", "newtonConverged"],
  ["contact", "contactConverged"],
  ["projection", "projectionConverged"],
  ["step", "stepToleranceMet"],
  ["joint", "jointToleranceMet"],
] as const;

/** Steps short of each tolerance when `model` runs `n` steps here. */
function shortfalls(model: ModelInput, n: number): Record<string, number> {
  const sim = loadModel(model);
  const counts: Record<string, number> = Object.fromEntries(FIGURES.map(([k]) => [k, 0]));
  for (let i = 0; i < n; i++) {
    sim.step(1);
    const solver = sim.state().solver;
    for (const [k, figure] of FIGURES) if (!solver[figure]) counts[k]++;
  }
  return counts;
}

describe("/metrics: steps short of a stated tolerance", () => {
  it("counts each tolerance's misses as the steps' solver figures report them", async () => {
    const api = () => request(server.app.server);
    const zero = (await api().get("/metrics").expect(200)).text;
    for (const [k] of FIGURES)
      expect(sample(zero, `moreau_steps_short_total{tolerance="${k}"}`)).toBe(0);
    const jointsId = await createSession(server.app, joints);
    const box = await createSession(server.app, starvedBox);
    await step(server.app, jointsId, 40);
    await step(server.app, box, 400);
    const a = shortfalls(joints, 40);
    const b = shortfalls(starvedBox, 400);
    expect(a.joint).toBe(40);
    expect(b.contact).toBeGreaterThan(50);
    expect(b.projection).toBeGreaterThan(0);
    // workers report their counters every 250 ms
    const text = await waitFor(async () => {
      const t = (await api().get("/metrics").expect(200)).text;
      return sample(t, "moreau_steps_total") >= 440 ? t : null;
    });
    for (const [k] of FIGURES)
      expect(sample(text, `moreau_steps_short_total{tolerance="${k}"}`)).toBe(a[k] + b[k]);
  });
});
