/**
 * The cylinder shape (radius r, half-length L, axis the local z) against independent
 * numbers:
 *  - mass properties: the closed form I_zz = m r²/2, I_xx = I_yy = m (3r² + (2L)²)/12, and
 *    the volume share π r² 2L when it is combined with a box;
 *  - plane–cylinder at tilts θ about x: deepest gap z_c − (r |sin θ| + L |cos θ|), standing
 *    (8 rim points at the cap, all at the same gap), lying (two points at the ends of the
 *    side line), a slightly tilted cap (the exact deepest point besides the samples), a
 *    tilted plane with a non-unit normal;
 *  - sphere–cylinder near the cap, the rim and the side, outside and inside, against the
 *    closest point computed here;
 *  - box–cylinder, capsule–cylinder and cylinder–cylinder on random poses (60 per pair by
 *    default; CYL_TRIALS overrides), against a brute-force signed distance: −min over unit
 *    n of the overlap h_a(n) + h_b(−n) (support functions written here), the overlap being
 *    smooth except on the great circles n ⟂ axis and at a cylinder's ±axis, so searched at
 *    6000 directions refined by a pattern search, along every kink circle (golden section)
 *    and at the crossings. A single (GJK/EPA) contact: its normal separates by exactly its
 *    gap (1e-9, so the true gap is at least the reported one) and no brute-force direction
 *    separates better (1e-9): the reported gap is the signed distance; measured agreement
 *    with the brute force 3e-11 m. A clipped manifold: its deepest gap within its
 *    reference normal's rule (5 % of the depth + 1e-5 of the size). Both: normal within
 *    8° of the brute-force one, surface points on both surfaces (1e-7 m; capsules
 *    excepted: clipped points on a tilted capsule are r(1/cos − 1) inside it), distinct
 *    features below 65536; and an inside test (signed distance functions written here) on
 *    points sampled on b's surface: moved by (−gap + ε) n, none is inside a (for a
 *    manifold, within its rule); moved by (−gap − ε) n the shapes still overlap;
 *  - the same checks on near-flush and shallow poses (b resting on a's top within ±5 mm,
 *    standing or lying, tilts up to 0.05 rad, overhanging edges);
 *  - touching poses: b moved along the brute-force normal to a signed distance
 *    δ ∈ {0, ±1e-9, ±1e-6} from random and from aligned poses carrying 1e-12…1e-6 rad of
 *    noise (parallel axes, caps on caps, sides on faces: where GJK converges slowly and
 *    EPA's polytope meets coplanar supports): the deepest gap is δ to 1e-8;
 *  - flush manifolds: a cylinder standing on a box face, overhanging its edge, lying on it,
 *    standing on another cylinder, a short one across a capsule, two side by side;
 *    features stable under a tiny motion; 2000 nearly flush cap-on-cap pairs whose every
 *    contact lies on both surfaces (1e-6 m); AABB and the detector's dispatch.
 */
import { afterAll, describe, expect, it } from "vitest";
import { CollisionDetector } from "../../../../src/engine/geometry/collide";
import { ContactBuffer } from "../../../../src/engine/geometry/contact-buffer";
import { WorldPose } from "../../../../src/engine/geometry/pose";
import type {
  BoxShape,
  CapsuleShape,
  CylinderShape,
  PlaneShape,
  Shape,
  SphereShape,
} from "../../../../src/engine/geometry/shapes";
import { aabbHalfWidths } from "../../../../src/engine/geometry/shapes";
import { inertiaFromShapes } from "../../../../src/engine/model/inertia";
import { axisAngle, type Q4, qmul, randomQuat, rotate, type V3 } from "../../../support/quat";
import { mulberry32 } from "../../../support/random";
import { type C, collide, pose } from "../helpers";

const dot = (a: V3, b: V3) => a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
const sub = (a: V3, b: V3): V3 => [a[0] - b[0], a[1] - b[1], a[2] - b[2]];
const add = (a: V3, b: V3, s = 1): V3 => [a[0] + s * b[0], a[1] + s * b[1], a[2] + s * b[2]];
const norm = (a: V3) => Math.hypot(a[0], a[1], a[2]);
const conj = (q: Q4): Q4 => [q[0], -q[1], -q[2], -q[3]];

/** A placed shape of the brute-force side: box, cylinder or capsule. */
interface Placed {
  shape: BoxShape | CylinderShape | CapsuleShape;
  c: V3;
  q: Q4;
}

/** Support value h(n) = max_x n·x of a placed shape. */
function supportValue(s: Placed, n: V3): number {
  const l = rotate(conj(s.q), n);
  const base = dot(n, s.c);
  const sh = s.shape;
  if (sh.type === "box")
    return (
      base +
      sh.halfExtents[0] * Math.abs(l[0]) +
      sh.halfExtents[1] * Math.abs(l[1]) +
      sh.halfExtents[2] * Math.abs(l[2])
    );
  if (sh.type === "cylinder")
    return base + sh.halfLength * Math.abs(l[2]) + sh.radius * Math.hypot(l[0], l[1]);
  return base + sh.halfLength * Math.abs(l[2]) + sh.radius * norm(l);
}

/** Overlap of a and b along the unit n: max_a n·x − min_b n·x. */
function overlap(a: Placed, b: Placed, n: V3): number {
  return supportValue(a, n) + supportValue(b, [-n[0], -n[1], -n[2]]);
}

function unit(v: V3): V3 {
  const l = norm(v);
  return [v[0] / l, v[1] / l, v[2] / l];
}

