/**
 * MuJoCo (`mujoco-js`, the official WebAssembly build) from MJCF XML generated from the
 * scene description (toMjcf). Options: timestep = scene.h, the semi-implicit Euler
 * integrator (MuJoCo's default), the Newton solver (default, key "mujoco") or the CG
 * solver (key "mujoco-cg"), pyramidal friction cones, default iterations and tolerance;
 * autoreset disabled so that a blow-up shows as one (MuJoCo otherwise silently resets the
 * state to qpos0 on a bad acceleration).
 *
 *  - S1: spheres as free bodies (freejoint) with a sphere geom of mass 0.1 (MuJoCo computes
 *    2/5 m r²), condim 3, friction 0.5; ground and walls as world plane geoms (a MuJoCo
 *    plane is the half-space below its local +z, turned with zaxis = the inward normal).
 *    MuJoCo has no restitution coefficient: contacts are soft with the default solref
 *    (time constant 0.02 s, damping ratio 1, critically damped: no bounce), the nearest
 *    to restitution 0.
 *  - S2: the chain as a kinematic tree of nested bodies with ball joints (reduced
 *    coordinates: the joints cannot drift apart by construction), explicit inertial
 *    elements (mass 0.1, diaginertia).
 *  - S3: each dynamic particle a body with three slide joints (x, y, z) and a point mass
 *    (inertial with negligible rotational inertia, which no dof uses), fixed particles as
 *    world sites; each spring a spatial tendon between two sites with stiffness, damping
 *    and springlength = the rest length (passive tendon forces, explicit in Euler).
 */
import loadMujoco, { type MainModule, type MjData, type MjModel } from "mujoco-js";
import type { SceneDesc } from "../scene";
import type { BodyStates, EngineAdapter, EngineInstance } from "./types";
import { packageVersion } from "./version";

export type MujocoSolver = "Newton" | "CG";

const num = (x: number) => (Object.is(x, -0) ? "0" : String(x));
const vec = (v: readonly number[]) => v.map(num).join(" ");

/**
 * MJCF for a scene. Body numbering in the compiled model: world = 0, then the <body>
 * elements in document order (depth first), so S1 sphere i and S2 link i are body i + 1,
 * and S3's dynamic particles are numbered in description order after the world.
 */
