/** Reading snapshot documents (GET /v1/sessions/:id/snapshot, checkpoints) in the tests. */
import { createHash } from "node:crypto";

/** The state arrays of a snapshot document, base64 of their little-endian float64 bytes. */
const STATE_ARRAYS = ["position", "orientation", "velocity", "angularVelocity"] as const;

/**
 * sha256 (hex) over the decoded bytes of a snapshot document's position, orientation,
 * velocity and angular velocity, in that order: equal hashes, bit-identical states. It is
 * computed here, apart from the server, whose own `simulation.hash` it should equal.
 */
export function stateHash(doc: { simulation: { state: Record<string, string> } }): string {
  const h = createHash("sha256");
  for (const k of STATE_ARRAYS) h.update(Buffer.from(doc.simulation.state[k], "base64"));
  return h.digest("hex");
}
