/**
 * Accuracy probes of ../shared/BENCH-SCENES.md, computed from body states (BodyStates, in
 * the scene description's order) in the same way for every engine, outside any timed
 * region.
 */
import type { BodyStates } from "./engines/types";
import type { SceneDesc, TerrainDesc, Vec3 } from "./scene";

/** Gap (m) under which two spheres, or a sphere and a wall, count as touching (2 % of r). */
export const CONTACT_GAP_TOLERANCE = 1e-3;

/** Rotates the body-frame vector p by the unit quaternion at q[4b..] into out (world). */
export function rotate(
  q: Float64Array,
  b: number,
  p: Vec3 | Float64Array,
  out: Float64Array,
): void {
  const w = q[4 * b];
  const x = q[4 * b + 1];
  const y = q[4 * b + 2];
  const z = q[4 * b + 3];
  // v' = v + 2 w (u × v) + 2 u × (u × v), u = (x, y, z)
  const tx = 2 * (y * p[2] - z * p[1]);
  const ty = 2 * (z * p[0] - x * p[2]);
  const tz = 2 * (x * p[1] - y * p[0]);
  out[0] = p[0] + w * tx + (y * tz - z * ty);
  out[1] = p[1] + w * ty + (z * tx - x * tz);
  out[2] = p[2] + w * tz + (x * ty - y * tx);
}

/** False when any position or velocity is non-finite or beyond `limit` (a blow-up). */
export function statesFinite(s: BodyStates, limit = 1e3): boolean {
  for (let i = 0; i < 3 * s.n; i++) {
    const x = s.pos[i];
    const v = s.vel[i];
    if (!(Math.abs(x) <= limit) || !(Math.abs(v) <= 1e6) || !Number.isFinite(s.omega[i]))
      return false;
  }
  for (let i = 0; i < 4 * s.n; i++) if (!Number.isFinite(s.quat[i])) return false;
  return true;
}

export interface SphereProbe {
  /** Sphere–sphere pairs and sphere–wall pairs with gap ≤ CONTACT_GAP_TOLERANCE. */
  contacts: number;
  /** Mean height of the sphere centres (m). */
  meanHeight: number;
  /** Lowest sphere centre z (m). */
  lowestZ: number;
  /** Largest interpenetration (m, ≥ 0) of any sphere pair or sphere and wall. */
  maxPenetration: number;
  /** Spheres whose centre left the box by more than a radius (fell through a wall). */
  escaped: number;
}

/**
 * S1: geometric contact count (the same definition for every engine; each engine's own
 * count is reported beside it), mean height, deepest penetration. Pairs by a uniform grid
 * of cell 2r + tolerance, so it stays O(N).
 */
export function probeSpheres(scene: SceneDesc, s: BodyStates): SphereProbe {
  const n = scene.bodies.length;
  const r = scene.bodies[0]?.sphereRadius ?? 0;
  const reach = 2 * r + CONTACT_GAP_TOLERANCE;
  let contacts = 0;
  let sumZ = 0;
  let lowestZ = Number.POSITIVE_INFINITY;
  let maxPen = 0;
  let escaped = 0;
  const cells = new Map<string, number[]>();
  const key = (a: number, b: number, c: number) => `${a},${b},${c}`;
  for (let i = 0; i < n; i++) {
    const x = s.pos[3 * i];
    const y = s.pos[3 * i + 1];
    const z = s.pos[3 * i + 2];
    sumZ += z;
    lowestZ = Math.min(lowestZ, z);
    for (const hs of scene.halfSpaces) {
      const gap = hs.normal[0] * x + hs.normal[1] * y + hs.normal[2] * z - hs.offset - r;
      if (gap <= CONTACT_GAP_TOLERANCE) contacts++;
      maxPen = Math.max(maxPen, -gap);
      if (gap < -2 * r) {
        escaped++;
        break;
      }
    }
    if (!Number.isFinite(x + y + z)) continue;
    const k = key(Math.floor(x / reach), Math.floor(y / reach), Math.floor(z / reach));
    const list = cells.get(k);
    if (list) list.push(i);
    else cells.set(k, [i]);
  }
  for (let i = 0; i < n; i++) {
    const x = s.pos[3 * i];
    const y = s.pos[3 * i + 1];
    const z = s.pos[3 * i + 2];
    if (!Number.isFinite(x + y + z)) continue;
    const cx = Math.floor(x / reach);
    const cy = Math.floor(y / reach);
    const cz = Math.floor(z / reach);
    for (let dx = -1; dx <= 1; dx++)
      for (let dy = -1; dy <= 1; dy++)
        for (let dz = -1; dz <= 1; dz++) {
          const list = cells.get(key(cx + dx, cy + dy, cz + dz));
          if (!list) continue;
          for (const j of list) {
            if (j <= i) continue;
            const d = Math.hypot(s.pos[3 * j] - x, s.pos[3 * j + 1] - y, s.pos[3 * j + 2] - z);
            const gap = d - 2 * r;
            if (gap <= CONTACT_GAP_TOLERANCE) contacts++;
            maxPen = Math.max(maxPen, -gap);
          }
        }
  }
  return { contacts, meanHeight: sumZ / n, lowestZ, maxPenetration: maxPen, escaped };
}

