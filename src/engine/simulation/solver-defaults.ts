/**
 * The solver settings a model leaves out, chosen from the problem (issue 29; README,
 * "Solver settings"): tolerances stated in metres (or in m/s with the metres they let a
 * step drift), measured against the sizes and the gravity of the model, instead of the
 * round-off settings that suit a few bodies and make a pile of a thousand spheres crawl.
 * An explicit setting always wins. The contact solver's iteration budgets, which follow the
 * contact count of each step, are in contact/budget.ts.
 *
 *  - tolerance (nonsmooth contact solver, m/s): ε = 10⁻³·|g|·h. The residual is the
 *    velocity error of every contact that pushes (residual.ts: for an impulse inside the
 *    friction cone r − P_K(r − ũ) = ũ, the normal and, sticking, tangential velocity), which
 *    moves the contact by h·ε per step: 10⁻³·|g|·h², a thousandth of twice the distance gravity moves a
 *    body from rest in one step (1.7e-7 m at h = 1/240 s), and the position projection
 *    removes what accumulates. Without gravity ε = 10⁻⁶·ℓ/h (a drift of 10⁻⁶ ℓ per step).
 *  - projectionTolerance (m): 2·10⁻³·ℓ, with ℓ the size of the smallest colliding shape
 *    (contactSize): 0.1 mm for the benchmark's 5 cm spheres, half of Bullet's settled
 *    penetration there (bench/compare/engines/moreau.ts).
 * Measured on the benchmark's piles (bench/compare, S1-100 and S1-1000, h = 1/240 s): the
 * settled pile meets ε (4.1e-5 m/s there) after one or two warm-started sweeps per step
 * (budget.ts has the landing's figures).
 *
 * The fixed defaults of the settings the Newton integrators and the joints' projection read
 * are filled in here too, and only here (DEFAULT_NEWTON_ITERATIONS, DEFAULT_GYROSCOPIC_JACOBIAN,
 * DEFAULT_JOINT_TOLERANCE): the schema leaves them unset, so that a model setting one its
 * integrator does not read is refused (schemas/model.ts SETTING_READERS) instead of
 * taken as a default, and the engine reads them from the resolved settings alone.
 *
 * Newton's tolerance is not scaled here: unset, it is 1e-10 relative (integrators/
 * factory.ts) and, for newmark without joints, Newton also stops at 5 % of the step's own
 * position error (newmark.ts, NEWMARK_STEP_ERROR). Why 1e-10 stays for joints: on the
 * benchmark's 100-link chain at its defaults (generalized-α, h = 1/240 s) its target,
 * 1e-10 (1 + ‖a‖∞) plus the joints' rounding floor, is 4e-8–4e-6 m/s², a position error
 * c_x·target = h²/4·target of 1e-13–2e-11 m per step, and the 33 iterations a step
 * (2000 steps from rest) came from the iteration control, not from it
 * (acceleration-step.ts, `solve`: chord corrections that contracted at θ ≈ 0.1–0.2
 * without refactoring, and steps that could not converge spending the whole budget
 * before their halving). With that fixed, a solve takes 4.4 iterations on average (11 a
 * step, with the whip's halvings), and the chord contracts by 1e-3–1e-4 per iteration in
 * the swing, so a tolerance a thousand times looser would save about one of them.
 */
import type { FemSpec, ModelSpec, SolverSpec } from "../../../schemas/model";

/** The solver settings with the problem's defaults filled in (maxIterations: null = budget.ts). */
export interface ResolvedSolver extends SolverSpec {
  newtonIterations: number;
  gyroscopicJacobian: boolean;
  jointTolerance: number;
  contactSolver: NonNullable<SolverSpec["contactSolver"]>;
  projectOnConstraints: boolean;
  tolerance: number;
  maxIterations: number | null;
  projectionTolerance: number;
  projectionIterations: number | null;
}

/**
 * solver.newtonIterations unset: Newton iterated to newtonTolerance, 25 iterations at most
 * per attempt before the step is redone in halves (integrators/step-halving.ts); a converging
 * solve takes a few (4.4 on average on the benchmark's 100-link chain, see above).
 */
export const DEFAULT_NEWTON_ITERATIONS = 25;
/**
 * solver.gyroscopicJacobian unset: the gyroscopic torque's Jacobians in the iteration matrix,
 * without which a fast-spinning asymmetric body diverges (forces/gyroscopic.ts); leaving
 * them out is an optimization a model asks for.
 */
export const DEFAULT_GYROSCOPIC_JACOBIAN = true;
/**
 * solver.jointTolerance unset (m, rad): the joint drift the post-step projection leaves
 * (integrators/joint-projection.ts), which takes one to three chord updates a step for it,
 * up to ~15 after a violent whip step.
 */
export const DEFAULT_JOINT_TOLERANCE = 1e-12;

