/**
 * Servo gains beyond MAX_GAIN (simulation/inputs.ts) are refused, a `gains` input's at its
 * path and a model's at ["actuators", i, key], the actuator and its joint named: beyond
 * MAX_VALUE/(2e8 · 1e8) = 9.0e291 the law's power τ q̇ and potential ½ k_p e² overflow
 * float64 at rates and errors within the blow-up bounds, and the State's energies read null
 * while the run goes on (the rod below under articulated, k_d 1e300 and the joint written
 * at 1e7 rad/s: until 2026-12-08 taken, energy.dissipated and error null after its steps).
 * Just inside the bound the same rod, written at the blow-up rate 1e8 rad/s, keeps its
 * energies finite and books the ½ I q̇² the brake took. The diverged-state tests' servos
 * (k_p, k_d up to 1e30) stay far inside it.
 */
import { describe, expect, it } from "vitest";
import { Input, type InputIn } from "../../../schemas/input";
import { loadModel } from "../../../src/engine/index";
import { MAX_GAIN } from "../../../src/engine/simulation/inputs";
import { InputError } from "../../../src/engine/simulation/simulation";
import { rodPendulum } from "../../support/models";

const inputs = (list: InputIn[]) => list.map((i) => Input.parse(i));
const I = 1 / 3;

function rod(servo: Record<string, unknown>, integrator = "articulated") {
  return rodPendulum({
    mass: 1,
    length: 1,
    axis: [0, 1, 0],
    gravity: [0, 0, 0],
    servo,
    solver: { integrator, dt: 2e-3 },
  });
}

/** The issues a schedule() of `list` is refused with. */
function refusal(sim: ReturnType<typeof loadModel>, list: InputIn[]) {
  try {
    sim.schedule(inputs(list));
  } catch (err) {
    if (err instanceof InputError) return err.issues;
    throw err;
  }
  return [];
}

describe("servo gains beyond MAX_GAIN", () => {
  it("is 9.0e291: MAX_VALUE over the power's reach at the blow-up bounds, 2e8 · 1e8", () => {
    expect(MAX_GAIN).toBeCloseTo(Number.MAX_VALUE / 2e16, -280);
    expect(MAX_GAIN).toBeGreaterThan(8.9e291);
    expect(MAX_GAIN).toBeLessThan(9.0e291);
  });

  it("a gains input beyond it is refused at its path, naming the actuator and its joint; one inside it is taken", () => {
    const sim = loadModel(rod({ type: "position", target: 0.3, kp: 20, kd: 0.5 }));
    expect(refusal(sim, [{ type: "gains", id: "servo", kd: 1e300 }])).toEqual([
      {
        path: ["inputs", 0, "kd"],
        message: expect.stringMatching(
          /^actuator "servo" on joint "pin": kd 1e\+300 beyond 9\.0e\+291/,
        ),
      },
    ]);
    expect(refusal(sim, [{ type: "gains", id: "servo", kp: 1e292 }])[0].path).toEqual([
      "inputs",
      0,
      "kp",
    ]);
    expect(refusal(sim, [{ type: "gains", id: "servo", kd: 0.99 * MAX_GAIN }])).toEqual([]);
    const spun = loadModel(rod({ type: "velocity", target: 1, kv: 2 }));
    expect(refusal(spun, [{ type: "gains", id: "servo", kv: 1e300 }])[0].path).toEqual([
      "inputs",
      0,
      "kv",
    ]);
  });

  it("a model's gains beyond it are refused at [actuators, i, key]; the diverged-state tests' 1e30 servos are not", () => {
    const issues = loadModel(
      rod({ type: "position", target: 0.3, kp: 20, kd: 1e300 }),
    ).commandIssues();
    expect(issues.map((i) => i.path)).toEqual([["actuators", 0, "kd"]]);
    expect(issues[0].message).toMatch(/actuator "servo" on joint "pin": kd 1e\+300/);
    expect(
      loadModel(rod({ type: "position", target: 3, kp: 1e30, kd: 1e30 })).commandIssues(),
    ).toEqual([]);
  });

  it("just inside it, the rod written at the blow-up rate 1e8 rad/s keeps finite energies, the brake's ½ I q̇² booked (articulated, where 1e300 read null)", () => {
    const sim = loadModel(rod({ type: "position", target: 0.3, kp: 20, kd: 0.5 }));
    sim.step(10);
    sim.schedule(
      inputs([
        { type: "gains", id: "servo", kd: 0.99 * MAX_GAIN },
        { type: "jointState", id: "pin", velocity: 1e8 },
      ]),
    );
    sim.step(5);
    const e = sim.state().energy;
    expect(Number.isFinite(e.dissipated as number)).toBe(true);
    expect(Number.isFinite(e.error as number)).toBe(true);
    // ½ I q̇² = 1.67e15 J taken by the brake, the servo's own ½ k_p e² beside it nothing
    expect(Math.abs((e.dissipated as number) - 0.5 * I * 1e16) / (0.5 * I * 1e16)).toBeLessThan(
      1e-9,
    );
  });
});
