/**
 * Contact with the surface triangles of deformable (`fem`) bodies: the surface vertices of
 * each body with `contact: true` against the surface triangles of every other such body
 * (both directions), after ArtiSynth's vertex penetration contact, and the points of the
 * rigid and fixed bodies' shapes against them ("Rigid shapes" below). Self-contact of one
 * body is not detected.
 *
 * Detection, for the vertex p (a node particle) of body A and the triangles (x₀, x₁, x₂)
 * of body B ≠ A (geometry/point-triangle.ts): the triangle's outward unit normal n, the
 * signed distance d = n·(p − x₀) and the barycentric weights w of p's projection on the
 * plane. The triangle is a candidate when
 *     −depth_B < d < margin
 * and the projection lies in it, or, for a penetrating vertex (d < 0), beyond some of its
 * edges by at most |d| and under the ridge each such edge makes with the neighbouring
 * face u across it: behind u too (d′ < 0) and projecting on u's plane beyond the same
 * edge (the weight of u's corner off the edge < 0). Where the surface folds into a
 * ridge, a vertex under it near the edge projects outside both faces (by up to
 * |d| tan(θ/2) ≤ |d| for a fold θ ≤ 90°); a vertex in front of u is outside the body, and
 * one whose projection on u falls in u lies over u (a flat continuation), u's to take.
 * The contact point is then moved onto the edge (point-triangle.ts clampWeights; same
 * plane, same d).
 * depth_B = half the shortest edge of B's surface triangles at the start (m). The bound
 * keeps a vertex from taking a face on the far side of B: a vertex just under B's top face
 * is about B's thickness under the bottom face, and one just above the top face (beyond
 * the margin) as much behind the bottom face, beyond the bound as long as B is at least
 * one cell thick. Among the candidates the one with the smallest |d| makes the contact
 * (the nearest face: one contact per vertex and other body).
 * Facing: a face whose outward normal n points along the vertex's own outward normal ν,
 * n·ν > 0 (ν ∝ Σ (x₁ − x₀) × (x₂ − x₀) over A's surface triangles around p, at the current
 * positions), is no candidate: the two surfaces there face the same way, and p reached
 * that face from inside B. A block resting on a matching one has its bottom rim over the
 * lower block's top rim: a rim vertex a hair inside the lower block's side face is nearer
 * to that face than to the top (by up to the depth), and took it, pushed sideways with no
 * lift (fem-faces.test.ts, matching grids). Rigid points have no ν: every face may take them.
 * Pruning: each body's surface has a BVH over its triangles (geometry/bvh.ts), built at
 * the start and refitted to the node positions at every detection; a vertex outside B's
 * root box (padded) is skipped, else B's triangles whose boxes meet the vertex's box
 * padded by max(margin, depth_B) are tested. Cost O(V log T) per pair of bodies whose
 * root boxes meet, not O(V·T).
 * Known limits: fem–fem contacts are vertex–face only (an edge of A crossing an edge of B with
 * no vertex inside is not seen), as ArtiSynth's vertex penetrations; a vertex over an
 * edge of B between two faces at the same distance takes one of them (the first found),
 * whose normal alone then pushes it. A vertex attached to a node of B (attachments)
 * ignores B's triangles around that node unless collideJointed.
 *
 * The contact (buffer, the ContactBuffer layout): side a is the triangle, side b the
 * vertex, so the normal n from a to b is the triangle's outward normal and the gap
 *     g = n·(p − Σ_i w_i x_i) = d,
 * surface points p_a = Σ w_i x_i (the projection), p_b = p, point their midpoint.
 * bodyA is the triangle's corner 0's node (the contact's name in the State and its
 * friction and restitution pair: contact.pairs naming two fem ids covers every node
 * pair), bodyB the vertex's node; nodes[3k..3k+2] and weights[3k..3k+2] give the
 * triangle's three node bodies and w. The contact modules (compliant.ts, contact-set.ts)
 * take side a as the point Σ w_i x_i of three particles: with n and w held for the step,
 *     ∂g/∂p = n,  ∂g/∂x_i = −w_i n,
 * the Jacobian row (n on the vertex, −w_i n on each triangle node); the force F n on the
 * vertex is balanced by −w_i F n on the nodes (Σ w_i = 1: equal and opposite, momentum
 * conserved). Key: contactKey(first vertex shape of B, vertex shape, feature) with the
 * feature the triangle index and the direction (2t + [A > B]) mod 2¹⁶: stable while the
 * vertex stays over the triangle, and never one of the detector's keys (vertex shapes
 * never pair with each other there).
 *
 * Contact area (compliant contact): ArtiSynth's vertex area of p (fem-vertices.ts, one
 * third of each adjacent face's area projected on the plane ⊥ n), shared where the other
 * body's vertices meet this body's faces too, since both vertex sets then cover the
 * contact patch (ArtiSynth's two-way contact rule; shareTwoWay): with S and S′ the two
 * sets' summed areas, each contact takes max(S, S′)/(S + S′) of its area, ½ for equal
 * sets as ArtiSynth's halving, and the two together weigh the larger set's area. Under a
 * law per contact the force takes that share of the counts instead (compliant.ts `share`).
 * Halving regardless undercounts a patch that one set covers and the other only in part:
 * a stiff block on a matching fem slab, spread past the slab's rim by its load (ν ε), has
 * its rim vertices off the slab's faces, the slab's 9 on its own and its middle one on the
 * slab's (10 contacts, every grid point covered); halved, it sank 1.71 times m g/(k A)
 * per unit area and m g/(5 k) per contact, now m g/(k A) and m g/(9 k) (fem-faces.test.ts).
 * A stiff block on a finer slab (its 9 vertices on the slab's faces, 4 of the slab's on
 * its own) sank m g/(13 k) per contact with both sets at full force, m g/(6.5 k) halved,
 * now m g/(9 k); per unit area both sets weigh 0.04 m², halved as before. A body whose
 * vertices alone touch (a block on a slab coarser than it, no slab vertex under it) keeps
 * the full area and force (halved, that block sank twice m g/(k A) under a per-area law).
 *
 * Rigid shapes: the fem vertices meet the analytic shapes through the detector
 * (fem-vertices.ts), which alone let a shape pass between them: a box resting on the
 * middle of a coarse block's face, or a ball smaller than the mesh spacing, went through
 * the face. Each bounded shape of a rigid or fixed body therefore also meets the faces
 * through its contact points, material points of the shape with a radius r:
 *   box: its 8 corners and points of its 12 edges, at most its middle side 2 h_mid apart
 *   (⌈h_j/h_mid⌉ intervals along axis j, area.ts boxSampleIntervals; a cube or a plate: its
 *   corners alone), r = 0: a 1.1 m beam of 0.1 m lying across a 0.6 m block, every corner off the
 *   block, fell through to the floor on its corners; convex hull, mesh: their vertices
 *   (r = 0); cylinder: the
 *   RIM_SAMPLES rim points of each cap (geometry/cylinder.ts, r = 0); sphere: its centre
 *   (r its radius); capsule: m + 1 points of its segment, m = min(⌈2L/r⌉, 64) (area.ts
 *   capsuleSampleIntervals), max(r, 2L/64) apart (r its radius; the cap keeps a long thin
 *   capsule's count bounded, its per-area force within s/W of a patch W long). Its two ends alone let a
 *   capsule lying across a coarse face sink between them, and one longer than the face
 *   (its ends beyond the block: a 2 kg capsule, r = 0.05 m, L = 0.5 m, on a 0.6 m block)
 *   fell through to the floor; on a face whose vertex rows are wider apart than its
 *   diameter the rows' vertices (fem-vertices.ts, vertex–capsule) only pushed it sideways
 *   between them. Planes have none (a plane reaches a flat face's interior only past its
 *   vertices).
 * A point c of radius r is a vertex whose surface lies r nearer: the query above with the
 * gap g = d − r (the candidate bound −depth_B < g < margin, the ridge test on d′ − r), side
 * b the rigid body at the surface point c − r n (lever arm from its centre of mass: the
 * contact modules' rigid side, rotation included), side a the triangle as above, point
 * midway: c − (r + g/2) n. The Jacobian row is −w_i n on the nodes and [n; ρ × n] on the
 * body (ρ its lever arm), so the impulse or force F n on the body is balanced by −w_i F n
 * on the nodes; nsc and smc take it as the fem–fem contacts (a triangle side, weights
 * held for the step). Key: contactKey(s, s, feature) for shape s with the feature
 * (T·P + k) mod 2¹⁶ (T the triangle's index over all fem bodies, P the shape's point count,
 * k the point): the shape with itself, a pair the detector never makes. Area (compliant):
 * the shape's own rule for the point (area.ts: boxSampleArea, each face's area shared among
 * its rim's samples, boxVertexArea for a cube's corners; cylinderRimArea,
 * hullVertexArea, the round area π(2 r δ − δ²) of a ball on a flat face, capsuleSampleArea
 * (the strip its side's chord 2√(2 r δ − δ²) sweeps over the sample's length of axis, the
 * end discs at the ends), a mesh vertex's
 * ArtiSynth area), shared with the fem body's vertices on the same shape where there are
 * any: both sets then cover the patch between them, as two fem bodies' vertex sets do
 * (shareTwoWay, max(S, S′)/(S + S′) each; both at full area, a 2 kg box resting on a stiff
 * block under a linear per-area law sank to 0.49 of m g/(k A): fem-rigid-faces.test.ts). A
 * shape that meets only one set (a ball smaller than the mesh spacing on a face; a box
 * whose corners are off the body) keeps that set's full area.
 * A round point of radius above ROUND_EDGES = 10 times B's longest surface edge is left to
 * B's vertices: a face tilted by θ moves its foot c − r n by r θ, and with r a hundred
 * edges (a 20 m ball under a 0.2 m block) the held normal made the face's nodes chatter in
 * a two-step cycle; between vertices such a ball sinks at most ρ²/(2r) < 1/40 of an edge
 * (ρ ≤ the triangle's circumradius).
 * Edges: a box's 12 edges also meet the ridges of each fem surface, where an edge with no
 * sample beyond the other's went through (a plate lying across two roofs' ridges, none of
 * its points over their faces nor their vertices under it, fell through both to the floor:
 * fem-edges.test.ts). For a box edge e₀ + s d₁ and a surface edge x_P + w d₂ (s, w ∈ [0, 1])
 * whose lines' closest points lie inside both (Ericson, Real-Time Collision Detection
 * §5.1.8: s = (B F − C E)/(A E − B²), w = (A F − B C)/(A E − B²) with A = d₁·d₁, B = d₁·d₂,
 * C = d₁·r, E = d₂·d₂, F = d₂·r, r = e₀ − x_P), the normal is n = d₁ × d₂/|d₁ × d₂| turned
 * out of the fem body (along n_t + n_u, its two faces' outward normals) and the gap
 *     g = n·((e₀ + s d₁) − (x_P + w d₂)),
 * the lines' signed distance (the closest points differ along n alone), −depth_B < g <
 * margin as a point's. The pair is the contact's features only where n lies in both edges'
 * arcs of normals (Gauss map): n = α n_t + β n_u with α, β ≥ 0 (the fem edge a convex
 * ridge: u's corner off it behind t's plane), at least 5° off n_t and n_u (nearer, the face
 * is in contact, its points carry it; a box lying flat across a block's rim would count the
 * rim twice: the 1.1 m box across the block below took 16 contacts, its per-area law 0.073
 * m² for the 0.06 m² patch, 0.055 with its 12 samples), so a fold under 10° is no ridge;
 * and −n against the box's two face normals b₁, b₂ at e, −n·b ≥ 0, or n·b at most sin 15°
 * (a box face across the ridge, tilted: both its rim's crossings stay, not the lower alone).
 * Edges at an angle of sine under 10⁻³ are left to the corners and vertices (the normal is
 * undefined). Side a is the fem edge's point, the triangle t's weights (1 − w, w) on x_P, x_Q
 * and 0 on its third corner (so the contact is a face contact to the contact modules: ∂g/∂x
 * = −w_i n on the nodes, exact for g as for the plane query with n held); side b the box at
 * e₀ + s d₁, point midway. Area (compliant): the box's sample rule (boxSampleArea) at the
 * edge's midpoint, the two faces at the edge over their rims' samples, shared as its
 * points'. Key: contactKey(s_B, s_B, feature), s_B the body's first vertex shape (a pair
 * nothing else makes), feature (((box) T + t) 3 + i) 12 + edge mod 2¹⁶. Cost: each box edge
 * queries the BVH with its padded box and tests the surface edges of the triangles found
 * (each edge once, from the lower-numbered of its two triangles): O(12 log T) per box near
 * the body.
 * A box face's middle on a ridge is met where the ridge crosses the face's rim (those
 * crossings, the face across the ridge) or ends under it (the ridge's vertices).
 * Known limits: a cylinder's rim (its cap's middle on a ridge, between rim samples) and a
 * hull's or mesh's edges crossing a ridge with no point beyond it are not seen (boxes only);
 * a box edge crossing a rim within 5° of the face sinks until a sample meets the face (its
 * spacing times tan 5° at most).
 */
