/**
 * Contact between two deformable (`fem`) bodies: the surface vertices of each body with
 * `contact: true` against the surface triangles of every other such body (both
 * directions), after ArtiSynth's vertex penetration contact. Self-contact of one body is
 * not detected.
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
 * Pruning: each body's surface has a BVH over its triangles (geometry/bvh.ts), built at
 * the start and refitted to the node positions at every detection; a vertex outside B's
 * root box (padded) is skipped, else B's triangles whose boxes meet the vertex's box
 * padded by max(margin, depth_B) are tested. Cost O(V log T) per pair of bodies whose
 * root boxes meet, not O(V·T).
 * Known limits: contacts are vertex–face only (an edge of A crossing an edge of B with
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
 * third of each adjacent face's area projected on the plane ⊥ n) halved, since both
 * bodies' vertices collide with the other's faces and so both vertex sets cover the
 * contact patch (ArtiSynth's two-way contact rule).
 */
import { type Bvh, buildBvh, FOUND, overlapping, QUERY_BOX, refitBvh } from "../geometry/bvh";
import { ContactBuffer } from "../geometry/contact-buffer";
import {
  clampWeights,
  POINT_TRIANGLE,
  pointTriangle,
  withinReach,
} from "../geometry/point-triangle";
import { extend } from "../math/grow";
import type { BodySystem } from "../model/body-system";
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
}

export class FemFaceContacts {
  /** The contacts of the last detect() (file comment: a the triangle, b the vertex). */
  readonly buffer = new ContactBuffer(16);
  /** Node bodies of each contact's triangle (3 per contact). */
  nodes: Int32Array = new Int32Array(48);
  /** Barycentric weights of the vertex's projection on the triangle (3 per contact). */
  weights: Float64Array = new Float64Array(48);
  private readonly faces: FaceSet[];
  /** Attached (body, node) pairs that do not collide, as lo·numBodies + hi. */
  private readonly excluded: Set<number>;
  /** The best candidate of a vertex: w₀..w₂, d, n (as POINT_TRIANGLE). */
  private readonly best = new Float64Array(7);
  /** The query of the triangle being tested (POINT_TRIANGLE is reused for its neighbours). */
  private readonly query = new Float64Array(8);
  /** The contact being pushed: point, normal, gap (ContactBuffer.pushFrom). */
  private readonly record = new Float64Array(7);

