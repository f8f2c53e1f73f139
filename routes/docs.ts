/**
 * GET /docs: Swagger UI over the OpenAPI document (GET /docs/json), generated from the zod
 * schemas of the routes by fastify-type-provider-zod's transforms (schemas with an id
 * become components). Registered without encapsulation (skip-override) before the other
 * routes so that @fastify/swagger sees every route.
 */
import swagger from "@fastify/swagger";
import swaggerUi from "@fastify/swagger-ui";
import type { FastifyPluginAsync } from "fastify";
import { createJsonSchemaTransform, jsonSchemaTransformObject } from "fastify-type-provider-zod";

const docs: FastifyPluginAsync = async (app) => {
  await app.register(swagger, {
    openapi: {
      openapi: "3.1.0",
      info: {
        title: "Moreau",
        description: [
          "Multibody simulation sessions over HTTP and WebSocket.",
          "Errors are JSON { error, message, details } (components: Error); 400 answers carry zod's issues with their paths in details.issues.",
          "Streaming (not an HTTP operation, so not listed below): GET /v1/sessions/{id}/stream upgrades to a WebSocket;",
          "query every (int ≥ 1), fields (bodies,contacts,joints,energy,solver), format (json | msgpack).",
          'The first frame is a SceneFrame ({"type":"scene"}), every later one a StateFrame ({"type":"state", ..., "dropped"}).',
        ].join(" "),
        version: "1.0.0",
      },
      tags: [
        { name: "sessions", description: "simulation sessions" },
        { name: "assembly", description: "assembly analysis" },
        { name: "operations", description: "health, readiness, metrics" },
      ],
    },
    transform: createJsonSchemaTransform({
      skipList: ["/docs", "/docs/", "/docs/*", "/docs/json", "/docs/yaml", "/docs/static/*"],
    }),
    transformObject: jsonSchemaTransformObject,
  });
  await app.register(swaggerUi, { routePrefix: "/docs" });
};
(docs as unknown as Record<symbol, boolean>)[Symbol.for("skip-override")] = true;

export default docs;
