/**
 * One engine-neutral description of each benchmark scene of ../shared/BENCH-SCENES.md,
 * generated from its parameters. Every engine adapter (engines/*.ts) builds its own
 * world from this description and nothing else, so the scenes are the same everywhere.
 *
 * Conventions: SI units, z up, world frame. A body's frame has its origin at its centre
 * of mass; `inertia` is the principal inertia about it in the body frame (kg m²);
 * quaternions are [w, x, y, z]. A half-space is the free side n·x ≥ offset of the plane
 * n·x = offset (n the unit inward normal, pointing into the container).
 */

import { quaternionOf } from "../../src/formats/urdf/math";
import { mulberry32 } from "../../test/support/random";
import { hullMassProperties } from "./hull";

export type Vec3 = [number, number, number];

export interface BodyDesc {
  id: string;
  /** particle: 3 translational dof (no rotation); rigid: 6 dof. */
  kind: "particle" | "rigid";
  fixed: boolean;
  /** kg (ignored when fixed). */
  mass: number;
  /** Principal moments about the centre of mass, body frame (rigid only). */
  inertia: Vec3;
  position: Vec3;
  orientation: [number, number, number, number];
  /** Collision shape (only S1's spheres collide). */
  sphereRadius?: number;
  /** Box half-extents, for engines that need a shape for drawing or inertia (S2 links). */
  boxHalfExtents?: Vec3;
  /**
   * Collision shape of the H scenes: the convex hull of these points, body frame (its origin
   * at the hull's centre of mass, its axes the hull's principal axes, so that `mass` and
   * `inertia` are the solid hull's; some points may lie inside the hull).
   */
  convexPoints?: Vec3[];
}

/**
 * A fixed triangle-mesh terrain (world frame): a height field z = f(x, y) as triangles,
 * counter-clockwise seen from above (normals up); no two triangles overlap seen from above.
 */
export interface TerrainDesc {
  vertices: Vec3[];
  triangles: [number, number, number][];
}

/** Free side n·x ≥ offset; n unit, pointing into the container. */
export interface HalfSpaceDesc {
  id: string;
  normal: Vec3;
  offset: number;
}

/** Spherical joint: point `pa` on body `a` (−1 = world, pa in world) coincides with `pb` on `b`. */
export interface JointDesc {
  id: string;
  a: number;
  pa: Vec3;
  b: number;
  pb: Vec3;
}

/** Axial spring-damper between the centres of particles a and b: f = −k (l − rest) − c l̇. */
export interface SpringDesc {
  a: number;
  b: number;
  stiffness: number;
  damping: number;
  rest: number;
  /** structural (4-neighbour) or shear (diagonal); the strain probe reads structural ones. */
  structural: boolean;
}

export type SceneKind = "spheres" | "chain" | "cloth" | "hulls";

export interface Protocol {
  /** Steps before the timed region in the same instance (S1, S3). */
  warmup: number;
  /** Steps of a throw-away instance before a fresh instance is timed from t = 0 (S2). */
  throwAway: number;
  /** Timed steps. */
  timed: number;
  /** Probe after every timed step, outside the timed region (S2's joint and energy drift). */
  probeEveryStep: boolean;
}

export interface SceneDesc {
  /** e.g. "S1-100", "S2-10", "S3-32", "S3-32-stiff". */
  id: string;
  kind: SceneKind;
  title: string;
  /** s */
  h: number;
  gravity: Vec3;
  bodies: BodyDesc[];
  halfSpaces: HalfSpaceDesc[];
  /** A fixed triangle-mesh terrain that every body collides with (H scenes). */
  terrain?: TerrainDesc;
  joints: JointDesc[];
  springs: SpringDesc[];
  /** Coulomb friction and Newton restitution of every contact (null: nothing collides). */
  contact: { friction: number; restitution: number } | null;
  protocol: Protocol;
}

export const H = 1 / 240;
export const GRAVITY: Vec3 = [0, 0, -9.81];
const IDENTITY: [number, number, number, number] = [1, 0, 0, 0];

