/**
 * state-codec.ts: the snapshot encoding of Float64 arrays (base64 of the little-endian
 * bytes, decoded bit for bit, including −0, NaN payloads and views at an offset), its
 * length check as a SnapshotError with the path, the state hash against sha256 of the
 * concatenated bytes, and the MemoryExporter guard.
 */
import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import {
  decodeFloat64,
  encodeFloat64,
  hashFloat64,
  isMemoryExporter,
  SnapshotError,
} from "../../../src/engine/model/state-codec";

/** The 8 bytes of each value, little-endian, written out with a DataView. */
function bytesLE(values: number[]): Buffer {
  const b = Buffer.alloc(8 * values.length);
  const view = new DataView(b.buffer, b.byteOffset, b.byteLength);
  values.forEach((v, i) => {
    view.setFloat64(8 * i, v, true);
  });
  return b;
}

describe("encodeFloat64 / decodeFloat64", () => {
  it("encodes the little-endian bytes and decodes them bit for bit (−0, ±Inf, NaN, subnormals)", () => {
    const values = [1.5, -0, 0, Number.POSITIVE_INFINITY, -Number.MAX_VALUE, 5e-324, Math.PI];
    const a = Float64Array.from(values);
    const s = encodeFloat64(a);
    expect(s).toBe(bytesLE(values).toString("base64"));
    const back = decodeFloat64(s, values.length, ["x"]);
    for (let i = 0; i < values.length; i++) expect(Object.is(back[i], values[i])).toBe(true);
    // a NaN with a payload keeps its bits
    const nan = new Float64Array(1);
    new DataView(nan.buffer).setBigUint64(0, 0x7ff8_0000_dead_beefn, true);
    const nanBack = decodeFloat64(encodeFloat64(nan), 1, []);
    expect(new DataView(nanBack.buffer).getBigUint64(0, true)).toBe(0x7ff8_0000_dead_beefn);
  });

  it("encodes only the view's bytes (a subarray at an offset)", () => {
    const whole = Float64Array.of(1, 2, 3, 4);
    expect(encodeFloat64(whole.subarray(1, 3))).toBe(bytesLE([2, 3]).toString("base64"));
    expect(encodeFloat64(new Float64Array(0))).toBe("");
  });

  it("refuses a string of the wrong length with a SnapshotError at the path given", () => {
    const s = encodeFloat64(Float64Array.of(1, 2));
    let caught: unknown;
    try {
      decodeFloat64(s, 3, ["contacts", 2, "impulse"]);
    } catch (e) {
      caught = e;
    }
    expect(caught).toBeInstanceOf(SnapshotError);
    const e = caught as SnapshotError;
    expect(e.name).toBe("SnapshotError");
    expect(e.issues).toEqual([
      {
        path: ["contacts", 2, "impulse"],
        message: "expected 3 float64 values (24 bytes), got 16 bytes",
      },
    ]);
    expect(e.message).toBe(
      "invalid snapshot: contacts.2.impulse: expected 3 float64 values (24 bytes), got 16 bytes",
    );
  });
});

describe("hashFloat64", () => {
  it("is sha256 of the arrays' bytes concatenated in order (views included)", () => {
    const a = Float64Array.of(1, -0);
    const b = Float64Array.of(9, 2, 3).subarray(1);
    const ref = createHash("sha256")
      .update(bytesLE([1, -0, 2, 3]))
      .digest("hex");
    expect(hashFloat64([a, b])).toBe(ref);
    // −0 and 0 differ; the order matters
    expect(hashFloat64([Float64Array.of(1, 0), b])).not.toBe(ref);
    expect(hashFloat64([b, a])).not.toBe(ref);
    // no bytes: the sha256 of the empty message
    expect(hashFloat64([])).toBe(
      "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
    );
  });
});

describe("isMemoryExporter", () => {
  it("needs both exportMemory and importMemory functions", () => {
    const f = () => undefined;
    expect(isMemoryExporter({ exportMemory: f, importMemory: f })).toBe(true);
    expect(isMemoryExporter({ exportMemory: f })).toBe(false);
    expect(isMemoryExporter({ exportMemory: f, importMemory: 1 })).toBe(false);
    expect(isMemoryExporter(null)).toBe(false);
    expect(isMemoryExporter(undefined)).toBe(false);
  });
});
