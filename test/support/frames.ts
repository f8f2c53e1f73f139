/**
 * A WebSocket client for the tests of the server's streams: it records every message as it
 * arrives (decoded JSON, and the raw bytes of every message, binary ones included) and the
 * close, and waits for them.
 */
import { WebSocket } from "ws";
import type { StateOut } from "../../schemas/state";
import { waitFor } from "./wait";

/** A WebSocket client that records every message (decoded JSON, or raw bytes). */
export class FrameClient {
  readonly ws: WebSocket;
  readonly messages: unknown[] = [];
  readonly raw: Buffer[] = [];
  closed: { code: number; reason: string } | null = null;
  private readonly opened: Promise<void>;

  constructor(url: string) {
    this.ws = new WebSocket(url);
    this.opened = new Promise((resolve, reject) => {
      this.ws.once("open", () => resolve());
      this.ws.once("error", reject);
      this.ws.once("unexpected-response", (_req, res) =>
        reject(new Error(`unexpected-response ${res.statusCode}`)),
      );
    });
    this.opened.catch(() => undefined);
    this.ws.on("message", (data: Buffer, isBinary: boolean) => {
      this.raw.push(data);
      if (!isBinary) this.messages.push(JSON.parse(data.toString("utf8")));
    });
    this.ws.on("close", (code, reason) => {
      this.closed = { code, reason: reason.toString() };
    });
  }

  open(): Promise<void> {
    return this.opened;
  }

  states(): (StateOut & { type: "state"; dropped: number })[] {
    return this.messages.filter((m) => (m as { type: string }).type === "state") as never;
  }

  async waitForMessages(n: number, timeoutMs = 5000): Promise<void> {
    await waitFor(async () => this.raw.length >= n, timeoutMs);
  }

  async waitClosed(timeoutMs = 5000): Promise<{ code: number; reason: string }> {
    return waitFor(async () => this.closed, timeoutMs);
  }

  close(): void {
    this.ws.close();
  }
}
