/**
 * Connections (issue 26, items 9 and 10), on 127.0.0.1 with short limits:
 * - a client that sends half a request line, half its headers or half its body and goes
 *   quiet is answered 408 and closed (HEADERS_TIMEOUT_MS, RECEIVE_TIMEOUT_MS); a silent
 *   connection and an idle keep-alive one are closed too; MAX_CONNECTIONS caps open
 *   connections (the one over it is closed at once, and a place frees when one closes);
 * - a request whose answer takes longer than CONNECTION_TIMEOUT_MS to compute is not cut;
 * - a body over MAX_MODEL_BYTES is answered 413 and Node's fetch (in another process, as a
 *   real client is) reads that 413, instead of failing with EPIPE.
 * Bounds are generous (seconds against limits of a few hundred milliseconds).
 */
import { execFile } from "node:child_process";
import { connect, type Socket } from "node:net";
import request from "supertest";
import { describe, expect, it } from "vitest";
import { fallingBody } from "../support/models";
import { useServer } from "../support/server";
import { waitFor } from "../support/wait";

/** What a raw socket received until the server closed it, or until `withinMs` passed. */
interface Outcome {
  closed: boolean;
  data: string;
  afterMs: number;
}

function rawClient(port: number, localAddress = "127.0.0.1") {
  const socket: Socket = connect({ port, host: "127.0.0.1", localAddress });
  let data = "";
  let closed = false;
  const started = performance.now();
  let closedAt = 0;
  socket.setEncoding("utf8");
  socket.on("data", (d: string) => {
    data += d;
  });
  socket.on("error", () => undefined);
  socket.on("close", () => {
    closed = true;
    closedAt = performance.now();
  });
  const ready = new Promise<void>((resolve) => socket.once("connect", () => resolve()));
  return {
    socket,
    ready,
    write: (s: string) => socket.write(s),
    /** waits until the server closes the connection or `withinMs` passes */
    async outcome(withinMs: number): Promise<Outcome> {
      try {
        await waitFor(async () => closed, withinMs, 10);
      } catch {
        // still open
      }
      return { closed, data, afterMs: (closed ? closedAt : performance.now()) - started };
    },
    destroy: () => socket.destroy(),
  };
}

