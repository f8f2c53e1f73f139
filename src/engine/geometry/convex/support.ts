/**
 * Support functions of convex cores: the one thing GJK, EPA and the normal polish need
 * to know about a shape.
 *
 * A convex core C (a box, a cylinder, a capsule's segment, later the convex hull of a
 * point set) is described in its own frame, placed in the world by x = p + R x_local. Its
 * support function is h_C(d) = max_{x ∈ C} d·x and a support point s_C(d) is a point of C
 * attaining it; for two cores a and b the Minkowski difference a − b has the support point
 * s_a(d) − s_b(−d), and the overlap along a unit n, h_a(n) + h_b(−n), is the depth of the
 * cores along n (negative: their separation along n). A shape that is a core swept by a
 * ball of radius r (a capsule) has h(d) = h_C(d) + r|d|: the pair code adds r exactly
 * after working on the cores, since dilating by a ball moves the boundary of the
 * Minkowski difference by r without changing its normals.
 *
 * A core implements ConvexSupport (here: its support function and the structure of it
 * that the normal polish uses) and ConvexFeatures (features.ts: the face, edge or point it
 * turns towards a direction, for contact manifolds); ConvexShape is both.
 */

/** A convex core's support function and its local structure (see the file comment). */
export interface ConvexSupport {
  /** Origin of the core's frame in the world, metres (set before each query). */
  readonly p: Float64Array;
  /** Row-major rotation of the core's frame: its columns are the core's axes in the world. */
  readonly R: Float64Array;
  /**
   * Radius of the ball the core is swept by (sweep[0], metres): 0 for a solid, a capsule's
   * radius for its segment, a sphere's for its centre (the pair adds it to the core gap).
   */
  readonly sweep: Float64Array;
  /** Radius of a ball about the frame origin containing the core, metres. */
  boundingRadius(): number;
  /**
   * Support point in the core's frame: for the local direction d[0..2] (any length, may
   * be zero) writes a point of the core maximizing d·x into s[0..2].
   */
  localSupport(d: Float64Array, s: Float64Array): void;
  /**
   * Moves the local point q[0..2] (near the core's surface) onto the support set of the
   * local unit direction d[0..2], the face of the core where d·x is largest: along the
   * directions in which d has a component (beyond 1e-9) q is set to the supporting side,
   * along the others clamped to the core. Returns the dimension of that set: 0 (a point),
   * 1 (a segment: its two ends, local, into ends[0..5]) or 2 (a face).
   */
  projectOnSupport(q: Float64Array, d: Float64Array, ends: Float64Array): number;
  /**
   * Adds to H (row-major 3×3) the Hessian of the support function in world space at the
   * world unit direction d[o..o+2] where it is smooth (0 for polyhedra, whose support
   * function is piecewise linear).
   */
  addSupportHessian(d: Float64Array, o: number, H: Float64Array): void;
  /**
   * World axes k (unit) across whose great circle n ⟂ k the support function has a kink
   * (is not differentiable): a box's three axes, a cylinder's or segment's axis. Written
   * to out[3o..], returns their count.
   */
  kinkAxes(out: Float64Array, o: number): number;
  /**
   * World axes k (unit) at whose directions ±k the support function has a cone point (a
   * cylinder's axis: its caps). Written to out[3o..], returns their count.
   */
  coneAxes(out: Float64Array, o: number): number;
}

/**
 * The query collideCores is answering, written before anything reads it: the size of the
 * pair (0: sum of the cores' bounding radii, metres), the contact margin (1), the core
 * distance from which on there is no contact (2: the margin plus both radii, plus the
 * dilation during a dilated retry), the radius of the ball b is dilated by in
 * minkowski() (3: 0 but in a dilated retry) and EPA's upper bound on the cores'
 * separation (4).
 *
 * Throughout the convex machinery, doubles cross calls in module-level arrays like this
 * one rather than as arguments or return values: V8 boxes a double argument of a call it
 * does not inline, and a double such a call returns, into a new heap number (16 bytes;
 * calls through ConvexSupport are polymorphic, and the large functions exhaust the
 * inlining budget); a margin passed down as an argument would be boxed at every call when
 * its caller holds it unboxed. For the same reason lengths and clamps are written out
 * (Math.sqrt(x * x + y * y), as vec3.ts length2 computes it): V8 does not inline even
 * those small calls on a path it has rarely taken. The one double still returned through
 * the interfaces, boundingRadius(), is called twice per query on small polymorphic
 * targets that V8 inlines.
 */
export const QUERY = new Float64Array(5);

/** Local direction and local support point of support(). */
const LOCAL_DIR = new Float64Array(3);
const LOCAL_POINT = new Float64Array(3);
/** Support point (world) written by support(). */
export const SUP = new Float64Array(3);

/**
 * Support point of core c in the world direction sg·d[o..o+2] (sg = ±1; any length), into
 * SUP.
 */