import { type Bvh, buildBvh, FOUND, overlapping, QUERY_BOX, refitBvh } from "../geometry/bvh";
import { ContactBuffer, contactKey } from "../geometry/contact-buffer";
import { RIM_COS, RIM_SAMPLES, RIM_SIN } from "../geometry/cylinder";
import { triangleNormal } from "../geometry/hull";
import {
  clampWeights,
  POINT_TRIANGLE,
  pointTriangle,
  withinReach,
} from "../geometry/point-triangle";
import { composePose, WorldPose } from "../geometry/pose";
import type { Shape, ShapeInstance } from "../geometry/shapes";
import { extend } from "../math/grow";
import { quatToMat3Normalized } from "../math/quat";
import type { BodySystem } from "../model/body-system";
import {
  boxSampleArea,
  boxSampleIntervals,
  capsuleSampleArea,
  capsuleSampleIntervals,
  cylinderRimArea,
  hullVertexArea,
  roundContactArea,
  vertexContactArea,
} from "./area";
import type { FemVertexContacts } from "./fem-vertices";

/** One fem body's surface as the detection needs it. */
interface FaceSet {
  /** Node bodies (BodySystem indices), 3 per surface triangle. */
  tri: Int32Array;
  /** The triangle across the edge opposite corner i of triangle t, at 3t + i (−1: none). */
  across: Int32Array;
  /** Node body of each surface vertex. */
  vertexBody: Int32Array;
  bvh: Bvh;
  /** Penetration depth bound (m): half the shortest surface edge at the start. */
  depth: number;
  /** The largest radius of a round rigid point on these faces (m; file comment). */
  roundLimit: number;
}