/** ε = CONTACT_VELOCITY_FRACTION·|g|·h (m/s), see the file comment. */
export const CONTACT_VELOCITY_FRACTION = 1e-3;
/** Without gravity: ε = CONTACT_DRIFT_FRACTION·ℓ/h (m/s). */
export const CONTACT_DRIFT_FRACTION = 1e-6;
/** projectionTolerance = PENETRATION_FRACTION·ℓ (m). */
export const PENETRATION_FRACTION = 2e-3;
/** ℓ of a model with no colliding shape of finite size (m): its tolerances then bind nothing. */
const NO_SIZE = 1;

/**
 * ℓ (m): the size of the smallest shape that collides and moves — a sphere's or capsule's
 * radius, a box's smallest half extent, a cylinder's smaller of radius and half length, half
 * the smallest side of a convex or mesh shape's bounding box (shape frame), half the
 * shortest edge of a colliding fem body's cells. Fixed bodies' shapes and planes are left
 * out: the penetration that matters is measured against what moves.
 */
export function contactSize(model: ModelSpec): number {
  let size = Number.POSITIVE_INFINITY;
  for (const b of model.bodies) {
    if (b.fixed) continue;
    for (const s of b.shapes) size = Math.min(size, shapeSize(s));
  }
  for (const f of model.fem ?? []) if (f.contact) size = Math.min(size, 0.5 * femEdge(f));
  return Number.isFinite(size) ? size : NO_SIZE;
}

type ShapeSpec = ModelSpec["bodies"][number]["shapes"][number];

function shapeSize(s: ShapeSpec): number {
  switch (s.type) {
    case "sphere":
    case "capsule":
      return s.radius;
    case "box":
      return Math.min(...s.halfExtents);
    case "cylinder":
      return Math.min(s.radius, s.halfLength);
    case "convex":
      return 0.5 * smallestSide(s.points);
    case "mesh":
      return 0.5 * smallestSide(s.vertices);
    case "plane":
      return Number.POSITIVE_INFINITY;
  }
}

/** The smallest side of the points' axis-aligned bounding box. */
function smallestSide(points: readonly (readonly number[])[]): number {
  let side = Number.POSITIVE_INFINITY;
  for (let k = 0; k < 3; k++) {
    let lo = Number.POSITIVE_INFINITY;
    let hi = Number.NEGATIVE_INFINITY;
    for (const p of points) {
      lo = Math.min(lo, p[k]);
      hi = Math.max(hi, p[k]);
    }
    side = Math.min(side, hi - lo);
  }
  return side;
}

/** A fem body's shortest cell edge (m): a meshed box's cell sides, else its tetrahedra's edges. */
function femEdge(f: FemSpec): number {
  if (f.box) {
    const { size, resolution } = f.box;
    return Math.min(size[0] / resolution[0], size[1] / resolution[1], size[2] / resolution[2]);
  }
  const nodes = f.nodes ?? [];
  let edge = Number.POSITIVE_INFINITY;
  for (const tet of f.elements ?? [])
    for (let i = 0; i < 4; i++)
      for (let j = i + 1; j < 4; j++) {
        const a = nodes[tet[i]];
        const b = nodes[tet[j]];
        edge = Math.min(edge, Math.hypot(a[0] - b[0], a[1] - b[1], a[2] - b[2]));
      }
  return edge;
}

/**
 * The settings `spec` with the defaults of the problem filled in: ℓ = contactSize(model) and
 * the gravity now (m/s², a PATCH may change it).
 */
export function resolveSolver(
  spec: SolverSpec,
  size: number,
  gravity: readonly number[],
): ResolvedSolver {
  const g = Math.hypot(gravity[0], gravity[1], gravity[2]);
  const h = spec.dt;
  const velocity = g > 0 ? CONTACT_VELOCITY_FRACTION * g * h : (CONTACT_DRIFT_FRACTION * size) / h;
  return {
    ...spec,
    // filled in whatever the integrator: the choices that do not read them (schemas/model.ts
    // SETTING_READERS) leave them unused
    newtonIterations: spec.newtonIterations ?? DEFAULT_NEWTON_ITERATIONS,
    gyroscopicJacobian: spec.gyroscopicJacobian ?? DEFAULT_GYROSCOPIC_JACOBIAN,
    jointTolerance: spec.jointTolerance ?? DEFAULT_JOINT_TOLERANCE,
    contactSolver: spec.contactSolver ?? "nncg",
    projectOnConstraints: spec.projectOnConstraints ?? true,
    tolerance: spec.tolerance ?? velocity,
    maxIterations: spec.maxIterations ?? null,
    projectionTolerance: spec.projectionTolerance ?? PENETRATION_FRACTION * size,
    projectionIterations: spec.projectionIterations ?? null,
  };
}
