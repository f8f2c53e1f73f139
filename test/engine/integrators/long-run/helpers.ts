/**
 * Shared pieces of the long-run mechanism tests: small vector and quaternion algebra, a
 * fourth-order Runge–Kutta integrator for the independent references, the
 * generalized-α parameters and amplification matrix, and an opt-in report of the
 * measured figures (LONG_RUN_REPORT=1 prints them; the tests are silent otherwise).
 *
 * Nothing here calls the engine: the references are computed from the physics alone.
 */
import { EigenvalueDecomposition, Matrix } from "ml-matrix";

export type Vec3 = [number, number, number];
/** Unit quaternion [w, x, y, z] (the engine's convention). */
export type Quat = [number, number, number, number];

export const add = (a: Vec3, b: Vec3): Vec3 => [a[0] + b[0], a[1] + b[1], a[2] + b[2]];
export const sub = (a: Vec3, b: Vec3): Vec3 => [a[0] - b[0], a[1] - b[1], a[2] - b[2]];
export const scale = (s: number, a: Vec3): Vec3 => [s * a[0], s * a[1], s * a[2]];
export const dot = (a: Vec3, b: Vec3): number => a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
export const norm = (a: Vec3): number => Math.sqrt(dot(a, a));
export const cross = (a: Vec3, b: Vec3): Vec3 => [
  a[1] * b[2] - a[2] * b[1],
  a[2] * b[0] - a[0] * b[2],
  a[0] * b[1] - a[1] * b[0],
];

/** The rotation by `angle` (rad) about the unit vector `axis`, right-handed. */
export function axisAngle(axis: Vec3, angle: number): Quat {
  const s = Math.sin(0.5 * angle);
  return [Math.cos(0.5 * angle), s * axis[0], s * axis[1], s * axis[2]];
}

/** R(q) v for a unit quaternion q = [w, x, y, z]: v + 2w (u × v) + 2 u × (u × v), u = (x, y, z). */
export function rotate(q: readonly number[], v: Vec3): Vec3 {
  const [w, x, y, z] = q;
  const u: Vec3 = [x, y, z];
  const t = scale(2, cross(u, v));
  return add(add(v, scale(w, t)), cross(u, t));
}

/** The angle (rad) of the turn between unit quaternions a and b, |log(a⁻¹ b)|. */
export function turnBetween(a: readonly number[], b: readonly number[]): number {
  const [w, x, y, z] = a;
  const pw = w * b[0] + x * b[1] + y * b[2] + z * b[3];
  const px = w * b[1] - x * b[0] - y * b[3] + z * b[2];
  const py = w * b[2] + x * b[3] - y * b[0] - z * b[1];
  const pz = w * b[3] - x * b[2] + y * b[1] - z * b[0];
  return 2 * Math.atan2(Math.hypot(px, py, pz), Math.abs(pw));
}

/**
 * A rigid body state's body-frame rate Ω = R(q)ᵀ ω (rad/s), world angular momentum
 * R I Ω (kg·m²/s) and kinetic energy ½ Ωᵀ I Ω (J), I its principal inertias (kg·m²).
 */
export function bodyRates(s: { orientation: number[]; angularVelocity: number[] }, inertia: Vec3) {
  const q = s.orientation;
  const local = rotate([q[0], -q[1], -q[2], -q[3]], s.angularVelocity as Vec3);
  const momentum = rotate(q, [inertia[0] * local[0], inertia[1] * local[1], inertia[2] * local[2]]);
  const energy =
    0.5 * (inertia[0] * local[0] ** 2 + inertia[1] * local[1] ** 2 + inertia[2] * local[2] ** 2);
  return { local, momentum, energy };
}

/**
 * The torque-free rigid body of principal inertias I (kg·m²) as y' = f(t, y) for Rk4,
 * y = (Ω, q): Euler's equations I Ω̇ = (I Ω) × Ω and q̇ = ½ q ⊗ (0, Ω).
 */