/** Axes whose great circles n ⟂ axis carry the kinks of a shape's support function. */
function kinkAxes(s: Placed): V3[] {
  if (s.shape.type === "box")
    return [rotate(s.q, [1, 0, 0]), rotate(s.q, [0, 1, 0]), rotate(s.q, [0, 0, 1])];
  return [rotate(s.q, [0, 0, 1])];
}

function cross(a: V3, b: V3): V3 {
  return [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]];
}

/**
 * Brute-force signed distance −min_n overlap(n) over unit n. overlap is smooth except on
 * the great circles n ⟂ k (k an axis of a box, a cylinder or a capsule), so its minimum
 * is at a smooth point, at a smooth point of one of those circles, or where two of them
 * cross. Searched: 6000 Fibonacci directions refined by a shrinking pattern search (from
 * the best 8), each kink circle sampled at 4000 angles and refined by golden-section
 * search, and the crossings ±(k_i × k_j).
 */
function bruteSignedDistance(a: Placed, b: Placed): { gap: number; normal: V3 } {
  const N = 6000;
  const cand: Array<[number, V3]> = [];
  const ga = Math.PI * (3 - Math.sqrt(5));
  for (let i = 0; i < N; i++) {
    const z = 1 - (2 * (i + 0.5)) / N;
    const rr = Math.sqrt(1 - z * z);
    const n: V3 = [rr * Math.cos(ga * i), rr * Math.sin(ga * i), z];
    cand.push([overlap(a, b, n), n]);
  }
  cand.sort((x, y) => x[0] - y[0]);
  let best = cand[0];
  const consider = (n: V3) => {
    const f = overlap(a, b, n);
    if (f < best[0]) best = [f, n];
  };
  for (const start of cand.slice(0, 8)) {
    let [f, n] = start;
    for (let step = 0.05, it = 0; step > 1e-10 && it < 3000; it++) {
      const t1 = unit(Math.abs(n[0]) < 0.9 ? [0, -n[2], n[1]] : [-n[2], 0, n[0]]);
      const t2 = cross(n, t1);
      let improved = false;
      for (let k = 0; k < 16; k++) {
        const ang = (k * Math.PI) / 8;
        const m = unit(add(add(n, t1, step * Math.cos(ang)), t2, step * Math.sin(ang)));
        const g = overlap(a, b, m);
        if (g < f) {
          f = g;
          n = m;
          improved = true;
        }
      }
      if (!improved) step *= 0.5;
    }
    if (f < best[0]) best = [f, n];
  }
  const axes = [...kinkAxes(a), ...kinkAxes(b)];
  for (const k of axes) {
    const u = unit(Math.abs(k[0]) < 0.9 ? cross(k, [1, 0, 0]) : cross(k, [0, 1, 0]));
    const v = cross(k, u);
    const dir = (t: number): V3 => [
      Math.cos(t) * u[0] + Math.sin(t) * v[0],
      Math.cos(t) * u[1] + Math.sin(t) * v[1],
      Math.cos(t) * u[2] + Math.sin(t) * v[2],
    ];
    const M = 4000;
    const vals: Array<[number, number]> = [];
    for (let i = 0; i < M; i++) {
      const t = (2 * Math.PI * i) / M;
      vals.push([overlap(a, b, dir(t)), t]);
    }
    vals.sort((x, y) => x[0] - y[0]);
    for (const [, t0] of vals.slice(0, 4)) {
      let lo = t0 - (2 * Math.PI) / M;
      let hi = t0 + (2 * Math.PI) / M;
      const phi = (Math.sqrt(5) - 1) / 2;
      for (let it = 0; it < 80; it++) {
        const x1 = hi - phi * (hi - lo);
        const x2 = lo + phi * (hi - lo);
        if (overlap(a, b, dir(x1)) <= overlap(a, b, dir(x2))) hi = x2;
        else lo = x1;
      }
      consider(dir(0.5 * (lo + hi)));
    }
  }
  for (let i = 0; i < axes.length; i++)
    for (let j = i + 1; j < axes.length; j++) {
      const c = cross(axes[i], axes[j]);
      if (norm(c) < 1e-9) continue;
      const n = unit(c);
      consider(n);
      consider([-n[0], -n[1], -n[2]]);
    }
  return { gap: -best[0], normal: best[1] };
}

/** Signed distance of a world point to a placed shape (written here, for inside tests). */
function sdf(s: Placed, p: V3): number {
  const l = rotate(conj(s.q), sub(p, s.c));
  const sh = s.shape;
  if (sh.type === "box") {
    const e = [0, 1, 2].map((i) => Math.abs(l[i]) - sh.halfExtents[i]);
    const out = Math.hypot(Math.max(e[0], 0), Math.max(e[1], 0), Math.max(e[2], 0));
    return out + Math.min(Math.max(e[0], e[1], e[2]), 0);
  }
  if (sh.type === "cylinder") {
    const dr = Math.hypot(l[0], l[1]) - sh.radius;
    const dz = Math.abs(l[2]) - sh.halfLength;
    return Math.min(Math.max(dr, dz), 0) + Math.hypot(Math.max(dr, 0), Math.max(dz, 0));
  }
  const t = Math.max(-sh.halfLength, Math.min(sh.halfLength, l[2]));
  return Math.hypot(l[0], l[1], l[2] - t) - sh.radius;
}

