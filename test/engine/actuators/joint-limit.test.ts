/**
 * The compliant joint limit (src/engine/actuators/joint-limit.ts) on a pinned rod at known
 * angles and rates (hinge.ts): the defaults k = m̃ (2π/T)², c = 2 m̃ (2π/T) with
 * m̃ = 1/(gᵀ P g) the rod's inertia about its pivot; the Kelvin–Voigt law
 * τ = ±(k δ + c q̇_in min(1, δ/δ_r)) at each bound, pushing only; its Jacobians
 * (−(k + c q̇_in/δ_r) on the ramp, −c ramp) against the closed form and central
 * differences of the effort; off when disabled. coordinateInertia of a coordinate
 * between two bodies: 1/(1/I_a + 1/I_b). constrainLimitInertias on a 3-link chain hinged
 * at the world: each joint's inertia with the others free, 1/(M_q⁻¹)_aa of the chain's
 * joint-space mass matrix written out.
 */
import { describe, expect, it } from "vitest";
import { Model, type ModelInput } from "../../../schemas/model";
import { createActuation } from "../../../src/engine/actuators/build";
import {
  constrainLimitInertias,
  coordinateInertia,
  DAMPING_RAMP,
  DEFAULT_PERIOD,
} from "../../../src/engine/actuators/joint-limit";
import { createConstraints } from "../../../src/engine/constraints/build";
import { ConstraintSet } from "../../../src/engine/constraints/constraint-set";
import { projectionWorkspace } from "../../../src/engine/constraints/project";
import { BodySystem, clearForces, massSolve } from "../../../src/engine/model/body-system";
import { clearDeadline, DeadlineExceeded, setDeadline } from "../../../src/engine/solvers/deadline";
import { importUrdf } from "../../../src/formats/urdf/index";
import { arm7Files, arm7Urdf } from "../../formats/urdf/arm7";
import { hangingChain } from "../../support/models";
import { denseJacobian, rigid } from "../forces/jacobian-check";
import { hinge, I_CENTRE, I_PIVOT, setHinge, systemOf, twoLinkHinges } from "./hinge";

const K = 100;
const C = 4;
const limited = () => hinge({ limits: { lower: -0.2, upper: 0.3, stiffness: K, damping: C } });

