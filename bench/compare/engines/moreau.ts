/**
 * Moreau through its public entry (src/engine/index.ts): the scene description becomes a model
 * JSON (validated by loadModel like any client's), stepped one solver.dt per call.
 *
 * Two rows per scene. `moreau-defaults` sets only the README's integrator for the kind of
 * scene and its dt (what a user who changes nothing runs). `moreau` sets what a user would
 * set for a real-time run of that scene; why each value, and what was measured when it was
 * chosen, is in bench/README.md, "The Moreau rows' settings":
 *  - S1 spheres and H hulls: Moreau–Jean (θ = ½) with NSC contact, PGS at most PGS_SWEEPS
 *    sweeps to PGS_TOLERANCE (m/s), the position projection to PROJECTION_TOLERANCE (m)
 *    in at most PROJECTION_SWEEPS sweeps.
 *  - S2 chain: Newmark β = 0.3025, γ = 0.6 (numerically damped: with γ = ½ the constraint
 *    accelerations alternate in sign), the linearized step (newtonIterations 1), joints
 *    held to CHAIN_JOINT_TOLERANCE (m: the target's 1e-6 m drift), no gyroscopic Jacobian
 *    (axisymmetric links jointed on their axis). The generalized-α rows
 *    (GENERALIZED_ALPHA_VARIANTS) are for comparison.
 *  - S3 cloth: Newmark with CG on the matrix-free Newton matrix; k = 10 (springs resolved):
 *    β = ¼, γ = ½, the linearized step, CG to CLOTH_CG_TOLERANCE (a fraction of the step's
 *    own discretization error); k = 1e4 (h ω ≈ 13, unresolved): β = 0.3025, γ = 0.6 (the
 *    linearized step and γ = ½ both blow up) and Newton's default stopping rule (newtonTolerance
 *    unset: the step-error test of newmark.ts, NEWMARK_STEP_ERROR, which stops at 5 % of the
 *    step's own position error: 3.4 iterations a step; at 1 % it took 4, as Newton to 1e-4).
 */
import type { ModelInput } from "../../../schemas/model";
import { defaultStepTolerance, loadModel, type Simulation } from "../../../src/engine/index";
import type { SceneDesc, Vec3 } from "../scene";
import type { BodyStates, EngineAdapter, EngineInstance } from "./types";

type Integrator = "moreau-jean" | "newmark";

/** S2's joint drift tolerance (m; see the file comment). */
const CHAIN_JOINT_TOLERANCE = 5e-7;

/** S1's contact solver budget (see the file comment). */
const PGS_SWEEPS = 10;
const PGS_TOLERANCE = 1e-6;
/** S1's position projection: penetration tolerance (m) and sweeps per step. */
const PROJECTION_TOLERANCE = 1e-4;
const PROJECTION_SWEEPS = 20;

export function moreauIntegrator(scene: SceneDesc): Integrator {
  return scene.kind === "spheres" || scene.kind === "hulls" ? "moreau-jean" : "newmark";
}

/** S3's CG tolerance with resolved springs (see the file comment). */
const CLOTH_CG_TOLERANCE = 3e-2;

/** True when some spring's h ω = h √(k / m) exceeds 1 (m the lighter moving end's mass). */
function unresolvedSprings(scene: SceneDesc): boolean {
  const mass = (i: number) => (i < 0 || scene.bodies[i].fixed ? Infinity : scene.bodies[i].mass);
  return scene.springs.some(
    (s) => (s.stiffness * scene.h * scene.h) / Math.min(mass(s.a), mass(s.b)) > 1,
  );
}

/** Newmark settings of the cloth (see the file comment). */
function clothSolver(scene: SceneDesc): ModelInput["solver"] {
  const common = { integrator: "newmark" as const, dt: scene.h, linearSolver: "cg" as const };
  return unresolvedSprings(scene)
    ? { ...common, beta: 0.3025, gamma: 0.6 }
    : {
        ...common,
        beta: 0.25,
        gamma: 0.5,
        // the linearized step (one Newton iteration), as measured before the default
        // became 25 iterations to tolerance
        newtonIterations: 1,
        newtonTolerance: CLOTH_CG_TOLERANCE,
      };
}

/**
 * The model JSON of a scene (bodies in description order; S1's container body, H's terrain
 * body last).
 */
