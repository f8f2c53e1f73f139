/**
 * Run by step-allocation.test.ts as its own process, bundled by esbuild the way the server's
 * worker is (vitest's module transform turns each imported binding into a getter call, whose
 * boxing would be counted instead of the engine's), with V8's gc() exposed
 * (node --expose-gc). Steps four models of different integrators and linear solvers, each
 * warmed first, and
 * prints the median heap growth in bytes a step over nine batches after a full collection
 * (bytesPerStep; the smallest of up to three rounds while above SETTLED, as
 * mesh-allocation-probe.ts does, for V8's background compiler on a loaded machine).
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { ModelInput } from "../../../schemas/model";
import { loadModel, type Simulation } from "../../../src/engine/index";

const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) throw new Error("run with node --expose-gc");

/** 64 spheres (5 cm) dropped in a 4 × 4 × 4 lattice into a box of planes: moreau-jean, nsc. */
function pile(): ModelInput {
  const bodies: ModelInput["bodies"] = [];
  for (let i = 0; i < 64; i++)
    bodies.push({
      id: `s${i}`,
      kind: "rigid",
      mass: 0.1,
      inertia: [1e-4, 1e-4, 1e-4],
      position: [0.11 * (i % 4) - 0.165, 0.11 * ((i >> 2) % 4) - 0.165, 0.06 + 0.11 * (i >> 4)],
      shapes: [{ type: "sphere", radius: 0.05 }],
    });
  const wall = (normal: [number, number, number], offset: number) => ({
    type: "plane" as const,
    normal,
    offset,
  });
  bodies.push({
    id: "box",
    kind: "rigid",
    fixed: true,
    shapes: [
      wall([0, 0, 1], 0),
      wall([1, 0, 0], -0.25),
      wall([-1, 0, 0], -0.25),
      wall([0, 1, 0], -0.25),
      wall([0, -1, 0], -0.25),
    ],
  });
  return {
    gravity: [0, 0, -9.81],
    bodies,
    contact: { friction: 0.5 },
    solver: { integrator: "moreau-jean", dt: 1 / 240 },
  };
}

/**
 * 20 particles hung in a chain of damped springs (60 unknowns: `auto` factors W, which the
 * dashpots make nonsymmetric, by the dense LU): moreau-jean.
 */
function springChain(): ModelInput {
  const n = 20;
  const bodies: ModelInput["bodies"] = [];
  const forces: NonNullable<ModelInput["forces"]> = [];
  for (let i = 0; i < n; i++) {
    bodies.push({ id: `m${i}`, kind: "particle", mass: 0.05, position: [0.1 * (i + 1), 0, 0] });
    forces.push({
      id: `k${i}`,
      type: "spring",
      a: i === 0 ? { body: "ground", point: [0, 0, 0] } : { body: `m${i - 1}` },
      b: { body: `m${i}` },
      stiffness: 500,
      damping: 0.2,
      restLength: 0.1,
    });
  }
  return {
    gravity: [0, 0, -9.81],
    bodies,
    forces,
    solver: { integrator: "moreau-jean", dt: 0.002 },
  };
}

const example = (name: string): ModelInput =>
  JSON.parse(readFileSync(join(process.env.MOREAU_ROOT ?? ".", "examples", name), "utf8"));

/** Steps in a batch, and steps before the count (the pile has landed, V8 has optimized). */
const BATCH = 100;
const WARM_STEPS = 300;
/** Rounds at most, and the count (bytes a step) below which a round needs no repeat. */
const ROUNDS = 3;
const SETTLED = 2048;

function bytesPerStep(sim: Simulation): number {
  let best = Number.POSITIVE_INFINITY;
  for (let round = 0; round < ROUNDS && best >= SETTLED; round++) {
    sim.step(WARM_STEPS);
    // one full collection first, none between the batches (see mesh-allocation-probe.ts)
    gc?.();
    const batches: number[] = [];
    for (let k = 0; k < 9; k++) {
      const before = process.memoryUsage().heapUsed;
      sim.step(BATCH);
      batches.push((process.memoryUsage().heapUsed - before) / BATCH);
    }
    batches.sort((x, y) => x - y);
    best = Math.min(best, batches[4]);
  }
  return best;
}

const models: [string, ModelInput][] = [
  ["pile", pile()],
  ["whip", example("whip.json")],
  ["cloth", example("cloth.json")],
  ["chain", springChain()],
];
const result: Record<string, { bodies: number; bytesPerStep: number }> = {};
for (const [name, model] of models) {
  const sim = loadModel(model);
  result[name] = { bodies: model.bodies.length, bytesPerStep: bytesPerStep(sim) };
}
process.stdout.write(JSON.stringify(result));
