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
 * worth pass whole), or `?maxFps=` (from STREAM_MIN_FPS to STREAM_MAX_FPS, else 400 naming
 * the bound); the frames over the rate are skipped and counted in the next frame's
 * `dropped`, and the latest one is sent when the rate allows.
 *
 * The client may send `{ type: "inputs", inputs, step?, ref? }` and `{ type: "step",
 * steps, ref? }` (schemas/api.ts StreamClientMessage; JSON text, or msgpack binary) to
 * drive the session as POST /v1/sessions/:id/inputs and /step do, taken one at a time in
 * arrival order and answered in that order (inputs taken while the previous ones' checkpoint
 * is written are kept by the next write, each answered once kept: group commit); the answer `{ type: "inputs", step, pending, ref }`, `{ type:
 * "stepped", step, time, ref }` or `{ type: "error", error, message, details, ref }` comes
 * on the same socket, in the stream's format, after the frames of the steps it took.
 * Bounds (src/server/stream.ts CommandQueue): at most MAX_PENDING_COMMANDS messages await
 * their answers (one more: `too_many_commands` at once); an answer waits while the socket
 * holds over STREAM_MAX_BUFFERED_BYTES, and the next command behind it (a client sending on
 * with both full is closed with 1008); the bytes of all sockets' queued commands stay within
 * STREAM_COMMANDS_MAX_BYTES (one more: `too_many_commands` naming it, the socket left open);
 * a closed socket's queued commands are dropped; with
 * API keys each message counts in the key's RATE_LIMIT_MAX like a request (`rate_limited`
 * beyond, not run); error answers quote at most MAX_ECHO_CHARS of what the client sent.
 *
 * In a cluster (REDIS_URL) any node serves the stream of any session, from the Redis logs
 * (src/server/cluster/relay.ts): every state frame then carries `seq`, its number in the
 * log of its class (every, fields, format), and `?from=<seq>` resumes after that frame —
 * a client that reconnects (to any node, after a node died) with the last seq it got
 * receives every frame since, none twice. Its commands go to the session's owner.
 */
import type { FastifyInstance } from "fastify";
import type { FastifyPluginAsyncZod } from "fastify-type-provider-zod";
import { unpack } from "msgpackr";
import { z } from "zod";
import { SessionParams, StreamClientMessage, StreamQuery } from "../schemas/api";
import { issuesOf, issuesSummary } from "../schemas/issues";
import { ApiError, notFound } from "../src/server/errors";
import { CommandBytes, CommandQueue, STREAM_MIN_FPS, StreamAdmission } from "../src/server/stream";

/**
 * The stream's query: StreamQuery and the frame rate the client asks for; strict, as every
 * request part: a misspelt parameter (`?evry=10`) is a 400 naming it, not a stream of every step.
 */
const StreamRouteQuery = StreamQuery.strict().extend({
  maxFps: z.coerce
    .number()
    .min(STREAM_MIN_FPS, {
      message: `must be at least ${STREAM_MIN_FPS} frames per second (STREAM_MIN_FPS)`,
    })
    .optional()
    .meta({ description: "frames per second of wall time at most (default STREAM_FPS)" }),
  from: z.coerce.number().int().min(0).optional().meta({
    description:
      "cluster (REDIS_URL): resume after the frame with this seq (the last one received): every frame since, none twice",
  }),
});

/** The verdict of the key's rate limit on a command: the error to answer, or null to run it. */
type RateVerdict = Awaited<ReturnType<ReturnType<FastifyInstance["createRateLimit"]>>>;

function rateLimited(v: RateVerdict | null): ApiError | null {
  if (v === null || v.isAllowed || !v.isExceeded) return null;
  return new ApiError(
    "rate_limited",
    `rate limit of ${v.max} requests per ${v.timeWindow / 1000} s reached for this API key (RATE_LIMIT_MAX; a command on a stream counts as a request); retry in ${v.ttlInSeconds} s`,
    { limit: v.max, retryAfterMs: v.ttl },
  );
}

