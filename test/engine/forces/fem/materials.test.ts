/**
 * Hyperelastic materials (src/engine/forces/fem/materials.ts): the Lamé parameters against
 * the inverse relations E = μ(3λ + 2μ)/(λ + μ), ν = λ / 2(λ + μ); the cofactor against
 * det(F) F⁻ᵀ (ml-matrix); each material's ψ in closed form for a uniaxial stretch, its
 * stress P against central differences of ψ, its exact differential dP against central
 * differences of P, frame indifference (ψ(QF) = ψ(F), P(QF) = Q P(F)), the stress-free
 * rest state, the approximate corotational tangent's positive semidefiniteness, and the
 * neo-Hookean continuation below J₀ (C¹ stress across J₀, finite for inverted F), and
 * tangentBound against the largest singular value of the exact differential (ml-matrix).
 */
import { determinant, inverse, Matrix, SingularValueDecomposition } from "ml-matrix";
import { describe, expect, it } from "vitest";
import {
  CorotationalMaterial,
  cofactor,
  createMaterial,
  type ElasticMaterial,
  lame,
  NEO_HOOKEAN_J0,
  NeoHookeanMaterial,
  StretchBounds,
  StVenantKirchhoffMaterial,
} from "../../../../src/engine/forces/fem/materials";
import { axisAngle, rotationMatrix } from "../../../support/quat";
import { mulberry32 } from "../../../support/random";

const E = 2e4;
const NU = 0.3;
const [MU, LAMBDA] = [E / (2 * (1 + NU)), (E * NU) / ((1 + NU) * (1 - 2 * NU))];

/** The four material variants the elements use. */
const variants = (): [string, ElasticMaterial][] => [
  ["corotational (exact)", createMaterial("corotational", E, NU)],
  ["corotational (approximate)", createMaterial("corotational", E, NU, "approximate")],
  ["stvk", createMaterial("stvk", E, NU)],
  ["neo-hookean", createMaterial("neo-hookean", E, NU)],
];

/** I + s·(random matrix in [−1, 1]), row-major. */
function nearIdentity(rng: () => number, s: number): Float64Array {
  return Float64Array.from({ length: 9 }, (_, k) => (k % 4 === 0 ? 1 : 0) + s * (2 * rng() - 1));
}

const matMul = (a: ArrayLike<number>, b: ArrayLike<number>) =>
  Float64Array.from({ length: 9 }, (_, k) => {
    const i = Math.floor(k / 3);
    const j = k % 3;
    return a[3 * i] * b[j] + a[3 * i + 1] * b[3 + j] + a[3 * i + 2] * b[6 + j];
  });

const maxAbs = (a: ArrayLike<number>) => Math.max(...Array.from(a, Math.abs));

/** P by central differences of ψ, h relative to |F|. */
function stressByDifferences(m: ElasticMaterial, f: Float64Array): Float64Array {
  const h = 1e-6;
  const out = new Float64Array(9);
  for (let k = 0; k < 9; k++) {
    const fp = f.slice();
    const fm = f.slice();
    fp[k] += h;
    fm[k] -= h;
    out[k] = (m.energy(fp) - m.energy(fm)) / (2 * h);
  }
  return out;
}

/** dP for dF by central differences of P along dF. */
function differentialByDifferences(m: ElasticMaterial, f: Float64Array, df: Float64Array) {
  const h = 1e-6;
  const pp = new Float64Array(9);
  const pm = new Float64Array(9);
  m.evaluate(
    f.map((x, k) => x + h * df[k]),
    pp,
  );
  m.evaluate(
    f.map((x, k) => x - h * df[k]),
    pm,
  );
  return pp.map((x, k) => (x - pm[k]) / (2 * h));
}

