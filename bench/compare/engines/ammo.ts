/**
 * Bullet through `ammo.js` 0.0.10: an Emscripten asm.js build of Bullet 2.8x with a fixed
 * 64 MB heap (no memory growth), usable from Node (CommonJS). Only run on request
 * (`--engines ...,ammo`): the package is old and not the WebAssembly ammo a user would
 * pick today, but it is Bullet's discrete dynamics world as such.
 *
 * Set-up: btDiscreteDynamicsWorld with the default collision configuration, DBVT
 * broadphase and the sequential-impulse solver (10 iterations, its default);
 * stepSimulation(h, 0) (one internal step of exactly h); every body's deactivation off.
 *  - S1: btSphereShape (calculateLocalInertia: 2/5 m r²), the box as five
 *    btStaticPlaneShape bodies (n·x = offset, solid below). Bullet combines friction by
 *    product and restitution by product, so each collider carries √0.5 (→ 0.5) and 0.
 *  - H: each hull a btConvexHullShape (addPoint for every point) with its collision margin
 *    set to HULL_MARGIN = 1 mm instead of the default 4 cm, which Bullet adds around the
 *    hull (a 4–10 cm hull would stand 4 cm off the ground); the scene's exact mass and
 *    principal inertia passed to the construction info (calculateLocalInertia of a hull
 *    takes its bounding box's); the terrain a static btBvhTriangleMeshShape over a
 *    btTriangleMesh (quantized AABB compression, BVH built; margin 0, Bullet's default for
 *    concave shapes). No internal-edge correction: btAdjustInternalEdgeContacts needs a
 *    contact-added callback this build does not expose.
 *  - S2: btPoint2PointConstraint per joint (joint 0 as the one-body form, pinned to the
 *    world); links with a box shape in collision group 0 / mask 0 (never collide) and the
 *    exact principal inertia passed to the construction info.
 *  - S3: particles as bodies in group 0 / mask 0 (no collisions), the fixed row static;
 *    the springs computed in JavaScript before each step and applied with
 *    applyCentralForce (this Bullet build has no soft bodies; Bullet clears forces after
 *    each step), i.e. explicit springs, as a Bullet user would write them.
 */
import { createRequire } from "node:module";
import type { SceneDesc, Vec3 } from "../scene";
import type { BodyStates, EngineAdapter, EngineInstance } from "./types";
import { packageVersion } from "./version";

