/**
 * Bounding volume hierarchy of a triangle mesh: an AABB tree built once, top down, each
 * node's triangles split at the median of their centroids along the longest axis of the
 * node's centroid box, down to LEAF_SIZE triangles. Stored in typed arrays: node k has
 * its box (min, max: 6 numbers from 6k, shape frame, metres) and either children (left =
 * k + 1, right = right[k]) or, for a leaf, the triangles order[first[k] .. first[k] +
 * count[k]), each with its own box (triBox). Queried with a box (the other shape's, in the mesh frame) by an explicit
 * stack: nothing allocates.
 */

/** Most triangles in a leaf. */
export const LEAF_SIZE = 4;

export interface Bvh {
  readonly box: Float64Array;
  readonly right: Int32Array;
  readonly first: Int32Array;
  readonly count: Int32Array;
  /** Triangle indices in leaf order. */
  readonly order: Int32Array;
  /** Box of each triangle in leaf order (6 each: min, max), tested after its leaf's. */
  readonly triBox: Float64Array;
  readonly nodes: number;
}

/** Builds the tree of the triangles tri (3 vertex indices each) over the vertices x. */
export function buildBvh(x: Float64Array, tri: Int32Array): Bvh {
  const T = tri.length / 3;
  const centroid = new Float64Array(3 * T);
  for (let t = 0; t < T; t++)
    for (let c = 0; c < 3; c++)
      centroid[3 * t + c] =
        (x[3 * tri[3 * t] + c] + x[3 * tri[3 * t + 1] + c] + x[3 * tri[3 * t + 2] + c]) / 3;
  const order = Int32Array.from({ length: T }, (_, t) => t);
  const cap = Math.max(1, 2 * Math.ceil(T / LEAF_SIZE) + 1) * 2;
  const box = new Float64Array(6 * cap);
  const right = new Int32Array(cap);
  const first = new Int32Array(cap);
  const count = new Int32Array(cap);
  let nodes = 0;
  const build = (lo: number, hi: number): number => {
    const k = nodes++;
    let mnx = Infinity;
    let mny = Infinity;
    let mnz = Infinity;
    let mxx = -Infinity;
    let mxy = -Infinity;
    let mxz = -Infinity;
    const cmin = [Infinity, Infinity, Infinity];
    const cmax = [-Infinity, -Infinity, -Infinity];
    for (let i = lo; i < hi; i++) {
      const t = order[i];
      for (let j = 0; j < 3; j++) {
        const v = tri[3 * t + j];
        mnx = Math.min(mnx, x[3 * v]);
        mny = Math.min(mny, x[3 * v + 1]);
        mnz = Math.min(mnz, x[3 * v + 2]);
        mxx = Math.max(mxx, x[3 * v]);
        mxy = Math.max(mxy, x[3 * v + 1]);
        mxz = Math.max(mxz, x[3 * v + 2]);
      }
      for (let c = 0; c < 3; c++) {
        cmin[c] = Math.min(cmin[c], centroid[3 * t + c]);
        cmax[c] = Math.max(cmax[c], centroid[3 * t + c]);
      }
    }
    box[6 * k] = mnx;
    box[6 * k + 1] = mny;
    box[6 * k + 2] = mnz;
    box[6 * k + 3] = mxx;
    box[6 * k + 4] = mxy;
    box[6 * k + 5] = mxz;
    if (hi - lo <= LEAF_SIZE) {
      first[k] = lo;
      count[k] = hi - lo;
      return k;
    }
    let axis = 0;
    for (let c = 1; c < 3; c++) if (cmax[c] - cmin[c] > cmax[axis] - cmin[axis]) axis = c;
    // Median split (ties by index, so the tree does not depend on the sort's stability).
    const part = Array.from(order.subarray(lo, hi)).sort(
      (a, b) => centroid[3 * a + axis] - centroid[3 * b + axis] || a - b,
    );
    order.set(part, lo);
    const mid = (lo + hi) >> 1;
    build(lo, mid);
    right[k] = build(mid, hi);
    count[k] = 0;
    return k;
  };
  if (T > 0) build(0, T);
  const triBox = new Float64Array(6 * T);
  for (let i = 0; i < T; i++) {
    const t = order[i];
    for (let c = 0; c < 3; c++) {
      const a = x[3 * tri[3 * t] + c];
      const b = x[3 * tri[3 * t + 1] + c];
      const d = x[3 * tri[3 * t + 2] + c];
      triBox[6 * i + c] = Math.min(a, b, d);
      triBox[6 * i + 3 + c] = Math.max(a, b, d);
    }
  }
  return { box, right, first, count, order, triBox, nodes };
}