const stream: FastifyPluginAsyncZod = async (app) => {
  const { sessions, config, cluster } = app.moreau;
  // the per-key rate limit of every request (app.ts: API keys and RATE_LIMIT_MAX set), for
  // the commands on a stream: the same counter as the key's requests
  const limiter = app.hasDecorator("createRateLimit") ? app.createRateLimit() : null;
  const admission = new StreamAdmission({
    perSession: config.maxSubscribersPerSession,
    perKey: config.maxSubscribersPerKey,
    total: config.maxSubscribers,
  });
  // the bytes of every socket's queued commands (STREAM_COMMANDS_MAX_BYTES)
  const commandBytes = new CommandBytes(config.streamCommandsMaxBytes);
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
      // in the stream's format: JSON text frames, or msgpack binary ones
      const commands = new CommandQueue(
        socket,
        req.query.format,
        config.streamMaxBufferedBytes,
        () =>
          // the frames of the steps an answer is for go first, even those held back by the rate
          sessions.streams.flush(socket),
        commandBytes,
      );
      // every command the socket takes counts in the key's budget as a request does
      // (RATE_LIMIT_MAX), when it runs: counted one at a time, since the store's answers to
      // concurrent counts share one object (each would read the count of all)
      const overBudget = async () =>
        limiter ? rateLimited(await limiter(req).catch(() => null)) : null;
      socket.on("message", (data, isBinary) => {
        let ref: string | number | undefined;
        const bytes = Array.isArray(data) ? Buffer.concat(data) : Buffer.from(data as ArrayBuffer);
        // parsed now for its ref, and again at its turn: a queued command holds its bytes
        // (64 KiB at most), not the parsed value, which can be ~20 times larger — 30 sockets
        // each with 31 messages of 16 000 empty objects queued behind a long step held 910 MiB
        // of the event loop's heap (MAX_SUBSCRIBERS sockets would end the process), now their
        // 44 MB of bytes
        const parse = (): unknown =>
          isBinary ? unpack(bytes) : JSON.parse(bytes.toString("utf8"));
        try {
          const r = (parse() as { ref?: unknown } | null)?.ref;
          if (typeof r === "string" || typeof r === "number") ref = r;
        } catch (err) {
          // answered in turn, after the messages before it (the README: in arrival order)
          const text = `unreadable message: ${(err as Error).message}`;
          commands.push(undefined, bytes.length, async () => {
            const limited = await overBudget();
            if (limited) return { answer: { type: "error", ...limited.toJSON() } };
            return { answer: { type: "error", error: "invalid_request", message: text } };
          });
          return;
        }
        commands.push(ref, bytes.length, async (answered) => {
          const limited = await overBudget();
          if (limited) return { answer: { type: "error", ref, ...limited.toJSON() } };
          const parsed = StreamClientMessage.safeParse(parse());
          if (!parsed.success) {
            // the message names what and where, as a REST route's 400 does ("invalid body:
            // inputs.0.value: …"): a client that shows only the message (the dashboard's
            // banner, MoreauApiError's text) read "invalid message" and nothing of why
            const issues = issuesOf(parsed.error);
            return {
              answer: {
                type: "error",
                ref,
                error: "invalid_request",
                message: `invalid message: ${issuesSummary(issues, 3)}`,
                details: { issues },
              },
            };
          }
          const m = parsed.data;
          // a step's answer follows the answers before it (the inputs sent ahead of it are
          // answered first) and the frames of its own steps
          if (m.type === "step") await answered();
          // in a cluster, a session held by another node is driven there
          if (cluster && !sessions.local(id)) {
            const path = `/v1/sessions/${encodeURIComponent(id)}/${m.type === "inputs" ? "inputs" : "step"}`;
            const { type: _type, ref: _ref, ...body } = m;
            const r = await cluster.request(id, "POST", path, body, req.headers);
            const b = r.body as Record<string, unknown>;
            if (r.status >= 400) return { answer: { type: "error", ref, ...b } };
            if (m.type === "inputs") return { answer: { type: "inputs", ref, ...b } };
            return {
              answer: { type: "stepped", ref, step: b.step, time: b.time, keptStep: b.keptStep },
            };
          }
          if (m.type === "inputs") {
            // answered once kept; the next inputs are taken meanwhile (group commit)
            const taken = await sessions.takeInputs(id, m, req.owner);
            return { answer: { type: "inputs", ref, ...taken.answer }, kept: taken.kept };
          }
          await sessions.step(id, { steps: m.steps }, req.owner);
          const s = sessions.get(id, req.owner);
          return {
            answer: {
              type: "stepped",
              ref,
              step: s.step,
              time: s.time,
              keptStep: s.checkpointStep,
            },
          };
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