describe("lame and createMaterial", () => {
  it("μ, λ invert to E and ν; the factory builds each material with them", () => {
    const [mu, lambda] = lame(E, NU);
    expect((mu * (3 * lambda + 2 * mu)) / (lambda + mu)).toBeCloseTo(E, 9);
    expect(lambda / (2 * (lambda + mu))).toBeCloseTo(NU, 14);
    const co = createMaterial("corotational", E, NU);
    expect(co).toBeInstanceOf(CorotationalMaterial);
    expect([co.name, co.positiveTangent]).toEqual(["corotational", false]);
    expect(createMaterial("corotational", E, NU, "approximate").positiveTangent).toBe(true);
    const stvk = createMaterial("stvk", E, NU);
    expect(stvk).toBeInstanceOf(StVenantKirchhoffMaterial);
    const nh = createMaterial("neo-hookean", E, NU);
    expect(nh).toBeInstanceOf(NeoHookeanMaterial);
    for (const m of [stvk, nh] as (StVenantKirchhoffMaterial | NeoHookeanMaterial)[]) {
      expect(m.mu).toBeCloseTo(MU, 10);
      expect(m.lambda).toBeCloseTo(LAMBDA, 10);
    }
  });
});

describe("cofactor", () => {
  it("is det(F) F⁻ᵀ", () => {
    const rng = mulberry32(2);
    for (let k = 0; k < 5; k++) {
      const f = nearIdentity(rng, 0.8);
      const F = new Matrix([
        Array.from(f.subarray(0, 3)),
        Array.from(f.subarray(3, 6)),
        Array.from(f.subarray(6, 9)),
      ]);
      const expected = inverse(F).transpose().mul(determinant(F)).to1DArray();
      const out = new Float64Array(9);
      cofactor(f, out);
      for (let q = 0; q < 9; q++) expect(out[q]).toBeCloseTo(expected[q], 12);
    }
  });
});

describe("strain energy density in closed form: a uniaxial stretch F = diag(s, 1, 1)", () => {
  const s = 1.3;
  const f = Float64Array.of(s, 0, 0, 0, 1, 0, 0, 0, 1);
  it("corotational: (μ + λ/2)(s − 1)²; stvk: (μ + λ/2) ((s² − 1)/2)²; neo-Hookean: μ/2 (s² − 1) − μ ln s + λ/2 (ln s)²", () => {
    const e11 = (s * s - 1) / 2;
    const expected: [ElasticMaterial, number][] = [
      [createMaterial("corotational", E, NU), (MU + LAMBDA / 2) * (s - 1) ** 2],
      [createMaterial("corotational", E, NU, "approximate"), (MU + LAMBDA / 2) * (s - 1) ** 2],
      [createMaterial("stvk", E, NU), (MU + LAMBDA / 2) * e11 * e11],
      [
        createMaterial("neo-hookean", E, NU),
        (MU / 2) * (s * s - 1) - MU * Math.log(s) + (LAMBDA / 2) * Math.log(s) ** 2,
      ],
    ];
    const p = new Float64Array(9);
    for (const [m, psi] of expected) {
      expect(m.energy(f)).toBeCloseTo(psi, 8);
      expect(m.evaluate(f, p)).toBeCloseTo(psi, 8);
    }
  });
});

