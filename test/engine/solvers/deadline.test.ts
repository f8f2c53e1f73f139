/**
 * deadline.ts: the cooperative step deadline, with performance.now() replaced by a clock
 * the test advances (no wall-clock dependence): off by default and after clearDeadline or
 * an infinite limit, thrown once passed, and honoured by a solver's sweep loop.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import { convexHull } from "../../../src/engine/geometry/hull";
import { csrFromTriplets } from "../../../src/engine/math/csr";
import {
  checkDeadline,
  clearDeadline,
  DeadlineExceeded,
  setDeadline,
} from "../../../src/engine/solvers/deadline";
import { DenseCholeskySolver } from "../../../src/engine/solvers/linear/dense-cholesky";
import { DenseLuSolver } from "../../../src/engine/solvers/linear/dense-lu";
import { dependentRows, rankRevealingQr } from "../../../src/engine/solvers/linear/sparse-qr";
import { PgsSolver } from "../../../src/engine/solvers/nonsmooth";

/** performance.now() reads `clock.now` (ms) from here on. */
function fakeClock(start: number) {
  const clock = { now: start };
  vi.spyOn(performance, "now").mockImplementation(() => clock.now);
  return clock;
}

afterEach(() => {
  clearDeadline();
  vi.restoreAllMocks();
});

describe("deadline", () => {
  it("is off unless set, after clearDeadline and for an infinite limit", () => {
    const clock = fakeClock(1000);
    expect(() => checkDeadline()).not.toThrow();
    setDeadline(5);
    clock.now = 1010;
    expect(() => checkDeadline()).toThrow(DeadlineExceeded);
    clearDeadline();
    expect(() => checkDeadline()).not.toThrow();
    setDeadline(Number.POSITIVE_INFINITY);
    clock.now = 1e12;
    expect(() => checkDeadline()).not.toThrow();
  });

  it("throws only once the limit has passed, reporting the limit in ms", () => {
    const clock = fakeClock(200);
    setDeadline(40.4);
    clock.now = 240.4; // exactly at the deadline: not past it
    expect(() => checkDeadline()).not.toThrow();
    clock.now = 240.5;
    let caught: unknown;
    try {
      checkDeadline();
    } catch (e) {
      caught = e;
    }
    expect(caught).toBeInstanceOf(DeadlineExceeded);
    const e = caught as DeadlineExceeded;
    expect(e.name).toBe("DeadlineExceeded");
    expect(e.limitMs).toBe(40.4);
    expect(e.message).toBe("a single step ran past the time limit (40 ms)");
  });

  it("stops a solver's sweeps: PGS throws once the clock passes the deadline", () => {
    // Two nearly parallel contacts: PGS needs far more than 1000 sweeps (see types.test.ts),
    // and every call of performance.now() advances the fake clock by 1 ms.
    const clock = fakeClock(0);
    vi.mocked(performance.now).mockImplementation(() => clock.now++);
    setDeadline(10);
    const eps = 1e-4;
    const W = Float64Array.of(1, 1 - eps, 1 - eps, 1);
    const q = Float64Array.of(-1, -1);
    expect(() =>
      new PgsSolver().solve({ contacts: 2, contactDim: 1, W, q }, new Float64Array(2)),
    ).toThrow(DeadlineExceeded);
    // setDeadline read 0 (deadline at 10 ms); PGS then reads the clock once per 16 sweeps:
    // readings 1..10 pass, reading 11 throws, leaving the fake clock at 12
    expect(clock.now).toBe(12);
  });

  it("stops quickhull every 64 faces it examines (a 150 000-point convex shape's build)", () => {
    // 400 points on a sphere: every one a vertex, hundreds of faces examined
    const pts = new Float64Array(3 * 400);
    for (let i = 0; i < 400; i++) {
      const z = 1 - (2 * i + 1) / 400;
      const r = Math.sqrt(1 - z * z);
      const phi = i * 2.399963229728653;
      pts.set([r * Math.cos(phi), r * Math.sin(phi), z], 3 * i);
    }
    const clock = fakeClock(0);
    vi.mocked(performance.now).mockImplementation(() => clock.now++);
    setDeadline(2);
    expect(() => convexHull(pts)).toThrow(DeadlineExceeded);
    expect(clock.now).toBe(4);
    clearDeadline();
    vi.restoreAllMocks();
    expect(convexHull(pts).vertices.length / 3).toBe(400);
  });

  it("stops the dense factorizations: LU, Cholesky and the QRs check it every 32 columns", () => {
    // an order-4000 dense LU took tens of seconds with no check, past a server worker's
    // watchdog, which restarted the worker and every session on it. With every reading
    // advancing the clock by 1 ms and a deadline of 2 ms, an order-100 factorization
    // throws at its third reading (columns 31, 63, 95), as they do at any order
    const n = 100;
    const rows: number[] = [];
    const cols: number[] = [];
    const vals: number[] = [];
    for (let i = 0; i < n; i++) {
      rows.push(i);
      cols.push(i);
      vals.push(4);
      if (i === 0) continue;
      rows.push(i, i - 1);
      cols.push(i - 1, i);
      vals.push(1, 1);
    }
    const a = csrFromTriplets(n, n, rows, cols, vals);
    const dense = new Float64Array(n * n);
    for (let i = 0; i < n; i++) dense[i * n + i] = 4;
    const factorings: [string, () => unknown][] = [
      ["dense LU", () => new DenseLuSolver().factor(a)],
      ["dense Cholesky", () => new DenseCholeskySolver().factor(a)],
      ["rank-revealing QR", () => rankRevealingQr(dense, n, n, 1e-10)],
      ["dependent rows", () => dependentRows(dense, n, n)],
    ];
    for (const [name, factor] of factorings) {
      const clock = fakeClock(0);
      vi.mocked(performance.now).mockImplementation(() => clock.now++);
      setDeadline(2);
      expect(factor, name).toThrow(DeadlineExceeded);
      expect(clock.now, name).toBe(4);
      clearDeadline();
      vi.restoreAllMocks();
      expect(factor, name).not.toThrow();
    }
  });
});
