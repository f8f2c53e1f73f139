/**
 * Generic finite-difference check of a ForceEffector's Jacobians.
 *
 * For each of several random configurations (random positions, random unit quaternions
 * for every rigid body, fixed ones included, random linear and angular velocities of the
 * dynamic bodies), the analytic ∂F/∂q and ∂F/∂u (addPosJacobian / addVelJacobian with
 * s = 1 into a SparseBlockMatrix after addSolveBlocks + finalize, made dense through
 * toCsr + csrToDense) are compared with CENTRAL differences of the generalized force
 * F = [f; τ] from applyForces:
 *   position column k: (F(q ⊕ h e_k) − F(q ⊕ −h e_k)) / 2h with q ⊕ δ the integrator's
 *   increment (x += δx, q ← exp(δθ) ⊗ q: addPositionIncrement), velocities held;
 *   velocity column k: (F(u + h e_k) − F(u − h e_k)) / 2h, positions held.
 * The error is max |J − J_FD| relative to the largest entry of J_FD (or J, or a floor). It also checks
 * that s scales the Jacobian, that applyForces adds rather than sets, and that the claimed
 * jacobianType holds at the configuration (SYMMETRIC: J symmetric; POSITIVE_DEFINITE:
 * −J has no negative eigenvalue, so adding s·J with s < 0 keeps a solve matrix PD).
 */
import { CholeskyDecomposition, EigenvalueDecomposition, Matrix, solve } from "ml-matrix";
import { expect } from "vitest";
import type { ForceEffector } from "../../../src/engine/forces/effector";
import { SparseBlockMatrix } from "../../../src/engine/math/block-matrix";
import { csrToDense } from "../../../src/engine/math/csr";
import { quatRotateByVector } from "../../../src/engine/math/quat";
import {
  addPositionIncrement,
  type BodyInit,
  BodyKind,
  BodySystem,
  clearForces,
  getForces,
  getVelocity,
  PositionSnapshot,
  restorePositions,
  savePositions,
  setVelocity,
  updateDerived,
} from "../../../src/engine/model/body-system";
import { MatrixType } from "../../../src/engine/solvers/linear/linear-solver";
import { bodyInit } from "../../support/body-init";
import { gaussian, mulberry32 } from "../../support/random";

export interface JacobianCheckOptions {
  /** Number of random configurations (default 4). */
  configurations?: number;
  /** mulberry32 seed (test/support/random.ts; default 1). */
  seed?: number;
  /** Finite-difference step (default 1e-5). */
  h?: number;
  /** Relative tolerance (default 1e-6). */
  tolerance?: number;
  /** Time passed to applyForces (default 0.3). */
  t?: number;
  /** Half-width of the random position box (m, default 1). */
  positionScale?: number;
  /** Half-width of the random velocity box (m/s and rad/s, default 1.5). */
  velocityScale?: number;
  /**
   * When set, orientations are the model's turned by a random rotation vector with
   * components in ±rotationScale (rad) instead of uniformly random ones.
   */
  rotationScale?: number;
  /**
   * Smallest Jacobian magnitude the relative error is taken against (default 1e-3): the
   * central difference's own roundoff is ~ε·|F|/h ≈ 1e-10 for the forces of these tests.
   */
  floor?: number;
  /**
   * Replaces the random state (randomizeState) by the caller's: called with the system as
   * makeSystem built it and the check's generator, e.g. a random deformation of a mesh.
   */
  randomize?: (sys: BodySystem, rng: () => number) => void;
}

/** The state of a configuration: options.randomize, else randomizeState with the options' scales. */
function randomizeAsOptions(
  sys: BodySystem,
  rng: () => number,
  options: JacobianCheckOptions,
): void {
  if (options.randomize) options.randomize(sys, rng);
  else
    randomizeState(
      sys,
      rng,
      options.positionScale ?? 1,
      options.velocityScale ?? 1.5,
      options.rotationScale,
    );
}

export interface JacobianCheckResult {
  /** Relative errors per configuration. */
  position: number[];
  velocity: number[];
  /** Largest |entry| of the analytic Jacobians per configuration (to see they are non-trivial). */
  positionNorm: number[];
  velocityNorm: number[];
  /** jacobianType per configuration. */
  types: number[];
}

/** A random unit quaternion (uniform on SO(3): normalized 4-d Gaussian). */
export function randomQuat(rng: () => number, out: Float64Array, io: number): void {
  let n = 0;
  for (let k = 0; k < 4; k++) {
    out[io + k] = gaussian(rng);
    n += out[io + k] ** 2;
  }
  n = Math.sqrt(n);
  for (let k = 0; k < 4; k++) out[io + k] /= n;
}

