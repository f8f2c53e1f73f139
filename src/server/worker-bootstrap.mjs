// Solver worker thread entry. Node 20 does not apply tsx's `--import` hooks inside worker
// threads, so this plain-JS entry registers tsx's TypeScript loader for this thread and then
// loads worker.ts. Works the same under `tsx src/server/main.ts` and under vitest.
import { register } from "tsx/esm/api";

register();
await import("./worker.ts");
