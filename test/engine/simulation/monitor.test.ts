/**
 * What the Simulation reports about itself (src/engine/simulation/monitor.ts): energy.error
 * (the balance with damping, contact and drives: test/engine/simulation/energy-balance.test.ts),
 * solver.reactionChange, and the
 * energyDriftLimit that ends a step in DivergenceError with the last good state. Every
 * figure is checked against numbers computed here from States read independently: the
 * energy error from the totals, the reaction change from two consecutive States' joints,
 * the last good state from a second run without the limit.
 */
import { describe, expect, it } from "vitest";
import type { StateOut } from "../../../schemas/state";
import {
  DivergenceError,
  loadModel,
  loadSnapshot,
  ModelError,
  ParameterError,
  type Simulation,
} from "../../../src/engine/index";
import { readExample } from "../../support/examples";
import { doublePendulumSpring, fallingBody, springParticle } from "../../support/models";

/** The double-pendulum example (two 0.5 m rods on revolute joints, released horizontal). */
function doublePendulum(solver: Record<string, unknown> = {}, extra: Record<string, unknown> = {}) {
  return {
    ...readExample("double-pendulum"),
    solver: { integrator: "newmark", dt: 0.005, ...solver },
    ...extra,
  };
}

/** The largest |Δ| of any joint's force or torque component between two States. */
function maxReactionChange(a: StateOut, b: StateOut): number {
  let m = 0;
  a.joints.forEach((j, k) => {
    expect(b.joints[k].id).toBe(j.id);
    for (let i = 0; i < 3; i++) {
      m = Math.max(m, Math.abs(b.joints[k].force[i] - j.force[i]));
      m = Math.max(m, Math.abs(b.joints[k].torque[i] - j.torque[i]));
    }
  });
  return m;
}

const positions = (s: StateOut) => s.bodies.map((b) => [...b.position, ...b.orientation]);

describe("energy.error", () => {
  it("is the total energy minus the total at t = 0 on a conservative model", () => {
    const sim = loadModel(doublePendulum({ integrator: "backward-euler" }));
    const s0 = sim.state();
    expect(s0.energy.error).toBe(0);
    for (let k = 0; k < 5; k++) {
      sim.step(60);
      const s = sim.state();
      expect(s.energy.error).toBe(s.energy.total - s0.energy.total);
    }
    // backward Euler dissipates: the figure is the integrator's loss, well above roundoff
    expect(sim.state().energy.error).toBeLessThan(-0.1);
  });

  it("is re-taken after reset, a PATCH of gravity, an applied assembly", () => {
    // (dissipated: what the next step's consistent start takes out, the velocities projected
    // onto the joints at the new state; theta-scheme.ts startRun)
    const sim = loadModel(doublePendulum({ integrator: "backward-euler" }));
    sim.step(100);
    expect(sim.state().energy.error).not.toBe(0);
    sim.reset();
    const r0 = sim.state();
    expect(r0.energy.error).toBe(0);
    sim.step(50);
    const s1 = sim.state();
    expect(s1.energy.error).toBe(
      s1.energy.total + (s1.energy.dissipated as number) - r0.energy.total,
    );

    sim.update({ gravity: [0, 0, -3] });
    const g0 = sim.state();
    expect(g0.energy.total).not.toBe(s1.energy.total); // the potential changed with g
    expect(g0.energy.error).toBe(0);
    sim.step(50);
    const g1 = sim.state();
    expect(g1.energy.error).toBe(
      g1.energy.total + (g1.energy.dissipated as number) - g0.energy.total,
    );

    // a PATCH that changes neither the energy nor the conservativeness keeps the reference
    sim.update({ solver: { dt: 0.004 } });
    expect(sim.state().energy.error).toBe(g1.energy.error);

    sim.assemble({}, true);
    const a0 = sim.state();
    expect(a0.energy.error).toBe(0);
    sim.step(10);
    const a1 = sim.state();
    expect(a1.energy.error).toBe(
      a1.energy.total + (a1.energy.dissipated as number) - a0.energy.total,
    );
  });

  it("a PATCH of gravity whose potential overflows is refused, nothing changed", () => {
    // 1 kg at 10 m under 1e308 m/s²: m g z = 1e309 J, beyond double precision; kept, its
    // reference would be Infinity and its snapshot (JSON null there) unrestorable
    const sim = loadModel(fallingBody({ z0: 10 }));
    sim.step(10);
    const before = sim.state();
    let thrown: unknown;
    try {
      sim.update({ gravity: [0, 0, -1e308] });
    } catch (err) {
      thrown = err;
    }
    expect(thrown).toBeInstanceOf(ParameterError);
    expect((thrown as ParameterError).issues[0].path).toEqual(["gravity"]);
    expect(sim.state().energy).toEqual(before.energy);
    // the snapshot still restores, and the run goes on as one never given the PATCH
    const copy = loadSnapshot(JSON.parse(JSON.stringify(sim.snapshot())));
    sim.step(20);
    copy.step(20);
    expect(copy.state().bodies).toEqual(sim.state().bodies);
    expect(sim.state().energy.error).toBe(copy.state().energy.error);
  });

  it("an undamped spring is conservative: its elastic energy is in the potential", () => {
    const sim = loadModel({ ...doublePendulum(), forces: [doublePendulumSpring] });
    const s0 = sim.state();
    sim.step(40);
    const s = sim.state();
    expect(s.energy.dissipated).toBe(0);
    expect(s.energy.error).toBe(s.energy.total - s0.energy.total);
  });

  it("follows a PATCH of solver damping: the reference is kept, the damping's work counted from then on", () => {
    const sim = loadModel(doublePendulum());
    sim.step(20);
    const before = sim.state().energy;
    sim.update({ solver: { rayleighMass: 0.5 } });
    // a PATCH of damping changes no energy: the balance goes on from the same figures
    expect(sim.state().energy).toEqual(before);
    sim.step(200);
    const damped = sim.state().energy;
    expect(damped.dissipated).toBeGreaterThan(0.1);
    // the trapezoidal Newmark's own error stays a small part of what the damping took
    expect(Math.abs(damped.error)).toBeLessThan(0.01 * damped.dissipated);
    sim.update({ solver: { rayleighMass: 0 } });
    sim.step(20);
    expect(sim.state().energy.dissipated).toBe(damped.dissipated);
  });
});

