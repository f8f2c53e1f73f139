/**
 * /health, /ready, /metrics (Prometheus text with the series the issue asks for, fed by the
 * workers' counters) and /docs (Swagger UI and an OpenAPI document generated from the zod
 * schemas, listing every route of the design's table).
 */
import request from "supertest";
import { describe, expect, it } from "vitest";
import { Health, Readiness } from "../../schemas/api";
import { FrameClient } from "../support/frames";
import { sample } from "../support/metrics";
import { fallingBody } from "../support/models";
import { useServer } from "../support/server";
import { waitFor } from "../support/wait";
import { createSession, step } from "./helpers";

const server = useServer({ workers: 2 });
const api = () => request(server.app.server);

/** The value of one sample line of the Prometheus text. */
describe("health and readiness", () => {
  it("/health is ok; /ready is 200 with every worker alive", async () => {
    expect(Health.parse((await api().get("/health").expect(200)).body).status).toBe("ok");
    const r = Readiness.parse((await api().get("/ready").expect(200)).body);
    expect(r).toMatchObject({ ready: true, workers: { total: 2, alive: 2 }, closing: false });
  });
});

describe("/metrics", () => {
  it("counts sessions by status, steps, step durations, clients and frames", async () => {
    const a = await createSession(server.app, fallingBody());
    const b = await createSession(server.app, fallingBody());
    await step(server.app, a, 700);
    await step(server.app, b, 300);
    const c = new FrameClient(`${server.ws}/v1/sessions/${b}/stream`);
    await c.open();
    await c.waitForMessages(2);
    await step(server.app, b, 5);
    await c.waitForMessages(7);
    // workers report their counters every 250 ms
    const text = await waitFor(async () => {
      const t = (await api().get("/metrics").expect(200)).text;
      return sample(t, "moreau_steps_total") >= 1005 ? t : null;
    });
    expect(sample(text, "moreau_steps_total")).toBe(1005);
    expect(sample(text, 'moreau_sessions{status="ready"}')).toBe(2);
    expect(sample(text, 'moreau_sessions{status="running"}')).toBe(0);
    expect(sample(text, 'moreau_sessions{status="diverged"}')).toBe(0);
    expect(sample(text, "moreau_step_duration_seconds_count")).toBe(1005);
    expect(sample(text, 'moreau_step_duration_seconds_bucket{le="+Inf"}')).toBe(1005);
    expect(sample(text, "moreau_step_duration_seconds_sum")).toBeGreaterThan(0);
    expect(sample(text, "moreau_ws_clients")).toBe(1);
    expect(sample(text, "moreau_stream_frames_sent_total")).toBe(6);
    expect(sample(text, "moreau_stream_dropped_frames_total")).toBe(0);
    expect(text).toMatch(/^moreau_worker_busy_seconds_total\{worker="0"\} [0-9.e-]+$/m);
    expect(text).toMatch(/^moreau_worker_busy_seconds_total\{worker="1"\} [0-9.e-]+$/m);
    expect(sample(text, "moreau_workers_alive")).toBe(2);
    expect(text).toMatch(/^moreau_process_cpu_seconds_total /m);
    expect(text).toMatch(
      /moreau_http_request_duration_seconds_count\{method="POST",route="\/v1\/sessions\/:id\/step",status_code="200"\} 3/,
    );
    // cumulative buckets never decrease
    const buckets = text
      .split("\n")
      .filter((l) => l.startsWith("moreau_step_duration_seconds_bucket"))
      .map((l) => Number(l.split(" ")[1]));
    for (let i = 1; i < buckets.length; i++)
      expect(buckets[i]).toBeGreaterThanOrEqual(buckets[i - 1]);
    c.close();
    await api().delete(`/v1/sessions/${a}`).expect(204);
    await api().delete(`/v1/sessions/${b}`).expect(204);
  });
});

describe("/docs", () => {
  it("serves Swagger UI and an OpenAPI document of every route from the zod schemas", async () => {
    const ui = await api().get("/docs/").redirects(2);
    expect(ui.status).toBe(200);
    expect(ui.text).toContain("swagger");
    const doc = (await api().get("/docs/json").expect(200)).body;
    expect(doc.openapi).toBe("3.1.0");
    const ops = Object.entries(doc.paths as Record<string, Record<string, unknown>>).flatMap(
      ([p, methods]) => Object.keys(methods).map((m) => `${m.toUpperCase()} ${p}`),
    );
    expect(ops).toEqual(
      expect.arrayContaining([
        "POST /v1/sessions",
        "GET /v1/sessions",
        "GET /v1/sessions/{id}",
        "GET /v1/sessions/{id}/state",
        "POST /v1/sessions/{id}/step",
        "POST /v1/sessions/{id}/run",
        "POST /v1/sessions/{id}/pause",
        "POST /v1/sessions/{id}/reset",
        "PATCH /v1/sessions/{id}",
        "DELETE /v1/sessions/{id}",
        "POST /v1/sessions/{id}/assembly",
        "GET /v1/sessions/{id}/snapshot",
        "POST /v1/sessions/{id}/fork",
        "POST /v1/assembly",
        "GET /health",
        "GET /ready",
        "GET /metrics",
      ]),
    );
    const schemas = Object.keys(doc.components.schemas);
    for (const name of ["Session", "State", "AssemblyResult", "Error", "StepRequest"])
      expect(
        schemas.some((s) => s === name || s === `${name}Input` || s === `${name}Output`),
        name,
      ).toBe(true);
    expect(schemas.some((s) => s.startsWith("Model"))).toBe(true);
    // the create body refers to the model schema with its constraints
    const create = doc.paths["/v1/sessions"].post;
    const ref = create.requestBody.content["application/json"].schema.$ref as string;
    const body = doc.components.schemas[ref.split("/").at(-1) as string];
    // exactly one of model and snapshot (a refinement), each a reference to its schema
    expect(body.required ?? []).toEqual([]);
    expect(JSON.stringify(body.properties.model)).toMatch(/Model/);
    expect(JSON.stringify(body.properties.snapshot)).toMatch(/Snapshot/);
    expect(create.responses["201"]).toBeDefined();
    expect(create.responses["429"]).toBeDefined();
  });
});
