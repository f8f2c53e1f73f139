/**
 * The engine under mutated models, property-based (fast-check, fixed seed): the examples, an
 * 8 × 8 cloth and 10 hulls on a terrain of the benchmark, and the imported 6-axis arm
 * (torque actuators, and position servos), one to three of their
 * numbers replaced by an extreme, negative, zero, tiny or huge value, the integrator, linear
 * solver or contact solver switched at random, a PATCH and inputs mid-run. Every case either
 * is refused at load with ModelError, or steps (ending, if it must, in DivergenceError,
 * SolverError or a refused PATCH or input), and then:
 *  - a snapshot → JSON → loadSnapshot continues bit for bit with the same State;
 *  - the recording's replay ends on the run's state hash.
 * Its engine-level cousin, a longer fuzz of the same kind, found six defects (the 500s of a
 * negative mesh index and of PATCHes that cannot run together; snapshots of the sparse LU's
 * pivots, of the broad phase's axis and of articulated's step figures; an empty input list
 * that changed the run): this keeps them found.
 */
import { readdirSync, readFileSync } from "node:fs";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { toDefaultsModel } from "../../bench/compare/engines/moreau";
import { clothScene, hullsScene } from "../../bench/compare/scene";
import {
  DivergenceError,
  InputError,
  loadModel,
  loadSnapshot,
  ModelError,
  ParameterError,
  recordingOf,
  replayRecording,
  type Simulation,
  SolverError,
} from "../../src/engine/index";
import { importUrdf } from "../../src/formats/urdf/index";
import { armUrdf } from "../formats/urdf/arm";

const examples = new URL("../../examples/", import.meta.url);
const bases: [string, unknown][] = readdirSync(examples)
  .filter((f) => f.endsWith(".json"))
  .map((f) => [f, JSON.parse(readFileSync(new URL(f, examples), "utf8"))]);

const INTEGRATORS = [
  "moreau-jean",
  "newmark",
  "generalized-alpha",
  "backward-euler",
  "articulated",
] as const;
const LINEAR = ["auto", "sparse-lu", "sparse-ldlt", "cg", "gmres"];
const CONTACT = ["pgs", "nncg", "lemke", "apgd"];

/** Paths of every number in a JSON value. */
function numberPaths(v: unknown, path: (string | number)[] = [], out: (string | number)[][] = []) {
  if (Array.isArray(v)) for (let i = 0; i < v.length; i++) numberPaths(v[i], [...path, i], out);
  else if (v !== null && typeof v === "object")
    for (const [k, x] of Object.entries(v)) numberPaths(x, [...path, k], out);
  else if (typeof v === "number") out.push(path);
  return out;
}

function setAt(root: unknown, path: (string | number)[], f: (x: number) => number): void {
  let o = root as Record<string | number, unknown>;
  for (const k of path.slice(0, -1)) o = o[k] as Record<string | number, unknown>;
  const last = path[path.length - 1];
  o[last] = f(o[last] as number);
}

const VARIANTS: ((x: number) => number)[] = [
  () => 0,
  (x) => -x,
  (x) => x * 1e-6,
  (x) => x * 1e6,
  () => 1e-12,
  () => 1e9,
  (x) => 10 * x,
  () => 0.5,
];

/** Steps, tolerating the ends a model may legitimately come to; false when it did. */
function steps(sim: Simulation, n: number): boolean {
  try {
    sim.step(n);
    return true;
  } catch (err) {
    if (err instanceof DivergenceError || err instanceof SolverError) return false;
    throw err;
  }
}

describe("the engine under mutated models", () => {
  it("refuses with ModelError or steps; a snapshot continues bit for bit, a recording replays", async () => {
    // a cloth and hulls on a mesh terrain from the benchmark's scenes, small
    bases.push(["cloth 8 × 8", toDefaultsModel(clothScene(8))]);
    bases.push(["10 hulls", toDefaultsModel(hullsScene(10))]);
    for (const actuators of [undefined, { type: "position", kp: 500, kd: 20 }] as const) {
      const { model } = await importUrdf({
        urdf: armUrdf(),
        options: actuators ? { actuators } : {},
      });
      bases.push([actuators ? "arm-servos" : "arm", model]);
    }
    let stepped = 0;
    fc.assert(
      fc.property(
        fc.nat(bases.length - 1),
        fc.array(fc.tuple(fc.nat(), fc.nat(VARIANTS.length - 1)), { minLength: 1, maxLength: 3 }),
        fc.option(
          fc.tuple(fc.constantFrom("integrator", "linearSolver", "contactSolver"), fc.nat()),
        ),
        fc.option(fc.tuple(fc.constantFrom(...INTEGRATORS), fc.nat(2))),
        (b, mutations, choice, patch) => {
          const [name, base] = bases[b];
          const m = structuredClone(base) as Record<string, Record<string, unknown>>;
          const paths = numberPaths(m);
          for (const [p, v] of mutations) setAt(m, paths[p % paths.length], VARIANTS[v]);
          if (choice) {
            const [key, k] = choice;
            const list =
              key === "integrator" ? INTEGRATORS : key === "linearSolver" ? LINEAR : CONTACT;
            m.solver = { dt: m.solver?.dt ?? 0.005, [key]: list[k % list.length] };
          }
          const what = `${name} ${JSON.stringify({ mutations, choice, patch })}`;
          let sim: Simulation;
          try {
            sim = loadModel(m);
          } catch (err) {
            expect(err, what).toBeInstanceOf(ModelError);
            return;
          }
          if (!steps(sim, 30)) return;
          if (patch) {
            const [integrator, k] = patch;
            try {
              sim.update({ solver: { integrator } });
              const body = (m.bodies as unknown as { id: string; fixed?: boolean }[]).find(
                (x) => !x.fixed,
              );
              if (body && k > 0)
                sim.schedule([{ type: "bodyState", id: body.id, velocity: [0.3, 0, k] }]);
            } catch (err) {
              if (!(err instanceof ParameterError) && !(err instanceof InputError)) throw err;
            }
          }
          if (!steps(sim, 30)) return;
          const copy = loadSnapshot(JSON.parse(JSON.stringify(sim.snapshot())));
          const rec = JSON.parse(JSON.stringify(recordingOf(sim)));
          const a = steps(sim, 20);
          const c = steps(copy, 20);
          expect(c, what).toBe(a);
          expect(copy.stateHash(), what).toBe(sim.stateHash());
          expect(copy.state(), what).toEqual(sim.state());
          const replay = replayRecording(rec);
          steps(replay, rec.end.step - replay.stepCount);
          expect(replay.stateHash(), what).toBe(rec.end.hash);
          stepped++;
        },
      ),
      { seed: 20261205, numRuns: 60 },
    );
    // most cases step (a mutation rarely makes a model invalid or blow up at once)
    expect(stepped).toBeGreaterThan(20);
  });
});