export function support(c: ConvexSupport, d: Float64Array, o: number, sg: number): void {
  const dx = sg * d[o];
  const dy = sg * d[o + 1];
  const dz = sg * d[o + 2];
  const R = c.R;
  const p = c.p;
  LOCAL_DIR[0] = R[0] * dx + R[3] * dy + R[6] * dz;
  LOCAL_DIR[1] = R[1] * dx + R[4] * dy + R[7] * dz;
  LOCAL_DIR[2] = R[2] * dx + R[5] * dy + R[8] * dz;
  c.localSupport(LOCAL_DIR, LOCAL_POINT);
  const a0 = LOCAL_POINT[0];
  const a1 = LOCAL_POINT[1];
  const a2 = LOCAL_POINT[2];
  SUP[0] = p[0] + R[0] * a0 + R[1] * a1 + R[2] * a2;
  SUP[1] = p[1] + R[3] * a0 + R[4] * a1 + R[5] * a2;
  SUP[2] = p[2] + R[6] * a0 + R[7] * a1 + R[8] * a2;
}

/** World point p + R x of core c's local point x = src[so..so+2], into out[o..o+2]. */
export function localToWorld(
  c: ConvexSupport,
  src: Float64Array,
  so: number,
  out: Float64Array,
  o: number,
): void {
  const x = src[so];
  const y = src[so + 1];
  const z = src[so + 2];
  const R = c.R;
  const p = c.p;
  out[o] = p[0] + R[0] * x + R[1] * y + R[2] * z;
  out[o + 1] = p[1] + R[3] * x + R[4] * y + R[5] * z;
  out[o + 2] = p[2] + R[6] * x + R[7] * y + R[8] * z;
}

/** Core c's local components Rᵀ v of the world vector v = src[so..so+2], into out[0..2]. */
export function toLocal(c: ConvexSupport, src: Float64Array, so: number, out: Float64Array): void {
  const x = src[so];
  const y = src[so + 1];
  const z = src[so + 2];
  const R = c.R;
  out[0] = R[0] * x + R[3] * y + R[6] * z;
  out[1] = R[1] * x + R[4] * y + R[7] * z;
  out[2] = R[2] * x + R[5] * y + R[8] * z;
}

/**
 * Minkowski support in the direction d = d[o..o+2]: w = s_a(d) − s_b(−d), written at slot i
 * of the point arrays W (w), A (s_a) and B (s_b), 3 per slot. With a dilation r of b
 * (QUERY[3]), w moves by r d̂.
 */
export function minkowski(
  a: ConvexSupport,
  b: ConvexSupport,
  d: Float64Array,
  o: number,
  W: Float64Array,
  A: Float64Array,
  B: Float64Array,
  i: number,
): void {
  support(a, d, o, 1);
  A[3 * i] = SUP[0];
  A[3 * i + 1] = SUP[1];
  A[3 * i + 2] = SUP[2];
  support(b, d, o, -1);
  B[3 * i] = SUP[0];
  B[3 * i + 1] = SUP[1];
  B[3 * i + 2] = SUP[2];
  W[3 * i] = A[3 * i] - SUP[0];
  W[3 * i + 1] = A[3 * i + 1] - SUP[1];
  W[3 * i + 2] = A[3 * i + 2] - SUP[2];
  const dilation = QUERY[3];
  if (dilation > 0) {
    // b dilated by a ball of radius r: its support moves by r·(−d̂).
    const dx = d[o];
    const dy = d[o + 1];
    const dz = d[o + 2];
    const s = dilation / Math.sqrt(dx * dx + dy * dy + dz * dz);
    W[3 * i] += s * dx;
    W[3 * i + 1] += s * dy;
    W[3 * i + 2] += s * dz;
  }
}

/** Support points of the last overlapAlong: a's (0..2), b's (3..5). */
export const WAB = new Float64Array(6);

/** Value of the last overlapAlong or separationAlong. */
export const ALONG = new Float64Array(1);

/**
 * Overlap of the cores along the unit n = n[o..o+2] (a→b): h_a(n) + h_b(−n) =
 * n·(s_a(n) − s_b(−n)), the depth of the cores along n, negative when n separates them;
 * into ALONG[0] (supports kept in WAB).
 */
export function overlapAlong(a: ConvexSupport, b: ConvexSupport, n: Float64Array, o: number): void {
  const nx = n[o];
  const ny = n[o + 1];
  const nz = n[o + 2];
  support(a, n, o, 1);
  WAB[0] = SUP[0];
  WAB[1] = SUP[1];
  WAB[2] = SUP[2];
  support(b, n, o, -1);
  WAB[3] = SUP[0];
  WAB[4] = SUP[1];
  WAB[5] = SUP[2];
  ALONG[0] = nx * (WAB[0] - WAB[3]) + ny * (WAB[1] - WAB[4]) + nz * (WAB[2] - WAB[5]);
}

/**
 * Separation of the cores along the unit direction m = sg·v[o..o+2] (sg = ±1; a→b):
 * min_b m·b − max_a m·a, into ALONG[0].
 */
export function separationAlong(
  a: ConvexSupport,
  b: ConvexSupport,
  v: Float64Array,
  o: number,
  sg: number,
): void {
  const mx = sg * v[o];
  const my = sg * v[o + 1];
  const mz = sg * v[o + 2];
  support(a, v, o, sg);
  const ha = mx * SUP[0] + my * SUP[1] + mz * SUP[2];
  support(b, v, o, -sg);
  ALONG[0] = mx * SUP[0] + my * SUP[1] + mz * SUP[2] - ha;
}
