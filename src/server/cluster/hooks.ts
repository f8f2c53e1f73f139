/**
 * What the session manager (src/server/sessions/) asks of the cluster when there is one
 * (REDIS_URL: node.ts implements it); without one these calls are simply not made and a
 * server behaves as it always has.
 */
import type { Subscription } from "../protocol";
import type { SessionRecord } from "../sessions/records";

export interface ClusterHooks {
  /**
   * Enters a new session in the cluster's registry, against MAX_SESSIONS and
   * MAX_SESSIONS_PER_KEY counted over every node (atomic in Redis); throws the ApiError a
   * refusal is answered with.
   */
  admit(id: string, owner: string | null): Promise<void>;
  /** A session opened here (created, forked, taken over): its lease and scene; sets rec.epoch. */
  opened(rec: SessionRecord): Promise<void>;
  /** A session that could not be opened after `admit`, or was deleted: out of the registry. */
  deleted(id: string): Promise<void>;
  /** Frames of a session owned here, for the cluster's logs (instead of local sockets). */
  frames(
    rec: SessionRecord,
    step: number,
    forced: boolean,
    frames: readonly { key: string; bytes: Uint8Array }[],
  ): void;
  /** This node's stream subscribers of a session changed (their classes). */
  subscriptions(id: string, subs: Subscription[]): void;
  /** The classes a session's worker must encode (wanted by subscribers on any node). */
  wanted(id: string): Subscription[];
  /** A checkpoint of a session was refused by its fencing token: another node owns it now. */
  fenced(rec: SessionRecord): void;
  /**
   * A session lost with its worker that no worker here can take (their starts failing):
   * let go, for a node with a running worker to take it over from its last checkpoint.
   */
  unavailable(rec: SessionRecord): void;
  /**
   * A worker here was lost (its replacement starting) or has started: the node's heartbeat
   * says at once whether it takes sessions now, and a node whose worker started takes over
   * at once the sessions no node holds (those that waited for a node with a worker running),
   * instead of at its next periodic scan.
   */
  workers(ready: boolean): void;
}
