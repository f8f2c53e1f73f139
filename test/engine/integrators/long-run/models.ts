/**
 * The mechanisms of the long-run tests, built with the initial state the physics
 * prescribes (positions, orientations and velocities consistent with the joints and with
 * the exact motion), and the closed-form quantities their references need. The solver
 * block is the caller's, so the same mechanism runs with any integrator setting.
 */
import { axisAngle, cross, type Quat, scale, type Vec3 } from "./helpers";

export type Solver = Record<string, unknown>;

/** Gravity (m/s²) of the models with gravity, along −z. */
export const G = 9.81;

// ---------------------------------------------------------------------------------------
// Spinning rod: a thin rod of length 1 m and mass 1 kg (COM 0.5 m from its end), hinged at
// its end to the ground (axis z through the origin), no gravity, spinning at ω = 2π rad/s.
export const rod = { mass: 1, length: 1, r: 0.5, omega: 2 * Math.PI };

export function spinningRodModel(solver: Solver) {
  const { mass, length, r, omega } = rod;
  // Rod along its body x axis, lying along world x at t = 0: COM at r x̂. The exact motion is
  // a rotation about ẑ at ω: angular velocity ω ẑ, COM velocity ω ẑ × r x̂ = ω r ŷ.
  const w: Vec3 = [0, 0, omega];
  const rc: Vec3 = [r, 0, 0];
  const transverse = (mass * length * length) / 12;
  return {
    name: "spinning-rod",
    gravity: [0, 0, 0],
    bodies: [
      {
        id: "rod",
        kind: "rigid",
        mass,
        position: rc,
        velocity: cross(w, rc),
        angularVelocity: w,
        // thin rod about its COM: m L²/12 across, a small positive value along it
        inertia: [1e-4, transverse, transverse],
      },
    ],
    joints: [
      {
        id: "hinge",
        type: "revolute",
        a: { body: "ground", point: [0, 0, 0] },
        b: { body: "rod", point: [-r, 0, 0] },
        axis: [0, 0, 1],
      },
    ],
    solver,
  };
}

// ---------------------------------------------------------------------------------------
// Parallelogram linkage: n equal cranks (length L, mass mc, thin rods) pinned to the ground
// at x_i = i d (z = 0), their tips pinned to one rigid coupler bar (mass mk) at the same
// spacing d; all joint axes along y, gravity −z, so the motion is in the xz plane.
export const parallelogram = { n: 3, L: 0.4, d: 0.5, mc: 0.2, mk: 0.6 };

/**
 * The one-dof reduction. With θ the cranks' common angle from +x towards +z (crank
 * direction e(θ) = (cos θ, 0, sin θ)), every crank turns about its pivot and the coupler,
 * whose pins sit on the tips i d + L e(θ), translates by L e(θ) without rotating (its pins
 * keep the spacing of the pivots). So
 *   T = ½ J θ̇²,  J = n mc L²/3 (thin crank about its end) + mk L² (translating coupler),
 *   V = g sin θ (n mc L/2 + mk L) = g S sin θ  (COM heights L/2 sin θ and L sin θ),
 * and the equation of motion is J θ̈ = −∂V/∂θ = −g S cos θ.
 */
export function parallelogramReduced() {
  const { n, L, mc, mk } = parallelogram;
  const J = (n * mc * L * L) / 3 + mk * L * L;
  const S = (n * mc * L) / 2 + mk * L;
  return { J, S, accel: (theta: number) => (-G * S * Math.cos(theta)) / J };
}