/** Randomizes positions, orientations and velocities of sys in place. */
export function randomizeState(
  sys: BodySystem,
  rng: () => number,
  positionScale = 1,
  velocityScale = 1.5,
  rotationScale?: number,
): void {
  const u = (s: number) => s * (2 * rng() - 1);
  const rot = new Float64Array(3);
  for (let b = 0; b < sys.numBodies; b++) {
    for (let k = 0; k < 3; k++) sys.pos[3 * b + k] = u(positionScale);
    if (sys.hasOrientation[b]) {
      if (rotationScale === undefined) randomQuat(rng, sys.quat, 4 * b);
      else {
        for (let k = 0; k < 3; k++) rot[k] = u(rotationScale);
        quatRotateByVector(sys.quat, 4 * b, rot, 0, 1);
      }
    }
    if (sys.dofOffset[b] < 0) continue;
    for (let k = 0; k < 3; k++) {
      sys.vel[3 * b + k] = u(velocityScale);
      if (sys.hasOrientation[b]) sys.omega[3 * b + k] = u(velocityScale);
    }
  }
  updateDerived(sys);
}

/** The generalized force [f; τ] that the effector alone applies now. */
export function generalizedForce(sys: BodySystem, eff: ForceEffector, t: number): Float64Array {
  clearForces(sys);
  eff.applyForces(t);
  const f = new Float64Array(sys.numDofs);
  getForces(sys, f);
  return f;
}

/** Dense analytic Jacobian (row-major numDofs²) of one kind, added with scale s. */
export function denseJacobian(
  sys: BodySystem,
  eff: ForceEffector,
  which: "position" | "velocity",
  s = 1,
): Float64Array {
  const m = new SparseBlockMatrix(sys.blockSizes);
  eff.addSolveBlocks(m);
  m.finalize();
  m.clear();
  if (which === "position") eff.addPosJacobian(m, s);
  else eff.addVelJacobian(m, s);
  return csrToDense(m.toCsr());
}

/**
 * λ_max of the symmetric part of L⁻¹ X L⁻ᵀ (the eigenvalues of M^{-1/2} X M^{-1/2}), X =
 * −∂f/∂x or −∂f/∂v of `eff` (dense), M = L Lᵀ the mass matrix (m I on a body's translation,
 * its world inertia on a rigid body's rotation): the stiffest mode's ω² (1/s²) or the
 * highest damping rate (1/s) an explicit step meets, against which the effectors'
 * addExplicitRates and addExplicitRows bounds are checked.
 */
export function highestMode(
  sys: BodySystem,
  eff: ForceEffector,
  which: "position" | "velocity",
): number {
  const n = sys.numDofs;
  const x = denseJacobian(sys, eff, which, -1);
  const mass = Matrix.zeros(n, n);
  for (let b = 0; b < sys.numBodies; b++) {
    const o = sys.dofOffset[b];
    if (o < 0) continue;
    for (let i = 0; i < 3; i++) mass.set(o + i, o + i, sys.mass[b]);
    if (sys.kind[b] !== BodyKind.RIGID) continue;
    // (symmetrized: the rotated world inertia is symmetric to rounding only)
    const I = sys.inertiaWorld;
    for (let i = 0; i < 3; i++)
      for (let j = 0; j < 3; j++)
        mass.set(o + 3 + i, o + 3 + j, 0.5 * (I[9 * b + 3 * i + j] + I[9 * b + 3 * j + i]));
  }
  const lower = new CholeskyDecomposition(mass).lowerTriangularMatrix;
  const sym = Matrix.zeros(n, n);
  for (let i = 0; i < n; i++)
    for (let j = 0; j < n; j++) sym.set(i, j, 0.5 * (x[i * n + j] + x[j * n + i]));
  // L⁻¹ S L⁻ᵀ, symmetrized against rounding
  const half = solve(lower, sym);
  const a = solve(lower, half.transpose());
  const b = a.add(a.transpose()).mul(0.5);
  return Math.max(...new EigenvalueDecomposition(b, { assumeSymmetric: true }).realEigenvalues);
}

/**
 * The bounds [ω², γ] an effector gives symplectic Euler's stability check
 * (theta-scheme.ts explicitForceRates): its addExplicitRates, plus the largest of its
 * addExplicitRows' row sums by body.
 */
