/**
 * BarzilaiBorweinSolver (spectral projected gradient on the cone-complementarity QP)
 * against independent references: the LCP by Lemke, the CCP closed form of a sliding
 * sphere, the CCP residual recomputed and APGD's optimum (unique: strictly convex QP),
 * warm starts.
 */
import { describe, expect, it } from "vitest";
import { ApgdSolver, BarzilaiBorweinSolver } from "../../../../src/engine/solvers/nonsmooth";
import { expectRandomCcp, testProjectedGradient } from "./checks";
import { maxAbsDiff } from "./helpers";

describe("Barzilai–Borwein", () => {
  testProjectedGradient(() => new BarzilaiBorweinSolver());

  it("its optimum of the random coupled friction problems is the one APGD finds", () => {
    const bb = expectRandomCcp(new BarzilaiBorweinSolver());
    const apgd = expectRandomCcp(new ApgdSolver());
    bb.forEach((r, k) => {
      expect(maxAbsDiff(r, apgd[k])).toBeLessThan(1e-6);
    });
  });
});