/**
 * A round point (sphere, capsule sample) of radius above ROUND_EDGES times a surface's longest
 * edge is left to that surface's vertices (file comment, "Rigid shapes").
 */
const ROUND_EDGES = 10;

/**
 * A rigid (or fixed) body's shape as the fem surfaces see it: its contact points (file
 * comment, "Rigid shapes") in the shape frame, their common radius, and their world
 * positions at the last detect().
 */
interface RigidPoints {
  /** Index of the shape in the detector's list (CollisionDetector.shapes). */
  shape: number;
  inst: ShapeInstance;
  local: Float64Array;
  radius: number;
  /** Shape frame in the body frame (composePose's local position and rotation matrix). */
  localP: Float64Array;
  localR: Float64Array;
  /** The shape's world pose and its points' world positions (3 each) at the last detect. */
  pose: WorldPose;
  world: Float64Array;
  /** World box of the points grown by the radius: min x, y, z, max x, y, z. */
  box: Float64Array;
  /** The largest distance of a point from the shape frame's origin, plus the radius (m). */
  reach: number;
  /** A box's edge sample intervals per axis (boxSampleIntervals; unused otherwise). */
  intervals: Int32Array;
}

/**
 * The contact points of a shape in its frame (file comment, "Rigid shapes") and their
 * radius; none for a plane.
 */
function contactPoints(shape: Shape): { points: Float64Array; radius: number } {
  switch (shape.type) {
    case "sphere":
      return { points: new Float64Array(3), radius: shape.radius };
    case "capsule": {
      const m = capsuleSampleIntervals(shape.radius, shape.halfLength);
      const points = new Float64Array(3 * (m + 1));
      for (let j = 0; j <= m; j++)
        points[3 * j + 2] = m > 0 ? shape.halfLength * ((2 * j) / m - 1) : 0;
      return { points, radius: shape.radius };
    }
    case "box": {
      // the 8 corners, then the inner samples of the 12 edges (boxSampleIntervals)
      const h = shape.halfExtents;
      const m = new Int32Array(3);
      boxSampleIntervals(h, m);
      const points = new Float64Array(3 * (8 + 4 * (m[0] + m[1] + m[2] - 3)));
      for (let k = 0; k < 8; k++)
        for (let c = 0; c < 3; c++) points[3 * k + c] = k & (1 << c) ? h[c] : -h[c];
      let o = 24;
      for (let a = 0; a < 3; a++)
        for (let e = 0; e < 4; e++)
          for (let j = 1; j < m[a]; j++, o += 3) {
            points[o + a] = h[a] * ((2 * j) / m[a] - 1);
            points[o + ((a + 1) % 3)] = e & 1 ? h[(a + 1) % 3] : -h[(a + 1) % 3];
            points[o + ((a + 2) % 3)] = e & 2 ? h[(a + 2) % 3] : -h[(a + 2) % 3];
          }
      return { points, radius: 0 };
    }
    case "cylinder": {
      const points = new Float64Array(6 * RIM_SAMPLES);
      for (let k = 0; k < 2 * RIM_SAMPLES; k++) {
        const j = k % RIM_SAMPLES;
        points[3 * k] = shape.radius * RIM_COS[j];
        points[3 * k + 1] = shape.radius * RIM_SIN[j];
        points[3 * k + 2] = k < RIM_SAMPLES ? -shape.halfLength : shape.halfLength;
      }
      return { points, radius: 0 };
    }
    case "convex":
      return { points: shape.hull.vertices, radius: 0 };
    case "mesh":
      return { points: shape.mesh.vertices, radius: 0 };
    case "plane":
      return { points: new Float64Array(0), radius: 0 };
  }
}