interface BtVector3 {
  x(): number;
  y(): number;
  z(): number;
  setValue(x: number, y: number, z: number): void;
}
interface BtQuaternion {
  x(): number;
  y(): number;
  z(): number;
  w(): number;
}
interface BtTransform {
  setIdentity(): void;
  setOrigin(v: BtVector3): void;
  setRotation(q: BtQuaternion): void;
  getOrigin(): BtVector3;
  getRotation(): BtQuaternion;
}
interface BtShape {
  calculateLocalInertia(mass: number, inertia: BtVector3): void;
}
interface BtConvexHullShape extends BtShape {
  addPoint(p: BtVector3): void;
  setMargin(m: number): void;
}
interface BtTriangleMesh {
  addTriangle(a: BtVector3, b: BtVector3, c: BtVector3): void;
}
interface BtRigidBody {
  getCenterOfMassTransform(): BtTransform;
  getLinearVelocity(): BtVector3;
  getAngularVelocity(): BtVector3;
  applyCentralForce(f: BtVector3): void;
  setFriction(f: number): void;
  setRestitution(r: number): void;
  setActivationState(s: number): void;
  setDamping(linear: number, angular: number): void;
}
interface BtManifold {
  getNumContacts(): number;
}
interface BtDispatcher {
  getNumManifolds(): number;
  getManifoldByIndexInternal(i: number): BtManifold;
}
interface BtWorld {
  setGravity(g: BtVector3): void;
  addRigidBody(b: BtRigidBody, group?: number, mask?: number): void;
  addConstraint(c: object, disableCollisionsBetweenLinkedBodies?: boolean): void;
  stepSimulation(dt: number, maxSubSteps: number, fixedStep?: number): number;
  getDispatcher(): BtDispatcher;
}
interface AmmoModule {
  btVector3: new (x: number, y: number, z: number) => BtVector3;
  btQuaternion: new (x: number, y: number, z: number, w: number) => BtQuaternion;
  btTransform: new () => BtTransform;
  btDefaultCollisionConfiguration: new () => object;
  btCollisionDispatcher: new (cfg: object) => BtDispatcher;
  btDbvtBroadphase: new () => object;
  btSequentialImpulseConstraintSolver: new () => object;
  btDiscreteDynamicsWorld: new (d: BtDispatcher, b: object, s: object, c: object) => BtWorld;
  btSphereShape: new (r: number) => BtShape;
  btBoxShape: new (half: BtVector3) => BtShape;
  btStaticPlaneShape: new (n: BtVector3, c: number) => BtShape;
  btConvexHullShape: new () => BtConvexHullShape;
  btTriangleMesh: new () => BtTriangleMesh;
  btBvhTriangleMeshShape: new (
    mesh: BtTriangleMesh,
    useQuantizedAabbCompression: boolean,
    buildBvh: boolean,
  ) => BtShape;
  btDefaultMotionState: new (t: BtTransform) => object;
  btRigidBodyConstructionInfo: new (
    m: number,
    ms: object,
    shape: BtShape,
    inertia: BtVector3,
  ) => object;
  btRigidBody: new (info: object) => BtRigidBody;
  btPoint2PointConstraint: {
    new (a: BtRigidBody, b: BtRigidBody, pa: BtVector3, pb: BtVector3): object;
    new (a: BtRigidBody, pa: BtVector3): object;
  };
  destroy(o: object): void;
}

const DISABLE_DEACTIVATION = 4;
/** Collision margin of H's hulls (m; see the file comment). */
const HULL_MARGIN = 1e-3;
let ammo: AmmoModule | null = null;

class AmmoInstance implements EngineInstance {
  private readonly world: BtWorld;
  private readonly bodies: BtRigidBody[] = [];
  private readonly scene: SceneDesc;
  private readonly hasContacts: boolean;
  private readonly force: BtVector3;
  /** Spring force accumulators (3 per body), refilled every step. */
  private readonly f: Float64Array;
  private readonly x: Float64Array;
  private readonly v: Float64Array;
  /** Every object allocated on the asm.js heap, freed by dispose() (the heap is fixed). */
  private readonly owned: object[] = [];
  private readonly A: AmmoModule;

