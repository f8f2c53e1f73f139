/**
 * Contact behaviors (ArtiSynth ContactForceBehavior) and contact areas against closed forms
 * written out here:
 * - linear: f = k dist (k A dist per unit area), compliance 1/k, ½ k dist² stored;
 * - Hertz: F = (4/3) E* √R δ^{3/2}, 1/E* = 2(1 − ν²)/E, R = 1/(1/r₀ + 1/r₁), compliance
 *   1/F′ = 1/(2E*√R δ^{1/2}), energy (8/15) E* √R δ^{5/2}; flat contacts fall back to
 *   Sneddon's punch F = 2 E* a δ with a = √(A/π);
 * - table: linear interpolation, last-slope extrapolation, trapezoid energy;
 * - d = max(damping, stepDamping·h/compliance), only when compliance > 0;
 * - f′ and f″ (compliance, stiffnessRate) against central differences of f;
 * - a box given as a hull resting on per-unit-area springs carries m g.
 * (The contact areas: area.test.ts.)
 */
import { describe, expect, it } from "vitest";
import {
  type ContactPoint,
  createContactBehavior,
  effectiveDamping,
  HertzContactBehavior,
  LinearContactBehavior,
  TableContactBehavior,
} from "../../../src/engine/contact/behaviors";
import { loadModel } from "../../../src/engine/index";

const n = [0, 0, 1];
const flat: ContactPoint = { position: [0, 0, 0], body: -1, radius: Number.POSITIVE_INFINITY };
const ball = (r: number): ContactPoint => ({ position: [0, 0, 0], body: 0, radius: r });

describe("linear behavior", () => {
  it("force k·dist, compliance 1/k, energy ½k dist², nothing when separated", () => {
    const b = new LinearContactBehavior(2e4, 3, 0.5);
    const r = b.computeResponse(-0.002, flat, ball(0.1), n, 0);
    expect(r.force).toBeCloseTo(-40, 12);
    expect(r.compliance).toBeCloseTo(5e-5, 18);
    expect(r.damping).toBe(3);
    expect(r.stepDamping).toBe(0.5);
    expect(b.potential(-0.002, flat, ball(0.1), n, 0)).toBeCloseTo(0.04, 14);
    const s = b.computeResponse(0.001, flat, ball(0.1), n, 0);
    expect(s.force).toBe(0);
    expect(s.compliance).toBe(0);
  });

  it("per unit area scales force and stiffness by the area", () => {
    const b = new LinearContactBehavior(1e7, 0, 0, true);
    const r = b.computeResponse(-1e-3, flat, flat, n, 0.01);
    expect(r.force).toBeCloseTo(-1e7 * 0.01 * 1e-3, 10);
    expect(r.compliance).toBeCloseTo(1 / (1e7 * 0.01), 15);
    expect(b.computeResponse(-1e-3, flat, flat, n, 0).compliance).toBe(0);
  });
});

describe("effective damping", () => {
  it("is max(damping, stepDamping·h/compliance) and zero without compliance", () => {
    const r = { force: -1, compliance: 1e-4, damping: 2, stepDamping: 0.5, stiffnessRate: 0 };
    expect(effectiveDamping(r, 0.01)).toBeCloseTo((0.5 * 0.01) / 1e-4, 10); // 50 > 2
    expect(effectiveDamping({ ...r, damping: 80 }, 0.01)).toBe(80);
    expect(effectiveDamping({ ...r, compliance: 0 }, 0.01)).toBe(0);
  });
});