export function toMjcf(scene: SceneDesc, solver: MujocoSolver): string {
  const out: string[] = [];
  out.push(`<mujoco model="${scene.id}">`);
  out.push(`  <compiler angle="radian" autolimits="true"/>`);
  out.push(
    `  <option timestep="${num(scene.h)}" gravity="${vec(scene.gravity)}" integrator="Euler" solver="${solver}" cone="pyramidal">`,
  );
  out.push(`    <flag autoreset="disable"/>`);
  out.push("  </option>");
  if (scene.kind === "spheres") out.push(`  <size memory="256M"/>`);
  out.push("  <worldbody>");
  const friction = scene.contact?.friction ?? 1;
  for (const hs of scene.halfSpaces)
    out.push(
      `    <geom name="${hs.id}" type="plane" size="0 0 1" pos="${vec(hs.normal.map((c) => c * hs.offset))}" zaxis="${vec(hs.normal)}" condim="3" friction="${num(friction)} 0.005 0.0001"/>`,
    );
  switch (scene.kind) {
    case "spheres":
      for (const b of scene.bodies)
        out.push(
          `    <body name="${b.id}" pos="${vec(b.position)}" quat="${vec(b.orientation)}"><freejoint/><geom type="sphere" size="${num(b.sphereRadius ?? 0)}" mass="${num(b.mass)}" condim="3" friction="${num(friction)} 0.005 0.0001"/></body>`,
        );
      break;
    case "chain": {
      // Nested: each link's frame relative to its parent link (or the world for link 0).
      let depth = 0;
      scene.joints.forEach((j, k) => {
        const b = scene.bodies[j.b];
        const parentPos = j.a < 0 ? [0, 0, 0] : scene.bodies[j.a].position;
        const rel = b.position.map((x, c) => x - parentPos[c]);
        out.push(
          `${"  ".repeat(depth + 2)}<body name="${b.id}" pos="${vec(rel)}"><joint name="${j.id}" type="ball" pos="${vec(j.pb)}"/><inertial pos="0 0 0" mass="${num(b.mass)}" diaginertia="${vec(b.inertia)}"/>`,
        );
        depth++;
        if (k === scene.joints.length - 1)
          for (; depth > 0; depth--) out.push(`${"  ".repeat(depth + 1)}</body>`);
      });
      break;
    }
    case "cloth":
      for (const b of scene.bodies) {
        if (b.fixed) out.push(`    <site name="${b.id}" pos="${vec(b.position)}"/>`);
        else
          out.push(
            `    <body name="${b.id}" pos="${vec(b.position)}"><joint type="slide" axis="1 0 0"/><joint type="slide" axis="0 1 0"/><joint type="slide" axis="0 0 1"/><inertial pos="0 0 0" mass="${num(b.mass)}" diaginertia="1e-9 1e-9 1e-9"/><site name="${b.id}"/></body>`,
          );
      }
      break;
  }
  out.push("  </worldbody>");
  if (scene.springs.length > 0) {
    out.push("  <tendon>");
    for (const s of scene.springs)
      out.push(
        `    <spatial stiffness="${num(s.stiffness)}" damping="${num(s.damping)}" springlength="${num(s.rest)}"><site site="${scene.bodies[s.a].id}"/><site site="${scene.bodies[s.b].id}"/></spatial>`,
      );
    out.push("  </tendon>");
  }
  out.push("</mujoco>");
  return out.join("\n");
}

let mujoco: MainModule | null = null;
let fileCounter = 0;
const SOLVER_CODE: Record<MujocoSolver, number> = { CG: 1, Newton: 2 }; // mjtSolver

/**
 * Compiled models by topology. MuJoCo's compiler is slow for many multi-joint bodies (the
 * 992 three-slide particles of S3 take seconds), so one compiled model serves every
 * instance of the same topology: each instance gets a copy with its solver and its
 * tendon stiffness, damping and rest length written in. Not timed either way.
 */
const compiled = new Map<string, MjModel>();

function modelFor(mj: MainModule, scene: SceneDesc, solver: MujocoSolver): MjModel {
  const topology: SceneDesc = {
    ...scene,
    springs: scene.springs.map((s) => ({ ...s, stiffness: 0, damping: 0, rest: 0 })),
  };
  const key = toMjcf({ ...topology, id: scene.kind }, "Newton");
  let base = compiled.get(key);
  if (!base) {
    const path = `/bench/model-${fileCounter++}.xml`;
    mj.FS.writeFile(path, key);
    base = mj.MjModel.loadFromXML(path);
    mj.FS.unlink(path);
    compiled.set(key, base);
  }
  const model = new mj.MjModel(base);
  model.opt.solver = SOLVER_CODE[solver];
  const stiffness = model.tendon_stiffness as Float64Array;
  const damping = model.tendon_damping as Float64Array;
  const lengthspring = model.tendon_lengthspring as Float64Array;
  scene.springs.forEach((s, i) => {
    stiffness[i] = s.stiffness;
    damping[i] = s.damping;
    lengthspring[2 * i] = s.rest; // [low, high] of the dead band: none
    lengthspring[2 * i + 1] = s.rest;
  });
  return model;
}

class MujocoInstance implements EngineInstance {
  private readonly model: MjModel;
  private readonly data: MjData;
  private readonly mj: MainModule;
  /** MuJoCo body id of description body i, −1 for a fixed particle (a world site). */
  private readonly bodyId: Int32Array;
  private readonly rootId: Int32Array;
  private readonly scene: SceneDesc;