export function toMoreauModel(scene: SceneDesc): ModelInput {
  const bodies: ModelInput["bodies"] = scene.bodies.map((b) => ({
    id: b.id,
    kind: b.kind,
    fixed: b.fixed,
    ...(b.fixed ? {} : { mass: b.mass }),
    ...(b.kind === "rigid" ? { inertia: [...b.inertia] as [number, number, number] } : {}),
    position: [...b.position] as [number, number, number],
    orientation: [...b.orientation] as [number, number, number, number],
    shapes:
      b.sphereRadius !== undefined
        ? [{ type: "sphere" as const, radius: b.sphereRadius }]
        : b.convexPoints !== undefined
          ? [{ type: "convex" as const, points: b.convexPoints.map((p) => [...p] as Vec3) }]
          : b.boxHalfExtents !== undefined
            ? [
                {
                  type: "box" as const,
                  halfExtents: [...b.boxHalfExtents] as [number, number, number],
                },
              ]
            : [],
  }));
  if (scene.halfSpaces.length > 0)
    bodies.push({
      id: "container",
      kind: "rigid",
      fixed: true,
      // Moreau's plane: the solid is n·x ≤ offset, n pointing out of it (into free space),
      // which is the description's half-space with its inward normal.
      shapes: scene.halfSpaces.map((hs) => ({
        type: "plane" as const,
        normal: [...hs.normal] as [number, number, number],
        offset: hs.offset,
      })),
    });
  if (scene.terrain)
    bodies.push({
      id: "terrain",
      kind: "rigid",
      fixed: true,
      shapes: [
        {
          type: "mesh" as const,
          vertices: scene.terrain.vertices.map((v) => [...v] as Vec3),
          triangles: scene.terrain.triangles.map((t) => [...t] as [number, number, number]),
        },
      ],
    });
  const ref = (i: number) => (i < 0 ? "ground" : scene.bodies[i].id);
  const integrator = moreauIntegrator(scene);
  return {
    name: scene.id,
    gravity: [...scene.gravity],
    bodies,
    forces: scene.springs.map((s, k) => ({
      id: `s${k}`,
      type: "spring" as const,
      a: { body: ref(s.a) },
      b: { body: ref(s.b) },
      stiffness: s.stiffness,
      damping: s.damping,
      restLength: s.rest,
    })),
    joints: scene.joints.map((j) => ({
      id: j.id,
      type: "spherical" as const,
      a: { body: ref(j.a), point: [...j.pa] as [number, number, number] },
      b: { body: ref(j.b), point: [...j.pb] as [number, number, number] },
    })),
    ...(scene.contact
      ? {
          contact: {
            method: "nsc" as const,
            friction: scene.contact.friction,
            restitution: scene.contact.restitution,
          },
        }
      : {}),
    solver:
      integrator === "moreau-jean"
        ? {
            integrator,
            dt: scene.h,
            theta: 0.5,
            contactSolver: "pgs",
            ...(scene.contact
              ? {
                  maxIterations: PGS_SWEEPS,
                  tolerance: PGS_TOLERANCE,
                  projectOnConstraints: true,
                  projectionTolerance: PROJECTION_TOLERANCE,
                  projectionIterations: PROJECTION_SWEEPS,
                }
              : {}),
          }
        : scene.kind === "cloth"
          ? clothSolver(scene)
          : {
              integrator,
              dt: scene.h,
              beta: 0.3025,
              gamma: 0.6,
              jointTolerance: CHAIN_JOINT_TOLERANCE,
              gyroscopicJacobian: false,
              // the linearized step (one Newton iteration, then the projection): the
              // setting every earlier S2 result was measured with, when it was the
              // default (now 25 iterations to newtonTolerance)
              newtonIterations: 1,
            },
  };
}

/** The integrator the README advises for each kind of scene (README, "Integrators"). */
const ADVISED_INTEGRATOR = {
  spheres: "moreau-jean",
  hulls: "moreau-jean",
  chain: "articulated",
  cloth: "newmark",
} as const;

/**
 * The scene at the defaults (`moreau-defaults`, issue 29): the README's integrator for the
 * kind of scene and the scene's step, every other solver setting left out — what a user who
 * changes nothing runs. The physics (bodies, springs, joints, friction, restitution) is the
 * scene's, as in toMoreauModel.
 */
export function toDefaultsModel(scene: SceneDesc): ModelInput {
  return {
    ...toMoreauModel(scene),
    solver: { integrator: ADVISED_INTEGRATOR[scene.kind], dt: scene.h },
  };
}

/** S2 with generalized-α at a given ρ∞, the integrator's defaults otherwise (file comment). */
export interface GeneralizedAlphaVariant {
  key: "moreau-galpha-1" | "moreau-galpha-0.9" | "moreau-galpha-tol";
  rhoInfinity: number;
  /** solver.stepTolerance (m per step, generalized-alpha.ts largestDisplacement), or none. */
  stepTolerance?: number;
}

export const GENERALIZED_ALPHA_VARIANTS: readonly GeneralizedAlphaVariant[] = [
  { key: "moreau-galpha-1", rhoInfinity: 1 },
  { key: "moreau-galpha-0.9", rhoInfinity: 0.9 },
  { key: "moreau-galpha-tol", rhoInfinity: 1, stepTolerance: 1e-4 },
];

/**
 * The model of a chain scene stepped by generalized-α at ρ∞ (only integrator, ρ∞, dt and
 * the variant's stepTolerance set).
 */
export function toGeneralizedAlphaModel(
  scene: SceneDesc,
  rhoInfinity: number,
  stepTolerance?: number,
): ModelInput {
  if (scene.kind !== "chain")
    throw new Error(`the generalized-α variants run the chain scenes only, not ${scene.id}`);
  return {
    ...toMoreauModel(scene),
    solver: {
      integrator: "generalized-alpha",
      rhoInfinity,
      dt: scene.h,
      ...(stepTolerance !== undefined ? { stepTolerance } : {}),
    },
  };
}

