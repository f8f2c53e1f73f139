/**
 * Run by step-allocation.test.ts as its own process, bundled by esbuild the way the server's
 * worker is (vitest's module transform turns each imported binding into a getter call, whose
 * boxing would be counted instead of the engine's), with V8's gc() exposed
 * (node --expose-gc). Steps seven models of different integrators and linear solvers, each
 * warmed first, and
 * prints the median heap growth in bytes a step over nine batches after a full collection
 * (bytesPerStep; the smallest of up to three rounds while above SETTLED, as
 * mesh-allocation-probe.ts does, for V8's background compiler on a loaded machine), with
 * the Newton iterations a step of a few steps after them (newtonPerStep).
 *
 * The last three are benchmark scenes at the defaults (bench/compare: the scene and
 * toDefaultsModel, what `moreau-defaults` runs): S1-100 (moreau-jean, NNCG contact, the
 * position projection), the stiff cloth at 16 × 16 rather than S3-32-stiff's 32 × 32 (the
 * same path, newmark with `auto` → CG on the matrix-free operator with the two-level
 * preconditioner after the first hard solve, Newton iterating with its line search: 2.2
 * iterations a step; at 12 × 12 CG keeps block Jacobi; 16 × 16 takes 0.7 ms a step against
 * 4.1 ms) and S2-100 (articulated). MOREAU_PROBE_MODELS (names, comma-separated) steps only
 * those, e.g. one in a process of its own.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { toDefaultsModel } from "../../../bench/compare/engines/moreau";
import { chainScene, clothScene, spheresScene } from "../../../bench/compare/scene";
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

interface Measure {
  bodies: number;
  bytesPerStep: number;
  newtonPerStep: number;
}

function measure(sim: Simulation, bodies: number): Measure {
  let best = Number.POSITIVE_INFINITY;
  let newton = 0;
  let steps = 0;
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
    // Newton's iterations a step after the batches (a few steps more, outside the count)
    for (let i = 0; i < 20; i++) {
      sim.step(1);
      newton += sim.lastStepStats.newtonIterations;
      steps++;
    }
  }
  return { bodies, bytesPerStep: best, newtonPerStep: newton / steps };
}

const models: [string, ModelInput][] = [
  ["pile", pile()],
  ["whip", example("whip.json")],
  ["cloth", example("cloth.json")],
  ["chain", springChain()],
  ["S1-100 defaults", toDefaultsModel(spheresScene(100))],
  ["stiff cloth 16 defaults", toDefaultsModel(clothScene(16, 1e4))],
  ["S2-100 defaults", toDefaultsModel(chainScene(100))],
];
const only = process.env.MOREAU_PROBE_MODELS?.split(",");
const result: Record<string, Measure> = {};
for (const [name, model] of models)
  if (only === undefined || only.includes(name))
    result[name] = measure(loadModel(model), model.bodies.length);
process.stdout.write(JSON.stringify(result));
