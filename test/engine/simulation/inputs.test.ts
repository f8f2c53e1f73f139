/**
 * Run-time inputs, recordings and snapshots with inputs.
 *
 * Impulse (kick) against the closed form Δv = J/m, Δω = I_w⁻¹ (r × J + L) with r = R p;
 * teleport; scheduling at a future step boundary (the state of that step number is the
 * first to include the input); refusals with paths. A cart-pole driven by a PD actuator
 * whose target, a load and a kick change at run time, with a PATCH of dt in between:
 * replaying its recording reproduces the end state's hash bit for bit, and a snapshot
 * taken with inputs in effect and pending continues bit-identically.
 */
import { describe, expect, it } from "vitest";
import { chainModel } from "../../../bench/scenes";
import type { InputIn } from "../../../schemas/input";
import { Input } from "../../../schemas/input";
import type { ModelInput } from "../../../schemas/model";
import { MAX_PENDING_INPUTS } from "../../../schemas/snapshot";
import {
  InputError,
  loadModel,
  loadSnapshot,
  recordingOf,
  replayRecording,
  replayStates,
} from "../../../src/engine/index";
import { servoRod } from "../../support/models";
import { rotationMatrix } from "../../support/quat";

const inputs = (list: InputIn[]) => list.map((i) => Input.parse(i));

const cartPole: ModelInput = {
  bodies: [
    { id: "cart", mass: 1, inertia: [0.1, 0.1, 0.1], shapes: [] },
    {
      id: "pole",
      mass: 0.2,
      position: [0, 0, 0.5],
      orientation: [1, 0, 0, 0],
      inertia: [0.02, 0.02, 1e-4],
    },
  ],
  joints: [
    { id: "rail", type: "prismatic", a: { body: "ground" }, b: { body: "cart" }, axis: [1, 0, 0] },
    {
      id: "hinge",
      type: "revolute",
      a: { body: "cart" },
      b: { body: "pole", point: [0, 0, -0.5] },
      axis: [0, 1, 0],
    },
  ],
  actuators: [
    { id: "drive", joint: "rail", type: "position", target: 0, kp: 40, kd: 8, effortLimit: 30 },
  ],
  forces: [
    { id: "wind", type: "pointForce", at: { body: "pole", point: [0, 0, 0.5] }, force: [0, 0, 0] },
  ],
  sensors: [
    { id: "x", type: "jointPosition", joint: "rail" },
    { id: "theta", type: "jointPosition", joint: "hinge" },
    { id: "f", type: "actuatorEffort", actuator: "drive" },
  ],
  solver: { integrator: "generalized-alpha", dt: 2e-3 },
};

