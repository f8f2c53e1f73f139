/**
 * The position and velocity projections in the mass metric (project.ts) against dense
 * references computed here (dense-scene.ts: dense M, G, Gaussian elimination): the first
 * Newton update δq = −M⁻¹Gᵀ(G M⁻¹ Gᵀ)⁻¹C, quadratic convergence to C = 0, chord
 * iterations and their refactoring, ‖C‖∞, and the velocity projection G v = −Ct with the
 * smallest kinetic-energy change, also from a factorization at other positions.
 */
import { describe, expect, it, vi } from "vitest";
import { createConstraints } from "../../../src/engine/constraints/build";
import { ConstraintSet } from "../../../src/engine/constraints/constraint-set";
import {
  constraintResidualNorm,
  projectionWorkspace,
  projectPositions,
  projectVelocities,
} from "../../../src/engine/constraints/project";
import { quatDifference } from "../../../src/engine/math/quat";
import {
  addPositionIncrement,
  BodyKind,
  type BodySystem,
  getVelocity,
  PositionSnapshot,
  setVelocity,
} from "../../../src/engine/model/body-system";
import { solveDense } from "../../support/dense-solve";
import { sphericalChain } from "../../support/models";
import { mulberry32 } from "../../support/random";
import { modelSystem } from "../../support/system";
import { denseG, denseMass, massSolveCols, matmul, scene, transpose } from "./dense-scene";

/**
 * The mass-metric velocity projection written out densely: v − M⁻¹Gᵀ (G M⁻¹ Gᵀ)⁻¹ (G v + Ct)
 * at the current positions and velocities.
 */
function denseVelocityProjection(sys: BodySystem, set: ConstraintSet, t: number): number[] {
  const v0 = new Float64Array(sys.numDofs);
  getVelocity(sys, v0);
  set.updateJacobian(t);
  const G = denseG(set);
  const ct = new Float64Array(set.numRows);
  set.velocityTerm(t, ct);
  const MiGt = massSolveCols(denseMass(sys), transpose(G));
  const rhs = G.map((row, i) => row.reduce((s, g, j) => s + g * v0[j], 0) + ct[i]);
  const mu = solveDense(matmul(G, MiGt), rhs);
  return Array.from(v0, (v, i) => v - MiGt[i].reduce((s, x, j) => s + x * mu[j], 0));
}

