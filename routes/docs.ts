/**
 * GET /docs: Swagger UI over the OpenAPI document (GET /docs/json), generated from the zod
 * schemas of the routes by fastify-type-provider-zod's transforms (schemas with an id
 * become components). Registered without encapsulation (skip-override) before the other
 * routes so that @fastify/swagger sees every route.
 *
 * The document declares the bearer scheme (`Authorization: Bearer <key>`, required on
 * every operation when the server has API keys, except /health and /ready), a relative
 * server (the one serving the document), and an operationId on every operation (each
 * route names its own). test/api/ops-openapi.test.ts lints it with
 * `@redocly/cli lint` (no errors allowed).
 *
 * Requests are described by zod's input types (components `<Id>Input`: fields with a
 * default optional), answers by its output types (`<Id>`); the schemas of request bodies
 * carry their defaults in their descriptions instead of `default` (see
 * requestDefaultsToDescriptions), so that generators read them as optional.
 * test/api/openapi-typescript.test.ts generates types with openapi-typescript and checks
 * that every example model type-checks as a create-session body.
 */
import swagger from "@fastify/swagger";
import swaggerUi from "@fastify/swagger-ui";
import type { FastifyPluginAsync } from "fastify";
import { createJsonSchemaTransform, jsonSchemaTransformObject } from "fastify-type-provider-zod";
import { PUBLIC_PATHS } from "../src/server/auth";

/** Name of the security scheme in components.securitySchemes. */
export const BEARER_SCHEME = "bearerAuth";

const DOCS_PATHS = ["/docs", "/docs/", "/docs/*", "/docs/json", "/docs/yaml", "/docs/static/*"];

const zodTransform = createJsonSchemaTransform({ skipList: DOCS_PATHS });

/** The zod transform, then no security on public paths. */
const transform: typeof zodTransform = (input) => {
  const out = zodTransform(input);
  const schema = out.schema as Record<string, unknown> | undefined;
  if (!schema || schema.hide) return out;
  if (PUBLIC_PATHS.has(out.url)) schema.security = [];
  return out;
};

type Json = Record<string, unknown>;

const isJson = (v: unknown): v is Json => typeof v === "object" && v !== null && !Array.isArray(v);

/** JSON Schema keywords whose value is a schema, a list of schemas or a map of schemas. */
const SUBSCHEMA = [
  "items",
  "additionalProperties",
  "not",
  "contains",
  "propertyNames",
  "if",
  "then",
  "else",
  "unevaluatedItems",
  "unevaluatedProperties",
];
const SUBSCHEMA_LISTS = ["allOf", "anyOf", "oneOf", "prefixItems"];
const SUBSCHEMA_MAPS = ["properties", "patternProperties", "$defs", "dependentSchemas"];

const COMPONENT_REF = "#/components/schemas/";

/**
 * Moves the `default` of every schema a request body uses (following $refs into
 * components.schemas) into its description. openapi-typescript, with its defaults
 * (defaultNonNullable), types a property that has a `default` in a component as always
 * present: right for answers, which the server completes, wrong for requests, which may
 * leave it out (the examples failed to type-check as create-session bodies with ~1000
 * errors). A default is only an annotation in JSON Schema, which the description keeps.
 * Answers (output components) and parameters keep `default`.
 */
function requestDefaultsToDescriptions(doc: Json): void {
  const components =
    isJson(doc.components) && isJson(doc.components.schemas) ? doc.components.schemas : {};
  const seen = new Set<unknown>();
  const visit = (schema: unknown): void => {
    if (!isJson(schema) || seen.has(schema)) return;
    seen.add(schema);
    if (typeof schema.$ref === "string" && schema.$ref.startsWith(COMPONENT_REF))
      visit(components[schema.$ref.slice(COMPONENT_REF.length)]);
    if (schema.default !== undefined) {
      const text = `default: ${JSON.stringify(schema.default)}`;
      schema.description =
        typeof schema.description === "string" ? `${schema.description} (${text})` : text;
      delete schema.default;
    }
    for (const k of SUBSCHEMA) visit(schema[k]);
    for (const k of SUBSCHEMA_LISTS) {
      const list = schema[k];
      if (Array.isArray(list)) for (const s of list) visit(s);
    }
    for (const k of SUBSCHEMA_MAPS) {
      const map = schema[k];
      if (isJson(map)) for (const s of Object.values(map)) visit(s);
    }
  };
  for (const item of Object.values(isJson(doc.paths) ? doc.paths : {}))
    for (const op of Object.values(isJson(item) ? item : {})) {
      const content = isJson(op) && isJson(op.requestBody) ? op.requestBody.content : undefined;
      for (const media of Object.values(isJson(content) ? content : {}))
        if (isJson(media)) visit(media.schema);
    }
}

/** The zod transform's components, then the request bodies' defaults into descriptions. */
const transformObject: typeof jsonSchemaTransformObject = (input) => {
  const doc = jsonSchemaTransformObject(input);
  requestDefaultsToDescriptions(doc as Json);
  return doc;
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
        { name: "models", description: "model import (URDF)" },
        { name: "operations", description: "health, readiness, metrics" },
      ],
    },
    transform,
    transformObject,
  });
  await app.register(swaggerUi, { routePrefix: "/docs" });
};
(docs as unknown as Record<symbol, boolean>)[Symbol.for("skip-override")] = true;

export default docs;
