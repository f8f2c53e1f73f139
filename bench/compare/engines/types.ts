/**
 * What every engine adapter provides to the comparison: build the scene from the
 * engine-neutral description (../scene.ts), advance one fixed step of scene.h per call,
 * and report the body states in the description's order, from which the accuracy probes
 * (../probes.ts) are computed the same way for every engine.
 */
import type { SceneDesc } from "../scene";

/**
 * Body states in description order (fixed bodies included, at their fixed pose), world
 * frame: pos (3n, m), quat (4n, [w, x, y, z]), vel (3n, centre-of-mass velocity, m/s),
 * omega (3n, world-frame angular velocity, rad/s; zero for particles).
 */
export interface BodyStates {
  n: number;
  pos: Float64Array;
  quat: Float64Array;
  vel: Float64Array;
  omega: Float64Array;
}

export function createBodyStates(n: number): BodyStates {
  return {
    n,
    pos: new Float64Array(3 * n),
    quat: new Float64Array(4 * n),
    vel: new Float64Array(3 * n),
    omega: new Float64Array(3 * n),
  };
}

/** Copies a scene's initial state (fixed bodies keep theirs). */
export function initialStates(scene: SceneDesc, out: BodyStates): void {
  scene.bodies.forEach((b, i) => {
    out.pos.set(b.position, 3 * i);
    out.quat.set(b.orientation, 4 * i);
    out.vel.fill(0, 3 * i, 3 * i + 3);
    out.omega.fill(0, 3 * i, 3 * i + 3);
  });
}

/** One built scene in one engine. */
export interface EngineInstance {
  /** Advances one step of scene.h. May throw (recorded as a failure or divergence). */
  step(): void;
  /** Writes the current body states (outside any timed region: may allocate). */
  read(out: BodyStates): void;
  /** The engine's own contact count after the last step (null when it has none to report). */
  engineContacts(): number | null;
  /**
   * Whether the last step ended short of one of the engine's stated tolerances, as its own
   * figures say (Moreau: the step's solver figures, README "Solver settings"); left out by
   * engines that state none. Called outside the timed region.
   */
  shortfall?(): boolean;
  /** Frees engine memory (WASM worlds). */
  dispose(): void;
}

export interface EngineAdapter {
  /** Key used on the command line: moreau, rapier, cannon, mujoco, mujoco-cg, ammo. */
  readonly key: string;
  /** Package and version, e.g. "@dimforge/rapier3d-compat 0.21.0". */
  readonly version: string;
  /** One-time (per process) initialisation, e.g. WASM instantiation; not timed. */
  init(): Promise<void>;
  /** The integrator / solver set-up used for this scene, for the tables. */
  method(scene: SceneDesc): string;
  create(scene: SceneDesc): EngineInstance;
}
