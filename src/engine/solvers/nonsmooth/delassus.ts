import type { ContactDim, DelassusOperator } from "./types";
import { NonsmoothProblemError } from "./types";

/**
 * Dense Delassus operator over a row-major m×m Float64Array (row stride m). `set` rebinds
 * it to another matrix without allocating, so solvers keep one instance for dense input.
 *
 * Every product accumulates each output row in increasing column order with one
 * accumulator, exactly as SparseBlockDelassus does over its nonzero blocks; the skipped
 * zero blocks contribute exact zeros, so both give bit-identical results on the same W.
 */
export class DenseDelassus implements DelassusOperator {
  size = 0;
  blocks = 0;
  blockSize: ContactDim = 1;
  private w: Float64Array = new Float64Array(0);

  constructor(w?: Float64Array, blocks = 0, blockSize: ContactDim = 1) {
    if (w) this.set(w, blocks, blockSize);
  }

  /** Rebinds to W (row-major, m = blocks·blockSize, W.length ≥ m²). Returns this. */
  set(w: Float64Array, blocks: number, blockSize: ContactDim): this {
    const m = blocks * blockSize;
    if (w.length < m * m)
      throw new NonsmoothProblemError(
        `dense W has ${w.length} entries, needs ${m}×${m} = ${m * m} (row-major, stride m)`,
      );
    this.w = w;
    this.size = m;
    this.blocks = blocks;
    this.blockSize = blockSize;
    return this;
  }

  /** The bound row-major matrix. */
  get matrix(): Float64Array {
    return this.w;
  }

  diagonalBlock(i: number, out: Float64Array): void {
    const { w, size: m, blockSize: bs } = this;
    const o = i * bs;
    for (let a = 0; a < bs; a++)
      for (let b = 0; b < bs; b++) out[a * bs + b] = w[(o + a) * m + o + b];
  }

  multiply(r: Float64Array, out: Float64Array): void {
    const { w, size: m } = this;
    for (let i = 0; i < m; i++) {
      let s = 0;
      const row = i * m;
      for (let j = 0; j < m; j++) s += w[row + j] * r[j];
      out[i] = s;
    }
  }

  rowBlockTimes(i: number, r: Float64Array, out: Float64Array): void {
    const { w, size: m, blockSize: bs } = this;
    for (let a = 0; a < bs; a++) {
      let s = 0;
      const row = (i * bs + a) * m;
      for (let j = 0; j < m; j++) s += w[row + j] * r[j];
      out[a] = s;
    }
  }
}

/**
 * Block-sparse Delassus operator: per-contact blockSize×blockSize blocks in CSR-of-blocks
 * form. Block row i holds blocks k = rowPtr[i] .. rowPtr[i+1]−1 at block columns colIdx[k]
 * (strictly ascending within a row), block k stored row-major at values[k·bs² ..).
 * A contact couples only with contacts that share a body, so W = H M⁻¹ Hᵀ has few blocks
 * per row and PGS on thousands of contacts costs O(nonzero blocks) per sweep.
 *
 * The pattern arrays are fixed at construction; `values` may be rewritten in place from
 * step to step while the pattern is unchanged.
 */
export class SparseBlockDelassus implements DelassusOperator {
  readonly size: number;
  readonly blocks: number;
  readonly blockSize: ContactDim;
  readonly rowPtr: Int32Array;
  readonly colIdx: Int32Array;
  readonly values: Float64Array;
  /** Index k of the diagonal block of each block row, −1 when absent (zero block). */
  readonly diagIndex: Int32Array;

  constructor(
    blocks: number,
    blockSize: ContactDim,
    rowPtr: Int32Array,
    colIdx: Int32Array,
    values: Float64Array,
  ) {
    const bb = blockSize * blockSize;
    if (rowPtr.length !== blocks + 1 || rowPtr[0] !== 0)
      throw new NonsmoothProblemError("rowPtr must have blocks + 1 entries starting at 0");
    const nnzb = rowPtr[blocks];
    if (colIdx.length < nnzb || values.length < nnzb * bb)
      throw new NonsmoothProblemError(
        `colIdx needs ${nnzb} entries and values ${nnzb * bb} (blocks of ${bb})`,
      );
    this.diagIndex = new Int32Array(blocks).fill(-1);
    for (let i = 0; i < blocks; i++) {
      if (rowPtr[i + 1] < rowPtr[i]) throw new NonsmoothProblemError("rowPtr must not decrease");
      for (let k = rowPtr[i]; k < rowPtr[i + 1]; k++) {
        const j = colIdx[k];
        if (j < 0 || j >= blocks) throw new NonsmoothProblemError(`block column ${j} out of range`);
        if (k > rowPtr[i] && colIdx[k - 1] >= j)
          throw new NonsmoothProblemError(`block columns of row ${i} must be strictly ascending`);
        if (j === i) this.diagIndex[i] = k;
      }
    }
    this.blocks = blocks;
    this.blockSize = blockSize;
    this.size = blocks * blockSize;
    this.rowPtr = rowPtr;
    this.colIdx = colIdx;
    this.values = values;
  }