/** Points on the surface of a cylinder (caps and side, grid in angle). */
function cylinderSurface(s: Placed, na = 72, nz = 24, nr = 12): V3[] {
  const sh = s.shape as CylinderShape;
  const pts: V3[] = [];
  const put = (x: number, y: number, z: number) => pts.push(add(s.c, rotate(s.q, [x, y, z])));
  for (let i = 0; i < na; i++) {
    const a = (2 * Math.PI * i) / na;
    const cs = Math.cos(a);
    const sn = Math.sin(a);
    for (let j = 0; j <= nz; j++)
      put(sh.radius * cs, sh.radius * sn, -sh.halfLength + (2 * sh.halfLength * j) / nz);
    for (let k = 1; k < nr; k++) {
      const rr = (sh.radius * k) / nr;
      put(rr * cs, rr * sn, sh.halfLength);
      put(rr * cs, rr * sn, -sh.halfLength);
    }
  }
  return pts;
}

function moved(s: Placed, d: V3): Placed {
  return { shape: s.shape, c: add(s.c, d), q: s.q };
}

function contacts(a: Placed, b: Placed, margin: number): C[] {
  return collide(a.shape, pose(a.c, a.q), b.shape, pose(b.c, b.q), margin);
}

describe("cylinder mass properties", () => {
  it("solid cylinder: I_zz = m r²/2, I_xx = I_yy = m (3r² + (2L)²)/12", () => {
    const m = 3;
    const r = 0.2;
    const L = 0.35;
    const I = inertiaFromShapes(
      [
        {
          type: "cylinder",
          radius: r,
          halfLength: L,
          position: [0, 0, 0],
          orientation: [1, 0, 0, 0],
        },
      ],
      m,
    );
    const t = (m * (3 * r * r + 4 * L * L)) / 12;
    expect(I[0]).toBeCloseTo(t, 14);
    expect(I[4]).toBeCloseTo(t, 14);
    expect(I[8]).toBeCloseTo((m * r * r) / 2, 14);
    expect(Math.abs(I[1]) + Math.abs(I[2]) + Math.abs(I[5])).toBe(0);
  });

  it("rotated and offset: the axis along x; mass shared with a box by volume", () => {
    const r = 0.1;
    const L = 0.3;
    const h = 0.1;
    const vc = Math.PI * r * r * 2 * L;
    const vb = 8 * h * h * h;
    const m = 2;
    const mc = (m * vc) / (vc + vb);
    const mb = m - mc;
    const d = 0.25;
    const I = inertiaFromShapes(
      [
        {
          type: "cylinder",
          radius: r,
          halfLength: L,
          position: [0, 0, d],
          orientation: axisAngle([0, 1, 0], Math.PI / 2),
        },
        { type: "box", halfExtents: [h, h, h], position: [0, 0, 0], orientation: [1, 0, 0, 0] },
      ],
      m,
    );
    const tc = (mc * (3 * r * r + 4 * L * L)) / 12;
    const ac = (mc * r * r) / 2;
    const ib = ((mb / 3) * 2 * h * h) as number;
    // Cylinder axis along x, centre at z = d: I_xx = axial + m d², I_yy = transverse + m d².
    expect(I[0]).toBeCloseTo(ac + mc * d * d + ib, 12);
    expect(I[4]).toBeCloseTo(tc + mc * d * d + ib, 12);
    expect(I[8]).toBeCloseTo(tc + ib, 12);
  });
});

describe("plane–cylinder", () => {
  const plane: PlaneShape = { type: "plane", normal: [0, 0, 1], offset: 0 };
  const cyl: CylinderShape = { type: "cylinder", radius: 0.15, halfLength: 0.4 };

  it("deepest gap at tilts θ: z_c − (r sin θ + L |cos θ|)", () => {
    for (const theta of [0.2, 0.5, 0.9, 1.2, 1.45, 2.0, 2.6]) {
      const zc = 0.2;
      const cs = collide(
        plane,
        pose([0, 0, 0]),
        cyl,
        pose([0.1, -0.2, zc], axisAngle([1, 0, 0], theta)),
        0.01,
      );
      const expected =
        zc - (cyl.radius * Math.abs(Math.sin(theta)) + cyl.halfLength * Math.abs(Math.cos(theta)));
      expect(cs.length).toBeGreaterThan(0);
      expect(Math.min(...cs.map((c) => c.gap))).toBeCloseTo(expected, 12);
      for (const c of cs) expect(c.normal).toEqual([0, 0, 1]);
    }
  });

  it("standing: the 8 rim points of the lower cap at the same gap, distinct features", () => {
    const cs = collide(plane, pose([0, 0, 0]), cyl, pose([0.5, 0.2, cyl.halfLength - 0.002]), 0.01);
    expect(cs).toHaveLength(8);
    for (const c of cs) {
      expect(c.gap).toBeCloseTo(-0.002, 12);
      expect(Math.hypot(c.point[0] - 0.5, c.point[1] - 0.2)).toBeCloseTo(cyl.radius, 12);
      expect(c.point[2]).toBeCloseTo(-0.001, 12);
    }
    expect(new Set(cs.map((c) => c.feature)).size).toBe(8);
  });

  it("lying: two contacts at the ends of the side line (a line contact)", () => {
    const zc = cyl.radius - 0.001;
    const cs = collide(
      plane,
      pose([0, 0, 0]),
      cyl,
      pose([0, 0, zc], axisAngle([0, 1, 0], Math.PI / 2)),
      0.01,
    );
    expect(cs).toHaveLength(2);
    const xs = cs.map((c) => c.point[0]).sort((x, y) => x - y);
    expect(xs[0]).toBeCloseTo(-cyl.halfLength, 12);
    expect(xs[1]).toBeCloseTo(cyl.halfLength, 12);
    for (const c of cs) expect(c.gap).toBeCloseTo(-0.001, 12);
  });

  it("slightly tilted cap: the samples plus the exact deepest rim point", () => {
    const theta = 0.03;
    // Tilt about an axis between two rim samples: the exact deepest point is not a sample.
    const axis: V3 = [Math.cos(0.3), Math.sin(0.3), 0];
    const zc = 0.4;
    const cs = collide(plane, pose([0, 0, 0]), cyl, pose([0, 0, zc], axisAngle(axis, theta)), 0.05);
    const expected = zc - (cyl.radius * Math.sin(theta) + cyl.halfLength * Math.cos(theta));
    expect(Math.min(...cs.map((c) => c.gap))).toBeCloseTo(expected, 12);
    expect(cs.length).toBeGreaterThanOrEqual(9);
  });

  it("a plane with a non-unit normal and an offset (tilted plane)", () => {
    const n: V3 = unit([0.3, -0.2, 1]);
    const pl: PlaneShape = { type: "plane", normal: [0.6, -0.4, 2], offset: 0.2 };
    // Offset along the unit normal: 0.2/|(0.6,−0.4,2)|.
    const d = 0.2 / Math.hypot(0.6, -0.4, 2);
    const q = randomQuat(mulberry32(5));
    const c: V3 = [0.1, 0.2, 0.3];
    const z = rotate(q, [0, 0, 1]);
    const cz = dot(n, z);
    const expected =
      dot(n, c) - d - cyl.halfLength * Math.abs(cz) - cyl.radius * Math.sqrt(1 - cz * cz);
    const cs = collide(pl, pose([0, 0, 0]), cyl, pose(c, q), 1);
    expect(Math.min(...cs.map((x) => x.gap))).toBeCloseTo(expected, 12);
    for (const x of cs) for (let k = 0; k < 3; k++) expect(x.normal[k]).toBeCloseTo(n[k], 12);
  });
});

