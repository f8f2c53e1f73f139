/**
 * The state record and its snapshot form (src/engine/simulation/state.ts), on a two-link
 * chain under generalized-α (joint multipliers and integrator memory present): the record
 * (clone deep, copyFrom, restart), encodeState (body arrays and multipliers as the base64
 * of their little-endian bytes, decoded here with Buffer; the hash, sha256 of the body
 * bytes, recomputed with node:crypto; memory arrays only while valid), decodeState as its
 * inverse (−0 kept), and its refusals at their paths: a hash that does not match, a wrong
 * length, a non-finite value, a block index beyond the matrix.
 */
import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import type { SimulationSnapshotSpec } from "../../../schemas/snapshot";
import { loadModel, loadSnapshot } from "../../../src/engine/index";
import { BodyState } from "../../../src/engine/model/body-system";
import { SnapshotError } from "../../../src/engine/model/state-codec";
import {
  type CapturedState,
  decodeState,
  encodeState,
  SimulationState,
  type StateSizes,
  stateHash,
} from "../../../src/engine/simulation/state";
import { hangingChain, slidingBoxNsc } from "../../support/models";

function chain() {
  const sim = loadModel({
    ...hangingChain({
      joints: [{ type: "spherical" }, { type: "revolute", axis: [0, 1, 0] }],
      mass: 1,
      inertia: [0.02, 0.02, 0.01],
      angularVelocity: (i) => [0.5, -0.2 * i, 0.1],
    }),
    solver: { integrator: "generalized-alpha", dt: 2e-3 },
  });
  sim.step(5);
  const captured = sim.captureState();
  const sizes: StateSizes = {
    numBodies: sim.system.numBodies,
    numDofs: sim.system.numDofs,
    numRows: captured.record.lambda.length,
    numBlocks: sim.system.blockSizes.length,
  };
  return { sim, captured, sizes };
}

const bytesOf = (s: string) => {
  const b = Buffer.from(s, "base64");
  return Array.from(new Float64Array(b.buffer, b.byteOffset, b.byteLength / 8));
};

const sha256 = (arrays: Float64Array[]) => {
  const h = createHash("sha256");
  for (const a of arrays) h.update(new Uint8Array(a.buffer, a.byteOffset, a.byteLength));
  return h.digest("hex");
};

/** A snapshot document of `sim` carrying the encoded capture c. */
const documentOf = (
  sim: ReturnType<typeof chain>["sim"],
  c: CapturedState,
): SimulationSnapshotSpec => ({
  ...sim.snapshot(),
  ...encodeState(c),
});

function decodeIssues(snap: SimulationSnapshotSpec, sizes: StateSizes) {
  try {
    decodeState(snap, sizes);
  } catch (err) {
    expect(err).toBeInstanceOf(SnapshotError);
    return (err as SnapshotError).issues;
  }
  throw new Error("accepted");
}

describe("SimulationState", () => {
  it("ofSizes, a deep clone, copyFrom and restart", () => {
    const s = SimulationState.ofSizes({ numBodies: 2, numDofs: 9, numRows: 4, numBlocks: 2 });
    expect([
      s.bodies.pos.length,
      s.bodies.quat.length,
      s.lambda.length,
      s.integrator.acceleration.length,
    ]).toEqual([6, 8, 4, 9]);
    expect([s.time, s.step, Number.isNaN(s.energyReference)]).toEqual([0, 0, true]);
    s.time = 1.5;
    s.step = 7;
    s.lambda.fill(3);
    s.bodies.pos[0] = 2;
    s.integrator.accelerationValid = true;
    s.reactionChange = 0.25;
    const copy = s.clone();
    copy.bodies.pos[0] = 9;
    copy.lambda[0] = 9;
    expect([s.bodies.pos[0], s.lambda[0]]).toEqual([2, 3]);
    expect([copy.time, copy.step, copy.integrator.accelerationValid, copy.reactionChange]).toEqual([
      1.5,
      7,
      true,
      0.25,
    ]);
    const other = new SimulationState(new BodyState(2), 9, 4);
    other.copyFrom(copy);
    expect([other.bodies.pos[0], other.lambda[0], other.time]).toEqual([9, 9, 1.5]);
    other.restart();
    expect([
      other.time,
      other.step,
      other.integrator.accelerationValid,
      other.reactionChange,
    ]).toEqual([0, 0, false, 0]);
    expect(Array.from(other.lambda)).toEqual([0, 0, 0, 0]);
    expect(other.bodies.pos[0]).toBe(9); // the bodies stay as they are
  });
});

