import { describe, expect, it } from "vitest";
import { csrFromTriplets, csrToDense } from "../../../src/engine/math/csr";
import { KktMatrix } from "../../../src/engine/math/kkt";

describe("KktMatrix", () => {
  it("places W, G, Gᵀ and −εI where the dense block matrix has them", () => {
    const w = csrFromTriplets(3, 3, [0, 0, 1, 2, 2], [0, 2, 1, 0, 2], [4, 1, 5, 1, 6]);
    const g = csrFromTriplets(2, 3, [0, 0, 1], [0, 1, 2], [1, -2, 3]);
    const kkt = new KktMatrix(w, g);
    kkt.refresh(1e-3);
    const d = csrToDense(kkt.matrix);
    const expected = [
      [4, 0, 1, 1, 0],
      [0, 5, 0, -2, 0],
      [1, 0, 6, 0, 3],
      [1, -2, 0, -1e-3, 0],
      [0, 0, 3, 0, -1e-3],
    ];
    for (let i = 0; i < 5; i++)
      for (let j = 0; j < 5; j++) expect(d[5 * i + j]).toBe(expected[i][j]);
    // columns ascend within each row
    const { rowPtr, colIdx } = kkt.matrix;
    for (let r = 0; r < 5; r++)
      for (let k = rowPtr[r] + 1; k < rowPtr[r + 1]; k++)
        expect(colIdx[k]).toBeGreaterThan(colIdx[k - 1]);
    // refresh follows new values on the same pattern
    g.values[1] = 7;
    kkt.refresh(0);
    const d2 = csrToDense(kkt.matrix);
    expect(d2[5 * 3 + 1]).toBe(7);
    expect(d2[5 * 1 + 3]).toBe(7);
    expect(d2[5 * 3 + 3]).toBe(0);
  });
});