export function explicitBound(sys: BodySystem, eff: ForceEffector): [number, number] {
  const out = new Float64Array(2);
  eff.addExplicitRates?.(out);
  const stiff = new Float64Array(2 * sys.numBodies);
  const damp = new Float64Array(2 * sys.numBodies);
  eff.addExplicitRows?.(stiff, damp);
  return [out[0] + Math.max(0, ...stiff), out[1] + Math.max(0, ...damp)];
}

/**
 * The effector's explicit bounds (explicitBound) against its highest modes (highestMode) in
 * `configurations` states of makeSystem, the first as built and the others random
 * (randomizeState, moving), the effector made at each (a spring without a rest length is
 * then at rest there, one with it stretched or compressed): each bound at least its mode.
 * Returns the largest ratios of a bound to its mode seen, [ω², γ] (0 where the mode is 0).
 */
export function checkExplicitBound(
  makeSystem: () => BodySystem,
  makeEffector: (sys: BodySystem) => ForceEffector,
  configurations = 8,
  seed = 1,
): [number, number] {
  const rng = mulberry32(seed);
  const ratios: [number, number] = [0, 0];
  for (let c = 0; c < configurations; c++) {
    const sys = makeSystem();
    if (c > 0) randomizeState(sys, rng);
    const eff = makeEffector(sys);
    const bound = explicitBound(sys, eff);
    const modes = [highestMode(sys, eff, "position"), highestMode(sys, eff, "velocity")];
    for (let k = 0; k < 2; k++) {
      expect(bound[k]).toBeGreaterThanOrEqual(modes[k] * (1 - 1e-12) - 1e-12);
      if (modes[k] > 1e-12) ratios[k] = Math.max(ratios[k], bound[k] / modes[k]);
    }
  }
  return ratios;
}

function maxAbs(a: Float64Array): number {
  let x = 0;
  for (const v of a) x = Math.max(x, Math.abs(v));
  return x;
}

/** max |a − b| / max(max |a|, max |b|, floor): the floor keeps pure roundoff (an FD of an
 *  identically zero Jacobian, ~1e-10) from counting as a relative error of 1. */
function relError(a: Float64Array, b: Float64Array, floor: number): number {
  let e = 0;
  for (let i = 0; i < a.length; i++) e = Math.max(e, Math.abs(a[i] - b[i]));
  const scale = Math.max(maxAbs(a), maxAbs(b), floor);
  return scale === 0 ? 0 : e / scale;
}

function fdPosition(sys: BodySystem, eff: ForceEffector, t: number, h: number): Float64Array {
  const n = sys.numDofs;
  const out = new Float64Array(n * n);
  const snap = new PositionSnapshot(sys);
  savePositions(sys, snap);
  const du = new Float64Array(n);
  for (let k = 0; k < n; k++) {
    du.fill(0);
    du[k] = 1;
    addPositionIncrement(sys, du, h);
    const fp = generalizedForce(sys, eff, t);
    restorePositions(sys, snap);
    addPositionIncrement(sys, du, -h);
    const fm = generalizedForce(sys, eff, t);
    restorePositions(sys, snap);
    for (let i = 0; i < n; i++) out[i * n + k] = (fp[i] - fm[i]) / (2 * h);
  }
  return out;
}

function fdVelocity(sys: BodySystem, eff: ForceEffector, t: number, h: number): Float64Array {
  const n = sys.numDofs;
  const out = new Float64Array(n * n);
  const u0 = new Float64Array(n);
  getVelocity(sys, u0);
  const u = new Float64Array(n);
  for (let k = 0; k < n; k++) {
    u.set(u0);
    u[k] += h;
    setVelocity(sys, u);
    const fp = generalizedForce(sys, eff, t);
    u[k] = u0[k] - h;
    setVelocity(sys, u);
    const fm = generalizedForce(sys, eff, t);
    for (let i = 0; i < n; i++) out[i * n + k] = (fp[i] - fm[i]) / (2 * h);
  }
  setVelocity(sys, u0);
  return out;
}

