/**
 * Moreau through its public entry (src/engine/index.ts): the scene description becomes a model
 * JSON (validated by loadModel like any client's), stepped one solver.dt per call.
 *
 * Integrator per scene, the one a user would choose for it (issue 8):
 *  - S1 spheres: Moreau–Jean time-stepping (θ = 0.5), nonsmooth contact ("nsc") with
 *    Coulomb friction 0.5 and Newton restitution 0, projected Gauss–Seidel (velocity form,
 *    warm-started from the previous step's impulses by contact key). Solver options as a
 *    user would set them for a real-time pile, chosen when the defaults were 200 sweeps to
 *    1e-10 (since issue 29 the defaults follow the problem, README "Solver settings", and
 *    the `moreau-defaults` row runs as fast as this one): at most PGS_SWEEPS sweeps
 *    (Bullet's default is 10 iterations, Box2D's 8), stopping earlier once the residual —
 *    for bodies this light (0.1 kg) essentially the worst contact velocity error in m/s —
 *    is below PGS_TOLERANCE, i.e. a drift of h·1e-6 ≈ 4e-9 m per step. With the warm
 *    start most steps of the settled pile converge within the 10 sweeps; about a fifth end
 *    on the budget, their residual reported in the step's contactConverged.
 *    With Siconos' TimeSteppingProjectOnConstraints (projectOnConstraints): the
 *    velocity-level step never recovers the penetration of an impact (up to γ h |u_n|,
 *    1.7 cm in S1-1000, where the pile then ends 2.3 cm low), so a user who wants the pile
 *    at its true height projects the positions after each step (the default since issue
 *    29; these settings predate it, when it was off and went to 1e-9 m); for a real-time pile the
 *    tolerance PROJECTION_TOLERANCE = 0.1 mm (0.2 % of a radius, half Bullet's settled
 *    penetration of 0.2 mm) and at most PROJECTION_SWEEPS sweeps per step, as PGS_SWEEPS
 *    a real-time budget. Measured on S1-1000: to 1e-5 m the jammed pile (ten diameters
 *    span the box) spends 50 sweeps every step (~10 ms) and still falls behind; to 0.1 mm
 *    one step in five to ten needs a pass — the landing, where the 20 sweeps can run out
 *    and leave up to ~1 mm for a step or two — and the settled pile's drift stays below
 *    the tolerance, so a step costs one evaluation of the carried gaps.
 *    solver.newtonIterations stays at its default (25 since Newton is iterated to
 *    tolerance by default): with no force Jacobians (spheres, gravity) the contact step's
 *    Newton loop ends after one pass either way, and the states are bit-identical to
 *    newtonIterations: 1 (300 steps of S1-100 compared).
 *  - H hulls (issue 30): S1's set-up as it is (Moreau–Jean θ = ½, NSC, PGS at S1's budget,
 *    the position projection to 0.1 mm), each hull a `convex` shape with the scene's exact
 *    mass and principal inertia (the points are in the principal frame, so Moreau's own hull
 *    inertia is the same: test/bench/scenes.test.ts), the terrain one fixed body with a
 *    `mesh` shape, added after the hulls.
 *  - S2 chain: Newmark with the joints in the constrained Newton step (Schur complement of
 *    the block-diagonal iteration matrix, O(links)) and the post-step projection, with
 *    Newmark's numerically damped member β = 0.3025, γ = 0.6 (as Chrono's HHT with α < 0
 *    for such mechanisms): with γ = ½ the accelerations along the constraint directions
 *    are not damped and alternate in sign from step to step (±7e3 rad/s² in the whip),
 *    so each step starts its Newton iteration far from its end and the projection
 *    removes more; measured on S2-100, γ = 0.6 loses less energy (max |ΔE|/(m g L)
 *    0.15 against 0.21) and takes ~15 % less time per step, joint drift 1e-12 m in both.
 *    With γ > ½ the step holds the joints at the position level, linearized at the mean
 *    of the last two accelerations (src/engine/integrators/newmark.ts): 1.39 factorizations per
 *    step against 1.81 at the velocity level, +14 % in one process (alternating
 *    batches), energy drift 0.140 against 0.152.
 *    Moreau–Jean θ = ½ with its velocities-first projection (src/engine/integrators/integrator.ts,
 *    ProjectionOrder) runs this chain 17 % faster (one process, alternating batches) at
 *    max |ΔE|/(m g L) 0.158 against 0.151, but the README advises Newmark for jointed
 *    mechanisms without contact (θ = ½ dissipates in proportion to h on a pendulum), so
 *    that is what a user would run here. The target asks for a drift below 1e-6 m (the
 *    largest distance between a joint's two anchor points over the run), so
 *    solver.jointTolerance is CHAIN_JOINT_TOLERANCE = 5e-7 m, as a user would set it: the
 *    projection leaves ‖C‖∞ ≤ τ after every step, so the anchors end at most √3 τ =
 *    8.7e-7 m apart (not the default 1e-12 m meant for assembly-grade precision).
 *    Measured on S2-100 (in one process, alternating batches of 100 steps, without the
 *    gyroscopic Jacobian): against 1e-7 m, 3e-7 runs 4 % faster, 4e-7 7 %, 5e-7 11–19 %
 *    (more steps end within the tolerance and need no projection at all). Earlier, with
 *    the Jacobian, position chord iterations per step were 2.16 at 1e-12, 1.24 at 1e-8
 *    and 1.01 at 1e-7, and 1e-7 ran 10–13 % faster than 1e-8.
 *    solver.gyroscopicJacobian is false: the links are axisymmetric (inertia
 *    diag(a, b, b)) and their joints sit on their axis, so nothing spins them about it and
 *    the gyroscopic torque needs no Jacobian (src/engine/forces/gyroscopic.ts); the iteration
 *    matrix is then the mass matrix and the Newton step factors the symmetric G M⁻¹ Gᵀ
 *    instead of inverting 100 gyroscopic blocks and factoring G W⁻¹ Gᵀ as L D U. Measured
 *    on S2-100 (then at jointTolerance 1e-7 m) in one process, alternating batches of 100
 *    steps: 1018–1056 → 1270–1297 steps/s (+23–25 %), joint drift 1.26e-7 → 1.30e-7 m,
 *    energy drift 0.152 → 0.151 (bench runs, moreau only). A user who knows the links are symmetric would set it.
 *    solver.newtonIterations is 1, the linearized step (one Newton iteration per step, then
 *    the projection): every figure above and every earlier S2 result was measured with it,
 *    when it was the default. Since the default became 25 (Newton iterated to
 *    newtonTolerance 1e-10, a non-converging step redone in halves) this chain would run
 *    the iterated step instead (on S2-100, 10 Newton iterations per step over 2000 steps
 *    since the chord and early-halving rules of acceleration-step.ts, 33 before), so it is
 *    pinned here to keep the row comparable.
 *    Beside it, two rows run S2 with the generalized-α integrator
 *    (src/engine/integrators/generalized-alpha.ts) at its default ρ∞ = 1 and at ρ∞ = 0.9, with
 *    only integrator, rhoInfinity and dt set (everything else at the integrator's
 *    defaults: Newton to 1e-10 in at most 25 iterations, the gyroscopic Jacobian): engine
 *    keys `moreau-galpha-1` and `moreau-galpha-0.9` (GENERALIZED_ALPHA_VARIANTS). They are
 *    for comparison only; the speed target judges the Newmark row. Where they diverge,
 *    Newton fails even with the step halved four times: the whipping tip turns its links
 *    too far per step for the symmetric joints' start directions (generalized-alpha.ts).
 *    A third row, `moreau-galpha-tol` (on request, not in the default list: S2-100 takes
 *    ~30 s per repetition), adds the integrator's error control, stepTolerance 1e-3 m/rad
 *    per step. Their figures: bench/README.md, "Generalized-α".
 *  - S3 cloth: Newmark with CG on the matrix-free Newton matrix (the springs' symmetric
 *    Jacobian: same forces, so the same Newton solution, see src/engine/forces/axial.ts;
 *    preconditioned by the mass or the block diagonal as the solves go,
 *    src/engine/integrators/iteration-operator.ts), the choice for a large spring system.
 *    · k = 10 (h ω ≈ 0.4, ω = √(k/m) per particle: the springs are resolved): β = ¼,
 *      γ = ½, the linearized step (one Newton iteration, as SOFA: newtonIterations 1, set
 *      explicitly since the default became 25; with the default this cloth iterates 2.35
 *      times per step at twice the time, measured on 300 steps). newtonTolerance
 *      CLOTH_CG_TOLERANCE = 3e-2 sets the CG tolerance (acceleration-step.ts; an inexact
 *      Newton step), chosen as implicit ODE codes choose their algebraic tolerances, a
 *      fraction of the step's own discretization error: the converged Newmark step differs
 *      from 16 substeps of h/16 by up to 3.9e-4 m (mean 1.3e-4 m, 40 states of the run).
 *      The step as run against the converged step (Newton to 1e-13), every 25th of the
 *      1000 timed steps, and the CG iterations per step:
 *        tolerance 1e-1: max 5.4e-5 m, mean 2.3e-5 m, 1.4 iterations
 *                  3e-2: max 5.2e-5 m, mean 7.8e-6 m, 2.0 iterations
 *                  1e-2: max 3.5e-5 m, mean 5.8e-6 m, 2.8 iterations
 *                  1e-3: max 3.7e-5 m, mean 5.8e-6 m (measured in an earlier session)
 *      Below 1e-2 the linearization, not CG, makes the error; at 3e-2 it stays within a
 *      seventh of the largest discretization error and a sixteenth of the mean, for 12 %
 *      less time per step than 1e-2 (in-process A/B); at 1e-1 the mean error triples.
 *    · k = 1e4 (h ω ≈ 13: the springs' period is not resolved): Newton iterated to
 *      newtonTolerance 1e-4 (line search, step halving when it fails), and β = 0.3025,
 *      γ = 0.6, Newmark's numerically damped member. Both are needed: the linearized step
 *      blows up within ~100 steps (one Newton iteration on springs that turn a lot in one
 *      step), and with converged Newton γ = ½ still does, later (the trapezoidal rule
 *      conserves energy only for linear systems; here the unresolved stiff modes gain
 *      energy until Newton fails); γ = 0.6 damps the modes with h ω ≫ 1 and barely the
 *      swing (h ω ≈ 0.02).
 */