class MoreauInstance implements EngineInstance {
  private readonly sim: Simulation;
  private readonly n: number;

  constructor(scene: SceneDesc, model: ModelInput = toMoreauModel(scene)) {
    this.sim = loadModel(model);
    this.n = scene.bodies.length;
  }

  step(): void {
    this.sim.step(1);
  }

  /**
   * From the simulation's state arrays (Simulation.system: the same world-frame values
   * as state() gives, without building its JSON-shaped objects every probed step).
   */
  read(out: BodyStates): void {
    const s = this.sim.system;
    const n = this.n;
    out.pos.set(s.pos.subarray(0, 3 * n));
    out.quat.set(s.quat.subarray(0, 4 * n));
    out.vel.set(s.vel.subarray(0, 3 * n));
    out.omega.set(s.omega.subarray(0, 3 * n));
  }

  engineContacts(): number | null {
    return this.sim.state().contacts.length;
  }

  /** The last step's solver figures say it missed a stated tolerance (README, Solver settings). */
  shortfall(): boolean {
    const s = this.sim.lastStepStats;
    return !(
      s.newtonConverged &&
      s.contactConverged &&
      s.projectionConverged &&
      s.stepToleranceMet &&
      s.jointToleranceMet
    );
  }

  dispose(): void {}
}

export const moreauEngine: EngineAdapter = {
  key: "moreau",
  version: "moreau (this tree)",
  async init() {},
  method(scene) {
    switch (scene.kind) {
      case "spheres":
      case "hulls":
        return "Moreau–Jean θ = 0.5, NSC contact, PGS, position projection to 0.1 mm";
      case "chain":
        return "Newmark β = 0.3025 γ = 0.6, linearized constrained step (1 Newton it., no gyroscopic Jacobian) + projection to 5e-7 m";
      case "cloth":
        return unresolvedSprings(scene)
          ? "Newmark β = 0.3025 γ = 0.6, Newton to 5 % of the step's error (line search), CG"
          : "Newmark β = ¼ γ = ½, linearized (1 Newton it.), CG to 3e-2";
    }
  },
  create: (scene) => new MoreauInstance(scene),
};

export const moreauDefaultsEngine: EngineAdapter = {
  key: "moreau-defaults",
  version: "moreau (this tree)",
  async init() {},
  method: (scene) =>
    `defaults: ${ADVISED_INTEGRATOR[scene.kind]} (the README's choice), only dt set`,
  create: (scene) => new MoreauInstance(scene, toDefaultsModel(scene)),
};

/**
 * The defaults with only solver.stepTolerance set (m per sub-step of the articulated
 * integrator): the chains' accuracy settings in the matched comparison (../matched.ts).
 */
export function articulatedToleranceEngine(stepTolerance: number): EngineAdapter {
  return {
    key: "moreau-defaults",
    version: "moreau (this tree)",
    async init() {},
    method: (scene) =>
      `defaults: ${ADVISED_INTEGRATOR[scene.kind]}, only dt and stepTolerance ${stepTolerance} m set`,
    create(scene) {
      if (ADVISED_INTEGRATOR[scene.kind] !== "articulated")
        throw new Error(
          `stepTolerance is set here for the articulated scenes only, not ${scene.id}`,
        );
      const model = toDefaultsModel(scene);
      return new MoreauInstance(scene, { ...model, solver: { ...model.solver, stepTolerance } });
    },
  };
}

/** The variant's error control as the integrator runs it (defaultStepTolerance). */
function stepToleranceText(v: GeneralizedAlphaVariant): string {
  const tolerance = defaultStepTolerance(v.stepTolerance, v.rhoInfinity);
  if (tolerance === null) return "no error control";
  const given = v.stepTolerance !== undefined ? "" : " (the default)";
  return `stepTolerance ${tolerance}${given} (steps halved on their error estimate)`;
}

function generalizedAlphaEngine(v: GeneralizedAlphaVariant): EngineAdapter {
  const defaultRho = v.rhoInfinity === 1 ? " (the default)" : "";
  return {
    key: v.key,
    version: "moreau (this tree)",
    async init() {},
    method: () =>
      `generalized-α ρ∞ = ${v.rhoInfinity}${defaultRho}, RATTLE-type joints, ${stepToleranceText(v)}, integrator defaults (Newton to 1e-10, ≤ 25 it., gyroscopic Jacobian)`,
    create: (scene) =>
      new MoreauInstance(scene, toGeneralizedAlphaModel(scene, v.rhoInfinity, v.stepTolerance)),
  };
}

export const moreauGeneralizedAlphaEngines: Record<GeneralizedAlphaVariant["key"], EngineAdapter> =
  {
    "moreau-galpha-1": generalizedAlphaEngine(GENERALIZED_ALPHA_VARIANTS[0]),
    "moreau-galpha-0.9": generalizedAlphaEngine(GENERALIZED_ALPHA_VARIANTS[1]),
    "moreau-galpha-tol": generalizedAlphaEngine(GENERALIZED_ALPHA_VARIANTS[2]),
  };