describe("CompliantJointLimit", () => {
  it("defaults: k = m̃ (2π/T)², c = 2 m̃ (2π/T), m̃ the rod's inertia about its pivot", () => {
    const { actuation } = hinge({ limits: { lower: -1, upper: 1 } });
    const [limit] = actuation.limits;
    const w = (2 * Math.PI) / DEFAULT_PERIOD;
    expect(limit.id).toBe("pin:limits");
    // (until 2026-12-06 about its centre, I_PIVOT/4: the hinge's rows left out)
    expect(limit.inertia).toBeCloseTo(I_PIVOT, 14);
    expect(limit.stiffness / (I_PIVOT * w * w)).toBeCloseTo(1, 14);
    expect(limit.damping / (2 * I_PIVOT * w)).toBeCloseTo(1, 14);
  });

  it("past either bound: τ = ±(k δ + c q̇_in), pushing only; nothing inside or disabled", () => {
    const { system, actuation } = limited();
    const [limit] = actuation.limits;
    const effortAt = (theta: number, rate: number) => {
      setHinge(system, theta, rate);
      clearForces(system);
      limit.applyForces(0);
      return limit.effort;
    };
    expect(effortAt(0.35, 0.5)).toBeCloseTo(-(K * 0.05 + C * 0.5), 12);
    expect(system.torque[1]).toBeCloseTo(-(K * 0.05 + C * 0.5), 12);
    expect(limit.coordinate.limitEffort).toBe(limit.effort);
    expect(effortAt(-0.25, -1)).toBeCloseTo(K * 0.05 + C * 1, 12);
    // leaving fast: k δ + c q̇_in < 0 would pull, so nothing (no adhesion)
    expect(effortAt(0.35, -10)).toBe(0);
    expect(effortAt(0.1, 3)).toBe(0);
    expect(Array.from(system.torque)).toEqual([0, 0, 0]);
    limit.enabled = false;
    expect(effortAt(0.35, 0.5)).toBe(0);
  });

  it("on the damping ramp: τ = −(k δ + c (δ/δ_r) q̇_in), Jacobians −(k + c q̇_in/δ_r) and −c δ/δ_r", () => {
    const { system, actuation } = limited();
    const [limit] = actuation.limits;
    const delta = DAMPING_RAMP / 2;
    const effortAt = (theta: number, rate: number) => {
      setHinge(system, theta, rate);
      limit.applyForces(0);
      return limit.effort;
    };
    // (the angle's roundoff, ~1e-16, enters through c/δ_r = 4e4: 10 digits)
    expect(effortAt(0.3 + delta, 1)).toBeCloseTo(-(K * delta + C * 0.5 * 1), 10);
    const stiffness = K + C / DAMPING_RAMP;
    const pos = denseJacobian(system, limit, "position");
    const vel = denseJacobian(system, limit, "velocity");
    for (let k = 0; k < 36; k++) {
      expect(pos[k]).toBeCloseTo(k === 28 ? -stiffness : 0, 8);
      expect(vel[k]).toBeCloseTo(k === 28 ? -C * 0.5 : 0, 10);
    }
    // the same slopes by central differences of the effort (inside the ramp)
    const h = 1e-7;
    const dTheta = (effortAt(0.3 + delta + h, 1) - effortAt(0.3 + delta - h, 1)) / (2 * h);
    const dRate = (effortAt(0.3 + delta, 1 + h) - effortAt(0.3 + delta, 1 - h)) / (2 * h);
    expect(dTheta / -stiffness).toBeCloseTo(1, 6);
    expect(dRate).toBeCloseTo(-C * 0.5, 6);
    // inside the range: no Jacobian
    effortAt(0, 1);
    expect(Array.from(denseJacobian(system, limit, "position"))).toEqual(new Array(36).fill(0));
  });
});

describe("coordinateInertia", () => {
  it("a hinge between two links about y: 1/(1/I_a + 1/I_b) with the links' I_yy", () => {
    const { system, spec } = twoLinkHinges(0.6);
    const { coordinates } = createActuation(spec.joints, [], system);
    const q1 = coordinates.get("j1");
    const q0 = coordinates.get("j0");
    if (!q0 || !q1) throw new Error("no coordinates");
    q0.evaluate();
    q1.evaluate();
    expect(coordinateInertia(system, q1)).toBeCloseTo(1 / (1 / 0.2 + 1 / 0.6), 13);
    expect(coordinateInertia(system, q0)).toBeCloseTo(0.2, 13);
  });
});

