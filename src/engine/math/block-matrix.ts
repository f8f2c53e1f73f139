/**
 * A sparse matrix of numbered blocks, in the spirit of ArtiSynth's
 * SparseNumberedBlockMatrix. Block row/column b belongs to one dynamic body (3×3 blocks
 * for particles, 6×6 for rigid bodies, mixed sizes off the diagonal).
 *
 * Life cycle, as in ArtiSynth's solve matrix:
 *   1. `addBlock(bi, bj)` reserves structure (force effectors' `addSolveBlocks`).
 *      Diagonal blocks always exist.
 *   2. `finalize()` fixes the pattern; values are then `clear()`ed and refilled each
 *      step with `addEntry`/`add3x3`, without allocation.
 *   3. `multiply(x, out)` and `toCsr()` (a CsrMatrix whose structure arrays are built
 *      once per pattern; later calls only refresh its values).
 * Reserving a new block after `finalize()` is allowed (contacts come and go); it bumps
 * `structureVersion` and the next `finalize()` rebuilds the pattern, which tells the
 * linear solvers to redo their symbolic analysis.
 */
import { CsrMatrix } from "./csr";
import type { Vec } from "./vec3";

/** A finalized block pattern (see SparseBlockMatrix.pattern). */
export interface BlockPattern {
  readonly rowStart: Int32Array;
  readonly colBlock: Int32Array;
  readonly valueStart: Int32Array;
}

export class SparseBlockMatrix {
  /** Number of block rows (= block columns). */
  readonly numBlocks: number;
  /** Scalar size of each block row. */
  readonly blockSize: Int32Array;
  /** Scalar offset of each block row/column; length numBlocks + 1. */
  readonly blockOffset: Int32Array;
  /** Scalar dimension. */
  readonly size: number;
  /** Block values, each block row-major, located by `offsetOf`. */
  values: Float64Array = new Float64Array(0);
  /** Incremented whenever the pattern changes. */
  structureVersion = 0;

  private readonly reserved: Set<number>[];
  private dirty = true;
  // Pattern (valid after finalize): blocks of row bi are rowStart[bi]..rowStart[bi+1]
  private rowStart = new Int32Array(0);
  private colBlock = new Int32Array(0);
  private valueStart = new Int32Array(0);
  /** Scalar column offset of each block within its CSR row (sum of preceding widths). */
  private csrColInRow = new Int32Array(0);
  private csr: CsrMatrix | null = null;
  /** `pattern`, rebuilt by finalize (one object: the solvers' loops read it per product). */
  private view: BlockPattern = {
    rowStart: this.rowStart,
    colBlock: this.colBlock,
    valueStart: this.valueStart,
  };

  constructor(blockSizes: ArrayLike<number>) {
    this.numBlocks = blockSizes.length;
    this.blockSize = Int32Array.from(blockSizes);
    this.blockOffset = new Int32Array(this.numBlocks + 1);
    for (let b = 0; b < this.numBlocks; b++)
      this.blockOffset[b + 1] = this.blockOffset[b] + this.blockSize[b];
    this.size = this.blockOffset[this.numBlocks];
    this.reserved = Array.from({ length: this.numBlocks }, (_, b) => new Set([b]));
  }

  /** Reserves block (bi, bj). Cheap when it already exists. */
  addBlock(bi: number, bj: number): void {
    const row = this.reserved[bi];
    if (!row.has(bj)) {
      row.add(bj);
      this.dirty = true;
    }
  }

  /** Builds the pattern if blocks were reserved since the last call. Keeps no values. */
  finalize(): void {
    if (!this.dirty) return;
    const nb = this.numBlocks;
    this.rowStart = new Int32Array(nb + 1);
    for (let bi = 0; bi < nb; bi++)
      this.rowStart[bi + 1] = this.rowStart[bi] + this.reserved[bi].size;
    const nblocks = this.rowStart[nb];
    this.colBlock = new Int32Array(nblocks);
    this.valueStart = new Int32Array(nblocks + 1);
    this.csrColInRow = new Int32Array(nblocks);
    let k = 0;
    for (let bi = 0; bi < nb; bi++) {
      const cols = [...this.reserved[bi]].sort((a, b) => a - b);
      let width = 0;
      for (const bj of cols) {
        this.colBlock[k] = bj;
        this.csrColInRow[k] = width;
        width += this.blockSize[bj];
        this.valueStart[k + 1] = this.valueStart[k] + this.blockSize[bi] * this.blockSize[bj];
        k++;
      }
    }
    this.values = new Float64Array(this.valueStart[nblocks]);
    this.view = { rowStart: this.rowStart, colBlock: this.colBlock, valueStart: this.valueStart };
    this.csr = null;
    this.dirty = false;
    this.structureVersion++;
  }

  /**
   * The finalized pattern (read-only views, valid until the next `finalize()` that changes
   * it): the blocks of block row bi are k = rowStart[bi] .. rowStart[bi+1] − 1, in column
   * block colBlock[k] ascending, values from valueStart[k] (row-major).
   */
  get pattern(): BlockPattern {
    return this.view;
  }

  /** True when every block row is 3 wide (particles only, see solvers/linear/block-ldlt.ts). */
  get uniform3(): boolean {
    for (let b = 0; b < this.numBlocks; b++) if (this.blockSize[b] !== 3) return false;
    return true;
  }

