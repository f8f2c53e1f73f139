/**
 * Refactoring guard (issue 27): the trajectory of every example and every benchmark scene
 * is bit-identical to the one recorded here — sha256 over the raw IEEE-754 bytes of every
 * body's position, orientation, velocity and angular velocity, and the time, after a fixed
 * number of steps. A restructuring of the engine must keep these hashes; a change meant to
 * alter the numerics (a new default, a fixed bug) changes them on purpose, and its commit
 * says why. Physics is asserted elsewhere against closed forms and conservation laws: this
 * file only proves that code moved without changing a single bit.
 *
 * Platform: the hashes hold for one JavaScript engine (Node's V8 on x86-64 here); a Node
 * upgrade that changes Math.sin/exp rounding would change them. `MOREAU_PRINT_HASHES=1`
 * prints the current table.
 */
import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { toDefaultsModel, toMoreauModel } from "../../../bench/compare/engines/moreau";
import { buildScene, COMPARE_SCENE_IDS } from "../../../bench/compare/scene";
import { beamModel } from "../../../bench/fem";
import { loadModel } from "../../../src/engine/index";
import { exampleFiles, readExample } from "../../support/examples";

const EXAMPLES = exampleFiles();

/** Steps per case: several hundred for the small scenes, fewer for the large ones. */
const STEPS: Record<string, number> = {
  "examples/cloth.json": 100,
  "S1-1000": 60,
  "S3-32": 120,
  "S3-32-stiff": 40,
  "H-100": 150,
  "S1-1000 defaults": 60,
  "S2-100 defaults": 200,
  "S3-32 defaults": 120,
  "S3-32-stiff defaults": 40,
  "H-100 defaults": 150,
  "fem beam (tuned)": 6,
  "fem beam (defaults)": 3,
};
const DEFAULT_STEPS = 400;

/** sha256 of the state after `steps` steps. */
function trajectoryHash(model: unknown, steps: number): string {
  const sim = loadModel(model);
  sim.step(steps);
  const { pos, quat, vel, omega } = sim.system;
  const h = createHash("sha256");
  for (const a of [pos, quat, vel, omega, Float64Array.of(sim.time)])
    h.update(new Uint8Array(a.buffer, a.byteOffset, a.byteLength));
  return h.digest("hex").slice(0, 16);
}

const EXPECTED: Record<string, string> = {
  "examples/ball-slope.json": "4625b98513a75530",
  "examples/bouncing-ball.json": "29c757328b6f0743",
  "examples/box-stack.json": "da3d7246bfe74f07",
  "examples/cloth.json": "ceedc36d53c86bd6",
  "examples/double-pendulum.json": "4d8afbe5311b8c1b",
  "examples/four-bar.json": "6ec31c3b220cbeec",
  "examples/newtons-cradle.json": "baa66d72f8b73b18",
  "examples/pendulum.json": "bfbffeafa9349f00",
  "examples/slider-crank.json": "1950546d2e2ab7cf",
  "examples/spring-mass-chain.json": "abc4a994f3fe34a0",
  "examples/whip.json": "01fc5cfe5fa40fa4",
  "S1-100": "0d30d3901d20b8ac",
  "S1-1000": "8eed54c5012b0ee2",
  "S2-10": "47ae36b35ba670ae",
  "S2-100": "0ce84ed74ff5de14",
  "S3-32": "7fe4cdeaaf62456e",
  "S3-32-stiff": "938b81bf078a85d0",
  "H-100": "8fc57ac9c8dbb389",
  "S1-100 defaults": "2d5c8fc2d1d40c75",
  "S1-1000 defaults": "8e3ac83f2e935270",
  "S2-10 defaults": "3fb7d3040965191d",
  "S2-100 defaults": "06ffa59d025c3ca5",
  "S3-32 defaults": "de4619e4dade11f4",
  "S3-32-stiff defaults": "938b81bf078a85d0",
  "H-100 defaults": "dbf99ec6cb8c6299",
  "fem beam (tuned)": "315d608acd52f03c",
  "fem beam (defaults)": "6e013a20acceb8e7",
};

const cases: [string, () => unknown][] = [
  ...EXAMPLES.map(
    (f) =>
      [`examples/${f}`, () => readExample(f.replace(/\.json$/, ""))] as [string, () => unknown],
  ),
  // every scene of the comparison with Moreau's set-up and at its defaults, and the fem
  // beam of `npm run bench -- --only fem` (bench/fem.ts) tuned and at its defaults
  ...COMPARE_SCENE_IDS.map(
    (id) => [id, () => toMoreauModel(buildScene(id))] as [string, () => unknown],
  ),
  ...COMPARE_SCENE_IDS.map(
    (id) => [`${id} defaults`, () => toDefaultsModel(buildScene(id))] as [string, () => unknown],
  ),
  [
    "fem beam (tuned)",
    () => beamModel("approximate", { newtonIterations: 1, linearTolerance: 1e-3 }),
  ],
  ["fem beam (defaults)", () => beamModel("exact", {})],
];

describe("trajectories are bit-identical", () => {
  const got: Record<string, string> = {};
  it.each(cases)("%s", (name, model) => {
    got[name] = trajectoryHash(model(), STEPS[name] ?? DEFAULT_STEPS);
    if (process.env.MOREAU_PRINT_HASHES) console.log(`  ${JSON.stringify(name)}: "${got[name]}",`);
    expect(got[name]).toBe(EXPECTED[name]);
  });
});
