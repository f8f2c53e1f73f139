/**
 * Frame encoding: the `dropped` patch on encoded JSON and msgpack frames (checked by
 * decoding), msgpack integer encodings, the count of missed frames between two steps
 * (checked against counting the multiples one by one), and the contactPeak member and its
 * window (maximum and h-weighted sum of the steps' forces, checked against a brute force),
 * and the scene frame joined from its session fields and its worker-encoded scene (checked
 * by decoding).
 */
import fc from "fast-check";
import { unpack } from "msgpackr";
import { describe, expect, it } from "vitest";
import type { StateOut } from "../../schemas/state";
import {
  ContactWindow,
  encodeScene,
  encodeStateFrame,
  missedBetween,
  msgpackUint,
  sceneFrameBytes,
  withDropped,
  withKeptStep,
} from "../../src/server/frames";

const state: StateOut = {
  time: 0.125,
  step: 25,
  bodies: [
    {
      id: "b",
      position: [0.1, -2.5e-17, 3],
      orientation: [1, 0, 0, 0],
      velocity: [0, 0, -1.2262500000000001],
      angularVelocity: [0, 0, 0],
    },
  ],
  contacts: [],
  joints: [
    {
      id: "j",
      force: [1, 2, 3],
      torque: [0, 0, 0],
      coordinates: [0.5],
      rates: [-1],
      limitEffort: 0,
    },
  ],
  actuators: [{ id: "m", effort: 0.25, command: 1 }],
  observation: [0.5, -1],
  energy: { kinetic: 0.75, potential: 29.43, total: 30.18, dissipated: 0.5, error: -1e-3 },
  solver: {
    newtonIterations: 1,
    newtonConverged: true,
    linearIterations: 0,
    contactIterations: 0,
    contactResidual: 0,
    contactConverged: true,
    penetration: 0,
    projectionConverged: true,
    substeps: 1,
    stepError: 0,
    stepToleranceMet: true,
    jointToleranceMet: true,
    impacts: 0,
    impactsResolved: true,
    reactionChange: 0,
  },
};

const NONE_KEPT = { keptStep: null };
const decodeJson = (b: Uint8Array) => JSON.parse(new TextDecoder().decode(b));

describe("state frames", () => {
  it("hold time, step, the chosen fields, keptStep and dropped = 0 as the last member", () => {
    const f = decodeJson(encodeStateFrame(state, ["bodies", "energy"], "json", { keptStep: 20 }));
    expect(f).toEqual({
      type: "state",
      time: 0.125,
      step: 25,
      bodies: state.bodies,
      energy: state.energy,
      keptStep: 20,
      dropped: 0,
    });
    expect(Object.keys(f).at(-1)).toBe("dropped");
    expect(unpack(encodeStateFrame(state, ["joints"], "msgpack", { keptStep: null }))).toEqual({
      type: "state",
      time: 0.125,
      step: 25,
      joints: state.joints,
      keptStep: null,
      dropped: 0,
    });
  });

  it("withKeptStep adds keptStep as the State answer's last member", () => {
    const json = new TextEncoder().encode(JSON.stringify(state));
    expect(decodeJson(withKeptStep(json, 20))).toEqual({ ...state, keptStep: 20 });
    expect(decodeJson(withKeptStep(json, null))).toEqual({ ...state, keptStep: null });
  });

  it("hold contactPeak when subscribed: the given figures, else a window of no step", () => {
    const peak = { steps: 5, maxNormalForce: 3788.5, normalImpulse: 7.75 };
    const f = decodeJson(
      encodeStateFrame(state, ["contacts", "contactPeak"], "json", { keptStep: null, peak }),
    );
    expect(f).toEqual({
      type: "state",
      time: 0.125,
      step: 25,
      contacts: [],
      contactPeak: peak,
      keptStep: null,
      dropped: 0,
    });
    expect(Object.keys(f).at(-1)).toBe("dropped");
    expect(
      unpack(encodeStateFrame(state, ["contactPeak"], "msgpack", NONE_KEPT)).contactPeak,
    ).toEqual({
      steps: 0,
      maxNormalForce: 0,
      normalImpulse: 0,
    });
    expect(
      decodeJson(encodeStateFrame(state, ["bodies"], "json", { keptStep: null, peak })),
    ).not.toHaveProperty("contactPeak");
  });

  it("keep every double exactly in both formats", () => {
    const j = decodeJson(encodeStateFrame(state, ["bodies"], "json", NONE_KEPT));
    const m = unpack(encodeStateFrame(state, ["bodies"], "msgpack", NONE_KEPT));
    expect(j.bodies[0].position[1]).toBe(-2.5e-17);
    expect(m.bodies[0].velocity[2]).toBe(-1.2262500000000001);
  });

  const counts = [1, 9, 10, 99, 127, 128, 255, 256, 65535, 65536, 2 ** 32 - 1, 2 ** 32 + 5, 1e15];
  it.each(counts)("withDropped(%d) rewrites only `dropped` (JSON and msgpack)", (n) => {
    for (const format of ["json", "msgpack"] as const) {
      const frame = encodeStateFrame(state, ["bodies", "contacts", "energy"], format, NONE_KEPT);
      const copy = frame.slice();
      const patched = withDropped(frame, format, n);
      const decoded = format === "json" ? decodeJson(patched) : unpack(patched);
      const original = format === "json" ? decodeJson(frame) : unpack(frame);
      expect(decoded).toEqual({ ...original, dropped: n });
      expect(Array.from(frame)).toEqual(Array.from(copy)); // the shared original is untouched
    }
  });

  it("withDropped(0) is the frame itself", () => {
    const frame = encodeStateFrame(state, ["bodies"], "json", NONE_KEPT);
    expect(withDropped(frame, "json", 0)).toBe(frame);
  });

  it("msgpackUint uses the shortest standard encodings", () => {
    expect([...msgpackUint(0)]).toEqual([0]);
    expect([...msgpackUint(127)]).toEqual([127]);
    expect([...msgpackUint(128)]).toEqual([0xcc, 128]);
    expect([...msgpackUint(256)]).toEqual([0xcd, 1, 0]);
    expect([...msgpackUint(65536)]).toEqual([0xce, 0, 1, 0, 0]);
    expect(msgpackUint(2 ** 40).length).toBe(9);
    for (const n of [0, 5, 200, 40_000, 3e9, 2 ** 40]) expect(unpack(msgpackUint(n))).toBe(n);
  });
});