describe("inputs", () => {
  it("an impulse changes the velocities by J/m and I_w⁻¹(r × J + L), at once", () => {
    const q = [Math.cos(0.3), Math.sin(0.3) / Math.sqrt(2), 0, Math.sin(0.3) / Math.sqrt(2)];
    const sim = loadModel({
      gravity: [0, 0, 0],
      bodies: [
        {
          id: "b",
          mass: 2,
          inertia: [1, 2, 3],
          orientation: q as [number, number, number, number],
        },
      ],
    });
    const J = [0.5, -1, 2];
    const p = [0.1, 0.2, -0.3];
    const L = [0, 0.4, 0];
    const r = sim.schedule(
      inputs([
        {
          type: "impulse",
          id: "b",
          impulse: J as never,
          point: p as never,
          angularImpulse: L as never,
        },
      ]),
    );
    expect(r).toEqual({ step: 0, pending: 0 });
    const s = sim.state();
    expect(s.bodies[0].velocity).toEqual(J.map((x) => x / 2));
    // independent: R from q, I_w = R diag(1,2,3) Rᵀ, solve I_w Δω = r × J + L
    const R = rotationMatrix(q);
    const rw = R.map((row) => row[0] * p[0] + row[1] * p[1] + row[2] * p[2]);
    const m = [
      rw[1] * J[2] - rw[2] * J[1] + L[0],
      rw[2] * J[0] - rw[0] * J[2] + L[1],
      rw[0] * J[1] - rw[1] * J[0] + L[2],
    ];
    // Δω = R diag(1/I) Rᵀ m
    const mb = [0, 1, 2].map((i) => R[0][i] * m[0] + R[1][i] * m[1] + R[2][i] * m[2]);
    const wb = [mb[0] / 1, mb[1] / 2, mb[2] / 3];
    const dw = R.map((row) => row[0] * wb[0] + row[1] * wb[1] + row[2] * wb[2]);
    s.bodies[0].angularVelocity.forEach((v, i) => {
      expect(v).toBeCloseTo(dw[i], 14);
    });
  });

  it("inputs scheduled for a later step apply exactly at that boundary", () => {
    const sim = loadModel({ gravity: [0, 0, 0], bodies: [{ id: "p", kind: "particle", mass: 1 }] });
    sim.step(3);
    expect(sim.schedule(inputs([{ type: "bodyState", id: "p", velocity: [1, 0, 0] }]), 10)).toEqual(
      { step: 10, pending: 1 },
    );
    sim.step(6);
    expect(sim.state().bodies[0].velocity).toEqual([0, 0, 0]);
    expect(sim.pendingInputs()).toHaveLength(1);
    sim.step(1);
    // the state of step 10 is the first to include it; the particle has not moved yet
    expect(sim.state().step).toBe(10);
    expect(sim.state().bodies[0].velocity).toEqual([1, 0, 0]);
    expect(sim.state().bodies[0].position[0]).toBe(0);
    expect(sim.pendingInputs()).toHaveLength(0);
    sim.step(1);
    expect(sim.state().bodies[0].position[0]).toBeCloseTo(sim.solver.dt, 15);
  });

  it("inputs scheduled out of order apply by step, each step's in the order given; at most MAX_PENDING_INPUTS wait", () => {
    const sim = loadModel({ gravity: [0, 0, 0], bodies: [{ id: "p", kind: "particle", mass: 1 }] });
    const at = (vx: number) => inputs([{ type: "bodyState", id: "p", velocity: [vx, 0, 0] }])[0];
    sim.schedule([at(1), at(2)], 5);
    sim.scheduleTimed([
      { step: 7, input: at(7) },
      { step: 5, input: at(3) },
      { step: 2, input: at(4) },
      { step: 5, input: at(5) },
    ]);
    sim.schedule([at(6)], 2);
    const order = sim.pendingInputs().map((e) => [e.step, "input" in e ? e.input : null]);
    const v = (e: unknown) => (e as { velocity: number[] }).velocity[0];
    expect(order.map(([step, input]) => [step, v(input)])).toEqual([
      [2, 4],
      [2, 6],
      [5, 1],
      [5, 2],
      [5, 3],
      [5, 5],
      [7, 7],
    ]);
    // the last of step 5 wins: velocity 5 from step 5 on
    sim.step(6);
    expect(sim.state().bodies[0].velocity[0]).toBe(5);
    // the queue is bounded by what a snapshot keeps (a longer one was accepted, then its
    // checkpoint refused on restore and the session lost): the bound is refused naming it
    const many = Array.from({ length: 1000 }, () => at(0));
    for (let k = 0; sim.pendingInputs().length + 1000 <= MAX_PENDING_INPUTS; k++)
      sim.schedule(many, 1_000_000 + k);
    // step 7's and 99 000 more; 999 fill the queue, one more is refused
    expect(sim.pendingInputs()).toHaveLength(99_001);
    sim.schedule(many.slice(1), 2_000_000);
    const held = sim.pendingInputs().length;
    expect(held).toBe(MAX_PENDING_INPUTS);
    let refused: InputError | null = null;
    try {
      sim.schedule([at(0)], 2_000_000);
    } catch (err) {
      refused = err as InputError;
    }
    expect(refused?.issues[0].path).toEqual(["inputs"]);
    expect(refused?.issues[0].message).toMatch(/above the 100000 a session holds/);
    expect(sim.pendingInputs()).toHaveLength(held);
    // and a snapshot of the full queue restores
    expect(loadSnapshot(JSON.parse(JSON.stringify(sim.snapshot()))).pendingInputs()).toHaveLength(
      held,
    );
  });

  it("a teleport is in the state of the current step at once, the joints taking their share", () => {
    // the cart-pole at rest upright; the pole's rate written 1 rad/s about y. The joints
    // allow the cart's ẋ and the pole's φ̇ (its centre then at ẋ + r φ̇, r = 0.5 m): the
    // nearest in the mass metric minimizes ½ m_c ẋ² + ½ m_p (ẋ + r φ̇)² + ½ I (φ̇ − 1)²,
    //   (m_c + m_p) ẋ + m_p r φ̇ = 0,   m_p r ẋ + (m_p r² + I) φ̇ = I
    const [mc, mp, r, I] = [1, 0.2, 0.5, 0.02];
    const det = (mc + mp) * (mp * r * r + I) - (mp * r) ** 2;
    const rate = ((mc + mp) * I) / det;
    const cart = (-mp * r * I) / det;
    const sim = loadModel(cartPole);
    sim.step(5);
    sim.schedule(inputs([{ type: "bodyState", id: "pole", angularVelocity: [0, 1, 0] }]));
    const s = sim.state();
    expect(s.step).toBe(5);
    expect(s.bodies[1].angularVelocity[1]).toBeCloseTo(rate, 9);
    expect(s.bodies[0].velocity[0]).toBeCloseTo(cart, 9);
    expect(s.bodies[1].velocity[0]).toBeCloseTo(cart + r * rate, 9);
  });

  it("refuses unknown ids, fixed bodies, particles' rotations and past steps, naming the path; nothing is scheduled", () => {
    const sim = loadModel({
      gravity: [0, 0, 0],
      bodies: [
        { id: "p", kind: "particle", mass: 1 },
        { id: "wall", fixed: true },
      ],
    });
    sim.step(2);
    const issues = (f: () => unknown) => {
      try {
        f();
      } catch (e) {
        expect(e).toBeInstanceOf(InputError);
        return (e as InputError).issues;
      }
      throw new Error("no error");
    };
    expect(
      issues(() => sim.schedule(inputs([{ type: "actuator", id: "nope", value: 1 }]))),
    ).toEqual([
      {
        path: ["inputs", 0, "id"],
        message: 'unknown actuator "nope" (the model has no actuators)',
      },
    ]);
    expect(
      issues(() => sim.schedule(inputs([{ type: "impulse", id: "wall", impulse: [1, 0, 0] }]))),
    ).toEqual([{ path: ["inputs", 0, "id"], message: 'body "wall" is fixed: it cannot be moved' }]);
    expect(
      issues(() =>
        sim.schedule(inputs([{ type: "bodyState", id: "p", angularVelocity: [1, 0, 0] }])),
      ),
    ).toEqual([
      { path: ["inputs", 0, "angularVelocity"], message: 'particle "p" does not rotate' },
    ]);
    expect(issues(() => sim.schedule(inputs([{ type: "load", id: "x" }]), 1))[0].path).toEqual([
      "step",
    ]);
    expect(sim.pendingInputs()).toEqual([]);
  });

  it("an id of the wrong kind is named as what it is: a joint sent as an actuator, an actuator as a joint", () => {
    const sim = loadModel({
      ...cartPole,
      joints: cartPole.joints?.map((j) =>
        j.id === "hinge" ? { ...j, limits: { lower: -1, upper: 1 } } : j,
      ),
    });
    const refused = (input: InputIn) => {
      try {
        sim.schedule(inputs([input]));
      } catch (e) {
        expect(e).toBeInstanceOf(InputError);
        return (e as InputError).issues.map((i) => i.message);
      }
      throw new Error("taken");
    };
    // (before: 'unknown actuator "rail"', 'unknown joint "drive"', with no list)
    expect(refused({ type: "actuator", id: "rail", value: 1 })).toEqual([
      'unknown actuator "rail": it is a joint, driven by "drive"',
    ]);
    expect(refused({ type: "actuator", id: "hinge", value: 1 })).toEqual([
      'unknown actuator "hinge": it is a joint, which no actuator drives',
    ]);
    expect(refused({ type: "actuator", id: "push", value: 1 })).toEqual([
      `unknown actuator "push" (the model's actuators: "drive")`,
    ]);
    expect(refused({ type: "limits", id: "drive", lower: 0, upper: 1 })).toEqual([
      `unknown joint "drive": it is an actuator, on the joint "rail" (the model's joints with limits: "hinge")`,
    ]);
  });

  it("refuses a state or a kick beyond the blow-up bounds (1e8 m, m/s, rad/s), naming the component; the state is untouched", () => {
    // a velocity of 1e300 overflowed the kinetic energy (the State's energies null) and the
    // run then ended diverged with that state as its "last good" one
    const sim = loadModel({
      gravity: [0, 0, 0],
      bodies: [{ id: "b", mass: 2, inertia: [0.1, 0.2, 0.3] }],
    });
    sim.step(1);
    const before = JSON.stringify(sim.state().bodies);
    const paths = (given: InputIn[]) => {
      try {
        sim.schedule(inputs(given));
      } catch (e) {
        expect(e).toBeInstanceOf(InputError);
        return (e as InputError).issues.map((i) => i.path);
      }
      throw new Error("no error");
    };
    expect(paths([{ type: "bodyState", id: "b", velocity: [0, 1e300, 0] }])).toEqual([
      ["inputs", 0, "velocity", 1],
    ]);
    expect(
      paths([
        { type: "bodyState", id: "b", position: [2e8, 0, -3e8], angularVelocity: [0, 0, 1e9] },
      ]),
    ).toEqual([
      ["inputs", 0, "position", 0],
      ["inputs", 0, "position", 2],
      ["inputs", 0, "angularVelocity", 2],
    ]);
    // Δv = J/m = 1.5e8 m/s; Δω = I⁻¹ L = 1e9/0.1 rad/s
    expect(paths([{ type: "impulse", id: "b", impulse: [3e8, 0, 0] }])).toEqual([
      ["inputs", 0, "impulse", 0],
    ]);
    expect(
      paths([{ type: "impulse", id: "b", impulse: [0, 0, 0], angularImpulse: [1e9, 0, 0] }]),
    ).toEqual([["inputs", 0, "angularImpulse"]]);
    // at the bound's scale but within it: taken
    sim.schedule(inputs([{ type: "impulse", id: "b", impulse: [1e8, 0, 0] }]));
    expect(sim.state().bodies[0].velocity[0]).toBe(5e7);
    expect(JSON.parse(before)[0].velocity[0]).toBe(0);
  });
});

