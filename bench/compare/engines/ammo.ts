/**
 * Bullet through `ammojs-typed` 1.1.0 (issue 29): the WebAssembly build of ammo.js (Bullet
 * 2.8x, soft bodies included, single precision: btScalar is float) with its TypeScript
 * declarations, the build a JavaScript user picks today. `ammojs-typed/wasm` exports a
 * function that instantiates the module and resolves to its API: init() awaits it once per
 * process (not timed).
 *
 * Rigid scenes (S1, S2, H): btDiscreteDynamicsWorld with the default collision configuration, DBVT
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
 *
 * S3, the cloth: one btSoftBody in a btSoftRigidDynamicsWorld (btSoftBodyRigidBodyCollision-
 * Configuration, btDefaultSoftBodySolver), gravity set on the world info (which the soft
 * body reads), one stepSimulation(h, 0) per step, deactivation off. Nodes appended in the
 * description's order with the scene's mass (1/1024 kg), the fixed row setMass(i, 0)
 * (inverse mass 0: Bullet never moves it); one link per scene spring (structural and
 * shear, none between two fixed nodes), rest length the initial distance = the scene's.
 * Bullet's links are not springs: each step it predicts x* = x + h (v + h g) (semi-
 * implicit Euler), then projects positions piterations times (Gauss–Seidel over the links),
 * moving both ends of a link along it by the fraction kLST of its length error split by
 * inverse mass, and sets v = (x − x_prev) / h (1 − kDP): position-based dynamics, whose
 * stiffness depends on kLST, the iterations, h and the masses, not on a k in N/m. There is
 * no damping along a link (the scene's 0.01 N s/m has no counterpart; kDP, a damping of
 * the absolute velocity that would also slow the fall, stays 0).
 * The mapping of k (clothLinkSettings), chosen on the static sag, which a converged run
 * reaches whatever the damping (a static state has v = 0, so the projection alone sets it):
 *  - k = 10 N/m: piterations 1 (Bullet's default) and kLST = 0.285, chosen from a scan of
 *    kLST (0.05 to 1, refined between 0.28 and 0.29) so that the cloth at rest (settled with kDP > 0, which does not move the static state)
 *    hangs as low as Moreau's converged static state of the scene (Newmark to tolerance,
 *    settled with velocityDamping): lowest z −1.2615 m against Moreau's −1.2604 m (largest
 *    structural strain 0.589 against 0.678: PBD spreads the stretch differently). It is
 *    close to what XPBD gives for one iteration, kLST = k h² w / (1 + k h² w) = 0.26 with
 *    w = 2/m the inverse-mass sum of two interior nodes.
 *  - k = 1e4 N/m: kLST = 1 (k h² w = 356: XPBD's fraction 0.997, i.e. rigid links) and
 *    piterations 10, the value of three.js's ammo.js cloth example (which also sets 10
 *    velocity iterations; they stay at Bullet's 0 here, positions only). A PBD cloth stretches
 *    more than the spring cloth with few iterations: at rest its lowest z is −1.0063 m
 *    (largest strain 0.018) against Moreau's −1.0004 m (strain 0.001); 20 iterations
 *    give −1.0031 m (0.008), 4 iterations −1.0156 m (0.047), 1 iteration −1.060 m (0.23).
 */
import type AmmoModule from "ammojs-typed/wasm";
import type { SceneDesc, Vec3 } from "../scene";
import type { BodyStates, EngineAdapter, EngineInstance } from "./types";
import { packageVersion } from "./version";

/** The instantiated module (the package's default export resolves to it). */
type Ammo = typeof AmmoModule;
type BtRigidBody = AmmoModule.btRigidBody;
type BtConvexHullShape = AmmoModule.btConvexHullShape;

