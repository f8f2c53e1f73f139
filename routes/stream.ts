/**
 * GET /v1/sessions/:id/stream: WebSocket of a session's frames. Query: `every` (frames at
 * step numbers divisible by it, default 1), `fields` (comma-separated: bodies, contacts,
 * joints, energy, solver; default the first four), `format` (json text frames or msgpack
 * binary frames). First frame `{ type: "scene" }`, then `{ type: "state", ..., dropped }`.
 * An unknown session refuses the upgrade with 404, a bad query with 400; deleting the
 * session closes the stream with 1000 "session deleted", shutdown with 1001. With API keys
 * the upgrade request needs `Authorization: Bearer <key>` (401 before the upgrade) and a
 * session of another key is 404.
 */
import type { FastifyPluginAsyncZod } from "fastify-type-provider-zod";
import { SessionParams, StreamQuery } from "../schemas/api";
import { ApiError, notFound } from "../src/server/errors";

const stream: FastifyPluginAsyncZod = async (app) => {
  const { sessions } = app.moreau;
  app.get(
    "/v1/sessions/:id/stream",
    {
      websocket: true,
      schema: { params: SessionParams, querystring: StreamQuery },
      // runs after validation and before the upgrade: an error here answers plain HTTP
      preHandler: async (req) => {
        if (sessions.isClosing) throw new ApiError("shutting_down", "the server is shutting down");
        const { id } = req.params as { id: string };
        if (!sessions.exists(id, req.owner)) throw notFound(id);
      },
    },
    (socket, req) => {
      sessions.subscribe(req.params.id, socket, req.query);
    },
  );
};

export default stream;