function drive(sim: ReturnType<typeof loadModel>) {
  sim.step(100);
  sim.schedule(inputs([{ type: "actuator", id: "drive", value: 0.3 }]));
  sim.schedule(inputs([{ type: "load", id: "wind", force: [0.5, 0, 0] }]), 180);
  sim.step(150);
  sim.update({ solver: { dt: 1e-3 } });
  sim.schedule(
    inputs([{ type: "impulse", id: "pole", impulse: [0.05, 0, 0], point: [0, 0, 0.5] }]),
  );
  sim.schedule(
    inputs([
      { type: "actuator", id: "drive", value: -0.2 },
      { type: "load", id: "wind", reset: true },
    ]),
    400,
  );
  sim.step(100);
}

describe("recordings and snapshots with inputs", () => {
  it("replaying a recording reproduces the run bit for bit (hash at the end), with states on request", () => {
    const sim = loadModel(cartPole);
    drive(sim);
    sim.step(300);
    const rec = recordingOf(sim);
    expect(rec.start).toBeNull();
    expect(rec.inputs.map((e) => e.step)).toEqual([100, 180, 250, 250, 400, 400]);
    const replay = replayRecording(JSON.parse(JSON.stringify(rec)));
    replay.step(rec.end.step);
    expect(replay.stateHash()).toBe(rec.end.hash);
    expect(replay.state().observation).toEqual(sim.state().observation);
    const { states, matches } = replayStates(rec, 100);
    expect(matches).toBe(true);
    expect(states.map((s) => s.step)).toEqual([100, 200, 300, 400, 500, 600, 650]);
    // the last command is in effect; the observation is [x, θ, effort] of the final state
    const end = sim.state();
    expect(end.actuators[0].command).toBe(-0.2);
    expect(end.observation).toEqual([
      end.joints[0].coordinates[0],
      end.joints[1].coordinates[0],
      end.actuators[0].effort,
    ]);
  });

  it("an empty list scheduled now changes nothing: the run and its recording's replay are an untouched twin's", () => {
    // articulated carries its last stage's accelerations (at the quaternions before their
    // normalization) to the next step; an input drops them (the forces changed), and an
    // empty list once did too, which no recording replays
    const chain: ModelInput = {
      ...chainModel({ links: 10 }),
      solver: { integrator: "articulated", dt: 1 / 240 },
    };
    const sim = loadModel(chain);
    const twin = loadModel(chain);
    sim.step(50);
    twin.step(50);
    sim.schedule([]);
    sim.step(50);
    twin.step(50);
    expect(sim.stateHash()).toBe(twin.stateHash());
    const rec = recordingOf(sim);
    const replay = replayRecording(JSON.parse(JSON.stringify(rec)));
    replay.step(rec.end.step);
    expect(replay.stateHash()).toBe(rec.end.hash);
  });

  it("a snapshot with commands in effect and inputs pending continues bit-identically", () => {
    const a = loadModel(cartPole);
    a.step(100);
    a.schedule(inputs([{ type: "actuator", id: "drive", value: 0.3 }]));
    a.schedule(inputs([{ type: "load", id: "wind", force: [0.5, 0, 0] }]), 150);
    a.schedule(inputs([{ type: "actuator", id: "drive", value: -0.1 }]), 300);
    a.step(150);
    const snap = JSON.parse(JSON.stringify(a.snapshot()));
    expect(snap.controls.pending).toHaveLength(1);
    const b = loadSnapshot(snap);
    a.step(400);
    b.step(400);
    expect(b.stateHash()).toBe(a.stateHash());
    expect(b.state().actuators).toEqual(a.state().actuators);
  });

  it("reset forgets commands, pending inputs and the recording", () => {
    const sim = loadModel(cartPole);
    sim.schedule(inputs([{ type: "actuator", id: "drive", value: 0.3 }]));
    sim.schedule(inputs([{ type: "actuator", id: "drive", value: 0.1 }]), 50);
    sim.step(10);
    sim.reset();
    expect(sim.pendingInputs()).toEqual([]);
    expect(sim.recording().entries).toEqual([]);
    expect(sim.state().actuators[0].command).toBe(0);
  });

  it("reset reads as the model's start: no effort of the last step, the State and observation a new session's", () => {
    // the cart pushed by its servo onto a rail limit: the servo's effort and the limit's
    // nonzero when reset, kp (0.5 − 0.1) = 16 N (before: the State at t = 0 after the reset
    // still read the servo's 15.99 N of the step before, and the bound's, and the effort
    // sensor the same)
    const model: ModelInput = {
      ...cartPole,
      joints: [
        {
          id: "rail",
          type: "prismatic",
          a: { body: "ground" },
          b: { body: "cart" },
          axis: [1, 0, 0],
          limits: { lower: -1, upper: 0.1 },
        },
        (cartPole.joints ?? [])[1],
      ],
    };
    const sim = loadModel(model);
    sim.schedule(inputs([{ type: "actuator", id: "drive", value: 0.5 }]));
    sim.step(2000);
    const pushed = sim.state();
    expect(pushed.actuators[0].effort).toBeGreaterThan(1);
    expect(pushed.joints[0].limitEffort).toBeLessThan(-1);
    sim.reset();
    const fresh = loadModel(model).state();
    const reset = sim.state();
    expect(reset.actuators).toEqual(fresh.actuators);
    expect(reset.joints).toEqual(fresh.joints);
    expect(reset.observation).toEqual(fresh.observation);
    expect(sim.stateHash()).toBe(loadModel(model).stateHash());
  });
});

