/**
 * A cooperative wall-clock deadline for the engine's long loops (Newton iterations, the
 * nonsmooth and Krylov solvers' sweeps, sparse factorizations): a host that must answer in
 * bounded time (a server worker holding several sessions) sets it before stepping; a loop
 * that passes it throws DeadlineExceeded, and Simulation.step puts the state back at the
 * last good step. One per thread (each worker thread has its own module instance); off
 * (Infinity) unless set. Checking costs one performance.now() call, so loops check every
 * few iterations, not every flop.
 */

export class DeadlineExceeded extends Error {
  constructor(readonly limitMs: number) {
    super(`a single step ran past the time limit (${Math.round(limitMs)} ms)`);
    this.name = "DeadlineExceeded";
  }
}

let at = Number.POSITIVE_INFINITY;
let span = 0;

/** Sets the deadline `ms` milliseconds from now (Infinity: off). */
export function setDeadline(ms: number): void {
  span = ms;
  at = Number.isFinite(ms) ? performance.now() + ms : Number.POSITIVE_INFINITY;
}

/** Turns the deadline off. */
export function clearDeadline(): void {
  at = Number.POSITIVE_INFINITY;
}

/** Throws DeadlineExceeded when the deadline has passed. */
export function checkDeadline(): void {
  if (at !== Number.POSITIVE_INFINITY && performance.now() > at) throw new DeadlineExceeded(span);
}
