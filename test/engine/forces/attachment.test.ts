/**
 * A point fixed in a body's frame (src/engine/forces/attachment.ts): r = R p (R from the
 * tests' own quaternion algebra), x_p = x + r, v_p = v + ω × r on a rigid body; r = p and
 * no rotation on a particle; still points on ground and fixed bodies; δx_p = δx − [r]× δθ
 * under the integrator's increment (finite differences); the force and moment r × f that
 * addForce accumulates; the body index checked.
 */
import { describe, expect, it } from "vitest";
import { PointAttachment } from "../../../src/engine/forces/attachment";
import { addPositionIncrement, updateDerived } from "../../../src/engine/model/body-system";
import { axisAngle, rotate } from "../../support/quat";
import { particle, rigid, system } from "./jacobian-check";

const cross = (a: number[], b: number[]) => [
  a[1] * b[2] - a[2] * b[1],
  a[2] * b[0] - a[0] * b[2],
  a[0] * b[1] - a[1] * b[0],
];
const q = axisAngle([1, -2, 0.5], 0.8);
const P = [0.3, -0.4, 0.2];

function scene() {
  const sys = system(
    rigid("r", 1, [1, 2, 3], {
      orientation: q,
      velocity: [0.5, 0, -1],
      angularVelocity: [1, 2, -0.5],
    }),
    particle("p", 1, [-1, 0, 1]),
    rigid("f", 1, [0, 0, 5], { orientation: q, fixed: true }),
  );
  sys.vel.set([0.5, 0, -1, 0.1, 0.2, 0.3, 0, 0, 0]);
  sys.omega.set([1, 2, -0.5, 0, 0, 0, 0, 0, 0]);
  updateDerived(sys);
  return sys;
}

describe("PointAttachment", () => {
  it("rigid body: r = R p, x_p = x + r, v_p = v + ω × r; a 6-dof block with a moment arm", () => {
    const sys = scene();
    const a = new PointAttachment(sys, 0, P);
    const r = rotate(q, P);
    const v = cross([1, 2, -0.5], r).map((x, i) => x + [0.5, 0, -1][i]);
    for (let i = 0; i < 3; i++) {
      expect(a.r[i]).toBeCloseTo(r[i], 14);
      expect(a.x[i]).toBeCloseTo([1, 2, 3][i] + r[i], 14);
      expect(a.v[i]).toBeCloseTo(v[i], 14);
    }
    expect(Array.from(a.omega)).toEqual([1, 2, -0.5]);
    expect([a.body, a.block >= 0, a.rotational, a.hasMomentArm]).toEqual([0, true, true, true]);
    expect(new PointAttachment(sys, 0).hasMomentArm).toBe(false);
  });

  it("particle: r = p unrotated, v_p = v, no rotational dofs; ground and fixed bodies are still", () => {
    const sys = scene();
    const p = new PointAttachment(sys, 1, P);
    expect(Array.from(p.r)).toEqual(P);
    expect(Array.from(p.x)).toEqual([-1 + 0.3, -0.4, 1.2].map((x) => expect.closeTo(x, 15)));
    expect(Array.from(p.v)).toEqual([0.1, 0.2, 0.3]);
    expect([p.rotational, p.hasMomentArm]).toEqual([false, false]);
    const g = new PointAttachment(sys, -1, P);
    expect([g.block, Array.from(g.x), Array.from(g.v)]).toEqual([-1, P, [0, 0, 0]]);
    const f = new PointAttachment(sys, 2, P);
    const r = rotate(q, P);
    expect(f.block).toBe(-1);
    for (let i = 0; i < 3; i++) expect(f.x[i]).toBeCloseTo([0, 0, 5][i] + r[i], 14);
    expect(Array.from(f.v)).toEqual([0, 0, 0]);
    expect(() => new PointAttachment(sys, 3)).toThrow(/body index 3 out of range/);
    expect(() => new PointAttachment(sys, -2)).toThrow(/out of range/);
  });

  it("follows the integrator's increment: δx_p = δx + δθ × r (central differences)", () => {
    const sys = scene();
    const a = new PointAttachment(sys, 0, P);
    const r = Array.from(a.r);
    const x0 = Array.from(a.x);
    const h = 1e-6;
    const dq = [0.2, -0.1, 0.3, 0.5, 0.4, -0.6, 0, 0, 0];
    const moved = (sign: number) => {
      const s = scene();
      addPositionIncrement(s, Float64Array.from(dq), sign * h);
      const b = new PointAttachment(s, 0, P);
      return Array.from(b.x);
    };
    const xp = moved(1);
    const xm = moved(-1);
    const expected = cross(dq.slice(3, 6), r).map((x, i) => x + dq[i]);
    for (let i = 0; i < 3; i++) expect((xp[i] - xm[i]) / (2 * h)).toBeCloseTo(expected[i], 8);
    // update() refreshes from the moved state
    addPositionIncrement(sys, Float64Array.from(dq), 1);
    updateDerived(sys);
    a.update();
    expect(a.x[0]).not.toBe(x0[0]);
  });

  it("addForce: sign·f on the body, r × (sign·f) on a rigid one, nothing on still bodies", () => {
    const sys = scene();
    const f = Float64Array.of(9, 1, 2, -3);
    for (const b of [0, 1, 2]) new PointAttachment(sys, b, P).addForce(f, 1, -2);
    new PointAttachment(sys, -1, P).addForce(f, 1, 1);
    const F = [-2, -4, 6]; // −2 · (1, 2, −3)
    const tau = cross(rotate(q, P), F);
    for (let i = 0; i < 3; i++) {
      expect(sys.force[i]).toBeCloseTo(F[i], 14);
      expect(sys.torque[i]).toBeCloseTo(tau[i], 14);
      expect(sys.force[3 + i]).toBe(F[i]);
    }
    expect(Array.from(sys.torque.subarray(3))).toEqual([0, 0, 0, 0, 0, 0]);
    expect(Array.from(sys.force.subarray(6))).toEqual([0, 0, 0]);
  });
});
