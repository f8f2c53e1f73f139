/**
 * The exact encoding of state arrays in snapshots and the snapshot's error type: the pieces
 * of the snapshot format that the stages below the simulation (the contact module's
 * warm-start memory) use to save and restore themselves (see src/engine/simulation/snapshot.ts
 * for the format as a whole). Float64 arrays travel as the base64 of their little-endian
 * bytes: a decimal round trip would be exact for finite doubles but loses the sign of −0.
 */
import { createHash } from "node:crypto";
import { endianness } from "node:os";
import { issuesSummary } from "../../../schemas/issues";
import type { ContactMemorySpec } from "../../../schemas/snapshot";

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
 * A part of the engine with step-to-step memory beyond the state arrays (the contact
 * module: warm-start impulses by contact key). exportMemory returns JSON-safe data
 * (Float64 arrays encoded with encodeFloat64 when they must be exact); importMemory takes
 * what exportMemory gave on an object built from the same model.
 */
export interface MemoryExporter {
  exportMemory(): ContactMemorySpec;
  importMemory(memory: ContactMemorySpec): void;
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