import type { ModelInput } from "../../../schemas/model";
import { loadModel, type Simulation } from "../../../src/engine/index";
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
    ? { ...common, beta: 0.3025, gamma: 0.6, newtonIterations: 30, newtonTolerance: 1e-4 }
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
  chain: "generalized-alpha",
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
  /** solver.stepTolerance (m, rad per step), or none. */
  stepTolerance?: number;
}

export const GENERALIZED_ALPHA_VARIANTS: readonly GeneralizedAlphaVariant[] = [
  { key: "moreau-galpha-1", rhoInfinity: 1 },
  { key: "moreau-galpha-0.9", rhoInfinity: 0.9 },
  { key: "moreau-galpha-tol", rhoInfinity: 1, stepTolerance: 1e-3 },
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
          ? "Newmark β = 0.3025 γ = 0.6, Newton to 1e-4 (line search), CG"
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

function generalizedAlphaEngine(v: GeneralizedAlphaVariant): EngineAdapter {
  const defaultRho = v.rhoInfinity === 1 ? " (the default)" : "";
  return {
    key: v.key,
    version: "moreau (this tree)",
    async init() {},
    method: () =>
      `generalized-α ρ∞ = ${v.rhoInfinity}${defaultRho}, RATTLE-type joints, ${v.stepTolerance !== undefined ? `stepTolerance ${v.stepTolerance} (steps halved on their error estimate), ` : ""}integrator defaults (Newton to 1e-10, ≤ 25 it., gyroscopic Jacobian)`,
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
