/**
 * The typed client of the Moreau service (REST and WebSocket, API v1). See client.ts.
 */
export {
  type ClientOptions,
  type HealthOut,
  MoreauClient,
  type PatchInput,
  type ReadinessOut,
  type RunAcceptedOut,
  type RunInput,
  type SessionAssemblyInput,
  type StepInput,
} from "./client";
export { MoreauApiError, MoreauConnectionError } from "./errors";
export {
  SessionStream,
  type StreamHandlers,
  type StreamOptions,
  type StreamStatus,
} from "./stream";
