/**
 * The saddle-point (KKT) matrix of constrained dynamics,
 *     K = [ W   Gᵀ ]
 *         [ G  −εI ]
 * with W (n×n) the iteration matrix and G (m×n) the constraint Jacobian, as a CsrMatrix
 * whose pattern is built once from the patterns of W and G and whose values are refreshed
 * allocation-free. A small ε ≥ 0 on the (2,2) block makes K quasi-definite when W is SPD,
 * so an LDLᵀ factorization exists for every symmetric ordering (Vanderbei 1995); with
 * ε = 0 use a pivoting LU. The upper block may also be given apart from G (same pattern as
 * Gᵀ): generalized-α's symmetric joints act along the step's start directions while
 * their rows are those of its end (integrators/constrained-solve.ts factorMixed); and the
 * lower block apart from G: velocity-level rows linearized at a step's end, G̃ = G +
 * s ∂(G u)/∂q (constraints/constraint-set.ts velocityRows).
 */
import { CsrMatrix } from "./csr";

export class KktMatrix {
  readonly matrix: CsrMatrix;
  /** For each entry of W's CSR values, its index in K.values. */
  private readonly wMap: Int32Array;
  /** For each entry of G's values: index of G(i, j) (lower block) and of Gᵀ(j, i) (upper). */
  private readonly gLowerMap: Int32Array;
  private readonly gUpperMap: Int32Array;
  private readonly diagMap: Int32Array;

  constructor(
    readonly w: CsrMatrix,
    readonly g: CsrMatrix,
  ) {
    const n = w.rows;
    const m = g.rows;
    if (g.cols !== n) throw new Error(`KKT: G has ${g.cols} columns, W is ${n}×${n}`);
    // Gᵀ pattern: for each column j of G, the rows i (ascending) and the G entry index.
    const tCount = new Int32Array(n + 1);
    for (let k = 0; k < g.colIdx.length; k++) tCount[g.colIdx[k] + 1]++;
    for (let j = 0; j < n; j++) tCount[j + 1] += tCount[j];
    const tRows = new Int32Array(g.colIdx.length);
    const tEntry = new Int32Array(g.colIdx.length);
    const fill = tCount.slice(0, n);
    for (let i = 0; i < m; i++)
      for (let k = g.rowPtr[i]; k < g.rowPtr[i + 1]; k++) {
        const p = fill[g.colIdx[k]]++;
        tRows[p] = i;
        tEntry[p] = k;
      }
    const size = n + m;
    const rowPtr = new Int32Array(size + 1);
    for (let r = 0; r < n; r++)
      rowPtr[r + 1] = rowPtr[r] + (w.rowPtr[r + 1] - w.rowPtr[r]) + (tCount[r + 1] - tCount[r]);
    for (let i = 0; i < m; i++)
      rowPtr[n + i + 1] = rowPtr[n + i] + (g.rowPtr[i + 1] - g.rowPtr[i]) + 1;
    const colIdx = new Int32Array(rowPtr[size]);
    this.wMap = new Int32Array(w.colIdx.length);
    this.gLowerMap = new Int32Array(g.colIdx.length);
    this.gUpperMap = new Int32Array(g.colIdx.length);
    this.diagMap = new Int32Array(m);
    for (let r = 0; r < n; r++) {
      let p = rowPtr[r];
      for (let k = w.rowPtr[r]; k < w.rowPtr[r + 1]; k++) {
        colIdx[p] = w.colIdx[k];
        this.wMap[k] = p++;
      }
      for (let q = tCount[r]; q < tCount[r + 1]; q++) {
        colIdx[p] = n + tRows[q];
        this.gUpperMap[tEntry[q]] = p++;
      }
    }
    for (let i = 0; i < m; i++) {
      let p = rowPtr[n + i];
      for (let k = g.rowPtr[i]; k < g.rowPtr[i + 1]; k++) {
        colIdx[p] = g.colIdx[k];
        this.gLowerMap[k] = p++;
      }
      colIdx[p] = n + i;
      this.diagMap[i] = p;
    }
    this.matrix = new CsrMatrix(size, size, rowPtr, colIdx, new Float64Array(colIdx.length));
  }

  /**
   * Copies the current values of W and G (same patterns as at construction) into K; the
   * upper block from `upper` (in G's layout: entry k of G's values is the upper block's
   * (j, i) for G's (i, j)) when given, else Gᵀ; the lower block from `lower` (G's layout:
   * a velocity-level Newton step's rows G̃, ConstraintSet.velocityRows) when given, else G.
   */
  refresh(
    epsilon: number,
    upper: Float64Array | null = null,
    lower: Float64Array | null = null,
  ): void {
    const v = this.matrix.values;
    const wv = this.w.values;
    const gv = this.g.values;
    const uv = upper ?? gv;
    const lv = lower ?? gv;
    for (let k = 0; k < wv.length; k++) v[this.wMap[k]] = wv[k];
    for (let k = 0; k < gv.length; k++) {
      v[this.gLowerMap[k]] = lv[k];
      v[this.gUpperMap[k]] = uv[k];
    }
    for (let i = 0; i < this.diagMap.length; i++) v[this.diagMap[i]] = -epsilon;
  }
}
