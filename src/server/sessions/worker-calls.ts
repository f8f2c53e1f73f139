/**
 * Requests to a session's worker and the refresh of its record from the answers: every
 * reply (and every failure) carries the session's snapshot (status, time, step, run), which
 * is applied unless a newer one already was (a reply overtaken by a progress event). A
 * worker's failure becomes the ApiError it names; a read is asked again of the session
 * rebuilt after a worker loss (recovery.ts).
 */
import type { SessionStatusName } from "../../../schemas/api";
import { ApiError, conflict } from "../errors";
import type { InputLogAt, InputLogPart, SessionSnapshot, WorkerRequestBody } from "../protocol";
import { type WorkerAnswer, WorkerFailure, type WorkerPool } from "../worker-pool";
import type { SessionRecord, SessionTable } from "./records";

export class WorkerCalls {
  constructor(
    private readonly pool: WorkerPool,
    private readonly table: SessionTable,
    /** after a snapshot changed a record (`was`: its status before): the checkpoint policy */
    private readonly onApplied: (rec: SessionRecord, was: SessionStatusName) => void,
  ) {}

  /** A worker request; its reply's session snapshot refreshes the record. */
  async call(
    rec: SessionRecord | null,
    worker: number,
    body: WorkerRequestBody,
  ): Promise<WorkerAnswer> {
    try {
      const a = await this.pool.request(worker, body);
      if (rec && a.session) this.apply(rec, a.session);
      return a;
    } catch (err) {
      if (err instanceof WorkerFailure) {
        if (rec && err.session) this.apply(rec, err.session);
        if (err.info.code === "not_found" && rec && !this.table.has(rec.id))
          throw new ApiError("not_found", `session "${rec.id}" was deleted`, { session: rec.id });
        throw new ApiError(err.info.code, err.info.message, err.info.details);
      }
      throw err;
    }
  }

  /**
   * A read (nothing changes in the worker): if its worker is lost while it is in flight,
   * it is asked again of the session rebuilt from its checkpoint.
   */
  async read(rec: SessionRecord, body: WorkerRequestBody): Promise<WorkerAnswer> {
    try {
      return await this.call(rec, rec.worker, body);
    } catch (err) {
      if (!(err instanceof ApiError && err.code === "worker_crashed" && rec.rebuilding)) throw err;
      await rec.rebuilding;
      if (rec.lost || !this.table.has(rec.id)) throw err;
      return this.call(rec, rec.worker, body);
    }
  }

  /**
   * Tells the session's worker the step of the checkpoint its store holds (rec.savedStep),
   * which its frames carry as keptStep from then on (protocol.ts `kept`).
   */
  tellKept(rec: SessionRecord): void {
    // and what its input log holds (persistence.ts): a run's next checkpoint appends from there
    this.pool.notify(rec.worker, {
      kind: "kept",
      sessionId: rec.id,
      step: rec.savedStep,
      log: rec.inputLog,
    });
  }

  /** The State bytes of a `state` answer, kept as the session's last state. */
  stateOf(rec: SessionRecord, a: WorkerAnswer): Uint8Array {
    if (a.result.kind !== "state") throw new ApiError("internal", "bad reply");
    rec.lastState = a.result.state;
    return a.result.state;
  }

  /**
   * The engine snapshot bytes of a live session (a read: it does not wait for its queue).
   * `retry`: asked again of the rebuilt session if the worker is lost meanwhile.
   */
  async exportEngine(rec: SessionRecord, retry: boolean): Promise<Uint8Array> {
    return (await this.exportAt(rec, retry)).bytes;
  }

  /**
   * `exportEngine`, with the seq of the worker's snapshot at the export (what its worker
   * sent before has a smaller seq: checkpoints.ts drops a run's older checkpoint by it);
   * `recording`: with the recording so far (a checkpoint's: recording-history.ts); `log`
   * (a store that keeps the inputs as a log): what it holds, the inputs since coming apart.
   */
  async exportAt(
    rec: SessionRecord,
    retry: boolean,
    recording = false,
    log?: InputLogAt | null,
  ): Promise<{ bytes: Uint8Array; seq: number; log?: InputLogPart }> {
    if (rec.lost)
      throw conflict(rec.id, rec.status, "its simulation was lost with its worker; reset it first");
    const body: WorkerRequestBody =
      log !== undefined
        ? { kind: "export", sessionId: rec.id, recording, log }
        : { kind: "export", sessionId: rec.id, recording };
    const a = retry ? await this.read(rec, body) : await this.call(rec, rec.worker, body);
    if (a.result.kind !== "exported") throw new ApiError("internal", "bad reply");
    return { bytes: a.result.bytes, seq: a.session?.seq ?? rec.seq, log: a.result.log };
  }

  /** Mirrors a worker's session snapshot in the record (older ones are ignored). */
  apply(rec: SessionRecord, s: SessionSnapshot): void {
    // an older snapshot than the last applied (a reply overtaken by a progress event)
    if (rec.lost || s.seq <= rec.seq) return;
    rec.seq = s.seq;
    const was = rec.status;
    rec.status = s.status;
    rec.time = s.time;
    rec.step = s.step;
    rec.dt = s.dt;
    rec.message = s.message;
    rec.run = s.run;
    rec.recordedInputs = s.recordedInputs;
    this.onApplied(rec, was);
  }
}