export const SPHERE_RADIUS = 0.05;
export const SPHERE_MASS = 0.1;
export const SPHERE_JITTER = 0.002;
export const SPHERE_SEED = 12345;
/** Half the inner width of the box (m). */
export const BOX_HALF = 0.5;

/**
 * S1 "spheres": n = 100·layers spheres in layers of 10 × 10 in a 1 m × 1 m box (ground z = 0,
 * walls x, y = ±0.5). Jitter: mulberry32(12345), x then y for each sphere in order k, j, i,
 * uniform in ±2 mm, the jittered coordinate clamped to ±0.45.
 */
export function spheresScene(n: number): SceneDesc {
  if (n % 100 !== 0 || n <= 0)
    throw new Error(`S1: N must be a positive multiple of 100, got ${n}`);
  const layers = n / 100;
  const rand = mulberry32(SPHERE_SEED);
  const r = SPHERE_RADIUS;
  const m = SPHERE_MASS;
  const I = 0.4 * m * r * r;
  const clamp = (x: number) => Math.min(0.45, Math.max(-0.45, x));
  const bodies: BodyDesc[] = [];
  for (let k = 0; k < layers; k++)
    for (let j = 0; j < 10; j++)
      for (let i = 0; i < 10; i++) {
        const x = clamp(-0.45 + 0.1 * i + SPHERE_JITTER * (2 * rand() - 1));
        const y = clamp(-0.45 + 0.1 * j + SPHERE_JITTER * (2 * rand() - 1));
        const z = 0.1 + 0.2 * k + 0.1 * ((i + j) % 2);
        bodies.push({
          id: `s${k}_${j}_${i}`,
          kind: "rigid",
          fixed: false,
          mass: m,
          inertia: [I, I, I],
          position: [x, y, z],
          orientation: [...IDENTITY],
          sphereRadius: r,
        });
      }
  return {
    id: `S1-${n}`,
    kind: "spheres",
    title: `S1 spheres N = ${n}`,
    h: H,
    gravity: [...GRAVITY],
    bodies,
    halfSpaces: [
      { id: "ground", normal: [0, 0, 1], offset: 0 },
      { id: "wall-x-", normal: [1, 0, 0], offset: -BOX_HALF },
      { id: "wall-x+", normal: [-1, 0, 0], offset: -BOX_HALF },
      { id: "wall-y-", normal: [0, 1, 0], offset: -BOX_HALF },
      { id: "wall-y+", normal: [0, -1, 0], offset: -BOX_HALF },
    ],
    joints: [],
    springs: [],
    contact: { friction: 0.5, restitution: 0 },
    protocol: { warmup: 100, throwAway: 0, timed: 1000, probeEveryStep: false },
  };
}

export const LINK_LENGTH = 0.1;
export const LINK_MASS = 0.1;
export const LINK_INERTIA: Vec3 = [6.667e-6, 8.667e-5, 8.667e-5];

/**
 * S2 "chain": L boxes 0.1 × 0.02 × 0.02 m (long axis x), 0.1 kg, spherical joints end to
 * end, joint 0 at the world point (0, 0, 0); straight along +x at rest at t = 0.
 */
export function chainScene(links: number): SceneDesc {
  const half = LINK_LENGTH / 2;
  const bodies: BodyDesc[] = Array.from({ length: links }, (_, k) => ({
    id: `link${k}`,
    kind: "rigid",
    fixed: false,
    mass: LINK_MASS,
    inertia: [...LINK_INERTIA],
    position: [LINK_LENGTH * (k + 0.5), 0, 0],
    orientation: [...IDENTITY],
    boxHalfExtents: [half, 0.01, 0.01],
  }));
  const joints: JointDesc[] = Array.from({ length: links }, (_, k) => ({
    id: `j${k}`,
    a: k - 1,
    pa: k === 0 ? [0, 0, 0] : [half, 0, 0],
    b: k,
    pb: [-half, 0, 0],
  }));
  return {
    id: `S2-${links}`,
    kind: "chain",
    title: `S2 chain L = ${links}`,
    h: H,
    gravity: [...GRAVITY],
    bodies,
    halfSpaces: [],
    joints,
    springs: [],
    contact: null,
    protocol: { warmup: 0, throwAway: 200, timed: 2000, probeEveryStep: true },
  };
}

