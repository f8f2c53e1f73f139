/**
 * The dashboard's client is the browser bundle of src/client, not a copy of it: GET
 * /client.js answers exactly what esbuild makes of src/client now
 * (src/client/browser/bundle.ts: `ws` → the browser's WebSocket, no zod), and that bundle,
 * imported by a page in headless Chromium, works against the server as the typed client
 * does in Node: the same exports and methods, the same answers for the same calls, the same
 * error mapping, and the stream's behaviour (scene first, then states, JSON and msgpack; a
 * dropped connection reconnects; deletion ends the stream; an unknown session is not
 * retried, although the browser hides a refused upgrade's status: the client asks GET
 * /v1/sessions/:id). The page is the dashboard's, which imports the same module.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { BUNDLE_BANNER, bundleClient } from "../../src/client/browser/bundle";
import * as node from "../../src/client/index";
import { useDashboard } from "../dashboard/browser";
import { springParticle, springParticleRecurrence } from "../support/models";
import { dropStreams } from "./helpers";

const springModel = springParticle();
const recurrence = (n: number) => springParticleRecurrence({}, n);

/** The bundle's exports, typed as the module it is built from. */
type ClientModule = typeof node;
/** What the page holds: the imported bundle and a stream the tests drive. */
type PageGlobals = {
  moreau: ClientModule;
  stream?: node.SessionStream;
  statuses?: string[];
  frames?: { type: string; step: number; x?: number }[];
};

const d = useDashboard();

beforeAll(async () => {
  // the dashboard's page (a document of the server's own address: Chromium lets it reach
  // 127.0.0.1), whose app.js imported the same module
  await d.open();
  // a string: vitest would rewrite an import() in a function passed to the page
  await d.page.evaluate("import('/client.js').then((m) => { globalThis.moreau = m; })");
});

describe("GET /client.js", () => {
  it("is src/client bundled for the browser now: its exports, without zod", async () => {
    const r = await fetch(`${d.base}/client.js`);
    expect(r.status).toBe(200);
    expect(r.headers.get("content-type")).toMatch(/^text\/javascript/);
    const served = await r.text();
    expect(served).toBe(await bundleClient());
    expect(served.startsWith(BUNDLE_BANNER)).toBe(true);
    expect(served).toContain("node_modules/msgpackr/unpack.js");
    expect(served).not.toContain("node_modules/zod");
    expect(served).not.toContain("schemas/");

    const inPage = await d.page.evaluate(() => {
      const m = (globalThis as unknown as PageGlobals).moreau;
      return {
        exports: Object.keys(m).sort(),
        client: Object.getOwnPropertyNames(m.MoreauClient.prototype).sort(),
        stream: Object.getOwnPropertyNames(m.SessionStream.prototype).sort(),
      };
    });
    expect(inPage).toEqual({
      exports: Object.keys(node).sort(),
      client: Object.getOwnPropertyNames(node.MoreauClient.prototype).sort(),
      stream: Object.getOwnPropertyNames(node.SessionStream.prototype).sort(),
    });
  });
});