export class FemFaceContacts {
  /** The contacts of the last detect() (file comment: a the triangle, b the vertex). */
  readonly buffer = new ContactBuffer(16);
  /** Node bodies of each contact's triangle (3 per contact). */
  nodes: Int32Array = new Int32Array(48);
  /** Barycentric weights of the vertex's projection on the triangle (3 per contact). */
  weights: Float64Array = new Float64Array(48);
  /** Per contact: the rigid shape's point (index in its contact points), −1 for a fem vertex. */
  private pointOf: Int32Array = new Int32Array(16);
  private readonly faces: FaceSet[];
  /** Index of each fem body's first triangle in a numbering over all the bodies. */
  private readonly firstTriangle: Int32Array;
  /** The rigid shapes that meet the fem surfaces (file comment, "Rigid shapes"). */
  private readonly rigid: RigidPoints[] = [];
  /** Index in `rigid` by detector shape index (−1: none). */
  private readonly rigidOf: Int32Array;
  /**
   * shareTwoWay's sums of w for the rigid shapes with points, at 2c and 2c + 1 with
   * c = shape · (fem bodies) + body: the body's vertices on the shape, the shape's points
   * on the body's faces (0 between calls).
   */
  private readonly shared: Float64Array;
  /**
   * shareTwoWay's sums of w for the fem pairs, at a · (fem bodies) + b: body a's vertices
   * on body b's faces (0 between calls).
   */
  private readonly ways: Float64Array;
  /** Attached (body, node) pairs that do not collide, as lo·numBodies + hi. */
  private readonly excluded: Set<number>;
  /** The best candidate of a vertex: w₀..w₂, d, n (as POINT_TRIANGLE). */
  private readonly best = new Float64Array(7);
  /**
   * The surface normal of the vertex being queried (vertexNormal; zero for a rigid point):
   * a face whose normal points along it is skipped (file comment, "Facing").
   */
  private readonly facing = new Float64Array(3);
  /** The query of the triangle being tested (POINT_TRIANGLE is reused for its neighbours). */
  private readonly query = new Float64Array(8);
  /** The contact being pushed: point, normal, gap (ContactBuffer.pushFrom). */
  private readonly record = new Float64Array(7);
  /** composePose's scratch, and the normal in a mesh's frame with its corners (fillAreas). */
  private readonly scratchR = new Float64Array(9);
  private readonly localNormal = new Float64Array(3);
  private corners = new Float64Array(0);
  /**
   * boxEdges' scratch: an edge's start and its vector, the contact's point on it, the normals
   * of the ridge's two faces; the local midpoint of a box edge (rigidArea).
   */
  private readonly edgeFrom = new Float64Array(3);
  private readonly edgeAlong = new Float64Array(3);
  private readonly edgePoint = new Float64Array(3);
  private readonly normalT = new Float64Array(3);
  private readonly normalU = new Float64Array(3);
  private readonly edgeLocal = new Float64Array(3);

  constructor(
    private readonly sys: BodySystem,
    readonly vertices: FemVertexContacts,
    excludedPairs: ReadonlyArray<readonly [number, number]> = [],
    /** The detector's shapes: those before vertices.firstShape are the bodies' (setup.ts). */
    shapes: readonly ShapeInstance[] = [],
  ) {
    const pos = sys.pos;
    this.faces = vertices.bodies.map(({ surface, nodeBodies }) => {
      const tri = Int32Array.from(surface.triangles, (k) => nodeBodies[k]);
      let edge = Number.POSITIVE_INFINITY;
      let longest = 0;
      for (let t = 0; t < tri.length; t += 3)
        for (let c = 0; c < 3; c++) {
          const p = 3 * tri[t + c];
          const q = 3 * tri[t + ((c + 1) % 3)];
          const l = Math.hypot(pos[q] - pos[p], pos[q + 1] - pos[p + 1], pos[q + 2] - pos[p + 2]);
          edge = Math.min(edge, l);
          longest = Math.max(longest, l);
        }
      return {
        tri,
        across: neighbours(tri, sys.numBodies),
        vertexBody: Int32Array.from(surface.vertices, (k) => nodeBodies[k]),
        bvh: buildBvh(pos, tri),
        depth: 0.5 * edge,
        roundLimit: ROUND_EDGES * longest,
      };
    });
    this.firstTriangle = new Int32Array(this.faces.length);
    for (let b = 1; b < this.faces.length; b++)
      this.firstTriangle[b] = this.firstTriangle[b - 1] + this.faces[b - 1].tri.length / 3;
    const bodyShapes = Math.min(shapes.length, vertices.firstShape);
    this.rigidOf = new Int32Array(bodyShapes).fill(-1);
    this.shared = new Float64Array(2 * bodyShapes * this.faces.length);
    this.ways = new Float64Array(this.faces.length * this.faces.length);
    let valence = 0;
    for (let k = 0; k < bodyShapes; k++) {
      const inst = shapes[k];
      const { points, radius } = contactPoints(inst.shape);
      if (points.length === 0 || inst.body < 0) continue;
      const lq = inst.localOrientation ?? [1, 0, 0, 0];
      const localR = new Float64Array(9);
      quatToMat3Normalized(localR, 0, Float64Array.from(lq), 0);
      this.rigidOf[k] = this.rigid.length;
      this.rigid.push({
        shape: k,
        inst,
        local: points,
        radius,
        localP: Float64Array.from(inst.localPosition ?? [0, 0, 0]),
        localR,
        pose: new WorldPose(),
        world: new Float64Array(points.length),
        box: new Float64Array(6),
        reach: radius + farthest(points),
        intervals: new Int32Array(3),
      });
      if (inst.shape.type === "box")
        boxSampleIntervals(inst.shape.halfExtents, this.rigid[this.rigid.length - 1].intervals);
      if (inst.shape.type === "mesh") {
        const start = inst.shape.mesh.vertexTriStart;
        for (let v = 0; v + 1 < start.length; v++)
          valence = Math.max(valence, start[v + 1] - start[v]);
      }
    }
    this.corners = new Float64Array(9 * valence);
    this.excluded = new Set(excludedPairs.map(([p, q]) => this.pairKey(p, q)));
  }

  /** Whether there is anything to detect: two fem bodies, or one and a rigid shape. */
  get active(): boolean {
    return this.faces.length > 1 || (this.faces.length > 0 && this.rigid.length > 0);
  }

  private pairKey(p: number, q: number): number {
    return Math.min(p, q) * this.sys.numBodies + Math.max(p, q);
  }

  /** The contacts at the current node positions with gap < margin (m), into buffer. */
  detect(margin: number): void {
    const { sys, faces, buffer } = this;
    const pos = sys.pos;
    for (const f of faces) refitBvh(f.bvh, pos, f.tri);
    buffer.clear();
    for (let a = 0; a < faces.length; a++)
      for (let b = 0; b < faces.length; b++) {
        if (a === b) continue;
        const fb = faces[b];
        const pad = Math.max(margin, fb.depth);
        if (apart(faces[a].bvh.box, fb.bvh.box, pad)) continue;
        const shapeA = this.vertices.firstShape + this.vertices.shapeStart[b];
        const first = this.vertices.firstShape + this.vertices.shapeStart[a];
        const vb = faces[a].vertexBody;
        for (let v = 0; v < vb.length; v++) {
          this.vertexNormal(a, v);
          const t = this.nearestFace(pos, 3 * vb[v], vb[v], 0, fb, margin, pad);
          if (t < 0) continue;
          buffer.setPair(fb.tri[3 * t], vb[v], shapeA, first + v);
          this.push(t, fb, (2 * t + (a > b ? 1 : 0)) & 0xffff, pos, 3 * vb[v], 0, -1);
        }
      }
    for (const g of this.rigid) this.detectRigid(g, margin);
  }

