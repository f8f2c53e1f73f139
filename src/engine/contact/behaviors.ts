/**
 * Compliant contact behaviors, after ArtiSynth's ContactForceBehavior
 * (reference/artisynth-ContactForceBehavior.txt).
 *
 * `computeResponse(dist, cpnt0, cpnt1, normal, contactArea)` maps the interpenetration
 * distance `dist` (m, NEGATIVE when penetrating, as ArtiSynth) to
 *   force       f(dist) (N): the restoring force, negative for dist < 0 (as ArtiSynth: "a
 *               negative force will be expected"); the push on the bodies is −f ≥ 0;
 *   compliance  1/f′(dist) (m/N); 0 means "no compliance", and then no damping is applied;
 *   damping     d (N·s/m), a damping coefficient along the normal;
 *   stepDamping s (dimensionless), so that the effective damping is
 *               d_eff = max(damping, stepDamping·h/compliance),
 *               which keeps the damping time constant d_eff·compliance ≥ s·h (s = 1/2:
 *               h/2, the minimum ArtiSynth names for stable compliant contact) without the
 *               behavior knowing h. Damping is applied only when compliance > 0.
 * Beyond ArtiSynth's four values, the response carries `stiffnessRate` = f″(dist) (N/m²)
 * so the compliant contact effector can form the exact Jacobian of d_eff when the step
 * damping term is the active one (compliant.ts), and each behavior gives its elastic
 * potential ∫ −f (the energy reported in the state).
 *
 * The behaviors are defined for dist ≤ 0 (at dist = 0: force 0 and the compliance of the
 * first contact, e.g. 1/k, which the compliant effector uses to continue the force law
 * across dist = 0 within a step); for dist > 0 every one returns force 0 and compliance 0.
 *
 * Contact points carry the principal radius of curvature of their surface (`radius`:
 * the sphere's or capsule's radius, Infinity for planes and box faces), which Hertz uses.
 */
import type { ContactBehaviorSpec } from "../../../schemas/model";

/** One side of a contact, as ArtiSynth's ContactPoint (the part the behaviors read). */
export interface ContactPoint {
  /** World position of the surface point (m). */
  readonly position: ArrayLike<number>;
  /** Body index, −1 for the world. */
  readonly body: number;
  /** Radius of curvature of the surface at the point (m); Infinity when flat. */
  readonly radius: number;
}

/** What computeResponse returns (a reused object: read it before the next call). */
export interface ContactResponse {
  /** f(dist) (N), ≤ 0 when penetrating. */
  force: number;
  /** 1/f′(dist) (m/N); 0 = rigid / not applicable (then no damping). */
  compliance: number;
  /** Damping coefficient (N·s/m). */
  damping: number;
  /** Step damping factor (dimensionless). */
  stepDamping: number;
  /** f″(dist) (N/m²), for exact Jacobians of the step-damping term. */
  stiffnessRate: number;
}

export interface ContactBehavior {
  readonly type: ContactBehaviorSpec["type"];
  /** Whether the response depends on contactArea (else it is a law per contact). */
  readonly readsArea: boolean;
  /**
   * The response to an interpenetration dist (m, negative when penetrating) for the
   * contact points cpnt0 (body a) and cpnt1 (body b), normal from cpnt0 to cpnt1, and the
   * contact area (m², see area.ts). Returns a reused object.
   */
  computeResponse(
    dist: number,
    cpnt0: ContactPoint,
    cpnt1: ContactPoint,
    normal: ArrayLike<number>,
    contactArea: number,
  ): ContactResponse;
  /** Elastic energy stored at dist (J): ∫₀^δ F(δ′) dδ′ with δ = −dist and F = −f; 0 for dist ≥ 0. */
  potential(
    dist: number,
    cpnt0: ContactPoint,
    cpnt1: ContactPoint,
    normal: ArrayLike<number>,
    contactArea: number,
  ): number;
}

/**
 * Effective damping d = max(damping, stepDamping·h/compliance), applied only when
 * compliance > 0 (ArtiSynth's rule); 0 otherwise.
 */
export function effectiveDamping(r: ContactResponse, h: number): number {
  if (!(r.compliance > 0)) return 0;
  return Math.max(r.damping, (r.stepDamping * h) / r.compliance);
}

function makeResponse(): ContactResponse {
  return { force: 0, compliance: 0, damping: 0, stepDamping: 0, stiffnessRate: 0 };
}

function setSeparated(r: ContactResponse): ContactResponse {
  r.force = 0;
  r.compliance = 0;
  r.stiffnessRate = 0;
  return r;
}

/**
 * Linear: f = k·dist (optionally k·A·dist with `perUnitArea`, k then in N/m³ — a pressure
 * per unit penetration, ArtiSynth's LinearElasticContact style), compliance 1/k (1/(kA)).
 * With perUnitArea and a zero area there is no force and no compliance.
 */
