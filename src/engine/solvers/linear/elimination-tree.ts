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
