/**
 * POST /v1/assembly: assembly analysis (positions, velocities, accelerations, reactions) of
 * a posted model; nothing is kept.
 */
import type { FastifyPluginAsyncZod } from "fastify-type-provider-zod";
import { AssemblyBody, ErrorBody } from "../schemas/api";
import { AssemblyResult } from "../schemas/state";
import { sendJsonBytes } from "../src/server/reply";
import { bodyBytes } from "./sessions";

const assembly: FastifyPluginAsyncZod = async (app) => {
  const { sessions, config } = app.moreau;
  app.post(
    "/v1/assembly",
    {
      // the model (up to MAX_MODEL_BYTES) is parsed and validated in a worker
      bodyLimit: config.maxModelBytes,
      config: { bodyInWorker: true },
      schema: {
        tags: ["assembly"],
        operationId: "assembleModel",
        summary: "Assembly analysis of a model (no session kept)",
        body: AssemblyBody,
        response: {
          200: AssemblyResult,
          400: ErrorBody,
          413: ErrorBody,
          500: ErrorBody,
          504: ErrorBody,
        },
      },
    },
    async (req, reply) => sendJsonBytes(reply, await sessions.assembleModel(bodyBytes(req.body))),
  );
};

export default assembly;
