/**
 * The `jointState` input: a joint's coordinate and rate set at a step boundary, its child
 * side moved rigidly. A 3-link chain of 0.5 m links hanging from the origin along −z
 * (joint k at the top of link k, axes y): the poses after setting q are the forward
 * kinematics written out here, link i turned about y by θ_i = q₀ + … + q_i,
 *   joint₀ = 0, joint_{k+1} = joint_k + R_y(θ_k)(0, 0, −0.5), centre_k = joint_k + R_y(θ_k)(0, 0, −0.25),
 *   R_y(θ)(0, 0, −l) = (−l sin θ, 0, −l cos θ);
 * the velocities ω_i = (q̇₀ + … + q̇_i) ŷ, v = Σ_k≤i ω_k × (x − joint_k) summed link by link.
 * The sensors read the set values to 1e-12 under every integrator; the other joints'
 * coordinates and rates are unchanged; a recording replays and a snapshot continues bit
 * for bit. Refusals name the field and the joint.
 */
import { describe, expect, it } from "vitest";
import type { InputIn } from "../../../schemas/input";
import { Input } from "../../../schemas/input";
import type { ModelInput } from "../../../schemas/model";
import {
  InputError,
  loadModel,
  loadSnapshot,
  recordingOf,
  replayRecording,
} from "../../../src/engine/index";
import { hangingChain } from "../../support/models";

const inputs = (list: InputIn[]) => list.map((i) => Input.parse(i));
const y = { type: "revolute" as const, axis: [0, 1, 0] as [number, number, number] };
type IntegratorName = NonNullable<NonNullable<ModelInput["solver"]>["integrator"]>;
const chain = (
  integrator: IntegratorName,
  gravity: [number, number, number] = [0, 0, 0],
): ModelInput => ({
  ...hangingChain({ joints: [y, y, y], mass: (i) => [1, 2, 0.5][i], inertia: [0.03, 0.02, 0.01] }),
  gravity,
  solver: { integrator, dt: 1e-3 },
  sensors: ["j0", "j1", "j2"].flatMap((j) => [
    { id: `${j}.q`, type: "jointPosition" as const, joint: j },
    { id: `${j}.w`, type: "jointVelocity" as const, joint: j },
  ]),
});
const INTEGRATORS: IntegratorName[] = [
  "generalized-alpha",
  "newmark",
  "moreau-jean",
  "backward-euler",
  "symplectic-euler",
  "articulated",
];

/** [joints, centres] of the chain at the coordinates q (forward kinematics). */
function forward(q: number[]): [number[][], number[][]] {
  const joints = [[0, 0, 0]];
  const centres: number[][] = [];
  let theta = 0;
  for (let i = 0; i < 3; i++) {
    theta += q[i];
    const j = joints[i];
    const along = (l: number) => [j[0] - l * Math.sin(theta), 0, j[2] - l * Math.cos(theta)];
    centres.push(along(0.25));
    joints.push(along(0.5));
  }
  return [joints, centres];
}

function close(got: readonly number[], want: readonly number[], tol: number): void {
  for (const [k, x] of got.entries()) expect(Math.abs(x - want[k])).toBeLessThan(tol);
}

