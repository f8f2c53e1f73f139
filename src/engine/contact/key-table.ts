/**
 * Open-addressing hash table from non-negative integer keys (exact in a double, < 2^53:
 * contact keys, body-pair keys) to int32 values, with linear probing over typed arrays.
 * It replaces Map<number, number> in the per-step warm-start memory: keys above 2^31 are
 * heap numbers in a Map, so each step's thousands of insertions allocated, work for the
 * garbage collector at every step (bench/README.md, "Contact key table"). Cleared and
 * refilled every step; the capacity (a
 * power of two, at least twice the entries) grows only when more keys are inserted than
 * ever before.
 */
const EMPTY = -1;

export class KeyTable {
  private keys: Float64Array = new Float64Array(16).fill(EMPTY);
  private values: Int32Array = new Int32Array(16);
  private mask = 15;
  size = 0;

  /** Removes every entry (keeps the storage). */
  clear(): void {
    if (this.size === 0) return;
    this.keys.fill(EMPTY);
    this.size = 0;
  }

  /** Makes room for n entries in total without rehashing on insertion. */
  reserve(n: number): void {
    if (2 * n <= this.mask + 1) return;
    const oldKeys = this.keys;
    const oldValues = this.values;
    let cap = this.mask + 1;
    while (cap < 2 * n) cap *= 2;
    this.keys = new Float64Array(cap).fill(EMPTY);
    this.values = new Int32Array(cap);
    this.mask = cap - 1;
    this.size = 0;
    for (let s = 0; s < oldKeys.length; s++)
      if (oldKeys[s] !== EMPTY) this.set(oldKeys[s], oldValues[s]);
  }

  /** The value of key, or −1 when absent. */
  get(key: number): number {
    const { keys, mask } = this;
    for (let s = slotOf(key, mask); ; s = (s + 1) & mask) {
      const k = keys[s];
      if (k === key) return this.values[s];
      if (k === EMPTY) return -1;
    }
  }

  /** Inserts or overwrites key → value. */
  set(key: number, value: number): void {
    if (2 * (this.size + 1) > this.mask + 1) this.reserve(this.size + 1);
    const { keys, mask } = this;
    for (let s = slotOf(key, mask); ; s = (s + 1) & mask) {
      const k = keys[s];
      if (k === key) {
        this.values[s] = value;
        return;
      }
      if (k === EMPTY) {
        keys[s] = key;
        this.values[s] = value;
        this.size++;
        return;
      }
    }
  }
}

/** Slot of a key: its low and high 32-bit words mixed (murmur3 finalizer constants). */
function slotOf(key: number, mask: number): number {
  const lo = key >>> 0;
  const hi = (key / 4294967296) | 0;
  let h = Math.imul(lo ^ Math.imul(hi, 0x9e3779b1), 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h & mask;
}