describe("constrainLimitInertias", () => {
  /**
   * A chain hanging from the world (hangingChain: links 0.5 m, hinged about y at their tops)
   * of the given masses, I = [0.1, iyy, 0.3], every hinge limited to ±1 rad, no gravity:
   * its limits (m̃ still the joints-free default) and its joints' constraints.
   */
  function limitedChain(masses: readonly number[], iyy: number) {
    const chain = hangingChain({
      joints: masses.map(() => ({ type: "revolute" as const, axis: [0, 1, 0] as const })),
      mass: (i) => masses[i],
      inertia: [0.1, iyy, 0.3],
    });
    for (const j of chain.joints) if (j.type === "revolute") j.limits = { lower: -1, upper: 1 };
    const { system, spec } = systemOf({
      gravity: [0, 0, 0],
      solver: { integrator: "generalized-alpha" },
      ...chain,
    });
    const actuation = createActuation(spec.joints, [], system);
    const set = new ConstraintSet(
      system,
      createConstraints(spec.joints, [], system, actuation.coordinates),
    );
    return { actuation, set };
  }

  it("checks the build's deadline (solvers/deadline.ts): one passed ends it with DeadlineExceeded", () => {
    // (once O(dofs) a limit: a 9 000-link chain with limits held a worker for minutes; the
    // selected inverse made it O(dofs) in all, the check stays for what still scales)
    const { actuation, set } = limitedChain([1, 1, 1], 0.2);
    setDeadline(-1);
    try {
      // before: no check, the inertias set
      expect(() => constrainLimitInertias(actuation.limits, set)).toThrow(DeadlineExceeded);
    } finally {
      clearDeadline();
    }
  });

  it("a 3-link chain hinged at the world about y: m̃ of each joint is 1/(M_q⁻¹)_aa, the chain's inertia about it with the other joints free", () => {
    // links 0.5 m long hanging straight down (hangingChain), masses m_i, I_yy = 0.2 about
    // their centres; joint a at the top of link a. Turning joint a at q̇_a moves the centre
    // of every link i ≥ a along x at d_ia q̇_a, d_ia = 0.25 + 0.5 (i − a) below the joint,
    // and turns it at q̇_a, so T = ½ q̇ᵀ M_q q̇ with
    //   M_ab = Σ_{i ≥ max(a, b)} (m_i d_ia d_ib + I_yy).
    // The coordinate's inertia with the others free, the effort τ_a alone giving
    // q̈_a = (M_q⁻¹)_aa τ_a: m̃_a = 1/(M_q⁻¹)_aa = det M_q / (the cofactor of M_aa).
    const masses = [2, 1.5, 1];
    const iyy = 0.2;
    const { actuation, set } = limitedChain(masses, iyy);
    const free = actuation.limits.map((l) => l.inertia);
    constrainLimitInertias(actuation.limits, set);
    const d = (i: number, a: number) => 0.25 + 0.5 * (i - a);
    const M = [0, 1, 2].map((a) =>
      [0, 1, 2].map((b) => {
        let s = 0;
        for (let i = Math.max(a, b); i < 3; i++) s += masses[i] * d(i, a) * d(i, b) + iyy;
        return s;
      }),
    );
    const minor = (a: number) => {
      const [r, c] = [0, 1, 2].filter((x) => x !== a);
      return M[r][r] * M[c][c] - M[r][c] * M[c][r];
    };
    const det =
      M[0][0] * minor(0) -
      M[0][1] * (M[1][0] * M[2][2] - M[1][2] * M[2][0]) +
      M[0][2] * (M[1][0] * M[2][1] - M[1][1] * M[2][0]);
    actuation.limits.forEach((l, a) => {
      expect(l.inertia / (det / minor(a)), l.id).toBeCloseTo(1, 12);
    });
    // the first joint: 2.98 times its own link's I_yy, which the joints-free default took
    expect(free[0]).toBeCloseTo(iyy, 14);
    expect(actuation.limits[0].inertia / free[0]).toBeGreaterThan(2.9);
    // the last joint carries nothing further: its link's inertia about its top, I_yy +
    // m d², with the links above free (the two-link formula's reduction: less than that)
    expect(actuation.limits[2].inertia).toBeLessThan(iyy + masses[2] * 0.25 ** 2);
  });

  /** The limits of `model`'s joints with m̃ from its constraints (as the simulation's build). */
  function limitsOf(model: Parameters<typeof systemOf>[0]) {
    const { system, spec } = systemOf(model);
    const actuation = createActuation(spec.joints, [], system);
    const rows = createConstraints(spec.joints, spec.motors, system, actuation.coordinates);
    constrainLimitInertias(actuation.limits, new ConstraintSet(system, rows));
    return actuation.limits;
  }

  it("a closed loop (a parallelogram four-bar, 3 of its 20 hinge rows redundant): m̃ of a crank is the whole linkage's, 2 (I_yy + m L²/4) + m_c L²", () => {
    // cranks of mass m, length L hanging from the ground at x = 0 and x = D, their lower ends
    // joined by a coupler (mass m_c): turning a crank at θ̇ turns the other with it and
    // carries the coupler round a circle of radius L without turning it
    const [m, len, d, mc, iyy] = [1.5, 0.6, 0.8, 2, 0.07];
    const hinge = (id: string, a: object, b: object) => ({
      id,
      type: "revolute",
      a,
      b,
      axis: [0, 1, 0],
    });
    const body = (id: string, mass: number, position: number[]) => ({
      id,
      mass,
      inertia: [0.05, iyy, 0.05],
      position,
    });
    const [limit] = limitsOf({
      gravity: [0, 0, 0],
      solver: { integrator: "generalized-alpha" },
      bodies: [
        body("c1", m, [0, 0, -len / 2]),
        body("c2", m, [d, 0, -len / 2]),
        body("cp", mc, [d / 2, 0, -len]),
      ],
      joints: [
        {
          ...hinge(
            "g1",
            { body: "ground", point: [0, 0, 0] },
            { body: "c1", point: [0, 0, len / 2] },
          ),
          limits: { lower: -1, upper: 1 },
        },
        hinge("g2", { body: "ground", point: [d, 0, 0] }, { body: "c2", point: [0, 0, len / 2] }),
        hinge("k1", { body: "c1", point: [0, 0, -len / 2] }, { body: "cp", point: [-d / 2, 0, 0] }),
        hinge("k2", { body: "c2", point: [0, 0, -len / 2] }, { body: "cp", point: [d / 2, 0, 0] }),
      ],
    } as Parameters<typeof systemOf>[0]);
    expect(limit.inertia / (2 * (iyy + (m * len * len) / 4) + mc * len * len)).toBeCloseTo(1, 10);
  });

  it("a joint its motor holds keeps the inertia with the joints free (the constraints give it none)", () => {
    const { spec } = hinge({ limits: { lower: -1, upper: 1 } });
    const [limit] = limitsOf({
      ...spec,
      motors: [{ id: "drive", joint: "pin", angle: 0 }],
    } as Parameters<typeof systemOf>[0]);
    expect(limit.inertia).toBeCloseTo(I_CENTRE, 14);
  });
});

