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

/** Stable JSON of a value (object keys sorted), for comparing parameter sets. */
export function canonicalJson(x: unknown): string {
  return JSON.stringify(x, (_k, v) =>
    v !== null && typeof v === "object" && !Array.isArray(v)
      ? Object.fromEntries(
          Object.entries(v as Record<string, unknown>).sort(([a], [b]) =>
            a < b ? -1 : a > b ? 1 : 0,
          ),
        )
      : v,
  );
}

export type { SimulationSnapshotSpec };
