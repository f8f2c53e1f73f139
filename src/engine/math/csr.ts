/**
 * Compressed sparse row matrix over Float64Array. Column indices are sorted within
 * each row. The structure arrays are owned by whoever built the matrix and are reused
 * while the sparsity pattern is unchanged; only `values` changes from step to step.
 */
export class CsrMatrix {
  /**
   * @param rows number of rows
   * @param cols number of columns
   * @param rowPtr rowPtr[i]..rowPtr[i+1] index the entries of row i; length rows + 1
   * @param colIdx column of each stored entry, ascending within a row
   * @param values value of each stored entry
   *
   * A class rather than an object literal so that every matrix has one map whose fields
   * keep their types when another simulation builds its matrices (see BodySystem).
   */
  constructor(
    readonly rows: number,
    readonly cols: number,
    readonly rowPtr: Int32Array,
    readonly colIdx: Int32Array,
    readonly values: Float64Array,
  ) {}
}

/** out = A x (out is overwritten). */
export function csrMultiply(a: CsrMatrix, x: Float64Array, out: Float64Array): void {
  const { rowPtr, colIdx, values } = a;
  for (let i = 0; i < a.rows; i++) {
    let s = 0;
    for (let k = rowPtr[i]; k < rowPtr[i + 1]; k++) s += values[k] * x[colIdx[k]];
    out[i] = s;
  }
}

/** Builds a CSR matrix from (row, col, value) triplets, summing duplicates. */
export function csrFromTriplets(
  rows: number,
  cols: number,
  ri: ArrayLike<number>,
  ci: ArrayLike<number>,
  vi: ArrayLike<number>,
): CsrMatrix {
  const perRow: Map<number, number>[] = Array.from({ length: rows }, () => new Map());
  for (let k = 0; k < ri.length; k++) {
    const row = perRow[ri[k]];
    row.set(ci[k], (row.get(ci[k]) ?? 0) + vi[k]);
  }
  const rowPtr = new Int32Array(rows + 1);
  for (let i = 0; i < rows; i++) rowPtr[i + 1] = rowPtr[i] + perRow[i].size;
  const colIdx = new Int32Array(rowPtr[rows]);
  const values = new Float64Array(rowPtr[rows]);
  for (let i = 0; i < rows; i++) {
    const entries = [...perRow[i].entries()].sort((a, b) => a[0] - b[0]);
    let k = rowPtr[i];
    for (const [c, v] of entries) {
      colIdx[k] = c;
      values[k++] = v;
    }
  }
  return new CsrMatrix(rows, cols, rowPtr, colIdx, values);
}

/** Dense row-major copy of a CSR matrix (for small systems and tests). */
export function csrToDense(a: CsrMatrix): Float64Array {
  const d = new Float64Array(a.rows * a.cols);
  for (let i = 0; i < a.rows; i++)
    for (let k = a.rowPtr[i]; k < a.rowPtr[i + 1]; k++) d[i * a.cols + a.colIdx[k]] += a.values[k];
  return d;
}
