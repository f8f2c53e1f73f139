/**
 * Double pendulum of two point masses on distance constraints, in the xy plane with
 * gravity −y: accelerations and link tensions from the assembly analysis against the
 * closed form.
 *
 * Angles θ₁, θ₂ from the downward vertical: p₁ = l₁(sin θ₁, −cos θ₁),
 * p₂ = p₁ + l₂(sin θ₂, −cos θ₂). Lagrange's equations give (e.g. myPhysicsLab's
 * double pendulum), with Δ = θ₁ − θ₂, D = 2m₁ + m₂ − m₂ cos 2Δ:
 *   θ̈₁ = [−g(2m₁ + m₂) sin θ₁ − m₂ g sin(θ₁ − 2θ₂) − 2 sin Δ m₂ (θ̇₂² l₂ + θ̇₁² l₁ cos Δ)] / (l₁ D)
 *   θ̈₂ = [2 sin Δ (θ̇₁² l₁ (m₁ + m₂) + g (m₁ + m₂) cos θ₁ + θ̇₂² l₂ m₂ cos Δ)] / (l₂ D)
 * and the particle accelerations a₁ = l₁(θ̈₁ t₁ − θ̇₁² e₁), a₂ = a₁ + l₂(θ̈₂ t₂ − θ̇₂² e₂),
 * with e_i = (sin θ_i, −cos θ_i) along link i (away from the pivot) and
 * t_i = (cos θ_i, sin θ_i). Tensions T_i (positive pulling) from Newton's law along the
 * links: particle 2: m₂ a₂ = m₂ g − T₂ e₂ ⇒ T₂ = m₂ (g − a₂)·e₂;
 * particle 1: m₁ a₁ = m₁ g − T₁ e₁ + T₂ e₂ ⇒ T₁ = (m₁ (g − a₁) + T₂ e₂)·e₁.
 * The engine's distance multiplier (assembly sign: constraint force −Gᵀλ) is the tension.
 */
import { describe, expect, it } from "vitest";
import type { JointSpec } from "../../../schemas/model";
import { createConstraints } from "../../../src/engine/constraints/build";
import { ConstraintSet } from "../../../src/engine/constraints/constraint-set";
import { BodySystem } from "../../../src/engine/model/body-system";
import { assemble } from "./analyse";
import { defaultOptions } from "./slider-crank-model";

const g = 9.81;

function closedForm(m1: number, m2: number, l1: number, l2: number, th: number[], w: number[]) {
  const [t1, t2] = th;
  const [w1, w2] = w;
  const dl = t1 - t2;
  const D = 2 * m1 + m2 - m2 * Math.cos(2 * dl);
  const a1t =
    (-g * (2 * m1 + m2) * Math.sin(t1) -
      m2 * g * Math.sin(t1 - 2 * t2) -
      2 * Math.sin(dl) * m2 * (w2 * w2 * l2 + w1 * w1 * l1 * Math.cos(dl))) /
    (l1 * D);
  const a2t =
    (2 *
      Math.sin(dl) *
      (w1 * w1 * l1 * (m1 + m2) +
        g * (m1 + m2) * Math.cos(t1) +
        w2 * w2 * l2 * m2 * Math.cos(dl))) /
    (l2 * D);
  const e1 = [Math.sin(t1), -Math.cos(t1)];
  const e2 = [Math.sin(t2), -Math.cos(t2)];
  const tg1 = [Math.cos(t1), Math.sin(t1)];
  const tg2 = [Math.cos(t2), Math.sin(t2)];
  const p1 = [l1 * e1[0], l1 * e1[1]];
  const p2 = [p1[0] + l2 * e2[0], p1[1] + l2 * e2[1]];
  const v1 = [l1 * w1 * tg1[0], l1 * w1 * tg1[1]];
  const v2 = [v1[0] + l2 * w2 * tg2[0], v1[1] + l2 * w2 * tg2[1]];
  const acc1 = [0, 1].map((i) => l1 * (a1t * tg1[i] - w1 * w1 * e1[i]));
  const acc2 = [0, 1].map((i) => acc1[i] + l2 * (a2t * tg2[i] - w2 * w2 * e2[i]));
  const gv = [0, -g];
  const T2 = m2 * ((gv[0] - acc2[0]) * e2[0] + (gv[1] - acc2[1]) * e2[1]);
  const T1 =
    (m1 * (gv[0] - acc1[0]) + T2 * e2[0]) * e1[0] + (m1 * (gv[1] - acc1[1]) + T2 * e2[1]) * e1[1];
  return { p1, p2, v1, v2, acc1, acc2, T1, T2, e1, e2 };
}

