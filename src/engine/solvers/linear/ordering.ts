/**
 * Fill-reducing orderings for the sparse direct solvers.
 *
 * Permutation convention (as CSparse): `perm[k]` is the original index placed at new
 * position k, so the permuted matrix is C = P A Pᵀ with C(k, l) = A(perm[k], perm[l]);
 * `invertPermutation(perm)[perm[k]] = k`.
 *
 * - `amdOrder`: approximate minimum degree on the quotient graph (Amestoy, Davis & Duff,
 *   "An approximate minimum degree ordering algorithm", SIAM J. Matrix Anal. Appl. 17,
 *   1996; T. A. Davis, "Direct Methods for Sparse Linear Systems", SIAM 2006, ch. 7).
 *   It keeps eliminated nodes as elements (cliques stored by their variable lists),
 *   absorbs elements into the new pivot element, aggressively absorbs elements that
 *   became subsets of it, merges indistinguishable variables into supervariables (mass
 *   elimination included), removes dense rows (ordered last) and uses the AMD
 *   approximate external degree bound.
 * - `rcmOrder`: reverse Cuthill–McKee with a George–Liu pseudo-peripheral start node per
 *   connected component (bandwidth/profile reduction).
 */
import type { CsrMatrix } from "../../math/csr";
import type { OrderingName } from "./linear-solver";

/** Undirected graph in compressed adjacency form, no self loops, each edge both ways. */
export interface AdjacencyGraph {
  readonly n: number;
  /** Neighbours of node i are idx[ptr[i]..ptr[i+1]). */
  readonly ptr: Int32Array;
  readonly idx: Int32Array;
}

/** The identity permutation of length n. */
export function naturalOrder(n: number): Int32Array {
  const p = new Int32Array(n);
  for (let i = 0; i < n; i++) p[i] = i;
  return p;
}

/** pinv with pinv[perm[k]] = k. */
export function invertPermutation(perm: Int32Array): Int32Array {
  const pinv = new Int32Array(perm.length);
  for (let k = 0; k < perm.length; k++) pinv[perm[k]] = k;
  return pinv;
}

/** True when p holds each of 0..n-1 exactly once. */
export function isPermutation(p: ArrayLike<number>, n: number): boolean {
  if (p.length !== n) return false;
  const seen = new Uint8Array(n);
  for (let k = 0; k < n; k++) {
    const v = p[k];
    if (!Number.isInteger(v) || v < 0 || v >= n || seen[v]) return false;
    seen[v] = 1;
  }
  return true;
}

/** Builds an AdjacencyGraph from per-node lists with duplicates removed by `mark`. */
function buildGraph(
  n: number,
  forEachNeighbour: (i: number, visit: (j: number) => void) => void,
): AdjacencyGraph {
  const mark = new Int32Array(n).fill(-1);
  const ptr = new Int32Array(n + 1);
  for (let i = 0; i < n; i++) {
    let c = 0;
    mark[i] = i;
    forEachNeighbour(i, (j) => {
      if (mark[j] !== i) {
        mark[j] = i;
        c++;
      }
    });
    ptr[i + 1] = ptr[i] + c;
  }
  mark.fill(-1);
  const idx = new Int32Array(ptr[n]);
  for (let i = 0; i < n; i++) {
    let q = ptr[i];
    mark[i] = i;
    forEachNeighbour(i, (j) => {
      if (mark[j] !== i) {
        mark[j] = i;
        idx[q++] = j;
      }
    });
  }
  return { n, ptr, idx };
}

/** Column-wise view of a CSR pattern: rows of column j are rowsOf[colPtr[j]..colPtr[j+1]). */
function transposePattern(a: CsrMatrix): { colPtr: Int32Array; rowsOf: Int32Array } {
  const colPtr = new Int32Array(a.cols + 1);
  const nnz = a.rowPtr[a.rows];
  for (let k = 0; k < nnz; k++) colPtr[a.colIdx[k] + 1]++;
  for (let j = 0; j < a.cols; j++) colPtr[j + 1] += colPtr[j];
  const next = colPtr.slice(0, a.cols);
  const rowsOf = new Int32Array(nnz);
  for (let i = 0; i < a.rows; i++)
    for (let k = a.rowPtr[i]; k < a.rowPtr[i + 1]; k++) rowsOf[next[a.colIdx[k]]++] = i;
  return { colPtr, rowsOf };
}