describe("cylinder–sphere (closed form)", () => {
  const cyl: CylinderShape = { type: "cylinder", radius: 0.2, halfLength: 0.3 };
  const q = axisAngle([1, 2, 3], 0.7);
  const c: V3 = [0.1, -0.3, 0.5];
  const cases: Array<[string, V3, number, V3, number]> = [
    // name, sphere centre (cylinder frame), sphere radius, expected local normal, expected gap
    ["side", [0.25, 0, 0.1], 0.1, [1, 0, 0], 0.25 - 0.2 - 0.1],
    ["cap", [0.05, 0.1, 0.36], 0.1, [0, 0, 1], 0.36 - 0.3 - 0.1],
    ["−cap", [-0.1, 0, -0.33], 0.05, [0, 0, -1], 0.33 - 0.3 - 0.05],
    ["rim", [0.26, 0, 0.38], 0.12, unit([0.06, 0, 0.08]), 0.1 - 0.12],
    ["inside near side", [0, 0.17, 0], 0.05, [0, 1, 0], -0.03 - 0.05],
    ["inside near cap", [0.02, 0, -0.27], 0.05, [0, 0, -1], -0.03 - 0.05],
  ];
  for (const [name, local, rs, nl, gap] of cases)
    it(`${name}: gap and normal`, () => {
      const sph: SphereShape = { type: "sphere", radius: rs };
      const centre = add(c, rotate(q, local));
      const cs = collide(cyl, pose(c, q), sph, pose(centre), 0.05);
      expect(cs).toHaveLength(1);
      expect(cs[0].gap).toBeCloseTo(gap, 12);
      const nw = rotate(q, nl);
      for (let k = 0; k < 3; k++) expect(cs[0].normal[k]).toBeCloseTo(nw[k], 12);
      // p_b = sphere centre − r n.
      const pb = add(cs[0].point, cs[0].normal, gap / 2);
      const expectPb = add(centre, nw, -rs);
      for (let k = 0; k < 3; k++) expect(pb[k]).toBeCloseTo(expectPb[k], 12);
      // Reversed order: same contact, normal negated.
      const rev = collide(sph, pose(centre), cyl, pose(c, q), 0.05);
      expect(rev[0].gap).toBeCloseTo(gap, 12);
      for (let k = 0; k < 3; k++) expect(rev[0].normal[k]).toBeCloseTo(-nw[k], 12);
    });
});

/** Random pose of b near a (centres within the sum of the sizes). */
function randomPair(
  r: () => number,
  makeA: () => Placed["shape"],
  makeB: () => Placed["shape"],
): [Placed, Placed] {
  const a: Placed = { shape: makeA(), c: [0, 0, 0], q: randomQuat(r) };
  const sb = makeB();
  const dir = rotate(randomQuat(r), [0, 0, 1]);
  const size = (s: Placed["shape"]) =>
    s.type === "box"
      ? norm(s.halfExtents as V3)
      : s.type === "cylinder"
        ? Math.hypot(s.radius, s.halfLength)
        : s.halfLength + s.radius;
  const dist = (size(a.shape) + size(sb)) * (0.3 + 0.8 * r());
  const b: Placed = {
    shape: sb,
    c: [dist * dir[0], dist * dir[1], dist * dir[2]],
    q: randomQuat(r),
  };
  return [a, b];
}

const TRIALS = Number(process.env.CYL_TRIALS ?? 60);

/** Features below this are the single GJK/EPA contact (27 region codes per side). */
const SINGLE_FEATURES = 27 * 27;