  constructor(A: AmmoModule, scene: SceneDesc) {
    this.A = A;
    this.scene = scene;
    const own = <T extends object>(o: T): T => {
      this.owned.push(o);
      return o;
    };
    const hullShape = (points: readonly Vec3[]): BtConvexHullShape => {
      const hull = own(new A.btConvexHullShape());
      for (const p of points) hull.addPoint(own(new A.btVector3(...p)));
      hull.setMargin(HULL_MARGIN);
      return hull;
    };
    this.hasContacts = scene.contact !== null;
    const cfg = own(new A.btDefaultCollisionConfiguration());
    const dispatcher = own(new A.btCollisionDispatcher(cfg));
    this.world = own(
      new A.btDiscreteDynamicsWorld(
        dispatcher,
        own(new A.btDbvtBroadphase()),
        own(new A.btSequentialImpulseConstraintSolver()),
        cfg,
      ),
    );
    const g = scene.gravity;
    this.world.setGravity(own(new A.btVector3(g[0], g[1], g[2])));
    const friction = Math.sqrt(scene.contact?.friction ?? 0);
    const restitution = scene.contact?.restitution ?? 0;
    for (const b of scene.bodies) {
      const t = own(new A.btTransform());
      t.setIdentity();
      t.setOrigin(own(new A.btVector3(...b.position)));
      const [w, x, y, z] = b.orientation;
      t.setRotation(own(new A.btQuaternion(x, y, z, w)));
      const mass = b.fixed ? 0 : b.mass;
      const shape =
        b.sphereRadius !== undefined
          ? own(new A.btSphereShape(b.sphereRadius))
          : b.convexPoints !== undefined
            ? hullShape(b.convexPoints)
            : b.boxHalfExtents !== undefined
              ? own(new A.btBoxShape(own(new A.btVector3(...b.boxHalfExtents))))
              : own(new A.btSphereShape(1e-3));
      const inertia = own(new A.btVector3(0, 0, 0));
      if (!b.fixed) {
        if (b.sphereRadius !== undefined) shape.calculateLocalInertia(mass, inertia);
        else if (b.kind === "rigid") inertia.setValue(...b.inertia);
        else inertia.setValue(1e-9, 1e-9, 1e-9); // a particle: no torque ever acts
      }
      const info = own(
        new A.btRigidBodyConstructionInfo(mass, own(new A.btDefaultMotionState(t)), shape, inertia),
      );
      const body = own(new A.btRigidBody(info));
      body.setActivationState(DISABLE_DEACTIVATION);
      body.setDamping(0, 0);
      if (scene.contact && (b.sphereRadius !== undefined || b.convexPoints !== undefined)) {
        body.setFriction(friction);
        body.setRestitution(restitution);
        this.world.addRigidBody(body);
      } else this.world.addRigidBody(body, 0, 0);
      this.bodies.push(body);
    }
    const fixedShapes = scene.halfSpaces.map((hs) =>
      own(new A.btStaticPlaneShape(own(new A.btVector3(...hs.normal)), hs.offset)),
    );
    if (scene.terrain) {
      const mesh = own(new A.btTriangleMesh());
      const v = scene.terrain.vertices.map((p) => own(new A.btVector3(...p)));
      for (const [a, b, c] of scene.terrain.triangles) mesh.addTriangle(v[a], v[b], v[c]);
      fixedShapes.push(own(new A.btBvhTriangleMeshShape(mesh, true, true)));
    }
    for (const shape of fixedShapes) {
      const t = own(new A.btTransform());
      t.setIdentity();
      const info = own(
        new A.btRigidBodyConstructionInfo(
          0,
          own(new A.btDefaultMotionState(t)),
          shape,
          own(new A.btVector3(0, 0, 0)),
        ),
      );
      const wall = own(new A.btRigidBody(info));
      wall.setFriction(friction);
      wall.setRestitution(restitution);
      this.world.addRigidBody(wall);
    }
    for (const j of scene.joints) {
      const pb = own(new A.btVector3(...j.pb));
      const c =
        j.a < 0
          ? own(new A.btPoint2PointConstraint(this.bodies[j.b], pb))
          : own(
              new A.btPoint2PointConstraint(
                this.bodies[j.a],
                this.bodies[j.b],
                own(new A.btVector3(...j.pa)),
                pb,
              ),
            );
      this.world.addConstraint(c, true);
    }
    this.force = own(new A.btVector3(0, 0, 0));
    const n = scene.bodies.length;
    this.f = new Float64Array(3 * n);
    this.x = new Float64Array(3 * n);
    this.v = new Float64Array(3 * n);
  }

