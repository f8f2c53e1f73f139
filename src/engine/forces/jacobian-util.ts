/**
 * Small allocation-free helpers shared by the force effectors' Jacobian code.
 *
 * Block convention: block (bi, bj) of a Jacobian is ∂F_i/∂q_j, F_i the generalized force
 * [f; τ] of the body with solve block bi (rows), q_j the perturbation [δx; δθ] (or velocity
 * [δv; δω]) of the body with solve block bj (columns). Dense scratch blocks are row-major
 * with a fixed stride of 6 so one 36-entry buffer holds any 3×3, 3×6, 6×3 or 6×6 block.
 */
import type { SparseBlockMatrix } from "../math/block-matrix";
import type { Vec } from "../math/vec3";

/** Adds s·a (rows×cols, row-major, stride 6) to block (bi, bj) of m. */
export function addScaledBlock(
  m: SparseBlockMatrix,
  bi: number,
  bj: number,
  rows: number,
  cols: number,
  a: Float64Array,
  s: number,
): void {
  const off = m.offsetOf(bi, bj);
  if (off < 0) throw new Error(`block (${bi}, ${bj}) was not reserved (call addSolveBlocks)`);
  const w = m.blockSize[bj];
  const v = m.values;
  for (let r = 0; r < rows; r++) {
    const row = off + r * w;
    const ar = 6 * r;
    for (let c = 0; c < cols; c++) v[row + c] += s * a[ar + c];
  }
}

/**
 * out (3×3 row-major) = [a]× [b]× = b aᵀ − (a·b) I.
 * (Proof: [a]×[b]× x = a × (b × x) = b (a·x) − x (a·b).)
 */
export function skewSkew(out: Vec, io: number, a: Vec, ia: number, b: Vec, ib: number): void {
  const ax = a[ia];
  const ay = a[ia + 1];
  const az = a[ia + 2];
  const bx = b[ib];
  const by = b[ib + 1];
  const bz = b[ib + 2];
  const d = ax * bx + ay * by + az * bz;
  out[io] = bx * ax - d;
  out[io + 1] = bx * ay;
  out[io + 2] = bx * az;
  out[io + 3] = by * ax;
  out[io + 4] = by * ay - d;
  out[io + 5] = by * az;
  out[io + 6] = bz * ax;
  out[io + 7] = bz * ay;
  out[io + 8] = bz * az - d;
}

/** The identity scaled by c into a 3×3. */
export function setScaledIdentity(out: Float64Array, c: number): void {
  out.fill(0);
  out[0] = c;
  out[4] = c;
  out[8] = c;
}
