/**
 * cannon-es (pure JavaScript) with its defaults: Gauss–Seidel solver (10 iterations, SPOOK
 * constraint stabilization), semi-implicit Euler, world.step(h) (one fixed step per call),
 * allowSleep false. Every body's linearDamping and angularDamping is set to 0 (cannon's
 * default 0.01 would add a damping the scenes do not have).
 *
 *  - S1: Sphere shapes (cannon computes 2/5 m r²), the box as one static body with five
 *    Plane shapes (a cannon plane is the half-space below its local +z: each is turned so
 *    +z is the inward normal); the default contact material with friction 0.5 and
 *    restitution 0; SAPBroadphase, cannon's documented choice for many bodies.
 *  - S2: bodies without shapes carrying the exact mass and principal inertia,
 *    PointToPointConstraint per joint, joint 0 to a static body at the origin.
 *  - S3: particles as bodies without shapes (3 dof in effect: no torque ever acts); the
 *    springs as cannon Spring objects whose applyForce() runs on every "preStep" event
 *    (after the constraint solve, before integration), the pattern of cannon's spring demo.
 *  S2 and S3 have nothing that collides, so their broadphase returns no pairs (as the
 *  other engines, which have no colliders there).
 */
import * as CANNON from "cannon-es";
import type { SceneDesc } from "../scene";
import type { BodyStates, EngineAdapter, EngineInstance } from "./types";
import { packageVersion } from "./version";

/** A broadphase that reports no pairs: for scenes where nothing collides. */
class NoBroadphase extends CANNON.Broadphase {
  override collisionPairs(_world: CANNON.World, _p1: CANNON.Body[], _p2: CANNON.Body[]): void {}
}

class CannonInstance implements EngineInstance {
  private readonly world: CANNON.World;
  private readonly bodies: CANNON.Body[] = [];
  private readonly springs: CANNON.Spring[] = [];
  private readonly hasContacts: boolean;
  private readonly h: number;

  constructor(scene: SceneDesc) {
    this.h = scene.h;
    const g = scene.gravity;
    const world = new CANNON.World({ gravity: new CANNON.Vec3(g[0], g[1], g[2]) });
    this.world = world;
    world.allowSleep = false;
    this.hasContacts = scene.contact !== null;
    if (scene.contact) {
      world.broadphase = new CANNON.SAPBroadphase(world);
      world.defaultContactMaterial.friction = scene.contact.friction;
      world.defaultContactMaterial.restitution = scene.contact.restitution;
    } else world.broadphase = new NoBroadphase();
    for (const b of scene.bodies) {
      const [w, x, y, z] = b.orientation;
      const body = new CANNON.Body({
        mass: b.fixed ? 0 : b.mass,
        type: b.fixed ? CANNON.Body.STATIC : CANNON.Body.DYNAMIC,
        position: new CANNON.Vec3(...b.position),
        quaternion: new CANNON.Quaternion(x, y, z, w),
        linearDamping: 0,
        angularDamping: 0,
        allowSleep: false,
      });
      if (b.sphereRadius !== undefined && scene.contact)
        body.addShape(new CANNON.Sphere(b.sphereRadius));
      else if (!b.fixed && b.kind === "rigid") {
        body.inertia.set(b.inertia[0], b.inertia[1], b.inertia[2]);
        body.invInertia.set(1 / b.inertia[0], 1 / b.inertia[1], 1 / b.inertia[2]);
        body.updateInertiaWorld(true);
      }
      world.addBody(body);
      this.bodies.push(body);
    }
    if (scene.halfSpaces.length > 0) {
      const box = new CANNON.Body({ mass: 0, type: CANNON.Body.STATIC });
      const zAxis = new CANNON.Vec3(0, 0, 1);
      for (const hs of scene.halfSpaces) {
        const n = new CANNON.Vec3(...hs.normal);
        const q = new CANNON.Quaternion();
        if (n.vsub(zAxis).length() < 1e-12) q.set(0, 0, 0, 1);
        else q.setFromVectors(zAxis, n);
        box.addShape(new CANNON.Plane(), n.scale(hs.offset), q);
      }
      world.addBody(box);
    }
    let anchor: CANNON.Body | null = null;
    for (const j of scene.joints) {
      if (j.a < 0 && !anchor) {
        anchor = new CANNON.Body({ mass: 0, type: CANNON.Body.STATIC });
        world.addBody(anchor);
      }
      const parent = j.a < 0 ? (anchor as CANNON.Body) : this.bodies[j.a];
      world.addConstraint(
        new CANNON.PointToPointConstraint(
          parent,
          new CANNON.Vec3(...j.pa),
          this.bodies[j.b],
          new CANNON.Vec3(...j.pb),
        ),
      );
    }
    for (const s of scene.springs)
      this.springs.push(
        new CANNON.Spring(this.bodies[s.a], this.bodies[s.b], {
          restLength: s.rest,
          stiffness: s.stiffness,
          damping: s.damping,
        }),
      );
    if (this.springs.length > 0) {
      const springs = this.springs;
      world.addEventListener("preStep", () => {
        for (let k = 0; k < springs.length; k++) springs[k].applyForce();
      });
    }
  }

  step(): void {
    this.world.step(this.h);
  }

  read(out: BodyStates): void {
    this.bodies.forEach((b, i) => {
      out.pos[3 * i] = b.position.x;
      out.pos[3 * i + 1] = b.position.y;
      out.pos[3 * i + 2] = b.position.z;
      out.quat[4 * i] = b.quaternion.w;
      out.quat[4 * i + 1] = b.quaternion.x;
      out.quat[4 * i + 2] = b.quaternion.y;
      out.quat[4 * i + 3] = b.quaternion.z;
      out.vel[3 * i] = b.velocity.x;
      out.vel[3 * i + 1] = b.velocity.y;
      out.vel[3 * i + 2] = b.velocity.z;
      out.omega[3 * i] = b.angularVelocity.x;
      out.omega[3 * i + 1] = b.angularVelocity.y;
      out.omega[3 * i + 2] = b.angularVelocity.z;
    });
  }

  /** Contact equations of the last step. */
  engineContacts(): number | null {
    return this.hasContacts ? this.world.contacts.length : null;
  }

  dispose(): void {}
}

export const cannonEngine: EngineAdapter = {
  key: "cannon",
  version: packageVersion("cannon-es"),
  async init() {},
  method(scene) {
    switch (scene.kind) {
      case "spheres":
        return "GS solver 10 it., SAP broadphase, defaults";
      case "chain":
        return "PointToPoint constraints, GS 10 it.";
      case "cloth":
        return "Spring forces (explicit), semi-implicit Euler";
      case "hulls":
        return "not run: no convex–trimesh collision (engines/index.ts)";
    }
  },
  create: (scene) => new CannonInstance(scene),
};
