/**
 * Structure-of-arrays store of contact points, reused from step to step.
 *
 * Contact i joins body bodyA[i] (shape shapeA[i]) and body bodyB[i] (shape shapeB[i]):
 *  - point[3i..3i+2]: world point midway between the two surfaces, metres;
 *  - normal[3i..3i+2]: unit world normal pointing FROM body a TO body b;
 *  - gap[i]: signed distance between the surfaces along the normal, metres
 *    (gap = (p_b − p_a)·n for the surface points p_a, p_b; negative when penetrating);
 *  - feature[i]: the pair function's feature id (which vertex / face / edge pair made
 *    the point), stable while the same features stay in contact;
 *  - key[i]: a stable identity of the contact, contactKey(shapeA, shapeB, feature), for
 *    warm starting across steps (it does not depend on which shape is called a or b).
 *
 * The arrays grow (doubling) when the capacity is exceeded, so a caller must re-read
 * the fields after each detect(); in steady state nothing is allocated.
 */

/** Number of feature ids reserved per shape pair in a contact key. */
export const FEATURE_RANGE = 65536;

/**
 * Identity of a contact from its two shape indices and feature id:
 * key = (hi (hi + 1)/2 + lo) · 65536 + feature with lo = min, hi = max shape index.
 * Exact in a double for shape indices below 2^18 and features below 65536.
 */
export function contactKey(shapeA: number, shapeB: number, feature: number): number {
  const lo = Math.min(shapeA, shapeB);
  const hi = Math.max(shapeA, shapeB);
  return ((hi * (hi + 1)) / 2 + lo) * FEATURE_RANGE + feature;
}

export class ContactBuffer {
  count = 0;
  capacity: number;
  bodyA: Int32Array;
  bodyB: Int32Array;
  shapeA: Int32Array;
  shapeB: Int32Array;
  feature: Int32Array;
  point: Float64Array;
  normal: Float64Array;
  gap: Float64Array;
  key: Float64Array;

  private readonly scratch = new Float64Array(7);
  // Pair the next push()es belong to (set by setPair).
  private curBodyA = -1;
  private curBodyB = -1;
  private curShapeA = 0;
  private curShapeB = 1;
  private curKeyBase = contactKey(0, 1, 0);

  constructor(capacity = 64) {
    this.capacity = Math.max(1, capacity | 0);
    const c = this.capacity;
    this.bodyA = new Int32Array(c);
    this.bodyB = new Int32Array(c);
    this.shapeA = new Int32Array(c);
    this.shapeB = new Int32Array(c);
    this.feature = new Int32Array(c);
    this.point = new Float64Array(3 * c);
    this.normal = new Float64Array(3 * c);
    this.gap = new Float64Array(c);
    this.key = new Float64Array(c);
  }

  /** Empties the buffer (keeps the storage). */
  clear(): void {
    this.count = 0;
  }

  /** Sets the bodies and shapes that the following push() calls are recorded for. */
  setPair(bodyA: number, bodyB: number, shapeA: number, shapeB: number): void {
    this.curBodyA = bodyA;
    this.curBodyB = bodyB;
    this.curShapeA = shapeA;
    this.curShapeB = shapeB;
    this.curKeyBase = contactKey(shapeA, shapeB, 0);
  }

  /** Appends a contact of the current pair; returns its index. */
  push(
    px: number,
    py: number,
    pz: number,
    nx: number,
    ny: number,
    nz: number,
    gap: number,
    feature: number,
  ): number {
    const c = this.scratch;
    c[0] = px;
    c[1] = py;
    c[2] = pz;
    c[3] = nx;
    c[4] = ny;
    c[5] = nz;
    c[6] = gap;
    return this.pushFrom(c, feature);
  }