  /** f = −k (l − l0) − c l̇ along each spring, on the centres, from the current state. */
  private applySprings(): void {
    const { scene, bodies, f, x, v } = this;
    for (let i = 0; i < bodies.length; i++) {
      const o = bodies[i].getCenterOfMassTransform().getOrigin();
      x[3 * i] = o.x();
      x[3 * i + 1] = o.y();
      x[3 * i + 2] = o.z();
      const u = bodies[i].getLinearVelocity();
      v[3 * i] = u.x();
      v[3 * i + 1] = u.y();
      v[3 * i + 2] = u.z();
    }
    f.fill(0);
    const springs = scene.springs;
    for (let k = 0; k < springs.length; k++) {
      const s = springs[k];
      const a = 3 * s.a;
      const b = 3 * s.b;
      const dx = x[b] - x[a];
      const dy = x[b + 1] - x[a + 1];
      const dz = x[b + 2] - x[a + 2];
      const l = Math.sqrt(dx * dx + dy * dy + dz * dz);
      const ux = dx / l;
      const uy = dy / l;
      const uz = dz / l;
      const ldot = (v[b] - v[a]) * ux + (v[b + 1] - v[a + 1]) * uy + (v[b + 2] - v[a + 2]) * uz;
      const fm = -s.stiffness * (l - s.rest) - s.damping * ldot;
      f[b] += fm * ux;
      f[b + 1] += fm * uy;
      f[b + 2] += fm * uz;
      f[a] -= fm * ux;
      f[a + 1] -= fm * uy;
      f[a + 2] -= fm * uz;
    }
    for (let i = 0; i < bodies.length; i++) {
      if (scene.bodies[i].fixed) continue;
      this.force.setValue(f[3 * i], f[3 * i + 1], f[3 * i + 2]);
      bodies[i].applyCentralForce(this.force);
    }
  }

  step(): void {
    if (this.scene.springs.length > 0) this.applySprings();
    this.world.stepSimulation(this.scene.h, 0);
  }

  read(out: BodyStates): void {
    this.bodies.forEach((b, i) => {
      const t = b.getCenterOfMassTransform();
      const o = t.getOrigin();
      out.pos[3 * i] = o.x();
      out.pos[3 * i + 1] = o.y();
      out.pos[3 * i + 2] = o.z();
      const q = t.getRotation();
      out.quat[4 * i] = q.w();
      out.quat[4 * i + 1] = q.x();
      out.quat[4 * i + 2] = q.y();
      out.quat[4 * i + 3] = q.z();
      const v = b.getLinearVelocity();
      out.vel[3 * i] = v.x();
      out.vel[3 * i + 1] = v.y();
      out.vel[3 * i + 2] = v.z();
      const w = b.getAngularVelocity();
      out.omega[3 * i] = w.x();
      out.omega[3 * i + 1] = w.y();
      out.omega[3 * i + 2] = w.z();
    });
  }

  /** Contact points in the dispatcher's persistent manifolds. */
  engineContacts(): number | null {
    if (!this.hasContacts) return null;
    const d = this.world.getDispatcher();
    let n = 0;
    for (let i = 0; i < d.getNumManifolds(); i++)
      n += d.getManifoldByIndexInternal(i).getNumContacts();
    return n;
  }

  /** Frees every heap object, the world first (its destructor still reads its parts). */
  dispose(): void {
    const world = this.owned.indexOf(this.world);
    if (world >= 0) this.A.destroy(this.owned.splice(world, 1)[0]);
    for (let i = this.owned.length - 1; i >= 0; i--) this.A.destroy(this.owned[i]);
    this.owned.length = 0;
  }
}

export const ammoEngine: EngineAdapter = {
  key: "ammo",
  version: packageVersion("ammo.js"),
  async init() {
    if (!ammo) ammo = createRequire(import.meta.url)("ammo.js") as AmmoModule;
  },
  method(scene) {
    switch (scene.kind) {
      case "spheres":
        return "Bullet SI solver 10 it., DBVT (asm.js)";
      case "hulls":
        return "Bullet SI solver 10 it., btConvexHullShape (margin 1 mm) on btBvhTriangleMeshShape (asm.js)";
      case "chain":
        return "Bullet p2p constraints (asm.js)";
      case "cloth":
        return "JS springs + applyCentralForce (asm.js)";
    }
  },
  create(scene) {
    if (!ammo) throw new Error("ammo: init() was not awaited");
    return new AmmoInstance(ammo, scene);
  },
};
