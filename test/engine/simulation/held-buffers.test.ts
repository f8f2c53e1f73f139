/**
 * What a simulation holds grows with its model, not with its square: the typed arrays'
 * buffers reachable from a Simulation (walked through its objects, each ArrayBuffer counted
 * once: deterministic, no GC involved) for N bodies each hinged to the ground, with a servo
 * or a joint limit on every hinge, N = 50 and 200 (4 times the model).
 *
 * Before, the stiff-rate correction (integrators/stiff-rates.ts) made 8 (2n + m + k) bytes
 * for every servo up front (n = 6N dofs, m = 5N rows, k = N: quadratic) and the limit problem
 * (actuators/limit-problem.ts) two dense columns of the dofs per bound and three (2L)²
 * matrices: the servos' share went from 446 to 6 002 KiB (13.5 times), the limits' from 824
 * to 11 658 KiB (14.1 times), the whole simulation 8.1 and 10.0 times. Now the correction's
 * buffers are made when one is taken, for the servos it reads, and a limit's columns for the
 * bounds active, by their nonzeros: 9 → 36 KiB and 124 → 417 KiB, the simulation 4.0 and
 * 3.9 times, as the hinges alone (570 → 2 271 KiB, 3.99 times).
 */
import { describe, expect, it } from "vitest";
import { loadModel } from "../../../src/engine/index";
import { SparseLuSolver } from "../../../src/engine/solvers/linear/sparse-lu";
import type { Vec3 } from "../../support/models";
import { groundHinges, hangingChain, positionServos } from "../../support/models";

/** Calls `visit` on each object reachable from `root` through data properties, once. */
function walk(root: unknown, visit: (o: object) => void): void {
  const seen = new Set<unknown>();
  const stack: unknown[] = [root];
  while (stack.length > 0) {
    const o = stack.pop();
    if (o === null || typeof o !== "object" || seen.has(o)) continue;
    seen.add(o);
    visit(o);
    if (ArrayBuffer.isView(o) || o instanceof ArrayBuffer) continue;
    if (o instanceof Map) for (const [k, v] of o) stack.push(k, v);
    else if (o instanceof Set) for (const v of o) stack.push(v);
    else
      for (const key of Object.getOwnPropertyNames(o)) {
        const d = Object.getOwnPropertyDescriptor(o, key);
        if (d !== undefined && "value" in d) stack.push(d.value);
      }
  }
}

/** Bytes of the distinct ArrayBuffers reachable from `root` through data properties. */
function heldBufferBytes(root: unknown): number {
  const buffers = new Set<ArrayBufferLike>();
  walk(root, (o) => {
    if (ArrayBuffer.isView(o)) buffers.add(o.buffer);
    else if (o instanceof ArrayBuffer) buffers.add(o);
  });
  let bytes = 0;
  for (const b of buffers) bytes += b.byteLength;
  return bytes;
}

/** N bodies hinged to the ground, each hinge with `extra`, built and stepped 3 times. */
function hinges(n: number, extra: "none" | "servo" | "limit"): number {
  const { bodies, joints } = groundHinges(n, extra === "limit");
  const actuators =
    extra === "servo"
      ? joints.map((_, i) => ({
          id: `a${i}`,
          joint: `j${i}`,
          type: "position" as const,
          target: 0.1,
          kp: 100,
        }))
      : [];
  const sim = loadModel({
    bodies,
    joints,
    actuators,
    solver: { dt: 0.005, integrator: extra === "limit" ? "moreau-jean" : "generalized-alpha" },
  });
  sim.step(3);
  return heldBufferBytes(sim);
}

describe("buffers held grow linearly with the model", () => {
  it("servos and joint limits on N and 4N hinges: their buffers 4 times, not 16", () => {
    const plain = [hinges(50, "none"), hinges(200, "none")];
    // the hinges alone: linear (3.99 times)
    expect(plain[1] / plain[0]).toBeLessThan(4.5);
    for (const extra of ["servo", "limit"] as const) {
      const held = [hinges(50, extra), hinges(200, extra)];
      const own = [held[0] - plain[0], held[1] - plain[1]];
      // before: servos 13.5, limits 14.1 (and the whole 8.1, 10.0)
      expect(own[1]).toBeLessThan(5 * Math.max(own[0], 0) + 16 * 1024);
      expect(held[1] / held[0]).toBeLessThan(4.5);
    }
  });
});

/**
 * A hanging chain of N links (hinges about x and y in turn), a position servo on each
 * (k_p = 10, k_d = 0), built and stepped 3 times under generalized-alpha: the servos couple
 * the links in W, so the joints' saddle point is factored by sparse LU
 * (integrators/constrained-solve.ts). The buffers held, and the LU's: its factors' storage
 * (entries of L and U, 12 bytes each: an index and a value) beside what they fill.
 */
function chain(n: number) {
  const axes: Vec3[] = [
    [1, 0, 0],
    [0, 1, 0],
  ];
  const { bodies, joints } = hangingChain({
    joints: Array.from({ length: n }, (_, i) => ({ type: "revolute" as const, axis: axes[i % 2] })),
    mass: 1,
    inertia: [0.021, 0.021, 0.002],
  });
  const sim = loadModel({
    gravity: [0, 0, -9.81],
    bodies,
    joints,
    actuators: positionServos(joints, 0, 10, 0),
    solver: { dt: 0.005, integrator: "generalized-alpha" },
  });
  sim.step(3);
  const lus: SparseLuSolver[] = [];
  walk(sim, (o) => {
    if (o instanceof SparseLuSolver) lus.push(o);
  });
  const factors = lus.map((lu) => {
    // the storage of L's and U's row indices (their values' the same lengths)
    const { li, ui } = lu as unknown as { li: Int32Array; ui: Int32Array };
    return {
      stored: li.length + ui.length,
      filled: lu.nnzL + lu.nnzU,
      order: lu.columnPermutation.length,
    };
  });
  return { held: heldBufferBytes(sim), factors };
}

describe("a chain's saddle-point LU keeps what its factors fill", () => {
  it("N and 4N links of servos: L and U stored within 2 (filled + n) + n each; the buffers 4 times", () => {
    const small = chain(50);
    const large = chain(200);
    expect(large.held / small.held).toBeLessThan(4.5);
    for (const c of [small, large]) {
      expect(c.factors).toHaveLength(1);
      const { stored, filled, order } = c.factors[0];
      expect(filled).toBeGreaterThan(0);
      // before: CSparse's first guess kept, 4 nnz(A) + n entries each, 5.2 times the fill
      expect(stored).toBeLessThanOrEqual(2 * (filled + 2 * order) + 2 * order);
    }
  });
});