const DISABLE_DEACTIVATION = 4;
/** Collision margin of H's hulls (m; see the file comment). */
const HULL_MARGIN = 1e-3;
/** S3's soft cloth stiffness (N/m); anything stiffer gets the stiff cloth's link settings. */
const SOFT_CLOTH_STIFFNESS = 10;
const SOFT_CLOTH_LINKS = { kLST: 0.285, piterations: 1 };
const STIFF_CLOTH_LINKS = { kLST: 1, piterations: 10 };
let ammo: Ammo | null = null;

/**
 * Every object a scene allocates on the wasm heap (Emscripten objects are not garbage
 * collected), freed by dispose(): the world first (its destructor still reads the
 * broadphase and the collision objects), then the rest in reverse order of creation.
 */
abstract class AmmoHeap {
  private readonly owned: object[] = [];
  protected abstract readonly world: object;

  constructor(protected readonly A: Ammo) {}

  protected readonly own = <T extends object>(o: T): T => {
    this.owned.push(o);
    return o;
  };

  dispose(): void {
    const world = this.owned.indexOf(this.world);
    if (world >= 0) this.A.destroy(this.owned.splice(world, 1)[0]);
    for (let i = this.owned.length - 1; i >= 0; i--) this.A.destroy(this.owned[i]);
    this.owned.length = 0;
  }
}

/** S1, S2, H: rigid bodies in a btDiscreteDynamicsWorld. */
class AmmoRigidInstance extends AmmoHeap implements EngineInstance {
  protected readonly world: AmmoModule.btDiscreteDynamicsWorld;
  private readonly bodies: BtRigidBody[] = [];
  private readonly scene: SceneDesc;
  private readonly hasContacts: boolean;

