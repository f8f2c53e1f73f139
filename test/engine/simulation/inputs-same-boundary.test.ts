/**
 * Inputs at one step boundary read the state the inputs before them left
 * (simulation/inputs.ts applyInput, joint-state.ts JointStates.set):
 * - a mimic pair's follower put off its relation (a bodyState of its body) and then its
 *   followed joint's jointState written back in place: the group is written, the relation
 *   q₂ = −2 q₁ + 0.01 holds right after, to round-off, and q₁ reads the value given (until
 *   2026-12-08 the write-back was taken as in place, the follower left 1e-3 m off: the
 *   coordinates read the pose before the bodyState, cached under the system's poseVersion,
 *   and the partners were not checked);
 * - an impulse after a bodyState turning the body: Δω = I_w⁻¹ (R p × J) with the new R
 *   (until 2026-12-08 the old orientation's rotation and world inertia).
 */
import { describe, expect, it } from "vitest";
import { Input, type InputIn } from "../../../schemas/input";
import { SolverSettings } from "../../../schemas/model";
import { loadModel } from "../../../src/engine/index";
import { mimicSliders } from "../../support/models";

const INTEGRATORS = SolverSettings.shape.integrator.unwrap().options;
const inputs = (list: InputIn[]) => list.map((i) => Input.parse(i));

describe("inputs at one boundary read the state the ones before them left", () => {
  it("a follower put off its mimic relation, then the followed joint written back in place: the relation holds right after (the integrators that take mimics)", () => {
    for (const integrator of INTEGRATORS.filter((i) => i !== "articulated")) {
      for (const [moved, written] of [
        ["f2", "s1"],
        ["f1", "s2"],
      ]) {
        const sim = loadModel(mimicSliders({ integrator: integrator as "newmark", dt: 2e-3 }));
        // 0.6 s: mid-swing, q₁ ≈ 0.029 m at ≈ −0.01 m/s
        sim.step(300);
        const s = sim.state();
        const body = s.bodies.find((b) => b.id === moved);
        const joint = s.joints.find((j) => j.id === written);
        if (!body || !joint) throw new Error("model");
        const [x, y, z] = body.position;
        sim.schedule(
          inputs([
            { type: "bodyState", id: moved, position: [x + 1e-3, y, z] },
            {
              type: "jointState",
              id: written,
              position: joint.coordinates[0],
              velocity: joint.rates[0],
            },
          ]),
        );
        const [j1, j2] = sim.state().joints;
        const what = `${integrator}, ${moved} moved, ${written} written`;
        expect(Math.abs(j2.coordinates[0] - (-2 * j1.coordinates[0] + 0.01)), what).toBeLessThan(
          1e-15,
        );
        expect(Math.abs(j2.rates[0] + 2 * j1.rates[0]), what).toBeLessThan(1e-15);
        const after = written === "s1" ? j1 : j2;
        expect(Math.abs(after.coordinates[0] - joint.coordinates[0]), what).toBeLessThan(1e-15);
      }
    }
  });

  it("an impulse after a bodyState turning the body: Δω = I_w⁻¹ (R p × J) with the new orientation", () => {
    // a free body, principal moments (1, 2, 2.5) kg·m², turned 90° about z: R maps x → y,
    // y → −x. The impulse J = (0, 0, 1) N·s at p = (1, 0, 0) (body frame): r = R p =
    // (0, 1, 0), r × J = (1, 0, 0), about the body's −y axis, whose moment is 2: Δω =
    // (0.5, 0, 0) rad/s (the old orientation's: r = (1, 0, 0), r × J = (0, −1, 0), about
    // its y axis, Δω = (0, −0.5, 0))
    const sim = loadModel({
      gravity: [0, 0, 0],
      bodies: [{ id: "box", mass: 1, position: [0, 0, 0], inertia: [1, 2, 2.5] }],
    });
    const c = Math.SQRT1_2;
    sim.schedule(
      inputs([
        { type: "bodyState", id: "box", orientation: [c, 0, 0, c] },
        { type: "impulse", id: "box", impulse: [0, 0, 1], point: [1, 0, 0] },
      ]),
    );
    const w = sim.state().bodies[0].angularVelocity;
    expect(w[0]).toBeCloseTo(0.5, 12);
    expect(w[1]).toBeCloseTo(0, 12);
    expect(w[2]).toBeCloseTo(0, 12);
  });
});
