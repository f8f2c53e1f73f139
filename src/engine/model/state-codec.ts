/**
 * The exact encoding of state arrays in snapshots, the snapshot's error type, and the shape
 * in which the stages below the simulation (the contact module's warm-start memory) hand
 * their memory to it: plain typed arrays, which the simulation encodes for the wire
 * (simulation/state.ts; src/engine/simulation/snapshot.ts for the format as a whole).
 * Float64 arrays travel as the base64 of their little-endian bytes: a decimal round trip
 * would be exact for finite doubles but loses the sign of −0.
 */
import { createHash } from "node:crypto";
import { endianness } from "node:os";
import { issuesSummary } from "../../../schemas/issues";

export interface SnapshotIssue {
  path: (string | number)[];
  message: string;
}

/** An unreadable or inconsistent snapshot; issues carry paths from the snapshot's root. */
export class SnapshotError extends Error {
  constructor(readonly issues: SnapshotIssue[]) {
    super(`invalid snapshot: ${issuesSummary(issues, 5)}`);
    this.name = "SnapshotError";
  }
}

/**
 * The nonsmooth contact's warm-start memory (contact/impulse-memory.ts, projection.ts), in
 * slots 0..count−1: each remembered contact's key, bodies (−1: the ground), world impulse on
 * body b (N·s, 3 per slot) and point (m, world, 3 per slot); and the position projection's
 * multipliers (kg·m) and lifts (m) by contact key.
 */
export interface ContactMemory {
  count: number;
  key: Float64Array;
  bodyA: Int32Array;
  bodyB: Int32Array;
  impulse: Float64Array;
  point: Float64Array;
  /**
   * Sticking contacts' slip, 4 per contact (drift D, m, world, and the weight h/2, s;
   * all 0: none); absent in snapshots from before it was kept
   */
  slip?: Float64Array;
  /** absent in snapshots from before the projection had a warm start */
  projection?: {
    count: number;
    key: Float64Array;
    mu: Float64Array;
    /**
     * The last projection's lifts (m) by contact key (projection.ts liftOf); absent in
     * snapshots from before they were remembered (none then)
     */
    lifted?: { count: number; key: Float64Array; lift: Float64Array };
  };
}

/**
 * A part of the engine with step-to-step memory beyond the state arrays (the contact
 * module: warm-start impulses by contact key, or compliant friction's tangential
 * displacements in `impulse`, m). exportMemory returns copies (null: no memory, compliant
 * contact without friction); importMemory takes what exportMemory gave on an object built
 * from the same model, its lengths checked by the decoder (simulation/state.ts).
 */
export interface MemoryExporter {
  exportMemory(): ContactMemory | null;
  importMemory(memory: ContactMemory): void;
}

export function isMemoryExporter(x: unknown): x is MemoryExporter {
  const o = x as Partial<MemoryExporter> | null | undefined;
  return typeof o?.exportMemory === "function" && typeof o?.importMemory === "function";
}

const littleEndian = endianness() === "LE";

/** base64 of the array's little-endian float64 bytes. */
export function encodeFloat64(a: Float64Array): string {
  if (!littleEndian) throw new Error("snapshots need a little-endian platform");
  return Buffer.from(a.buffer, a.byteOffset, a.byteLength).toString("base64");
}

/** The array encoded by encodeFloat64; throws SnapshotError unless it has `length` values. */
export function decodeFloat64(s: string, length: number, path: (string | number)[]): Float64Array {
  if (!littleEndian) throw new Error("snapshots need a little-endian platform");
  const bytes = Buffer.from(s, "base64");
  if (bytes.byteLength !== 8 * length)
    throw new SnapshotError([
      {
        path,
        message: `expected ${length} float64 values (${8 * length} bytes), got ${bytes.byteLength} bytes`,
      },
    ]);
  const out = new Float64Array(length);
  new Uint8Array(out.buffer).set(bytes);
  return out;
}

/** sha256 (hex) of the arrays' bytes, concatenated in the order given. */
export function hashFloat64(arrays: readonly Float64Array[]): string {
  const h = createHash("sha256");
  for (const a of arrays) h.update(new Uint8Array(a.buffer, a.byteOffset, a.byteLength));
  return h.digest("hex");
}