  /** True when only diagonal blocks are reserved (after finalize). */
  isBlockDiagonal(): boolean {
    return this.rowStart[this.numBlocks] === this.numBlocks;
  }

  /** Offset of block (bi, bj) in `values`, or −1 when not reserved. */
  offsetOf(bi: number, bj: number): number {
    const cb = this.colBlock;
    let lo = this.rowStart[bi];
    let hi = this.rowStart[bi + 1] - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      const c = cb[mid];
      if (c === bj) return this.valueStart[mid];
      if (c < bj) lo = mid + 1;
      else hi = mid - 1;
    }
    return -1;
  }

  clear(): void {
    this.values.fill(0);
  }

  /** Adds v to scalar entry (r, c) of block (bi, bj). The block must be reserved. */
  addEntry(bi: number, bj: number, r: number, c: number, v: number): void {
    const off = this.offsetOf(bi, bj);
    if (off < 0) throw new Error(`block (${bi}, ${bj}) was not reserved`);
    this.values[off + r * this.blockSize[bj] + c] += v;
  }

  /** Adds s·A (A a row-major 3×3 at m[im]) to block (bi, bj) at sub-position (r0, c0). */
  add3x3(bi: number, bj: number, r0: number, c0: number, m: Vec, im: number, s: number): void {
    const off = this.offsetOf(bi, bj);
    if (off < 0) throw new Error(`block (${bi}, ${bj}) was not reserved`);
    const w = this.blockSize[bj];
    const v = this.values;
    for (let i = 0; i < 3; i++) {
      const row = off + (r0 + i) * w + c0;
      v[row] += s * m[im + 3 * i];
      v[row + 1] += s * m[im + 3 * i + 1];
      v[row + 2] += s * m[im + 3 * i + 2];
    }
  }

  /** Adds s to the three diagonal entries of sub-block (r0, r0) of diagonal block b. */
  addDiagonal3(b: number, r0: number, s: number): void {
    const off = this.offsetOf(b, b);
    const w = this.blockSize[b];
    this.values[off + r0 * w + r0] += s;
    this.values[off + (r0 + 1) * w + r0 + 1] += s;
    this.values[off + (r0 + 2) * w + r0 + 2] += s;
  }

  /** out = A x (out overwritten; must not alias x). */
  multiply(x: Float64Array, out: Float64Array): void {
    out.fill(0);
    const { rowStart, colBlock, valueStart, blockSize, blockOffset, values } = this;
    for (let bi = 0; bi < this.numBlocks; bi++) {
      const ri = blockOffset[bi];
      const rs = blockSize[bi];
      for (let k = rowStart[bi]; k < rowStart[bi + 1]; k++) {
        const bj = colBlock[k];
        const cj = blockOffset[bj];
        const cs = blockSize[bj];
        let p = valueStart[k];
        for (let r = 0; r < rs; r++) {
          let s = 0;
          for (let c = 0; c < cs; c++) s += values[p++] * x[cj + c];
          out[ri + r] += s;
        }
      }
    }
  }

  /**
   * The matrix as CSR. The structure arrays are built on the first call after each
   * `finalize()` that changed the pattern; later calls only copy values, allocation-free.
   * The returned object is the same while the pattern is unchanged.
   */
  toCsr(): CsrMatrix {
    const { rowStart, colBlock, valueStart, blockSize, blockOffset, csrColInRow, values } = this;
    if (this.csr === null) {
      const rowPtr = new Int32Array(this.size + 1);
      for (let bi = 0; bi < this.numBlocks; bi++) {
        let width = 0;
        for (let k = rowStart[bi]; k < rowStart[bi + 1]; k++) width += blockSize[colBlock[k]];
        for (let r = 0; r < blockSize[bi]; r++) {
          const row = blockOffset[bi] + r;
          rowPtr[row + 1] = rowPtr[row] + width;
        }
      }
      const colIdx = new Int32Array(rowPtr[this.size]);
      for (let bi = 0; bi < this.numBlocks; bi++)
        for (let r = 0; r < blockSize[bi]; r++) {
          const base = rowPtr[blockOffset[bi] + r];
          for (let k = rowStart[bi]; k < rowStart[bi + 1]; k++) {
            const bj = colBlock[k];
            for (let c = 0; c < blockSize[bj]; c++)
              colIdx[base + csrColInRow[k] + c] = blockOffset[bj] + c;
          }
        }
      this.csr = new CsrMatrix(
        this.size,
        this.size,
        rowPtr,
        colIdx,
        new Float64Array(colIdx.length),
      );
    }
    const { rowPtr, values: out } = this.csr;
    for (let bi = 0; bi < this.numBlocks; bi++) {
      const rs = blockSize[bi];
      for (let k = rowStart[bi]; k < rowStart[bi + 1]; k++) {
        const cs = blockSize[colBlock[k]];
        let p = valueStart[k];
        for (let r = 0; r < rs; r++) {
          const base = rowPtr[blockOffset[bi] + r] + csrColInRow[k];
          for (let c = 0; c < cs; c++) out[base + c] = values[p++];
        }
      }
    }
    return this.csr;
  }
}