/**
 * Newton–Euler's equal share of the joint forces (N, on the coupler at each pin, on each
 * crank at its pivot) in the state θ, θ̇ of the one-dof motion. Three equal cranks on one
 * coupler are a redundant loop, so the forces are determined only up to its self-stress
 * (the cranks' pull (1, −2, 1) along their length); the smallest multipliers of those
 * forces, which the engine reports, are the equal share, the load a real linkage of
 * equal elastic cranks takes. With e = (cos θ, 0, sin θ), e′ = (−sin θ, 0, cos θ) and
 * θ̈ = −g S cos θ / J, the coupler (m_k) translates with a_k = L (θ̈ e′ − θ̇² e) and each
 * crank's centre (m_c) with a_k / 2:
 *   pin i, on the coupler:   F_pin = m_k (a_k − g) / n,
 *   pivot i, on crank i:     F_pivot = m_c (a_k/2 − g) + F_pin   (crank: m_c a_k/2 = m_c g +
 *                            F_pivot − F_pin).
 */
export function parallelogramShares(theta: number, rate: number): { pin: Vec3; pivot: Vec3 } {
  const { n, L, mc, mk } = parallelogram;
  const acc = parallelogramReduced().accel(theta);
  const ak: Vec3 = [
    L * (-acc * Math.sin(theta) - rate * rate * Math.cos(theta)),
    0,
    L * (acc * Math.cos(theta) - rate * rate * Math.sin(theta)),
  ];
  const pin: Vec3 = [(mk * ak[0]) / n, 0, (mk * (ak[2] + G)) / n];
  const pivot: Vec3 = [(mc * ak[0]) / 2 + pin[0], 0, mc * (ak[2] / 2 + G) + pin[2]];
  return { pin, pivot };
}

/**
 * Started hanging (θ = −π/2) with ½ J θ̇² = 3 g S: the energy E = ½ J θ̇² + g S sin θ = 2 g S
 * exceeds the top's g S, so the cranks turn over and over, passing the flat configurations
 * θ = 0, π (mod 2π), where cranks, pivots and coupler are collinear, twice per turn. The
 * largest kinetic energy, at the bottom, is E − V_min = 3 g S.
 */
export function parallelogramStart() {
  const { J, S } = parallelogramReduced();
  return { theta0: -Math.PI / 2, rate0: Math.sqrt((6 * G * S) / J) };
}

/** Rotation taking body x to e(θ) = (cos θ, 0, sin θ): a rotation by −θ about y. */
export function crankOrientation(theta: number): Quat {
  return axisAngle([0, 1, 0], -theta);
}

export function parallelogramModel(solver: Solver) {
  const { n, L, d, mc, mk } = parallelogram;
  const { theta0, rate0 } = parallelogramStart();
  const e: Vec3 = [Math.cos(theta0), 0, Math.sin(theta0)];
  const de: Vec3 = [-Math.sin(theta0), 0, Math.cos(theta0)]; // ∂e/∂θ
  // Turning by θ̇ about −y: ω = −θ̇ ŷ, and ω × e = θ̇ ∂e/∂θ as it must.
  const omega: Vec3 = [0, -rate0, 0];
  const q = crankOrientation(theta0);
  const crankInertia = (mc * L * L) / 12;
  const span = (n - 1) * d;
  const mid = span / 2;
  const bodies: Record<string, unknown>[] = [];
  const joints: Record<string, unknown>[] = [];
  for (let i = 0; i < n; i++) {
    const pivot: Vec3 = [i * d, 0, 0];
    bodies.push({
      id: `crank${i}`,
      kind: "rigid",
      mass: mc,
      position: [pivot[0] + (L / 2) * e[0], 0, (L / 2) * e[2]],
      orientation: q,
      velocity: scale((rate0 * L) / 2, de),
      angularVelocity: omega,
      inertia: [1e-6, crankInertia, crankInertia],
    });
    joints.push({
      id: `pivot${i}`,
      type: "revolute",
      a: { body: "ground", point: pivot },
      b: { body: `crank${i}`, point: [-L / 2, 0, 0] },
      axis: [0, 1, 0],
    });
    joints.push({
      id: `pin${i}`,
      type: "revolute",
      a: { body: `crank${i}`, point: [L / 2, 0, 0] },
      b: { body: "coupler", point: [i * d - mid, 0, 0] },
      axis: [0, 1, 0],
    });
  }
  const couplerInertia = (mk * span * span) / 12;
  bodies.push({
    id: "coupler",
    kind: "rigid",
    mass: mk,
    position: [mid + L * e[0], 0, L * e[2]],
    velocity: scale(rate0 * L, de),
    inertia: [1e-5, couplerInertia, couplerInertia],
  });
  return { name: "parallelogram", gravity: [0, 0, -G], bodies, joints, solver };
}