describe("encodeState", () => {
  it("the arrays as their bytes, the hash of the body bytes, memory only while valid", () => {
    const { captured } = chain();
    const r = captured.record;
    const enc = encodeState(captured);
    expect([enc.time, enc.step]).toEqual([r.time, 5]);
    expect(bytesOf(enc.state.position)).toEqual(Array.from(r.bodies.pos));
    expect(bytesOf(enc.state.orientation)).toEqual(Array.from(r.bodies.quat));
    expect(bytesOf(enc.state.angularVelocity)).toEqual(Array.from(r.bodies.omega));
    expect(bytesOf(enc.memory.lambda)).toEqual(Array.from(r.lambda));
    expect(r.lambda.some((x) => x !== 0)).toBe(true);
    const hash = sha256([r.bodies.pos, r.bodies.quat, r.bodies.vel, r.bodies.omega]);
    expect([enc.hash, stateHash(r)]).toEqual([hash, hash]);
    expect(enc.memory.integrator.accelerationValid).toBe(r.integrator.accelerationValid);
    expect(enc.memory.integrator.acceleration !== undefined).toBe(r.integrator.accelerationValid);
    r.integrator.invalidate();
    const none = encodeState(captured).memory.integrator;
    expect([none.acceleration, none.previousAcceleration, none.pseudoAcceleration]).toEqual([
      undefined,
      undefined,
      undefined,
    ]);
  });
});

describe("decodeState", () => {
  it("inverts encodeState, −0 included", () => {
    const { sim, captured, sizes } = chain();
    captured.record.bodies.vel[0] = -0;
    const back = decodeState(documentOf(sim, captured), sizes);
    const [a, b] = [back.record, captured.record];
    expect(Object.is(a.bodies.vel[0], -0)).toBe(true);
    for (const k of ["pos", "quat", "vel", "omega"] as const)
      expect(a.bodies[k]).toEqual(b.bodies[k]);
    expect(a.lambda).toEqual(b.lambda);
    expect([a.time, a.step, a.integrator.accelerationValid]).toEqual([
      b.time,
      b.step,
      b.integrator.accelerationValid,
    ]);
    if (b.integrator.accelerationValid)
      expect(a.integrator.acceleration).toEqual(b.integrator.acceleration);
    expect(back.matrixBlocks).toEqual(captured.matrixBlocks);
  });

  it("refuses a hash that does not match, a wrong length, a non-finite value, a block beyond the matrix", () => {
    const { sim, captured, sizes } = chain();
    const doc = documentOf(sim, captured);
    expect(decodeIssues({ ...doc, hash: "0".repeat(64) }, sizes)[0].path).toEqual(["hash"]);
    expect(
      decodeIssues(
        { ...doc, memory: { ...doc.memory, lambda: doc.memory.lambda.slice(0, 12) } },
        sizes,
      )[0].path,
    ).toEqual(["memory", "lambda"]);
    const nan = chain();
    nan.captured.record.bodies.pos[1] = Number.NaN; // the hash is of these bytes: only the finiteness check stops it
    expect(decodeIssues(documentOf(nan.sim, nan.captured), sizes)[0].path).toEqual([
      "state",
      "position",
    ]);
    const blocks = {
      ...doc,
      memory: { ...doc.memory, matrixBlocks: [[0, sizes.numBlocks]] as [number, number][] },
    };
    expect(decodeIssues(blocks, sizes)[0].path).toEqual(["memory", "matrixBlocks", 0]);
  });
});

describe("the contact memory on the wire (encodeState / decodeState)", () => {
  // The contact module hands its warm start over as typed arrays; the state's codec writes
  // them as float64 bytes and reads them back checked against their counts and the model.
  function contactSnapshot() {
    const sim = loadModel(slidingBoxNsc);
    sim.step(40);
    const snap = JSON.parse(JSON.stringify(sim.snapshot()));
    expect(snap.memory.contact.count).toBeGreaterThan(0);
    // as an older snapshot without the whole-document checksum, to reach the checks
    delete snap.checksum;
    return { sim, snap };
  }

  it("round trip: the restored simulation exports the same memory", () => {
    const { sim, snap } = contactSnapshot();
    const restored = loadSnapshot(snap);
    expect(restored.snapshot().memory.contact).toEqual(sim.snapshot().memory.contact);
  });

  it("arrays that disagree with the count, or bodies the model lacks, are refused at their path", () => {
    const refused = (edit: (c: Record<string, unknown>) => void) => {
      const { snap } = contactSnapshot();
      edit(snap.memory.contact);
      try {
        loadSnapshot(snap);
      } catch (err) {
        expect(err).toBeInstanceOf(SnapshotError);
        return (err as SnapshotError).issues[0].path;
      }
      throw new Error("accepted");
    };
    expect(refused((c) => (c.impulse = "AAAAAAAAAAA="))).toEqual(["memory", "contact", "impulse"]);
    expect(refused((c) => (c.bodyA = [...(c.bodyA as number[]), 0]))).toEqual([
      "memory",
      "contact",
      "bodyA",
    ]);
    expect(
      refused((c) => (c.bodyB = (c.bodyB as number[]).map((_, i) => (i === 0 ? 99 : 0)))),
    ).toEqual(["memory", "contact", "bodyB", 0]);
  });
});
