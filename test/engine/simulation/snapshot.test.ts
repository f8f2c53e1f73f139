/**
 * The snapshot document's pieces (src/engine/simulation/snapshot.ts): canonical JSON
 * (keys sorted at every depth, arrays kept in order) against strings written out; the
 * checksum, sha256 of that JSON without the checksum field, recomputed here with
 * node:crypto; parseSnapshot refusing a changed document at ["checksum"], accepting one
 * without a checksum, and naming schema paths; the reserved off-diagonal blocks of a
 * solve matrix; finite-or-null. The continuation of snapshots is in
 * test/reliability/snapshot.test.ts.
 */
import { createHash } from "node:crypto";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { loadModel, loadSnapshot } from "../../../src/engine/index";
import { SparseBlockMatrix } from "../../../src/engine/math/block-matrix";
import { SnapshotError } from "../../../src/engine/model/state-codec";
import {
  canonicalJson,
  finiteOrNull,
  parseSnapshot,
  reservedOffDiagonalBlocks,
  verifyChecksum,
  withChecksum,
} from "../../../src/engine/simulation/snapshot";
import { springParticle } from "../../support/models";

function snapshotIssues(json: unknown, read: (json: unknown) => unknown = parseSnapshot) {
  try {
    read(json);
  } catch (err) {
    expect(err).toBeInstanceOf(SnapshotError);
    return (err as SnapshotError).issues;
  }
  throw new Error("accepted");
}

describe("canonicalJson and finiteOrNull", () => {
  it("sorts object keys at every depth, keeps arrays in order", () => {
    expect(canonicalJson({ b: 1, a: { d: [3, { z: 0, y: 1 }], c: null } })).toBe(
      '{"a":{"c":null,"d":[3,{"y":1,"z":0}]},"b":1}',
    );
    expect(canonicalJson([2, 1])).toBe("[2,1]");
    expect(canonicalJson("x")).toBe('"x"');
  });

  it("is the text of JSON.stringify with a replacer that sorts each object (every checksum written before verifies)", () => {
    // the definition canonicalJson had, and the checksums of stored snapshots were made with
    const replacer = (x: unknown) =>
      JSON.stringify(x, (_k, v) =>
        v !== null && typeof v === "object" && !Array.isArray(v)
          ? Object.fromEntries(
              Object.entries(v as Record<string, unknown>).sort(([a], [b]) =>
                a < b ? -1 : a > b ? 1 : 0,
              ),
            )
          : v,
      );
    // keys an object orders apart (array indices first, numerically), odd numbers, holes,
    // undefined, toJSON, an own __proto__ as JSON.parse makes it
    const holes: unknown[] = [1];
    holes[3] = 2;
    const odd = {
      h: holes,
      b: [1, undefined, -0, Number.NaN, -Infinity, 1e21, 5e-324],
      "10": 1,
      "2": { z: new Date(0), "01": 1, "4294967295": 2, "4294967294": 3 },
      a: undefined,
      é: '\u2028"',
      "": [{ y: 1, x: [{ d: 1, c: 2 }] }],
      f: () => 1,
      t: new Float64Array([1, -0]),
      ...JSON.parse('{"__proto__": {"q": 1, "p": 2}}'),
    };
    expect(canonicalJson(odd)).toBe(replacer(odd));
    fc.assert(
      fc.property(fc.jsonValue(), fc.dictionary(fc.string(), fc.jsonValue()), (v, d) => {
        expect(canonicalJson(v)).toBe(replacer(v));
        expect(canonicalJson(d)).toBe(replacer(d));
      }),
      { seed: 27, numRuns: 300 },
    );
    // and a whole snapshot, with its pending inputs
    const sim = loadModel(springParticle());
    sim.schedule([{ type: "bodyState", id: sim.model.bodies[0].id, velocity: [1, -0, 2] }], 9);
    sim.step(3);
    const snap = sim.snapshot();
    expect(canonicalJson(snap)).toBe(replacer(snap));
  });

  it("non-finite numbers become null", () => {
    expect([
      finiteOrNull(1.5),
      finiteOrNull(-0),
      finiteOrNull(Number.NaN),
      finiteOrNull(-Infinity),
    ]).toEqual([1.5, -0, null, null]);
  });
});

describe("withChecksum and parseSnapshot", () => {
  const snapshot = () => {
    const sim = loadModel(springParticle());
    sim.step(3);
    return JSON.parse(JSON.stringify(sim.snapshot()));
  };

  it("the checksum is sha256 of the sorted-key JSON without it; a changed field is refused", () => {
    const snap = snapshot();
    const { checksum, ...rest } = snap;
    expect(checksum).toBe(createHash("sha256").update(canonicalJson(rest)).digest("hex"));
    expect(withChecksum(rest).checksum).toBe(checksum);
    expect(parseSnapshot(snap).step).toBe(3);
    const heavier = JSON.parse(JSON.stringify(snap));
    heavier.model.bodies[0].mass = 2;
    // (loadSnapshot verifies it, after the checks that name a field)
    expect(snapshotIssues(heavier, loadSnapshot)[0].path).toEqual(["checksum"]);
    // without a checksum (as written before it existed) the document is not checked
    const { checksum: _dropped, ...unchecked } = heavier;
    expect(parseSnapshot(unchecked).model.bodies[0].mass).toBe(2);
    expect(snapshotIssues(heavier, verifyChecksum)[0].path).toEqual(["checksum"]);
    verifyChecksum(unchecked);
  });

  it("schema errors carry their paths; non-objects are refused", () => {
    const { checksum: _dropped, ...snap } = snapshot();
    expect(snapshotIssues({ ...snap, version: 2 })[0].path).toEqual(["version"]);
    expect(snapshotIssues({ ...snap, step: -1 })[0].path).toEqual(["step"]);
    expect(snapshotIssues(null).length).toBeGreaterThan(0);
    expect(snapshotIssues([1, 2]).length).toBeGreaterThan(0);
  });
});

describe("reservedOffDiagonalBlocks", () => {
  it("lists the off-diagonal blocks reserved, in row order, whatever the order of reservation", () => {
    const m = new SparseBlockMatrix([6, 3, 3, 6]);
    for (const [i, j] of [
      [3, 0],
      [0, 2],
      [2, 0],
      [1, 1],
      [0, 3],
      [1, 3],
    ])
      m.addBlock(i, j);
    expect(reservedOffDiagonalBlocks(m)).toEqual([
      [0, 2],
      [0, 3],
      [1, 3],
      [2, 0],
      [3, 0],
    ]);
    expect(reservedOffDiagonalBlocks(new SparseBlockMatrix([3, 3]))).toEqual([]);
    expect(reservedOffDiagonalBlocks(new SparseBlockMatrix([]))).toEqual([]);
  });
});