/**
 * S3 "cloth": n × n particles over [0, 1]² at z = 0, total mass 1 kg, the row y = 0 fixed;
 * structural and shear springs at their initial lengths, springs with both ends fixed left
 * out (3875 for n = 32). Body index of particle (i, j) is j·n + i (x index i, y index j).
 */
export function clothScene(n: number, stiffness = 10): SceneDesc {
  const spacing = 1 / (n - 1);
  const mass = 1 / (n * n);
  const bodies: BodyDesc[] = [];
  for (let j = 0; j < n; j++)
    for (let i = 0; i < n; i++)
      bodies.push({
        id: `p${i}_${j}`,
        kind: "particle",
        fixed: j === 0,
        mass,
        inertia: [0, 0, 0],
        position: [i * spacing, j * spacing, 0],
        orientation: [...IDENTITY],
      });
  const springs: SpringDesc[] = [];
  const link = (i0: number, j0: number, i1: number, j1: number, structural: boolean) => {
    if (i1 < 0 || i1 >= n || j1 >= n) return;
    if (j0 === 0 && j1 === 0) return; // both ends fixed
    springs.push({
      a: j0 * n + i0,
      b: j1 * n + i1,
      stiffness,
      damping: 0.01,
      rest: Math.hypot((i1 - i0) * spacing, (j1 - j0) * spacing),
      structural,
    });
  };
  for (let j = 0; j < n; j++)
    for (let i = 0; i < n; i++) {
      link(i, j, i + 1, j, true);
      link(i, j, i, j + 1, true);
      link(i, j, i + 1, j + 1, false);
      link(i, j, i - 1, j + 1, false);
    }
  const stiff = stiffness !== 10;
  return {
    id: `S3-${n}${stiff ? "-stiff" : ""}`,
    kind: "cloth",
    title: `S3 cloth ${n} × ${n}, k = ${stiffness} N/m`,
    h: H,
    gravity: [...GRAVITY],
    bodies,
    halfSpaces: [],
    joints: [],
    springs,
    contact: null,
    protocol: { warmup: 100, throwAway: 0, timed: 1000, probeEveryStep: false },
  };
}

/** H's terrain: TERRAIN_CELLS × TERRAIN_CELLS squares over [−TERRAIN_HALF, TERRAIN_HALF]² (m). */
export const TERRAIN_CELLS = 32;
export const TERRAIN_HALF = 2;

/**
 * H's relief (m): gentle waves in a shallow bowl, z = 0.1 sin(1.5 x) cos(1.3 y) + 0.04 (x² + y²)
 * (slopes up to ~17° at the rim, below friction 0.5's 26.6°), so that the hulls stay on the
 * terrain without walls.
 */
export function terrainHeight(x: number, y: number): number {
  return 0.1 * Math.sin(1.5 * x) * Math.cos(1.3 * y) + 0.04 * (x * x + y * y);
}

/**
 * The terrain as a triangle mesh: (cells + 1)² vertices z = terrainHeight(x, y), vertex
 * (i, j) at index j (cells + 1) + i, each square cut along its diagonal (i, j)–(i+1, j+1)
 * into two triangles counter-clockwise seen from above.
 */
export function terrainMesh(cells = TERRAIN_CELLS, half = TERRAIN_HALF): TerrainDesc {
  const n = cells + 1;
  const step = (2 * half) / cells;
  const vertices: Vec3[] = [];
  for (let j = 0; j < n; j++)
    for (let i = 0; i < n; i++) {
      const x = -half + i * step;
      const y = -half + j * step;
      vertices.push([x, y, terrainHeight(x, y)]);
    }
  const triangles: [number, number, number][] = [];
  for (let j = 0; j < cells; j++)
    for (let i = 0; i < cells; i++) {
      const v = j * n + i;
      triangles.push([v, v + 1, v + n + 1], [v, v + n + 1, v + n]);
    }
  return { vertices, triangles };
}

