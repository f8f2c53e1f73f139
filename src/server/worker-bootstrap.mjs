// Solver worker thread entry when the server runs from its TypeScript sources (tsx, vitest).
// Node 20 does not apply tsx's `--import` hooks inside worker threads, so this plain-JS entry
// registers tsx's TypeScript loader for this thread and then loads worker.ts. The compiled
// server (`npm start`, the Docker image: dist/main.js) starts dist/worker.js instead, with no
// run-time transpiling (worker-pool.ts picks the entry).
import { register } from "tsx/esm/api";

register();
await import("./worker.ts");
