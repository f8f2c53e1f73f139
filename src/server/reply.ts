/**
 * Answers whose JSON was produced in a worker (States, assembly results) are written as the
 * worker's bytes, without parsing or re-serializing them on the event loop; their route
 * schemas still describe them in the OpenAPI document.
 */
import type { FastifyReply } from "fastify";

export function sendJsonBytes(reply: FastifyReply, bytes: Uint8Array, code = 200): FastifyReply {
  return reply
    .code(code)
    .type("application/json; charset=utf-8")
    .send(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength));
}