  constructor(mj: MainModule, scene: SceneDesc, solver: MujocoSolver) {
    this.mj = mj;
    this.scene = scene;
    this.model = modelFor(mj, scene, solver);
    this.data = new mj.MjData(this.model);
    this.bodyId = new Int32Array(scene.bodies.length);
    let next = 1;
    scene.bodies.forEach((b, i) => {
      this.bodyId[i] = b.fixed ? -1 : next++;
    });
    if (next !== this.model.nbody)
      throw new Error(`MJCF has ${this.model.nbody} bodies, expected ${next}`);
    this.rootId = Int32Array.from(this.model.body_rootid as Int32Array);
  }

  step(): void {
    this.mj.mj_step(this.model, this.data);
  }

  /**
   * After mj_step, xpos/cvel still describe the state before the step: recompute the
   * kinematics and com velocities (no solver call, so the run is not disturbed). cvel is
   * [ω; v] with v the velocity of the point at subtree_com[root], world frame.
   */
  read(out: BodyStates): void {
    const { mj, model, data } = this;
    mj.mj_kinematics(model, data);
    mj.mj_comPos(model, data);
    mj.mj_comVel(model, data);
    const xipos = data.xipos as Float64Array;
    const xquat = data.xquat as Float64Array;
    const cvel = data.cvel as Float64Array;
    const com = data.subtree_com as Float64Array;
    this.scene.bodies.forEach((b, i) => {
      const id = this.bodyId[i];
      if (id < 0) {
        out.pos.set(b.position, 3 * i);
        out.quat.set(b.orientation, 4 * i);
        out.vel.fill(0, 3 * i, 3 * i + 3);
        out.omega.fill(0, 3 * i, 3 * i + 3);
        return;
      }
      const root = this.rootId[id];
      const wx = cvel[6 * id];
      const wy = cvel[6 * id + 1];
      const wz = cvel[6 * id + 2];
      const rx = xipos[3 * id] - com[3 * root];
      const ry = xipos[3 * id + 1] - com[3 * root + 1];
      const rz = xipos[3 * id + 2] - com[3 * root + 2];
      for (let k = 0; k < 3; k++) out.pos[3 * i + k] = xipos[3 * id + k];
      for (let k = 0; k < 4; k++) out.quat[4 * i + k] = xquat[4 * id + k];
      out.omega[3 * i] = wx;
      out.omega[3 * i + 1] = wy;
      out.omega[3 * i + 2] = wz;
      out.vel[3 * i] = cvel[6 * id + 3] + (wy * rz - wz * ry);
      out.vel[3 * i + 1] = cvel[6 * id + 4] + (wz * rx - wx * rz);
      out.vel[3 * i + 2] = cvel[6 * id + 5] + (wx * ry - wy * rx);
    });
  }

  engineContacts(): number | null {
    return this.scene.contact ? this.data.ncon : null;
  }

  dispose(): void {
    this.data.delete();
    this.model.delete();
  }
}

function mujocoAdapter(key: string, solver: MujocoSolver): EngineAdapter {
  return {
    key,
    version: packageVersion("mujoco-js"),
    async init() {
      if (!mujoco) {
        mujoco = await loadMujoco();
        mujoco.FS.mkdir("/bench");
      }
    },
    method(scene) {
      const s = `${solver} solver, Euler`;
      switch (scene.kind) {
        case "spheres":
          return `${s}, soft contacts, pyramidal cone`;
        case "chain":
          return `${s}, ball joints (reduced coordinates)`;
        case "cloth":
          return `${s}, tendon springs (explicit)`;
        case "hulls":
          return "not run: mesh geoms are convexified (engines/index.ts)";
      }
    },
    create(scene) {
      if (!mujoco) throw new Error("mujoco: init() was not awaited");
      return new MujocoInstance(mujoco, scene, solver);
    },
  };
}

export const mujocoEngine = mujocoAdapter("mujoco", "Newton");
export const mujocoCgEngine = mujocoAdapter("mujoco-cg", "CG");