describe("slow and silent clients (HEADERS_TIMEOUT_MS, RECEIVE_TIMEOUT_MS, KEEP_ALIVE_TIMEOUT_MS)", () => {
  const server = useServer({
    headersTimeoutMs: 300,
    receiveTimeoutMs: 600,
    keepAliveTimeoutMs: 300,
    connectionTimeoutMs: 5000,
  });

  it("half a request line, then nothing: 408 and closed", async () => {
    const c = rawClient(server.port);
    await c.ready;
    c.write("POST /v1/sess");
    const o = await c.outcome(5000);
    expect(o.closed).toBe(true);
    expect(o.data).toMatch(/^HTTP\/1\.1 408/);
  });

  it("half the headers, then nothing: 408 and closed", async () => {
    const c = rawClient(server.port);
    await c.ready;
    c.write("POST /v1/sessions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: appl");
    const o = await c.outcome(5000);
    expect(o.closed).toBe(true);
    expect(o.data).toMatch(/^HTTP\/1\.1 408/);
  });

  it("whole headers, half the body, then nothing: 408 and closed", async () => {
    const c = rawClient(server.port);
    await c.ready;
    c.write(
      'POST /v1/sessions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"model":',
    );
    const o = await c.outcome(5000);
    expect(o.closed).toBe(true);
    expect(o.data).toMatch(/^HTTP\/1\.1 408/);
    // in the service's format (before: Fastify's {"error":"Request Timeout","message":"Client Timeout"})
    expect(errorBody(o.data)).toMatchObject({ error: "request_timeout" });
    expect(errorBody(o.data).message).toContain("RECEIVE_TIMEOUT_MS");
  });

  it("a connection that sends nothing is closed", async () => {
    const c = rawClient(server.port);
    await c.ready;
    const o = await c.outcome(5000);
    expect(o.closed).toBe(true);
  });

  it("an idle keep-alive connection is closed after its answer", async () => {
    const c = rawClient(server.port);
    await c.ready;
    c.write("GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
    const o = await c.outcome(5000);
    expect(o.data).toMatch(/^HTTP\/1\.1 200/);
    expect(o.closed).toBe(true);
  });

  it("a request received whole in time is answered", async () => {
    const c = rawClient(server.port);
    await c.ready;
    c.write("GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n");
    const o = await c.outcome(5000);
    expect(o.data).toMatch(/^HTTP\/1\.1 200/);
  });
});

/** The JSON body of the last HTTP answer in `data`. */
function errorBody(data: string): { error: string; message: string; details?: unknown } {
  return JSON.parse(data.slice(data.lastIndexOf("\r\n\r\n") + 4));
}

describe("requests Node's HTTP parser refuses", () => {
  const server = useServer({});

  it("a Content-Length shorter than the body: the rest, read as the next request, is answered 400 in the service's format", async () => {
    const c = rawClient(server.port);
    await c.ready;
    // the first request takes 2 bytes of body (answered 404: no POST /health); `oops {}` is
    // then parsed as a request line
    c.write(
      "POST /health HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 2\r\n\r\n{}oops {}\r\n\r\n",
    );
    const o = await c.outcome(5000);
    expect(o.closed).toBe(true);
    // the first request's answer, then the parser's
    expect(o.data).toMatch(/^HTTP\/1\.1 404 /);
    expect(o.data).toMatch(/HTTP\/1\.1 400 Bad Request\r\nContent-Type: application\/json/);
    // before: {"error":"Bad Request","message":"Client Error","statusCode":400}
    const body = errorBody(o.data);
    expect(body.error).toBe("invalid_request");
    expect(body.message).toContain("Content-Length");
    expect(body.details).toEqual({ parser: "HPE_INVALID_METHOD" });
  });

  it("two different Content-Length headers: 400 in the service's format, naming the parser's code", async () => {
    const c = rawClient(server.port);
    await c.ready;
    c.write(
      "POST /v1/sessions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 2\r\nContent-Length: 9\r\n\r\n{}",
    );
    const o = await c.outcome(5000);
    expect(o.closed).toBe(true);
    expect(o.data).toMatch(/^HTTP\/1\.1 400 /);
    const body = errorBody(o.data);
    expect(body.error).toBe("invalid_request");
    expect(body.details).toEqual({ parser: expect.stringMatching(/^HPE_/) });
  });
});

describe("headers over Node's limit", () => {
  const server = useServer({});

  it("are answered 431 headers_too_large in the service's format", async () => {
    const c = rawClient(server.port);
    await c.ready;
    c.write(`GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: ${"a".repeat(20_000)}\r\n\r\n`);
    const o = await c.outcome(5000);
    expect(o.closed).toBe(true);
    expect(o.data).toMatch(/^HTTP\/1\.1 431 /);
    // before: {"error":"Request Header Fields Too Large","message":"Exceeded maximum allowed HTTP header size"}
    expect(errorBody(o.data).error).toBe("headers_too_large");
  });
});

describe("CONNECTION_TIMEOUT_MS", () => {
  const server = useServer({ connectionTimeoutMs: 200, headersTimeoutMs: 5000 });

  it("closes a connection on which nothing moves", async () => {
    const c = rawClient(server.port);
    await c.ready;
    c.write("GET /health HT");
    const o = await c.outcome(5000);
    expect(o.closed).toBe(true);
  });

  it("does not cut a request whose answer takes longer to compute", async () => {
    // a 3000-body model stepped until its answer takes well over 200 ms on any machine
    const bodies = Array.from({ length: 3000 }, (_, i) => ({
      id: `p${i}`,
      kind: "particle",
      mass: 1,
      position: [i, 0, 0],
    }));
    const created = await request(server.app.server)
      .post("/v1/sessions")
      .send({ model: { name: "slow", bodies } })
      .expect(201);
    const id = created.body.id as string;
    let steps = 50;
    for (;;) {
      const t0 = performance.now();
      const r = await request(server.app.server).post(`/v1/sessions/${id}/step`).send({ steps });
      const ms = performance.now() - t0;
      expect(r.status).toBe(200);
      if (ms > 600) break; // answered although its connection was silent for > 200 ms
      steps *= 4;
      if (steps > 1_000_000) throw new Error("the step never took long enough");
    }
  });
});

describe("MAX_CONNECTIONS", () => {
  const server = useServer({ maxConnections: 2, headersTimeoutMs: 20_000 });

  it("closes a connection over the cap at once; a place frees when one closes", async () => {
    const a = rawClient(server.port);
    const b = rawClient(server.port);
    await Promise.all([a.ready, b.ready]);
    // the two are accepted (they stay open)
    await waitFor(
      async () =>
        new Promise<boolean>((res) =>
          server.app.server.getConnections((_e, n) => {
            res(n === 2);
          }),
        ),
    );
    const c = rawClient(server.port);
    await c.ready;
    const o = await c.outcome(5000);
    expect(o.closed).toBe(true);
    expect(o.data).toBe("");
    expect((await a.outcome(50)).closed).toBe(false);
    a.destroy();
    await waitFor(
      async () =>
        new Promise<boolean>((res) =>
          server.app.server.getConnections((_e, n) => {
            res(n === 1);
          }),
        ),
    );
    const d = rawClient(server.port);
    await d.ready;
    d.write("GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n");
    expect((await d.outcome(5000)).data).toMatch(/^HTTP\/1\.1 200/);
    b.destroy();
  });
});

/** POSTs a body of `size` bytes with Node's fetch from another process (a real client). */
function fetchFromChild(url: string, size: number, times: number): Promise<unknown[]> {
  const script = `
const [url, size, times] = process.argv.slice(1);
const body = JSON.stringify({ model: { name: "x".repeat(Number(size)) } });
const out = [];
for (let i = 0; i < Number(times); i++) {
  try {
    const r = await fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body });
    out.push({ status: r.status, body: await r.json() });
  } catch (e) {
    out.push({ error: String(e.cause?.code ?? e.message) });
  }
}
process.stdout.write(JSON.stringify(out));`;
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      ["--input-type=module", "-e", script, url, String(size), String(times)],
      { timeout: 60_000 },
      (err, stdout) => (err ? reject(err) : resolve(JSON.parse(stdout))),
    );
  });
}

