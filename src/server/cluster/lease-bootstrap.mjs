// The lease renewal thread's entry when the server runs from its TypeScript sources (tsx,
// vitest) without a bundle: registers tsx's loader in the thread (Node 20 does not apply
// `--import` hooks there; worker-bootstrap.mjs does the same for the solver workers) and
// loads lease-worker.ts. The compiled server starts dist/cluster/lease-worker.js (renewer.ts).
import { register } from "tsx/esm/api";

register();
await import("./lease-worker.ts");
