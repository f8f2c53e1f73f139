/**
 * GET /v1/sessions/:id/stream: WebSocket of a session's frames. Query: `every` (frames at
 * step numbers divisible by it, default 1), `fields` (comma-separated: bodies, contacts,
 * joints, actuators, observation, energy, solver, contactPeak; default all but solver and
 * contactPeak), `format` (json text frames or msgpack binary frames). First frame
 * `{ type: "scene" }`, then `{ type: "state", ..., dropped }`. An unknown session refuses
 * the upgrade with 404, a bad query with 400; deleting the session closes the stream with
 * 1000 "session deleted", shutdown with 1001. With API keys the upgrade request needs `Authorization: Bearer
 * <key>` (401 before the upgrade) and a session of another key is 404; upgrades count in
 * the per-key rate limit like any request.
 *
 * Limits (src/server/stream.ts): a session has at most MAX_SUBSCRIBERS_PER_SESSION streams,
 * an API key MAX_SUBSCRIBERS_PER_KEY, the server MAX_SUBSCRIBERS; one more is refused
 * before the upgrade with 429 `too_many_subscribers` naming the limit (details.limit). A
 * stream gets at most STREAM_FPS frames per second of wall time (bursts of two seconds'
 * worth pass whole), or `?maxFps=` (a number > 0, at most STREAM_MAX_FPS, else 400); the
 * frames over the rate are skipped and counted in the next frame's `dropped`, and the
 * latest one is sent when the rate allows.
 *
 * The client may send `{ type: "inputs", inputs, step?, ref? }` and `{ type: "step",
 * steps, ref? }` (schemas/api.ts StreamClientMessage; JSON text, or msgpack binary) to
 * drive the session as POST /v1/sessions/:id/inputs and /step do, handled one at a time
 * in arrival order; the answer `{ type: "inputs", step, pending, ref }`, `{ type:
 * "stepped", step, time, ref }` or `{ type: "error", error, message, details, ref }` comes
 * on the same socket, in the stream's format, after the frames of the steps it took.
 *
 * In a cluster (REDIS_URL) any node serves the stream of any session, from the Redis logs
 * (src/server/cluster/relay.ts): every state frame then carries `seq`, its number in the
 * log of its class (every, fields, format), and `?from=<seq>` resumes after that frame —
 * a client that reconnects (to any node, after a node died) with the last seq it got
 * receives every frame since, none twice. Its commands go to the session's owner.
 */
import type { FastifyPluginAsyncZod } from "fastify-type-provider-zod";
import { unpack } from "msgpackr";
import { z } from "zod";
import { SessionParams, StreamClientMessage, StreamQuery } from "../schemas/api";
import { ApiError, notFound, toApiError } from "../src/server/errors";
import { encode } from "../src/server/frames";
import { StreamAdmission } from "../src/server/stream";

/**
 * The stream's query: StreamQuery and the frame rate the client asks for; strict, as every
 * request part: a misspelt parameter (`?evry=10`) is a 400 naming it, not a stream of every step.
 */
const StreamRouteQuery = StreamQuery.strict().extend({
  maxFps: z.coerce
    .number()
    .gt(0)
    .optional()
    .meta({ description: "frames per second of wall time at most (default STREAM_FPS)" }),
  from: z.coerce.number().int().min(0).optional().meta({
    description:
      "cluster (REDIS_URL): resume after the frame with this seq (the last one received): every frame since, none twice",
  }),
});