describe("every material", () => {
  for (const [name, m] of variants())
    it(`${name}: stress-free at rest and under rotations; P = ∂ψ/∂F; frame indifferent`, () => {
      const p = new Float64Array(9);
      const I = Float64Array.of(1, 0, 0, 0, 1, 0, 0, 0, 1);
      expect(m.evaluate(I, p)).toBeCloseTo(0, 12);
      expect(maxAbs(p)).toBeLessThan(1e-10);
      const Q = Float64Array.from(rotationMatrix(axisAngle([0.3, -1, 0.5], 1.1)).flat());
      expect(Math.abs(m.evaluate(Q, p))).toBeLessThan(1e-9);
      expect(maxAbs(p)).toBeLessThan(1e-8);
      const rng = mulberry32(17);
      for (let c = 0; c < 4; c++) {
        const f = nearIdentity(rng, 0.25);
        const psi = m.evaluate(f, p);
        expect(m.energy(f)).toBeCloseTo(psi, 9);
        const fd = stressByDifferences(m, f);
        const scale = maxAbs(fd);
        for (let k = 0; k < 9; k++) expect(Math.abs(p[k] - fd[k])).toBeLessThan(1e-6 * scale);
        const pq = new Float64Array(9);
        const qf = matMul(Q, f);
        expect(m.evaluate(qf, pq)).toBeCloseTo(psi, 8);
        const qp = matMul(Q, p);
        for (let k = 0; k < 9; k++) expect(Math.abs(pq[k] - qp[k])).toBeLessThan(1e-10 * scale);
      }
    });

  for (const [name, m] of variants().filter(([, v]) => !v.positiveTangent))
    it(`${name}: the differential is the derivative of P`, () => {
      const rng = mulberry32(23);
      for (let c = 0; c < 4; c++) {
        const f = nearIdentity(rng, 0.3);
        const df = Float64Array.from({ length: 9 }, () => 2 * rng() - 1);
        const fd = differentialByDifferences(m, f, df);
        const dp = new Float64Array(9);
        m.evaluate(f, new Float64Array(9));
        m.differential(df, dp);
        const scale = maxAbs(fd);
        for (let k = 0; k < 9; k++) expect(Math.abs(dp[k] - fd[k])).toBeLessThan(1e-6 * scale);
      }
    });

  it("approximate corotational: dP = R [2μ sym(Rᵀ dF) + λ tr(Rᵀ dF) I], so dF : dP ≥ 0; exact in a rigid rotation", () => {
    const m = createMaterial("corotational", E, NU, "approximate");
    const exact = createMaterial("corotational", E, NU);
    const rng = mulberry32(29);
    const p = new Float64Array(9);
    const dp = new Float64Array(9);
    for (let c = 0; c < 8; c++) {
      m.evaluate(nearIdentity(rng, 0.4), p);
      const df = Float64Array.from({ length: 9 }, () => 2 * rng() - 1);
      m.differential(df, dp);
      expect(df.reduce((s, x, k) => s + x * dp[k], 0)).toBeGreaterThanOrEqual(0);
    }
    // at a pure rotation F = Q the approximate tangent is the exact one
    const Q = Float64Array.from(rotationMatrix(axisAngle([1, 1, 0], 0.8)).flat());
    const df = Float64Array.from({ length: 9 }, () => 2 * rng() - 1);
    const dpExact = new Float64Array(9);
    m.evaluate(Q, p);
    m.differential(df, dp);
    exact.evaluate(Q, p);
    exact.differential(df, dpExact);
    for (let k = 0; k < 9; k++) expect(dp[k]).toBeCloseTo(dpExact[k], 8);
  });
});