describe("missedBetween", () => {
  it("counts the multiples of `every` strictly between the last and the current step", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 2000 }),
        fc.integer({ min: 0, max: 2000 }),
        fc.integer({ min: 1, max: 50 }),
        (last, now, every) => {
          let brute = 0;
          for (let s = last + 1; s < now; s++) if (s % every === 0) brute++;
          expect(missedBetween(last, now, every)).toBe(brute);
        },
      ),
    );
  });

  it("is 0 for a first frame and when the step goes back (reset)", () => {
    expect(missedBetween(null, 100, 1)).toBe(0);
    expect(missedBetween(500, 0, 1)).toBe(0);
    expect(missedBetween(10, 10, 1)).toBe(0);
  });
});

describe("ContactWindow", () => {
  it("holds the largest force and the impulse of the steps added since it was cleared", () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.tuple(
            fc.double({ min: 0, max: 1e4, noNaN: true }),
            fc.double({ min: 1e-5, max: 0.1 }),
          ),
          { maxLength: 40 },
        ),
        (steps) => {
          const w = new ContactWindow("contactPeak|json", 3);
          w.add(123, 0.5);
          w.clear();
          for (const [force, h] of steps) w.add(force, h);
          let impulse = 0;
          for (const [force, h] of steps) impulse += force * h;
          expect(w.figures()).toEqual({
            steps: steps.length,
            maxNormalForce: Math.max(0, ...steps.map(([force]) => force)),
            normalImpulse: impulse,
          });
        },
      ),
    );
  });
});

describe("sceneFrameBytes", () => {
  // a scene with what its encoding must keep: floats of every magnitude and sign, nested
  // arrays, strings with quotes, backslashes and non-ASCII characters
  const scene = {
    bodies: Array.from({ length: 200 }, (_, i) => ({
      id: `b"${i}\\é`,
      fixed: i % 7 === 0,
      shapes: [{ type: "sphere", radius: 0.01 * (i + 1), offset: [i * 1e-9, -(i + 1) * 1e9, 0.1] }],
    })),
    joints: [{ id: "j", type: "revolute", bodyA: 'b"0\\é', bodyB: null }],
    fem: [
      {
        id: "net",
        nodes: [
          [0, 0, 0],
          [1.5, -2.25, 1e-300],
        ],
        triangles: [[0, 1, 0]],
      },
    ],
  };
  const part = { bodies: scene.bodies, joints: scene.joints, fem: scene.fem };
  const head = { type: "scene", session: "s-1", name: 'ünï "q"', time: 0.125, step: 25 };

  it("is the encoding of {...head, bodies, joints, fem}, keys in that order, in JSON and msgpack", () => {
    const encoded = encodeScene(scene as never);
    const json = JSON.parse(new TextDecoder().decode(sceneFrameBytes(head, encoded, "json")));
    const msgpack = unpack(sceneFrameBytes(head, encoded, "msgpack"));
    for (const frame of [json, msgpack]) {
      expect(frame).toEqual({ ...head, ...part });
      expect(Object.keys(frame)).toEqual([...Object.keys(head), "bodies", "joints", "fem"]);
    }
    // a head without the clock (the cluster directory's copy)
    const bare = { type: "scene", session: "s-1", name: "n" };
    expect(JSON.parse(new TextDecoder().decode(sceneFrameBytes(bare, encoded, "json")))).toEqual({
      ...bare,
      ...part,
    });
  });

  it("joins msgpack maps whatever their headers: fixmap, map16, map32", () => {
    const encoded = encodeScene(scene as never);
    // the same three entries under each header form (msgpackr itself writes map16)
    const entries = encoded.msgpack.subarray(3);
    expect(encoded.msgpack[0]).toBe(0xde);
    const forms = [
      Uint8Array.of(0x83, ...entries),
      Uint8Array.of(0xde, 0, 3, ...entries),
      Uint8Array.of(0xdf, 0, 0, 0, 3, ...entries),
    ];
    for (const msgpack of forms)
      expect(unpack(sceneFrameBytes(head, { json: encoded.json, msgpack }, "msgpack"))).toEqual({
        ...head,
        ...part,
      });
    expect(() =>
      sceneFrameBytes(head, { json: encoded.json, msgpack: Uint8Array.of(0x93) }, "msgpack"),
    ).toThrow(/not a msgpack map/);
  });
});
