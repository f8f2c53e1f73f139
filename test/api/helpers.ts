/**
 * Shared pieces of the API tests: small models whose motion has a closed form or a short
 * recurrence, an app factory (quiet logs, few workers) and a WebSocket frame collector.
 */
import type { AddressInfo } from "node:net";
import request from "supertest";
import { WebSocket } from "ws";
import { State, type StateOut } from "../../schemas/state";
import { buildApp, type MoreauApp } from "../../src/server/app";
import type { ConfigInput } from "../../src/server/config";

export const G = 9.81;

export async function startApp(config: ConfigInput = {}): Promise<MoreauApp> {
  const app = await buildApp({ workers: 1, logLevel: "silent", ...config });
  await app.ready();
  return app;
}

/** Listens on an ephemeral port of 127.0.0.1 (WebSocket tests); returns the port. */
export async function listen(app: MoreauApp): Promise<number> {
  await app.listen({ port: 0, host: "127.0.0.1" });
  return (app.server.address() as AddressInfo).port;
}

/**
 * A rigid body falling from z0 under gravity with the default Moreau–Jean θ = 1/2 scheme,
 * which integrates a constant acceleration exactly: z(t) = z0 − g t²/2, v(t) = −g t.
 */
export function fallingBody(z0 = 10, dt = 0.005, name = "fall") {
  return {
    name,
    bodies: [
      { id: "ball", kind: "rigid", mass: 1, inertia: [0.1, 0.1, 0.1], position: [0, 0, z0] },
    ],
    solver: { dt },
  };
}

/**
 * A particle of mass m on a zero-length spring k to the origin, no gravity, integrated by
 * symplectic Euler: v ← v − h (k/m) x, then x ← x + h v.
 */
export function springParticle(k = 100, m = 1, x0 = 1, dt = 0.001, name = "spring") {
  return {
    name,
    gravity: [0, 0, 0],
    bodies: [{ id: "p", kind: "particle", mass: m, position: [x0, 0, 0] }],
    forces: [
      {
        id: "s",
        type: "spring",
        a: { body: "p" },
        b: { body: "ground" },
        stiffness: k,
        restLength: 0,
      },
    ],
    solver: { integrator: "symplectic-euler", dt },
  };
}

/** The recurrence of springParticle written out: x and v after n steps. */
export function springRecurrence(k: number, m: number, x0: number, dt: number, n: number) {
  let x = x0;
  let v = 0;
  for (let i = 0; i < n; i++) {
    v -= dt * (k / m) * x;
    x += dt * v;
  }
  return { x, v };
}

/** Explicit stepping of a 1e8 N/m spring at h = 0.01 s: |1 − h²k/m| ≫ 1, it blows up. */
export function divergingModel() {
  return springParticle(1e8, 1, 1, 0.01, "diverging");
}

export async function createSession(app: MoreauApp, model: unknown): Promise<string> {
  const r = await request(app.server).post("/v1/sessions").send({ model });
  if (r.status !== 201) throw new Error(`create failed: ${r.status} ${r.text}`);
  return r.body.id as string;
}

export async function getState(app: MoreauApp, id: string): Promise<StateOut> {
  const r = await request(app.server).get(`/v1/sessions/${id}/state`);
  if (r.status !== 200) throw new Error(`state failed: ${r.status} ${r.text}`);
  return State.parse(r.body);
}

export async function step(app: MoreauApp, id: string, steps: number): Promise<StateOut> {
  const r = await request(app.server).post(`/v1/sessions/${id}/step`).send({ steps });
  if (r.status !== 200) throw new Error(`step failed: ${r.status} ${r.text}`);
  return State.parse(r.body);
}

export async function waitFor<T>(
  probe: () => Promise<T | undefined | null | false>,
  timeoutMs = 5000,
  everyMs = 10,
): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await probe();
    if (v) return v;
    if (Date.now() > end) throw new Error("waitFor: timed out");
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A WebSocket client that records every message (decoded JSON, or raw bytes). */
export class FrameClient {
  readonly ws: WebSocket;
  readonly messages: unknown[] = [];
  readonly raw: Buffer[] = [];
  closed: { code: number; reason: string } | null = null;
  private readonly opened: Promise<void>;

  constructor(url: string) {
    this.ws = new WebSocket(url);
    this.opened = new Promise((resolve, reject) => {
      this.ws.once("open", () => resolve());
      this.ws.once("error", reject);
      this.ws.once("unexpected-response", (_req, res) =>
        reject(new Error(`unexpected-response ${res.statusCode}`)),
      );
    });
    this.opened.catch(() => undefined);
    this.ws.on("message", (data: Buffer, isBinary: boolean) => {
      this.raw.push(data);
      if (!isBinary) this.messages.push(JSON.parse(data.toString("utf8")));
    });
    this.ws.on("close", (code, reason) => {
      this.closed = { code, reason: reason.toString() };
    });
  }

  open(): Promise<void> {
    return this.opened;
  }

  states(): (StateOut & { type: "state"; dropped: number })[] {
    return this.messages.filter((m) => (m as { type: string }).type === "state") as never;
  }

  async waitForMessages(n: number, timeoutMs = 5000): Promise<void> {
    await waitFor(async () => this.raw.length >= n, timeoutMs);
  }

  async waitClosed(timeoutMs = 5000): Promise<{ code: number; reason: string }> {
    return waitFor(async () => this.closed, timeoutMs);
  }

  close(): void {
    this.ws.close();
  }
}