const stream: FastifyPluginAsyncZod = async (app) => {
  const { sessions, config, cluster } = app.moreau;
  const admission = new StreamAdmission({
    perSession: config.maxSubscribersPerSession,
    perKey: config.maxSubscribersPerKey,
    total: config.maxSubscribers,
  });
  app.get(
    "/v1/sessions/:id/stream",
    {
      websocket: true,
      schema: {
        operationId: "streamSession",
        params: SessionParams,
        querystring: StreamRouteQuery,
      },
      // runs after validation and before the upgrade: an error here answers plain HTTP
      preHandler: async (req, reply) => {
        if (sessions.isClosing) throw new ApiError("shutting_down", "the server is shutting down");
        const { id } = req.params as { id: string };
        const exists = cluster
          ? await cluster.exists(id, req.owner)
          : sessions.exists(id, req.owner);
        if (!exists) throw notFound(id);
        // a plain GET (no upgrade) would otherwise get @fastify/websocket's empty 404
        if ((req as { ws?: boolean }).ws !== true) {
          reply.header("upgrade", "websocket");
          throw new ApiError(
            "upgrade_required",
            "this route is a WebSocket stream: connect with a WebSocket client (Upgrade: websocket)",
          );
        }
        const { maxFps } = req.query as { maxFps?: number };
        if (maxFps !== undefined && maxFps > config.streamMaxFps)
          throw new ApiError(
            "invalid_request",
            `maxFps ${maxFps} is over this server's limit of ${config.streamMaxFps} frames per second (STREAM_MAX_FPS)`,
            { part: "querystring", issues: [{ path: ["maxFps"], message: "over STREAM_MAX_FPS" }] },
          );
        // the place is held from here until the connection closes (upgraded or not)
        const ticket = admission.admit(id, req.owner);
        const connection = req.raw.socket;
        if (connection.destroyed) ticket.release();
        else connection.once("close", () => ticket.release());
      },
    },
    (socket, req) => {
      const { id } = req.params;
      const format = req.query.format;
      const answer = (value: unknown) => {
        // the frames of the steps this answers go first, even those held back by the rate
        sessions.streams.flush(socket);
        // in the stream's format: JSON text frames, or msgpack binary ones
        if (socket.readyState === socket.OPEN)
          socket.send(encode(value, format), { binary: format === "msgpack" });
      };
      let queue: Promise<void> = Promise.resolve();
      socket.on("message", (data, isBinary) => {
        let ref: string | number | undefined;
        let message: unknown;
        try {
          const bytes = Array.isArray(data)
            ? Buffer.concat(data)
            : Buffer.from(data as ArrayBuffer);
          message = isBinary ? unpack(bytes) : JSON.parse(bytes.toString("utf8"));
          const r = (message as { ref?: unknown } | null)?.ref;
          if (typeof r === "string" || typeof r === "number") ref = r;
        } catch (err) {
          // answered in turn, after the messages before it (the README: in arrival order)
          const text = `unreadable message: ${(err as Error).message}`;
          queue = queue.then(() =>
            answer({ type: "error", error: "invalid_request", message: text }),
          );
          return;
        }
        const parsed = StreamClientMessage.safeParse(message);
        if (!parsed.success) {
          const issues = parsed.error.issues.map((i) => ({ path: i.path, message: i.message }));
          queue = queue.then(() =>
            answer({
              type: "error",
              ref,
              error: "invalid_request",
              message: "invalid message",
              details: { issues },
            }),
          );
          return;
        }
        const m = parsed.data;
        // one at a time, in arrival order: inputs then a step act in that order
        queue = queue.then(async () => {
          try {
            // in a cluster, a session held by another node is driven there
            if (cluster && !sessions.local(id)) {
              const path = `/v1/sessions/${encodeURIComponent(id)}/${m.type === "inputs" ? "inputs" : "step"}`;
              const { type: _type, ref: _ref, ...body } = m;
              const r = await cluster.request(id, "POST", path, body, req.headers);
              const b = r.body as Record<string, unknown>;
              if (r.status >= 400) answer({ type: "error", ref, ...b });
              else if (m.type === "inputs") answer({ type: "inputs", ref, ...b });
              else answer({ type: "stepped", ref, step: b.step, time: b.time });
            } else if (m.type === "inputs")
              answer({ type: "inputs", ref, ...(await sessions.inputs(id, m, req.owner)) });
            else {
              await sessions.step(id, { steps: m.steps }, req.owner);
              const s = sessions.get(id, req.owner);
              answer({ type: "stepped", ref, step: s.step, time: s.time });
            }
          } catch (err) {
            answer({ type: "error", ref, ...toApiError(err).toJSON() });
          }
        });
      });
      sessions.streams.limitRate(socket, req.query.maxFps ?? config.streamFps);
      if (cluster)
        void cluster.relay
          .subscribe(id, socket, req.query, req.query.from ?? null)
          .catch(() => socket.close(1011, "the cluster's stream is unavailable"));
      else sessions.subscribe(id, socket, req.query);
    },
  );
};

export default stream;