describe("a body over MAX_MODEL_BYTES", () => {
  const server = useServer({ maxModelBytes: 16 * 1024, maxDrainBytes: 32 * 1024 * 1024 });

  it("is answered 413 and Node's fetch reads the answer (4 MB, several times)", async () => {
    const results = (await fetchFromChild(`${server.url}/v1/sessions`, 4_000_000, 3)) as {
      status?: number;
      error?: string;
    }[];
    // before: the server closed while the client was still sending, and fetch failed (EPIPE)
    expect(results.map((r) => r.status ?? r.error)).toEqual([413, 413, 413]);
    expect(results).toEqual(
      Array.from({ length: 3 }, () => ({
        status: 413,
        body: {
          error: "payload_too_large",
          message: "request body over 16384 bytes (MAX_MODEL_BYTES)",
          details: { limit: "MAX_MODEL_BYTES", max: 16384 },
        },
      })),
    );
    // and the server goes on
    await request(server.app.server)
      .post("/v1/sessions")
      .send({ model: fallingBody() })
      .expect(201);
  });

  it("past MAX_DRAIN_BYTES (announced by Content-Length) the connection is closed after the 413", async () => {
    const port = Number(new URL(server.url).port);
    const c = rawClient(port);
    await c.ready;
    c.write(
      `POST /v1/sessions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ${64 * 1024 * 1024}\r\n\r\n{`,
    );
    const o = await c.outcome(5000);
    expect(o.data).toMatch(/^HTTP\/1\.1 413/);
    expect(o.data.toLowerCase()).toContain("connection: close");
    expect(o.closed).toBe(true);
  });
});