export class LinearContactBehavior implements ContactBehavior {
  readonly type = "linear" as const;
  private readonly r = makeResponse();

  get readsArea(): boolean {
    return this.perUnitArea;
  }

  constructor(
    readonly stiffness: number,
    readonly damping = 0,
    readonly stepDamping = 0,
    readonly perUnitArea = false,
  ) {
    if (!(stiffness > 0)) throw new RangeError("linear contact stiffness must be > 0");
    this.r.damping = damping;
    this.r.stepDamping = stepDamping;
  }

  private k(area: number): number {
    return this.perUnitArea ? this.stiffness * Math.max(area, 0) : this.stiffness;
  }

  computeResponse(
    dist: number,
    _c0: ContactPoint,
    _c1: ContactPoint,
    _n: ArrayLike<number>,
    area: number,
  ): ContactResponse {
    const r = this.r;
    const k = this.k(area);
    if (!(dist <= 0) || k === 0) return setSeparated(r);
    r.force = k * dist;
    r.compliance = 1 / k;
    r.stiffnessRate = 0;
    return r;
  }

  potential(
    dist: number,
    _c0: ContactPoint,
    _c1: ContactPoint,
    _n: ArrayLike<number>,
    area: number,
  ): number {
    return dist < 0 ? 0.5 * this.k(area) * dist * dist : 0;
  }
}

/**
 * Hertz contact of two elastic bodies of the same material (Johnson, Contact Mechanics,
 * §4.2): with δ = −dist, the effective radius R = 1/(1/r₀ + 1/r₁) (the two surfaces'
 * radii of curvature) and the contact modulus 1/E* = (1−ν²)/E + (1−ν²)/E = 2(1−ν²)/E,
 *   F = (4/3) E* √R δ^{3/2},   f′ = 2 E* √R δ^{1/2},   f″ = −E* √R δ^{−1/2}.
 * A sphere on a plane has R = r. When neither surface is curved (R = ∞: box faces and
 * corners on a plane) the documented equivalent is Sneddon's rigid flat punch of the
 * contact area A (radius a = √(A/π)): F = 2 E* a δ, linear.
 * At δ → 0 the Hertz stiffness vanishes, so compliance → ∞ and step damping → 0.
 */
export class HertzContactBehavior implements ContactBehavior {
  readonly type = "hertz" as const;
  /** Sneddon's flat punch (neither surface curved) reads it. */
  readonly readsArea = true;
  /** E* (Pa). */
  readonly contactModulus: number;
  private readonly r = makeResponse();

  constructor(
    readonly youngModulus: number,
    readonly poissonRatio = 0.3,
    readonly damping = 0,
    readonly stepDamping = 0,
  ) {
    if (!(youngModulus > 0)) throw new RangeError("Hertz youngModulus must be > 0");
    if (!(poissonRatio >= 0 && poissonRatio < 0.5))
      throw new RangeError("Hertz poissonRatio must be in [0, 0.5)");
    this.contactModulus = youngModulus / (2 * (1 - poissonRatio * poissonRatio));
    this.r.damping = damping;
    this.r.stepDamping = stepDamping;
  }

  /** Effective radius 1/(1/r₀ + 1/r₁) (Infinity when both are flat). */
  static effectiveRadius(r0: number, r1: number): number {
    const k =
      (r0 > 0 ? 1 / r0 : Number.POSITIVE_INFINITY) + (r1 > 0 ? 1 / r1 : Number.POSITIVE_INFINITY);
    return k > 0 ? 1 / k : Number.POSITIVE_INFINITY;
  }

  computeResponse(
    dist: number,
    c0: ContactPoint,
    c1: ContactPoint,
    _n: ArrayLike<number>,
    area: number,
  ): ContactResponse {
    const r = this.r;
    if (!(dist <= 0)) return setSeparated(r);
    const d = -dist;
    const E = this.contactModulus;
    const R = HertzContactBehavior.effectiveRadius(c0.radius, c1.radius);
    if (R === Number.POSITIVE_INFINITY) {
      const k = 2 * E * Math.sqrt(Math.max(area, 0) / Math.PI);
      if (k === 0) return setSeparated(r);
      r.force = k * dist;
      r.compliance = 1 / k;
      r.stiffnessRate = 0;
      return r;
    }
    const sR = Math.sqrt(R);
    const sd = Math.sqrt(d);
    r.force = -(4 / 3) * E * sR * d * sd;
    const slope = 2 * E * sR * sd;
    r.compliance = slope > 0 ? 1 / slope : Number.POSITIVE_INFINITY;
    r.stiffnessRate = sd > 0 ? -(E * sR) / sd : 0;
    return r;
  }

