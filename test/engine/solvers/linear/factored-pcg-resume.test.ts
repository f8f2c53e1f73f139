/**
 * A fem session on `auto`'s factored path (CG preconditioned by a block LDLᵀ factorization
 * reused across steps, solvers/linear/factored-pcg.ts) resumes bit for bit: the state
 * record carries the matrix the factorization was computed from and the work counted
 * against the next one, so a session restored from a snapshot (through its JSON form, in
 * a fresh simulation) repeats the iterates of the uninterrupted run exactly, and taking
 * snapshots changes nothing of the run. The bar (1 × 0.2 × 0.2 m in 6 × 6 × 6 cells, 294
 * free nodes, clamped at one end, sagging under gravity; converged Newton, each of the
 * implicit integrators and its own memory) is refactored every two or three steps, with extra CG work counted in between:
 * snapshots are taken before the first factorization, right after one and between two.
 */
import { describe, expect, it } from "vitest";
import { loadModel, loadSnapshot } from "../../../../src/engine/index";
import { clampedFemBar } from "../../../support/models";

const STEPS = 24;

type Integrator = "generalized-alpha" | "newmark" | "moreau-jean";

function bar(integrator: Integrator) {
  return loadModel(clampedFemBar(integrator));
}

type Sim = ReturnType<typeof bar>;

/** Every position and velocity double of the state (m, m/s). */
function bodyState(sim: Sim): Float64Array {
  const { pos, vel } = sim.captureState().record.bodies;
  const out = new Float64Array(2 * pos.length);
  out.set(pos);
  out.set(vel, pos.length);
  return out;
}

/** Index of the first double that differs (Object.is: −0 ≠ 0, NaN = NaN), or −1. */
function firstDifference(a: Float64Array, b: Float64Array): number {
  expect(a.length).toBe(b.length);
  for (let i = 0; i < a.length; i++) if (!Object.is(a[i], b[i])) return i;
  return -1;
}

/** A snapshot as it travels: its JSON text, parsed back. */
function throughJson(sim: Sim) {
  return JSON.parse(JSON.stringify(sim.snapshot()));
}

describe.each<Integrator>(["generalized-alpha", "newmark", "moreau-jean"])(
  "factored PCG resumes bit-identically (%s)",
  (integrator) => {
    // the uninterrupted run, nothing captured until its end
    const plain = bar(integrator);
    for (let k = 1; k <= STEPS; k++) plain.step(1);
    const end = bodyState(plain);
    // the same run read after every step: whether the factorization was renewed in the step
    const reference = bar(integrator);
    const refactored: boolean[] = [];
    const wasted: number[] = [];
    let previous: Float64Array | undefined;
    for (let k = 1; k <= STEPS; k++) {
      reference.step(1);
      const f = reference.captureState().factorization;
      const matrix = f?.matrix;
      refactored[k] =
        matrix !== undefined && (previous === undefined || firstDifference(matrix, previous) >= 0);
      wasted[k] = f?.wasted ?? Number.NaN;
      previous = matrix;
    }

    it("`auto` takes the factored path, refactoring now and then with extra CG work in between", () => {
      const f = reference.captureState().factorization;
      expect(f?.mode).toBe("factored");
      // W_f packed by its symmetric part: 9 values per free node (7³ = 343 nodes, 49
      // clamped) and per pair of free nodes sharing a tetrahedron (the solve matrix holds
      // both mirrors of each pair's block)
      const nodes = reference.system.numDofs / 3;
      expect(nodes).toBe(294);
      const mirrored = reference.captureState().matrixBlocks.length;
      expect(f?.matrix?.length).toBe(9 * (nodes + mirrored / 2));
      const renewals = refactored.filter(Boolean).length;
      expect(renewals).toBeGreaterThan(3);
      expect(renewals).toBeLessThan(STEPS);
      expect(refactored.some((r, k) => !r && wasted[k] > 0)).toBe(true);
    });

    it("runs that capture their state every step or snapshot it every 3 steps are the run without", () => {
      expect(firstDifference(bodyState(reference), end)).toBe(-1);
      const sim = bar(integrator);
      for (let k = 1; k <= STEPS; k++) {
        sim.step(1);
        if (k % 3 === 0) throughJson(sim);
      }
      expect(firstDifference(bodyState(sim), end)).toBe(-1);
    });

    it("restored right after a refactorization, between two and before the first, continues bit for bit", () => {
      const afterRefactor = refactored.findIndex((r, k) => r && k > 1);
      const between = refactored.findIndex((r, k) => !r && k > 1 && wasted[k] > 0);
      expect(afterRefactor).toBeGreaterThan(1);
      expect(between).toBeGreaterThan(1);
      const sim = bar(integrator);
      const taken = new Map<number, unknown>();
      const at = [0, 1, afterRefactor, between, STEPS - 1];
      for (let k = 0; k < STEPS; k++) {
        if (at.includes(k)) taken.set(k, throughJson(sim));
        sim.step(1);
      }
      for (const [k, snap] of taken) {
        const resumed = loadSnapshot(snap as Parameters<typeof loadSnapshot>[0]);
        resumed.step(STEPS - k);
        expect(firstDifference(bodyState(resumed), end), `resumed at step ${k}`).toBe(-1);
      }
    });

    it("a factorization record is checked: the matrix exactly in mode factored, at its packed length", () => {
      const snap = throughJson(reference);
      delete snap.checksum;
      const f = snap.memory.factorization;
      expect(() =>
        loadSnapshot({
          ...snap,
          memory: { ...snap.memory, factorization: { ...f, mode: "jacobi" } },
        }),
      ).toThrow(/memory\.factorization\.matrix/);
      const short = Buffer.from(f.matrix, "base64").subarray(8).toString("base64");
      expect(() =>
        loadSnapshot({
          ...snap,
          memory: { ...snap.memory, factorization: { ...f, matrix: short } },
        }),
      ).toThrow(/memory\.factorization\.matrix/);
    });
  },
);
