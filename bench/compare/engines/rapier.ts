/**
 * Rapier (`@dimforge/rapier3d-compat`, Rust compiled to WebAssembly) with its defaults:
 * impulse-based solver (soft-constraint PGS, default iteration counts), world.timestep =
 * scene.h, one world.step() per call, sleeping off on every body.
 *
 *  - S1: dynamic bodies with a ball collider (mass properties set exactly: m, 2/5 m r²),
 *    the box as one fixed body with five HalfSpace colliders (parry's half-space normal
 *    points out of the solid, into free space: the description's inward normal); friction
 *    0.5 and restitution 0 on every collider (average combine rule → 0.5 and 0).
 *  - H: each hull a ColliderDesc.convexHull of its points (Rapier's own hull, parry's
 *    quickhull) carrying the scene's exact mass and principal inertia (the points are in the
 *    principal frame); the terrain one fixed body with a ColliderDesc.trimesh with
 *    FIX_INTERNAL_EDGES (contact normals on shared edges corrected from the adjacent
 *    triangles: the flag Rapier documents against bumps on a mesh floor); friction 0.5,
 *    restitution 0 on every collider.
 *  - S2: bodies without colliders (no contacts) carrying the exact mass and principal
 *    inertia, spherical impulse joints (maximal coordinates); joint 0 to a fixed body at
 *    the origin.
 *  - S3: particles as dynamic bodies with locked rotations and no collider; the springs as
 *    Rapier spring joints (JointData.spring: a force-based motor on the anchor distance,
 *    rest length, stiffness N/m, damping N s/m), which the solver treats implicitly.
 */
import RAPIER from "@dimforge/rapier3d-compat";
import type { BodyDesc, SceneDesc } from "../scene";
import type { BodyStates, EngineAdapter, EngineInstance } from "./types";
import { packageVersion } from "./version";

const ZERO = { x: 0, y: 0, z: 0 };
const IDENTITY = { w: 1, x: 0, y: 0, z: 0 };

/** A dynamic body's collider shape: S1's ball or H's convex hull (Rapier computes the hull). */
function colliderShape(b: BodyDesc): RAPIER.ColliderDesc {
  if (b.sphereRadius !== undefined) return RAPIER.ColliderDesc.ball(b.sphereRadius);
  const hull = RAPIER.ColliderDesc.convexHull(new Float32Array((b.convexPoints ?? []).flat()));
  if (!hull) throw new Error(`rapier: no convex hull for the points of body ${b.id}`);
  return hull;
}

class RapierInstance implements EngineInstance {
  private readonly world: RAPIER.World;
  private readonly bodies: RAPIER.RigidBody[] = [];
  /** Colliders of the dynamic bodies (S1's spheres, H's hulls) and of the fixed geometry. */
  private readonly bodyColliders: RAPIER.Collider[] = [];
  private readonly staticColliders = new Set<number>();

