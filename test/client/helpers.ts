/**
 * Shared pieces of the client tests: a way to drop a stream from the server side (the
 * session manager's stream hub holds the server end of every subscriber's socket). The
 * server, the spring particle and its recurrence are in test/support.
 */
import type { MoreauApp } from "../../src/server/app";

/** Terminates the server end of every stream of a session (a dropped connection). */
export function dropStreams(app: MoreauApp, sessionId: string): number {
  const subs = app.moreau.sessions.streams.subscribers(sessionId);
  for (const s of subs) s.ws.terminate();
  return subs.length;
}