  potential(
    dist: number,
    c0: ContactPoint,
    c1: ContactPoint,
    _n: ArrayLike<number>,
    area: number,
  ): number {
    if (!(dist < 0)) return 0;
    const d = -dist;
    const E = this.contactModulus;
    const R = HertzContactBehavior.effectiveRadius(c0.radius, c1.radius);
    if (R === Number.POSITIVE_INFINITY)
      return 0.5 * 2 * E * Math.sqrt(Math.max(area, 0) / Math.PI) * d * d;
    return (8 / 15) * E * Math.sqrt(R) * d * d * Math.sqrt(d);
  }
}

/**
 * Piecewise-linear force table: points [δ_k, F_k] (penetration δ = −dist ≥ 0, force ≥ 0),
 * ascending in δ, starting at [0, 0]. F is interpolated linearly and extrapolated beyond
 * the last point with the last segment's slope; f′ is the slope of the segment containing
 * δ (the segment to the right at a breakpoint), f″ = 0. A zero slope gives compliance ∞.
 */
export class TableContactBehavior implements ContactBehavior {
  readonly type = "table" as const;
  readonly readsArea = false;
  readonly pen: Float64Array;
  readonly frc: Float64Array;
  /** ∫₀^{δ_k} F, for the potential. */
  private readonly work: Float64Array;
  private readonly r = makeResponse();

  constructor(
    points: ReadonlyArray<readonly [number, number]>,
    readonly damping = 0,
    readonly stepDamping = 0,
  ) {
    if (points.length < 2) throw new RangeError("a contact force table needs at least 2 points");
    if (points[0][0] !== 0 || points[0][1] !== 0)
      throw new RangeError("a contact force table starts at [0, 0]");
    for (let i = 1; i < points.length; i++)
      if (!(points[i][0] > points[i - 1][0]))
        throw new RangeError("contact force table penetrations must be strictly ascending");
    const n = points.length;
    this.pen = Float64Array.from(points, (p) => p[0]);
    this.frc = Float64Array.from(points, (p) => p[1]);
    this.work = new Float64Array(n);
    for (let i = 1; i < n; i++)
      this.work[i] =
        this.work[i - 1] + 0.5 * (this.frc[i] + this.frc[i - 1]) * (this.pen[i] - this.pen[i - 1]);
    this.r.damping = damping;
    this.r.stepDamping = stepDamping;
  }

  /** Segment k (0..n−2) with pen[k] ≤ δ < pen[k+1], the last one beyond the table. */
  private segment(d: number): number {
    const p = this.pen;
    let lo = 0;
    let hi = p.length - 2;
    if (d >= p[hi]) return hi;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (p[mid] <= d) lo = mid;
      else hi = mid - 1;
    }
    return lo;
  }

  /** F(δ) and its slope. */
  private evaluate(d: number): { F: number; slope: number; k: number } {
    const k = this.segment(d);
    const slope = (this.frc[k + 1] - this.frc[k]) / (this.pen[k + 1] - this.pen[k]);
    return { F: this.frc[k] + slope * (d - this.pen[k]), slope, k };
  }

  computeResponse(
    dist: number,
    _c0: ContactPoint,
    _c1: ContactPoint,
    _n: ArrayLike<number>,
    _area: number,
  ): ContactResponse {
    const r = this.r;
    if (!(dist <= 0)) return setSeparated(r);
    const d = -dist;
    const k = this.segment(d);
    const slope = (this.frc[k + 1] - this.frc[k]) / (this.pen[k + 1] - this.pen[k]);
    r.force = -(this.frc[k] + slope * (d - this.pen[k]));
    r.compliance = slope > 0 ? 1 / slope : Number.POSITIVE_INFINITY;
    r.stiffnessRate = 0;
    return r;
  }

  potential(
    dist: number,
    _c0: ContactPoint,
    _c1: ContactPoint,
    _n: ArrayLike<number>,
    _area: number,
  ): number {
    if (!(dist < 0)) return 0;
    const d = -dist;
    const { F, k } = this.evaluate(d);
    return this.work[k] + 0.5 * (this.frc[k] + F) * (d - this.pen[k]);
  }
}

/** The behavior a model's `contact.behavior` describes. */
export function createContactBehavior(spec: ContactBehaviorSpec): ContactBehavior {
  switch (spec.type) {
    case "linear":
      return new LinearContactBehavior(
        spec.stiffness,
        spec.damping,
        spec.stepDamping,
        spec.perUnitArea,
      );
    case "hertz":
      return new HertzContactBehavior(
        spec.youngModulus,
        spec.poissonRatio,
        spec.damping,
        spec.stepDamping,
      );
    case "table":
      return new TableContactBehavior(spec.points, spec.damping, spec.stepDamping);
  }
}