function assertTypeHolds(j: Float64Array, n: number, type: number, what: string): void {
  const scale = Math.max(maxAbs(j), 1e-300);
  if (type & MatrixType.SYMMETRIC)
    for (let r = 0; r < n; r++)
      for (let c = 0; c < r; c++)
        if (Math.abs(j[r * n + c] - j[c * n + r]) > 1e-12 * scale)
          throw new Error(`${what} Jacobian claimed SYMMETRIC but (${r},${c}) differs`);
  if (type & MatrixType.POSITIVE_DEFINITE && n > 0) {
    // −J must be positive semidefinite (its symmetric part, for a nonsymmetric J).
    const sym = Matrix.zeros(n, n);
    for (let r = 0; r < n; r++)
      for (let c = 0; c < n; c++) sym.set(r, c, -0.5 * (j[r * n + c] + j[c * n + r]));
    const ev = new EigenvalueDecomposition(sym, { assumeSymmetric: true }).realEigenvalues;
    const min = Math.min(...ev);
    if (min < -1e-10 * scale)
      throw new Error(`${what} Jacobian claimed POSITIVE_DEFINITE but −J has eigenvalue ${min}`);
  }
}

/**
 * Runs the check; throws (with the worst entries) when an error exceeds the tolerance.
 * makeEffector is called on the system as makeSystem built it (the model configuration:
 * rest lengths and rest rotations come from there); the state is then randomized.
 */
export function checkJacobians(
  makeSystem: () => BodySystem,
  makeEffector: (sys: BodySystem) => ForceEffector,
  options: JacobianCheckOptions = {},
): JacobianCheckResult {
  const configs = options.configurations ?? 4;
  const h = options.h ?? 1e-5;
  const tol = options.tolerance ?? 1e-6;
  const t = options.t ?? 0.3;
  const rng = mulberry32(options.seed ?? 1);
  const result: JacobianCheckResult = {
    position: [],
    velocity: [],
    positionNorm: [],
    velocityNorm: [],
    types: [],
  };
  for (let c = 0; c < configs; c++) {
    const sys = makeSystem();
    const eff = makeEffector(sys);
    randomizeAsOptions(sys, rng, options);
    const n = sys.numDofs;

    // applyForces adds: pre-filled accumulators are kept.
    clearForces(sys);
    sys.force.fill(0.25);
    sys.torque.fill(-0.5);
    eff.applyForces(t);
    const withBias = new Float64Array(n);
    getForces(sys, withBias);
    const plain = generalizedForce(sys, eff, t);
    for (let b = 0; b < sys.numBodies; b++) {
      const d = sys.dofOffset[b];
      if (d < 0) continue;
      for (let k = 0; k < 3; k++) {
        if (Math.abs(withBias[d + k] - plain[d + k] - 0.25) > 1e-9 * (1 + Math.abs(plain[d + k])))
          throw new Error("applyForces must add to sys.force, not set it");
        if (
          sys.hasOrientation[b] &&
          Math.abs(withBias[d + 3 + k] - plain[d + 3 + k] + 0.5) >
            1e-9 * (1 + Math.abs(plain[d + 3 + k]))
        )
          throw new Error("applyForces must add to sys.torque, not set it");
      }
    }

    // The analytic Jacobians at the state of the last applyForces(t).
    generalizedForce(sys, eff, t);
    const kPos = denseJacobian(sys, eff, "position");
    const kVel = denseJacobian(sys, eff, "velocity");
    const kPosScaled = denseJacobian(sys, eff, "position", -0.5);
    const kVelScaled = denseJacobian(sys, eff, "velocity", -0.5);
    for (let i = 0; i < n * n; i++)
      if (
        Math.abs(kPosScaled[i] + 0.5 * kPos[i]) > 1e-12 * (1 + Math.abs(kPos[i])) ||
        Math.abs(kVelScaled[i] + 0.5 * kVel[i]) > 1e-12 * (1 + Math.abs(kVel[i]))
      )
        throw new Error("the Jacobians must scale with s");
    const type = eff.jacobianType;
    assertTypeHolds(kPos, n, type, `${eff.id} position`);
    assertTypeHolds(kVel, n, type, `${eff.id} velocity`);

    const fdPos = fdPosition(sys, eff, t, h);
    const fdVel = fdVelocity(sys, eff, t, h);
    const floor = options.floor ?? 1e-3;
    const ep = relError(kPos, fdPos, floor);
    const ev = relError(kVel, fdVel, floor);
    result.position.push(ep);
    result.velocity.push(ev);
    result.positionNorm.push(maxAbs(kPos));
    result.velocityNorm.push(maxAbs(kVel));
    result.types.push(type);
    if (ep > tol || ev > tol)
      throw new Error(
        `${eff.id}: configuration ${c}: relative Jacobian error position ${ep.toExponential(2)}, velocity ${ev.toExponential(2)} (tolerance ${tol})\n` +
          `analytic position:\n${fmt(kPos, n)}\nFD position:\n${fmt(fdPos, n)}\n` +
          `analytic velocity:\n${fmt(kVel, n)}\nFD velocity:\n${fmt(fdVel, n)}`,
      );
  }
  return result;
}

