/**
 * ldl_symbolic (T. A. Davis, "Algorithm 849: A concise sparse Cholesky factorization
 * package", ACM TOMS 31, 2005): the elimination tree of a symmetric pattern and the
 * number of nonzeros of each column of its factor L, from the strictly lower part of
 * each row: list k (idx[ptr[k] .. ptr[k+1]), entries ≥ k ignored) holds the columns i < k
 * with a_ki ≠ 0. Row k of L is the set of nodes reached from those entries by walking up
 * the tree until a node already flagged k; each node i visited gets l_ki ≠ 0.
 */
export interface EliminationTree {
  /** parent[k], −1 for a root. */
  parent: Int32Array<ArrayBuffer>;
  /** Nonzeros of column k of L (below the diagonal). */
  lnz: Int32Array<ArrayBuffer>;
  /** Column pointers of L: lp[k + 1] − lp[k] = lnz[k]. */
  lp: Int32Array<ArrayBuffer>;
  /** Work array of the walks (flag[k] = k afterwards), reusable by the numeric phase. */
  flag: Int32Array<ArrayBuffer>;
}

export function eliminationTree(n: number, ptr: Int32Array, idx: Int32Array): EliminationTree {
  const parent = new Int32Array(n);
  const lnz = new Int32Array(n);
  const flag = new Int32Array(n);
  for (let k = 0; k < n; k++) {
    parent[k] = -1;
    flag[k] = k;
    for (let p = ptr[k]; p < ptr[k + 1]; p++) {
      let i = idx[p];
      if (i >= k) continue;
      while (flag[i] !== k) {
        if (parent[i] === -1) parent[i] = k;
        lnz[i]++;
        flag[i] = k;
        i = parent[i];
      }
    }
  }
  const lp = new Int32Array(n + 1);
  for (let k = 0; k < n; k++) lp[k + 1] = lp[k] + lnz[k];
  return { parent, lnz, lp, flag };
}

/**
 * The numeric phase's walk (ldl_numeric): the nodes of row k of L reached from column i
 * by walking up the tree until a node already flagged k, pushed onto the stack
 * patt[top − len .. top) in topological order (ancestors after descendants). Returns the
 * new top; patt's slots below the old top are its scratch.
 */
export function reachUpTree(
  i: number,
  k: number,
  parent: Int32Array,
  flag: Int32Array,
  patt: Int32Array,
  top: number,
): number {
  let len = 0;
  while (flag[i] !== k) {
    patt[len++] = i;
    flag[i] = k;
    i = parent[i];
  }
  while (len > 0) patt[--top] = patt[--len];
  return top;
}

/** A symmetric matrix's upper triangle by columns, each entry with where its value comes from. */
export interface UpperColumns {
  /** Row of each entry, column by column (column j: cp[j] .. cp[j + 1]). */
  ci: Int32Array<ArrayBuffer>;
  /** Where the entry's value is read (an offset in the matrix's values). */
  src1: Int32Array<ArrayBuffer>;
  /** Where its mirror's value is read, or −1 (the LDLᵀ factorizations take the two's mean). */
  src2: Int32Array<ArrayBuffer>;
}

/**
 * Counting sort of `count` upper-triangle entries listed in any order (entry p at row
 * rowOf[p] ≤ column colOf[p], its sources s1[p], s2[p]) into columns. `cp` (n + 1) holds
 * each column's count at cp[col + 1] on entry and the column pointers on return.
 */
export function sortByColumn(
  n: number,
  count: number,
  rowOf: Int32Array,
  colOf: Int32Array,
  s1: Int32Array,
  s2: Int32Array,
  cp: Int32Array,
): UpperColumns {
  for (let j = 0; j < n; j++) cp[j + 1] += cp[j];
  const next = cp.slice(0, n);
  const ci = new Int32Array(count);
  const src1 = new Int32Array(count);
  const src2 = new Int32Array(count);
  for (let p = 0; p < count; p++) {
    const dst = next[colOf[p]]++;
    ci[dst] = rowOf[p];
    src1[dst] = s1[p];
    src2[dst] = s2[p];
  }
  return { ci, src1, src2 };
}