  /**
   * Builds the operator from a list of nonzero block pairs: block p sits at
   * (rowBlocks[p], colBlocks[p]) with values blockValues[p·bs² ..) (row-major). Duplicate
   * pairs are summed. With `symmetric`, every off-diagonal pair (i, j) also places its
   * transpose at (j, i): list each unordered contact pair once (in either order), e.g. the
   * upper triangle of W = H M⁻¹ Hᵀ.
   */
  static fromBlockPairs(
    blocks: number,
    blockSize: ContactDim,
    rowBlocks: ArrayLike<number>,
    colBlocks: ArrayLike<number>,
    blockValues: ArrayLike<number>,
    options: { symmetric?: boolean } = {},
  ): SparseBlockDelassus {
    const bs = blockSize;
    const bb = bs * bs;
    const np = rowBlocks.length;
    if (colBlocks.length !== np || blockValues.length < np * bb)
      throw new NonsmoothProblemError("rowBlocks, colBlocks and blockValues sizes disagree");
    const symmetric = options.symmetric === true;
    // Per block row: column → slot in a growing value list (construction time only).
    const rows: Map<number, number>[] = Array.from({ length: blocks }, () => new Map());
    const acc: number[] = [];
    const add = (i: number, j: number, p: number, transpose: boolean) => {
      if (!(i >= 0 && i < blocks && j >= 0 && j < blocks))
        throw new NonsmoothProblemError(`block pair (${i}, ${j}) out of range 0..${blocks - 1}`);
      let slot = rows[i].get(j);
      if (slot === undefined) {
        slot = acc.length;
        rows[i].set(j, slot);
        for (let e = 0; e < bb; e++) acc.push(0);
      }
      for (let a = 0; a < bs; a++)
        for (let b = 0; b < bs; b++)
          acc[slot + a * bs + b] += blockValues[p * bb + (transpose ? b * bs + a : a * bs + b)];
    };
    for (let p = 0; p < np; p++) {
      const i = rowBlocks[p];
      const j = colBlocks[p];
      add(i, j, p, false);
      if (symmetric && i !== j) add(j, i, p, true);
    }
    const rowPtr = new Int32Array(blocks + 1);
    for (let i = 0; i < blocks; i++) rowPtr[i + 1] = rowPtr[i] + rows[i].size;
    const colIdx = new Int32Array(rowPtr[blocks]);
    const values = new Float64Array(rowPtr[blocks] * bb);
    for (let i = 0; i < blocks; i++) {
      const cols = [...rows[i].keys()].sort((x, y) => x - y);
      let k = rowPtr[i];
      for (const j of cols) {
        colIdx[k] = j;
        const slot = rows[i].get(j)!;
        for (let e = 0; e < bb; e++) values[k * bb + e] = acc[slot + e];
        k++;
      }
    }
    return new SparseBlockDelassus(blocks, blockSize, rowPtr, colIdx, values);
  }

  /** Dense row-major copy (m×m) into out (allocated when not given). */
  toDense(out?: Float64Array): Float64Array {
    const m = this.size;
    const bs = this.blockSize;
    const bb = bs * bs;
    const d = out ?? new Float64Array(m * m);
    d.fill(0, 0, m * m);
    for (let i = 0; i < this.blocks; i++)
      for (let k = this.rowPtr[i]; k < this.rowPtr[i + 1]; k++) {
        const j = this.colIdx[k];
        for (let a = 0; a < bs; a++)
          for (let b = 0; b < bs; b++)
            d[(i * bs + a) * m + j * bs + b] = this.values[k * bb + a * bs + b];
      }
    return d;
  }

  diagonalBlock(i: number, out: Float64Array): void {
    const bb = this.blockSize * this.blockSize;
    const k = this.diagIndex[i];
    if (k < 0) out.fill(0, 0, bb);
    else for (let e = 0; e < bb; e++) out[e] = this.values[k * bb + e];
  }

  multiply(r: Float64Array, out: Float64Array): void {
    for (let i = 0; i < this.blocks; i++) this.rowTimes(i, r, out, i * this.blockSize);
  }

  rowBlockTimes(i: number, r: Float64Array, out: Float64Array): void {
    this.rowTimes(i, r, out, 0);
  }

  /** out[o + a] = Σ_k Σ_b B_k[a][b] r[col_k·bs + b], one accumulator per row a (see DenseDelassus). */
  private rowTimes(i: number, r: Float64Array, out: Float64Array, o: number): void {
    const { rowPtr, colIdx, values } = this;
    const bs = this.blockSize;
    const bb = bs * bs;
    const k0 = rowPtr[i];
    const k1 = rowPtr[i + 1];
    for (let a = 0; a < bs; a++) {
      let s = 0;
      for (let k = k0; k < k1; k++) {
        const c = colIdx[k] * bs;
        const v = k * bb + a * bs;
        for (let b = 0; b < bs; b++) s += values[v + b] * r[c + b];
      }
      out[o + a] = s;
    }
  }
}
