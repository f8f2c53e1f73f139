/**
 * Solver damping in the θ-schemes (theta-scheme.ts, moreau-jean.ts): the Rayleigh force
 * −(r_M M + r_K K) v at the end-of-step velocity and the velocity decay v ← v·exp(−h·rate),
 * as Newmark applies them (they were ignored before). Each run is checked against its
 * scheme's recurrence written out here, on a particle of mass m on a zero-length spring k
 * (K = k I, so r_K acts as a damper c = r_K k and r_M as c = r_M m), and a sphere sliding on
 * a frictionless plane under Moreau–Jean with contact. generalized-alpha refuses
 * velocityDamping (schemas/model.ts velocityDampingIssue).
 */
import { describe, expect, it } from "vitest";
import { loadModel, ModelError, ParameterError } from "../../../src/engine/index";
import { ballOnFloor } from "../../support/models";

const M = 2;
const K = 50;
const X0 = 0.3;
const H = 0.01;

function oscillator(solver: Record<string, unknown>) {
  return {
    gravity: [0, 0, 0],
    bodies: [{ id: "p", kind: "particle", mass: M, position: [X0, 0, 0] }],
    forces: [
      {
        id: "s",
        type: "spring",
        a: { body: "p" },
        b: { body: "ground" },
        stiffness: K,
        restLength: 0,
      },
    ],
    solver: { dt: H, ...solver },
  };
}

/** x after each step of `step(x, v) → [x, v]`, from (X0, 0). */
function trajectory(steps: number, step: (x: number, v: number) => [number, number]): number[] {
  let x = X0;
  let v = 0;
  const out: number[] = [];
  for (let n = 0; n < steps; n++) {
    [x, v] = step(x, v);
    out.push(x);
  }
  return out;
}

/** The simulation's x after each step against the recurrence's, to `digits`. */
function expectTrajectory(solver: Record<string, unknown>, expected: number[], digits = 12) {
  const sim = loadModel(oscillator(solver));
  for (const x of expected) {
    sim.step(1);
    expect(sim.system.pos[0]).toBeCloseTo(x, digits);
  }
  // the damping acted: the amplitude fell well below the start
  expect(Math.abs(expected[expected.length - 1])).toBeLessThan(0.5 * X0);
}

describe("solver damping in the θ-schemes", () => {
  it("backward Euler with rayleighMass: m a = −k x_{n+1} − r_M m v_{n+1}", () => {
    const c = 0.4 * M;
    const expected = trajectory(400, (x, v) => {
      const a = -(K * (x + H * v) + c * v) / (M + H * c + H * H * K);
      const v1 = v + H * a;
      return [x + H * v1, v1];
    });
    expectTrajectory({ integrator: "backward-euler", rayleighMass: 0.4 }, expected);
  });

  it("symplectic Euler with rayleighMass: the spring explicit, the damping at v_{n+1}", () => {
    const c = 0.4 * M;
    const expected = trajectory(400, (x, v) => {
      const a = -(K * x + c * v) / (M + H * c);
      const v1 = v + H * a;
      return [x + H * v1, v1];
    });
    expectTrajectory({ integrator: "symplectic-euler", rayleighMass: 0.4 }, expected);
  });

  it("Moreau–Jean θ = ½ with rayleighStiffness: the spring weighted ½–½, r_K k v_{n+1}", () => {
    const c = 0.01 * K;
    const expected = trajectory(400, (x, v) => {
      // m a = −½ k x_n − ½ k x_{n+1} − c v_{n+1}, x_{n+1} = x_n + h v_n + ½ h² a
      const a = -(K * x + 0.5 * K * H * v + c * v) / (M + 0.25 * K * H * H + c * H);
      return [x + H * v + 0.5 * H * H * a, v + H * a];
    });
    expectTrajectory(
      { integrator: "moreau-jean", theta: 0.5, rayleighStiffness: 0.01, newtonTolerance: 1e-14 },
      expected,
    );
  });

  it("backward Euler with velocityDamping: the step, then v ← v e^(−h rate)", () => {
    const decay = Math.exp(-H * 0.5);
    const expected = trajectory(400, (x, v) => {
      const a = -(K * (x + H * v)) / (M + H * H * K);
      const v1 = v + H * a;
      return [x + H * v1, v1 * decay];
    });
    expectTrajectory({ integrator: "backward-euler", velocityDamping: 0.5 }, expected);
  });

  it("Moreau–Jean with contact: a sphere sliding on a frictionless plane slows as v/(1 + h r_M)ⁿ", () => {
    const r = 0.8;
    const sim = loadModel(
      ballOnFloor({ friction: 0, restitution: 0 }, { z: 0.1, vx: 2 }, { dt: H, rayleighMass: r }),
    );
    let v = 2;
    for (let n = 0; n < 300; n++) {
      sim.step(1);
      v /= 1 + H * r;
      const s = sim.state();
      expect(s.bodies[0].velocity[0]).toBeCloseTo(v, 12);
      expect(s.contacts.length).toBeGreaterThan(0);
    }
    // on the plane all along: the damping took the horizontal speed, not the contact
    expect(Math.abs(sim.system.pos[2] - 0.1)).toBeLessThan(1e-6);
    expect(v).toBeLessThan(0.2);
  });

  it("generalized-alpha refuses velocityDamping, at load and on PATCH, naming the field", () => {
    let err: unknown;
    try {
      loadModel(oscillator({ integrator: "generalized-alpha", velocityDamping: 0.5 }));
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ModelError);
    expect((err as ModelError).issues[0].path).toEqual(["solver", "velocityDamping"]);
    expect((err as ModelError).issues[0].message).toMatch(/not applied by generalized-alpha/);

    const sim = loadModel(oscillator({ integrator: "backward-euler", velocityDamping: 0.5 }));
    expect(() => sim.update({ solver: { integrator: "generalized-alpha" } })).toThrow(
      ParameterError,
    );
    expect(sim.solver.integrator).toBe("backward-euler");
    sim.update({ solver: { integrator: "generalized-alpha", velocityDamping: 0 } });
    expect(sim.solver.integrator).toBe("generalized-alpha");
  });
});
