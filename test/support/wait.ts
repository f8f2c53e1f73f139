/**
 * Waiting in the tests (and in bench/, through process.ts) for something that happens on
 * its own time: a frame arriving, a checkpoint written, a server ready. No fixed delays
 * where a condition can be polled.
 * - waitFor: polls a probe until it gives a truthy value, and returns that value;
 * - poll: expect.poll with the time limit of a loaded machine, for an assertion that
 *   must come true (its failure shows the last value);
 * - sleep: a fixed delay, for what has no condition to poll (something must not happen).
 */
import { expect } from "vitest";

/**
 * Calls `probe` every `everyMs` until it gives a truthy value, and returns that value;
 * throws `waitFor: timed out` after `timeoutMs` (and what the probe throws at once).
 */
export async function waitFor<T>(
  probe: () => T | undefined | null | false | Promise<T | undefined | null | false>,
  timeoutMs = 5000,
  everyMs = 10,
): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await probe();
    if (v) return v;
    if (Date.now() > end) throw new Error("waitFor: timed out");
    await sleep(everyMs);
  }
}

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** expect.poll with a time limit suited to a loaded machine (20 s, every 50 ms). */
export const poll = <T>(fn: () => Promise<T>) => expect.poll(fn, { timeout: 20_000, interval: 50 });
