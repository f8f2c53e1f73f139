/**
 * From a validated model to the collision layer's inputs: one ShapeInstance per body
 * shape (body index from the BodySystem; shapes on "ground" do not exist in the model, a
 * fixed body carries the floor), the body pairs that never collide (bodies joined by a
 * joint or motor unless contact.collideJointed), the fixed bodies, and the per-pair
 * restitution and friction (contact.pairs override the defaults, in either order of the
 * two ids; "ground" names the world).
 */
import type { ContactSpec, ModelSpec } from "../../../schemas/model";
import { femNodeId } from "../forces/fem/build";
import { CollisionDetector } from "../geometry/collide";
import { hullOfPoints } from "../geometry/hull";
import { meshOf } from "../geometry/mesh";
import type { Shape, ShapeInstance } from "../geometry/shapes";
import { BodyKind, type BodySystem } from "../model/body-system";
import { type FemVertexContacts, VERTEX_GROUP } from "./fem-vertices";

/** The collision shapes of every body, in model order. */
export function shapeInstances(model: ModelSpec, sys: BodySystem): ShapeInstance[] {
  const out: ShapeInstance[] = [];
  model.bodies.forEach((b) => {
    const body = sys.index.get(b.id);
    if (body === undefined) throw new Error(`contact: unknown body "${b.id}"`);
    for (const s of b.shapes) {
      let shape: Shape;
      switch (s.type) {
        case "sphere":
          shape = { type: "sphere", radius: s.radius };
          break;
        case "plane":
          shape = { type: "plane", normal: s.normal, offset: s.offset };
          break;
        case "box":
          shape = { type: "box", halfExtents: s.halfExtents };
          break;
        case "capsule":
          shape = { type: "capsule", radius: s.radius, halfLength: s.halfLength };
          break;
        case "cylinder":
          shape = { type: "cylinder", radius: s.radius, halfLength: s.halfLength };
          break;
        case "convex":
          shape = { type: "convex", hull: hullOfPoints(s.points) };
          break;
        case "mesh":
          shape = { type: "mesh", mesh: meshOf(s.vertices, s.triangles) };
          break;
      }
      out.push({
        shape,
        body,
        localPosition: s.position,
        localOrientation: s.orientation,
      });
    }
  });
  return out;
}

/** Body index of an id for the contact layer ("ground" → −1). */
export function contactBodyIndex(sys: BodySystem, id: string): number {
  if (id === "ground") return -1;
  const b = sys.index.get(id);
  if (b === undefined) throw new Error(`contact: unknown body "${id}"`);
  return b;
}

/** The body indices of the nodes "<id>/<k>" of the fem body `id` (none: not a fem id). */
function femNodes(sys: BodySystem, id: string): number[] {
  const out: number[] = [];
  for (let k = 0; sys.index.has(femNodeId(id, k)); k++)
    out.push(sys.index.get(femNodeId(id, k)) as number);
  return out;
}

/**
 * Pairs of bodies joined by a joint (and so by its motors), and the fem nodes with the
 * bodies they are attached to (a gripped vertex does not push against the gripper), unless
 * collideJointed.
 */
export function jointedPairs(model: ModelSpec, sys: BodySystem): Array<[number, number]> {
  const contact = model.contact;
  if (!contact || contact.collideJointed) return [];
  const pairs = model.joints.map(
    (j) => [contactBodyIndex(sys, j.a.body), contactBodyIndex(sys, j.b.body)] as [number, number],
  );
  for (const f of model.fem)
    for (const a of f.attachments)
      pairs.push([contactBodyIndex(sys, a.body), contactBodyIndex(sys, femNodeId(f.id, a.node))]);
  return pairs;
}

/**
 * The detector of a model's shapes (margin from contact.margin), followed by the points of
 * the fem surfaces that collide (`vertices`, one collision group: fem-vertices.ts).
 */
export function createDetector(
  model: ModelSpec,
  sys: BodySystem,
  vertices?: FemVertexContacts,
): CollisionDetector {
  const fixed: number[] = [];
  for (let b = 0; b < sys.numBodies; b++) if (sys.kind[b] === BodyKind.FIXED) fixed.push(b);
  const shapes = shapeInstances(model, sys);
  const groups = new Int32Array(shapes.length + (vertices?.shapes.length ?? 0));
  if (vertices) {
    vertices.firstShape = shapes.length;
    groups.fill(VERTEX_GROUP, shapes.length);
    for (const v of vertices.shapes) shapes.push(v);
  }
  return new CollisionDetector(shapes, {
    margin: model.contact?.margin ?? 0,
    excludedPairs: jointedPairs(model, sys),
    fixedBodies: fixed,
    groups,
  });
}

/**
 * Bounding radius of every body's shapes about its centre of mass (m): the largest
 * distance of a point of a bounded shape from the body origin (planes: 0, they move only
 * with fixed bodies in practice). Used to bound contact point speeds |v| + |ω| ρ.
 */
