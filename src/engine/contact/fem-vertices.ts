/**
 * Vertex contact of deformable (`fem`) bodies: every surface vertex of a fem body with
 * `contact: true` enters the collision detector as a point, a sphere of radius 0 on the
 * vertex's node particle, so the existing pair functions (sphere against plane, sphere,
 * box, capsule, cylinder) find its contacts with the analytic shapes of the rigid and
 * fixed bodies, and both contact methods treat it as any particle contact: the compliant
 * behaviors (compliant.ts) and the Moreau–Jean nonsmooth problem (nonsmooth-contact.ts).
 *
 * Vertices never collide with vertices (their shapes share one collision group,
 * CollisionOptions.groups): a point meets a point only by accident, and neighbouring
 * nodes of one body are separate particles that the body-pair filter would otherwise
 * pair. Two fem surfaces meet vertex against face instead (fem-faces.ts).
 *
 * Contact area of a vertex (compliant contact), after ArtiSynth's ContactForceBehavior:
 *   A = (1/3) Σ_f |((x₁ − x₀) × (x₂ − x₀))·n| / 2
 * over the surface triangles f around the vertex at the current node positions, i.e. one
 * third of each adjacent face's area projected on the plane normal to the contact normal
 * n (area.ts vertexContactArea); shared for two-way contact, the fem–fem contacts of
 * fem-faces.ts where each body's vertices meet the other's faces, and for an analytic
 * shape only where its points meet the body's faces too (fem-faces.ts shareTwoWay: ½ for
 * two sets of equal area; under a law per contact the force takes the share instead:
 * compliant.ts `share`). A flat
 * face's vertices then share its area exactly: each triangle's three vertices take one
 * third each.
 */
import { nodeBodies, type PreparedFem } from "../forces/fem/build";
import type { FemSurface } from "../forces/fem/surface";
import type { ContactBuffer } from "../geometry/contact-buffer";
import type { ShapeInstance } from "../geometry/shapes";
import type { BodySystem } from "../model/body-system";
import { vertexContactArea } from "./area";

/** A fem body's surface and the BodySystem index of each of its nodes. */
export interface FemContactBody {
  surface: FemSurface;
  nodeBodies: Int32Array;
}

/** The collision group of vertex shapes (CollisionOptions.groups; 0 is "no group"). */
export const VERTEX_GROUP = 1;

const POINT = { type: "sphere", radius: 0 } as const;

export class FemVertexContacts {
  /** One point shape per surface vertex, in body order (body i's from shapeStart[i]). */
  readonly shapes: ShapeInstance[] = [];
  /** Index in `shapes` of each body's first vertex (bodies.length + 1 entries). */
  readonly shapeStart: Int32Array;
  /** Index in the detector's shape list of shapes[0] (set by setup.ts createDetector). */
  firstShape = 0;
  /** Per vertex shape: its body (index in `bodies`) and vertex (index in its surface). */
  private readonly owner: Int32Array;
  private readonly vertex: Int32Array;
  /** Corners of the triangles around one vertex (9 per triangle), for vertexContactArea. */
  private corners = new Float64Array(9 * 16);
  private readonly n = new Float64Array(3);

  constructor(
    private readonly sys: BodySystem,
    readonly bodies: readonly FemContactBody[],
  ) {
    const owner: number[] = [];
    const vertex: number[] = [];
    this.shapeStart = new Int32Array(bodies.length + 1);
    bodies.forEach((f, i) => {
      this.shapeStart[i] = this.shapes.length;
      const s = f.surface;
      for (let v = 0; v < s.vertices.length; v++) {
        const body = f.nodeBodies[s.vertices[v]];
        // a fixed node meets only moving shapes; kept: a moving rigid body may hit it
        this.shapes.push({ shape: POINT, body });
        owner.push(i);
        vertex.push(v);
        const around = s.start[v + 1] - s.start[v];
        if (9 * around > this.corners.length) this.corners = new Float64Array(9 * around);
      }
    });
    this.shapeStart[bodies.length] = this.shapes.length;
    this.owner = Int32Array.from(owner);
    this.vertex = Int32Array.from(vertex);
  }

  /** The fem body (index in `bodies`) of fem vertex shape `s` (a detector shape index). */
  ownerOf(s: number): number {
    return this.owner[s - this.firstShape];
  }

  /** Whether detector shape `s` is a fem vertex. */
  isVertex(s: number): boolean {
    return s >= this.firstShape && s < this.firstShape + this.shapes.length;
  }

  /**
   * ArtiSynth's vertex area (file comment) of fem vertex shape `s` for the unit normal
   * normal[no..no+2], at the current node positions (m²).
   */
  vertexArea(s: number, normal: ArrayLike<number>, no: number): number {
    const k = s - this.firstShape;
    const f = this.bodies[this.owner[k]];
    const { surface, nodeBodies } = f;
    const v = this.vertex[k];
    const pos = this.sys.pos;
    const corners = this.corners;
    let count = 0;
    for (let q = surface.start[v]; q < surface.start[v + 1]; q++, count++) {
      const t = 3 * surface.tri[q];
      for (let c = 0; c < 3; c++) {
        const p = 3 * nodeBodies[surface.triangles[t + c]];
        corners[9 * count + 3 * c] = pos[p];
        corners[9 * count + 3 * c + 1] = pos[p + 1];
        corners[9 * count + 3 * c + 2] = pos[p + 2];
      }
    }
    const n = this.n;
    n[0] = normal[no];
    n[1] = normal[no + 1];
    n[2] = normal[no + 2];
    return vertexContactArea(corners, count, n);
  }

  /**
   * Replaces area[i] of the contacts 0..buf.count−1 that involve a fem vertex by its
   * vertex area (one side only: vertices do not meet vertices, so there is no two-way
   * contact to halve).
   */
  fillAreas(buf: ContactBuffer, area: Float64Array): void {
    for (let i = 0; i < buf.count; i++) {
      const s = this.isVertex(buf.shapeA[i]) ? buf.shapeA[i] : buf.shapeB[i];
      if (this.isVertex(s)) area[i] = this.vertexArea(s, buf.normal, 3 * i);
    }
  }
}

/** The vertex contacts of the fem bodies with `contact: true`, or undefined when none has. */
export function femVertexContacts(
  prepared: readonly PreparedFem[],
  sys: BodySystem,
): FemVertexContacts | undefined {
  const bodies = prepared
    .filter((p) => p.spec.contact)
    .map((p) => ({ surface: p.surface, nodeBodies: nodeBodies(sys, p) }));
  return bodies.length > 0 ? new FemVertexContacts(sys, bodies) : undefined;
}
