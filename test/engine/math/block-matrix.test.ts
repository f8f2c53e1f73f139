import { describe, expect, it } from "vitest";
import { SparseBlockMatrix } from "../../../src/engine/math/block-matrix";
import { csrMultiply, csrToDense } from "../../../src/engine/math/csr";
import { minstd } from "../../support/random";

/** Dense reference of the same additions. */
function denseOf(sizes: number[]) {
  const off = [0];
  for (const s of sizes) off.push(off[off.length - 1] + s);
  const n = off[sizes.length];
  return { n, off, d: new Float64Array(n * n) };
}

describe("SparseBlockMatrix", () => {
  it("reserves mixed 3×3/6×6 blocks, fills values, multiplies and converts to CSR like a dense matrix", () => {
    const sizes = [6, 3, 6, 3];
    const m = new SparseBlockMatrix(sizes);
    const ref = denseOf(sizes);
    const pairs = [
      [0, 1],
      [1, 0],
      [2, 3],
      [3, 2],
      [0, 2],
      [2, 0],
    ];
    for (const [i, j] of pairs) m.addBlock(i, j);
    m.finalize();
    const uniform = minstd(7);
    const rnd = () => uniform() - 0.5;
    const fill = () => {
      m.clear();
      ref.d.fill(0);
      for (const [i, j] of [...pairs, [0, 0], [1, 1], [2, 2], [3, 3]]) {
        for (let r = 0; r < sizes[i]; r++)
          for (let c = 0; c < sizes[j]; c++) {
            const v = rnd();
            m.addEntry(i, j, r, c, v);
            ref.d[(ref.off[i] + r) * ref.n + ref.off[j] + c] += v;
          }
      }
      const a = new Float64Array(9).map(() => rnd());
      m.add3x3(0, 2, 3, 0, a, 0, 2);
      for (let r = 0; r < 3; r++)
        for (let c = 0; c < 3; c++)
          ref.d[(ref.off[0] + 3 + r) * ref.n + ref.off[2] + c] += 2 * a[3 * r + c];
      m.addDiagonal3(3, 0, 1.5);
      for (let r = 0; r < 3; r++) ref.d[(ref.off[3] + r) * ref.n + ref.off[3] + r] += 1.5;
    };
    fill();
    const x = new Float64Array(ref.n).map(() => rnd());
    const y = new Float64Array(ref.n);
    m.multiply(x, y);
    for (let i = 0; i < ref.n; i++) {
      let s = 0;
      for (let j = 0; j < ref.n; j++) s += ref.d[i * ref.n + j] * x[j];
      expect(y[i]).toBeCloseTo(s, 13);
    }
    const csr = m.toCsr();
    expect(Array.from(csrToDense(csr))).toEqual(Array.from(ref.d));
    // refill with new values: the same CSR object and structure arrays, new values
    const rowPtr = csr.rowPtr;
    fill();
    const csr2 = m.toCsr();
    expect(csr2).toBe(csr);
    expect(csr2.rowPtr).toBe(rowPtr);
    expect(Array.from(csrToDense(csr2))).toEqual(Array.from(ref.d));
    const y2 = new Float64Array(ref.n);
    csrMultiply(csr2, x, y2);
    m.multiply(x, y);
    for (let i = 0; i < ref.n; i++) expect(y2[i]).toBeCloseTo(y[i], 13);
  });

  it("rebuilds the pattern and bumps structureVersion when a block is added after finalize", () => {
    const m = new SparseBlockMatrix([3, 3]);
    m.finalize();
    const v = m.structureVersion;
    expect(m.offsetOf(0, 1)).toBe(-1);
    m.addBlock(0, 1);
    m.finalize();
    expect(m.structureVersion).toBe(v + 1);
    expect(m.offsetOf(0, 1)).toBeGreaterThanOrEqual(0);
    m.finalize();
    expect(m.structureVersion).toBe(v + 1);
    expect(() => m.addEntry(1, 0, 0, 0, 1)).toThrow(/not reserved/);
  });
});