  constructor(
    private readonly sys: BodySystem,
    readonly vertices: FemVertexContacts,
    excludedPairs: ReadonlyArray<readonly [number, number]> = [],
  ) {
    const pos = sys.pos;
    this.faces = vertices.bodies.map(({ surface, nodeBodies }) => {
      const tri = Int32Array.from(surface.triangles, (k) => nodeBodies[k]);
      let edge = Number.POSITIVE_INFINITY;
      for (let t = 0; t < tri.length; t += 3)
        for (let c = 0; c < 3; c++) {
          const p = 3 * tri[t + c];
          const q = 3 * tri[t + ((c + 1) % 3)];
          edge = Math.min(
            edge,
            Math.hypot(pos[q] - pos[p], pos[q + 1] - pos[p + 1], pos[q + 2] - pos[p + 2]),
          );
        }
      return {
        tri,
        across: neighbours(tri, sys.numBodies),
        vertexBody: Int32Array.from(surface.vertices, (k) => nodeBodies[k]),
        bvh: buildBvh(pos, tri),
        depth: 0.5 * edge,
      };
    });
    this.excluded = new Set(excludedPairs.map(([p, q]) => this.pairKey(p, q)));
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
        const root = fb.bvh.box;
        const ra = faces[a].bvh.box;
        let apart = false;
        for (let c = 0; c < 3; c++)
          if (ra[c] > root[3 + c] + pad || ra[3 + c] < root[c] - pad) apart = true;
        if (apart) continue;
        const shapeA = this.vertices.firstShape + this.vertices.shapeStart[b];
        const first = this.vertices.firstShape + this.vertices.shapeStart[a];
        const vb = faces[a].vertexBody;
        for (let v = 0; v < vb.length; v++) {
          const t = this.nearestFace(vb[v], fb, margin, pad);
          if (t < 0) continue;
          buffer.setPair(fb.tri[3 * t], vb[v], shapeA, first + v);
          this.push(t, fb, (2 * t + (a > b ? 1 : 0)) & 0xffff, 3 * vb[v]);
        }
      }
  }

  /**
   * The triangle of fb that vertex body p makes its contact with (file comment), its
   * query in this.best; −1 when none.
   */
  private nearestFace(p: number, fb: FaceSet, margin: number, pad: number): number {
    const pos = this.sys.pos;
    const root = fb.bvh.box;
    const o = 3 * p;
    for (let c = 0; c < 3; c++) {
      if (pos[o + c] < root[c] - pad || pos[o + c] > root[3 + c] + pad) return -1;
      QUERY_BOX[c] = pos[o + c] - pad;
      QUERY_BOX[3 + c] = pos[o + c] + pad;
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
      if (!pointTriangle(pos, o, 3 * n0, 3 * n1, 3 * n2)) continue;
      const q = this.query;
      q.set(POINT_TRIANGLE);
      const d = q[3];
      if (!(d < margin && d > -fb.depth) || Math.abs(d) >= bestAbs) continue;
      if (
        !withinReach(q, pos, 3 * n0, 3 * n1, 3 * n2, 0) &&
        !(d < 0 && withinReach(q, pos, 3 * n0, 3 * n1, 3 * n2, -d) && this.underRidges(o, fb, t))
      )
        continue;
      clampWeights(q);
      best = t;
      bestAbs = Math.abs(d);
      this.best.set(q.subarray(0, 7));
    }
    return best;
  }

  /**
   * Whether the point pos[o..o+2] lies under the ridge of triangle t with its neighbour u
   * across every edge its projection (this.query) lies beyond: behind u (d′ < 0) and
   * beyond the same edge seen from u (file comment).
   */
  private underRidges(o: number, fb: FaceSet, t: number): boolean {
    const pos = this.sys.pos;
    const tri = fb.tri;
    for (let i = 0; i < 3; i++) {
      if (this.query[i] >= 0) continue;
      const u = fb.across[3 * t + i];
      if (u < 0) return false;
      if (!pointTriangle(pos, o, 3 * tri[3 * u], 3 * tri[3 * u + 1], 3 * tri[3 * u + 2]))
        return false;
      if (!(POINT_TRIANGLE[3] < 0)) return false;
      // u's corner off the shared edge: the one that is not a corner of t
      for (let j = 0; j < 3; j++) {
        const k = tri[3 * u + j];
        const shared = k === tri[3 * t] || k === tri[3 * t + 1] || k === tri[3 * t + 2];
        if (!shared && !(POINT_TRIANGLE[j] < 0)) return false;
      }
    }
    return true;
  }

  /** Appends the contact of this.best with triangle t of fb, the vertex at pos[pv..]. */
  private push(t: number, fb: FaceSet, feature: number, pv: number): void {
    const { best, record: c, buffer } = this;
    const pos = this.sys.pos;
    const d = best[3];
    // point = p − (d/2) n, midway between p and its projection
    for (let k = 0; k < 3; k++) {
      c[k] = pos[pv + k] - 0.5 * d * best[4 + k];
      c[3 + k] = best[4 + k];
    }
    c[6] = d;
    const i = buffer.pushFrom(c, feature);
    if (3 * buffer.count > this.nodes.length) {
      this.nodes = extend(this.nodes, 3 * buffer.capacity);
      this.weights = extend(this.weights, 3 * buffer.capacity);
    }
    for (let k = 0; k < 3; k++) {
      this.nodes[3 * i + k] = fb.tri[3 * t + k];
      this.weights[3 * i + k] = best[k];
    }
  }

  /** area[from + k] = the halved vertex area (file comment) of contact k, for every k. */
  fillAreas(area: Float64Array, from: number): void {
    const { buffer } = this;
    for (let k = 0; k < buffer.count; k++)
      area[from + k] = this.vertices.vertexArea(buffer.shapeB[k], buffer.normal, 3 * k, true);
  }
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
