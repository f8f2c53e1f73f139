/**
 * BarzilaiBorweinSolver (spectral projected gradient on the cone-complementarity QP)
 * against independent references: the LCP by Lemke, the CCP closed form of a sliding
 * sphere, the CCP residual recomputed and APGD's optimum (unique: strictly convex QP),
 * warm starts.
 */
import { describe, expect, it } from "vitest";
import { ApgdSolver, BarzilaiBorweinSolver } from "../../../../src/engine/solvers/nonsmooth";
import {
  expectCoupledTwoContactLcp,
  expectMatchesLemke,
  expectRandomCcp,
  expectSphereOnPlaneCcp,
  expectWarmStartAtSolution,
} from "./checks";
import { maxAbsDiff } from "./helpers";

describe("Barzilai–Borwein", () => {
  it("matches Lemke to 1e-6 on the random LCPs", () => {
    expectMatchesLemke(new BarzilaiBorweinSolver());
  });

  it("solves a coupled 2-contact LCP in closed form", () => {
    expectCoupledTwoContactLcp(new BarzilaiBorweinSolver());
  });

  it("solves the CCP relaxation of a sliding sphere: r = P_K(−m q), u_n = μ‖u_t‖ > 0", () => {
    expectSphereOnPlaneCcp(new BarzilaiBorweinSolver());
  });

  it("reaches the CCP optimum of random coupled friction problems, the one APGD finds", () => {
    const bb = expectRandomCcp(new BarzilaiBorweinSolver());
    const apgd = expectRandomCcp(new ApgdSolver());
    bb.forEach((r, k) => {
      expect(maxAbsDiff(r, apgd[k])).toBeLessThan(1e-6);
    });
  });

  it("warm-started from its own solution stops at once", () => {
    expectWarmStartAtSolution(new BarzilaiBorweinSolver());
  });
});