describe("neo-Hookean below J₀", () => {
  it("ψ and P continue smoothly across J = J₀, and stay finite and restoring for an inverted F", () => {
    const m = createMaterial("neo-hookean", E, NU);
    const p = new Float64Array(9);
    // F = diag(J, 1, 1): P₁₁ = μ J + h′(J) (cof F)₁₁ = μ J + h′(J)
    const p11 = (j: number) => {
      m.evaluate(Float64Array.of(j, 0, 0, 0, 1, 0, 0, 0, 1), p);
      return p[0];
    };
    const eps = 1e-9;
    const below = p11(NEO_HOOKEAN_J0 - eps);
    const above = p11(NEO_HOOKEAN_J0 + eps);
    expect(Math.abs(below - above)).toBeLessThan(1e-4 * Math.abs(above));
    // its slope, h″ + μ, is the same on both sides too (ψ is C²)
    const slope = (j: number) => (p11(j + 1e-7) - p11(j - 1e-7)) / 2e-7;
    // (J₀ ± 1e-6: above J₀, h″ changes by ~2e-4 of itself over that distance)
    const [slopeBelow, slopeAbove] = [slope(NEO_HOOKEAN_J0 - 1e-6), slope(NEO_HOOKEAN_J0 + 1e-6)];
    expect(Math.abs(slopeBelow - slopeAbove)).toBeLessThan(1e-3 * slopeAbove);
    // inverted: finite, and pushing J back up (P₁₁ < 0: the force opposes the compression)
    const inverted = Float64Array.of(-0.2, 0, 0, 0, 1, 0, 0, 0, 1);
    const psi = m.evaluate(inverted, p);
    expect(Number.isFinite(psi)).toBe(true);
    expect(p[0]).toBeLessThan(0);
    const fd = stressByDifferences(m, inverted);
    for (let k = 0; k < 9; k++) expect(Math.abs(p[k] - fd[k])).toBeLessThan(1e-6 * maxAbs(fd));
    const df = Float64Array.of(0.3, 0.1, 0, -0.2, 0.5, 0.1, 0, 0.2, -0.4);
    const dp = new Float64Array(9);
    m.evaluate(inverted, p);
    m.differential(df, dp);
    const dfd = differentialByDifferences(m, inverted, df);
    for (let k = 0; k < 9; k++) expect(Math.abs(dp[k] - dfd[k])).toBeLessThan(1e-6 * maxAbs(dfd));
  });
});

/** The StretchBounds of f. */
function bounds(f: Float64Array): StretchBounds {
  const b = new StretchBounds();
  b.set(f);
  return b;
}

/** The operator norm of dF ↦ dP (9 × 9 from the exact differential at f, its largest singular value). */
function tangentNorm(m: ElasticMaterial, f: Float64Array): number {
  const p = new Float64Array(9);
  m.evaluate(f, p);
  const cols: number[][] = [];
  for (let k = 0; k < 9; k++) {
    const df = new Float64Array(9);
    df[k] = 1;
    const dp = new Float64Array(9);
    m.differential(df, dp);
    cols.push(Array.from(dp));
  }
  return Math.max(...new SingularValueDecomposition(new Matrix(cols)).diagonal);
}

describe("tangentBound: the exact tangent's largest stiffness", () => {
  const exact = (): [string, ElasticMaterial][] => [
    ["corotational", createMaterial("corotational", E, NU)],
    ["stvk", createMaterial("stvk", E, NU)],
    ["neo-hookean", createMaterial("neo-hookean", E, NU)],
  ];
  for (const [name, m] of exact())
    it(`${name}: bounds ‖∂P/∂F‖ at rest, stretched, sheared, crushed and inverted`, () => {
      const rng = mulberry32(41);
      const cases: Float64Array[] = [Float64Array.of(1, 0, 0, 0, 1, 0, 0, 0, 1)];
      for (const s of [0.05, 0.3, 0.8])
        for (let c = 0; c < 6; c++) cases.push(nearIdentity(rng, s));
      cases.push(Float64Array.of(0.2, 0, 0, 0, 1, 0, 0, 0, 1)); // crushed to 20 %
      cases.push(Float64Array.of(3, 0.5, 0, 0, 1, 0, 0, 0, 0.9)); // stretched 3-fold
      if (name !== "stvk") cases.push(Float64Array.of(1, 0.1, 0, 0, 1, 0, 0.1, 0, -0.3)); // inverted
      for (const f of cases) {
        expect(m.tangentBound(bounds(f))).toBeGreaterThanOrEqual(tangentNorm(m, f) * (1 - 1e-9));
      }
      // at rest the corotational and stvk bounds are the tangent's norm, 2μ + 3λ
      const atRest = m.tangentBound(bounds(cases[0]));
      if (name === "neo-hookean") expect(atRest).toBeCloseTo(6 * MU + 3 * LAMBDA, 6);
      else expect(atRest).toBeCloseTo(2 * MU + 3 * LAMBDA, 6);
      expect(tangentNorm(m, cases[0])).toBeCloseTo(2 * MU + 3 * LAMBDA, 6);
    });
});