function fmt(a: Float64Array, n: number): string {
  const rows: string[] = [];
  for (let r = 0; r < n; r++)
    rows.push(Array.from(a.subarray(r * n, r * n + n), (v) => v.toFixed(5).padStart(10)).join(" "));
  return rows.join("\n");
}

// ---- small model builders for the tests --------------------------------------------

export function particle(id: string, mass: number, position: number[], fixed = false): BodyInit {
  return bodyInit(id, "particle", { fixed, mass, position });
}

/** A rigid body with a full (non-diagonal) SPD inertia by default. */
export function rigid(
  id: string,
  mass: number,
  position: number[],
  opts: {
    fixed?: boolean;
    orientation?: number[];
    inertia?: number[];
    velocity?: number[];
    angularVelocity?: number[];
  } = {},
): BodyInit {
  return bodyInit(id, "rigid", {
    mass,
    position,
    inertia: [0.3, 0.05, -0.02, 0.05, 0.2, 0.03, -0.02, 0.03, 0.4],
    ...opts,
  });
}

export function system(...bodies: BodyInit[]): BodySystem {
  return new BodySystem(bodies);
}

/**
 * For a conservative effector: F = −∂V/∂q, with ∂V/∂q by central differences of
 * potentialEnergy() along the integrator's increments (δx, and δθ via q ← exp(δθ) ⊗ q; a
 * world rotation vector is the virtual rotation that a torque does work on). Returns the
 * relative error max |F + ∂V/∂q| / max |F| per random configuration.
 */
export function energyGradientErrors(
  makeSystem: () => BodySystem,
  makeEffector: (sys: BodySystem) => ForceEffector,
  options: JacobianCheckOptions = {},
): number[] {
  const rng = mulberry32(options.seed ?? 7);
  const h = options.h ?? 1e-5;
  const t = options.t ?? 0.3;
  const out: number[] = [];
  for (let c = 0; c < (options.configurations ?? 4); c++) {
    const sys = makeSystem();
    const eff = makeEffector(sys);
    randomizeAsOptions(sys, rng, options);
    const n = sys.numDofs;
    const f = generalizedForce(sys, eff, t);
    const snap = new PositionSnapshot(sys);
    savePositions(sys, snap);
    const du = new Float64Array(n);
    let err = 0;
    for (let k = 0; k < n; k++) {
      du.fill(0);
      du[k] = 1;
      addPositionIncrement(sys, du, h);
      const vp = eff.potentialEnergy();
      restorePositions(sys, snap);
      addPositionIncrement(sys, du, -h);
      const vm = eff.potentialEnergy();
      restorePositions(sys, snap);
      err = Math.max(err, Math.abs(f[k] + (vp - vm) / (2 * h)));
    }
    out.push(err / Math.max(maxAbs(f), options.floor ?? 1e-3));
  }
  return out;
}

// ---- the scenes and the assertion of the effectors' FD tests -------------------------

/** Two particles (masses 1 and 2). */
export const particlePair = () =>
  system(particle("p", 1, [0, 0, 0]), particle("q", 2, [1, 0.2, 0]));
/** A particle and a rigid body. */
export const particleRigid = () => system(particle("p", 1, [0, 0, 0]), rigid("r", 2, [1, 0, 0]));
/** Two rigid bodies, the first turned. */
export const rigidPair = () =>
  system(
    rigid("r1", 1, [0, 0, 0], { orientation: [0.9, 0.1, -0.3, 0.2] }),
    rigid("r2", 2, [1, 0.5, 0]),
  );
/** One turned rigid body (for effectors to ground, body −1). */
export const rigidAlone = () =>
  system(rigid("r", 2, [0.3, 0, 1], { orientation: [0.7, 0.2, 0.1, -0.4] }));
/** A rigid body and a fixed one (no dofs). */
export const rigidAndFixed = () =>
  system(rigid("r", 2, [0, 0, 1]), rigid("base", 1, [1, 1, 0], { fixed: true }));

/** The check must see a non-trivial Jacobian, and every error below the tolerance. */
export function expectExactJacobians(res: JacobianCheckResult, needVelocity: boolean): void {
  for (const e of [...res.position, ...res.velocity]) expect(e).toBeLessThan(1e-6);
  expect(Math.min(...res.positionNorm)).toBeGreaterThan(0.1);
  if (needVelocity) expect(Math.min(...res.velocityNorm)).toBeGreaterThan(0.01);
}