describe("jointState input", () => {
  it.each(INTEGRATORS)(
    "poses by forward kinematics, the sensors reading the set values (%s)",
    (integrator) => {
      const sim = loadModel(chain(integrator));
      const q = [0.3, 0.7, -0.4];
      sim.schedule(
        inputs([
          { type: "jointState", id: "j0", position: q[0] },
          { type: "jointState", id: "j1", position: q[1] },
          { type: "jointState", id: "j2", position: q[2] },
        ]),
      );
      const s = sim.state();
      const [, centres] = forward(q);
      let theta = 0;
      for (let i = 0; i < 3; i++) {
        theta += q[i];
        close(s.bodies[i].position, centres[i], 1e-12);
        // about y by θ: [cos θ/2, 0, sin θ/2, 0] (up to sign)
        const o = s.bodies[i].orientation;
        const sign = Math.sign(o[0]);
        close(
          o.map((x) => sign * x),
          [Math.cos(theta / 2), 0, Math.sin(theta / 2), 0],
          1e-12,
        );
      }
      close(s.observation, [q[0], 0, q[1], 0, q[2], 0], 1e-12);
    },
  );

  it.each(INTEGRATORS)(
    "mid-run, q₁ = 4 rad (past π) and q̇₁ = −1.5: the others unchanged, velocities by the joints' rates (%s)",
    (integrator) => {
      const sim = loadModel(chain(integrator, [0, 0, -9.81]));
      sim.schedule(inputs([{ type: "jointState", id: "j0", position: 0.6, velocity: 0.5 }]));
      sim.step(150);
      const before = sim.state().observation;
      sim.schedule(inputs([{ type: "jointState", id: "j1", position: 4, velocity: -1.5 }]));
      const s = sim.state();
      const o = s.observation;
      close(o, [before[0], before[1], 4, -1.5, before[4], before[5]], 1e-12);
      // the velocities from the coordinates and rates: ω_i = Σ q̇ ŷ, v by the joints
      const q = [o[0], o[2], o[4]];
      const w = [o[1], o[3], o[5]];
      const [joints, centres] = forward(q);
      let rate = 0;
      const vJoint = [0, 0, 0];
      for (let i = 0; i < 3; i++) {
        rate += w[i];
        // ω ŷ × r = (ω r_z, 0, −ω r_x)
        const at = (x: number[]) => [
          vJoint[0] + rate * (x[2] - joints[i][2]),
          0,
          vJoint[2] - rate * (x[0] - joints[i][0]),
        ];
        // (the poses off the forward kinematics by the joints' drift, backward-euler's 4e-8 m)
        close(s.bodies[i].angularVelocity, [0, rate, 0], 1e-9);
        close(s.bodies[i].velocity, at(centres[i]), 1e-7);
        const next = at(joints[i + 1]);
        vJoint[0] = next[0];
        vJoint[2] = next[2];
      }
      // and it runs on from there: the unwrapped angle follows (no 2π jump)
      sim.step(10);
      expect(Math.abs(sim.state().observation[2] - 4)).toBeLessThan(0.1);
    },
  );

  it("a bound is respected: past it the joint is set on it, the others untouched", () => {
    // (as a teleport's projection would, but in joint space: ontoBounds' least move in the
    // kinetic metric read j1 0.984 with j0 and j2 turned 0.16 and 0.80 rad)
    for (const integrator of ["generalized-alpha", "moreau-jean"] as const) {
      const model = chain(integrator);
      (model.joints as { limits?: unknown }[])[1].limits = { lower: -1, upper: 1 };
      const sim = loadModel(model);
      sim.schedule(inputs([{ type: "jointState", id: "j1", position: 1.5 }]));
      close(sim.state().observation, [0, 0, 1, 0, 0, 0], 1e-12);
      // the bounds in effect (moved by an input at the same boundary)
      sim.schedule(
        inputs([
          { type: "limits", id: "j1", lower: -2, upper: -1.2 },
          { type: "jointState", id: "j1", position: 0 },
        ]),
      );
      close(sim.state().observation, [0, 0, -1.2, 0, 0, 0], 1e-12);
    }
  });

  it("a recording replays it and a snapshot continues bit for bit", () => {
    const a = loadModel(chain("generalized-alpha", [0, 0, -9.81]));
    a.step(50);
    a.schedule(inputs([{ type: "jointState", id: "j1", position: 1, velocity: 2 }]));
    a.schedule(inputs([{ type: "jointState", id: "j2", velocity: -3 }]), 120);
    a.step(100);
    const snap = JSON.parse(JSON.stringify(a.snapshot()));
    const b = loadSnapshot(snap);
    a.step(200);
    b.step(200);
    expect(b.stateHash()).toBe(a.stateHash());
    const rec = recordingOf(a);
    expect(rec.inputs.map((e) => e.step)).toEqual([50, 120]);
    const replay = replayRecording(JSON.parse(JSON.stringify(rec)));
    replay.step(rec.end.step);
    expect(replay.stateHash()).toBe(rec.end.hash);
  });

  it("refuses a closed loop, a motor's joint, a joint without a coordinate, an empty or unknown one and a blow-up, naming the field and the id", () => {
    const base = chain("generalized-alpha");
    const refusal = (model: ModelInput, list: InputIn[]) => {
      try {
        loadModel(model).schedule(inputs(list));
        return null;
      } catch (e) {
        expect(e).toBeInstanceOf(InputError);
        return (e as InputError).issues;
      }
    };
    // the last link's end also pinned to the ground: every joint is in the loop
    const looped: ModelInput = {
      ...base,
      joints: [
        ...(base.joints ?? []),
        {
          id: "tie",
          type: "spherical",
          a: { body: "ground", point: [0, 0, -1.5] },
          b: { body: "l2", point: [0, 0, -0.25] },
        },
      ],
    };
    expect(refusal(looped, [{ type: "jointState", id: "j1", position: 0.1 }])).toEqual([
      {
        path: ["inputs", 0, "id"],
        message:
          'joint "j1" is in a closed loop: its two ends are joined without it, so its coordinate cannot be set alone',
      },
    ]);
    expect(refusal(looped, [{ type: "jointState", id: "tie", position: 0.1 }])?.[0].message).toBe(
      'joint "tie" is a spherical joint: it has no coordinate (only a revolute or prismatic joint\'s is set)',
    );
    // a loop within j1's child side (l1 and l2 also tied by a rod): it moves rigidly, closed
    // as it was; j2 is in it
    const braced = loadModel({
      ...base,
      joints: [
        ...(base.joints ?? []),
        {
          id: "brace",
          type: "distance",
          a: { body: "l1", point: [0.1, 0, 0] },
          b: { body: "l2", point: [0.1, 0, 0] },
        },
      ],
    });
    braced.schedule(inputs([{ type: "jointState", id: "j1", position: 0.8, velocity: 1 }]));
    close(braced.state().observation, [0, 0, 0.8, 1, 0, 0], 1e-12);
    expect(
      refusal(braced.model, [{ type: "jointState", id: "j2", position: 0.1 }])?.[0].message,
    ).toBe(
      'joint "j2" is in a closed loop: its two ends are joined without it, so its coordinate cannot be set alone',
    );
    const driven: ModelInput = { ...base, motors: [{ id: "m", joint: "j2", angle: 0 }] };
    expect(refusal(driven, [{ type: "jointState", id: "j2", velocity: 1 }])?.[0]).toEqual({
      path: ["inputs", 0, "id"],
      message: 'joint "j2" is driven by a motor, which prescribes its coordinate',
    });
    // the motor's joint is in j1's child side: it turns along, allowed
    expect(refusal(driven, [{ type: "jointState", id: "j1", position: 0.2 }])).toBeNull();
    expect(refusal(base, [{ type: "jointState", id: "j1" }])).toEqual([
      {
        path: ["inputs", 0],
        message: 'a jointState input for joint "j1" sets neither position nor velocity',
      },
    ]);
    expect(refusal(base, [{ type: "jointState", id: "l1", position: 0 }])?.[0]).toEqual({
      path: ["inputs", 0, "id"],
      message: 'unknown joint "l1" (the model\'s joints with a coordinate: "j0", "j1", "j2")',
    });
    expect(refusal(base, [{ type: "jointState", id: "j0", velocity: 2e8 }])?.[0]).toEqual({
      path: ["inputs", 0, "velocity"],
      message: "a rate (m/s or rad/s) beyond 1e+8, where a run is a blow-up",
    });
  });

  it.each(INTEGRATORS.filter((i) => i !== "articulated"))(
    "a mimic moves with its partner: f2 = −2 f1 + 0.01 both ways, on the tighter bound, at rest (%s)",
    (integrator) => {
      // two sliders on the ground along x (no gravity), s2 mimicking s1: q₂ = −2 q₁ + 0.01;
      // s1 within [−0.02, 0.04], s2 within [−0.05, 0.03] (q₁ ≥ −0.01 from it)
      const slider = (id: string, body: string, y: number) => ({
        id,
        type: "prismatic" as const,
        a: { body: "ground", point: [0, y, 0] as [number, number, number] },
        b: { body },
        axis: [1, 0, 0] as [number, number, number],
      });
      const model: ModelInput = {
        gravity: [0, 0, 0],
        bodies: [
          { id: "f1", mass: 0.05, position: [0, 0.1, 0], inertia: [1e-5, 1e-5, 1e-5] },
          { id: "f2", mass: 0.08, position: [0.01, -0.1, 0], inertia: [1e-5, 1e-5, 1e-5] },
        ],
        joints: [
          { ...slider("s1", "f1", 0.1), limits: { lower: -0.02, upper: 0.04 } },
          {
            ...slider("s2", "f2", -0.1),
            mimic: { joint: "s1", multiplier: -2, offset: 0.01 },
            limits: { lower: -0.05, upper: 0.03 },
          },
        ],
        sensors: ["s1", "s2"].flatMap((j) => [
          { id: `${j}.q`, type: "jointPosition" as const, joint: j },
          { id: `${j}.v`, type: "jointVelocity" as const, joint: j },
        ]),
        solver: { integrator, dt: 1e-3 },
      };
      const sim = loadModel(model);
      // (until 2026-12-06 both refused: 'joint "s1" is coupled to another: joint "s2" follows it (mimic)')
      sim.schedule(inputs([{ type: "jointState", id: "s1", position: 0.015, velocity: 0.1 }]));
      close(sim.state().observation, [0.015, 0.1, -0.02, -0.2], 1e-12);
      // the follower set: the followed joint at (q − o)/m, q̇/m
      sim.schedule(inputs([{ type: "jointState", id: "s2", position: -0.03, velocity: 0 }]));
      close(sim.state().observation, [0.02, 0, -0.03, 0], 1e-12);
      const x = (b: string) => sim.state().bodies.find((o) => o.id === b)?.position[0];
      expect(x("f1")).toBeCloseTo(0.02, 12);
      // f2's slide from its model position 0.01 is its coordinate
      expect((x("f2") as number) - 0.01).toBeCloseTo(-0.03, 12);
      // 0.06 asked of s2 is past its 0.03: q₁ = (0.03 − 0.01)/−2 = −0.01, within s1's bounds
      sim.schedule(inputs([{ type: "jointState", id: "s2", position: 0.06 }]));
      close(sim.state().observation, [-0.01, 0, 0.03, 0], 1e-12);
      // 0.05 asked of s1 is past its 0.04 and s2's −0.05 (q₁ ≤ 0.03): the tighter, 0.03
      sim.schedule(inputs([{ type: "jointState", id: "s1", position: 0.05 }]));
      close(sim.state().observation, [0.03, 0, -0.05, 0], 1e-12);
      // at rest on the relation: a second stays there (no limit pushes, no mimic error)
      sim.schedule(inputs([{ type: "jointState", id: "s1", position: 0.01 }]));
      sim.step(1000);
      close(sim.state().observation, [0.01, 0, -0.01, 0], 1e-9);
    },
  );

  it("refuses a mimic whose group it cannot set: a follower of multiplier 0, a chain of mimics", () => {
    const slider = (id: string, y: number, mimic?: { joint: string; multiplier: number }) => ({
      id,
      type: "prismatic" as const,
      a: { body: "ground", point: [0, y, 0] as [number, number, number] },
      b: { body: `b${id}` },
      axis: [1, 0, 0] as [number, number, number],
      ...(mimic ? { mimic } : {}),
    });
    const model = (joints: ReturnType<typeof slider>[]): ModelInput => ({
      gravity: [0, 0, 0],
      bodies: joints.map((j) => ({
        id: `b${j.id}`,
        mass: 1,
        inertia: [1, 1, 1] as [number, number, number],
        position: [0, j.a.point[1], 0] as [number, number, number],
      })),
      joints,
      solver: { integrator: "generalized-alpha", dt: 1e-3 },
    });
    const issue = (m: ModelInput, id: string) => {
      try {
        loadModel(m).schedule(inputs([{ type: "jointState", id, position: 0.01 }]));
        return null;
      } catch (e) {
        return (e as InputError).issues[0].message;
      }
    };
    const zero = model([slider("s1", 0), slider("s2", 1, { joint: "s1", multiplier: 0 })]);
    expect(issue(zero, "s2")).toBe(
      'joint "s2" follows joint "s1" with multiplier 0 (mimic): its coordinate is its offset, 0',
    );
    expect(issue(zero, "s1")).toBeNull();
    const chained = model([
      slider("s1", 0),
      slider("s2", 1, { joint: "s1", multiplier: 1 }),
      slider("s3", 2, { joint: "s2", multiplier: 1 }),
    ]);
    for (const id of ["s1", "s2", "s3"])
      expect(issue(chained, id)).toMatch(
        /is in a chain of mimics \(joint "s2" both follows and is followed\)/,
      );
  });

  it.each(["generalized-alpha", "newmark", "articulated"] as IntegratorName[])(
    "the other joints stay where the dynamics left them, one resting into its compliant bound too, when a joint is set or bounds move (%s)",
    (integrator) => {
      // j2 bounded to [0.2, 1] rad: started past, moved onto 0.2, gravity (along x: the links
      // swing about y) presses it into the compliant law, δ = τ/k past, the state it rests in
      const model = chain(integrator, [-9.81, 0, 0]);
      const joints = model.joints?.map((j) =>
        j.id === "j2"
          ? { ...j, limits: { lower: 0.2, upper: 1 } }
          : j.id === "j1"
            ? { ...j, limits: { lower: -1, upper: 1 } }
            : j,
      );
      const sim = loadModel({ ...model, joints });
      sim.step(300);
      const before = sim.state().observation;
      expect(before[4]).toBeLessThan(0.2 - 1e-6);
      sim.schedule(inputs([{ type: "jointState", id: "j0", position: 0.3 }]));
      // j0 reads 0.3, the others' coordinates and rates as before (until 2026-12-06 the
      // teleport's projection moved j2 onto its bound, the chain with it: j0 off 0.3)
      const set = sim.state().observation;
      close(set, [0.3, before[1], ...before.slice(2)], 1e-12);
      // j1's bounds moved with its coordinate set past the new upper one in the same batch:
      // j1 on it, j2 still where it rested (until 2026-12-06 moved bounds projected every
      // joint: j2 too, 9.3e-5 rad)
      sim.schedule(
        inputs([
          { type: "limits", id: "j1", lower: -0.5, upper: 0.4 },
          { type: "jointState", id: "j1", position: 0.8 },
        ]),
      );
      close(sim.state().observation, [...set.slice(0, 2), 0.4, ...set.slice(3)], 1e-12);
    },
  );

  it("a floating mechanism: the side of the joint's end b moves, the other stays", () => {
    const model: ModelInput = {
      gravity: [0, 0, 0],
      bodies: [
        { id: "base", mass: 5, inertia: [1, 1, 1] },
        { id: "arm", mass: 1, position: [0.5, 0, 0], inertia: [0.01, 0.1, 0.1] },
      ],
      joints: [
        {
          id: "hinge",
          type: "revolute",
          a: { body: "base" },
          b: { body: "arm", point: [-0.5, 0, 0] },
          axis: [0, 0, 1],
        },
      ],
      solver: { integrator: "generalized-alpha", dt: 1e-3 },
    };
    const sim = loadModel(model);
    sim.schedule(inputs([{ type: "jointState", id: "hinge", position: Math.PI / 2 }]));
    const s = sim.state();
    close(s.bodies[0].position, [0, 0, 0], 1e-15);
    close(s.bodies[1].position, [0, 0.5, 0], 1e-12);
  });
});
