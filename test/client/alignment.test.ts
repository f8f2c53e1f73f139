/**
 * The dashboard's plain-JS client (public/client.js) stays aligned with the typed client
 * (src/client): the same public methods on MoreauClient and SessionStream, the same
 * answers for the same calls against one server, the same error mapping, and the same
 * stream behaviour (scene first, States, reconnect after a dropped connection, end on
 * deletion, no retry for an unknown session). The JS client runs here in Node with the
 * `ws` package standing in for the browser's WebSocket.
 */
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { WebSocket } from "ws";
import { type MoreauApiError, MoreauClient, SessionStream } from "../../src/client/index";
import type { MoreauApp } from "../../src/server/app";
import { dropStreams, recurrence, springModel, startServer, waitFor } from "./helpers";

type Frame = { type: string; step: number; bodies?: { position: number[] }[] };
interface JsStream {
  status: string;
  reconnects: number;
  frames: number;
  lastClose: { code: number; reason: string } | null;
  opened(ms?: number): Promise<void>;
  ended(ms?: number): Promise<void>;
  close(): void;
}
interface JsClient {
  createSession(model: unknown): Promise<{ id: string; name: string; status: string }>;
  step(id: string, input: { steps: number }): Promise<unknown>;
  getState(id: string): Promise<unknown>;
  getSession(id: string): Promise<unknown>;
  deleteSession(id: string): Promise<void>;
  stream(
    id: string,
    options: { every?: number; reconnect?: unknown },
    handlers: {
      onScene?: (f: Frame) => void;
      onState?: (f: Frame) => void;
      onStatus?: (s: string) => void;
    },
  ): JsStream;
  [k: string]: unknown;
}
interface JsModule {
  MoreauClient: new (base: string, o?: { WebSocket?: unknown }) => JsClient;
  SessionStream: { prototype: object };
  MoreauApiError: new (
    ...a: unknown[]
  ) => Error & { status: number; code: string; issueLines(): string[] };
}

let app: MoreauApp;
let url: string;
let js: JsModule;
let ts: MoreauClient;
let pub: JsClient;
beforeAll(async () => {
  ({ app, url } = await startServer());
  const file = pathToFileURL(resolve(import.meta.dirname, "../../public/client.js")).href;
  js = (await import(file)) as JsModule;
  ts = new MoreauClient(url);
  pub = new js.MoreauClient(url, { WebSocket });
});
afterAll(async () => {
  await app.close();
});

const methods = (proto: object) =>
  Object.getOwnPropertyNames(proto)
    .filter((n) => n !== "constructor")
    .sort();

describe("public/client.js ↔ src/client", () => {
  it("has the typed client's methods", () => {
    const tsMethods = methods(MoreauClient.prototype);
    expect(methods(js.MoreauClient.prototype)).toEqual(tsMethods);
    const publicStream = ["close", "ended", "opened", "socket", "status"];
    for (const n of publicStream) {
      expect(methods(SessionStream.prototype)).toContain(n);
      expect(methods(js.SessionStream.prototype)).toContain(n);
    }
  });

  it("answers the same calls with the same bodies", async () => {
    const a = await ts.createSession(springModel);
    const b = await pub.createSession(springModel);
    expect(b.name).toBe(a.name);
    const sa = await ts.step(a.id, { steps: 40 });
    const sb = await pub.step(b.id, { steps: 40 });
    expect(sb).toEqual(sa);
    expect(sa.bodies[0].position[0]).toBeCloseTo(recurrence(40).x, 12);
    expect(await pub.getState(b.id)).toEqual(await ts.getState(a.id));
    for (const name of ["reset", "getState"] as const)
      expect(await (pub[name] as (id: string) => Promise<unknown>).call(pub, b.id)).toEqual(
        await ts[name](a.id),
      );
    await ts.deleteSession(a.id);
    await pub.deleteSession(b.id);
  });

  it("maps errors alike", async () => {
    const bad = { ...springModel, bodies: [] };
    const e1 = (await ts.createSession(bad).catch((x: unknown) => x)) as MoreauApiError;
    const e2 = (await pub.createSession(bad).catch((x: unknown) => x)) as MoreauApiError;
    expect(e2).toBeInstanceOf(js.MoreauApiError);
    expect([e2.status, e2.code, e2.message, e2.issueLines()]).toEqual([
      e1.status,
      e1.code,
      e1.message,
      e1.issueLines(),
    ]);
    expect(e1.issueLines()[0]).toMatch(/^model\.bodies: /);
  });

  it("streams, reconnects after a drop, ends on deletion, gives up on an unknown session", async () => {
    const s = await pub.createSession(springModel);
    const frames: Frame[] = [];
    const stream = pub.stream(
      s.id,
      { every: 1, reconnect: { initialDelayMs: 50 } },
      { onScene: (f) => frames.push(f), onState: (f) => frames.push(f) },
    );
    await stream.opened();
    await waitFor(() => frames.length >= 2);
    expect(frames[0].type).toBe("scene");
    expect(frames[1].type).toBe("state");
    dropStreams(app, s.id);
    await waitFor(() => stream.reconnects === 1 && stream.status === "open");
    await waitFor(() => frames.filter((f) => f.type === "scene").length === 2);
    await pub.step(s.id, { steps: 2 });
    await waitFor(() => frames.some((f) => f.type === "state" && f.step === 2));
    const last = frames.filter((f) => f.type === "state").at(-1)!;
    expect(last.bodies?.[0].position[0]).toBeCloseTo(recurrence(2).x, 12);
    await pub.deleteSession(s.id);
    await stream.ended();
    expect(stream.lastClose?.code).toBe(1000);

    const ghost = pub.stream("no-such-session", { reconnect: { initialDelayMs: 20 } }, {});
    await ghost.ended();
    expect(ghost.reconnects).toBe(0);
  });
});