export const HULL_SEED = 30;
export const HULL_DENSITY = 1000;
/** Semi-axes of the ellipsoids the hull points are drawn on (m), and the points' noise. */
export const HULL_AXIS_MIN = 0.04;
export const HULL_AXIS_MAX = 0.1;
export const HULL_NOISE = 0.002;
/** Grid spacing (m) and the drop: lowest possible hull point above the terrain under it. */
export const HULL_SPACING = 0.3;
export const HULL_CLEARANCE = 0.05;

/** The row-major 3×3 matrix whose columns are c0, c1, c2. */
function columnsMatrix([c0, c1, c2]: [Vec3, Vec3, Vec3]): number[] {
  return [c0[0], c1[0], c2[0], c0[1], c1[1], c2[1], c0[2], c1[2], c2[2]];
}

/** q ⊗ r, quaternions [w, x, y, z]. */
function quatMul(q: number[], r: number[]): [number, number, number, number] {
  return [
    q[0] * r[0] - q[1] * r[1] - q[2] * r[2] - q[3] * r[3],
    q[0] * r[1] + q[1] * r[0] + q[2] * r[3] - q[3] * r[2],
    q[0] * r[2] - q[1] * r[3] + q[2] * r[0] + q[3] * r[1],
    q[0] * r[3] + q[1] * r[2] - q[2] * r[1] + q[3] * r[0],
  ];
}

/**
 * H "hulls" (issue 30): n convex hulls (n a multiple of 10, at most 120) dropped on the
 * terrain (terrainMesh), density HULL_DENSITY. mulberry32(HULL_SEED) draws, for each hull in
 * order (row j, then column i): its point count 20 + ⌊31 u⌋ (20–50), its ellipsoid's semi-axes
 * a, b, c (uniform in [HULL_AXIS_MIN, HULL_AXIS_MAX]), then per point a direction uniform on
 * the sphere (cos polar angle 2u − 1, azimuth 2π u) scaled by (a, b, c) plus a noise uniform
 * in ±HULL_NOISE per coordinate, then a uniformly random orientation (Shoemake's three
 * uniforms). The hull's exact mass properties (hull.ts) put the body frame at its centre of
 * mass along its principal axes; the points are given in it. Hull (i, j) sits above
 * (−1.35 + 0.3 i, −1.35 + 0.3 j), its centre HULL_CLEARANCE plus its bounding radius above the
 * highest terrain vertex within reach, so that nothing touches at t = 0.
 */
