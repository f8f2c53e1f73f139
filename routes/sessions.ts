import type { FastifyPluginAsyncZod } from "fastify-type-provider-zod";
import { z } from "zod";
import {
  CreateSessionBody,
  ErrorBody,
  InputsAccepted,
  InputsBody,
  NoBody,
  PatchSessionBody,
  RecordingQuery,
  RunAccepted,
  RunBody,
  Session,
  SessionAssemblyBody,
  SessionList,
  SessionParams,
  Snapshot,
  StepBody,
} from "../schemas/api";
import { Recording } from "../schemas/recording";
import { AssemblyResult, State } from "../schemas/state";
import { ApiError } from "../src/server/errors";
import { sendJsonBytes } from "../src/server/reply";
import { JsonText } from "../src/server/request-body";

const errors = (...codes: number[]) =>
  Object.fromEntries(codes.map((c) => [c, ErrorBody])) as Record<number, typeof ErrorBody>;

/**
 * The unparsed JSON bytes of a model-carrying body (routes flagged `bodyInWorker`, whose
 * body a worker parses and validates: src/server/request-body.ts); its declared schema
 * documents it.
 */
export function bodyBytes(body: unknown): Uint8Array {
  if (!(body instanceof JsonText)) throw new ApiError("internal", "the body was parsed here");
  return body.bytes;
}

