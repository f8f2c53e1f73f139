/**
 * The Simulation (src/engine/simulation/simulation.ts) through its public methods, on the
 * spring particle of test/support/models.ts, whose symplectic-Euler motion is the
 * recurrence v ← v − h (k/m) x, x ← x + h v written out here: step and time, the State's
 * energies (½ m v², ½ k x²), stateHash (sha256 of the body arrays' bytes, recomputed
 * with node:crypto), reset, a PATCH of dt (the recurrence continues with the new h) and
 * the ParameterError of an energyDriftLimit on a damped spring (nothing changed), inputs
 * at a step boundary and InputError, DivergenceError leaving the last good state,
 * captureState/applyState, and the assembly analysis (a = −k x/m, state untouched; not
 * performed with active nonsmooth contacts).
 */
import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { Input } from "../../../schemas/input";
import {
  DivergenceError,
  InputError,
  loadModel,
  ParameterError,
  type Simulation,
} from "../../../src/engine/index";
import { type ExampleModel, readExample } from "../../support/examples";
import { divergingSpring, SPRING_PARTICLE, springParticle } from "../../support/models";

const { stiffness: K, mass: M, x0: X0 } = SPRING_PARTICLE;

/** x, v after the steps of the given sizes (kick: Δv added before step `kickAt`). */
function recurrence(steps: number[], kick = 0, kickAt = -1) {
  let x = X0;
  let v = 0;
  steps.forEach((h, i) => {
    if (i === kickAt) v += kick / M;
    v -= h * (K / M) * x;
    x += h * v;
  });
  return { x, v };
}
const repeat = (h: number, n: number) => new Array<number>(n).fill(h);

function hashOf(sim: Simulation): string {
  const h = createHash("sha256");
  for (const a of [sim.system.pos, sim.system.quat, sim.system.vel, sim.system.omega])
    h.update(new Uint8Array(a.buffer, a.byteOffset, a.byteLength));
  return h.digest("hex");
}

describe("step, state, stateHash, reset", () => {
  it("steps follow the recurrence; the State reports time, step, energies; the hash is of the body bytes", () => {
    const sim = loadModel(springParticle());
    const h = SPRING_PARTICLE.dt;
    sim.step(40);
    const { x, v } = recurrence(repeat(h, 40));
    const s = sim.state();
    expect([s.step, sim.stepCount]).toEqual([40, 40]);
    expect(s.time).toBeCloseTo(40 * h, 15);
    expect(s.bodies[0].position[0]).toBeCloseTo(x, 13);
    expect(s.bodies[0].velocity[0]).toBeCloseTo(v, 13);
    expect(s.energy.kinetic).toBeCloseTo(0.5 * M * v * v, 12);
    expect(s.energy.potential).toBeCloseTo(0.5 * K * x * x, 12);
    expect(s.energy.total).toBeCloseTo(s.energy.kinetic + s.energy.potential, 14);
    expect(sim.stateHash()).toBe(hashOf(sim));
  });

  it("reset goes back to the model at t = 0", () => {
    const sim = loadModel(springParticle());
    const start = sim.stateHash();
    sim.step(25);
    expect(sim.stateHash()).not.toBe(start);
    sim.reset();
    expect([sim.time, sim.stepCount, sim.stateHash()]).toEqual([0, 0, start]);
  });
});

