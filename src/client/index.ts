/**
 * The typed client of the Moreau service (REST and WebSocket, API v1). See client.ts.
 * Also the entry of its browser bundle, served at /client.js (browser/bundle.ts).
 */
export {
  type ClientOptions,
  type HealthOut,
  type InputsAcceptedOut,
  MoreauClient,
  type PatchInput,
  type ReadinessOut,
  type RecordingOut,
  type RunAcceptedOut,
  type RunInput,
  type SessionAssemblyInput,
  type SnapshotOut,
  type StepInput,
} from "./client";
export { MoreauApiError, MoreauConnectionError } from "./errors";
export {
  type InputsAnswer,
  SessionStream,
  type SteppedAnswer,
  type StreamConnection,
  type StreamHandlers,
  type StreamOptions,
  type StreamStatus,
} from "./stream";