describe("solver.reactionChange", () => {
  it("is 0 before the second step, then the largest change of the joints' reactions", () => {
    const sim = loadModel(doublePendulum());
    expect(sim.state().solver.reactionChange).toBe(0);
    sim.step(1);
    let prev = sim.state();
    expect(prev.solver.reactionChange).toBe(0);
    let largest = 0;
    for (let k = 0; k < 200; k++) {
      sim.step(1);
      const s = sim.state();
      const expected = maxReactionChange(prev, s);
      expect(s.solver.reactionChange).toBe(expected);
      largest = Math.max(largest, expected);
      prev = s;
    }
    expect(largest).toBeGreaterThan(0.1); // the swing changes the joint forces (N)
    sim.reset();
    expect(sim.state().solver.reactionChange).toBe(0);
    sim.step(1);
    expect(sim.state().solver.reactionChange).toBe(0);
  });

  it("includes a motor's entry of State.joints", () => {
    const sim = loadModel({
      ...doublePendulum(),
      motors: [{ id: "m", joint: "elbow", angle: { type: "sine", amplitude: 0.5, frequency: 2 } }],
    });
    sim.step(3);
    let prev = sim.state();
    expect(prev.joints.map((j) => j.id)).toEqual(["shoulder", "elbow", "m"]);
    for (let k = 0; k < 50; k++) {
      sim.step(1);
      const s = sim.state();
      expect(s.solver.reactionChange).toBe(maxReactionChange(prev, s));
      prev = s;
    }
  });
});