  constructor(scene: SceneDesc) {
    const g = scene.gravity;
    this.world = new RAPIER.World({ x: g[0], y: g[1], z: g[2] });
    this.world.timestep = scene.h;
    const world = this.world;
    for (const b of scene.bodies) {
      const [w, x, y, z] = b.orientation;
      const desc = (b.fixed ? RAPIER.RigidBodyDesc.fixed() : RAPIER.RigidBodyDesc.dynamic())
        .setTranslation(b.position[0], b.position[1], b.position[2])
        .setRotation({ w, x, y, z })
        .setCanSleep(false);
      if (!b.fixed && b.kind === "particle") desc.lockRotations();
      const collides =
        scene.contact !== null && (b.sphereRadius !== undefined || b.convexPoints !== undefined);
      if (!b.fixed && !collides) {
        // No collider: the mass properties are given directly.
        const I = b.kind === "rigid" ? b.inertia : [0, 0, 0];
        desc.setAdditionalMassProperties(b.mass, ZERO, { x: I[0], y: I[1], z: I[2] }, IDENTITY);
      }
      const body = world.createRigidBody(desc);
      this.bodies.push(body);
      if (collides && scene.contact) {
        const c = colliderShape(b)
          .setMassProperties(
            b.mass,
            ZERO,
            { x: b.inertia[0], y: b.inertia[1], z: b.inertia[2] },
            IDENTITY,
          )
          .setFriction(scene.contact.friction)
          .setRestitution(scene.contact.restitution);
        this.bodyColliders.push(world.createCollider(c, body));
      }
    }
    if (scene.halfSpaces.length > 0 && scene.contact) {
      const box = world.createRigidBody(RAPIER.RigidBodyDesc.fixed());
      for (const hs of scene.halfSpaces) {
        const [nx, ny, nz] = hs.normal;
        const c = new RAPIER.ColliderDesc(new RAPIER.HalfSpace({ x: nx, y: ny, z: nz }))
          .setTranslation(nx * hs.offset, ny * hs.offset, nz * hs.offset)
          .setFriction(scene.contact.friction)
          .setRestitution(scene.contact.restitution);
        this.staticColliders.add(world.createCollider(c, box).handle);
      }
    }
    if (scene.terrain && scene.contact) {
      const t = scene.terrain;
      const c = RAPIER.ColliderDesc.trimesh(
        new Float32Array(t.vertices.flat()),
        new Uint32Array(t.triangles.flat()),
        RAPIER.TriMeshFlags.FIX_INTERNAL_EDGES,
      )
        .setFriction(scene.contact.friction)
        .setRestitution(scene.contact.restitution);
      const ground = world.createRigidBody(RAPIER.RigidBodyDesc.fixed());
      this.staticColliders.add(world.createCollider(c, ground).handle);
    }
    let anchor: RAPIER.RigidBody | null = null;
    for (const j of scene.joints) {
      let parent: RAPIER.RigidBody;
      let pa = j.pa;
      if (j.a < 0) {
        anchor ??= world.createRigidBody(RAPIER.RigidBodyDesc.fixed());
        parent = anchor;
        pa = j.pa; // the anchor body sits at the origin, so world = local
      } else parent = this.bodies[j.a];
      const data = RAPIER.JointData.spherical(
        { x: pa[0], y: pa[1], z: pa[2] },
        { x: j.pb[0], y: j.pb[1], z: j.pb[2] },
      );
      world.createImpulseJoint(data, parent, this.bodies[j.b], true);
    }
    for (const s of scene.springs) {
      const data = RAPIER.JointData.spring(s.rest, s.stiffness, s.damping, ZERO, ZERO);
      world.createImpulseJoint(data, this.bodies[s.a], this.bodies[s.b], true);
    }
  }

  step(): void {
    this.world.step();
  }

  read(out: BodyStates): void {
    this.bodies.forEach((b, i) => {
      const t = b.translation();
      const q = b.rotation();
      const v = b.linvel();
      const w = b.angvel();
      out.pos[3 * i] = t.x;
      out.pos[3 * i + 1] = t.y;
      out.pos[3 * i + 2] = t.z;
      out.quat[4 * i] = q.w;
      out.quat[4 * i + 1] = q.x;
      out.quat[4 * i + 2] = q.y;
      out.quat[4 * i + 3] = q.z;
      out.vel[3 * i] = v.x;
      out.vel[3 * i + 1] = v.y;
      out.vel[3 * i + 2] = v.z;
      out.omega[3 * i] = w.x;
      out.omega[3 * i + 1] = w.y;
      out.omega[3 * i + 2] = w.z;
    });
  }

  /** Solver contact points of the dynamic bodies' manifolds (each pair counted once). */
  engineContacts(): number | null {
    if (this.bodyColliders.length === 0) return null;
    let count = 0;
    const world = this.world;
    for (const c of this.bodyColliders)
      world.contactPairsWith(c, (other) => {
        if (!this.staticColliders.has(other.handle) && other.handle < c.handle) return;
        world.contactPair(c, other, (manifold) => {
          count += manifold.numSolverContacts();
        });
      });
    return count;
  }

  dispose(): void {
    this.world.free();
  }
}

export const rapierEngine: EngineAdapter = {
  key: "rapier",
  version: packageVersion("@dimforge/rapier3d-compat"),
  async init() {
    await RAPIER.init();
  },
  method(scene) {
    switch (scene.kind) {
      case "spheres":
        return "impulse solver (PGS, soft contacts), defaults";
      case "hulls":
        return "impulse solver, defaults; convexHull colliders, trimesh terrain (FIX_INTERNAL_EDGES)";
      case "chain":
        return "spherical impulse joints, defaults";
      case "cloth":
        return "spring joints (implicit force motors), defaults";
    }
  },
  create: (scene) => new RapierInstance(scene),
};