  /**
   * The contacts of the points of rigid shape g with the fem surfaces (file comment,
   * "Rigid shapes"), at the shape's current pose.
   */
  private detectRigid(g: RigidPoints, margin: number): void {
    const { sys, faces, buffer } = this;
    const body = g.inst.body;
    composePose(sys.pos, sys.quat, body, g.localP, g.localR, g.pose, this.scratchR);
    const { p, R } = g.pose;
    const { local, world, box, radius } = g;
    // the shape's bounding ball first: most shapes are away from every fem body
    for (let c = 0; c < 3; c++) {
      box[c] = p[c] - g.reach;
      box[3 + c] = p[c] + g.reach;
    }
    let near = false;
    for (const fb of faces) if (!apart(box, fb.bvh.box, Math.max(margin, fb.depth))) near = true;
    if (!near) return;
    box.fill(Number.POSITIVE_INFINITY, 0, 3);
    box.fill(Number.NEGATIVE_INFINITY, 3, 6);
    for (let o = 0; o < local.length; o += 3) {
      const x = local[o];
      const y = local[o + 1];
      const z = local[o + 2];
      for (let c = 0; c < 3; c++) {
        const w = p[c] + R[3 * c] * x + R[3 * c + 1] * y + R[3 * c + 2] * z;
        world[o + c] = w;
        box[c] = Math.min(box[c], w - radius);
        box[3 + c] = Math.max(box[3 + c], w + radius);
      }
    }
    const count = local.length / 3;
    // a rigid point has no surface normal: every face may take it
    this.facing.fill(0);
    for (let b = 0; b < faces.length; b++) {
      const fb = faces[b];
      const pad = Math.max(margin, fb.depth);
      if (radius > fb.roundLimit || apart(box, fb.bvh.box, pad)) continue;
      const shapeA = this.vertices.firstShape + this.vertices.shapeStart[b];
      for (let v = 0; v < count; v++) {
        const t = this.nearestFace(world, 3 * v, body, radius, fb, margin, pad + radius);
        if (t < 0) continue;
        buffer.setPair(fb.tri[3 * t], body, shapeA, g.shape);
        const feature = ((this.firstTriangle[b] + t) * count + v) & 0xffff;
        const i = this.push(t, fb, feature, world, 3 * v, radius, v);
        // the shape with itself: a pair the detector never makes (file comment)
        buffer.key[i] = contactKey(g.shape, g.shape, feature);
      }
      if (g.inst.shape.type === "box") this.boxEdges(g, g.inst.shape.halfExtents, b, pad, margin);
    }
  }

  /**
   * The edge–edge contacts of box g (half extents h) with the ridges of fem body b's surface
   * (file comment, "Edges"), at the pose of the last detectRigid. pad: the query's reach (m).
   */
  private boxEdges(
    g: RigidPoints,
    h: readonly [number, number, number],
    b: number,
    pad: number,
    margin: number,
  ): void {
    const { sys, buffer, faces } = this;
    const fb = faces[b];
    const pos = sys.pos;
    const off = sys.dofOffset;
    const body = g.inst.body;
    const fixed = off[body] < 0;
    const { p, R } = g.pose;
    const { edgeFrom: e0, edgeAlong: d1, edgePoint: x, best, normalT: nt, normalU: nu } = this;
    const count = g.local.length / 3;
    const shapeA = this.vertices.firstShape + this.vertices.shapeStart[b];
    const T = fb.tri.length / 3;
    const root = fb.bvh.box;
    for (let a = 0; a < 3; a++) {
      const a1 = (a + 1) % 3;
      const a2 = (a + 2) % 3;
      for (let q = 0; q < 4; q++) {
        // box edge 4a + q: along axis a from −h_a to h_a at (±h_a1, ±h_a2) (q's bits)
        const s1 = q & 1 ? h[a1] : -h[a1];
        const s2 = q & 2 ? h[a2] : -h[a2];
        for (let c = 0; c < 3; c++) {
          e0[c] = p[c] - R[3 * c + a] * h[a] + R[3 * c + a1] * s1 + R[3 * c + a2] * s2;
          d1[c] = 2 * h[a] * R[3 * c + a];
          QUERY_BOX[c] = Math.min(e0[c], e0[c] + d1[c]) - pad;
          QUERY_BOX[3 + c] = Math.max(e0[c], e0[c] + d1[c]) + pad;
        }
        if (apart(QUERY_BOX, root, 0)) continue;
        overlapping(fb.bvh);
        const A = d1[0] * d1[0] + d1[1] * d1[1] + d1[2] * d1[2];
        for (let j = 0; j < FOUND.count; j++) {
          const t = FOUND.tris[j];
          for (let i = 0; i < 3; i++) {
            // each edge once, from the lower of its two triangles (both are found: the
            // edge lies in both boxes); a boundary edge (u = −1) has no ridge
            const u = fb.across[3 * t + i];
            if (u < t) continue;
            const nP = fb.tri[3 * t + ((i + 1) % 3)];
            const nQ = fb.tri[3 * t + ((i + 2) % 3)];
            if (fixed && off[nP] < 0 && off[nQ] < 0) continue;
            if (
              this.excluded.size > 0 &&
              (this.excluded.has(this.pairKey(body, nP)) ||
                this.excluded.has(this.pairKey(body, nQ)))
            )
              continue;
            // closest points e0 + s d1 and x_P + w d2 of the two lines (Ericson §5.1.8)
            const P = 3 * nP;
            const Q = 3 * nQ;
            const d2x = pos[Q] - pos[P];
            const d2y = pos[Q + 1] - pos[P + 1];
            const d2z = pos[Q + 2] - pos[P + 2];
            const rx = e0[0] - pos[P];
            const ry = e0[1] - pos[P + 1];
            const rz = e0[2] - pos[P + 2];
            const E = d2x * d2x + d2y * d2y + d2z * d2z;
            const B = d1[0] * d2x + d1[1] * d2y + d1[2] * d2z;
            const C = d1[0] * rx + d1[1] * ry + d1[2] * rz;
            const F = d2x * rx + d2y * ry + d2z * rz;
            const den = A * E - B * B;
            // near-parallel edges (sin² < PARALLEL) are left to the corners and vertices
            if (!(den > PARALLEL * A * E)) continue;
            const s = (B * F - C * E) / den;
            const w = (A * F - B * C) / den;
            if (!(s > 0 && s < 1 && w > 0 && w < 1)) continue;
            faceNormal(pos, fb.tri, t, nt);
            faceNormal(pos, fb.tri, u, nu);
            const cos = nt[0] * nu[0] + nt[1] * nu[1] + nt[2] * nu[2];
            if (!(cos < RIDGE_COS)) continue;
            // a convex ridge: u's corner off the edge behind t's plane
            const o = 3 * offEdge(fb.tri, u, nP, nQ);
            if (
              !(
                nt[0] * (pos[o] - pos[P]) +
                  nt[1] * (pos[o + 1] - pos[P + 1]) +
                  nt[2] * (pos[o + 2] - pos[P + 2]) <
                0
              )
            )
              continue;
            // n ∝ d1 × d2, out of the fem body (along n_t + n_u)
            let nx = d1[1] * d2z - d1[2] * d2y;
            let ny = d1[2] * d2x - d1[0] * d2z;
            let nz = d1[0] * d2y - d1[1] * d2x;
            const len = Math.hypot(nx, ny, nz);
            const sign =
              nx * (nt[0] + nu[0]) + ny * (nt[1] + nu[1]) + nz * (nt[2] + nu[2]) < 0 ? -1 : 1;
            nx *= sign / len;
            ny *= sign / len;
            nz *= sign / len;
            // n within the ridge's arc of normals: n = α n_t + β n_u, α, β ≥ 0
            const na = nx * nt[0] + ny * nt[1] + nz * nt[2];
            const nb = nx * nu[0] + ny * nu[1] + nz * nu[2];
            if (na - cos * nb < 0 || nb - cos * na < 0) continue;
            // not within 5° of either face's normal: that face's points carry it there
            if (na > FACE_COS || nb > FACE_COS) continue;
            // and −n within the box edge's, against the outward normals b₁, b₂ of its two
            // faces (−n·b ≥ 0), or within 15° of one of them: the face lying across the ridge
            const f1 = (q & 1 ? 1 : -1) * (nx * R[a1] + ny * R[3 + a1] + nz * R[6 + a1]);
            const f2 = (q & 2 ? 1 : -1) * (nx * R[a2] + ny * R[3 + a2] + nz * R[6 + a2]);
            if (f1 > FACE_SIN || f2 > FACE_SIN) continue;
            for (let c = 0; c < 3; c++) x[c] = e0[c] + s * d1[c];
            const gap =
              nx * (x[0] - pos[P] - w * d2x) +
              ny * (x[1] - pos[P + 1] - w * d2y) +
              nz * (x[2] - pos[P + 2] - w * d2z);
            if (!(gap < margin && gap > -fb.depth)) continue;
            // side a the point (1 − w) x_P + w x_Q of triangle t (its corner i at weight 0)
            best[i] = 0;
            best[(i + 1) % 3] = 1 - w;
            best[(i + 2) % 3] = w;
            best[3] = gap;
            best[4] = nx;
            best[5] = ny;
            best[6] = nz;
            buffer.setPair(nP, body, shapeA, g.shape);
            const feature = (((this.rigidOf[g.shape] * T + t) * 3 + i) * 12 + 4 * a + q) & 0xffff;
            const k = this.push(t, fb, feature, x, 0, 0, count + 4 * a + q);
            // the body's first vertex shape with itself: a pair nothing else makes
            buffer.key[k] = contactKey(shapeA, shapeA, feature);
          }
        }
      }
    }
  }

