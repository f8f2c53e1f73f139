/**
 * cone.ts: the Euclidean projection on the Coulomb cone (closed forms and the Moreau
 * decomposition), the projection on K, and the local updates of PGS / projected Jacobi
 * against the update formulas written out (Signorini row, tangential step, radial
 * projection), including their degenerate blocks.
 */
import { describe, expect, it } from "vitest";
import {
  coulombBlockUpdate,
  type LocalCoefficients,
  lcpRowUpdate,
  projectOnCone,
  projectOnK,
} from "../../../../src/engine/solvers/nonsmooth/cone";
import { mulberry32 } from "../../../support/random";
import { maxAbsDiff } from "./helpers";

describe("projectOnCone", () => {
  it("is the Euclidean projection: idempotent, Moreau decomposition x = P_K(x) + P_K°(x)", () => {
    const rand = mulberry32(3);
    for (let k = 0; k < 200; k++) {
      const mu = k % 10 === 0 ? 0 : 2 * rand();
      const x = Float64Array.from([4 * rand() - 2, 4 * rand() - 2, 4 * rand() - 2]);
      const p = Float64Array.from(x);
      projectOnCone(p, 0, Float64Array.of(mu), 0);
      expect(Math.hypot(p[1], p[2])).toBeLessThanOrEqual(mu * p[0] + 1e-14);
      const pp = Float64Array.from(p);
      projectOnCone(pp, 0, Float64Array.of(mu), 0);
      expect(maxAbsDiff(pp, p)).toBeLessThan(1e-14);
      // x − P_K(x) lies in the polar cone K° = −K* = {μ‖z_t‖ ≤ −z_n} and ⊥ P_K(x).
      const z = [x[0] - p[0], x[1] - p[1], x[2] - p[2]];
      expect(mu * Math.hypot(z[1], z[2])).toBeLessThanOrEqual(-z[0] + 1e-12);
      expect(Math.abs(z[0] * p[0] + z[1] * p[1] + z[2] * p[2])).toBeLessThan(1e-12);
    }
  });

  it("closed forms at an offset: inside kept, polar cone to 0, else onto the boundary ray", () => {
    // [guard, x_n, x_t1, x_t2, guard]: only entries 1..3 may change
    const at = (x: number[], mu: number) => {
      const a = Float64Array.from([7, ...x, 7]);
      // μ at index 1 of its array, as contact 1 of a problem
      projectOnCone(a, 1, Float64Array.of(9, mu), 1);
      return Array.from(a);
    };
    expect(at([1, 0.3, 0.4], 0.5)).toEqual([7, 1, 0.3, 0.4, 7]); // ‖x_t‖ = 0.5 ≤ μ x_n
    expect(at([-1, 0.3, 0.4], 0.5)).toEqual([7, 0, 0, 0, 7]); // μ‖x_t‖ = 0.25 ≤ −x_n
    // x = (2, −2.4, 3.2), μ = 0.5: ‖x_t‖ = 4, r_n = (2 + 0.5·4)/1.25 = 3.2, r_t = 0.4 x_t
    const b = at([2, -2.4, 3.2], 0.5);
    expect(maxAbsDiff(b, [7, 3.2, -0.96, 1.28, 7])).toBeLessThan(1e-15);
    // μ = 0: the ray r_t = 0, r_n = max(x_n, 0)
    expect(maxAbsDiff(at([2, 1, -1], 0), [7, 2, 0, 0, 7])).toBe(0);
    expect(at([0, 0, 0], 0.5)).toEqual([7, 0, 0, 0, 7]);
  });
});

describe("projectOnK", () => {
  it("the orthant for dim 1; each contact's own cone for dim 3", () => {
    const a = Float64Array.from([1, -2, 0, -0.5, 9]);
    projectOnK(a, 4, 1, new Float64Array(0));
    expect(Array.from(a)).toEqual([1, 0, 0, 0, 9]); // entry 4 is past the 4 contacts
    const b = Float64Array.from([1, 0.3, 0.4, 2, -2.4, 3.2]);
    projectOnK(b, 2, 3, Float64Array.from([0.5, 0.5]));
    expect(maxAbsDiff(b, [1, 0.3, 0.4, 3.2, -0.96, 1.28])).toBeLessThan(1e-15);
  });
});