/** Graph of the pattern of A + Aᵀ without the diagonal (A square). */
export function symmetricPattern(a: CsrMatrix): AdjacencyGraph {
  if (a.rows !== a.cols) throw new Error("symmetricPattern: matrix must be square");
  const { colPtr, rowsOf } = transposePattern(a);
  const { rowPtr, colIdx } = a;
  return buildGraph(a.rows, (i, visit) => {
    for (let k = rowPtr[i]; k < rowPtr[i + 1]; k++) visit(colIdx[k]);
    for (let k = colPtr[i]; k < colPtr[i + 1]; k++) visit(rowsOf[k]);
  });
}

/**
 * Graph of the pattern of AᵀA without the diagonal: columns j1, j2 are adjacent when a
 * row holds both. Rows with more than `denseRow` entries (default max(16, 10√n), as
 * CSparse cs_amd for LU) are ignored, since they would make AᵀA dense; this is the
 * column ordering for sparse LU with partial pivoting (the fill of L and U is bounded
 * by that of the Cholesky factor of AᵀA whatever the row pivots).
 */
export function ataPattern(a: CsrMatrix, denseRow?: number): AdjacencyGraph {
  const n = a.cols;
  const dense = denseRow ?? Math.max(16, Math.floor(10 * Math.sqrt(n)));
  const { colPtr, rowsOf } = transposePattern(a);
  const { rowPtr, colIdx } = a;
  return buildGraph(n, (j, visit) => {
    for (let q = colPtr[j]; q < colPtr[j + 1]; q++) {
      const r = rowsOf[q];
      if (rowPtr[r + 1] - rowPtr[r] > dense) continue;
      for (let k = rowPtr[r]; k < rowPtr[r + 1]; k++) visit(colIdx[k]);
    }
  });
}

const EMPTY: number[] = [];

// Node states of the quotient graph.
const VAR = 0; // principal variable, not yet eliminated
const MERGED = 1; // non-principal (part of a supervariable) or mass-eliminated
const ELEMENT = 2; // eliminated pivot, alive as an element
const ABSORBED = 3; // element absorbed into a later element
const DENSE = 4; // removed dense row, ordered last

/**
 * Approximate minimum degree ordering of a symmetric pattern.
 *
 * Quotient graph: each uneliminated principal variable i keeps its variable
 * neighbours A_i and its adjacent elements E_i; each element e keeps its variables L_e
 * (the fill clique created when e was eliminated) and their total weight |L_e|.
 * Eliminating pivot p forms L_p = (A_p ∪ ⋃_{e∈E_p} L_e) \ {p} and absorbs E_p. For each
 * i ∈ L_p the approximate external degree is (ADD96 eq. 4)
 *   d_i = min( n_left − |i|,  d_i_old + |L_p \ i|,  |A_i \ i| + |L_p \ i| + Σ_{e∈E_i\p} |L_e \ L_p| ),
 * with |L_e \ L_p| found for all e at once by the w(e) scan. Elements with
 * |L_e \ L_p| = 0 are absorbed (aggressive absorption); variables with A_i = ∅ and
 * E_i = {p} are eliminated together with p (mass elimination); variables with equal
 * A and E sets (found by hashing) are merged into supervariables, which are then
 * eliminated together, consecutively in the output.
 *
 * @param dense rows with more neighbours than this (default max(16, 10√n)) are removed
 *   before ordering and placed last, as in AMD.
 */