describe("a torque actuator's effort bound on a hinge: the body's moment about the joint's axis", () => {
  // The bound (inputs.ts commandBounds): refused when one step h of τ changes a body by more
  // than 1e8 rad/s (or its centre by 1e8 m/s), the body turning about the hinge with its
  // other end held: I_J = I_axis + m d², Δω = h τ / I_J, Δv = Δω d (d: centre to axis).
  // Before, Δω = h τ / I_min with I_min the free body's smallest principal moment.
  const h = 1e-3;
  /** A body of mass m, principal inertias `inertia`, its centre d along x from a ground hinge about `axis`. */
  function hinged(m: number, inertia: [number, number, number], d: number, axis: number[]) {
    return loadModel({
      gravity: [0, 0, 0],
      bodies: [{ id: "bob", mass: m, position: [d, 0, 0], inertia }],
      joints: [
        {
          id: "pin",
          type: "revolute",
          a: { body: "ground" },
          b: { body: "bob", point: [-d, 0, 0] },
          axis,
        },
      ],
      actuators: [{ id: "motor", joint: "pin", type: "torque", effort: 0 }],
      solver: { integrator: "moreau-jean", dt: h },
    } as ModelInput);
  }
  const refusal = (sim: ReturnType<typeof loadModel>, value: number) => {
    try {
      sim.schedule(inputs([{ type: "actuator", id: "motor", value }]));
      return null;
    } catch (e) {
      expect(e).toBeInstanceOf(InputError);
      return (e as InputError).issues;
    }
  };

  it("a point mass on a 0.5 m arm (I = 1e-12 kg·m²): 1 N·m taken and turning it at ω = τ t / (m d²); refused beyond m d² · 1e8 / h", () => {
    const m = 2;
    const d = 0.5;
    const IJ = 1e-12 + m * d * d;
    const sim = hinged(m, [1e-12, 1e-12, 1e-12], d, [0, 0, 1]);
    // (the free body's 1e-12 kg·m² refused anything above 1e-12 · 1e8 / h = 1e-1 N·m)
    expect(refusal(sim, 1)).toBeNull();
    sim.step(100);
    // (moreau-jean: 7e-8 rad/s off at this 2e12 ratio of mass to moment, its projections' conditioning)
    expect(sim.state().joints[0].rates[0]).toBeCloseTo((1 * 0.1) / IJ, 6);
    // the bound: h τ / I_J = 1e8 rad/s (the centre's Δv = d Δω is below it)
    const bound = (1e8 * IJ) / h;
    expect(refusal(sim, 0.9999 * bound)).toBeNull();
    sim.schedule(inputs([{ type: "actuator", id: "motor", value: 0 }]));
    expect(refusal(sim, 1.0001 * bound)).toEqual([
      { path: ["inputs", 0, "value"], message: expect.stringMatching(/rad\/s/) },
    ]);
    // (an isotropic body has no principal moments stored: the old rule read NaN and took
    // any effort on it, 1e300 N·m too)
    expect(refusal(sim, 1e300)).not.toBeNull();
  });

  it("a slim rod (I_x = 1e-9) hinged at its end across it: its m L²/3 about the pivot, not I_x", () => {
    const m = 1;
    const L = 1;
    const sim = hinged(m, [1e-9, (m * L * L) / 12, (m * L * L) / 12], L / 2, [0, 1, 0]);
    const IJ = (m * L * L) / 3;
    expect(refusal(sim, 0.9999 * ((1e8 * IJ) / h))).toBeNull();
    sim.schedule(inputs([{ type: "actuator", id: "motor", value: 0 }]));
    expect(refusal(sim, 1.0001 * ((1e8 * IJ) / h))).not.toBeNull();
    // about its own long axis its 1e-9 kg·m² is all there is: refused above 1e8 · 1e-9 / h
    const spun = hinged(m, [1e-9, 1 / 12, 1 / 12], 0, [1, 0, 0]);
    expect(refusal(spun, 0.9999 * ((1e8 * 1e-9) / h))).toBeNull();
    spun.schedule(inputs([{ type: "actuator", id: "motor", value: 0 }]));
    expect(refusal(spun, 1.0001 * ((1e8 * 1e-9) / h))).not.toBeNull();
  });

  it("a point mass on a 10 m arm: its centre's speed d Δω = h τ / (m d) is what passes 1e8 m/s first", () => {
    const m = 1;
    const d = 10;
    const sim = hinged(m, [1e-12, 1e-12, 1e-12], d, [0, 0, 1]);
    const bound = (1e8 * m * d) / h; // Δω there is 1e7 rad/s
    expect(refusal(sim, 0.9999 * bound)).toBeNull();
    sim.schedule(inputs([{ type: "actuator", id: "motor", value: 0 }]));
    expect(refusal(sim, 1.0001 * bound)).toEqual([
      { path: ["inputs", 0, "value"], message: expect.stringMatching(/m\/s \(its centre\)/) },
    ]);
  });

  it("a model whose effort is beyond the bound is refused at its creation, one within it taken", () => {
    const model = (effort: number) =>
      ({
        gravity: [0, 0, 0],
        bodies: [{ id: "bob", mass: 2, position: [0.5, 0, 0], inertia: [1e-12, 1e-12, 1e-12] }],
        joints: [
          {
            id: "pin",
            type: "revolute",
            a: { body: "ground" },
            b: { body: "bob", point: [-0.5, 0, 0] },
            axis: [0, 0, 1],
          },
        ],
        actuators: [{ id: "motor", joint: "pin", type: "torque", effort }],
        solver: { dt: h },
      }) as ModelInput;
    // (the server refuses a model with these issues: 400, path ["model", "actuators", 0, "effort"])
    expect(loadModel(model(10)).commandIssues()).toEqual([]);
    expect(loadModel(model((1.0001 * (1e8 * 0.5)) / h)).commandIssues()).toEqual([
      { path: ["actuators", 0, "effort"], message: expect.stringMatching(/rad\/s/) },
    ]);
  });
});