/** Largest (reported − brute-force) gap seen for single contacts, |difference| for manifolds. */
const stats = { single: 0, manifold: 0 };
const manifolds = { count: 0 };

function size(a: Placed, b: Placed): number {
  const one = (s: Placed["shape"]) =>
    s.type === "box"
      ? norm(s.halfExtents as V3)
      : s.type === "cylinder"
        ? Math.hypot(s.radius, s.halfLength)
        : s.halfLength;
  return one(a.shape) + one(b.shape);
}

function checkAgainstBruteForce(a: Placed, b: Placed, tol: number, surfaceTol: number): number {
  // A check that reports the poses and contacts when it fails.
  const ctx = { a, b, cs: [] as C[] };
  const must = (ok: boolean, what: string, value: number) => {
    if (!ok) expect.fail(`${what} (${value}): ${JSON.stringify(ctx)}`);
  };
  const margin = 0.05;
  const bf = bruteSignedDistance(a, b);
  const cs = contacts(a, b, margin);
  ctx.cs = cs;
  if (bf.gap >= margin) {
    expect(cs).toHaveLength(0);
    return 0;
  }
  expect(cs.length).toBeGreaterThan(0);
  const deepest = cs.reduce((x, y) => (y.gap < x.gap ? y : x));
  const err = deepest.gap - bf.gap;
  if (deepest.feature < SINGLE_FEATURES) {
    // The single (GJK/EPA) contact:
    // (i) the reported normal separates by exactly the reported gap: since the signed
    // distance is max_n −overlap(n), the true gap is at least the reported one;
    const exact = Math.abs(-overlap(a, b, deepest.normal) - deepest.gap);
    must(exact < 1e-9, "normal separates by the gap", exact);
    // (ii) no brute-force direction separates better (the reported gap is the maximum);
    must(deepest.gap >= bf.gap - 1e-9, "no better direction", deepest.gap - bf.gap);
    stats.single = Math.max(stats.single, err);
  } else {
    // A clipped manifold on a reference face or cap, whose normal separates within
    // 5 % + 1e-5 of the size of the best: its deepest point is no deeper than that.
    must(err >= -0.05 * Math.abs(bf.gap) - 1e-5 * size(a, b) - 1e-9, "manifold depth", err);
    stats.manifold = Math.max(stats.manifold, Math.abs(err));
    manifolds.count++;
  }
  // (iii) The brute-force estimate agrees within its own accuracy, and the normals agree.
  must(err < tol, "brute-force agreement", err);
  must(dot(deepest.normal, bf.normal) > 0.99, "normal", dot(deepest.normal, bf.normal));
  const features = new Set<number>();
  for (const c of cs) {
    expect(norm(c.normal)).toBeCloseTo(1, 12);
    features.add(c.feature);
    expect(c.feature).toBeGreaterThanOrEqual(0);
    expect(c.feature).toBeLessThan(65536);
    expect(c.gap).toBeLessThan(margin);
    if (surfaceTol > 0) {
      const pa = add(c.point, c.normal, -c.gap / 2);
      const pb = add(c.point, c.normal, c.gap / 2);
      must(Math.abs(sdf(a, pa)) < surfaceTol, "surface a", sdf(a, pa));
      must(Math.abs(sdf(b, pb)) < surfaceTol, "surface b", sdf(b, pb));
    }
  }
  expect(features.size).toBe(cs.length);
  // Inside test on b's surface (b a cylinder): separated by ε along n, no point inside a;
  // pushed back by ε the shapes still overlap.
  const eps = 1e-6;
  const sep = moved(b, [
    (-deepest.gap + eps) * deepest.normal[0],
    (-deepest.gap + eps) * deepest.normal[1],
    (-deepest.gap + eps) * deepest.normal[2],
  ]);
  // (A clipped manifold's points measure depth through its reference face: b may dip below
  // that face's plane beyond its edges, within the 5 % rule.)
  const slack =
    deepest.feature < SINGLE_FEATURES ? 1e-9 : 0.05 * Math.abs(bf.gap) + 1e-5 * size(a, b) + 1e-9;
  for (const p of cylinderSurface(sep)) must(sdf(a, p) > -slack, "separated along n", sdf(a, p));
  const back = moved(b, [
    (-deepest.gap - eps) * deepest.normal[0],
    (-deepest.gap - eps) * deepest.normal[1],
    (-deepest.gap - eps) * deepest.normal[2],
  ]);
  const backGap = bruteSignedDistance(a, back).gap;
  must(backGap < 0, "still overlapping ε deeper", backGap);
  return cs.length;
}