export function amdOrder(g: AdjacencyGraph, dense?: number): Int32Array {
  const n = g.n;
  const perm = new Int32Array(n);
  if (n === 0) return perm;
  const denseLimit = dense ?? Math.max(16, Math.floor(10 * Math.sqrt(n)));
  const status = new Uint8Array(n);
  const nv = new Int32Array(n).fill(1);
  const deg = new Int32Array(n);
  const tmpDeg = new Int32Array(n);
  const elDeg = new Int32Array(n);
  const varAdj: number[][] = new Array(n);
  const elAdj: number[][] = new Array(n);
  const elVars: number[][] = new Array(n);
  const members: (number[] | undefined)[] = new Array(n);
  const mark = new Int32Array(n);
  const wstamp = new Int32Array(n);
  const we = new Int32Array(n);
  const cmark = new Int32Array(n);
  let tag = 0;
  let ctag = 0;

  let nDense = 0;
  for (let i = 0; i < n; i++) {
    if (g.ptr[i + 1] - g.ptr[i] > denseLimit) {
      status[i] = DENSE;
      nDense++;
    }
  }
  // Degree buckets: doubly linked lists head[d] of principal variables of degree d.
  const head = new Int32Array(n + 1).fill(-1);
  const next = new Int32Array(n).fill(-1);
  const prev = new Int32Array(n).fill(-1);
  const insert = (i: number, d: number): void => {
    prev[i] = -1;
    next[i] = head[d];
    if (head[d] !== -1) prev[head[d]] = i;
    head[d] = i;
  };
  const remove = (i: number, d: number): void => {
    if (prev[i] !== -1) next[prev[i]] = next[i];
    else head[d] = next[i];
    if (next[i] !== -1) prev[next[i]] = prev[i];
  };
  for (let i = 0; i < n; i++) {
    if (status[i] === DENSE) continue;
    const adj: number[] = [];
    for (let k = g.ptr[i]; k < g.ptr[i + 1]; k++) {
      const j = g.idx[k];
      if (j !== i && status[j] !== DENSE) adj.push(j);
    }
    varAdj[i] = adj;
    elAdj[i] = [];
    deg[i] = adj.length;
    insert(i, adj.length);
  }

  let out = 0;
  const emit = (v: number): void => {
    perm[out++] = v;
    const m = members[v];
    if (m) for (const j of m) perm[out++] = j;
    members[v] = undefined;
  };
  const target = n - nDense;
  let nel = 0;
  let mindeg = 0;
  const hashBuckets = new Map<number, number[]>();

  while (nel < target) {
    while (head[mindeg] === -1) mindeg++;
    const p = head[mindeg];
    remove(p, deg[p]);
    emit(p);
    nel += nv[p];

    // L_p: principal variables adjacent to p directly or through its elements.
    tag++;
    mark[p] = tag;
    const lp: number[] = [];
    for (const j of varAdj[p]) {
      if (status[j] === VAR && mark[j] !== tag) {
        mark[j] = tag;
        lp.push(j);
      }
    }
    for (const e of elAdj[p]) {
      if (status[e] !== ELEMENT) continue;
      for (const j of elVars[e]) {
        if (status[j] === VAR && mark[j] !== tag) {
          mark[j] = tag;
          lp.push(j);
        }
      }
      status[e] = ABSORBED;
      elVars[e] = EMPTY;
    }
    status[p] = ELEMENT;
    varAdj[p] = EMPTY;
    elAdj[p] = EMPTY;
    let dk = 0;
    for (const i of lp) dk += nv[i];

    // Pass 1: drop dead elements and covered variables; w(e) = |L_e \ L_p|.
    for (const i of lp) {
      remove(i, deg[i]);
      const nwv = nv[i];
      const ne: number[] = [];
      for (const e of elAdj[i]) {
        if (status[e] !== ELEMENT) continue;
        ne.push(e);
        if (wstamp[e] !== tag) {
          wstamp[e] = tag;
          we[e] = elDeg[e];
        }
        we[e] -= nwv;
      }
      elAdj[i] = ne;
      const na: number[] = [];
      for (const j of varAdj[i]) if (status[j] === VAR && mark[j] !== tag) na.push(j);
      varAdj[i] = na;
    }

    // Pass 2: degree bound, aggressive absorption, mass elimination, hash.
    const kept: number[] = [];
    for (const i of lp) {
      let d = 0;
      let h = 0;
      const ne: number[] = [];
      for (const e of elAdj[i]) {
        if (status[e] !== ELEMENT) continue;
        const dext = we[e];
        if (dext > 0) {
          d += dext;
          ne.push(e);
          h += e;
        } else {
          status[e] = ABSORBED;
          elVars[e] = EMPTY;
        }
      }
      for (const j of varAdj[i]) {
        d += nv[j];
        h += j;
      }
      if (d === 0) {
        // Only neighbour is element p: eliminate i together with p.
        emit(i);
        nel += nv[i];
        dk -= nv[i];
        nv[i] = 0;
        status[i] = MERGED;
        elAdj[i] = EMPTY;
        varAdj[i] = EMPTY;
        continue;
      }
      ne.push(p);
      elAdj[i] = ne;
      tmpDeg[i] = Math.min(deg[i], d);
      const key = h % n;
      const bucket = hashBuckets.get(key);
      if (bucket) bucket.push(i);
      else hashBuckets.set(key, [i]);
      kept.push(i);
    }

    // Pass 3: supervariable detection (equal E and A sets) within each hash bucket.
    for (const bucket of hashBuckets.values()) {
      if (bucket.length < 2) continue;
      for (let a = 0; a < bucket.length; a++) {
        const i = bucket[a];
        if (status[i] !== VAR) continue;
        ctag++;
        const ei = elAdj[i];
        const ai = varAdj[i];
        for (const e of ei) cmark[e] = ctag;
        for (const j of ai) cmark[j] = ctag;
        for (let b = a + 1; b < bucket.length; b++) {
          const j = bucket[b];
          if (status[j] !== VAR) continue;
          const ej = elAdj[j];
          const aj = varAdj[j];
          if (ej.length !== ei.length || aj.length !== ai.length) continue;
          let same = true;
          for (const e of ej)
            if (cmark[e] !== ctag) {
              same = false;
              break;
            }
          if (same)
            for (const v of aj)
              if (cmark[v] !== ctag) {
                same = false;
                break;
              }
          if (!same) continue;
          nv[i] += nv[j];
          nv[j] = 0;
          status[j] = MERGED;
          const mi = members[i] ?? [];
          mi.push(j);
          const mj = members[j];
          if (mj) for (const v of mj) mi.push(v);
          members[i] = mi;
          members[j] = undefined;
          elAdj[j] = EMPTY;
          varAdj[j] = EMPTY;
        }
      }
    }
    hashBuckets.clear();

    // Pass 4: final degrees, back into the buckets; L_p becomes the new element.
    const le: number[] = [];
    const left = target - nel;
    for (const i of kept) {
      if (status[i] !== VAR) continue;
      const d = Math.min(tmpDeg[i] + dk - nv[i], left - nv[i]);
      deg[i] = d;
      insert(i, d);
      if (d < mindeg) mindeg = d;
      le.push(i);
    }
    elVars[p] = le;
    elDeg[p] = dk;
  }
  for (let i = 0; i < n; i++) if (status[i] === DENSE) perm[out++] = i;
  return perm;
}