export function eulerRigidBody(I: Vec3) {
  return (_t: number, y: Float64Array, dy: Float64Array): void => {
    const [a, b, c, q0, q1, q2, q3] = y;
    dy[0] = ((I[1] - I[2]) * b * c) / I[0];
    dy[1] = ((I[2] - I[0]) * c * a) / I[1];
    dy[2] = ((I[0] - I[1]) * a * b) / I[2];
    dy[3] = 0.5 * (-q1 * a - q2 * b - q3 * c);
    dy[4] = 0.5 * (q0 * a + q2 * c - q3 * b);
    dy[5] = 0.5 * (q0 * b + q3 * a - q1 * c);
    dy[6] = 0.5 * (q0 * c + q1 * b - q2 * a);
  };
}

/** The angle a (rad) shifted by a multiple of 2π to lie within π of `previous` (unwrapping). */
export function unwrap(previous: number, a: number): number {
  return a + 2 * Math.PI * Math.round((previous - a) / (2 * Math.PI));
}

/**
 * Classical fourth-order Runge–Kutta for y' = f(t, y), with preallocated stages (the
 * references take 1e5–1e6 steps). Its global error is O(H⁴) in its own step H; the tests
 * use H at least 100 times smaller than the engine's step, so against the engine's O(h²)
 * errors the reference is exact for every purpose here (each test says by how much).
 */
export class Rk4 {
  readonly y: Float64Array;
  t: number;
  private readonly k1: Float64Array;
  private readonly k2: Float64Array;
  private readonly k3: Float64Array;
  private readonly k4: Float64Array;
  private readonly tmp: Float64Array;

  constructor(
    private readonly f: (t: number, y: Float64Array, dy: Float64Array) => void,
    y0: readonly number[],
    t0 = 0,
  ) {
    const n = y0.length;
    this.y = Float64Array.from(y0);
    this.t = t0;
    this.k1 = new Float64Array(n);
    this.k2 = new Float64Array(n);
    this.k3 = new Float64Array(n);
    this.k4 = new Float64Array(n);
    this.tmp = new Float64Array(n);
  }

  /** `steps` steps of size H. */
  advance(H: number, steps: number): void {
    const { f, y, k1, k2, k3, k4, tmp } = this;
    const n = y.length;
    for (let s = 0; s < steps; s++) {
      const t = this.t;
      f(t, y, k1);
      for (let i = 0; i < n; i++) tmp[i] = y[i] + 0.5 * H * k1[i];
      f(t + 0.5 * H, tmp, k2);
      for (let i = 0; i < n; i++) tmp[i] = y[i] + 0.5 * H * k2[i];
      f(t + 0.5 * H, tmp, k3);
      for (let i = 0; i < n; i++) tmp[i] = y[i] + H * k3[i];
      f(t + H, tmp, k4);
      for (let i = 0; i < n; i++) y[i] += (H / 6) * (k1[i] + 2 * k2[i] + 2 * k3[i] + k4[i]);
      this.t = t + H;
    }
  }
}

/**
 * A one-dof reference θ'' = accel(θ) (a conservative mechanism reduced to its coordinate),
 * integrated by RK4 with `substeps` steps per engine step h, so that after `step()` it holds
 * θ(n h) for the engine's step count n exactly (no accumulated time roundoff).
 */
export class OneDofReference {
  private readonly rk: Rk4;
  constructor(
    accel: (theta: number) => number,
    theta0: number,
    rate0: number,
    private readonly h: number,
    private readonly substeps: number,
  ) {
    this.rk = new Rk4(
      (_t, y, dy) => {
        dy[0] = y[1];
        dy[1] = accel(y[0]);
      },
      [theta0, rate0],
    );
  }
  /** Advances one engine step h. */
  step(): void {
    this.rk.advance(this.h / this.substeps, this.substeps);
  }
  get theta(): number {
    return this.rk.y[0];
  }
  get rate(): number {
    return this.rk.y[1];
  }
}

/**
 * Chung & Hulbert's generalized-α parameters for a spectral radius ρ∞ at infinite
 * frequency (J. Appl. Mech. 60, 1993), as Arnold & Brüls (Multibody Syst. Dyn. 18, 2007)
 * use them: α_m = (2ρ∞ − 1)/(ρ∞ + 1), α_f = ρ∞/(ρ∞ + 1), γ = ½ + α_f − α_m (second order),
 * β = ¼ (γ + ½)² (the high-frequency roots merge at −ρ∞).
 */