describe("general pairs against brute force (random poses)", () => {
  afterAll(() => {
    // Over the default 60 trials per pair: single contacts within 3e-11 m of the brute
    // force, manifolds within 3.2e-4 m (their reference normal's separation).
    expect(stats.single).toBeLessThan(1e-9);
  });
  // Brute-force accuracy: the pattern search may stall on a ridge of the nonsmooth
  // overlap function; it is within 2e-4 m here for shapes of 0.1–0.5 m.
  const tol = 2e-4;
  it("box–cylinder", () => {
    const r = mulberry32(21);
    let n = 0;
    for (let trial = 0; trial < TRIALS; trial++) {
      const [a, b] = randomPair(
        r,
        (): BoxShape => ({
          type: "box",
          halfExtents: [0.1 + 0.4 * r(), 0.1 + 0.4 * r(), 0.1 + 0.4 * r()],
        }),
        (): CylinderShape => ({
          type: "cylinder",
          radius: 0.05 + 0.3 * r(),
          halfLength: 0.05 + 0.4 * r(),
        }),
      );
      n += checkAgainstBruteForce(a, b, tol, 1e-6);
    }
    expect(n).toBeGreaterThan(30);
  });

  it("cylinder–cylinder", () => {
    const r = mulberry32(22);
    let n = 0;
    const mk = (): CylinderShape => ({
      type: "cylinder",
      radius: 0.05 + 0.3 * r(),
      halfLength: 0.05 + 0.4 * r(),
    });
    for (let trial = 0; trial < TRIALS; trial++) {
      const [a, b] = randomPair(r, mk, mk);
      n += checkAgainstBruteForce(a, b, tol, 1e-6);
    }
    expect(n).toBeGreaterThan(30);
  });

  it("capsule–cylinder", () => {
    const r = mulberry32(23);
    let n = 0;
    for (let trial = 0; trial < TRIALS; trial++) {
      const [a, b] = randomPair(
        r,
        (): CapsuleShape => ({
          type: "capsule",
          radius: 0.05 + 0.2 * r(),
          halfLength: 0.05 + 0.4 * r(),
        }),
        (): CylinderShape => ({
          type: "cylinder",
          radius: 0.05 + 0.3 * r(),
          halfLength: 0.05 + 0.4 * r(),
        }),
      );
      n += checkAgainstBruteForce(a, b, tol, 0);
    }
    expect(n).toBeGreaterThan(30);
  });
});

describe("near-flush and shallow poses against brute force", () => {
  // b resting on a's top (its lowest point at a's top plus δ ∈ [−5, 5] mm), with tilts
  // near 0 (standing), near π/2 (lying) and small in-plane offsets that hang over edges.
  const tol = 2e-4;
  for (const [name, makeA] of [
    [
      "box",
      (r: () => number): Placed["shape"] => ({
        type: "box",
        halfExtents: [0.2 + 0.3 * r(), 0.2 + 0.3 * r(), 0.1 + 0.2 * r()],
      }),
    ],
    [
      "cylinder",
      (r: () => number): Placed["shape"] => ({
        type: "cylinder",
        radius: 0.15 + 0.2 * r(),
        halfLength: 0.1 + 0.2 * r(),
      }),
    ],
    [
      "capsule",
      (r: () => number): Placed["shape"] => ({
        type: "capsule",
        radius: 0.1 + 0.2 * r(),
        halfLength: 0.1 + 0.3 * r(),
      }),
    ],
  ] as const)
    it(`${name}–cylinder`, () => {
      const r = mulberry32(31 + name.length);
      let n = 0;
      for (let trial = 0; trial < TRIALS; trial++) {
        const sa = makeA(r);
        const qa = name === "capsule" ? axisAngle([0, 1, 0], Math.PI / 2) : ([1, 0, 0, 0] as Q4);
        const a: Placed = { shape: sa, c: [0, 0, 0], q: qa };
        const cyl: CylinderShape = {
          type: "cylinder",
          radius: 0.05 + 0.15 * r(),
          halfLength: 0.05 + 0.2 * r(),
        };
        const lying = r() < 0.5;
        const tilt = (lying ? Math.PI / 2 : 0) + (r() < 0.3 ? 0 : (r() - 0.5) * 0.1);
        const spin = axisAngle([0, 0, 1], 2 * Math.PI * r());
        const qb = qmul(spin, axisAngle([1, 0, 0], tilt));
        const top = supportValue(a, [0, 0, 1]);
        const low = supportValue({ shape: cyl, c: [0, 0, 0], q: qb }, [0, 0, -1]);
        const reach =
          0.4 * (sa.type === "box" ? Math.min(sa.halfExtents[0], sa.halfExtents[1]) * 2.5 : 0.5);
        const c: V3 = [(r() - 0.5) * reach, (r() - 0.5) * reach, top + low + (r() - 0.5) * 0.01];
        n += checkAgainstBruteForce(
          a,
          { shape: cyl, c, q: qb },
          tol,
          name === "capsule" ? 0 : 1e-6,
        );
      }
      expect(n).toBeGreaterThan(TRIALS);
    });
});