describe("solver.energyDriftLimit", () => {
  const limit = 0.5;
  const model = doublePendulum({ integrator: "backward-euler", energyDriftLimit: limit });

  it("ends a step past the limit in DivergenceError with the last good state", () => {
    // the reference: the same run without the limit, to the first step past it
    const free = loadModel({ ...model, solver: { ...model.solver, energyDriftLimit: undefined } });
    const initial = free.state().energy.total;
    let good = free.state();
    for (;;) {
      free.step(1);
      const s = free.state();
      if (Math.abs(s.energy.total - initial) > limit) break;
      good = s;
    }
    expect(good.step).toBeGreaterThan(10);

    const sim = loadModel(model);
    let err: unknown;
    try {
      sim.step(10_000);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(DivergenceError);
    const d = err as DivergenceError;
    expect(d.step).toBe(good.step);
    expect(d.time).toBe(good.time);
    expect(d.message).toMatch(
      new RegExp(
        `^diverged at step ${good.step + 1} \\(t = [0-9.]+ s\\): energy error -[0-9.e+-]+ J exceeds solver\\.energyDriftLimit = ${limit} J$`,
      ),
    );
    const s = sim.state();
    expect(s.time).toBe(good.time);
    expect(s.step).toBe(good.step);
    expect(positions(s)).toEqual(positions(good));
    expect(s.bodies).toEqual(good.bodies);
    expect(s.joints).toEqual(good.joints); // the good step's multipliers, not the rejected one's
    expect(s.energy).toEqual(good.energy);
    expect(Math.abs(s.energy.error as number)).toBeLessThanOrEqual(limit);
  });

  it("does nothing while the drift stays below it", () => {
    const sim = loadModel(doublePendulum({ energyDriftLimit: 0.05 })); // trapezoidal Newmark
    sim.step(600);
    const s = sim.state();
    expect(s.step).toBe(600);
    expect(Math.abs(s.energy.error as number)).toBeLessThan(0.05);
  });

  it("is taken on every model, compliant contact and rayleighStiffness included; 0 is refused", () => {
    for (const m of [
      {
        ...doublePendulum({ energyDriftLimit: 1, integrator: "moreau-jean" }),
        contact: { method: "smc" },
      },
      doublePendulum({ energyDriftLimit: 1, rayleighStiffness: 0.01 }),
      { ...doublePendulum({ energyDriftLimit: 1 }), forces: [{ id: "d", type: "damper" }] },
    ])
      expect(loadModel(m).solver.energyDriftLimit).toBe(1);
    expect(() => loadModel(doublePendulum({ energyDriftLimit: 0 }))).toThrow(ModelError);
    const sim = loadModel(doublePendulum({ rayleighStiffness: 0.1 }));
    sim.update({ solver: { energyDriftLimit: 1 } });
    expect(sim.solver.energyDriftLimit).toBe(1);
    sim.update({ solver: { energyDriftLimit: null } });
    expect(sim.solver.energyDriftLimit).toBeNull();
  });

  it("ends an unstable run diverged at its last good step", () => {
    // symplectic Euler on a 1e7 N/m spring on 1 kg at h ω ≈ 16 (its explicit spring forces
    // are not checked: README, Integrators; its compliant contacts are, theta-scheme.ts):
    // the energy growing by orders of magnitude a step
    const sim = loadModel(
      springParticle({
        stiffness: 1e7,
        mass: 1,
        x0: 1e-3,
        dt: 0.005,
        solver: { energyDriftLimit: 1 },
      }),
    );
    let err: unknown;
    try {
      sim.step(100);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(DivergenceError);
    expect((err as Error).message).toMatch(/energyDriftLimit = 1 J/);
    const s = sim.state();
    expect(s.step).toBeLessThan(100);
    expect(Math.abs(s.energy.error)).toBeLessThanOrEqual(1);
  });
});

describe("snapshots", () => {
  function continueBoth(a: Simulation, b: Simulation, n: number) {
    for (let k = 0; k < n; k++) {
      a.step(1);
      b.step(1);
      expect(b.state()).toEqual(a.state());
    }
  }

  it("keep the energy reference and the reaction history: the replay is bit-identical", () => {
    const sim = loadModel(doublePendulum({ integrator: "backward-euler" }));
    sim.step(30);
    sim.update({ gravity: [0, 0, -5] }); // a reference other than the t = 0 one
    sim.step(30);
    const snap = JSON.parse(JSON.stringify(sim.snapshot()));
    expect(snap.memory.energyReference).toBeTypeOf("number");
    const copy = loadSnapshot(snap);
    const a = sim.state();
    expect(copy.state()).toEqual(a);
    expect(a.energy.error).not.toBe(0);
    expect(a.solver.reactionChange).toBeGreaterThan(0);
    continueBoth(sim, copy, 50);
  });

  it("an older snapshot without them loads, with the restored state's energy as reference", () => {
    const sim = loadModel(doublePendulum({ integrator: "backward-euler" }));
    sim.step(40);
    const snap = JSON.parse(JSON.stringify(sim.snapshot()));
    delete snap.checksum; // older snapshots had no whole-document checksum either
    delete snap.memory.energyReference;
    delete snap.memory.stats.reactionChange;
    const copy = loadSnapshot(snap);
    const s = copy.state();
    expect(s.energy.error).toBe(0);
    expect(s.solver.reactionChange).toBe(0);
    expect(s.bodies).toEqual(sim.state().bodies);
    sim.step(20);
    copy.step(20);
    const a = sim.state();
    const b = copy.state();
    expect(b.bodies).toEqual(a.bodies);
    expect(b.solver.reactionChange).toBe(a.solver.reactionChange); // history from the multipliers
    expect(b.energy.error).toBe(b.energy.total - s.energy.total);
  });
});