  constructor(A: Ammo, scene: SceneDesc) {
    super(A);
    this.scene = scene;
    const own = this.own;
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
      let shape: AmmoModule.btCollisionShape;
      if (b.sphereRadius !== undefined) shape = own(new A.btSphereShape(b.sphereRadius));
      else if (b.convexPoints !== undefined) shape = hullShape(b.convexPoints);
      else if (b.boxHalfExtents !== undefined)
        shape = own(new A.btBoxShape(own(new A.btVector3(...b.boxHalfExtents))));
      else throw new Error(`ammo: body ${b.id} has no sphere, hull or box shape`);
      const inertia = own(new A.btVector3(0, 0, 0));
      if (!b.fixed) {
        if (b.sphereRadius !== undefined) shape.calculateLocalInertia(mass, inertia);
        else inertia.setValue(...b.inertia);
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
  }

  step(): void {
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
}

/**
 * Bullet's position-based link solver for a cloth of link stiffness k (N/m): the linear
 * stiffness coefficient kLST ∈ (0, 1] of every link and the position iterations per step
 * (see the file comment for how they were chosen).
 */
export function clothLinkSettings(stiffness: number): { kLST: number; piterations: number } {
  return stiffness <= SOFT_CLOTH_STIFFNESS ? SOFT_CLOTH_LINKS : STIFF_CLOTH_LINKS;
}

/** S3: the cloth as one btSoftBody (nodes and links) in a btSoftRigidDynamicsWorld. */
class AmmoClothInstance extends AmmoHeap implements EngineInstance {
  protected readonly world: AmmoModule.btSoftRigidDynamicsWorld;
  private readonly cloth: AmmoModule.btSoftBody;
  private readonly h: number;

  constructor(A: Ammo, scene: SceneDesc) {
    super(A);
    const own = this.own;
    this.h = scene.h;
    const cfg = own(new A.btSoftBodyRigidBodyCollisionConfiguration());
    this.world = own(
      new A.btSoftRigidDynamicsWorld(
        own(new A.btCollisionDispatcher(cfg)),
        own(new A.btDbvtBroadphase()),
        own(new A.btSequentialImpulseConstraintSolver()),
        cfg,
        own(new A.btDefaultSoftBodySolver()),
      ),
    );
    // The soft body reads its gravity from the world info (Bullet's default there is
    // (0, −10, 0)), not from the world's rigid-body gravity; both are set.
    const g = own(new A.btVector3(...scene.gravity));
    this.world.setGravity(g);
    const info = this.world.getWorldInfo();
    info.set_m_gravity(g);
    const x = own(new A.btVector3(0, 0, 0));
    // No nodes at construction: appendNode / appendLink below give exactly the scene's
    // particles (in description order) and springs, each link's rest length the nodes'
    // initial distance, which is the scene's rest length.
    this.cloth = own(new A.btSoftBody(info, 0, x, []));
    scene.bodies.forEach((b, i) => {
      x.setValue(...b.position);
      this.cloth.appendNode(x, b.mass);
      if (b.fixed) this.cloth.setMass(i, 0);
    });
    const links = clothLinkSettings(scene.springs[0].stiffness);
    const material = this.cloth.get_m_materials().at(0);
    material.set_m_kLST(links.kLST);
    for (const s of scene.springs) {
      // appendLink takes the nodes' current distance as the rest length: it must be the
      // spring's (true of every cloth scene, which starts unstretched)
      const [pa, pb] = [scene.bodies[s.a].position, scene.bodies[s.b].position];
      const l = Math.hypot(pb[0] - pa[0], pb[1] - pa[1], pb[2] - pa[2]);
      if (Math.abs(l - s.rest) > 1e-9 * s.rest)
        throw new Error(`ammo: spring ${s.a}–${s.b} starts at ${l} m, not its rest ${s.rest} m`);
      this.cloth.appendLink(s.a, s.b, material, false);
    }
    const config = this.cloth.get_m_cfg();
    config.set_piterations(links.piterations);
    config.set_kDP(0);
    this.cloth.setActivationState(DISABLE_DEACTIVATION);
    this.world.addSoftBody(this.cloth, 1, -1);
  }

  step(): void {
    this.world.stepSimulation(this.h, 0);
  }

  /** Node positions and velocities (m_x, m_v); particles: identity orientation, no spin. */
  read(out: BodyStates): void {
    const nodes = this.cloth.get_m_nodes();
    for (let i = 0; i < out.n; i++) {
      const node = nodes.at(i);
      const p = node.get_m_x();
      const v = node.get_m_v();
      out.pos[3 * i] = p.x();
      out.pos[3 * i + 1] = p.y();
      out.pos[3 * i + 2] = p.z();
      out.vel[3 * i] = v.x();
      out.vel[3 * i + 1] = v.y();
      out.vel[3 * i + 2] = v.z();
      out.quat.set([1, 0, 0, 0], 4 * i);
      out.omega.fill(0, 3 * i, 3 * i + 3);
    }
  }

  engineContacts(): number | null {
    return null;
  }
}

export const ammoEngine: EngineAdapter = {
  key: "ammo",
  version: packageVersion("ammojs-typed"),
  async init() {
    if (ammo) return;
    // The package's default export instantiates the wasm module and resolves to its API;
    // called with an explicit `this`, as its readme asks of strict-mode callers.
    const { default: instantiate } = await import("ammojs-typed/wasm");
    ammo = await instantiate.call({});
  },
  method(scene) {
    switch (scene.kind) {
      case "spheres":
        return "Bullet SI solver 10 it., DBVT (wasm)";
      case "hulls":
        return "Bullet SI solver 10 it., btConvexHullShape (margin 1 mm) on btBvhTriangleMeshShape (wasm)";
      case "chain":
        return "Bullet p2p constraints (wasm)";
      case "cloth": {
        const { kLST, piterations } = clothLinkSettings(scene.springs[0].stiffness);
        return `Bullet btSoftBody, PBD links kLST ${kLST}, ${piterations} it. (wasm)`;
      }
    }
  },
  create(scene) {
    if (!ammo) throw new Error("ammo: init() was not awaited");
    return scene.kind === "cloth"
      ? new AmmoClothInstance(ammo, scene)
      : new AmmoRigidInstance(ammo, scene);
  },
};
