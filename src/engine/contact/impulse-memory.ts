/**
 * The warm-start memory of the nonsmooth contact (Siconos saveYandLambdaInMemory): the
 * world impulse (N·s, on body b) of every active contact of the last step, by contact key,
 * and by body pair with the contact point for the lookup by proximity, and the slip of
 * each contact that stuck (nonsmooth-contact.ts, "Sticking drift"). It owns every value
 * it exports, so a snapshot taken right after a restore saves what was restored.
 */
import { grow } from "../math/grow";
import { type ContactMemory, SnapshotError } from "../model/state-codec";
import { KeyTable } from "./key-table";

/**
 * Warm start by proximity (m): a contact whose key is new takes the remembered impulse of
 * the nearest previous contact of the same body pair within this distance. Needed because
 * feature labels are not unique where features coincide exactly (two equal boxes stacked
 * flush: an incident vertex on a reference edge is labelled by the sign of round-off).
 */
export const WARM_START_RADIUS = 1e-3;

/** The contacts remembered, in slots 0..count−1 (3 values per slot for impulse and point). */
export class ImpulseMemory {
  count = 0;
  /** World impulse on body b (N·s). */
  impulse: Float64Array = new Float64Array(0);
  /** Contact point (m, world). */
  point: Float64Array = new Float64Array(0);
  /**
   * The slip of a contact that stuck (nonsmooth-contact.ts, "Sticking drift"), 4 per slot:
   * the drift D carried over the step's first half (m, world, b relative to a) and the weight
   * h/2 (s) of the next start's tangential velocity; all 0: none (it slid, or no
   * friction, or compliant contact). Finite either way: a snapshot holds only finite
   * numbers, and a diverged simulation's last good memory is compared value by value.
   */
  slip: Float64Array = new Float64Array(0);
  private key: Float64Array = new Float64Array(0);
  private bodyA: Int32Array = new Int32Array(0);
  private bodyB: Int32Array = new Int32Array(0);
  private readonly byKey = new KeyTable();
  /** Same memory by body pair: first slot of each pair, then a linked list (next). */
  private readonly byPair = new KeyTable();
  private next: Int32Array = new Int32Array(0);

  constructor(private readonly numBodies: number) {}

  clear(): void {
    this.byKey.clear();
    this.byPair.clear();
    this.count = 0;
  }

  /** Empties the memory and makes room for n slots (filled by set, in slot order). */
  begin(n: number): void {
    this.clear();
    this.byKey.reserve(n);
    this.byPair.reserve(n);
    this.impulse = grow(this.impulse, 3 * n);
    this.point = grow(this.point, 3 * n);
    this.slip = grow(this.slip, 4 * n);
    this.key = grow(this.key, n);
    this.next = grow(this.next, n);
    this.bodyA = grow(this.bodyA, n);
    this.bodyB = grow(this.bodyB, n);
  }

  /**
   * Remembers slot `count` (then count+1): its key, bodies and, at 3·src of `point`, its
   * point, no slip; the caller writes its impulse into impulse[3·slot..] and its slip into
   * slip[4·slot..].
   */
  add(key: number, a: number, b: number, point: Float64Array, src: number): number {
    const slot = this.count++;
    this.key[slot] = key;
    this.bodyA[slot] = a;
    this.bodyB[slot] = b;
    this.point[3 * slot] = point[3 * src];
    this.point[3 * slot + 1] = point[3 * src + 1];
    this.point[3 * slot + 2] = point[3 * src + 2];
    this.slip.fill(0, 4 * slot, 4 * slot + 4);
    this.byKey.set(key, slot);
    const pk = this.pairKey(a, b);
    this.next[slot] = this.byPair.get(pk);
    this.byPair.set(pk, slot);
    return slot;
  }

  /**
   * The slot remembered for a contact: by its key, else the nearest remembered contact of
   * its body pair within WARM_START_RADIUS of its point (3·src of `point`); −1 if none.
   */
  find(key: number, a: number, b: number, point: Float64Array, src: number): number {
    const slot = this.byKey.get(key);
    if (slot >= 0) return slot;
    let s = this.byPair.get(this.pairKey(a, b));
    let best = -1;
    let bestD = WARM_START_RADIUS * WARM_START_RADIUS;
    while (s >= 0) {
      const dx = this.point[3 * s] - point[3 * src];
      const dy = this.point[3 * s + 1] - point[3 * src + 1];
      const dz = this.point[3 * s + 2] - point[3 * src + 2];
      const d = dx * dx + dy * dy + dz * dz;
      if (d <= bestD) {
        bestD = d;
        best = s;
      }
      s = this.next[s];
    }
    return best;
  }

  /** This memory ← other's contacts (no allocation once the capacity suffices). */
  copyFrom(other: ImpulseMemory): void {
    const n = other.count;
    this.begin(n);
    for (let i = 0; i < n; i++) {
      this.add(other.key[i], other.bodyA[i], other.bodyB[i], other.point, i);
      for (let k = 0; k < 3; k++) this.impulse[3 * i + k] = other.impulse[3 * i + k];
      for (let k = 0; k < 4; k++) this.slip[4 * i + k] = other.slip[4 * i + k];
    }
  }

  /** Slot s remembers a sticking contact's slip (its weight h/2 > 0; none: 0). */
  stuck(s: number): boolean {
    return this.slip[4 * s + 3] > 0;
  }

  /** Copies of the remembered contacts, for simulation snapshots (the projection's apart). */
  export(): Omit<ContactMemory, "projection"> {
    const n = this.count;
    return {
      count: n,
      key: this.key.slice(0, n),
      bodyA: this.bodyA.slice(0, n),
      bodyB: this.bodyB.slice(0, n),
      impulse: this.impulse.slice(0, 3 * n),
      point: this.point.slice(0, 3 * n),
      slip: this.slip.slice(0, 4 * n),
    };
  }

  /**
   * Restores what export gave (same model; the arrays' lengths checked by the decoder);
   * SnapshotError at memory.contact for a body index this model does not have.
   */
  import(m: Omit<ContactMemory, "projection">): void {
    const n = m.count;
    for (const bodies of [m.bodyA, m.bodyB])
      for (const b of bodies)
        if (b < -1 || b >= this.numBodies)
          throw new SnapshotError([
            { path: ["memory", "contact"], message: `body index ${b} out of range` },
          ]);
    this.begin(n);
    for (let i = 0; i < n; i++) this.add(m.key[i], m.bodyA[i], m.bodyB[i], m.point, i);
    this.impulse.set(m.impulse.subarray(0, 3 * n));
    // a snapshot from before the slips were remembered: none (add's zeros)
    if (m.slip === undefined) return;
    this.slip.set(m.slip.subarray(0, 4 * n));
    // a slot not all finite is none: the first snapshots with slips marked none by NaN
    // (their weight left stale), and no NaN drift can reach the friction law from a snapshot
    for (let i = 0; i < n; i++) {
      const s = 4 * i;
      const sum = this.slip[s] + this.slip[s + 1] + this.slip[s + 2] + this.slip[s + 3];
      if (!Number.isFinite(sum)) this.slip.fill(0, s, s + 4);
    }
  }

  private pairKey(a: number, b: number): number {
    return (a + 1) * (this.numBodies + 2) + (b + 1);
  }
}