describe("touching poses (GJK's slow convergence where surfaces touch)", () => {
  // b moved along the brute-force normal to a signed distance δ ∈ {0, ±1e-9, ±1e-6}:
  // the reported deepest gap is δ (to 1e-8) and the normal the brute-force one. Includes
  // aligned poses (parallel axes, caps on caps, sides on faces) where the closest set is a
  // segment or a face.
  const mkCyl = (r: () => number): CylinderShape => ({
    type: "cylinder",
    radius: 0.05 + 0.2 * r(),
    halfLength: 0.05 + 0.3 * r(),
  });
  const makers: Array<[string, (r: () => number) => Placed["shape"]]> = [
    [
      "box",
      (r) => ({ type: "box", halfExtents: [0.1 + 0.3 * r(), 0.1 + 0.3 * r(), 0.1 + 0.3 * r()] }),
    ],
    [
      "capsule",
      (r) => ({ type: "capsule", radius: 0.05 + 0.2 * r(), halfLength: 0.05 + 0.3 * r() }),
    ],
    ["cylinder", mkCyl],
  ];
  const aligned: Q4[] = [
    [1, 0, 0, 0],
    axisAngle([1, 0, 0], Math.PI / 2),
    axisAngle([0, 1, 0], Math.PI / 2),
  ];
  for (const [name, makeA] of makers)
    it(`${name}–cylinder`, () => {
      const r = mulberry32(41 + name.length);
      for (let trial = 0; trial < TRIALS / 2; trial++) {
        const alignedPose = trial % 2 === 0;
        const a: Placed = {
          shape: makeA(r),
          c: [0, 0, 0],
          q: alignedPose ? aligned[trial % 3] : randomQuat(r),
        };
        const b0: Placed = {
          shape: mkCyl(r),
          c: rotate(randomQuat(r), [0, 0, 0.4]),
          q: alignedPose ? aligned[(trial >> 1) % 3] : randomQuat(r),
        };
        if (alignedPose) {
          b0.c = [0.1 * (r() - 0.5), 0.1 * (r() - 0.5), 0.5];
          // Rounding-size noise on the alignment (as a resting stack carries).
          const tiny = 10 ** (-12 + 6 * r());
          a.q = qmul(a.q, axisAngle([r() - 0.5, r() - 0.5, r() - 0.5], tiny * r()));
          b0.q = qmul(b0.q, axisAngle([r() - 0.5, r() - 0.5, r() - 0.5], tiny * r()));
        }
        const bf0 = bruteSignedDistance(a, b0);
        for (const delta of [0, 1e-9, -1e-9, 1e-6, -1e-6]) {
          const b = moved(b0, [
            (delta - bf0.gap) * bf0.normal[0],
            (delta - bf0.gap) * bf0.normal[1],
            (delta - bf0.gap) * bf0.normal[2],
          ]);
          const cs = contacts(a, b, 0.01);
          expect(cs.length).toBeGreaterThan(0);
          const deepest = cs.reduce((x, y) => (y.gap < x.gap ? y : x));
          expect(Math.abs(deepest.gap - delta)).toBeLessThan(1e-8);
          expect(dot(deepest.normal, bf0.normal)).toBeGreaterThan(0.999);
          for (const c of cs) expect(c.gap).toBeGreaterThanOrEqual(deepest.gap);
        }
      }
    });
});

describe("flush manifolds", () => {
  const cyl: CylinderShape = { type: "cylinder", radius: 0.1, halfLength: 0.2 };
  const box: BoxShape = { type: "box", halfExtents: [1, 1, 0.5] };

  it("standing on a box face: the 8 rim points, normal the face normal, stable features", () => {
    const q = axisAngle([0, 0, 1], 0.4);
    const run = (dz: number, tilt: number) =>
      collide(
        box,
        pose([0, 0, 0], q),
        cyl,
        pose([0.3, -0.2, 0.7 - 0.001 + dz], axisAngle([1, 0, 0], tilt)),
      );
    const cs = run(0, 0);
    expect(cs).toHaveLength(8);
    for (const c of cs) {
      expect(c.gap).toBeCloseTo(-0.001, 10);
      expect(c.normal[2]).toBeCloseTo(1, 12);
      expect(Math.hypot(c.point[0] - 0.3, c.point[1] + 0.2)).toBeCloseTo(0.1, 10);
    }
    const moved1 = run(1e-7, 1e-9);
    expect(moved1.map((c) => c.feature).sort()).toEqual(cs.map((c) => c.feature).sort());
  });

  it("overhanging a box edge: the cap clipped by the face (points inside the face only)", () => {
    const cs = collide(box, pose([0, 0, 0]), cyl, pose([0.95, 0, 0.7 - 0.001]));
    expect(cs.length).toBeGreaterThanOrEqual(4);
    for (const c of cs) {
      expect(c.point[0]).toBeLessThanOrEqual(1 + 1e-12);
      expect(c.gap).toBeCloseTo(-0.001, 10);
    }
    // The clipped polygon spans the chord at x = 1.
    const onEdge = cs.filter((c) => Math.abs(c.point[0] - 1) < 1e-12);
    expect(onEdge).toHaveLength(2);
  });

  it("lying on a box face: two points at the ends of the side line", () => {
    const cs = collide(
      box,
      pose([0, 0, 0]),
      cyl,
      pose([0.2, 0.1, 0.6 - 0.002], axisAngle([1, 0, 0], Math.PI / 2)),
    );
    expect(cs).toHaveLength(2);
    const ys = cs.map((c) => c.point[1]).sort((x, y) => x - y);
    expect(ys[0]).toBeCloseTo(0.1 - 0.2, 12);
    expect(ys[1]).toBeCloseTo(0.1 + 0.2, 12);
    for (const c of cs) {
      expect(c.gap).toBeCloseTo(-0.002, 12);
      expect(c.normal[2]).toBeCloseTo(1, 12);
    }
  });

  it("stacked cylinders: the clipped cap polygon, gaps exact", () => {
    const cs = collide(cyl, pose([0, 0, 0]), cyl, pose([0.02, 0.01, 0.4 - 0.003]));
    expect(cs.length).toBeGreaterThanOrEqual(6);
    expect(cs.length).toBeLessThanOrEqual(8);
    for (const c of cs) {
      expect(c.gap).toBeCloseTo(-0.003, 10);
      expect(Math.hypot(c.point[0], c.point[1])).toBeLessThanOrEqual(0.1 + 1e-12);
      expect(Math.hypot(c.point[0] - 0.02, c.point[1] - 0.01)).toBeLessThanOrEqual(0.1 + 1e-12);
    }
  });

  it("a short cylinder standing across a capsule: two points across the cap", () => {
    const cap: CapsuleShape = { type: "capsule", radius: 0.3, halfLength: 0.5 };
    const disc: CylinderShape = { type: "cylinder", radius: 0.1, halfLength: 0.05 };
    const cs = collide(
      cap,
      pose([0, 0, 0], axisAngle([0, 1, 0], Math.PI / 2)),
      disc,
      pose([0.1, 0, 0.35 - 0.001]),
    );
    expect(cs).toHaveLength(2);
    for (const c of cs) {
      expect(c.gap).toBeCloseTo(-0.001, 12);
      expect(c.point[1]).toBeCloseTo(0, 12);
    }
    const xs = cs.map((c) => c.point[0]).sort((x, y) => x - y);
    expect(xs[0]).toBeCloseTo(0, 12);
    expect(xs[1]).toBeCloseTo(0.2, 12);
  });

  it("nearly flush caps (tilts 1e-5…1e-2 rad, rims crossing): every point on both surfaces", () => {
    // Two cone points of the overlap (the caps' normals) lie close together here; the
    // polish needs the exact Hessian to place the single rim–rim contact.
    const r = mulberry32(5);
    let worst = 0;
    let singles = 0;
    for (let t = 0; t < 2000; t++) {
      const a: Placed = {
        shape: { type: "cylinder", radius: 0.1 + 0.1 * r(), halfLength: 0.1 + 0.1 * r() },
        c: [0, 0, 0],
        q: axisAngle([r() - 0.5, r() - 0.5, 0], 10 ** (-5 + 3 * r())),
      };
      const sb: CylinderShape = {
        type: "cylinder",
        radius: 0.1 + 0.1 * r(),
        halfLength: 0.05 + 0.1 * r(),
      };
      const q = qmul(
        axisAngle([0, 0, 1], 6 * r()),
        axisAngle([r() - 0.5, r() - 0.5, 0], 10 ** (-5 + 3 * r())),
      );
      const off = ((a.shape as CylinderShape).radius + sb.radius) * (0.3 + 0.6 * r());
      const ang = 6.3 * r();
      const h = (a.shape as CylinderShape).halfLength + sb.halfLength + (r() - 0.5) * 0.01;
      const b: Placed = { shape: sb, c: [off * Math.cos(ang), off * Math.sin(ang), h], q };
      for (const c of contacts(a, b, 0.01)) {
        if (c.feature < SINGLE_FEATURES) singles++;
        const pa = add(c.point, c.normal, -c.gap / 2);
        const pb = add(c.point, c.normal, c.gap / 2);
        worst = Math.max(worst, Math.abs(sdf(a, pa)), Math.abs(sdf(b, pb)));
      }
    }
    expect(singles).toBeGreaterThan(1000);
    expect(worst).toBeLessThan(1e-6);
  });

  it("two cylinders side by side (parallel logs): two points", () => {
    const q = axisAngle([0, 1, 0], Math.PI / 2);
    const cs = collide(cyl, pose([0, 0, 0], q), cyl, pose([0.1, 0, 0.2 - 0.004], q));
    expect(cs).toHaveLength(2);
    for (const c of cs) {
      expect(c.gap).toBeCloseTo(-0.004, 10);
      expect(c.normal[2]).toBeCloseTo(1, 10);
    }
  });
});