export function generalizedAlphaParameters(rhoInf: number) {
  const alphaM = (2 * rhoInf - 1) / (rhoInf + 1);
  const alphaF = rhoInf / (rhoInf + 1);
  const gamma = 0.5 + alphaF - alphaM;
  const beta = 0.25 * (gamma + 0.5) ** 2;
  return { alphaM, alphaF, gamma, beta };
}

/**
 * The amplification matrix of Arnold & Brüls' generalized-α on x'' = −ω² x, in the
 * dimensionless state z = (x, h v, h² a) (a the scheme's acceleration-like variable),
 * Ω = h ω. The recurrences
 *   (1 − α_m) a_{n+1} + α_m a_n = (1 − α_f) ẍ_{n+1} + α_f ẍ_n,   ẍ_n = −ω² x_n,
 *   x_{n+1} = x_n + h v_n + h² (½ − β) a_n + h² β a_{n+1},
 *   v_{n+1} = v_n + h (1 − γ) a_n + h γ a_{n+1}
 * become, with X = x, V = h v, A = h² a and x_{n+1} substituted in the first,
 *   A_{n+1} = −[Ω² X_n + Ω² (1 − α_f) V_n + (Ω² (1 − α_f)(½ − β) + α_m) A_n] / D,
 *   D = 1 − α_m + Ω² (1 − α_f) β,
 * then X_{n+1}, V_{n+1} from the other two. Columns: the images of the unit vectors.
 */
export function amplificationMatrix(rhoInf: number, Omega: number): Matrix {
  const { alphaM, alphaF, gamma, beta } = generalizedAlphaParameters(rhoInf);
  const W2 = Omega * Omega;
  const D = 1 - alphaM + W2 * (1 - alphaF) * beta;
  const image = (X: number, V: number, A: number): Vec3 => {
    const A1 =
      -(W2 * X + W2 * (1 - alphaF) * V + (W2 * (1 - alphaF) * (0.5 - beta) + alphaM) * A) / D;
    return [X + V + (0.5 - beta) * A + beta * A1, V + (1 - gamma) * A + gamma * A1, A1];
  };
  const c = [image(1, 0, 0), image(0, 1, 0), image(0, 0, 1)];
  return new Matrix([0, 1, 2].map((i) => [c[0][i], c[1][i], c[2][i]]));
}

/** The eigenvalues (re, im) of the amplification matrix, largest modulus first. */
export function amplificationEigenvalues(rhoInf: number, Omega: number): [number, number][] {
  const e = new EigenvalueDecomposition(amplificationMatrix(rhoInf, Omega));
  const out = e.realEigenvalues.map((re, i): [number, number] => [re, e.imaginaryEigenvalues[i]]);
  return out.sort((p, q) => Math.hypot(q[0], q[1]) - Math.hypot(p[0], p[1]));
}

/** The spectral radius (largest eigenvalue modulus) of the amplification matrix. */
export function spectralRadius(rhoInf: number, Omega: number): number {
  const [re, im] = amplificationEigenvalues(rhoInf, Omega)[0];
  return Math.hypot(re, im);
}

/**
 * Arnold & Brüls' generalized-α (the recurrences of amplificationMatrix) on a scalar
 * equation θ'' = accel(θ), Newton on ä_{n+1} to rounding, started at a_0 = ä_0 = accel(θ0).
 * Not a reference for the physics (that is RK4) and not asserted against: a yardstick of
 * the error a second-order scheme of this family makes at the engine's h on the
 * mechanism's reduced equation (on a hinge, a Lie-group generalized-α coincides with it),
 * reported beside the engine's error.
 */
