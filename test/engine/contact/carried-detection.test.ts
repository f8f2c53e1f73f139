/**
 * CarriedDetection: one detection at a reference pose, carried with the bodies.
 * - covers(): true while the two largest displacement bounds δ = |Δx| + ρ ‖ΔR‖_F/√2 (a turn
 *   by φ moves a point at ρ by 2ρ sin(φ/2) = ρ ‖ΔR‖_F/√2) sum to at most the detection
 *   margin (a pair with the fixed floor: its own δ); beyond, with every δ ≤ margin, while
 *   each pair with δ_a + δ_b > margin had boxes at least δ_a + δ_b apart at the detection;
 *   false otherwise;
 * - transport(): a sphere on a fixed plane is carried exactly (its core, the centre,
 *   moves with the body: the gap falls by the descent whatever the sphere turns); two
 *   spheres: g' = n·(c_b' − c_a') − r_a − r_b, never above the true gap |c_b' − c_a'| −
 *   r_a − r_b; the midpoint lies between the carried surface points; the deepest carried
 *   penetration is returned.
 */
import { describe, expect, it } from "vitest";
import { CarriedDetection } from "../../../src/engine/contact/carried-detection";
import { CollisionDetector } from "../../../src/engine/geometry/collide";
import { BodySystem, updateDerived } from "../../../src/engine/model/body-system";
import { axisAngle } from "../../support/quat";

const R = 0.1;

function spheres(positions: number[][]) {
  const sys = new BodySystem(
    positions.map((position, i) => ({
      id: `s${i}`,
      kind: "rigid" as const,
      fixed: false,
      mass: 1,
      inertia: [0.004, 0, 0, 0, 0.004, 0, 0, 0, 0.004],
      position,
      orientation: [1, 0, 0, 0],
      velocity: [0, 0, 0],
      angularVelocity: [0, 0, 0],
    })),
  );
  const detector = new CollisionDetector(
    [
      { shape: { type: "plane", normal: [0, 0, 1], offset: 0 }, body: -1 },
      ...positions.map((_, i) => ({ shape: { type: "sphere" as const, radius: R }, body: i })),
    ],
    { margin: 0.05 },
  );
  return { sys, carried: new CarriedDetection(sys, detector) };
}

describe("CarriedDetection", () => {
  it("a sphere over a plane: covered within the margin, carried exactly while it turns", () => {
    const { sys, carried } = spheres([[0, 0, R + 0.03]]);
    expect(carried.rho[0]).toBe(R);
    expect(carried.covers()).toBe(false); // nothing detected yet
    carried.detect();
    expect(carried.buffer.count).toBe(1);
    // down 2 cm and turned by 0.1 rad: δ = 0.02 + ρ‖ΔR‖_F = 0.02 + 0.1·2√2 sin(0.05)
    sys.pos[2] -= 0.02;
    sys.quat.set(axisAngle([1, 2, 0], 0.1));
    updateDerived(sys);
    expect(0.02 + R * 2 * Math.SQRT2 * Math.sin(0.05)).toBeLessThan(0.05);
    expect(carried.covers()).toBe(true);
    expect(Math.abs(carried.transport())).toBe(0); // no penetration
    expect(carried.gap[0]).toBeCloseTo(0.01, 14);
    // into the plane by 5 mm: penetration 0.005, the midpoint half-way into it
    sys.pos[2] = R - 0.005;
    updateDerived(sys);
    expect(carried.covers()).toBe(true);
    expect(carried.transport()).toBeCloseTo(0.005, 14);
    expect(carried.point[2]).toBeCloseTo(-0.0025, 14);
    // beyond the margin: not covered; after clear() nothing is
    sys.pos[2] = R + 0.09;
    updateDerived(sys);
    expect(carried.covers()).toBe(false);
    sys.pos[2] = R + 0.03;
    updateDerived(sys);
    expect(carried.covers()).toBe(true);
    carried.clear();
    expect(carried.covers()).toBe(false);
  });

  it("a turn by φ counts as 2ρ sin(φ/2), the farthest a point at ρ moves", () => {
    const { sys, carried } = spheres([[0, 0, R + 0.03]]);
    carried.detect();
    for (const [s, covered] of [
      [0.24, true], // 2ρ sin(φ/2) = 0.048 ≤ 0.05
      [0.26, false], // 0.052 > 0.05
    ] as const) {
      sys.quat.set(axisAngle([1, 2, 0], 2 * Math.asin(s)));
      updateDerived(sys);
      expect(carried.covers()).toBe(covered);
    }
  });

  it("two spheres moving sideways: covered while their boxes were δ_a + δ_b apart", () => {
    for (const [apart, covered] of [
      [0.08, true], // δ_a + δ_b = 0.06 ≤ 0.08
      [0.055, false], // 0.06 > 0.055 (and > the margin 0.05)
    ] as const) {
      const { sys, carried } = spheres([
        [0, 0, 1],
        [2 * R + apart, 0, 1],
      ]);
      carried.detect();
      expect(carried.buffer.count).toBe(0); // farther apart than the margin, far above the floor
      sys.pos[1] += 0.03;
      sys.pos[4] -= 0.03;
      updateDerived(sys);
      expect(carried.covers()).toBe(covered);
      // one of them beyond the margin on its own: never (the floor, or anything, may be near)
      sys.pos[1] += 0.03;
      updateDerived(sys);
      expect(carried.covers()).toBe(false);
    }
  });

  it("two spheres: the two largest displacements count; the carried gap bounds the true one", () => {
    const { sys, carried } = spheres([
      [0, 0, 1],
      [2 * R + 0.02, 0, 1],
    ]);
    carried.detect();
    const k = Array.from({ length: carried.buffer.count }, (_, i) => i).find(
      (i) => carried.buffer.bodyA[i] === 0 && carried.buffer.bodyB[i] === 1,
    );
    if (k === undefined) throw new Error("the spheres 2 cm apart are within the margin");
    // each moves 2 cm toward the other, sideways too: δ₁ + δ₂ = 0.04 ≤ 0.05
    sys.pos[0] += 0.012;
    sys.pos[1] += 0.016;
    sys.pos[3] -= 0.012;
    sys.pos[4] -= 0.016;
    updateDerived(sys);
    expect(carried.covers()).toBe(true);
    carried.transport();
    const c = [0, 1, 2].map((i) => sys.pos[3 + i] - sys.pos[i]);
    const trueGap = Math.hypot(...c) - 2 * R;
    const n = carried.buffer.normal.subarray(3 * k, 3 * k + 3);
    expect(carried.gap[k]).toBeCloseTo(n[0] * c[0] + n[1] * c[1] + n[2] * c[2] - 2 * R, 14);
    expect(carried.gap[k]).toBeLessThanOrEqual(trueGap);
    // sphere 0 two more centimetres along x: |(0.032, 0.016)| + 0.02 = 0.056 > margin
    sys.pos[0] += 0.02;
    updateDerived(sys);
    expect(carried.covers()).toBe(false);
  });
});