describe("projections in the mass metric", () => {
  function perturbed(seed: number, size: number) {
    const s = scene(seed, false);
    const du = new Float64Array(s.sys.numDofs);
    for (let i = 0; i < du.length; i++) du[i] = size * (2 * s.r() - 1);
    addPositionIncrement(s.sys, du, 1);
    return s;
  }

  it("the first Newton update is δq = −M⁻¹Gᵀ(G M⁻¹ Gᵀ)⁻¹C", () => {
    const { sys, set } = perturbed(4, 0.02);
    const t = 0.1;
    const c = new Float64Array(set.numRows);
    set.residual(t, c);
    set.updateJacobian(t);
    const G = denseG(set);
    const M = denseMass(sys);
    const MiGt = massSolveCols(M, transpose(G));
    const lam = solveDense(matmul(G, MiGt), Array.from(c));
    const dq = MiGt.map((row) => -row.reduce((s, v, j) => s + v * lam[j], 0));
    const before = new PositionSnapshot(sys);
    const res = projectPositions(sys, set, t, {
      maxIterations: 1,
      relTolerance: 0,
      absTolerance: 0,
      residualTolerance: 0,
    });
    expect(res.iterations).toBe(1);
    expect(res.converged).toBe(false);
    const rot = new Float64Array(3);
    for (let b = 0; b < sys.numBodies; b++) {
      const d = sys.dofOffset[b];
      if (d < 0) continue;
      for (let i = 0; i < 3; i++)
        expect(sys.pos[3 * b + i] - before.pos[3 * b + i]).toBeCloseTo(dq[d + i], 13);
      if (sys.kind[b] !== BodyKind.RIGID) continue;
      quatDifference(rot, 0, sys.quat, 4 * b, before.quat, 4 * b);
      for (let i = 0; i < 3; i++) expect(rot[i]).toBeCloseTo(dq[d + 3 + i], 12);
    }
    expect(res.updateNorm).toBeCloseTo(Math.max(...dq.map(Math.abs)), 14);
  });

  it("Newton converges quadratically to C = 0", () => {
    const { sys, set } = perturbed(5, 0.05);
    const res = projectPositions(sys, set, 0.3, {
      maxIterations: 20,
      relTolerance: 0,
      absTolerance: 0,
      residualTolerance: 1e-13,
    });
    expect(res.converged).toBe(true);
    expect(res.iterations).toBeLessThanOrEqual(6);
    const c = new Float64Array(set.numRows);
    set.residual(0.3, c);
    expect(Math.max(...Array.from(c, Math.abs))).toBeLessThanOrEqual(1e-13);
    expect(res.residualNorm).toBe(Math.max(...Array.from(c, Math.abs)));
  });

  /** On C = 0 at t (full Newton), then every coordinate moved by up to ±size. */
  function drifted(seed: number, size: number, t: number) {
    const s = scene(seed, false);
    const exact = { maxIterations: 30, relTolerance: 0, absTolerance: 0, residualTolerance: 1e-14 };
    expect(projectPositions(s.sys, s.set, t, exact).converged).toBe(true);
    const du = new Float64Array(s.sys.numDofs);
    for (let i = 0; i < du.length; i++) du[i] = size * (2 * s.r() - 1);
    addPositionIncrement(s.sys, du, 1);
    return s;
  }

  it("chord iterations: one factorization for a small drift, to C = 0 as Newton", () => {
    const options = {
      maxIterations: 20,
      relTolerance: 0,
      absTolerance: 0,
      residualTolerance: 1e-13,
    };
    const newton = drifted(7, 1e-5, 0.3);
    const chord = drifted(7, 1e-5, 0.3);
    const factor = vi.spyOn(projectionWorkspace(chord.set), "factorAt");
    const rc = projectPositions(chord.sys, chord.set, 0.3, { ...options, chord: true });
    const rn = projectPositions(newton.sys, newton.set, 0.3, options);
    expect(factor).toHaveBeenCalledTimes(1);
    expect(rc.converged).toBe(true);
    expect(rc.iterations).toBeLessThanOrEqual(4);
    const c = new Float64Array(chord.set.numRows);
    chord.set.residual(0.3, c);
    expect(Math.max(...Array.from(c, Math.abs))).toBeLessThanOrEqual(1e-13);
    // Both are on C = 0, reached from the same point by updates that agree to first
    // order: they differ by O(δq²) (δq ~ 1e-5 here).
    expect(rn.converged).toBe(true);
    for (let i = 0; i < chord.sys.pos.length; i++)
      expect(Math.abs(chord.sys.pos[i] - newton.sys.pos[i])).toBeLessThan(1e-8);
  });

  it("chord iterations refactor when the drift is large and still reach C = 0", () => {
    const { sys, set } = perturbed(5, 0.05);
    const factor = vi.spyOn(projectionWorkspace(set), "factorAt");
    const res = projectPositions(sys, set, 0.3, {
      maxIterations: 20,
      relTolerance: 0,
      absTolerance: 0,
      residualTolerance: 1e-13,
      chord: true,
    });
    expect(res.converged).toBe(true);
    expect(factor.mock.calls.length).toBeGreaterThan(1);
    expect(factor.mock.calls.length).toBeLessThan(res.iterations);
  });

  it("factorings counts every factoring of the workspace (factorAt's and factorCurrent's): its users' stamp", () => {
    const { set } = drifted(6, 1e-4, 0);
    const ws = projectionWorkspace(set);
    const before = ws.factorings;
    ws.factorAt(0);
    set.updateJacobian(0);
    ws.factorCurrent();
    expect(ws.factorings - before).toBe(2);
    // the G it keeps is the one it factored (the stamp's meaning)
    expect(Array.from(ws.factoredG)).toEqual(Array.from(set.G.values));
  });

  it("velocity projection reusing a factorization at the same positions is the exact projection", () => {
    // The correction lies in range(M⁻¹G_fᵀ), G_f that of the factorization: at the
    // current positions it ends on G v = −Ct in range(M⁻¹Gᵀ), the unique mass-metric
    // projection, whatever the time of the factorization (G does not depend on t here).
    const t = 0.25;
    const { sys, set } = drifted(6, 1e-4, t);
    projectionWorkspace(set).factorAt(t); // S at the perturbed positions
    projectPositions(sys, set, t, {
      maxIterations: 20,
      relTolerance: 0,
      absTolerance: 0,
      residualTolerance: 1e-13,
    });
    const vRef = denseVelocityProjection(sys, set, t);
    projectionWorkspace(set).factorAt(0); // a stale factorization (other time, same q)
    const res = projectVelocities(sys, set, t, "factored-configuration");
    expect(res.residualNorm).toBeLessThan(1e-11);
    const v = new Float64Array(sys.numDofs);
    getVelocity(sys, v);
    for (let i = 0; i < v.length; i++) expect(v[i]).toBeCloseTo(vRef[i], 11);
  });

  /**
   * The benchmark's 100-link chain (S2, bench/scenes.ts, without its boxes): straight
   * along x, random velocities, then drifted.
   */
  function longChain(seed: number, drift: number, t: number) {
    const r = mulberry32(seed);
    const { system: sys, spec } = modelSystem(
      sphericalChain({
        links: 100,
        length: 0.1,
        mass: 0.1,
        inertia: [6.667e-6, 8.667e-5, 8.667e-5],
        prefix: "l",
        groundPoint: true,
        velocity: () => [2 * r() - 1, 2 * r() - 1, 2 * r() - 1],
        angularVelocity: () => [5 * r() - 2.5, 5 * r() - 2.5, 5 * r() - 2.5],
      }),
    );
    const set = new ConstraintSet(sys, createConstraints(spec.joints, [], sys));
    const du = new Float64Array(sys.numDofs);
    for (let i = 0; i < du.length; i++) du[i] = drift * (2 * r() - 1);
    addPositionIncrement(sys, du, 1);
    set.residual(t, new Float64Array(set.numRows));
    return { sys, set };
  }

  it("velocity projection at the configuration of a factorization 50 µm away", () => {
    // Tangent at that configuration (G_f v = −Ct) with its factorization, no new one: an
    // oblique projection (along M⁻¹G_fᵀ) first order in the drift of G away from the
    // exact one at the current positions. (The chain's G M⁻¹ Gᵀ has κ ~ 1e4: with the
    // residual along the current G, S_f⁻¹ would amplify (S_f − S) by up to κ.)
    const t = 0;
    const { sys, set } = longChain(3, 5e-5, t);
    const ws = projectionWorkspace(set);
    ws.factorAt(t); // at the drifted positions
    const options = {
      maxIterations: 20,
      relTolerance: 0,
      absTolerance: 0,
      residualTolerance: 1e-14,
      chord: true,
    };
    projectPositions(sys, set, t, options, undefined, true); // moves the bodies by ~50 µm
    const v0 = new Float64Array(sys.numDofs);
    getVelocity(sys, v0);
    const factor = vi.spyOn(ws, "factorAt");
    const Gf = Float64Array.from(set.G.values); // G where the factorization was made
    const gv = new Float64Array(set.numRows);
    set.multiply(v0, gv, Gf);
    const before = gv.reduce((m, x) => Math.max(m, Math.abs(x)), 0);
    const res = projectVelocities(sys, set, t, "factored-configuration");
    expect(factor).not.toHaveBeenCalled();
    const v = new Float64Array(sys.numDofs);
    getVelocity(sys, v);
    // G_f v = −Ct = 0 (spherical joints), recomputed here from G_f's values
    set.multiply(v, gv, Gf);
    const after = gv.reduce((m, x) => Math.max(m, Math.abs(x)), 0);
    // one correction: exact but for the change of M⁻¹ (world inertias) since the
    // factorization, 2e-6 of the residual after this 50 µm move
    expect(after).toBeLessThan(1e-5 * before);
    expect(res.residualNorm).toBe(after);
    // the exact projection at the current positions (factored there; checked against the
    // dense projection above)
    setVelocity(sys, v0);
    factor.mockRestore();
    projectVelocities(sys, set, t);
    const vRef = new Float64Array(sys.numDofs);
    getVelocity(sys, vRef);
    let change = 0;
    for (let i = 0; i < v0.length; i++) change = Math.max(change, Math.abs(vRef[i] - v0[i]));
    // an oblique projection (along M⁻¹G_fᵀ), first order in the drift of G away from the
    // mass-orthogonal one (5e-3 of the change here)
    for (let i = 0; i < v.length; i++) expect(Math.abs(v[i] - vRef[i])).toBeLessThan(2e-2 * change);
  });

  it("velocities first: one factorization serves the velocity and the position projection", () => {
    // The θ-schemes' order (integrator.ts, ProjectionOrder): velocities made tangent at the
    // configuration the step reached, then the positions projected with the same S.
    const t = 0.4;
    const options = {
      maxIterations: 20,
      relTolerance: 0,
      absTolerance: 0,
      residualTolerance: 1e-13,
      chord: true,
    };
    const { sys, set } = drifted(8, 1e-5, t);
    const reference = drifted(8, 1e-5, t);
    const vRef = denseVelocityProjection(sys, set, t); // at the unprojected positions
    const factor = vi.spyOn(projectionWorkspace(set), "factorAt");
    projectVelocities(sys, set, t);
    const result = { iterations: 0, residualNorm: 0, updateNorm: 0, converged: false, rank: 0 };
    projectPositions(sys, set, t, options, result, true);
    expect(factor).toHaveBeenCalledTimes(1);
    expect(result.converged).toBe(true);
    expect(result.rank).toBe(set.numRows);
    const c = new Float64Array(set.numRows);
    set.residual(t, c);
    expect(Math.max(...Array.from(c, Math.abs))).toBeLessThanOrEqual(1e-13);
    // the velocities are the mass-metric projection at the unprojected positions
    const v = new Float64Array(sys.numDofs);
    getVelocity(sys, v);
    for (let i = 0; i < v.length; i++) expect(v[i]).toBeCloseTo(vRef[i], 12);
    // and the positions those of a projection that factors for itself, the same iterates
    projectPositions(reference.sys, reference.set, t, options);
    for (let i = 0; i < sys.pos.length; i++)
      expect(sys.pos[i]).toBeCloseTo(reference.sys.pos[i], 14);
  });

  it("velocity projection: G v = −Ct with the smallest kinetic-energy change", () => {
    const { sys, set } = scene(6, false);
    const t = 0.25;
    const vRef = denseVelocityProjection(sys, set, t);
    const res = projectVelocities(sys, set, t);
    expect(res.residualNorm).toBeLessThan(1e-12);
    const v = new Float64Array(sys.numDofs);
    getVelocity(sys, v);
    for (let i = 0; i < v.length; i++) expect(v[i]).toBeCloseTo(vRef[i], 12);
  });
});

describe("constraintResidualNorm", () => {
  it("is max |C_i| of the residual at the current positions, 0 without rows", () => {
    const { sys, set, r } = scene(4, false);
    const du = Float64Array.from({ length: sys.numDofs }, () => 0.05 * (2 * r() - 1));
    addPositionIncrement(sys, du, 1);
    const c = new Float64Array(set.numRows);
    set.residual(0.2, c);
    const expected = Math.max(...Array.from(c, Math.abs));
    expect(expected).toBeGreaterThan(1e-3);
    expect(constraintResidualNorm(set, 0.2)).toBe(expected);
    expect(constraintResidualNorm(new ConstraintSet(sys, []), 0.2)).toBe(0);
  });
});
