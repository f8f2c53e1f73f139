/**
 * Solver worker thread entry (started by worker-pool.ts). It owns the Simulations of the
 * sessions assigned to it; see worker-runtime.ts for what it does and protocol.ts for what
 * crosses the thread boundary.
 */
import { parentPort, workerData } from "node:worker_threads";
import type { WorkerInit, WorkerNotice, WorkerOutbound, WorkerRequest } from "./protocol";
import { WorkerRuntime } from "./worker-runtime";

const port = parentPort;
if (!port) throw new Error("worker.ts must run in a worker thread");

const runtime = new WorkerRuntime(workerData as WorkerInit, (msg: WorkerOutbound, transfer) =>
  port.postMessage(msg, transfer ?? []),
);
port.on("message", (msg: WorkerRequest | WorkerNotice) => runtime.handle(msg));
port.postMessage({ kind: "ready" } satisfies WorkerOutbound);