export function hullsScene(n: number): SceneDesc {
  if (n % 10 !== 0 || n <= 0 || n > 120)
    throw new Error(`H: N must be a multiple of 10 in 10..120, got ${n}`);
  const rand = mulberry32(HULL_SEED);
  const terrain = terrainMesh();
  const cell = (2 * TERRAIN_HALF) / TERRAIN_CELLS;
  const uniform = (lo: number, hi: number) => lo + (hi - lo) * rand();
  const bodies: BodyDesc[] = [];
  for (let j = 0; j < n / 10; j++)
    for (let i = 0; i < 10; i++) {
      const count = 20 + Math.floor(31 * rand());
      const axes = [0, 1, 2].map(() => uniform(HULL_AXIS_MIN, HULL_AXIS_MAX));
      const points: Vec3[] = [];
      for (let k = 0; k < count; k++) {
        const cz = 2 * rand() - 1;
        const phi = 2 * Math.PI * rand();
        const sz = Math.sqrt(1 - cz * cz);
        const dir = [sz * Math.cos(phi), sz * Math.sin(phi), cz];
        points.push([0, 1, 2].map((c) => axes[c] * dir[c] + HULL_NOISE * (2 * rand() - 1)) as Vec3);
      }
      const [u1, u2, u3] = [rand(), rand(), rand()];
      const turn = [
        Math.sqrt(u1) * Math.cos(2 * Math.PI * u3),
        Math.sqrt(1 - u1) * Math.sin(2 * Math.PI * u2),
        Math.sqrt(1 - u1) * Math.cos(2 * Math.PI * u2),
        Math.sqrt(u1) * Math.sin(2 * Math.PI * u3),
      ];
      const mp = hullMassProperties(points, HULL_DENSITY);
      // Body frame = principal frame: p_body[k] = axis_k · (p − centre).
      const local = points.map(
        (p) =>
          mp.axes.map(
            (a) =>
              a[0] * (p[0] - mp.centre[0]) +
              a[1] * (p[1] - mp.centre[1]) +
              a[2] * (p[2] - mp.centre[2]),
          ) as Vec3,
      );
      const reach = Math.max(...local.map((p) => Math.hypot(...p)));
      const x = -1.35 + HULL_SPACING * i;
      const y = -1.35 + HULL_SPACING * j;
      let top = Number.NEGATIVE_INFINITY;
      for (const v of terrain.vertices)
        if (Math.abs(v[0] - x) <= reach + cell && Math.abs(v[1] - y) <= reach + cell)
          top = Math.max(top, v[2]);
      bodies.push({
        id: `h${j}_${i}`,
        kind: "rigid",
        fixed: false,
        mass: mp.mass,
        inertia: mp.inertia,
        position: [x, y, top + reach + HULL_CLEARANCE],
        // world ← drawing frame (turn) ← principal frame (the axes as the matrix's columns)
        orientation: quatMul(turn, quaternionOf(columnsMatrix(mp.axes))),
        convexPoints: local,
      });
    }
  return {
    id: `H-${n}`,
    kind: "hulls",
    title: `H convex hulls N = ${n} on a triangle-mesh terrain`,
    h: H,
    gravity: [...GRAVITY],
    bodies,
    halfSpaces: [],
    terrain,
    joints: [],
    springs: [],
    contact: { friction: 0.5, restitution: 0 },
    // 500 timed steps: 70–100 ms a step for Moreau on the loaded 2-core machine, so that a
    // repetition takes about a minute. The hulls land after ~60 steps; the timed region
    // (steps 101–600) starts with a mean speed near 0.2 m/s, the last rolling into the
    // hollows, and ends with the pile nearly at rest (below 0.01 m/s in Rapier and Bullet).
    protocol: { warmup: 100, throwAway: 0, timed: 500, probeEveryStep: false },
  };
}

/** The scenes of ../shared/BENCH-SCENES.md, by id, in the order the tables print. */
export const SCENE_IDS = ["S1-100", "S1-1000", "S2-10", "S2-100", "S3-32", "S3-32-stiff"] as const;
/**
 * Every scene of the comparison (a plain run's default): the S scenes, then issue 30's
 * hulls. test/engine/simulation/trajectories.test.ts pins all of them bit for bit, with
 * Moreau's set-up and at its defaults.
 */
export const COMPARE_SCENE_IDS = [...SCENE_IDS, "H-100"] as const;
export type SceneId = (typeof COMPARE_SCENE_IDS)[number];

export function buildScene(id: string): SceneDesc {
  switch (id) {
    case "S1-100":
      return spheresScene(100);
    case "S1-1000":
      return spheresScene(1000);
    case "S2-10":
      return chainScene(10);
    case "S2-100":
      return chainScene(100);
    case "S3-32":
      return clothScene(32, 10);
    case "S3-32-stiff":
      return clothScene(32, 1e4);
    case "H-100":
      return hullsScene(100);
    default:
      throw new Error(`unknown scene "${id}"; known: ${COMPARE_SCENE_IDS.join(", ")}`);
  }
}

/** Indices of the dynamic (non-fixed) bodies. */
export function dynamicBodies(scene: SceneDesc): number[] {
  const out: number[] = [];
  scene.bodies.forEach((b, i) => {
    if (!b.fixed) out.push(i);
  });
  return out;
}
