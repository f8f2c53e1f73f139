/**
 * GET /docs: Swagger UI over the OpenAPI document (GET /docs/json), generated from the zod
 * schemas of the routes by fastify-type-provider-zod's transforms (schemas with an id
 * become components). Registered without encapsulation (skip-override) before the other
 * routes so that @fastify/swagger sees every route.
 *
 * The document declares the bearer scheme (`Authorization: Bearer <key>`, required on
 * every operation when the server has API keys, except /health and /ready), a relative
 * server (the one serving the document), and an operationId on every operation (the
 * routes' own, else OPERATION_IDS below). test/api/ops-openapi.test.ts lints it with
 * `@redocly/cli lint` (no errors allowed).
 */
import swagger from "@fastify/swagger";
import swaggerUi from "@fastify/swagger-ui";
import type { FastifyPluginAsync } from "fastify";
import { createJsonSchemaTransform, jsonSchemaTransformObject } from "fastify-type-provider-zod";
import { PUBLIC_PATHS } from "../src/server/auth";

/** Name of the security scheme in components.securitySchemes. */
export const BEARER_SCHEME = "bearerAuth";

/**
 * operationIds of routes that do not name their own (by "METHOD url"); the routes in
 * sessions.ts, assembly.ts and metrics.ts name theirs in their schemas.
 */
const OPERATION_IDS: Record<string, string> = {
  "GET /health": "getHealth",
  "GET /ready": "getReadiness",
  "GET /v1/sessions/:id/stream": "streamSession",
};

const DOCS_PATHS = ["/docs", "/docs/", "/docs/*", "/docs/json", "/docs/yaml", "/docs/static/*"];

const zodTransform = createJsonSchemaTransform({ skipList: DOCS_PATHS });

/** The zod transform, then an operationId where a route has none and no security on public paths. */
const transform: typeof zodTransform = (input) => {
  const out = zodTransform(input);
  const schema = out.schema as Record<string, unknown> | undefined;
  if (!schema || schema.hide) return out;
  const methods = ([] as string[]).concat(
    (input as unknown as { route?: { method?: string | string[] } }).route?.method ?? [],
  );
  if (schema.operationId === undefined)
    for (const m of methods) {
      const id = OPERATION_IDS[`${m.toUpperCase()} ${out.url}`];
      if (id) schema.operationId = id;
    }
  if (PUBLIC_PATHS.has(out.url)) schema.security = [];
  return out;
};

const docs: FastifyPluginAsync = async (app) => {
  await app.register(swagger, {
    openapi: {
      openapi: "3.1.0",
      info: {
        title: "Moreau",
        description: [
          "Multibody simulation sessions over HTTP and WebSocket.",
          "Errors are JSON { error, message, details } (components: Error); 400 answers carry zod's issues with their paths in details.issues.",
          "Access: when the server has API keys (API_KEY / API_KEYS), every operation but /health and /ready needs `Authorization: Bearer <key>` (401 otherwise); without keys the server has no access control.",
          "Streaming (not an HTTP operation, so not listed below): GET /v1/sessions/{id}/stream upgrades to a WebSocket;",
          "query every (int ≥ 1), fields (bodies,contacts,joints,energy,solver), format (json | msgpack).",
          'The first frame is a SceneFrame ({"type":"scene"}), every later one a StateFrame ({"type":"state", ..., "dropped"}).',
        ].join(" "),
        version: "1.0.0",
      },
      // relative: the server that serves this document
      servers: [{ url: "/", description: "this server" }],
      components: {
        securitySchemes: {
          [BEARER_SCHEME]: {
            type: "http",
            scheme: "bearer",
            description:
              "An API key of the server (API_KEY / API_KEYS) as a bearer token; required when the server has keys",
          },
        },
      },
      security: [{ [BEARER_SCHEME]: [] }],
      tags: [
        { name: "sessions", description: "simulation sessions" },
        { name: "assembly", description: "assembly analysis" },
        { name: "operations", description: "health, readiness, metrics" },
      ],
    },
    transform,
    transformObject: jsonSchemaTransformObject,
  });
  await app.register(swaggerUi, { routePrefix: "/docs" });
};
(docs as unknown as Record<symbol, boolean>)[Symbol.for("skip-override")] = true;

export default docs;