/** S2: the largest distance (m) between the two anchor points of any joint. */
export function jointDrift(scene: SceneDesc, s: BodyStates): number {
  const pa = new Float64Array(3);
  const pb = new Float64Array(3);
  let drift = 0;
  for (const j of scene.joints) {
    if (j.a < 0) pa.set(j.pa);
    else {
      rotate(s.quat, j.a, j.pa, pa);
      for (let k = 0; k < 3; k++) pa[k] += s.pos[3 * j.a + k];
    }
    rotate(s.quat, j.b, j.pb, pb);
    for (let k = 0; k < 3; k++) pb[k] += s.pos[3 * j.b + k];
    drift = Math.max(drift, Math.hypot(pa[0] - pb[0], pa[1] - pb[1], pa[2] - pb[2]));
  }
  return drift;
}

/**
 * Mechanical energy (J) of the rigid bodies and particles: ½ m |v|² + ½ ω_bᵀ I ω_b with
 * ω_b = Rᵀ ω the body-frame angular velocity (I principal, body frame), minus m g·x
 * (gravitational potential, zero at the origin), plus ½ k (l − l0)² for every spring.
 */
export function energy(scene: SceneDesc, s: BodyStates): number {
  const g = scene.gravity;
  const wb = new Float64Array(3);
  const conj = new Float64Array(4);
  let e = 0;
  scene.bodies.forEach((b, i) => {
    if (b.fixed) return;
    const vx = s.vel[3 * i];
    const vy = s.vel[3 * i + 1];
    const vz = s.vel[3 * i + 2];
    e += 0.5 * b.mass * (vx * vx + vy * vy + vz * vz);
    e -= b.mass * (g[0] * s.pos[3 * i] + g[1] * s.pos[3 * i + 1] + g[2] * s.pos[3 * i + 2]);
    if (b.kind === "rigid") {
      conj[0] = s.quat[4 * i];
      conj[1] = -s.quat[4 * i + 1];
      conj[2] = -s.quat[4 * i + 2];
      conj[3] = -s.quat[4 * i + 3];
      rotate(conj, 0, s.omega.subarray(3 * i, 3 * i + 3), wb);
      e +=
        0.5 *
        (b.inertia[0] * wb[0] * wb[0] +
          b.inertia[1] * wb[1] * wb[1] +
          b.inertia[2] * wb[2] * wb[2]);
    }
  });
  for (const sp of scene.springs) {
    const l = distance(s, sp.a, sp.b);
    e += 0.5 * sp.stiffness * (l - sp.rest) ** 2;
  }
  return e;
}

/** S2's energy scale m g L_total: total mass × |g| × total chain length (J). */
export function chainEnergyScale(scene: SceneDesc): number {
  const mass = scene.bodies.reduce((m, b) => m + (b.fixed ? 0 : b.mass), 0);
  const length = scene.bodies.reduce((l, b) => l + 2 * (b.boxHalfExtents?.[0] ?? 0), 0);
  return mass * Math.hypot(...scene.gravity) * length;
}

function distance(s: BodyStates, a: number, b: number): number {
  return Math.hypot(
    s.pos[3 * b] - s.pos[3 * a],
    s.pos[3 * b + 1] - s.pos[3 * a + 1],
    s.pos[3 * b + 2] - s.pos[3 * a + 2],
  );
}

export interface ClothProbe {
  /** Largest |l − l0| / l0 over the structural springs. */
  maxStrain: number;
  /** Lowest particle z (m). */
  lowestZ: number;
}

export function probeCloth(scene: SceneDesc, s: BodyStates): ClothProbe {
  let maxStrain = 0;
  for (const sp of scene.springs) {
    if (!sp.structural) continue;
    const strain = Math.abs(distance(s, sp.a, sp.b) - sp.rest) / sp.rest;
    maxStrain = Math.max(maxStrain, Number.isFinite(strain) ? strain : Number.POSITIVE_INFINITY);
  }
  let lowestZ = Number.POSITIVE_INFINITY;
  for (let i = 0; i < s.n; i++) lowestZ = Math.min(lowestZ, s.pos[3 * i + 2]);
  return { maxStrain, lowestZ };
}

/**
 * The terrain's surface height z(x, y) from its triangles: the triangle whose projection on
 * the xy plane holds (x, y), interpolated linearly (barycentric coordinates in xy), so that
 * the probe reads the very surface the engines collide with, not the formula it sampled.
 * Triangles are bucketed on a uniform xy grid (about one triangle per cell). NaN outside.
 */
export class TerrainSurface {
  private readonly x0: number;
  private readonly y0: number;
  private readonly cell: number;
  private readonly nx: number;
  private readonly ny: number;
  private readonly buckets: number[][];
  /** Lowest vertex z (m). */
  readonly lowest: number;

