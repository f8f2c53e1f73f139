/**
 * The Newton step of acceleration-step.ts:
 * - a nonlinear step (backward Euler on a particle held by two springs of rest length
 *   L₀ = 0.5 m, k = 2000 N/m, to the anchors p₁ = 0 and p₂ = (1.2, 0.3, 0), h = 20 ms:
 *   f(x) = −Σ k(|x − p| − L₀)(x − p)/|x − p| is far from linear over the step; with one
 *   spring the step would stay on the predictor's ray, where Newton is exact at once) is
 *   iterated to convergence: the end state satisfies the scheme's equations
 *   m (v₁ − v₀)/h = f(x₁), x₁ = x₀ + h v₁, with f evaluated here, to the Newton tolerance
 *   (1e-10 (1 + ‖a‖∞) in m/s², up to the last correction's contraction), in more than one
 *   iteration; one iteration (newtonIterations = 1) is the linearized step, which does not.
 * The iteration matrix and its solvers are iteration-matrix.test.ts's.
 */
import { describe, expect, it } from "vitest";
import type { ModelInput } from "../../../schemas/model";
import { JointActuator } from "../../../src/engine/actuators/actuator";
import type { ConstraintSet } from "../../../src/engine/constraints/constraint-set";
import type { JointCoordinate } from "../../../src/engine/constraints/joint-coordinate";
import { projectionWorkspace } from "../../../src/engine/constraints/project";
import type { ForceEffector } from "../../../src/engine/forces/effector";
import { loadModel } from "../../../src/engine/index";
import {
  type AccelerationStepper,
  groupRoot,
  heldInverseInertia,
} from "../../../src/engine/integrators/acceleration-step";
import type { ImpactEvents } from "../../../src/engine/integrators/impact-events";
import type { BodySystem } from "../../../src/engine/model/body-system";
import { rodPendulum } from "../../support/models";

describe("Newton iterations on a nonlinear spring (backward Euler)", () => {
  const k = 2000;
  const m = 0.5;
  const L0 = 0.5;
  const h = 0.02;
  const x0 = [0.8, 0.1, -0.2];
  const v0 = [0.5, 3, 1];
  const anchors = [
    [0, 0, 0],
    [1.2, 0.3, 0],
  ];
  const force = (x: number[]) => {
    const f = [0, 0, 0];
    for (const p of anchors) {
      const d = x.map((c, i) => c - p[i]);
      const l = Math.hypot(...d);
      for (let i = 0; i < 3; i++) f[i] -= (k * (l - L0) * d[i]) / l;
    }
    return f;
  };
  /** max over components of |m (v₁ − v₀)/h − f(x₁)|/m (m/s²) after one step. */
  function residual(newtonIterations: number, linearTolerance?: number) {
    const sim = loadModel({
      gravity: [0, 0, 0],
      bodies: [{ id: "p", kind: "particle", mass: m, position: x0, velocity: v0 }],
      forces: anchors.map((point, i) => ({
        id: `s${i}`,
        type: "spring" as const,
        a: { body: "p" },
        b: { body: "ground", point: point as [number, number, number] },
        stiffness: k,
        restLength: L0,
      })),
      solver: {
        integrator: "backward-euler",
        dt: h,
        newtonIterations,
        newtonTolerance: 1e-10,
        ...(linearTolerance !== undefined ? { linearSolver: "cg" as const, linearTolerance } : {}),
      },
    });
    sim.step(1);
    const st = sim.state();
    const x1 = st.bodies[0].position;
    const v1 = st.bodies[0].velocity;
    const f = force(x1);
    let r = 0;
    let a = 0;
    for (let i = 0; i < 3; i++) {
      expect(x1[i]).toBeCloseTo(x0[i] + h * v1[i], 14);
      const ai = (v1[i] - v0[i]) / h;
      a = Math.max(a, Math.abs(ai));
      r = Math.max(r, Math.abs(ai - f[i] / m));
    }
    return { r, a, stats: st.solver };
  }

  it("converges to the scheme's nonlinear equations; the linearized step does not", () => {
    const newton = residual(25);
    expect(newton.stats.newtonIterations).toBeGreaterThan(1);
    expect(newton.stats.newtonConverged).toBe(true);
    expect(newton.r).toBeLessThan(1e-9 * (1 + newton.a));
    const linearized = residual(1);
    expect(linearized.stats.newtonIterations).toBe(1);
    expect(linearized.r).toBeGreaterThan(1e3 * newton.r);
  });

  it("converges in one step with a fixed Krylov tolerance (solver.linearTolerance) as with the forcing terms", () => {
    // The line search's stall test compares ‖R‖ after each correction with ‖R‖ before it:
    // with a fixed tolerance that norm was never taken, every correction counted as
    // stalled and the step was halved until it failed (a cloth with linearTolerance 1e-6
    // ended at its eighth step).
    const forcing = residual(25, undefined);
    const fixed = residual(25, 1e-12);
    expect(fixed.stats.newtonConverged).toBe(true);
    expect(fixed.r).toBeLessThan(1e-9 * (1 + fixed.a));
    // one step, not halves: as many corrections as with the forcing terms, give or take one
    expect(
      Math.abs(fixed.stats.newtonIterations - forcing.stats.newtonIterations),
    ).toBeLessThanOrEqual(1);
  });
});

