/** GET /metrics: Prometheus text format (see src/server/metrics.ts for the series). */
import type { FastifyPluginAsyncZod } from "fastify-type-provider-zod";
import { z } from "zod";
import { ErrorBody } from "../schemas/api";

const metrics: FastifyPluginAsyncZod = async (app) => {
  const { metrics: m } = app.moreau;
  app.get(
    "/metrics",
    {
      schema: {
        tags: ["operations"],
        operationId: "getMetrics",
        summary: "Prometheus metrics",
        response: {
          200: z.string().meta({ description: "Prometheus text exposition format" }),
          401: ErrorBody,
        },
      },
    },
    async (_req, reply) => {
      const text = await m.registry.metrics();
      return reply.type(m.registry.contentType).send(text);
    },
  );
};

export default metrics;
