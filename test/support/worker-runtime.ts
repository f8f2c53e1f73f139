/**
 * A solver worker's runtime (src/server/worker-runtime.ts) driven in process, without its
 * thread: requests handed to it with ids, its messages kept in `out`, a reply awaited by
 * turning the event loop (setImmediate) until it is there.
 */
import type { WorkerInit, WorkerOutbound, WorkerRequestBody } from "../../src/server/protocol";
import { WorkerRuntime } from "../../src/server/worker-runtime";

export type Reply = Extract<WorkerOutbound, { kind: "reply" }>;

export class InProcessWorker {
  /** Every message the runtime sent, in order. */
  readonly out: WorkerOutbound[] = [];
  readonly runtime: WorkerRuntime;
  private nextId = 1;

  constructor(init: Partial<WorkerInit> = {}) {
    this.runtime = new WorkerRuntime(
      {
        index: 0,
        inflight: new SharedArrayBuffer(4),
        frameQueueBytes: 1 << 20,
        testHooks: false,
        stepLimitMs: 30_000,
        ...init,
      },
      (m) => this.out.push(m),
    );
  }

  /** Sends a request; its id and its reply, awaited (up to `turns` turns of the loop). */
  send(body: WorkerRequestBody, turns = 100_000): { id: number; reply: Promise<Reply> } {
    const id = this.nextId++;
    this.runtime.handle({ ...body, id } as never);
    const reply = (async () => {
      for (let i = 0; i < turns; i++) {
        const r = this.out.find((m): m is Reply => m.kind === "reply" && m.id === id);
        if (r) return r;
        await new Promise((res) => setImmediate(res));
      }
      throw new Error(`no reply to ${body.kind}`);
    })();
    return { id, reply };
  }

  call(body: WorkerRequestBody): Promise<Reply> {
    return this.send(body).reply;
  }

  /** Stops any run and the stats timer. */
  shutdown(): void {
    this.runtime.handle({ kind: "shutdown" });
  }
}