describe("jointGroups: the bodies joined by joints or force elements (constraintGroups: by joints alone), the ground and fixed bodies apart", () => {
  // Bodies 0..5: a fixed base "f"; "a"–"b" hinged together, "a" hinged to the base (the base
  // joins nothing); "c" hinged to the ground alone; "d" tied to "b" by a spring (a force
  // element: W's off-diagonal block); "e" free. Groups: {a, b, d}, {c}, {e}, the base alone.
  it("groups {a, b, d}, {c}, {e} and the fixed base by itself", () => {
    const body = (id: string, x: number) => ({
      id,
      mass: 1,
      position: [x, 0, 0],
      inertia: [1, 1, 1],
    });
    const hinge = (id: string, a: string, b: string, x: number) => ({
      id,
      type: "revolute",
      a: { body: a, point: [x, 0, 0] },
      b: { body: b, point: [0, 0, 0] },
      axis: [0, 0, 1],
    });
    const sim = loadModel({
      gravity: [0, 0, 0],
      bodies: [
        { id: "f", fixed: true, position: [0, 0, 0] },
        body("a", 1),
        body("b", 2),
        body("c", 3),
        body("d", 4),
        body("e", 5),
      ],
      joints: [hinge("fa", "f", "a", 1), hinge("ab", "a", "b", 1), hinge("gc", "ground", "c", 3)],
      forces: [
        {
          id: "s",
          type: "spring",
          a: { body: "b" },
          b: { body: "d" },
          stiffness: 10,
          restLength: 2,
        },
      ],
    } as ModelInput);
    const stepper = (sim as unknown as { stepper: AccelerationStepper }).stepper;
    const group = new Int32Array(6);
    stepper.jointGroups(group);
    const root = (b: number) => groupRoot(group, b);
    expect(root(1)).toBe(root(2));
    expect(root(2)).toBe(root(4));
    const roots = new Set([root(0), root(1), root(3), root(5)]);
    expect(roots.size).toBe(4);
    // the constraints' groups alone (AccelerationStepper.constraintGroups, an impulse's reach):
    // the spring leaves "d" by itself
    stepper.constraintGroups(group);
    expect(root(1)).toBe(root(2));
    expect(new Set([root(0), root(1), root(3), root(4), root(5)]).size).toBe(5);
  });
});

describe("heldInverseInertia: gᵀ P M⁻¹ g, one arithmetic for the stepper and the impact events", () => {
  // A 2 kg, 1 m rod hinged at its end about z (no gravity), a joint limit on the hinge (the
  // impact events then exist) and a position servo: along the hinge's coordinate the joint
  // leaves the inverse inertia about the hinge, 1/(m L²/3) = 1.5 /(kg m²); the joints free,
  // about the centre, 1/(m L²/12) = 6.
  it("a rod hinged at its end: 1/(m L²/3), the stepper's at its step's start and the events' at t bit for bit", () => {
    const m = 2;
    const L = 1;
    const sim = loadModel(
      rodPendulum({
        mass: m,
        length: L,
        axis: [0, 0, 1],
        gravity: [0, 0, 0],
        limits: { lower: -1, upper: 1 },
        servo: { type: "position", target: 0.3, kp: 1e6, kd: 0 },
        solver: { integrator: "moreau-jean", dt: 0.005 },
      }),
    );
    sim.step(3);
    const inner = sim as unknown as {
      stepper: AccelerationStepper;
      integrator: { events: ImpactEvents };
      time: number;
    };
    const stepper = inner.stepper as unknown as {
      sys: BodySystem;
      constraints: ConstraintSet;
      effectors: ForceEffector[];
      tangentTime: number;
      tangentFactored: boolean;
      jointInverseInertia(g: Float64Array): number;
    };
    const t = sim.state().time;
    const servo = stepper.effectors.find((e) => e instanceof JointActuator) as JointActuator;
    const g = new Float64Array(stepper.sys.numDofs);
    servo.coordinate.evaluateJacobian();
    servo.coordinate.spread(1, g);
    const ws = projectionWorkspace(stepper.constraints);
    ws.factorAt(t);
    const x = new Float64Array(g.length);
    const rates = new Float64Array(stepper.constraints.numRows);
    const held = heldInverseInertia(stepper.sys, ws, g, x, rates);
    expect(Math.abs(held - 3 / (m * L * L))).toBeLessThan(1e-12);
    expect(
      Math.abs(heldInverseInertia(stepper.sys, null, g, x, rates) - 12 / (m * L * L)),
    ).toBeLessThan(1e-12);
    // the stepper's, S factored at its step's start t
    stepper.tangentTime = t;
    stepper.tangentFactored = false;
    expect(stepper.jointInverseInertia(g)).toBe(held);
    // the events', the joints factored at t
    const events = inner.integrator.events as unknown as {
      heldInverseInertia(t: number, q: JointCoordinate): number;
    };
    expect(events.heldInverseInertia(t, servo.coordinate)).toBe(held);
  });
});