describe("the bundle in the browser", () => {
  it("answers the same calls with the same bodies as the Node client", async () => {
    const ts = new node.MoreauClient(d.base);
    const a = await ts.createSession(springModel);
    const sa = await ts.step(a.id, { steps: 40 });
    const reset = await ts.reset(a.id);
    const got = await d.page.evaluate(async (model) => {
      const m = (globalThis as unknown as PageGlobals).moreau;
      const c = new m.MoreauClient(location.origin);
      const s = await c.createSession(model);
      const out = {
        name: s.name,
        stepped: await c.step(s.id, { steps: 40 }),
        state: await c.getState(s.id),
        reset: await c.reset(s.id),
        listed: (await c.listSessions()).some((x) => x.id === s.id),
        health: (await c.health()).status,
        validateRefused: "",
      };
      await c.deleteSession(s.id);
      try {
        new m.MoreauClient(location.origin, { validate: true });
      } catch (e) {
        out.validateRefused = (e as Error).message;
      }
      return out;
    }, springModel);
    expect(got.name).toBe(a.name);
    expect(got.stepped).toEqual(sa);
    expect(got.stepped.bodies[0].position[0]).toBeCloseTo(recurrence(40).x, 12);
    expect(got.state).toEqual(sa);
    expect(got.reset).toEqual(reset);
    expect(got.listed).toBe(true);
    expect(got.health).toBe("ok");
    expect(got.validateRefused).toMatch(/browser bundle/);
    await ts.deleteSession(a.id);
  });

  it("maps errors alike", async () => {
    const bad = { ...springModel, bodies: [] };
    const ts = new node.MoreauClient(d.base);
    const e1 = (await ts.createSession(bad).catch((x: unknown) => x)) as node.MoreauApiError;
    const e2 = await d.page.evaluate(async (model) => {
      const m = (globalThis as unknown as PageGlobals).moreau;
      const e = (await new m.MoreauClient(location.origin)
        .createSession(model)
        .catch((x: unknown) => x)) as node.MoreauApiError;
      return {
        isApiError: e instanceof m.MoreauApiError,
        fields: [e.status, e.code, e.message, e.issueLines(), e.request],
      };
    }, bad);
    expect(e2.isApiError).toBe(true);
    expect(e2.fields).toEqual([e1.status, e1.code, e1.message, e1.issueLines(), e1.request]);
    expect(e1.issueLines()[0]).toMatch(/^model\.bodies: /);
  });

  it("streams JSON and msgpack: scene first, then states that follow the recurrence", async () => {
    const got = await d.page.evaluate(async (model) => {
      const m = (globalThis as unknown as PageGlobals).moreau;
      const c = new m.MoreauClient(location.origin);
      const s = await c.createSession(model);
      const out: Record<string, { type: string; step: number; x?: number }[]> = {};
      for (const format of ["json", "msgpack"] as const) {
        const frames: { type: string; step: number; x?: number }[] = [];
        const stream = c.stream(
          s.id,
          { every: 2, fields: ["bodies"], format },
          {
            onScene: (f) => frames.push({ type: f.type, step: f.step }),
            onState: (f) =>
              frames.push({ type: f.type, step: f.step, x: f.bodies?.[0].position[0] }),
          },
        );
        await stream.opened();
        const start = Date.now();
        while (frames.length < 2 && Date.now() - start < 10_000)
          await new Promise((r) => setTimeout(r, 10));
        await c.step(s.id, { steps: 10 });
        while (frames.length < 7 && Date.now() - start < 10_000)
          await new Promise((r) => setTimeout(r, 10));
        stream.close();
        await stream.ended();
        out[format] = frames;
      }
      await c.deleteSession(s.id);
      return out;
    }, springModel);
    for (const format of ["json", "msgpack"]) {
      const frames = got[format];
      expect(frames[0].type, format).toBe("scene");
      const states = frames.slice(1);
      expect(states.every((f) => f.type === "state")).toBe(true);
      const start = states[0].step;
      expect(states.map((f) => f.step)).toEqual([0, 2, 4, 6, 8, 10].map((k) => start + k));
      for (const f of states) expect(f.x).toBeCloseTo(recurrence(f.step).x, 12);
    }
  });

  it("reconnects after a dropped connection, ends on deletion, gives up on an unknown session", async () => {
    const { page } = d;
    const id = await page.evaluate(async (model) => {
      const g = globalThis as unknown as PageGlobals;
      const c = new g.moreau.MoreauClient(location.origin);
      const s = await c.createSession(model);
      g.statuses = [];
      g.frames = [];
      g.stream = c.stream(
        s.id,
        { reconnect: { initialDelayMs: 50 } },
        {
          onScene: (f) => g.frames?.push({ type: f.type, step: f.step }),
          onState: (f) => g.frames?.push({ type: f.type, step: f.step }),
          onStatus: (st) => g.statuses?.push(st),
        },
      );
      await g.stream.opened();
      return s.id;
    }, springModel);
    const wait = (cond: string) =>
      page.waitForFunction(`(() => { const g = globalThis; return ${cond}; })()`, null, {
        timeout: 10_000,
        polling: 20,
      });
    await wait("g.frames.length >= 2");
    expect(dropStreams(d.app, id)).toBe(1);
    await wait(
      "g.stream.reconnects === 1 && g.stream.status === 'open' && g.frames.filter((f) => f.type === 'scene').length === 2",
    );
    expect(await page.evaluate(() => (globalThis as unknown as PageGlobals).statuses)).toContain(
      "reconnecting",
    );

    const ended = await page.evaluate(async (sid) => {
      const g = globalThis as unknown as PageGlobals;
      const c = new g.moreau.MoreauClient(location.origin);
      await c.deleteSession(sid);
      await g.stream?.ended();
      const ghost = c.stream("no-such-session", { reconnect: { initialDelayMs: 20 } }, {});
      await ghost.ended();
      return {
        close: g.stream?.lastClose?.code,
        reconnects: g.stream?.reconnects,
        ghost: { status: ghost.status, reconnects: ghost.reconnects, frames: ghost.frames },
      };
    }, id);
    expect(ended).toEqual({
      close: 1000,
      reconnects: 1,
      ghost: { status: "closed", reconnects: 0, frames: 0 },
    });
  });
});