const sessions: FastifyPluginAsyncZod = async (app) => {
  const { sessions: manager, config } = app.moreau;
  const tags = ["sessions"];

  app.post(
    "/v1/sessions",
    {
      // a full server or key is refused before the body is read; the body (a model, a
      // snapshot or a recording: up to MAX_MODEL_BYTES) is parsed and validated in a worker
      onRequest: async (req) => manager.checkCapacity(req.owner),
      bodyLimit: config.maxModelBytes,
      config: { bodyInWorker: true },
      schema: {
        tags,
        operationId: "createSession",
        summary:
          "Create a session from a model, resume one from a snapshot (GET /v1/sessions/:id/snapshot), or replay a recording (GET /v1/sessions/:id/recording)",
        body: CreateSessionBody,
        response: { 201: Session, ...errors(400, 401, 413, 415, 429, 503, 504) },
      },
    },
    async (req, reply) => {
      const s = await manager.create({ body: bodyBytes(req.body) }, req.owner);
      reply.code(201).header("location", `/v1/sessions/${s.id}`);
      return s;
    },
  );

  app.get(
    "/v1/sessions",
    {
      schema: {
        tags,
        operationId: "listSessions",
        summary: "List sessions",
        response: { 200: SessionList, ...errors(401, 429) },
      },
    },
    async (req) => ({ sessions: manager.list(req.owner) }),
  );

  app.get(
    "/v1/sessions/:id",
    {
      schema: {
        tags,
        operationId: "getSession",
        summary: "A session: status, time, step, counts",
        params: SessionParams,
        response: { 200: Session, ...errors(404) },
      },
    },
    async (req) => manager.get(req.params.id, req.owner),
  );

  app.get(
    "/v1/sessions/:id/state",
    {
      schema: {
        tags,
        operationId: "getSessionState",
        summary: "The session's current State",
        params: SessionParams,
        response: { 200: State, ...errors(404) },
      },
    },
    async (req, reply) => sendJsonBytes(reply, await manager.state(req.params.id, req.owner)),
  );

  app.post(
    "/v1/sessions/:id/step",
    {
      schema: {
        tags,
        operationId: "stepSession",
        summary: "Advance a number of steps (or a duration) and answer the State after them",
        params: SessionParams,
        body: StepBody,
        response: { 200: State, ...errors(400, 404, 409, 422, 500, 504) },
      },
    },
    async (req, reply) =>
      sendJsonBytes(reply, await manager.step(req.params.id, req.body, req.owner)),
  );

  app.post(
    "/v1/sessions/:id/run",
    {
      schema: {
        tags,
        operationId: "runSession",
        summary: "Step continuously at a real-time factor (null: as fast as possible)",
        params: SessionParams,
        body: RunBody,
        response: { 202: RunAccepted, ...errors(400, 404, 409) },
      },
    },
    async (req, reply) => {
      const s = await manager.run(
        req.params.id,
        req.body.realtimeFactor,
        req.body.until ?? null,
        req.owner,
      );
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
        operationId: "pauseSession",
        summary: "Pause a run",
        params: SessionParams,
        body: NoBody,
        response: { 200: Session, ...errors(400, 404, 409) },
      },
    },
    async (req) => manager.pause(req.params.id, req.owner),
  );

  app.post(
    "/v1/sessions/:id/reset",
    {
      schema: {
        tags,
        operationId: "resetSession",
        summary: "Back to t = 0 as loaded (stops a run; rebuilds a session lost with its worker)",
        params: SessionParams,
        body: NoBody,
        response: { 200: State, ...errors(400, 404) },
      },
    },
    async (req, reply) => sendJsonBytes(reply, await manager.reset(req.params.id, req.owner)),
  );

  app.patch(
    "/v1/sessions/:id",
    {
      schema: {
        tags,
        operationId: "patchSession",
        summary: "Change solver settings, gravity or contact parameters",
        params: SessionParams,
        body: PatchSessionBody,
        response: { 200: Session, ...errors(400, 404, 409) },
      },
    },
    async (req) => manager.patch(req.params.id, req.body, req.owner),
  );

  app.post(
    "/v1/sessions/:id/inputs",
    {
      schema: {
        tags,
        operationId: "postSessionInputs",
        summary:
          "Run-time inputs (actuator commands, loads, teleports, kicks) at the next step boundary or at a given step; the answer says at which",
        params: SessionParams,
        body: InputsBody,
        response: { 200: InputsAccepted, ...errors(400, 404, 409) },
      },
    },
    async (req) => manager.inputs(req.params.id, req.body, req.owner),
  );

  app.get(
    "/v1/sessions/:id/recording",
    {
      schema: {
        tags,
        operationId: "getSessionRecording",
        summary:
          "The model, start and every input since the session's start (creation, reset, restore), and the end hash; POST it to /v1/sessions as { recording } to replay it bit for bit",
        params: SessionParams,
        querystring: RecordingQuery,
        response: { 200: Recording, ...errors(400, 404, 409) },
      },
    },
    async (req, reply) =>
      sendJsonBytes(
        reply,
        await manager.recording(req.params.id, req.query.every ?? null, req.owner),
      ),
  );

  app.delete(
    "/v1/sessions/:id",
    {
      schema: {
        tags,
        operationId: "deleteSession",
        summary: "Delete a session (closes its streams)",
        params: SessionParams,
        response: { 204: z.undefined(), ...errors(404) },
      },
    },
    async (req, reply) => {
      await manager.delete(req.params.id, req.owner);
      return reply.code(204).send();
    },
  );

  app.get(
    "/v1/sessions/:id/snapshot",
    {
      schema: {
        tags,
        operationId: "getSessionSnapshot",
        summary:
          "The whole session (model, parameters as patched, state and solver memory), versioned; POST it back to /v1/sessions as { snapshot } to resume it",
        params: SessionParams,
        response: { 200: Snapshot, ...errors(404, 409) },
      },
    },
    async (req, reply) =>
      sendJsonBytes(reply, await manager.exportSnapshot(req.params.id, req.owner)),
  );

  app.post(
    "/v1/sessions/:id/fork",
    {
      schema: {
        tags,
        operationId: "forkSession",
        summary: "A new session copied from this one at its current step (a running one: paused)",
        params: SessionParams,
        body: NoBody,
        response: { 201: Session, ...errors(400, 404, 409, 429, 503, 504) },
      },
    },
    async (req, reply) => {
      const s = await manager.fork(req.params.id, req.owner);
      reply.code(201).header("location", `/v1/sessions/${s.id}`);
      return s;
    },
  );

  app.post(
    "/v1/sessions/:id/assembly",
    {
      schema: {
        tags: ["assembly"],
        operationId: "assembleSession",
        summary: "Assembly analysis of the session's current configuration",
        params: SessionParams,
        body: SessionAssemblyBody,
        response: { 200: AssemblyResult, ...errors(400, 404, 409, 500, 504) },
      },
    },
    async (req, reply) => {
      const { apply, ...options } = req.body;
      const a = await manager.assemble(req.params.id, options, apply, req.owner);
      return sendJsonBytes(reply, a.result);
    },
  );
};

export default sessions;