  /**
   * push() with point, normal and gap read from c[0..6] ([p, n, gap]): the hot pair
   * functions use it, since double arguments to a call that V8 does not inline are
   * boxed (an allocation each).
   */
  pushFrom(c: Float64Array, feature: number): number {
    if (this.count === this.capacity) this.grow(2 * this.capacity);
    const i = this.count++;
    this.bodyA[i] = this.curBodyA;
    this.bodyB[i] = this.curBodyB;
    this.shapeA[i] = this.curShapeA;
    this.shapeB[i] = this.curShapeB;
    this.feature[i] = feature;
    this.key[i] = this.curKeyBase + feature;
    this.point[3 * i] = c[0];
    this.point[3 * i + 1] = c[1];
    this.point[3 * i + 2] = c[2];
    this.normal[3 * i] = c[3];
    this.normal[3 * i + 1] = c[4];
    this.normal[3 * i + 2] = c[5];
    this.gap[i] = c[6];
    return i;
  }

  /**
   * Replaces the features of the contacts from index `from` on by a 16-bit mix of each
   * feature with the integers x and y (and their keys accordingly): for pair functions
   * whose features index more than a key's 65536 ids hold (the faces and edges of a
   * hull, the triangles of a mesh), x and y name the features in contact, the pushed
   * feature the point among them. Two contacts then share an id with probability about
   * 2⁻¹⁶, which only mixes their warm starts.
   */
  mixFeatures(from: number, x: number, y: number): void {
    for (let i = from; i < this.count; i++) {
      let h = Math.imul(this.feature[i] ^ Math.imul(x, 0x9e3779b1), 0x85ebca6b);
      h ^= Math.imul((y + 0x632be5ab) | 0, 0xc2b2ae35);
      h ^= h >>> 15;
      h = Math.imul(h, 0x2c1b3c6d);
      h ^= h >>> 16;
      const f = h & 0xffff;
      this.feature[i] = f;
      this.key[i] = this.curKeyBase + f;
    }
  }

  /** Appends contacts start..end−1 of `src` as they are (pairs, features and keys included). */
  appendFrom(src: ContactBuffer, start: number, end: number): void {
    const need = this.count + end - start;
    if (need > this.capacity) this.grow(Math.max(2 * this.capacity, need));
    for (let k = start; k < end; k++) this.copyContact(this.count++, src, k);
  }

  /** Removes contact i, moving the last contact into its place. */
  removeAt(i: number): void {
    const j = --this.count;
    if (i !== j) this.copyContact(i, this, j);
  }

  /** Contact i ← contact k of `src` (every field; src may be this buffer). */
  private copyContact(i: number, src: ContactBuffer, k: number): void {
    this.bodyA[i] = src.bodyA[k];
    this.bodyB[i] = src.bodyB[k];
    this.shapeA[i] = src.shapeA[k];
    this.shapeB[i] = src.shapeB[k];
    this.feature[i] = src.feature[k];
    this.key[i] = src.key[k];
    this.gap[i] = src.gap[k];
    for (let c = 0; c < 3; c++) {
      this.point[3 * i + c] = src.point[3 * k + c];
      this.normal[3 * i + c] = src.normal[3 * k + c];
    }
  }

  /**
   * Negates the normals of the contacts from index `from` on. Used when a pair function
   * written for (b, a) filled contacts that the caller records as (a, b): gap, point,
   * feature and key are symmetric in a and b, only the normal's direction changes.
   */
  negateNormals(from: number): void {
    const nrm = this.normal;
    for (let k = 3 * from; k < 3 * this.count; k++) nrm[k] = -nrm[k];
  }

  /** Reallocates to at least `capacity` entries, keeping the contents. */
  grow(capacity: number): void {
    if (capacity <= this.capacity) return;
    const n = this.count;
    const i32 = (a: Int32Array) => {
      const b = new Int32Array(capacity);
      b.set(a.subarray(0, n));
      return b;
    };
    const f64 = (a: Float64Array, w: number) => {
      const b = new Float64Array(w * capacity);
      b.set(a.subarray(0, w * n));
      return b;
    };
    this.bodyA = i32(this.bodyA);
    this.bodyB = i32(this.bodyB);
    this.shapeA = i32(this.shapeA);
    this.shapeB = i32(this.shapeB);
    this.feature = i32(this.feature);
    this.point = f64(this.point, 3);
    this.normal = f64(this.normal, 3);
    this.gap = f64(this.gap, 1);
    this.key = f64(this.key, 1);
    this.capacity = capacity;
  }
}
