/**
 * POST /v1/models/urdf: a URDF robot description (and the mesh files it references) →
 * a Moreau model, with warnings for what was mapped approximately or left out; nothing is
 * kept. The body (up to MAX_MODEL_BYTES: meshes travel in it) is parsed, validated and
 * converted in a worker (src/formats/urdf/ is the converter).
 */
import type { FastifyPluginAsyncZod } from "fastify-type-provider-zod";
import { ErrorBody } from "../schemas/api";
import { UrdfImportBody, UrdfImportResult } from "../schemas/urdf";
import { sendJsonBytes } from "../src/server/reply";
import { bodyBytes } from "./sessions";

const models: FastifyPluginAsyncZod = async (app) => {
  const { sessions, config } = app.moreau;
  app.post(
    "/v1/models/urdf",
    {
      bodyLimit: config.maxModelBytes,
      config: { bodyInWorker: true },
      schema: {
        tags: ["models"],
        operationId: "importUrdf",
        summary: "Convert a URDF robot (with its STL/OBJ meshes) into a model",
        description:
          "400 invalid_urdf (malformed URDF or mesh), 422 unsupported_urdf (a collision mesh, a mimic or planar joint), 413 (a mesh over MESH_MAX_BYTES or MESH_MAX_TRIANGLES, a body over MAX_MODEL_BYTES): details.issues name the element and line, or the file",
        body: UrdfImportBody,
        response: {
          200: UrdfImportResult,
          400: ErrorBody,
          401: ErrorBody,
          413: ErrorBody,
          415: ErrorBody,
          422: ErrorBody,
          429: ErrorBody,
          500: ErrorBody,
          503: ErrorBody,
        },
      },
    },
    async (req, reply) => sendJsonBytes(reply, await sessions.importUrdf(bodyBytes(req.body))),
  );
};

export default models;