  constructor(private readonly terrain: TerrainDesc) {
    const v = terrain.vertices;
    let [x0, y0, x1, y1] = [Infinity, Infinity, -Infinity, -Infinity];
    let lowest = Infinity;
    for (const p of v) {
      x0 = Math.min(x0, p[0]);
      x1 = Math.max(x1, p[0]);
      y0 = Math.min(y0, p[1]);
      y1 = Math.max(y1, p[1]);
      lowest = Math.min(lowest, p[2]);
    }
    this.lowest = lowest;
    this.x0 = x0;
    this.y0 = y0;
    this.cell =
      Math.max(x1 - x0, y1 - y0) / Math.max(1, Math.ceil(Math.sqrt(terrain.triangles.length)));
    this.nx = Math.floor((x1 - x0) / this.cell) + 1;
    this.ny = Math.floor((y1 - y0) / this.cell) + 1;
    this.buckets = Array.from({ length: this.nx * this.ny }, () => []);
    terrain.triangles.forEach((t, k) => {
      const xs = t.map((i) => v[i][0]);
      const ys = t.map((i) => v[i][1]);
      const [i0, i1] = [this.ix(Math.min(...xs)), this.ix(Math.max(...xs))];
      const [j0, j1] = [this.iy(Math.min(...ys)), this.iy(Math.max(...ys))];
      for (let j = j0; j <= j1; j++)
        for (let i = i0; i <= i1; i++) this.buckets[j * this.nx + i].push(k);
    });
  }

  private ix(x: number): number {
    return Math.min(this.nx - 1, Math.max(0, Math.floor((x - this.x0) / this.cell)));
  }

  private iy(y: number): number {
    return Math.min(this.ny - 1, Math.max(0, Math.floor((y - this.y0) / this.cell)));
  }

  height(x: number, y: number): number {
    if (!Number.isFinite(x + y)) return Number.NaN;
    const i = Math.floor((x - this.x0) / this.cell);
    const j = Math.floor((y - this.y0) / this.cell);
    if (i < 0 || j < 0 || i >= this.nx || j >= this.ny) return Number.NaN;
    const v = this.terrain.vertices;
    for (const k of this.buckets[j * this.nx + i]) {
      const [a, b, c] = this.terrain.triangles[k].map((n) => v[n]);
      // (x, y) = a + s (b − a) + t (c − a) in xy; inside when s, t ≥ 0 and s + t ≤ 1
      const ux = b[0] - a[0];
      const uy = b[1] - a[1];
      const wx = c[0] - a[0];
      const wy = c[1] - a[1];
      const det = ux * wy - uy * wx;
      const px = x - a[0];
      const py = y - a[1];
      const s = (px * wy - py * wx) / det;
      const t = (ux * py - uy * px) / det;
      const tol = 1e-12;
      if (s >= -tol && t >= -tol && s + t <= 1 + tol)
        return a[2] + s * (b[2] - a[2]) + t * (c[2] - a[2]);
    }
    return Number.NaN;
  }
}

const surfaces = new WeakMap<TerrainDesc, TerrainSurface>();

export interface HullProbe {
  /** Mean height of the hulls' centres of mass (m). */
  meanHeight: number;
  /**
   * Deepest penetration into the terrain (m, ≥ 0): the largest depth of a hull point below
   * the terrain surface straight under it, surface(x, y) − z (vertical, so up to 1/cos 17°
   * = 1.05 × the depth along the surface normal on the steepest slopes).
   */
  maxPenetration: number;
  /** Hulls whose centre left the terrain's xy area or fell below its lowest point by more than the hull's size. */
  escaped: number;
}

/** H: mean height, deepest penetration into the terrain, hulls gone (same code for every engine). */
export function probeHulls(scene: SceneDesc, s: BodyStates): HullProbe {
  const terrain = scene.terrain;
  if (!terrain) throw new Error(`probeHulls: scene ${scene.id} has no terrain`);
  let surface = surfaces.get(terrain);
  if (!surface) {
    surface = new TerrainSurface(terrain);
    surfaces.set(terrain, surface);
  }
  const w = new Float64Array(3);
  let sumZ = 0;
  let maxPen = 0;
  let escaped = 0;
  scene.bodies.forEach((b, i) => {
    const x = s.pos[3 * i];
    const y = s.pos[3 * i + 1];
    const z = s.pos[3 * i + 2];
    sumZ += z;
    const points = b.convexPoints ?? [];
    let size = 0;
    for (const p of points) size = Math.max(size, Math.hypot(p[0], p[1], p[2]));
    if (Number.isNaN(surface.height(x, y)) || !(z >= surface.lowest - size)) {
      escaped++;
      return;
    }
    for (const p of points) {
      rotate(s.quat, i, p, w);
      const depth = surface.height(x + w[0], y + w[1]) - (z + w[2]);
      if (depth > maxPen) maxPen = depth;
    }
  });
  return { meanHeight: sumZ / scene.bodies.length, maxPenetration: maxPen, escaped };
}
