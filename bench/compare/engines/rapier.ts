/**
 * Rapier (`@dimforge/rapier3d-compat`, Rust compiled to WebAssembly) with its defaults:
 * impulse-based solver (soft-constraint PGS, default iteration counts), world.timestep =
 * scene.h, one world.step() per call, sleeping off on every body.
 *
 *  - S1: dynamic bodies with a ball collider (mass properties set exactly: m, 2/5 m r²),
 *    the box as one fixed body with five HalfSpace colliders (parry's half-space normal
 *    points out of the solid, into free space: the description's inward normal); friction
 *    0.5 and restitution 0 on every collider (average combine rule → 0.5 and 0).
 *  - S2: bodies without colliders (no contacts) carrying the exact mass and principal
 *    inertia, spherical impulse joints (maximal coordinates); joint 0 to a fixed body at
 *    the origin.
 *  - S3: particles as dynamic bodies with locked rotations and no collider; the springs as
 *    Rapier spring joints (JointData.spring: a force-based motor on the anchor distance,
 *    rest length, stiffness N/m, damping N s/m), which the solver treats implicitly.
 */
import RAPIER from "@dimforge/rapier3d-compat";
import type { SceneDesc } from "../scene";
import type { BodyStates, EngineAdapter, EngineInstance } from "./types";
import { packageVersion } from "./version";

const ZERO = { x: 0, y: 0, z: 0 };
const IDENTITY = { w: 1, x: 0, y: 0, z: 0 };

class RapierInstance implements EngineInstance {
  private readonly world: RAPIER.World;
  private readonly bodies: RAPIER.RigidBody[] = [];
  private readonly sphereColliders: RAPIER.Collider[] = [];
  private readonly wallColliders = new Set<number>();

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
      if (!b.fixed && b.sphereRadius === undefined) {
        // No collider: the mass properties are given directly.
        const I = b.kind === "rigid" ? b.inertia : [0, 0, 0];
        desc.setAdditionalMassProperties(b.mass, ZERO, { x: I[0], y: I[1], z: I[2] }, IDENTITY);
      }
      const body = world.createRigidBody(desc);
      this.bodies.push(body);
      if (b.sphereRadius !== undefined && scene.contact) {
        const c = RAPIER.ColliderDesc.ball(b.sphereRadius)
          .setMassProperties(
            b.mass,
            ZERO,
            { x: b.inertia[0], y: b.inertia[1], z: b.inertia[2] },
            IDENTITY,
          )
          .setFriction(scene.contact.friction)
          .setRestitution(scene.contact.restitution);
        this.sphereColliders.push(world.createCollider(c, body));
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
        this.wallColliders.add(world.createCollider(c, box).handle);
      }
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

  /** Solver contact points of the spheres' manifolds (each pair counted once). */
  engineContacts(): number | null {
    if (this.sphereColliders.length === 0) return null;
    let count = 0;
    const world = this.world;
    for (const c of this.sphereColliders)
      world.contactPairsWith(c, (other) => {
        if (!this.wallColliders.has(other.handle) && other.handle < c.handle) return;
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
      case "chain":
        return "spherical impulse joints, defaults";
      case "cloth":
        return "spring joints (implicit force motors), defaults";
    }
  },
  create: (scene) => new RapierInstance(scene),
};