/**
 * Reverse Cuthill–McKee: breadth-first search from a pseudo-peripheral node of each
 * connected component, visiting neighbours by increasing degree, reversed at the end
 * (George & Liu, "Computer Solution of Large Sparse Positive Definite Systems", 1981).
 */
export function rcmOrder(g: AdjacencyGraph): Int32Array {
  const { n, ptr, idx } = g;
  const degree = new Int32Array(n);
  for (let i = 0; i < n; i++) degree[i] = ptr[i + 1] - ptr[i];
  const order = new Int32Array(n);
  const visited = new Uint8Array(n);
  const level = new Int32Array(n).fill(-1);
  const queue = new Int32Array(n);

  // BFS level structure from r (within the unvisited component); returns
  // [eccentricity, start of the last level in queue, size].
  const levels = (r: number): [number, number, number] => {
    let headQ = 0;
    let tail = 0;
    queue[tail++] = r;
    level[r] = 0;
    let lastStart = 0;
    let ecc = 0;
    while (headQ < tail) {
      const v = queue[headQ++];
      for (let k = ptr[v]; k < ptr[v + 1]; k++) {
        const w = idx[k];
        if (level[w] === -1 && !visited[w]) {
          level[w] = level[v] + 1;
          if (level[w] > ecc) {
            ecc = level[w];
            lastStart = tail;
          }
          queue[tail++] = w;
        }
      }
    }
    return [ecc, lastStart, tail];
  };
  const clearLevels = (size: number): void => {
    for (let q = 0; q < size; q++) level[queue[q]] = -1;
  };

  let out = 0;
  const nbrs: number[] = [];
  for (let s = 0; s < n; s++) {
    if (visited[s]) continue;
    // George–Liu pseudo-peripheral node.
    let root = s;
    let [ecc, lastStart, size] = levels(root);
    for (;;) {
      let best = queue[lastStart];
      for (let q = lastStart + 1; q < size; q++)
        if (degree[queue[q]] < degree[best]) best = queue[q];
      clearLevels(size);
      const [ecc2, ls2, size2] = levels(best);
      if (ecc2 > ecc) {
        root = best;
        ecc = ecc2;
        lastStart = ls2;
        size = size2;
      } else {
        clearLevels(size2);
        break;
      }
    }
    // Cuthill–McKee BFS from root.
    let headQ = out;
    order[out++] = root;
    visited[root] = 1;
    while (headQ < out) {
      const v = order[headQ++];
      nbrs.length = 0;
      for (let k = ptr[v]; k < ptr[v + 1]; k++) {
        const w = idx[k];
        if (!visited[w]) {
          visited[w] = 1;
          nbrs.push(w);
        }
      }
      nbrs.sort((a, b) => degree[a] - degree[b] || a - b);
      for (const w of nbrs) order[out++] = w;
    }
  }
  order.reverse();
  return order;
}

/**
 * The ordering `name` for a square matrix: AMD / RCM on the pattern of A + Aᵀ,
 * "amd-ata" AMD on AᵀA (column ordering for LU), "natural" the identity.
 */
export function computeOrdering(name: OrderingName, a: CsrMatrix): Int32Array {
  switch (name) {
    case "natural":
      return naturalOrder(a.cols);
    case "amd":
      return amdOrder(symmetricPattern(a));
    case "amd-ata":
      return amdOrder(ataPattern(a));
    case "rcm":
      return rcmOrder(symmetricPattern(a));
  }
}
