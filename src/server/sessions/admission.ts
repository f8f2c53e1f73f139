/**
 * Admission of new sessions: none while the server shuts down, at most MAX_SESSIONS in all
 * and MAX_SESSIONS_PER_KEY per API key. Creations still in flight count (concurrent creates
 * would each see the same number of sessions and all pass).
 */
import type { Config } from "../config";
import { ApiError } from "../errors";
import type { SessionTable } from "./records";

export class Admission {
  /** creations in flight */
  private creating = 0;
  /** creations in flight per API key */
  private readonly creatingByOwner = new Map<string, number>();

  constructor(
    private readonly config: Config,
    private readonly table: SessionTable,
    private readonly closing: () => boolean,
  ) {}

  /**
   * Throws what a new session of `owner` would be refused with now (shutting down, the
   * server's or the key's session limit); null: only the server's limit applies.
   */
  check(owner: string | null): void {
    if (this.closing()) throw new ApiError("shutting_down", "the server is shutting down");
    if (this.table.size + this.creating >= this.config.maxSessions)
      throw new ApiError(
        "too_many_sessions",
        `the server holds its limit of ${this.config.maxSessions} sessions (MAX_SESSIONS); delete one first`,
        { limit: this.config.maxSessions },
      );
    if (owner === null) return;
    const mine = (this.creatingByOwner.get(owner) ?? 0) + this.table.ownedBy(owner);
    if (mine >= this.config.maxSessionsPerKey)
      throw new ApiError(
        "too_many_sessions",
        `this API key holds its limit of ${this.config.maxSessionsPerKey} sessions (MAX_SESSIONS_PER_KEY); delete one first`,
        { limit: this.config.maxSessionsPerKey, scope: "key" },
      );
  }

  /**
   * Admits a creation of `owner`'s and counts it in flight until the returned function is
   * called (in the `finally` of the creation, right after its record joins the table, so
   * that no check sees the session twice or not at all). `againstKey` false: a session
   * restored from its checkpoint, already counted against its key's quota when it was
   * created, passes the server's limit only.
   */
  enter(owner: string | null, againstKey: boolean): () => void {
    this.check(againstKey ? owner : null);
    this.creating++;
    if (owner !== null) this.creatingByOwner.set(owner, (this.creatingByOwner.get(owner) ?? 0) + 1);
    return () => {
      this.creating--;
      if (owner === null) return;
      const left = (this.creatingByOwner.get(owner) ?? 1) - 1;
      if (left > 0) this.creatingByOwner.set(owner, left);
      else this.creatingByOwner.delete(owner);
    };
  }
}
