/** KeyTable (the warm-start memory's hash table) against Map on contact-key-sized keys. */
import { describe, expect, it } from "vitest";
import { KeyTable } from "../../../src/engine/contact/key-table";
import { contactKey } from "../../../src/engine/geometry/contact-buffer";
import { mulberry32 } from "../../support/random";

describe("KeyTable", () => {
  it("agrees with a Map through growth, overwrites and clears", () => {
    const r = mulberry32(3);
    const t = new KeyTable();
    for (let round = 0; round < 4; round++) {
      const ref = new Map<number, number>();
      t.clear();
      const count = 500 * (round + 1);
      for (let k = 0; k < count; k++) {
        // Keys up to ~2^47 (shape indices < 2^18, features < 2^16), some repeated.
        const key =
          k % 7 === 0 && k > 0
            ? [...ref.keys()][Math.floor(r() * ref.size)]
            : contactKey(Math.floor(r() * 2 ** 18), Math.floor(r() * 2 ** 18), Math.floor(r() * 4));
        ref.set(key, k);
        t.set(key, k);
      }
      expect(t.size).toBe(ref.size);
      for (const [key, v] of ref) expect(t.get(key)).toBe(v);
      for (let k = 0; k < 200; k++) {
        const key = contactKey(2 ** 18 - 1, 2 ** 18 - 2, 100 + k); // never inserted
        expect(t.get(key)).toBe(ref.get(key) ?? -1);
      }
    }
    t.clear();
    expect(t.size).toBe(0);
    expect(t.get(0)).toBe(-1);
  });
});
