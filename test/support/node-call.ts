/**
 * One HTTP request to a spawned server (a cluster node) on 127.0.0.1: its status, the node
 * that answered (the `x-moreau-node` header, null off a cluster) and its JSON body (null
 * when the answer has none).
 */
export interface NodeAnswer {
  status: number;
  node: string | null;
  // biome-ignore lint/suspicious/noExplicitAny: JSON answers of any shape, read by the tests
  body: any;
}

/** `method path` on the server at `base` (http://127.0.0.1:port), `body` sent as JSON. */
export async function callNode(
  base: string,
  method: string,
  path: string,
  body?: unknown,
  timeoutMs = 30_000,
): Promise<NodeAnswer> {
  const r = await fetch(`${base}${path}`, {
    signal: AbortSignal.timeout(timeoutMs),
    method,
    headers: body === undefined ? {} : { "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await r.text();
  return {
    status: r.status,
    node: r.headers.get("x-moreau-node"),
    body: text && r.headers.get("content-type")?.includes("json") ? JSON.parse(text) : null,
  };
}