export function boundingRadii(shapes: readonly ShapeInstance[], numBodies: number): Float64Array {
  const rho = new Float64Array(numBodies);
  for (const inst of shapes) {
    if (inst.body < 0) continue;
    const p = inst.localPosition ?? [0, 0, 0];
    const c = Math.hypot(p[0], p[1], p[2]);
    const s = inst.shape;
    let ext = 0;
    if (s.type === "sphere") ext = s.radius;
    else if (s.type === "box")
      ext = Math.hypot(s.halfExtents[0], s.halfExtents[1], s.halfExtents[2]);
    else if (s.type === "capsule") ext = s.halfLength + s.radius;
    else if (s.type === "cylinder") ext = Math.hypot(s.halfLength, s.radius);
    else if (s.type === "convex") ext = s.hull.radius;
    else if (s.type === "mesh") ext = s.mesh.radius;
    else continue;
    rho[inst.body] = Math.max(rho[inst.body], c + ext);
  }
  return rho;
}

/**
 * Restitution e and friction μ of each body pair: the defaults unless a contact.pairs
 * entry names the pair. An id names a body ("ground" the world) or a fem body as a whole:
 * its nodes "<id>/<k>" form one group (numBodies + g), so a pair naming two fem bodies is
 * one entry, not one per node pair (4000 × 4000 of them for two large bodies). Lookup of
 * bodies a, b: the pair (a, b) itself, else (group a, group b), (group a, b),
 * (a, group b) — a pair naming a node wins over one naming its fem body. O(1) each (a
 * map on a packed pair key).
 */
export class PairParameters {
  restitution = 0;
  friction = 0;
  private readonly pairE = new Map<number, number>();
  private readonly pairMu = new Map<number, number>();
  private readonly stride: number;
  /** The group of each body named through its fem id (−1: none), and whether any is. */
  private readonly group: Int32Array;
  private grouped = false;

  constructor(
    private readonly sys: BodySystem,
    spec: Pick<ContactSpec, "restitution" | "friction" | "pairs">,
  ) {
    // body indices −1 … numBodies − 1 and groups numBodies … 2 numBodies − 1, shifted by 1
    this.stride = 2 * sys.numBodies + 2;
    this.group = new Int32Array(sys.numBodies).fill(-1);
    this.set(spec);
  }

  /** Replaces the defaults and, when given, the pair overrides. */
  set(spec: Partial<Pick<ContactSpec, "restitution" | "friction" | "pairs">>): void {
    if (spec.restitution !== undefined) this.restitution = spec.restitution;
    if (spec.friction !== undefined) this.friction = spec.friction;
    if (spec.pairs !== undefined) {
      this.pairE.clear();
      this.pairMu.clear();
      this.group.fill(-1);
      this.grouped = false;
      const groups = new Map<string, number>();
      const operand = (id: string): number => {
        if (id === "ground" || this.sys.index.has(id)) return contactBodyIndex(this.sys, id);
        let g = groups.get(id);
        if (g === undefined) {
          const nodes = femNodes(this.sys, id);
          if (nodes.length === 0) throw new Error(`contact: unknown body "${id}"`);
          g = this.sys.numBodies + groups.size;
          groups.set(id, g);
          for (const n of nodes) this.group[n] = g;
          this.grouped = true;
        }
        return g;
      };
      for (const p of spec.pairs) {
        const k = this.key(operand(p.bodies[0]), operand(p.bodies[1]));
        if (p.restitution !== undefined) this.pairE.set(k, p.restitution);
        if (p.friction !== undefined) this.pairMu.set(k, p.friction);
      }
    }
  }

  private key(a: number, b: number): number {
    const lo = Math.min(a, b) + 1;
    const hi = Math.max(a, b) + 1;
    return lo * this.stride + hi;
  }

  restitutionOf(a: number, b: number): number {
    if (this.pairE.size === 0) return this.restitution;
    return this.lookup(this.pairE, a, b) ?? this.restitution;
  }

  frictionOf(a: number, b: number): number {
    if (this.pairMu.size === 0) return this.friction;
    return this.lookup(this.pairMu, a, b) ?? this.friction;
  }

  /** The entry of bodies a, b in `map` (class comment: the pair, then their groups). */
  private lookup(map: Map<number, number>, a: number, b: number): number | undefined {
    const v = map.get(this.key(a, b));
    if (v !== undefined || !this.grouped) return v;
    const ga = a >= 0 && this.group[a] >= 0 ? this.group[a] : a;
    const gb = b >= 0 && this.group[b] >= 0 ? this.group[b] : b;
    if (ga === a && gb === b) return undefined;
    return (
      map.get(this.key(ga, gb)) ??
      (ga !== a ? map.get(this.key(ga, b)) : undefined) ??
      (gb !== b ? map.get(this.key(a, gb)) : undefined)
    );
  }

  /** True when some pair (or the default) has e > 0 (integrators/impact-events.ts). */
  anyRestitution(): boolean {
    if (this.restitution > 0) return true;
    for (const e of this.pairE.values()) if (e > 0) return true;
    return false;
  }

  /** True when some pair (or the default) has μ > 0. */
  anyFriction(): boolean {
    if (this.friction > 0) return true;
    for (const m of this.pairMu.values()) if (m > 0) return true;
    return false;
  }
}