describe("a servo's command: refused where the motion it drives is a blow-up", () => {
  // The bound (inputs.ts commandBounds): a position servo's target is refused when the rate
  // its law drives the joint to passes 1e8 rad/s, and so does the rate of a step h that
  // carries the joint there at once, |q* − q|/h (an implicit step's reading of a servo too
  // stiff for it). The law's peak from rest, I q̈ = k_p (q* − q) − k_d q̇ (ζ < 1):
  //   q̇_max = |e| ω_n exp(−ζ acos ζ/√(1 − ζ²)),  ω_n = √(k_p/I),  ζ = k_d/(2 √(k_p I)).
  // Before, the target alone was checked against 1e8 rad: 9e7 rad on the 20 N·m/rad servo
  // was taken and its first step ended the run diverged.
  const m = 2;
  const L = 0.6;
  const I = (m * L * L) / 3;
  const kp = 20;
  const kd = 0.8;
  const wn = Math.sqrt(kp / I);
  const zeta = kd / (2 * Math.sqrt(kp * I));
  const perRadian = wn * Math.exp((-zeta * Math.acos(zeta)) / Math.sqrt(1 - zeta * zeta));
  const rod = (servo: Record<string, unknown>, dt: number) =>
    loadModel(servoRod(m, L, servo, { integrator: "generalized-alpha", dt }));
  const refusal = (sim: ReturnType<typeof loadModel>, value: number) => {
    try {
      sim.schedule(inputs([{ type: "actuator", id: "servo", value }]));
      return null;
    } catch (e) {
      expect(e).toBeInstanceOf(InputError);
      return (e as InputError).issues;
    }
  };

  it("the law's peak rate, measured on a 1 rad step at 0.1 ms, is the closed form's; 9e7 rad and 1.001 · 1e8/peak refused, 0.999 · taken", () => {
    const sim = rod({ type: "position", target: 0, kp, kd }, 1e-4);
    sim.schedule(inputs([{ type: "actuator", id: "servo", value: 1 }]));
    let peak = 0;
    for (let n = 0; n < 3000; n++) {
      sim.step(1);
      peak = Math.max(peak, sim.state().joints[0].rates[0]);
    }
    expect(peak / perRadian - 1).toBeLessThan(1e-4);
    expect(peak / perRadian - 1).toBeGreaterThan(-1e-4);
    const bound = 1e8 / perRadian; // 1.42e7 rad
    const at = rod({ type: "position", target: 0, kp, kd }, 1 / 60);
    expect(refusal(at, 0.999 * bound)).toBeNull();
    at.schedule(inputs([{ type: "actuator", id: "servo", value: 0 }]));
    for (const value of [1.001 * bound, -1.001 * bound, 9e7])
      expect(refusal(at, value)).toEqual([
        {
          path: ["inputs", 0, "value"],
          message: expect.stringMatching(/body "rod" at up to .* rad\/s .* beyond 1e\+8/),
        },
      ]);
  });

  it("a model whose target is such a swing is refused at its creation (path to its target), one within it taken", () => {
    const made = (target: number) =>
      loadModel(servoRod(m, L, { type: "position", target, kp, kd }, { dt: 1 / 60 }));
    expect(made(0.999e8 / perRadian).commandIssues()).toEqual([]);
    expect(made(1.001e8 / perRadian).commandIssues()).toEqual([
      { path: ["actuators", 0, "target"], message: expect.stringMatching(/rad\/s/) },
    ]);
  });

  it("with an effort limit the same 9e7 rad is taken: the rod spins up at τ_max/I (energy bound 8.7e4 rad/s)", () => {
    const sim = rod({ type: "position", target: 0, kp, kd, effortLimit: 10 }, 1 / 60);
    expect(refusal(sim, 9e7)).toBeNull();
    sim.step(600);
    const s = sim.state();
    expect(s.actuators[0].effort).toBe(10);
    expect(s.joints[0].rates[0]).toBeCloseTo((10 * 10) / I, 6);
  });

  it("a stiff servo (k_p = 1e20, undamped peak 2e10 rad/s a radian) takes a 1 rad target and holds it; 2e6 rad (one step's reach 1.2e8 rad/s) refused", () => {
    const sim = rod({ type: "position", target: 0, kp: 1e20, kd: 0 }, 1 / 60);
    expect(refusal(sim, 1)).toBeNull();
    sim.step(60);
    expect(sim.state().joints[0].coordinates[0]).toBeCloseTo(1, 9);
    expect(refusal(sim, 1 + 1.001e8 / 60)).not.toBeNull();
    expect(refusal(sim, 1 + 0.999e8 / 60)).toBeNull();
  });

  it("a velocity servo's target rate on a point mass 10 m from its hinge: refused where its centre's speed passes 1e8 m/s", () => {
    const sim = loadModel({
      gravity: [0, 0, 0],
      bodies: [{ id: "bob", mass: 1, position: [10, 0, 0], inertia: [1e-12, 1e-12, 1e-12] }],
      joints: [
        {
          id: "pin",
          type: "revolute",
          a: { body: "ground" },
          b: { body: "bob", point: [-10, 0, 0] },
          axis: [0, 0, 1],
        },
      ],
      actuators: [{ id: "servo", joint: "pin", type: "velocity", kv: 1 }],
      solver: { dt: 1e-3 },
    } as ModelInput);
    expect(refusal(sim, 0.999e7)).toBeNull();
    sim.schedule(inputs([{ type: "actuator", id: "servo", value: 0 }]));
    expect(refusal(sim, 1.001e7)).toEqual([
      { path: ["inputs", 0, "value"], message: expect.stringMatching(/m\/s \(its centre\)/) },
    ]);
  });
});
