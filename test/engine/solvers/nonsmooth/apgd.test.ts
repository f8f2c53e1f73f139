/**
 * ApgdSolver (accelerated projected gradient on the cone-complementarity QP) against
 * independent references: the LCP by Lemke, the CCP closed form of a sliding sphere, the
 * CCP residual recomputed, warm starts; and estimateLipschitz against ‖W p‖/‖p‖ and
 * λ_max(W) (ml-matrix).
 */
import { EigenvalueDecomposition, Matrix } from "ml-matrix";
import { describe, expect, it } from "vitest";
import {
  ApgdSolver,
  DenseDelassus,
  estimateLipschitz,
} from "../../../../src/engine/solvers/nonsmooth";
import { mulberry32 } from "../../../support/random";
import { testProjectedGradient } from "./checks";
import { randomSpd } from "./helpers";

describe("APGD", () => testProjectedGradient(() => new ApgdSolver()));

describe("estimateLipschitz", () => {
  it("is ‖W p‖/‖p‖ for the fixed probe p, a lower bound of λ_max(W); 1 for W = 0", () => {
    const n = 9;
    const W = randomSpd(n, 0.1, mulberry32(4));
    const x = new Float64Array(n);
    const y = new Float64Array(n);
    const L = estimateLipschitz(new DenseDelassus(W, n, 1), n, x, y);
    // x holds the probe on return: ‖W x‖/‖x‖ written out
    let nx = 0;
    let nwx = 0;
    for (let i = 0; i < n; i++) {
      let s = 0;
      for (let j = 0; j < n; j++) s += W[i * n + j] * x[j];
      nx += x[i] * x[i];
      nwx += s * s;
      expect(x[i]).toBeGreaterThanOrEqual(0.5);
      expect(x[i]).toBeLessThan(1.5);
    }
    expect(L).toBeCloseTo(Math.sqrt(nwx / nx), 12);
    const eig = new EigenvalueDecomposition(Matrix.from1DArray(n, n, W)).realEigenvalues;
    expect(L).toBeLessThanOrEqual(Math.max(...eig) * (1 + 1e-12));
    expect(estimateLipschitz(new DenseDelassus(new Float64Array(4), 2, 1), 2, x, y)).toBe(1);
  });
});