describe("double pendulum of point masses on distance constraints", () => {
  const configs = [
    { m1: 1, m2: 1, l1: 1, l2: 1, th: [0.3, -0.4], w: [0, 0] },
    { m1: 1.5, m2: 0.7, l1: 0.8, l2: 1.3, th: [1.1, 2.4], w: [2.0, -3.5] },
    { m1: 0.2, m2: 3, l1: 2, l2: 0.5, th: [-2.5, 0.9], w: [-1.2, 4.0] },
  ];
  for (const c of configs)
    it(`m = (${c.m1}, ${c.m2}), l = (${c.l1}, ${c.l2}), θ = (${c.th}), θ̇ = (${c.w})`, () => {
      const ref = closedForm(c.m1, c.m2, c.l1, c.l2, c.th, c.w);
      const v3 = (p: number[]): [number, number, number] => [p[0], p[1], 0];
      const particle = (id: string, m: number, p: number[], v: number[]) => ({
        id,
        kind: "particle" as const,
        fixed: false,
        mass: m,
        inertia: [1, 0, 0, 0, 1, 0, 0, 0, 1],
        position: v3(p),
        orientation: [1, 0, 0, 0],
        velocity: v3(v),
        angularVelocity: [0, 0, 0],
      });
      const sys = new BodySystem([
        particle("p1", c.m1, ref.p1, ref.v1),
        particle("p2", c.m2, ref.p2, ref.v2),
      ]);
      const joints: JointSpec[] = [
        {
          id: "l1",
          type: "distance",
          a: { body: "ground", point: [0, 0, 0] },
          b: { body: "p1", point: [0, 0, 0] },
          length: c.l1,
        },
        {
          id: "l2",
          type: "distance",
          a: { body: "p1", point: [0, 0, 0] },
          b: { body: "p2", point: [0, 0, 0] },
          length: c.l2,
        },
      ];
      const set = new ConstraintSet(sys, createConstraints(joints, [], sys));
      const gravity = (_t: number, out: Float64Array) => {
        out.fill(0);
        out[1] = -g * c.m1;
        out[4] = -g * c.m2;
      };
      const res = assemble(sys, set, gravity, 0, defaultOptions());
      expect(res.exitFlag).toBe("SUCCESS");
      expect(res.warnings).toEqual([]);
      const scaleA = Math.max(Math.hypot(...ref.acc1), Math.hypot(...ref.acc2), g);
      const [b1, b2] = res.bodies;
      for (let i = 0; i < 2; i++) {
        expect(Math.abs(b1.acceleration[i] - ref.acc1[i])).toBeLessThanOrEqual(1e-10 * scaleA);
        expect(Math.abs(b2.acceleration[i] - ref.acc2[i])).toBeLessThanOrEqual(1e-10 * scaleA);
      }
      expect(Math.abs(b1.acceleration[2])).toBeLessThanOrEqual(1e-10 * scaleA);
      const scaleT = Math.max(Math.abs(ref.T1), Math.abs(ref.T2));
      const [r1, r2] = res.reactions;
      expect(Math.abs(r1.multipliers[0] - ref.T1)).toBeLessThanOrEqual(1e-10 * scaleT);
      expect(Math.abs(r2.multipliers[0] - ref.T2)).toBeLessThanOrEqual(1e-10 * scaleT);
      // The reaction on b is the tension pulling b back along the link: −T e.
      for (let i = 0; i < 2; i++) {
        expect(Math.abs(r1.force[i] + ref.T1 * ref.e1[i])).toBeLessThanOrEqual(1e-10 * scaleT);
        expect(Math.abs(r2.force[i] + ref.T2 * ref.e2[i])).toBeLessThanOrEqual(1e-10 * scaleT);
      }
    });
});
