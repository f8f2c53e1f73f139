/**
 * ImpulseMemory, the warm-start table of the nonsmooth contact: a contact is found by its
 * key, else by the nearest remembered contact of the same body pair within
 * WARM_START_RADIUS of its point (another pair's or a farther one's does not count); the
 * export/import round trip is exact (float64 bytes); a malformed memory or a body index
 * out of range is a SnapshotError at memory.contact.
 */
import { describe, expect, it } from "vitest";
import { ImpulseMemory, WARM_START_RADIUS } from "../../../src/engine/contact/impulse-memory";
import { SnapshotError } from "../../../src/engine/model/state-codec";

/** Three contacts: two of pair (−1, 0) 0.5 mm and 10 cm apart, one of pair (0, 1). */
function filled(): ImpulseMemory {
  const m = new ImpulseMemory(2);
  const points = Float64Array.of(0, 0, 0, 0.1, 0, 0, 0, 0, 0);
  m.begin(3);
  const pairs = [
    [-1, 0],
    [-1, 0],
    [0, 1],
  ];
  pairs.forEach(([a, b], i) => {
    const slot = m.add(100 + i, a, b, points, i);
    expect(slot).toBe(i);
    m.impulse.set([i + 1, Math.PI * i, -1 / 3], 3 * slot);
  });
  return m;
}

describe("ImpulseMemory", () => {
  it("finds by key, else by the nearest point of the same pair within the radius", () => {
    const m = filled();
    const at = (x: number, y = 0) => Float64Array.of(x, y, 0);
    expect(m.find(101, 0, 1, at(5), 0)).toBe(1); // the key decides, whatever the point
    expect(m.find(999, -1, 0, at(0.0004), 0)).toBe(0);
    expect(m.find(999, -1, 0, at(0.1 - 0.0002), 0)).toBe(1);
    expect(m.find(999, -1, 0, at(0, 0.9 * WARM_START_RADIUS), 0)).toBe(0);
    expect(m.find(999, -1, 0, at(0, 1.1 * WARM_START_RADIUS), 0)).toBe(-1);
    expect(m.find(999, 0, 1, at(0.1), 0)).toBe(-1); // pair (0, 1) remembers a point at 0
    expect(m.find(999, 1, 0, at(0), 0)).toBe(-1); // pairs are ordered (a, b)
    m.clear();
    expect(m.find(100, -1, 0, at(0), 0)).toBe(-1);
  });

  it("export then import restores every slot to the bit", () => {
    const m = filled();
    const copy = new ImpulseMemory(2);
    copy.import(m.export());
    expect(copy.count).toBe(3);
    expect(Array.from(copy.impulse.subarray(0, 9))).toEqual(Array.from(m.impulse.subarray(0, 9)));
    expect(Array.from(copy.point.subarray(0, 9))).toEqual(Array.from(m.point.subarray(0, 9)));
    expect(copy.find(102, 0, 1, Float64Array.of(9, 9, 9), 0)).toBe(2);
    expect(copy.find(7, -1, 0, Float64Array.of(0.1, 0, 0), 0)).toBe(1);
    expect(copy.export()).toEqual(m.export());
  });

  it("a body index this model lacks is a SnapshotError at memory.contact", () => {
    // the arrays' lengths against the count are the decoder's (simulation/state.ts)
    const good = filled().export();
    const bad = (bodies: Partial<typeof good>) => () =>
      new ImpulseMemory(2).import({ ...good, ...bodies });
    expect(bad({ bodyB: Int32Array.of(0, 0, 2) })).toThrow(/body index 2 out of range/);
    expect(bad({ bodyA: Int32Array.of(-2, -1, 0) })).toThrow(/body index -2 out of range/);
    try {
      bad({ bodyB: Int32Array.of(0, 0, 2) })();
      expect.unreachable();
    } catch (e) {
      expect(e).toBeInstanceOf(SnapshotError);
      expect((e as SnapshotError).issues[0].path).toEqual(["memory", "contact"]);
    }
  });
});