export class ScalarGeneralizedAlpha {
  theta: number;
  rate: number;
  private acc: number;
  private pseudo: number;
  private readonly p: ReturnType<typeof generalizedAlphaParameters>;
  constructor(
    private readonly accel: (theta: number) => number,
    theta0: number,
    rate0: number,
    rhoInf: number,
    private readonly h: number,
  ) {
    this.theta = theta0;
    this.rate = rate0;
    this.acc = accel(theta0);
    this.pseudo = this.acc;
    this.p = generalizedAlphaParameters(rhoInf);
  }
  step(): void {
    const { alphaM, alphaF, gamma, beta } = this.p;
    const { h, accel } = this;
    const k = 1 / (1 - alphaM);
    const position = (next: number) => {
      const a1 = k * ((1 - alphaF) * next + alphaF * this.acc - alphaM * this.pseudo);
      return this.theta + h * this.rate + h * h * ((0.5 - beta) * this.pseudo + beta * a1);
    };
    let next = this.acc;
    for (let it = 0; it < 50; it++) {
      const x = position(next);
      const residual = next - accel(x);
      const slope = (accel(x + 1e-7) - accel(x - 1e-7)) / 2e-7;
      const d = residual / (1 - slope * h * h * beta * (1 - alphaF) * k);
      next -= d;
      if (Math.abs(d) <= 1e-15 * (1 + Math.abs(next))) break;
    }
    const a1 = k * ((1 - alphaF) * next + alphaF * this.acc - alphaM * this.pseudo);
    this.theta = position(next);
    this.rate += h * ((1 - gamma) * this.pseudo + gamma * a1);
    this.pseudo = a1;
    this.acc = next;
  }
}

/** Prints measured figures when LONG_RUN_REPORT is set (the tests are silent otherwise). */
export function report(what: string, figures: Record<string, number | string>): void {
  if (!process.env.LONG_RUN_REPORT) return;
  const text = Object.entries(figures)
    .map(([k, v]) => `${k}=${typeof v === "number" ? v.toPrecision(4) : v}`)
    .join(" ");
  console.info(`[long-run] ${what}: ${text}`);
}

/** A body's mass (kg) and principal moments (kg·m², about its body axes at the COM). */
export interface MassProperties {
  mass: number;
  inertia: readonly number[];
}

/** The part of a reported body state these measures read. */
export interface BodyMotion {
  id: string;
  position: readonly number[];
  orientation: readonly number[];
  velocity: readonly number[];
  angularVelocity: readonly number[];
}

/** The angular momentum (kg·m²/s, world frame) of a body about its COM: R I Rᵀ ω. */
function spinMomentum(b: BodyMotion, p: MassProperties): Vec3 {
  const [w, x, y, z] = b.orientation;
  const local = rotate([w, -x, -y, -z], b.angularVelocity as Vec3); // Rᵀ ω
  return rotate(b.orientation, [
    p.inertia[0] * local[0],
    p.inertia[1] * local[1],
    p.inertia[2] * local[2],
  ]);
}

/**
 * Kinetic and potential energy (J) of the listed bodies from their reported states, computed
 * here rather than read from the engine: T = Σ ½ m v² + ½ ω·(R I Rᵀ ω), V = Σ m g (up·x)
 * (gravity g along −up, up a unit vector: ẑ unless given). Bodies not in `props` are skipped.
 */
export function mechanicalEnergy(
  bodies: readonly BodyMotion[],
  props: Record<string, MassProperties>,
  g: number,
  up: Vec3 = [0, 0, 1],
): { kinetic: number; total: number } {
  let kinetic = 0;
  let potential = 0;
  for (const b of bodies) {
    const p = props[b.id];
    if (!p) continue;
    const v = b.velocity as Vec3;
    kinetic += 0.5 * p.mass * dot(v, v) + 0.5 * dot(b.angularVelocity as Vec3, spinMomentum(b, p));
    potential += p.mass * g * dot(up, b.position as Vec3);
  }
  return { kinetic, total: kinetic + potential };
}

/**
 * The angular momentum about the vertical through the origin (kg·m²/s): Σ ẑ·(R I Rᵀ ω +
 * m x × v), a constant of any motion whose forces have no moment about that line.
 */
export function verticalMomentum(
  bodies: readonly BodyMotion[],
  props: Record<string, MassProperties>,
): number {
  let Lz = 0;
  for (const b of bodies) {
    const p = props[b.id];
    if (!p) continue;
    Lz += spinMomentum(b, p)[2] + p.mass * cross(b.position as Vec3, b.velocity as Vec3)[2];
  }
  return Lz;
}
