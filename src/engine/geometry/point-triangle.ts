/**
 * A point against the plane of a triangle: the triangle's unit normal, the point's signed
 * distance to the plane and the barycentric coordinates of its projection, the query of
 * vertex–face contact between deformable surfaces (contact/fem-faces.ts).
 *
 * For corners x₀, x₁, x₂ (right-handed: the normal is n = (x₁ − x₀) × (x₂ − x₀)/|…|, the
 * outward normal of a surface triangle of fem/surface.ts) and the point p:
 *   d = n·(p − x₀)                       (signed distance, m; > 0 on the normal's side)
 *   q = p − d n = w₀ x₀ + w₁ x₁ + w₂ x₂   (the projection on the plane, w₀ + w₁ + w₂ = 1)
 * with the weights of Ericson, Real-Time Collision Detection §3.4 (Cramer's rule on the
 * normal equations of q − x₀ = w₁ e₁ + w₂ e₂), e₁ = x₁ − x₀, e₂ = x₂ − x₀, r = p − x₀ (the
 * component of r along n drops out of the dot products with e₁, e₂):
 *   D = (e₁·e₁)(e₂·e₂) − (e₁·e₂)² = |e₁ × e₂|²,
 *   w₁ = ((e₂·e₂)(r·e₁) − (e₁·e₂)(r·e₂)) / D,
 *   w₂ = ((e₁·e₁)(r·e₂) − (e₁·e₂)(r·e₁)) / D,   w₀ = 1 − w₁ − w₂.
 * The projection lies in the triangle when every w_i ≥ 0; it lies beyond edge i (opposite
 * corner i) by −w_i times the altitude 2A/|edge_i| (withinReach). clampWeights moves it
 * onto the triangle (weights clamped at 0 and renormalized: a point of the same plane, so
 * d is unchanged).
 * The gradient of d is
 *   ∂d/∂p = n,   ∂d/∂x_i = −w_i n,
 * exactly (not only at d = 0): moving a corner within the plane leaves the plane as it
 * is, and moving the corners along n by ε_i moves the plane at q by Σ w_i ε_i (affine
 * interpolation) while its tilt changes the distance from p only at second order. This
 * is the contact Jacobian of a vertex–face contact (contact/fem-faces.ts).
 */

/** pointTriangle's result: [w₀, w₁, w₂, d, n_x, n_y, n_z, 2A] (2A twice the area, m²). */
export const POINT_TRIANGLE = new Float64Array(8);

/** Barycentric slack of withinReach's test besides the reach (round-off). */
const ROUND_OFF = 1e-9;

/**
 * The plane query above for the point from[p..p+2] and the triangle with corners at
 * x[a..a+2], x[b..b+2], x[c..c+2] (one coordinate array, e.g. all body positions; the
 * point from the same array unless `from` is given, e.g. a rigid shape's world points),
 * into POINT_TRIANGLE. Returns false (and leaves it unchanged) for a degenerate triangle
 * (zero area).
 */
export function pointTriangle(
  x: Float64Array,
  p: number,
  a: number,
  b: number,
  c: number,
  from: Float64Array = x,
): boolean {
  const e1x = x[b] - x[a];
  const e1y = x[b + 1] - x[a + 1];
  const e1z = x[b + 2] - x[a + 2];
  const e2x = x[c] - x[a];
  const e2y = x[c + 1] - x[a + 1];
  const e2z = x[c + 2] - x[a + 2];
  const rx = from[p] - x[a];
  const ry = from[p + 1] - x[a + 1];
  const rz = from[p + 2] - x[a + 2];
  let nx = e1y * e2z - e1z * e2y;
  let ny = e1z * e2x - e1x * e2z;
  let nz = e1x * e2y - e1y * e2x;
  const l = Math.sqrt(nx * nx + ny * ny + nz * nz);
  if (!(l > 0)) return false;
  nx /= l;
  ny /= l;
  nz /= l;
  const d11 = e1x * e1x + e1y * e1y + e1z * e1z;
  const d22 = e2x * e2x + e2y * e2y + e2z * e2z;
  const d12 = e1x * e2x + e1y * e2y + e1z * e2z;
  const r1 = rx * e1x + ry * e1y + rz * e1z;
  const r2 = rx * e2x + ry * e2y + rz * e2z;
  // D = |e₁ × e₂|² = l², the Gram determinant; l² keeps it positive.
  const D = l * l;
  const w1 = (d22 * r1 - d12 * r2) / D;
  const w2 = (d11 * r2 - d12 * r1) / D;
  const out = POINT_TRIANGLE;
  out[0] = 1 - w1 - w2;
  out[1] = w1;
  out[2] = w2;
  out[3] = nx * rx + ny * ry + nz * rz;
  out[4] = nx;
  out[5] = ny;
  out[6] = nz;
  out[7] = l;
  return true;
}

/**
 * Whether the projection q (pointTriangle's result for the triangle x[a..], x[b..],
 * x[c..]) lies within `reach` (m) of the triangle across each edge:
 * w_i ≥ −reach·|edge_i|/2A − 1e-9 for every corner i (the 1e-9 for round-off).
 */
export function withinReach(
  q: Float64Array,
  x: Float64Array,
  a: number,
  b: number,
  c: number,
  reach: number,
): boolean {
  const r = reach / q[7];
  return (
    q[0] >= -ROUND_OFF - r * distance(x, b, c) &&
    q[1] >= -ROUND_OFF - r * distance(x, a, c) &&
    q[2] >= -ROUND_OFF - r * distance(x, a, b)
  );
}

/** The weights q[0..2] clamped onto the triangle (at 0, renormalized to sum 1). */
export function clampWeights(q: Float64Array): void {
  if (q[0] >= 0 && q[1] >= 0 && q[2] >= 0) return;
  const w0 = Math.max(q[0], 0);
  const w1 = Math.max(q[1], 0);
  const w2 = Math.max(q[2], 0);
  const sum = w0 + w1 + w2;
  q[0] = w0 / sum;
  q[1] = w1 / sum;
  q[2] = w2 / sum;
}

/** |x[j..j+2] − x[i..i+2]|. */
function distance(x: Float64Array, i: number, j: number): number {
  return Math.hypot(x[j] - x[i], x[j + 1] - x[i + 1], x[j + 2] - x[i + 2]);
}