describe("lcpRowUpdate", () => {
  it("r_i ← max(0, r_i − ω u_i / W_ii); a zero row keeps Signorini on the constant u_i", () => {
    const r = Float64Array.from([1, 1, 1, 1]);
    // u_i at u[i + 1], 1/W_ii = invN[i]
    const u = Float64Array.from([9, -2, 4, 3, -3]);
    const c: LocalCoefficients = {
      diag: new Float64Array(36),
      invN: Float64Array.from([0.5, 0.5, 0, 0]),
      rhoT: new Float64Array(4),
    };
    lcpRowUpdate(r, 0, u, 1, 1, c); // 1 + 1 = 2
    lcpRowUpdate(r, 1, u, 2, 1.5, c); // 1 − 3 < 0 → 0
    lcpRowUpdate(r, 2, u, 3, 1, c); // W_ii = 0, u ≥ 0 → 0
    lcpRowUpdate(r, 3, u, 4, 1, c); // W_ii = 0, u < 0: no solution, unchanged
    expect(Array.from(r)).toEqual([2, 0, 0, 1]);
  });
});

/** Coefficients of one contact with diagonal block diag(wn, wt, wt) plus W_tn coupling. */
function coefficients(block: number[]): LocalCoefficients {
  const tr = block[4] + block[8];
  return {
    diag: Float64Array.from(block),
    invN: Float64Array.of(block[0] > 0 ? 1 / block[0] : 0),
    rhoT: Float64Array.of(tr > 0 ? 2 / tr : 0),
  };
}

/** μ = 0.5 of a one-contact problem. */
const MU = Float64Array.of(0.5);

describe("coulombBlockUpdate", () => {
  it("isotropic block, ω = 1, from r = 0: the exact stick and slip of a sphere on a plane", () => {
    // W = I/2 (m = 2), μ = 0.5: u = q at r = 0.
    const c = coefficients([0.5, 0, 0, 0, 0.5, 0, 0, 0, 0.5]);
    const stick = new Float64Array(3);
    coulombBlockUpdate(stick, 0, Float64Array.of(-1, 0.1, -0.2), 0, MU, 1, c);
    expect(maxAbsDiff(stick, [2, -0.2, 0.4])).toBeLessThan(1e-15);
    const slip = new Float64Array(3);
    coulombBlockUpdate(slip, 0, Float64Array.of(-1, 1.2, -1.6), 0, MU, 1, c);
    // r_t = (−2.4, 3.2) scaled radially to ‖r_t‖ = μ r_n = 1
    expect(maxAbsDiff(slip, [2, -0.6, 0.8])).toBeLessThan(1e-15);
  });

  it("the normal change feeds the tangential velocity through W_tn (column 0 of the block)", () => {
    // W_t1n = 0.2: Δr_n = 2 adds 0.4 to u_t1 before the tangential step
    const c = coefficients([0.5, 0, 0, 0.2, 1, 0, 0, 0, 1]);
    const r = new Float64Array(3);
    coulombBlockUpdate(r, 0, Float64Array.of(-1, -0.4, 0), 0, Float64Array.of(10), 1, c);
    expect(maxAbsDiff(r, [2, 0, 0])).toBeLessThan(1e-15);
  });

  it("degenerate blocks: zero tangential trace takes r_t = −μ r_n u_t/‖u_t‖; zero W_nn keeps Signorini", () => {
    const noTangent = coefficients([0.5, 0, 0, 0, 0, 0, 0, 0, 0]);
    const r = new Float64Array(3);
    // u at an offset of its array
    coulombBlockUpdate(r, 0, Float64Array.of(7, -1, 3, -4), 1, MU, 1, noTangent);
    expect(maxAbsDiff(r, [2, -0.6, 0.8])).toBeLessThan(1e-15);
    const noNormal = coefficients([0, 0, 0, 0, 1, 0, 0, 0, 1]);
    const s = Float64Array.from([3, 1, 1]);
    coulombBlockUpdate(s, 0, Float64Array.of(0.5, 0, 0), 0, MU, 1, noNormal); // u_n ≥ 0 → r_n = 0, disc radius 0
    expect(Array.from(s)).toEqual([0, 0, 0]);
  });
});