describe("broad phase and detector", () => {
  it("AABB half widths bound the cylinder tightly", () => {
    const cyl: CylinderShape = { type: "cylinder", radius: 0.2, halfLength: 0.5 };
    const r = mulberry32(9);
    for (let t = 0; t < 20; t++) {
      const q = randomQuat(r);
      const p = new WorldPose().set([0, 0, 0], Float64Array.from(q));
      const ext = new Float64Array(3);
      aabbHalfWidths(cyl, p, ext);
      for (let k = 0; k < 3; k++) {
        const e: V3 = [0, 0, 0];
        e[k] = 1;
        const h = supportValue({ shape: cyl, c: [0, 0, 0], q }, e);
        expect(ext[k]).toBeCloseTo(h, 12);
      }
    }
  });

  it("a detector with cylinders against every shape type finds each pair", () => {
    const shapes: Shape[] = [
      { type: "plane", normal: [0, 0, 1], offset: 0 },
      { type: "cylinder", radius: 0.1, halfLength: 0.2 },
      { type: "box", halfExtents: [0.1, 0.1, 0.1] },
      { type: "sphere", radius: 0.1 },
      { type: "capsule", radius: 0.1, halfLength: 0.1 },
      { type: "cylinder", radius: 0.1, halfLength: 0.1 },
    ];
    const det = new CollisionDetector(
      shapes.map((shape, i) => ({ shape, body: i === 0 ? -1 : i - 1 })),
      { margin: 0.01 },
    );
    // Cylinder 1 standing at the origin; the others around it, touching it.
    const pos = new Float64Array([
      0, 0, 0.199, 0.199, 0, 0.1, -0.199, 0, 0.1, 0, 0.199, 0.1, 0, 0, 0.499,
    ]);
    const quat = new Float64Array([1, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0]);
    const out = new ContactBuffer(4);
    det.detect(pos, quat, out);
    const pairs = new Set<string>();
    for (let i = 0; i < out.count; i++) pairs.add(`${out.shapeA[i]}-${out.shapeB[i]}`);
    for (const p of ["0-1", "1-2", "1-3", "1-4", "1-5"]) expect(pairs.has(p)).toBe(true);
    expect(
      () =>
        new CollisionDetector([{ shape: { type: "cylinder", radius: 0, halfLength: 1 }, body: 0 }]),
    ).toThrow(/cylinder/);
  });
});