describe("constrainLimitInertias by the selected inverse", () => {
  /** The limits and constraint set of a model as the build makes them (rigid bodies). */
  function partsOf(input: ModelInput) {
    const spec = Model.parse(input);
    const system = new BodySystem(
      spec.bodies.map((b) =>
        rigid(b.id, b.mass ?? 0, [...b.position], {
          fixed: b.fixed,
          orientation: [...b.orientation],
          inertia:
            b.inertia === undefined
              ? [1, 0, 0, 0, 1, 0, 0, 0, 1]
              : typeof b.inertia[0] === "number"
                ? [
                    b.inertia[0] as number,
                    0,
                    0,
                    0,
                    b.inertia[1] as number,
                    0,
                    0,
                    0,
                    b.inertia[2] as number,
                  ]
                : (b.inertia as number[][]).flat(),
        }),
      ),
    );
    const actuation = createActuation(spec.joints, spec.actuators, system);
    const set = new ConstraintSet(
      system,
      createConstraints(spec.joints, spec.motors, system, actuation.coordinates),
    );
    return { limits: actuation.limits, set };
  }

  /**
   * The per-limit computation (constrainLimitInertias until 2026-12-07), written out: v =
   * M⁻¹ g, du = −M⁻¹Gᵀ S⁺ G v by the projections' solve, m̃ = 1/(gᵀv + gᵀdu) unless the
   * constraints hold the coordinate (then the inertia with the joints free).
   */
  function perLimit(limits: ReturnType<typeof partsOf>["limits"], set: ConstraintSet): number[] {
    const sys = set.sys;
    const ws = projectionWorkspace(set);
    ws.factorAt(0);
    const g = new Float64Array(sys.numDofs);
    const v = new Float64Array(sys.numDofs);
    const du = new Float64Array(sys.numDofs);
    const r = new Float64Array(set.numRows);
    return limits.map((l) => {
      l.coordinate.evaluate();
      g.fill(0);
      l.coordinate.spread(1, g);
      massSolve(sys, g, v);
      const free = l.coordinate.along(v);
      set.multiply(v, r);
      ws.correction(r, du);
      const joined = free + l.coordinate.along(du);
      return joined > 1e-9 * free ? 1 / joined : l.inertia;
    });
  }

  function expectSameInertias(input: ModelInput, count: number) {
    for (const budget of [64, 0]) {
      const { limits, set } = partsOf(input);
      expect(limits.length).toBe(count);
      const want = perLimit(limits, set);
      const free = limits.map((l) => l.inertia);
      constrainLimitInertias(limits, set, budget);
      limits.forEach((l, i) => {
        expect(Math.abs(l.inertia / want[i] - 1), `${l.id} (budget ${budget})`).toBeLessThan(1e-12);
      });
      // the joints gave the limits more inertia than their own links
      expect(limits.some((l, i) => l.inertia > 1.5 * free[i])).toBe(true);
    }
  }

  it("the 7-axis arm (arm7: servos on its joints, a mimic gripper): m̃ of every limit as the per-limit solve's to 1e-12, through the recurrence's budget and without it", async () => {
    const { model } = await importUrdf({
      urdf: arm7Urdf(),
      files: arm7Files(),
      options: { actuators: { type: "position", kp: 500, kd: 20 } },
    });
    expectSameInertias(model as ModelInput, 9);
  });

  it("a branched tree with a closed loop (a diamond of hinges about y, its closure's out-of-plane rows redundant, a side branch about x): as the per-limit solve to 1e-12", () => {
    // world anchors; each link's joint points are the anchors less its centre
    const link = (id: string, position: number[]) => ({
      id,
      mass: 1 + 0.1 * id.length,
      inertia: [0.02, 0.03, 0.025],
      position,
    });
    const bodies = [
      link("t0", [0, 0, -0.25]),
      link("t1", [0, 0, -0.75]),
      link("a1", [-0.2, 0, -1.2]),
      link("a2", [-0.2, 0, -1.6]),
      link("b1", [0.2, 0, -1.2]),
      link("b2", [0.2, 0, -1.6]),
      link("side", [0.25, 0, -0.5]),
    ];
    const at = (id: string) => bodies.find((b) => b.id === id)?.position ?? [0, 0, 0];
    const hinge = (id: string, a: string, b: string, anchor: number[], axis = [0, 1, 0]) => ({
      id,
      type: "revolute",
      a: { body: a, point: anchor.map((x, i) => x - at(a)[i]) },
      b: { body: b, point: anchor.map((x, i) => x - at(b)[i]) },
      axis,
      limits: { lower: -1, upper: 1 },
    });
    expectSameInertias(
      {
        gravity: [0, 0, 0],
        solver: { integrator: "generalized-alpha" },
        bodies,
        joints: [
          hinge("g", "ground", "t0", [0, 0, 0]),
          hinge("t", "t0", "t1", [0, 0, -0.5]),
          hinge("a", "t1", "a1", [0, 0, -1]),
          hinge("aa", "a1", "a2", [-0.4, 0, -1.4]),
          hinge("b", "t1", "b1", [0, 0, -1]),
          hinge("bb", "b1", "b2", [0.4, 0, -1.4]),
          hinge("close", "a2", "b2", [0, 0, -1.8]),
          hinge("s", "t0", "side", [0, 0, -0.5], [1, 0, 0]),
        ],
      } as ModelInput,
      8,
    );
  });
});
