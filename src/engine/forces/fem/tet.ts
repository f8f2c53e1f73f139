/**
 * Linear tetrahedra (4 nodes, linear shape functions N₀..N₃): the reference quantities
 * of an element from its rest node positions X₀..X₃ and the deformation gradient of its
 * current ones x₀..x₃.
 *
 *   D_m = [X₁ − X₀, X₂ − X₀, X₃ − X₀]   (columns),   V = det(D_m) / 6 > 0,
 *   B = D_m⁻¹,   ∇N_a = row a of B (a = 1..3),   ∇N₀ = −(∇N₁ + ∇N₂ + ∇N₃),
 *   F = D_s B  with D_s = [x₁ − x₀, x₂ − x₀, x₃ − x₀],   i.e. F = Σ_a x_a ⊗ ∇N_a.
 *
 * The elastic force on node a is f_a = −V P ∇N_a (P the first Piola–Kirchhoff stress),
 * the element's nodal forces summing to zero (and their moments too, for a P of a frame-
 * indifferent material), and its stiffness blocks K_ab = V (∂P/∂F) contracted with ∇N_a and
 * ∇N_b (fem-effector.ts).
 */

/** Nodes of a tetrahedron whose rest volume is positive: X₁ − X₀, X₂ − X₀, X₃ − X₀ right-handed. */
export const TET_NODES = 4;

/** 6 V of the tetrahedron with nodes at p[3a..3a+2] of `pos` (signed: positive right-handed). */
export function tetSixVolume(
  pos: ArrayLike<number>,
  a: number,
  b: number,
  c: number,
  d: number,
): number {
  const x0 = pos[3 * a];
  const y0 = pos[3 * a + 1];
  const z0 = pos[3 * a + 2];
  const ux = pos[3 * b] - x0;
  const uy = pos[3 * b + 1] - y0;
  const uz = pos[3 * b + 2] - z0;
  const vx = pos[3 * c] - x0;
  const vy = pos[3 * c + 1] - y0;
  const vz = pos[3 * c + 2] - z0;
  const wx = pos[3 * d] - x0;
  const wy = pos[3 * d + 1] - y0;
  const wz = pos[3 * d + 2] - z0;
  return ux * (vy * wz - vz * wy) - uy * (vx * wz - vz * wx) + uz * (vx * wy - vy * wx);
}

/**
 * Reference data of element e with nodes `nodes[4e..4e+3]` (indices into `rest`, 3 per
 * node): B = D_m⁻¹ into b[9e..9e+8] (row-major; its rows are ∇N₁..∇N₃) and returns V.
 * Throws for a degenerate or negatively oriented element (the mesh builders orient them).
 */
export function tetReference(
  rest: ArrayLike<number>,
  nodes: ArrayLike<number>,
  e: number,
  b: Float64Array,
): number {
  const n0 = nodes[4 * e];
  const dm = new Float64Array(9);
  for (let a = 1; a < 4; a++) {
    const n = nodes[4 * e + a];
    for (let i = 0; i < 3; i++) dm[3 * i + (a - 1)] = rest[3 * n + i] - rest[3 * n0 + i];
  }
  const det =
    dm[0] * (dm[4] * dm[8] - dm[5] * dm[7]) -
    dm[1] * (dm[3] * dm[8] - dm[5] * dm[6]) +
    dm[2] * (dm[3] * dm[7] - dm[4] * dm[6]);
  let scale = 0;
  for (let k = 0; k < 9; k++) scale = Math.max(scale, Math.abs(dm[k]));
  if (!(det > 1e-12 * scale * scale * scale))
    throw new Error(
      `element ${e} (nodes ${Array.from({ length: 4 }, (_, k) => nodes[4 * e + k]).join(", ")}) has ${det > 0 ? "a degenerate" : "a non-positive"} volume ${(det / 6).toPrecision(3)}`,
    );
  const inv = 1 / det;
  const o = 9 * e;
  b[o] = (dm[4] * dm[8] - dm[5] * dm[7]) * inv;
  b[o + 1] = (dm[2] * dm[7] - dm[1] * dm[8]) * inv;
  b[o + 2] = (dm[1] * dm[5] - dm[2] * dm[4]) * inv;
  b[o + 3] = (dm[5] * dm[6] - dm[3] * dm[8]) * inv;
  b[o + 4] = (dm[0] * dm[8] - dm[2] * dm[6]) * inv;
  b[o + 5] = (dm[2] * dm[3] - dm[0] * dm[5]) * inv;
  b[o + 6] = (dm[3] * dm[7] - dm[4] * dm[6]) * inv;
  b[o + 7] = (dm[1] * dm[6] - dm[0] * dm[7]) * inv;
  b[o + 8] = (dm[0] * dm[4] - dm[1] * dm[3]) * inv;
  return det / 6;
}

/**
 * F = D_s B for element e: the current node positions are x[3·k] for k = at[4e + a]
 * (positions of the element's nodes in a strided array, e.g. sys.pos with body indices),
 * B at b[9e]. Writes the row-major F into `out`.
 */
export function deformationGradient(
  x: ArrayLike<number>,
  at: ArrayLike<number>,
  b: Float64Array,
  e: number,
  out: Float64Array,
): void {
  const i0 = 3 * at[4 * e];
  const i1 = 3 * at[4 * e + 1];
  const i2 = 3 * at[4 * e + 2];
  const i3 = 3 * at[4 * e + 3];
  const o = 9 * e;
  for (let i = 0; i < 3; i++) {
    const x0 = x[i0 + i];
    const d1 = x[i1 + i] - x0;
    const d2 = x[i2 + i] - x0;
    const d3 = x[i3 + i] - x0;
    out[3 * i] = d1 * b[o] + d2 * b[o + 3] + d3 * b[o + 6];
    out[3 * i + 1] = d1 * b[o + 1] + d2 * b[o + 4] + d3 * b[o + 7];
    out[3 * i + 2] = d1 * b[o + 2] + d2 * b[o + 5] + d3 * b[o + 8];
  }
}