  /**
   * The triangle of fb that the point x[o..o+2] (radius r, on body p) makes its contact
   * with (file comment), its query in this.best; −1 when none. pad: the query's reach
   * around the point (m, r included).
   */
  private nearestFace(
    x: Float64Array,
    o: number,
    p: number,
    r: number,
    fb: FaceSet,
    margin: number,
    pad: number,
  ): number {
    const pos = this.sys.pos;
    const root = fb.bvh.box;
    for (let c = 0; c < 3; c++) {
      if (x[o + c] < root[c] - pad || x[o + c] > root[3 + c] + pad) return -1;
      QUERY_BOX[c] = x[o + c] - pad;
      QUERY_BOX[3 + c] = x[o + c] + pad;
    }
    overlapping(fb.bvh);
    const off = this.sys.dofOffset;
    const fixed = off[p] < 0;
    let best = -1;
    let bestAbs = Number.POSITIVE_INFINITY;
    for (let j = 0; j < FOUND.count; j++) {
      const t = FOUND.tris[j];
      const n0 = fb.tri[3 * t];
      const n1 = fb.tri[3 * t + 1];
      const n2 = fb.tri[3 * t + 2];
      if (fixed && off[n0] < 0 && off[n1] < 0 && off[n2] < 0) continue;
      if (
        this.excluded.size > 0 &&
        (this.excluded.has(this.pairKey(p, n0)) ||
          this.excluded.has(this.pairKey(p, n1)) ||
          this.excluded.has(this.pairKey(p, n2)))
      )
        continue;
      if (!pointTriangle(pos, o, 3 * n0, 3 * n1, 3 * n2, x)) continue;
      const q = this.query;
      q.set(POINT_TRIANGLE);
      const f = this.facing;
      if (f[0] * q[4] + f[1] * q[5] + f[2] * q[6] > 0) continue;
      const g = q[3] - r;
      if (!(g < margin && g > -fb.depth) || Math.abs(g) >= bestAbs) continue;
      if (
        !withinReach(q, pos, 3 * n0, 3 * n1, 3 * n2, 0) &&
        !(
          g < 0 &&
          withinReach(q, pos, 3 * n0, 3 * n1, 3 * n2, -g) &&
          this.underRidges(x, o, r, fb, t)
        )
      )
        continue;
      clampWeights(q);
      best = t;
      bestAbs = Math.abs(g);
      this.best.set(q.subarray(0, 7));
    }
    return best;
  }