describe("Hertz behavior", () => {
  const E = 2e8;
  const nu = 0.3;
  const Es = E / (2 * (1 - nu * nu));
  const b = new HertzContactBehavior(E, nu, 0, 0.4);

  it("sphere on plane: F, compliance, energy and f″ of the closed forms", () => {
    const R = 0.05;
    const d = 1e-4;
    const r = b.computeResponse(-d, flat, ball(R), n, 0);
    expect(r.force).toBeCloseTo(-(4 / 3) * Es * Math.sqrt(R) * d ** 1.5, 8);
    expect(r.compliance).toBeCloseTo(1 / (2 * Es * Math.sqrt(R) * Math.sqrt(d)), 16);
    expect(b.potential(-d, flat, ball(R), n, 0)).toBeCloseTo(
      (8 / 15) * Es * Math.sqrt(R) * d ** 2.5,
      12,
    );
    // f′ = 1/compliance and f″ = stiffnessRate against central differences of f(dist).
    const f = (x: number) => b.computeResponse(x, flat, ball(R), n, 0).force;
    const e = 1e-8;
    const fp = (f(-d + e) - f(-d - e)) / (2 * e);
    const fpp = (f(-d + e) - 2 * f(-d) + f(-d - e)) / (e * e);
    expect(Math.abs(fp * b.computeResponse(-d, flat, ball(R), n, 0).compliance - 1)).toBeLessThan(
      1e-7,
    );
    expect(
      Math.abs(fpp / b.computeResponse(-d, flat, ball(R), n, 0).stiffnessRate - 1),
    ).toBeLessThan(1e-3);
  });

  it("two spheres use the effective radius; flat pairs use Sneddon's punch", () => {
    const d = 2e-5;
    const r2 = b.computeResponse(-d, ball(0.1), ball(0.05), n, 0).force;
    const R = 1 / (1 / 0.1 + 1 / 0.05);
    expect(r2).toBeCloseTo(-(4 / 3) * Es * Math.sqrt(R) * d ** 1.5, 8);
    const A = 0.0025;
    const punch = b.computeResponse(-d, flat, flat, n, A);
    expect(punch.force).toBeCloseTo(-2 * Es * Math.sqrt(A / Math.PI) * d, 6);
    expect(punch.compliance).toBeCloseTo(1 / (2 * Es * Math.sqrt(A / Math.PI)), 18);
  });
});

describe("table behavior", () => {
  const pts: [number, number][] = [
    [0, 0],
    [0.001, 10],
    [0.002, 40],
  ];
  const b = new TableContactBehavior(pts, 1, 0.2);

  it("interpolates, extrapolates with the last slope and integrates by trapezoids", () => {
    const at = (d: number) => b.computeResponse(-d, flat, flat, n, 0);
    expect(at(0.0005).force).toBeCloseTo(-5, 12);
    expect(at(0.0005).compliance).toBeCloseTo(1e-4, 16);
    expect(at(0.0015).force).toBeCloseTo(-25, 12);
    expect(at(0.0015).compliance).toBeCloseTo(0.001 / 30, 16);
    expect(at(0.003).force).toBeCloseTo(-70, 12);
    // ∫₀^0.0015 F = ½·0.001·10 + (10 + 25)/2·0.0005
    expect(b.potential(-0.0015, flat, flat, n, 0)).toBeCloseTo(0.005 + 0.00875, 14);
  });

  it("rejects tables that do not start at [0, 0] or do not ascend", () => {
    expect(
      () =>
        new TableContactBehavior([
          [0.001, 0],
          [0.002, 1],
        ]),
    ).toThrow();
    expect(
      () =>
        new TableContactBehavior([
          [0, 0],
          [0.002, 1],
          [0.001, 2],
        ]),
    ).toThrow();
  });

  it("the factory builds each behavior from its schema spec", () => {
    expect(
      createContactBehavior({
        type: "linear",
        stiffness: 1,
        damping: 0,
        stepDamping: 0,
        perUnitArea: false,
      }).type,
    ).toBe("linear");
    expect(
      createContactBehavior({
        type: "hertz",
        youngModulus: 1e6,
        poissonRatio: 0.3,
        damping: 0,
        stepDamping: 0,
      }).type,
    ).toBe("hertz");
    expect(
      createContactBehavior({ type: "table", points: pts, damping: 0, stepDamping: 0 }).type,
    ).toBe("table");
  });
});

describe("compliant contact of a convex hull", () => {
  it("a box given as a hull rests on a plane under per-unit-area springs: Σ f_n = m g", () => {
    const corners: [number, number, number][] = [];
    for (const x of [-0.2, 0.2])
      for (const y of [-0.1, 0.1]) for (const z of [-0.05, 0.05]) corners.push([x, y, z]);
    const sim = loadModel({
      gravity: [0, 0, -9.81],
      bodies: [
        { id: "floor", fixed: true, shapes: [{ type: "plane", normal: [0, 0, 1], offset: 0 }] },
        {
          id: "hull",
          mass: 2,
          position: [0, 0, 0.05],
          shapes: [{ type: "convex", points: corners }],
        },
      ],
      contact: {
        method: "smc",
        behavior: { type: "linear", stiffness: 1e7, perUnitArea: true, damping: 2e4 },
      },
      solver: { integrator: "backward-euler", dt: 0.002 },
    });
    sim.step(1500);
    const s = sim.state();
    const total = s.contacts.reduce((acc, c) => acc + c.normalForce, 0);
    expect(total).toBeCloseTo(2 * 9.81, 6);
    // the penetration of the springs k A δ = m g over the whole face A = 0.08 m²
    const z = s.bodies.find((b) => b.id === "hull")?.position[2] ?? 0;
    expect(0.05 - z).toBeCloseTo((2 * 9.81) / (1e7 * 0.08), 8);
  });
});
