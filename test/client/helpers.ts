/**
 * Shared pieces of the client tests: a listening app, models whose motion has a short
 * recurrence written out here, and a way to drop a stream from the server side (the
 * session manager's stream hub holds the server end of every subscriber's socket).
 */
import type { AddressInfo } from "node:net";
import { buildApp, type MoreauApp } from "../../src/server/app";

export async function startServer(): Promise<{ app: MoreauApp; url: string }> {
  const app = await buildApp({ workers: 1, logLevel: "silent" });
  await app.listen({ port: 0, host: "127.0.0.1" });
  return { app, url: `http://127.0.0.1:${(app.server.address() as AddressInfo).port}` };
}

export const K = 100;
export const M = 1;
export const X0 = 1;
export const H = 0.001;

/** A particle on a zero-length spring to the origin, symplectic Euler, no gravity. */
export const springModel = {
  name: "spring",
  gravity: [0, 0, 0] as [number, number, number],
  bodies: [
    {
      id: "p",
      kind: "particle" as const,
      mass: M,
      position: [X0, 0, 0] as [number, number, number],
    },
  ],
  forces: [
    {
      id: "s",
      type: "spring" as const,
      a: { body: "p" },
      b: { body: "ground" },
      stiffness: K,
      restLength: 0,
    },
  ],
  solver: { integrator: "symplectic-euler" as const, dt: H },
};

/** v ← v − h (k/m) x, then x ← x + h v, n times. */
export function recurrence(n: number) {
  let x = X0;
  let v = 0;
  for (let i = 0; i < n; i++) {
    v -= H * (K / M) * x;
    x += H * v;
  }
  return { x, v };
}

/** Terminates the server end of every stream of a session (a dropped connection). */
export function dropStreams(app: MoreauApp, sessionId: string): number {
  const subs = app.moreau.sessions.streams.subscribers(sessionId);
  for (const s of subs) s.ws.terminate();
  return subs.length;
}

export async function waitFor<T>(
  probe: () => T | undefined | null | false | Promise<T | undefined | null | false>,
  timeoutMs = 5000,
): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await probe();
    if (v) return v;
    if (Date.now() > end) throw new Error("waitFor: timed out");
    await new Promise((r) => setTimeout(r, 10));
  }
}
