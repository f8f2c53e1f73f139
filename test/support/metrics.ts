/** Reading the server's /metrics (the Prometheus text exposition) in tests and benchmarks. */

/**
 * The value of the sample `name`, with its labels as written (e.g.
 * `moreau_sessions{status="ready"}`); NaN when there is none.
 */
export function sample(text: string, name: string): number {
  const line = text.split("\n").find((l) => l.startsWith(`${name} `));
  return line ? Number(line.slice(name.length + 1)) : Number.NaN;
}
