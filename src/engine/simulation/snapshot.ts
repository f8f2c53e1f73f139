/**
 * The snapshot document's own pieces (schemas/snapshot.ts): its validation with the
 * checksum over the whole document, the solve matrix's reserved blocks, canonical JSON.
 * The state it carries is the record of state.ts (why each piece is there: see there).
 */
import { createHash } from "node:crypto";
import { issuesOf } from "../../../schemas/issues";
import {
  contactMethodOf,
  withoutUnreadContact,
  withoutUnreadModelSettings,
  withoutUnreadSettings,
} from "../../../schemas/model";
import { SimulationSnapshot, type SimulationSnapshotSpec } from "../../../schemas/snapshot";
import type { SparseBlockMatrix } from "../math/block-matrix";
import { SnapshotError } from "../model/state-codec";

/**
 * Validates a snapshot with its schema; SnapshotError with zod's issue paths otherwise. Its
 * checksum is verified by the caller (verifyChecksum) after the checks of its fields, which
 * name the field that is wrong where the checksum can only say that something changed.
 */
export function parseSnapshot(json: unknown): SimulationSnapshotSpec {
  const r = SimulationSnapshot.safeParse(json);
  if (!r.success) throw new SnapshotError(issuesOf(r.error));
  return withoutUnreadSnapshotSettings(r.data);
}

/**
 * A parsed snapshot whose model and parameters keep only the solver settings their choices
 * read (schemas/model.ts withoutUnreadSettings: snapshots made before that check carry theta
 * and rhoInfinity whatever the integrator, and those made before newtonIterations,
 * gyroscopicJacobian and jointTolerance lost their schema defaults carry them with
 * articulated too), so that it restores and is patched like a new model. Nothing a step
 * computes changes.
 */
export function withoutUnreadSnapshotSettings(
  snap: SimulationSnapshotSpec,
): SimulationSnapshotSpec {
  const { model, parameters } = snap;
  return {
    ...snap,
    model: withoutUnreadModelSettings(model),
    parameters: {
      ...parameters,
      solver: withoutUnreadSettings(parameters.solver, contactMethodOf(model)),
      contact: parameters.contact && withoutUnreadContact(parameters.contact),
    },
  };
}

/**
 * The off-diagonal blocks reserved in a solve matrix, as (bi, bj) pairs in row order,
 * read from its CSR pattern (the first scalar row of each block row lists the block's
 * columns). Diagonal blocks always exist and are not listed.
 */
export function reservedOffDiagonalBlocks(m: SparseBlockMatrix): [number, number][] {
  const out: [number, number][] = [];
  if (m.numBlocks === 0) return out;
  m.finalize();
  const csr = m.toCsr();
  const colBlock = new Int32Array(m.size);
  for (let b = 0; b < m.numBlocks; b++)
    for (let c = m.blockOffset[b]; c < m.blockOffset[b + 1]; c++) colBlock[c] = b;
  for (let bi = 0; bi < m.numBlocks; bi++) {
    const row = m.blockOffset[bi];
    let last = -1;
    for (let k = csr.rowPtr[row]; k < csr.rowPtr[row + 1]; k++) {
      const bj = colBlock[csr.colIdx[k]];
      if (bj !== last && bj !== bi) out.push([bi, bj]);
      last = bj;
    }
  }
  return out;
}

/** Non-finite step statistics travel as null (JSON has no NaN or Infinity). */
export function finiteOrNull(x: number): number | null {
  return Number.isFinite(x) ? x : null;
}

/** sha256 (hex) of the canonical JSON of a snapshot without its checksum field. */
function documentDigest(doc: Record<string, unknown>): string {
  const { checksum: _omitted, ...rest } = doc;
  return createHash("sha256").update(canonicalJson(rest)).digest("hex");
}

/**
 * The snapshot with its `checksum`: the whole document's digest (model, parameters, memory
 * and state), so that a changed mass or a changed memory is refused like changed state
 * bytes (`hash` covers those alone).
 */
export function withChecksum(doc: SimulationSnapshotSpec): SimulationSnapshotSpec {
  return { ...doc, checksum: documentDigest(doc as unknown as Record<string, unknown>) };
}

/**
 * Refuses (SnapshotError at ["checksum"]) a document whose checksum does not match its
 * content; a document without one (written before it existed) is not checked.
 */
export function verifyChecksum(json: unknown): void {
  if (json === null || typeof json !== "object" || Array.isArray(json)) return;
  const doc = json as Record<string, unknown>;
  if (typeof doc.checksum !== "string") return;
  if (documentDigest(doc) !== doc.checksum)
    throw new SnapshotError([
      {
        path: ["checksum"],
        message: "the document does not match its checksum (changed after it was written)",
      },
    ]);
}

/**
 * Stable JSON of a value (object keys sorted), for comparing parameter sets and for the
 * snapshot's checksum: JSON.stringify of a copy whose objects have their keys inserted in
 * sorted order (by UTF-16 code units; an object lists its array-index keys first, ascending,
 * whatever the order of insertion). The copy is made ahead, so that JSON.stringify runs
 * without a replacer: the replacer that sorted each object as it was met, called for every
 * value (every number of every array too), took 277 of the 363 ms of a 100×100 cloth's
 * snapshot and 490 of the 1035 ms of one holding 100 000 pending inputs — what every
 * checkpoint and every answered change costs its worker. The text is the replacer's (so
 * every checksum written before still verifies: test/engine/simulation/snapshot).
 */
export function canonicalJson(x: unknown): string {
  return JSON.stringify(sortedCopy(x, ""));
}

/**
 * `value` (held at `key`) with every object copied with its keys in sorted order, after its
 * toJSON as JSON.stringify would call it; arrays of no object are kept as they are.
 */
function sortedCopy(value: unknown, key: string): unknown {
  let v = value;
  if (v === null || typeof v !== "object") return v;
  if (typeof (v as Jsonable).toJSON === "function") {
    v = (v as Jsonable).toJSON(key);
    if (v === null || typeof v !== "object") return v;
  }
  if (Array.isArray(v)) {
    let copy: unknown[] | null = null;
    for (let i = 0; i < v.length; i++) {
      const item: unknown = v[i];
      if (item === null || typeof item !== "object") continue;
      copy ??= v.slice();
      copy[i] = sortedCopy(item, String(i));
    }
    return copy ?? v;
  }
  const o = v as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const k of Object.keys(o).sort()) {
    const item = sortedCopy(o[k], k);
    // (an own "__proto__" stays a key, as JSON.parse made it)
    if (k === "__proto__")
      Object.defineProperty(out, k, { value: item, enumerable: true, writable: true });
    else out[k] = item;
  }
  return out;
}

interface Jsonable {
  toJSON(key: string): unknown;
}

export type { SimulationSnapshotSpec };
