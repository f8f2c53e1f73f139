/**
 * The contacts a State reports, as the contact modules leave them after a step: flat
 * arrays, world frame, SI units. Forces (N) and impulses (N·s) act on body b, body a takes
 * the opposite; a body index of −1 is the ground. The simulation turns this into the wire
 * format once (simulation/simulation.ts), so the contact modules know nothing of it.
 */
import { grow } from "../math/grow";

export class ContactReport {
  count = 0;
  bodyA: Int32Array = new Int32Array(0);
  bodyB: Int32Array = new Int32Array(0);
  /** Contact point (m, 3 per contact). */
  point: Float64Array = new Float64Array(0);
  /** Unit normal from a to b (3 per contact). */
  normal: Float64Array = new Float64Array(0);
  /** Gap (m, negative in penetration). */
  gap: Float64Array = new Float64Array(0);
  /** Normal force (N, ≥ 0 pushing b away from a). */
  normalForce: Float64Array = new Float64Array(0);
  /** Tangential (friction) force (N, 3 per contact). */
  tangentForce: Float64Array = new Float64Array(0);
  /** Impulse over the step (N·s, 3 per contact). */
  impulse: Float64Array = new Float64Array(0);

  /** Empties the report with room for n contacts. */
  begin(n: number): void {
    this.count = 0;
    this.bodyA = grow(this.bodyA, n);
    this.bodyB = grow(this.bodyB, n);
    this.point = grow(this.point, 3 * n);
    this.normal = grow(this.normal, 3 * n);
    this.gap = grow(this.gap, n);
    this.normalForce = grow(this.normalForce, n);
    this.tangentForce = grow(this.tangentForce, 3 * n);
    this.impulse = grow(this.impulse, 3 * n);
  }

  /** this ← other's contacts, in place (no allocation once the capacity suffices). */
  copyFrom(other: ContactReport): void {
    if (other === this) return;
    const n = other.count;
    this.begin(n);
    this.count = n;
    // loops, not set(subarray): a view is an allocation, and this runs every step
    for (let i = 0; i < n; i++) {
      this.bodyA[i] = other.bodyA[i];
      this.bodyB[i] = other.bodyB[i];
      this.gap[i] = other.gap[i];
      this.normalForce[i] = other.normalForce[i];
    }
    for (let i = 0; i < 3 * n; i++) {
      this.point[i] = other.point[i];
      this.normal[i] = other.normal[i];
      this.tangentForce[i] = other.tangentForce[i];
      this.impulse[i] = other.impulse[i];
    }
  }

  /** A copy holding just the reported contacts (a snapshot's, state.ts). */
  clone(): ContactReport {
    const c = new ContactReport();
    const n = this.count;
    c.count = n;
    c.bodyA = this.bodyA.slice(0, n);
    c.bodyB = this.bodyB.slice(0, n);
    c.point = this.point.slice(0, 3 * n);
    c.normal = this.normal.slice(0, 3 * n);
    c.gap = this.gap.slice(0, n);
    c.normalForce = this.normalForce.slice(0, n);
    c.tangentForce = this.tangentForce.slice(0, 3 * n);
    c.impulse = this.impulse.slice(0, 3 * n);
    return c;
  }

  /** Appends a contact between bodies a and b; the caller fills the arrays at its index. */
  add(a: number, b: number): number {
    const i = this.count++;
    this.bodyA[i] = a;
    this.bodyB[i] = b;
    return i;
  }
}