  /**
   * this.facing = Σ (x₁ − x₀) × (x₂ − x₀) over the surface triangles around vertex v of fem
   * body a (twice the area-weighted outward normal, unnormalized: only its sign against a
   * face normal is used; file comment, "Facing").
   */
  private vertexNormal(a: number, v: number): void {
    const { surface, nodeBodies } = this.vertices.bodies[a];
    const pos = this.sys.pos;
    const f = this.facing;
    f.fill(0);
    for (let q = surface.start[v]; q < surface.start[v + 1]; q++) {
      const t = 3 * surface.tri[q];
      const i = 3 * nodeBodies[surface.triangles[t]];
      const j = 3 * nodeBodies[surface.triangles[t + 1]];
      const k = 3 * nodeBodies[surface.triangles[t + 2]];
      const e1x = pos[j] - pos[i];
      const e1y = pos[j + 1] - pos[i + 1];
      const e1z = pos[j + 2] - pos[i + 2];
      const e2x = pos[k] - pos[i];
      const e2y = pos[k + 1] - pos[i + 1];
      const e2z = pos[k + 2] - pos[i + 2];
      f[0] += e1y * e2z - e1z * e2y;
      f[1] += e1z * e2x - e1x * e2z;
      f[2] += e1x * e2y - e1y * e2x;
    }
  }

  /**
   * Whether the point x[o..o+2] (radius r) lies under the ridge of triangle t with its
   * neighbour u across every edge its projection (this.query) lies beyond: behind u
   * (d′ − r < 0) and beyond the same edge seen from u (file comment).
   */
  private underRidges(x: Float64Array, o: number, r: number, fb: FaceSet, t: number): boolean {
    const pos = this.sys.pos;
    const tri = fb.tri;
    for (let i = 0; i < 3; i++) {
      if (this.query[i] >= 0) continue;
      const u = fb.across[3 * t + i];
      if (u < 0) return false;
      if (!pointTriangle(pos, o, 3 * tri[3 * u], 3 * tri[3 * u + 1], 3 * tri[3 * u + 2], x))
        return false;
      if (!(POINT_TRIANGLE[3] - r < 0)) return false;
      // u's corner off the shared edge: the one that is not a corner of t
      for (let j = 0; j < 3; j++) {
        const k = tri[3 * u + j];
        const shared = k === tri[3 * t] || k === tri[3 * t + 1] || k === tri[3 * t + 2];
        if (!shared && !(POINT_TRIANGLE[j] < 0)) return false;
      }
    }
    return true;
  }

  /**
   * Appends the contact of this.best with triangle t of fb, the point at x[pv..] of radius
   * r (point index `point` of a rigid shape, −1 for a vertex); returns its index.
   */
  private push(
    t: number,
    fb: FaceSet,
    feature: number,
    x: Float64Array,
    pv: number,
    r: number,
    point: number,
  ): number {
    const { best, record: c, buffer } = this;
    const g = best[3] - r;
    // point = p − (r + g/2) n, midway between the surface point p − r n and the projection
    for (let k = 0; k < 3; k++) {
      c[k] = x[pv + k] - (r + 0.5 * g) * best[4 + k];
      c[3 + k] = best[4 + k];
    }
    c[6] = g;
    const i = buffer.pushFrom(c, feature);
    if (3 * buffer.count > this.nodes.length) {
      this.nodes = extend(this.nodes, 3 * buffer.capacity);
      this.weights = extend(this.weights, 3 * buffer.capacity);
      this.pointOf = extend(this.pointOf, buffer.capacity);
    }
    for (let k = 0; k < 3; k++) {
      this.nodes[3 * i + k] = fb.tri[3 * t + k];
      this.weights[3 * i + k] = best[k];
    }
    this.pointOf[i] = point;
    return i;
  }

  /**
   * area[from + k] = the area of contact k, for every k (file comment): a vertex's vertex
   * area, a rigid point's share of its shape's surface (before shareTwoWay's share).
   */
  fillAreas(area: Float64Array, from: number): void {
    const { buffer } = this;
    for (let k = 0; k < buffer.count; k++) {
      const s = buffer.shapeB[k];
      area[from + k] =
        this.pointOf[k] < 0
          ? this.vertices.vertexArea(s, buffer.normal, 3 * k)
          : this.rigidArea(this.rigid[this.rigidOf[s]], k);
    }
  }

  /**
   * Scales the shares w of the contacts of two sets that cover one patch from both sides
   * (file comment, "Contact area"): body a's vertices on body b's faces (w[from + k] of this
   * buffer) with b's vertices on a's faces, and a rigid shape's points on a fem body's faces
   * (w[from + k]) with the body's vertices on the shape (the detector's contacts `detected`,
   * w[0 … count)). With S and S′ the two sets' sums of w, each contact of both takes
   *     max(S, S′) / (S + S′)
   * (½ for equal sets, ArtiSynth's two-way rule; 1 where the other set has none): the two
   * together then weigh max(S, S′), the set that covers the patch, and the weight moves
   * continuously from one way to two as the other set's contacts appear. w: each contact's
   * share of the patch (compliant.ts: its area, or its force under a law per contact).
   */
  shareTwoWay(detected: ContactBuffer, area: Float64Array, from: number): void {
    const { buffer, shared, ways, vertices } = this;
    const F = this.faces.length;
    for (let pass = 0; pass < 3; pass++) {
      // pass 0 sums each set's w, 1 scales them by twoWay, 2 clears the sums
      for (let i = 0; i < detected.count; i++) {
        const c = this.vertexCell(detected, i);
        if (c < 0) continue;
        if (pass === 0) shared[2 * c] += area[i];
        else if (pass === 1) area[i] *= twoWay(shared[2 * c], shared[2 * c + 1]);
        else shared[2 * c] = 0;
      }
      for (let k = 0; k < buffer.count; k++) {
        let mine: number;
        let theirs: number;
        if (this.pointOf[k] < 0) {
          // body a's vertex on body b's face, against b's vertices on a's faces
          const a = vertices.ownerOf(buffer.shapeB[k]);
          const b = vertices.ownerOf(buffer.shapeA[k]);
          mine = a * F + b;
          theirs = b * F + a;
        } else {
          const c = buffer.shapeB[k] * F + vertices.ownerOf(buffer.shapeA[k]);
          mine = 2 * c + 1;
          theirs = 2 * c;
        }
        const sums = this.pointOf[k] < 0 ? ways : shared;
        if (pass === 0) sums[mine] += area[from + k];
        else if (pass === 1) area[from + k] *= twoWay(sums[mine], sums[theirs]);
        else sums[mine] = 0;
      }
    }
  }

  /**
   * The `shared` cell of detector contact i between a fem vertex and a rigid shape with
   * points (file comment, "Rigid shapes"), or −1.
   */
  private vertexCell(detected: ContactBuffer, i: number): number {
    const a = detected.shapeA[i];
    const b = detected.shapeB[i];
    const vertices = this.vertices;
    const v = vertices.isVertex(a) ? a : vertices.isVertex(b) ? b : -1;
    if (v < 0) return -1;
    const s = v === a ? b : a;
    if (s >= this.rigidOf.length || this.rigidOf[s] < 0) return -1;
    return s * this.faces.length + vertices.ownerOf(v);
  }