/** Query box (min 0..2, max 3..5, mesh frame) of overlapping(). */
export const QUERY_BOX = new Float64Array(6);
/** Triangles found by overlapping() (grown when needed; read after the call). */
export const FOUND = { tris: new Int32Array(64), count: 0 };
const STACK = new Int32Array(128);

/**
 * The triangles of the leaves whose boxes overlap QUERY_BOX, into FOUND.tris[0..count).
 * The stack holds at most the depth of a median-split tree plus one per level: 128 is
 * enough for 2^60 triangles.
 */
export function overlapping(b: Bvh): void {
  FOUND.count = 0;
  if (b.nodes === 0) return;
  const q = QUERY_BOX;
  const box = b.box;
  let sp = 0;
  STACK[sp++] = 0;
  while (sp > 0) {
    const k = STACK[--sp];
    const o = 6 * k;
    if (
      box[o] > q[3] ||
      box[o + 3] < q[0] ||
      box[o + 1] > q[4] ||
      box[o + 4] < q[1] ||
      box[o + 2] > q[5] ||
      box[o + 5] < q[2]
    )
      continue;
    const n = b.count[k];
    if (n > 0) {
      if (FOUND.count + n > FOUND.tris.length) {
        const grown = new Int32Array(2 * FOUND.tris.length + n);
        grown.set(FOUND.tris);
        FOUND.tris = grown;
      }
      const tb = b.triBox;
      for (let i = b.first[k]; i < b.first[k] + n; i++) {
        const o = 6 * i;
        if (
          tb[o] > q[3] ||
          tb[o + 3] < q[0] ||
          tb[o + 1] > q[4] ||
          tb[o + 4] < q[1] ||
          tb[o + 2] > q[5] ||
          tb[o + 5] < q[2]
        )
          continue;
        FOUND.tris[FOUND.count++] = b.order[i];
      }
    } else {
      STACK[sp++] = b.right[k];
      STACK[sp++] = k + 1;
    }
  }
}

/**
 * Refits the boxes of b (built by buildBvh over the same triangles tri) to the vertices
 * x after they moved, for a deforming surface (contact/fem-faces.ts): each triangle's
 * box, then the nodes bottom-up, a leaf from its triangles and an inner node from its
 * children (left k + 1 and right[k] both come after k, so a reverse sweep meets children
 * first). The topology stays the build's: the boxes still enclose their triangles, only
 * less tightly after large deformations. Allocates nothing.
 */
export function refitBvh(b: Bvh, x: Float64Array, tri: Int32Array): void {
  const { box, triBox, order } = b;
  for (let i = 0; i < order.length; i++) {
    const t = 3 * order[i];
    const p = 3 * tri[t];
    const q = 3 * tri[t + 1];
    const r = 3 * tri[t + 2];
    for (let c = 0; c < 3; c++) {
      triBox[6 * i + c] = Math.min(x[p + c], x[q + c], x[r + c]);
      triBox[6 * i + 3 + c] = Math.max(x[p + c], x[q + c], x[r + c]);
    }
  }
  for (let k = b.nodes - 1; k >= 0; k--) {
    const o = 6 * k;
    const n = b.count[k];
    if (n > 0) {
      for (let c = 0; c < 3; c++) {
        box[o + c] = Infinity;
        box[o + 3 + c] = -Infinity;
      }
      for (let i = b.first[k]; i < b.first[k] + n; i++)
        for (let c = 0; c < 3; c++) {
          box[o + c] = Math.min(box[o + c], triBox[6 * i + c]);
          box[o + 3 + c] = Math.max(box[o + 3 + c], triBox[6 * i + 3 + c]);
        }
      continue;
    }
    const l = 6 * (k + 1);
    const r = 6 * b.right[k];
    for (let c = 0; c < 3; c++) {
      box[o + c] = Math.min(box[l + c], box[r + c]);
      box[o + 3 + c] = Math.max(box[l + 3 + c], box[r + 3 + c]);
    }
  }
}