// ---------------------------------------------------------------------------------------
// Heavy symmetric top: a disk-like body (mass m, COM-inertia I1c across, I3 along its
// symmetry axis, body z) on a spherical joint at the ground origin, COM at l along the axis.
export const top = {
  mass: 1,
  l: 0.1,
  I1c: 0.0025,
  I3: 0.005,
  tilt: Math.PI / 6,
  /** precession rate Ω (rad/s) about the vertical: one precession period per second */
  precession: 2 * Math.PI,
};

/**
 * Steady precession. With Euler angles (φ precession about z, θ tilt, ψ spin), I1 = I1c + m l²
 * about the pivot, the Lagrangian is
 *   ½ I1 (θ̇² + φ̇² sin²θ) + ½ I3 (ψ̇ + φ̇ cos θ)² − m g l cos θ,
 * ω3 = ψ̇ + φ̇ cos θ is conserved, and the θ equation reads
 *   I1 θ̈ = I1 φ̇² sin θ cos θ − I3 ω3 φ̇ sin θ + m g l sin θ.
 * θ̈ = 0 at θ ≠ 0 with φ̇ = Ω gives Ω I3 ω3 − Ω² I1 cos θ = m g l, i.e. with ψ̇ = ω3 − Ω cos θ,
 * Ω ψ̇ I3 + Ω² cos θ (I3 − I1) = m g l. (Check by angular momentum: L_⊥-part aside,
 * dL/dt = Ω ẑ × L = (Ω I3 ω3 − Ω² I1 cos θ)(ẑ × e3) must equal the gravity torque
 * l e3 × (−m g ẑ) = m g l (ẑ × e3).) Given θ and Ω it is linear in ω3.
 */
export function topSteadyPrecession() {
  const { mass, l, I1c, I3, tilt, precession: Omega } = top;
  const I1 = I1c + mass * l * l;
  const omega3 = (mass * G * l + Omega * Omega * I1 * Math.cos(tilt)) / (Omega * I3);
  const spin = omega3 - Omega * Math.cos(tilt);
  return { I1, omega3, spin, Omega };
}

/**
 * Initial state of the steady precession: the symmetry axis e3 = (sin θ, 0, cos θ) (the
 * body turned by θ about y), angular velocity Ω ẑ + ψ̇ e3 (precession plus spin, no
 * nutation), COM at l e3 moving at ω × l e3 = l Ω sin θ ŷ (a horizontal circle of radius
 * l sin θ at the rate Ω).
 */
export function topModel(solver: Solver) {
  const { mass, l, I1c, I3, tilt } = top;
  const { spin, Omega } = topSteadyPrecession();
  const e3: Vec3 = [Math.sin(tilt), 0, Math.cos(tilt)];
  const omega: Vec3 = [spin * e3[0], 0, Omega + spin * e3[2]];
  const com = scale(l, e3);
  return {
    name: "heavy-top",
    gravity: [0, 0, -G],
    bodies: [
      {
        id: "top",
        kind: "rigid",
        mass,
        position: com,
        orientation: axisAngle([0, 1, 0], tilt),
        velocity: cross(omega, com),
        angularVelocity: omega,
        inertia: [I1c, I1c, I3],
      },
    ],
    joints: [
      {
        id: "tip",
        type: "spherical",
        a: { body: "ground", point: [0, 0, 0] },
        b: { body: "top", point: [0, 0, -l] },
      },
    ],
    solver,
  };
}

