/**
 * Sessions: create, list, inspect, step, run, pause, reset, patch, delete, and the session's
 * assembly analysis. Bodies are validated with the zod schemas of schemas/api.ts; State and
 * AssemblyResult answers are the worker's JSON bytes (see src/server/reply.ts).
 */
import type { FastifyReply, FastifyRequest } from "fastify";
import type { FastifyPluginAsyncZod } from "fastify-type-provider-zod";
import { z } from "zod";
import {
  CreateSessionBody,
  ErrorBody,
  PatchSessionBody,
  RunAccepted,
  RunBody,
  Session,
  SessionAssemblyBody,
  SessionList,
  SessionParams,
  StepBody,
} from "../schemas/api";
import { AssemblyResult, State } from "../schemas/state";
import { ApiError } from "../src/server/errors";
import { sendJsonBytes } from "../src/server/reply";

const errors = (...codes: number[]) =>
  Object.fromEntries(codes.map((c) => [c, ErrorBody])) as Record<number, typeof ErrorBody>;

/** 413 before validation for models with more bodies than MAX_BODIES. */
export function limitBodies(maxBodies: number) {
  return async (req: FastifyRequest, _reply: FastifyReply) => {
    const bodies = (req.body as { model?: { bodies?: unknown } } | undefined)?.model?.bodies;
    if (Array.isArray(bodies) && bodies.length > maxBodies)
      throw new ApiError(
        "payload_too_large",
        `the model has ${bodies.length} bodies; the limit is ${maxBodies} (MAX_BODIES)`,
        { bodies: bodies.length, limit: maxBodies },
      );
  };
}

const sessions: FastifyPluginAsyncZod = async (app) => {
  const { sessions: manager, config } = app.moreau;
  const tags = ["sessions"];

  app.post(
    "/v1/sessions",
    {
      preValidation: limitBodies(config.maxBodies),
      schema: {
        tags,
        summary: "Create a session from a model",
        body: CreateSessionBody,
        response: { 201: Session, ...errors(400, 413, 429, 503) },
      },
    },
    async (req, reply) => {
      const s = await manager.create(req.body.model);
      reply.code(201).header("location", `/v1/sessions/${s.id}`);
      return s;
    },
  );

  app.get(
    "/v1/sessions",
    { schema: { tags, summary: "List sessions", response: { 200: SessionList } } },
    async () => ({ sessions: manager.list() }),
  );

  app.get(
    "/v1/sessions/:id",
    {
      schema: {
        tags,
        summary: "A session: status, time, step, counts",
        params: SessionParams,
        response: { 200: Session, ...errors(404) },
      },
    },
    async (req) => manager.get(req.params.id),
  );

  app.get(
    "/v1/sessions/:id/state",
    {
      schema: {
        tags,
        summary: "The session's current State",
        params: SessionParams,
        response: { 200: State, ...errors(404) },
      },
    },
    async (req, reply) => sendJsonBytes(reply, await manager.state(req.params.id)),
  );

  app.post(
    "/v1/sessions/:id/step",
    {
      schema: {
        tags,
        summary: "Advance a number of steps (or a duration) and answer the State after them",
        params: SessionParams,
        body: StepBody,
        response: { 200: State, ...errors(400, 404, 409, 422, 500, 504) },
      },
    },
    async (req, reply) => sendJsonBytes(reply, await manager.step(req.params.id, req.body)),
  );

  app.post(
    "/v1/sessions/:id/run",
    {
      schema: {
        tags,
        summary: "Step continuously at a real-time factor (null: as fast as possible)",
        params: SessionParams,
        body: RunBody,
        response: { 202: RunAccepted, ...errors(400, 404, 409) },
      },
    },
    async (req, reply) => {
      const s = await manager.run(req.params.id, req.body.realtimeFactor, req.body.until ?? null);
      reply.code(202);
      return {
        session: s,
        message:
          s.run?.realtimeFactor === null
            ? "running as fast as possible"
            : `running at ${s.run?.realtimeFactor}× real time`,
      };
    },
  );

  app.post(
    "/v1/sessions/:id/pause",
    {
      schema: {
        tags,
        summary: "Pause a run",
        params: SessionParams,
        response: { 200: Session, ...errors(404, 409) },
      },
    },
    async (req) => manager.pause(req.params.id),
  );

  app.post(
    "/v1/sessions/:id/reset",
    {
      schema: {
        tags,
        summary: "Back to t = 0 as loaded (stops a run; rebuilds a session lost with its worker)",
        params: SessionParams,
        response: { 200: State, ...errors(404) },
      },
    },
    async (req, reply) => sendJsonBytes(reply, await manager.reset(req.params.id)),
  );

  app.patch(
    "/v1/sessions/:id",
    {
      schema: {
        tags,
        summary: "Change solver settings, gravity or contact parameters",
        params: SessionParams,
        body: PatchSessionBody,
        response: { 200: Session, ...errors(400, 404, 409) },
      },
    },
    async (req) => manager.patch(req.params.id, req.body),
  );

  app.delete(
    "/v1/sessions/:id",
    {
      schema: {
        tags,
        summary: "Delete a session (closes its streams)",
        params: SessionParams,
        response: { 204: z.undefined(), ...errors(404) },
      },
    },
    async (req, reply) => {
      await manager.delete(req.params.id);
      return reply.code(204).send();
    },
  );

  app.post(
    "/v1/sessions/:id/assembly",
    {
      schema: {
        tags: ["assembly"],
        summary: "Assembly analysis of the session's current configuration",
        params: SessionParams,
        body: SessionAssemblyBody,
        response: { 200: AssemblyResult, ...errors(400, 404, 409, 500) },
      },
    },
    async (req, reply) => {
      const { apply, ...options } = req.body;
      const a = await manager.assemble(req.params.id, options, apply);
      return sendJsonBytes(reply, a.result);
    },
  );
};

export default sessions;
