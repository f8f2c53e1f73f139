/**
 * Run by mesh.test.ts as its own process, bundled by esbuild the way the server's worker
 * is (vitest's module transform turns each imported binding into a getter call, whose
 * boxing would be counted instead of the engine's), with V8's gc() exposed
 * (node --expose-gc). Prints, for each shape against a wavy terrain mesh, the contacts of
 * four poses and the median heap growth in bytes a collideShapes call over nine batches of
 * 400 calls after a full collection (a few hundred kB at most: no collection runs within
 * them), once WARM_CALLS calls have let V8 optimize the hot functions (bytesPerCall).
 */
import { ContactBuffer } from "../../../../src/engine/geometry/contact-buffer";
import { convexHull } from "../../../../src/engine/geometry/hull";
import { buildMesh } from "../../../../src/engine/geometry/mesh";
import { collideShapes } from "../../../../src/engine/geometry/narrowphase";
import { WorldPose } from "../../../../src/engine/geometry/pose";
import type { Shape } from "../../../../src/engine/geometry/shapes";

const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) throw new Error("run with node --expose-gc");

/** A 6 × 6 grid of unit squares, two triangles each, heights 0.1 sin(i + 2j). */
const V: number[] = [];
const T: number[] = [];
for (let j = 0; j <= 6; j++)
  for (let i = 0; i <= 6; i++) V.push(i - 3, j - 3, 0.1 * Math.sin(i + 2 * j));
for (let j = 0; j < 6; j++)
  for (let i = 0; i < 6; i++) {
    const a = 7 * j + i;
    T.push(a, a + 1, a + 8, a, a + 8, a + 7);
  }
const terrain: Shape = { type: "mesh", mesh: buildMesh(new Float64Array(V), new Int32Array(T)) };

// an ellipsoid's points on a golden-angle spiral: faces, edges and vertices all meet
const pts = new Float64Array(3 * 30);
for (let k = 0; k < 30; k++) {
  const z = 1 - (2 * (k + 0.5)) / 30;
  const r = Math.sqrt(1 - z * z);
  pts.set([0.3 * r * Math.cos(2.4 * k), 0.25 * r * Math.sin(2.4 * k), 0.2 * z], 3 * k);
}
const shapes: [string, Shape][] = [
  ["sphere", { type: "sphere", radius: 0.3 }],
  ["capsule", { type: "capsule", radius: 0.2, halfLength: 0.3 }],
  ["box", { type: "box", halfExtents: [0.3, 0.2, 0.25] }],
  ["cylinder", { type: "cylinder", radius: 0.25, halfLength: 0.3 }],
  ["convex", { type: "convex", hull: convexHull(pts) }],
];

const at = new WorldPose().set([0, 0, 0], Float64Array.of(1, 0, 0, 0));
// tilted by 0.6 rad about (0.6, 0.8, 0), across internal edges, resting to a few cm deep
const [c, s] = [Math.cos(0.3), Math.sin(0.3)];
const poses = [0, 1, 2, 3].map((k) =>
  new WorldPose().set(
    [0.37 * k - 0.5, 0.21 * k - 0.3, 0.1 + 0.03 * k],
    Float64Array.of(c, 0.6 * s, 0.8 * s, 0),
  ),
);
const out = new ContactBuffer(2);
/** Calls before the count: V8 has optimized the hot functions by then. */
const WARM_CALLS = 5000;

function run(b: Shape, calls: number): number {
  let contacts = 0;
  for (let i = 0; i < calls; i++) {
    out.clear();
    out.setPair(0, 1, 0, 1);
    contacts += collideShapes(terrain, at, b, poses[i & 3], 0.02, out);
  }
  return contacts;
}

/**
 * The median heap growth a call over nine batches of 400 after a full collection. Up to
 * ROUNDS rounds of warming and counting, the smallest median kept: on a loaded machine V8's
 * background compiler may not have optimized the hot functions within one warm-up (a run
 * beside other heavy processes counted 240 B a call once, unoptimized code's heap numbers),
 * where an allocation of the engine's own shows in every round.
 */
const ROUNDS = 3;
function bytesPerCall(b: Shape): number {
  let best = Number.POSITIVE_INFINITY;
  for (let round = 0; round < ROUNDS && best >= 32; round++) {
    run(b, WARM_CALLS);
    // one full collection first: for a while after one, code runs that allocates (V8
    // re-optimizing what the collection cleared), so none runs between the batches
    gc?.();
    const batches: number[] = [];
    for (let k = 0; k < 9; k++) {
      const before = process.memoryUsage().heapUsed;
      run(b, 400);
      batches.push((process.memoryUsage().heapUsed - before) / 400);
    }
    batches.sort((x, y) => x - y);
    best = Math.min(best, batches[4]);
  }
  return best;
}

const result: Record<string, { contacts: number; bytesPerCall: number }> = {};
for (const [name, b] of shapes) {
  const contacts = run(b, 4);
  result[name] = { contacts, bytesPerCall: bytesPerCall(b) };
}
process.stdout.write(JSON.stringify(result));
