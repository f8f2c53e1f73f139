/**
 * The signed distance of a point to a triangle's plane written out independently of
 * src/engine/geometry/point-triangle.ts (its own cross product), and its gradient by
 * central differences: the references of the point–triangle query's tests and of the
 * vertex–triangle contact Jacobian (fem-faces).
 */

/**
 * d = n·(p − x₀), n = (x₁ − x₀) × (x₂ − x₀) / |…|: the signed distance of p = x[0..2] to the
 * plane of the triangle x₀, x₁, x₂ = x[3..5], x[6..8], x[9..11] (m), positive on the side
 * the corners turn counter-clockwise about.
 */
export function signedDistance(x: ArrayLike<number>): number {
  const e1 = [x[6] - x[3], x[7] - x[4], x[8] - x[5]];
  const e2 = [x[9] - x[3], x[10] - x[4], x[11] - x[5]];
  const c = [
    e1[1] * e2[2] - e1[2] * e2[1],
    e1[2] * e2[0] - e1[0] * e2[2],
    e1[0] * e2[1] - e1[1] * e2[0],
  ];
  const l = Math.hypot(c[0], c[1], c[2]);
  return (c[0] * (x[0] - x[3]) + c[1] * (x[1] - x[4]) + c[2] * (x[2] - x[5])) / l;
}

/**
 * ∂d/∂x_k ≈ (d(x + ε e_k) − d(x − ε e_k)) / 2ε for the 12 coordinates of x (error O(ε²)
 * times d's third derivatives).
 */
export function signedDistanceGradient(x: readonly number[], eps: number): number[] {
  return x.map((_, k) => {
    const xp = x.slice();
    const xm = x.slice();
    xp[k] += eps;
    xm[k] -= eps;
    return (signedDistance(xp) - signedDistance(xm)) / (2 * eps);
  });
}
