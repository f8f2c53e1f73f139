/**
 * Shared pieces of the API tests: requests through supertest on an app (create a session,
 * read its state, step it), answered or thrown. The app, the models, waiting and the frame
 * collector are in test/support (server.ts, models.ts, wait.ts, frames.ts).
 */
import request from "supertest";
import { State, type StateOut } from "../../schemas/state";
import type { MoreauApp } from "../../src/server/app";

export const G = 9.81;

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