  /** The area of contact k of rigid shape g's point on a fem face (file comment). */
  private rigidArea(g: RigidPoints, k: number): number {
    const { buffer } = this;
    const { pose } = g;
    const shape = g.inst.shape;
    const n = buffer.normal;
    switch (shape.type) {
      case "sphere":
        return roundContactArea(shape.radius, buffer.gap[k]);
      case "capsule":
        return capsuleSampleArea(
          shape.radius,
          shape.halfLength,
          this.pointOf[k],
          pose.R,
          n,
          3 * k,
          buffer.gap[k],
        );
      case "box": {
        const count = g.local.length / 3;
        const j = this.pointOf[k];
        if (j < count)
          return boxSampleArea(shape.halfExtents, g.intervals, g.local, 3 * j, pose.R, n, 3 * k);
        // edge 4a + q (boxEdges): its midpoint, on the same two faces as its samples
        const h = shape.halfExtents;
        const a = (j - count) >> 2;
        const q = (j - count) & 3;
        const x = this.edgeLocal;
        x[a] = 0;
        x[(a + 1) % 3] = q & 1 ? h[(a + 1) % 3] : -h[(a + 1) % 3];
        x[(a + 2) % 3] = q & 2 ? h[(a + 2) % 3] : -h[(a + 2) % 3];
        return boxSampleArea(h, g.intervals, x, 0, pose.R, n, 3 * k);
      }
      case "cylinder":
        return cylinderRimArea(shape.radius, shape.halfLength, pose.R, n, 3 * k);
      case "convex":
        return hullVertexArea(shape.hull, pose.p, pose.R, buffer.point, 3 * k, n, 3 * k, -1);
      case "mesh": {
        // ArtiSynth's vertex area of the mesh vertex, in the mesh's frame (Rᵀ n)
        const { mesh } = shape;
        const R = pose.R;
        const ln = this.localNormal;
        for (let c = 0; c < 3; c++)
          ln[c] = R[c] * n[3 * k] + R[3 + c] * n[3 * k + 1] + R[6 + c] * n[3 * k + 2];
        const v = this.pointOf[k];
        let count = 0;
        for (let q = mesh.vertexTriStart[v]; q < mesh.vertexTriStart[v + 1]; q++, count++) {
          const tri = mesh.vertexTris[q];
          for (let c = 0; c < 3; c++) {
            const w = 3 * mesh.triangles[3 * tri + c];
            for (let e = 0; e < 3; e++) this.corners[9 * count + 3 * c + e] = mesh.vertices[w + e];
          }
        }
        return vertexContactArea(this.corners, count, ln);
      }
      case "plane":
        return 0;
    }
  }
}

/**
 * The share of each contact of a set of weight `mine` against the other set, of weight
 * `theirs`, on one patch (FemFaceContacts.shareTwoWay): max/(sum), 1 without the other set.
 */
function twoWay(mine: number, theirs: number): number {
  return theirs > 0 ? Math.max(mine, theirs) / (mine + theirs) : 1;
}

/**
 * An edge–edge contact's normal is kept 5° off the normals of the ridge's two faces (file
 * comment, "Edges"): nearer, the contact is the face's, which its points (corners, samples,
 * vertices) carry, and a box lying flat across a block's rim would count the rim twice.
 */
const FACE_COS = Math.cos((5 * Math.PI) / 180);

/** A fold under 10° (n_t·n_u ≥ cos 10°) leaves no normal 5° off both faces': no ridge. */
const RIDGE_COS = Math.cos((10 * Math.PI) / 180);

/**
 * A contact normal within 15° of a box face's, beyond its edge's arc, stands for the face
 * lying across the ridge (file comment, "Edges"): sin 15°.
 */
const FACE_SIN = Math.sin((15 * Math.PI) / 180);

/** Edges at an angle of sine below 10⁻³ (sin² below this) are parallel (file comment, "Edges"). */
const PARALLEL = 1e-6;

/** out = the unit outward normal of triangle t of tri (node bodies) at positions x. */
function faceNormal(x: Float64Array, tri: Int32Array, t: number, out: Float64Array): void {
  triangleNormal(x, tri[3 * t], tri[3 * t + 1], tri[3 * t + 2], out);
  const l = Math.hypot(out[0], out[1], out[2]);
  out[0] /= l;
  out[1] /= l;
  out[2] /= l;
}

/** The node of triangle u of tri that is neither p nor q (the corner off their edge). */
function offEdge(tri: Int32Array, u: number, p: number, q: number): number {
  for (let c = 0; c < 3; c++) {
    const k = tri[3 * u + c];
    if (k !== p && k !== q) return k;
  }
  return tri[3 * u];
}

/** The largest |x| over the points (3 numbers each, m). */
function farthest(points: Float64Array): number {
  let r = 0;
  for (let o = 0; o < points.length; o += 3)
    r = Math.max(r, Math.hypot(points[o], points[o + 1], points[o + 2]));
  return r;
}

/** Whether the boxes a and b (min x, y, z, max x, y, z) are more than pad apart on an axis. */
function apart(a: Float64Array, b: Float64Array, pad: number): boolean {
  for (let c = 0; c < 3; c++) if (a[c] > b[3 + c] + pad || a[3 + c] < b[c] - pad) return true;
  return false;
}

/**
 * The triangle across each edge of each triangle of tri (node bodies below numBodies):
 * out[3t + i] for the edge opposite corner i, −1 on a boundary edge (a closed surface
 * has none; where more than two triangles share an edge, the last one seen).
 */
function neighbours(tri: Int32Array, numBodies: number): Int32Array {
  const byEdge = new Map<number, number[]>();
  const key = (t: number, i: number) => {
    const p = tri[3 * t + ((i + 1) % 3)];
    const q = tri[3 * t + ((i + 2) % 3)];
    return Math.min(p, q) * numBodies + Math.max(p, q);
  };
  const T = tri.length / 3;
  for (let t = 0; t < T; t++)
    for (let i = 0; i < 3; i++) {
      const k = key(t, i);
      const list = byEdge.get(k);
      if (list) list.push(t);
      else byEdge.set(k, [t]);
    }
  const out = new Int32Array(3 * T).fill(-1);
  for (let t = 0; t < T; t++)
    for (let i = 0; i < 3; i++)
      for (const u of byEdge.get(key(t, i)) ?? []) if (u !== t) out[3 * t + i] = u;
  return out;
}