// ---------------------------------------------------------------------------------------
// Rigid pendulum: thin rod, mass 1 kg, length 1 m, hinged at its end (axis y through the
// origin), COM at l = 0.5 m; θ from the downward vertical, started at rest at θ0.
export const pendulum = { mass: 1, length: 1, l: 0.5, theta0: 1 };

/** J θ̈ = −m g l sin θ with J = m L²/12 + m l² about the hinge. */
export function pendulumReduced() {
  const { mass, length, l } = pendulum;
  const J = (mass * length * length) / 12 + mass * l * l;
  return { J, accel: (theta: number) => (-mass * G * l * Math.sin(theta)) / J };
}

/**
 * Rod along body x; at angle θ it points along (sin θ, 0, −cos θ): the rotation by
 * φ = π/2 − θ about y (which takes x to (cos φ, 0, −sin φ)).
 */
export function pendulumModel(solver: Solver) {
  const { mass, length, l, theta0 } = pendulum;
  const transverse = (mass * length * length) / 12;
  return {
    name: "pendulum",
    gravity: [0, 0, -G],
    bodies: [
      {
        id: "rod",
        kind: "rigid",
        mass,
        position: [l * Math.sin(theta0), 0, -l * Math.cos(theta0)],
        orientation: axisAngle([0, 1, 0], Math.PI / 2 - theta0),
        inertia: [1e-4, transverse, transverse],
      },
    ],
    joints: [
      {
        id: "hinge",
        type: "revolute",
        a: { body: "ground", point: [0, 0, 0] },
        b: { body: "rod", point: [-l, 0, 0] },
        axis: [0, 1, 0],
      },
    ],
    solver,
  };
}

// ---------------------------------------------------------------------------------------
/** A particle (1 kg) on a zero-length linear spring to the origin, x'' = −k x, released at x0. */
export function oscillatorModel(stiffness: number, x0: number, solver: Solver) {
  return {
    name: "oscillator",
    gravity: [0, 0, 0],
    bodies: [{ id: "p", kind: "particle", mass: 1, position: [x0, 0, 0] }],
    forces: [
      {
        id: "spring",
        type: "spring",
        a: { body: "p" },
        b: { body: "ground", point: [0, 0, 0] },
        stiffness,
        restLength: 0,
      },
    ],
    solver,
  };
}

// ---------------------------------------------------------------------------------------
// Hinged chain: n links of length L and mass m (thin rods, axial moment 1e-4 of the
// transverse one) hinged end to end about y, the first to the ground at the origin,
// straight out along +x at rest: the chain falls from horizontal. Its centre of mass falls
// at most L n/2, so m n g L n/2 bounds the kinetic energy it can reach (J). `at`: its
// pivot at (0, y, 0) instead, its ids prefixed (links `${prefix}l${i}`, joints
// `${prefix}j${i}`), for several chains in one model.
export function hingedChainModel(
  n: number,
  L: number,
  m: number,
  solver: Solver,
  at: { prefix: string; y: number } = { prefix: "", y: 0 },
) {
  const { prefix, y } = at;
  const q = [Math.SQRT1_2, 0, Math.SQRT1_2, 0]; // the link's z axis along world +x
  const inertia = [(m * L * L) / 12, (m * L * L) / 12, 1e-4 * m * L * L];
  const bodies = Array.from({ length: n }, (_, i) => ({
    id: `${prefix}l${i}`,
    mass: m,
    position: [(i + 0.5) * L, y, 0],
    orientation: q,
    inertia,
  }));
  const joints = bodies.map((_, i) => ({
    id: `${prefix}j${i}`,
    type: "revolute",
    a:
      i === 0
        ? { body: "ground", point: [0, y, 0] }
        : { body: `${prefix}l${i - 1}`, point: [0, 0, L / 2] },
    b: { body: `${prefix}l${i}`, point: [0, 0, -L / 2] },
    axis: [0, 1, 0],
  }));
  return { gravity: [0, 0, -G], bodies, joints, solver };
}