describe("update", () => {
  it("a PATCH of dt: the next steps take the new step", () => {
    const sim = loadModel(springParticle());
    sim.step(10);
    sim.update({ solver: { dt: 4e-3 } });
    sim.step(10);
    const { x } = recurrence([...repeat(1e-3, 10), ...repeat(4e-3, 10)]);
    expect(sim.system.pos[0]).toBeCloseTo(x, 13);
    expect(sim.time).toBeCloseTo(0.05, 14);
  });

  it("a refused PATCH names the field and changes nothing (theta under symplectic-euler)", () => {
    const sim = loadModel(springParticle());
    const dt = sim.solver.dt;
    let caught: unknown;
    try {
      sim.update({ solver: { theta: 0.7, dt: 2e-3 } });
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(ParameterError);
    expect((caught as ParameterError).issues[0].path).toEqual(["solver", "theta"]);
    expect((caught as ParameterError).issues[0].message).toMatch(/moreau-jean/);
    expect(sim.solver.dt).toBe(dt);
  });
});

describe("inputs", () => {
  it("an impulse scheduled for step 15 changes v by J/m at that boundary; a bad id or a past step is refused", () => {
    const sim = loadModel(springParticle());
    const kick = Input.parse({ type: "impulse", id: "p", impulse: [0.3, 0, 0] });
    expect(sim.schedule([kick], 15)).toEqual({ step: 15, pending: 1 });
    sim.step(30);
    const { x, v } = recurrence(repeat(1e-3, 30), 0.3, 15);
    expect(sim.system.pos[0]).toBeCloseTo(x, 13);
    expect(sim.system.vel[0]).toBeCloseTo(v, 13);
    expect(() => sim.schedule([Input.parse({ type: "impulse", id: "ghost" })])).toThrow(InputError);
    expect(() => sim.schedule([kick], 3)).toThrow(InputError);
    expect(sim.pendingInputs()).toEqual([]);
  });

  it("recording(from) holds the recorded entries from that index on, the pending ones all", () => {
    const sim = loadModel(springParticle());
    const kick = (j: number) => Input.parse({ type: "impulse", id: "p", impulse: [j, 0, 0] });
    // applied at steps 0, 2, 4 (one a request), pending at 9
    for (const k of [0, 2, 4, 9]) sim.schedule([kick(k)], k);
    sim.step(6);
    const steps = (es: { step: number }[]) => es.map((e) => e.step);
    expect(steps(sim.recording().entries)).toEqual([0, 2, 4]);
    expect(steps(sim.recording(1).entries)).toEqual([2, 4]);
    expect(steps(sim.recording(3).entries)).toEqual([]);
    expect(steps(sim.recording(2).scheduled)).toEqual([9]);
    expect(sim.recording(2).entries[0]).toEqual({ step: 4, input: kick(4) });
  });
});

describe("DivergenceError", () => {
  it("is thrown when the motion blows up, with the state left at the last good step", () => {
    const sim = loadModel(divergingSpring());
    let caught: unknown;
    try {
      sim.step(2000);
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(DivergenceError);
    const e = caught as DivergenceError;
    expect(e.step).toBe(sim.stepCount);
    expect(e.time).toBe(sim.time);
    expect(sim.stepCount).toBeLessThan(2000);
    for (const a of [sim.system.pos, sim.system.vel]) expect(a.every(Number.isFinite)).toBe(true);
  });
});

describe("captureState and applyState", () => {
  it("a captured state applied later continues exactly as from the capture", () => {
    const sim = loadModel(springParticle());
    sim.step(10);
    const captured = sim.captureState();
    const at10 = sim.stateHash();
    sim.step(15);
    const at25 = sim.stateHash();
    sim.applyState(captured);
    expect([sim.stepCount, sim.stateHash()]).toEqual([10, at10]);
    sim.step(15);
    expect(sim.stateHash()).toBe(at25);
  });
});

describe("assemble", () => {
  it("without constraints: a = −k x/m, SUCCESS, the state untouched unless applied", () => {
    const sim = loadModel(springParticle());
    sim.step(5);
    const before = sim.stateHash();
    const x = sim.system.pos[0];
    const r = sim.assemble();
    expect(r.exitFlag).toBe("SUCCESS");
    expect(r.bodies[0].acceleration[0]).toBeCloseTo((-K * x) / M, 10);
    expect(sim.stateHash()).toBe(before);
  });

  const example = (name: string) =>
    readExample<ExampleModel & { contact: { method: string } }>(name);

  it("a resting stack (nsc): UNSUPPORTED_CONTACTS naming the active contacts, state untouched", () => {
    const model = example("box-stack");
    expect(model.contact.method).toBe("nsc");
    const sim = loadModel(model);
    sim.step(50);
    const active = sim.contactModel?.nonsmooth?.activeCount ?? 0;
    expect(active).toBeGreaterThan(0);
    const twin = loadModel(model);
    twin.step(50);
    const r = sim.assemble({}, true);
    expect(r.exitFlag).toBe("UNSUPPORTED_CONTACTS");
    expect(r.warnings[0]).toContain(`${active} active nonsmooth contacts`);
    expect(r.reactions).toEqual([]);
    // nothing was applied: the run continues exactly as one never asked
    sim.step(50);
    twin.step(50);
    expect(sim.stateHash()).toBe(twin.stateHash());
  });

  it("before the first step and after a reset the contacts touching are counted: not analysed as falling freely", () => {
    // the example's four cubes stand on the floor and on each other at gap 0: four corner
    // contacts at each of the four faces. The count was the last step's contact set, empty
    // then, and the analysis answered SUCCESS with every cube at a = −g
    const model = example("box-stack");
    const sim = loadModel(model);
    const r = sim.assemble();
    expect(r.exitFlag).toBe("UNSUPPORTED_CONTACTS");
    expect(r.warnings[0]).toMatch(/^16 active nonsmooth contacts/);
    sim.step(20);
    sim.reset();
    expect(sim.assemble().exitFlag).toBe("UNSUPPORTED_CONTACTS");
    // lifted 1 cm off the floor and apart: nothing touches, the analysis runs (free fall)
    const lifted = loadModel({
      ...model,
      bodies: model.bodies.map((b, i) =>
        b.fixed
          ? b
          : { ...b, position: [b.position![0], b.position![1], b.position![2] + 0.01 * (i + 1)] },
      ),
    });
    const free = lifted.assemble();
    expect(free.exitFlag).toBe("SUCCESS");
    for (const b of free.bodies)
      if (!model.bodies.find((m) => m.id === b.id)?.fixed)
        expect(b.acceleration[2]).toBeCloseTo(-Math.abs(model.gravity?.[2] ?? 9.81), 12);
  });
});
