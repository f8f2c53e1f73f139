/**
 * Request bodies: JSON parsing with a nesting bound and prototype-poisoning checks, and zod
 * validation that keeps zod's issue paths, written once for the two places that do it — the
 * event loop (small control bodies: step, run, patch, inputs) and the solver workers (the
 * bodies that carry a model, a snapshot or a recording: POST /v1/sessions and
 * POST /v1/assembly, which can be megabytes; parsing and validating them takes hundreds of
 * milliseconds that must not block the event loop, so their route hands the text to a
 * worker unparsed as a JsonText).
 */
import type { IncomingHttpHeaders } from "node:http";
import secureJsonParse from "secure-json-parse";
import type { z } from "zod";
import { boxNodeCount } from "../../schemas/fem";
import { issuesOf } from "../../schemas/issues";
import {
  ApiError,
  clip,
  type Issue,
  MAX_ECHO_CHARS,
  RequestValidationError,
  validationApiError,
} from "./errors";

/** Deepest nesting of objects and arrays a JSON body may have (no model nests beyond ~8). */
export const MAX_JSON_DEPTH = 32;

/**
 * The unparsed UTF-8 bytes of a body that a worker parses and validates (the route's body
 * validator lets it through; see parseModelBody). Bytes, not a string: posting bytes to a
 * worker is a copy, while a string of megabytes costs the event loop tens of milliseconds
 * to serialize.
 */
export class JsonText {
  constructor(readonly bytes: Uint8Array) {}
}

const utf8 = new TextDecoder();

/**
 * Refuses a request body sent with a content coding (`Content-Encoding: gzip`, `br`, …):
 * bodies are read as they come, uncompressed, so a compressed one was parsed as JSON and
 * answered 400 "Body is not valid JSON" quoting its binary bytes. Now 415
 * unsupported_media_type naming the header and its value (RFC 9110 §15.5.16: a content
 * coding the server does not accept; the answer's `Accept-Encoding: identity` says which
 * it does), before the body is read. `identity` and an empty value are no coding.
 */
export function refuseContentCoding(headers: IncomingHttpHeaders): void {
  const coding = headers["content-encoding"];
  if (coding === undefined) return;
  const hasBody =
    headers["transfer-encoding"] !== undefined ||
    (headers["content-length"] !== undefined && headers["content-length"] !== "0");
  const codings = coding
    .split(",")
    .map((c) => c.trim().toLowerCase())
    .filter((c) => c !== "" && c !== "identity");
  if (!hasBody || codings.length === 0) return;
  throw new ApiError(
    "unsupported_media_type",
    `Content-Encoding "${clip(coding, MAX_ECHO_CHARS)}" is not supported: send the body uncompressed (JSON as UTF-8, Content-Encoding identity or none)`,
    { header: "content-encoding", value: clip(coding, MAX_ECHO_CHARS), accepted: ["identity"] },
  );
}

/**
 * Where a JSON text nests deeper than MAX_JSON_DEPTH: the path (keys and indices from the
 * root) of its first object or array below MAX_JSON_DEPTH open ones (the root's path is
 * []), or null when it nests no deeper. One pass over the brackets, commas and colons
 * outside strings, O(length); each open container's key is held as its text's bounds and
 * decoded only for the answer. Malformed text is left to the parser.
 */
export function tooDeep(text: string): Issue["path"] | null {
  // per open container (index = its depth − 1): an array's element index, or the bounds
  // of the object's current key ("…" quotes included); -1: before its first key
  const index = new Int32Array(MAX_JSON_DEPTH);
  const keyFrom = new Int32Array(MAX_JSON_DEPTH);
  const keyTo = new Int32Array(MAX_JSON_DEPTH);
  const isArray = new Uint8Array(MAX_JSON_DEPTH);
  let depth = 0;
  let inString = false;
  let stringFrom = 0;
  let stringTo = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 92)
        i++; // backslash: skip the escaped character
      else if (c === 34) {
        inString = false;
        stringTo = i + 1;
      }
    } else if (c === 34) {
      inString = true;
      stringFrom = i;
    } else if (c === 123 || c === 91) {
      if (depth === MAX_JSON_DEPTH) return pathOf(text, depth, isArray, index, keyFrom, keyTo);
      isArray[depth] = c === 91 ? 1 : 0;
      index[depth] = 0;
      keyFrom[depth] = -1;
      depth++;
    } else if (c === 125 || c === 93) {
      if (depth > 0) depth--;
    } else if (depth > 0 && c === 44 && isArray[depth - 1] === 1) index[depth - 1]++;
    else if (depth > 0 && c === 58 && isArray[depth - 1] === 0) {
      keyFrom[depth - 1] = stringFrom;
      keyTo[depth - 1] = stringTo;
    }
  }
  return null;
}

/** The path tooDeep found: the open containers' keys (decoded, clipped) and indices. */
function pathOf(
  text: string,
  depth: number,
  isArray: Uint8Array,
  index: Int32Array,
  keyFrom: Int32Array,
  keyTo: Int32Array,
): Issue["path"] {
  const path: Issue["path"] = [];
  for (let d = 0; d < depth; d++) {
    if (isArray[d] === 1) {
      path.push(index[d]);
      continue;
    }
    const raw = keyFrom[d] < 0 ? '""' : text.slice(keyFrom[d], keyTo[d]);
    let key: string;
    try {
      key = JSON.parse(raw) as string;
    } catch {
      key = raw.slice(1, -1); // a malformed escape: the parser refuses the text anyway
    }
    path.push(clip(key, MAX_ECHO_CHARS));
  }
  return path;
}

/**
 * A JSON body's value: refused (400 invalid_request) when empty, nested deeper than
 * MAX_JSON_DEPTH (checked before parsing: a deep document costs the parser and later the
 * validator stack and time), malformed, or carrying `__proto__` / `constructor.prototype`
 * keys (secure-json-parse, as Fastify's own parser). Messages as Fastify's, with the
 * parser's reason (its position) or the refused key's path added.
 */
export function parseJsonBody(text: string): unknown {
  if (text.length === 0)
    throw new ApiError(
      "invalid_request",
      "Body cannot be empty when content-type is set to 'application/json'",
    );
  const deep = tooDeep(text);
  if (deep !== null)
    throw new ApiError(
      "invalid_request",
      `the JSON body nests deeper than ${MAX_JSON_DEPTH} levels at ${JSON.stringify(deep)}`,
      { limit: MAX_JSON_DEPTH, path: deep },
    );
  try {
    return secureJsonParse.parse(text, undefined, {
      protoAction: "error",
      constructorAction: "error",
    });
  } catch (err) {
    throw invalidJson(text, err as Error);
  }
}

/**
 * The 400 for a body secure-json-parse refused, saying why: the parser's reason with its
 * position, or where the refused key is (its own message names neither).
 */
function invalidJson(text: string, err: Error): ApiError {
  let parsed: unknown;
  try {
    // (JSON.parse makes "__proto__" an own key, altering nothing: safe to search)
    parsed = JSON.parse(text);
  } catch (syntax) {
    return new ApiError(
      "invalid_request",
      `Body is not valid JSON but content-type is set to 'application/json': ${(syntax as Error).message}`,
    );
  }
  const path = prototypeKeyPath(parsed);
  if (path === null) return new ApiError("invalid_request", `Body is refused: ${err.message}`);
  return new ApiError(
    "invalid_request",
    `the JSON body carries a "${path[path.length - 1]}" key at ${JSON.stringify(path.slice(0, -1))}, which is refused (it could alter object prototypes)`,
    { path },
  );
}

/**
 * The path of the first `__proto__` key, or `constructor` key holding a `prototype`, in
 * a parsed JSON value (what secure-json-parse, as Fastify's own parser, refuses), or null.
 */
function prototypeKeyPath(value: unknown): (string | number)[] | null {
  if (typeof value !== "object" || value === null) return null;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const p = prototypeKeyPath(value[i]);
      if (p !== null) return [i, ...p];
    }
    return null;
  }
  for (const key of Object.keys(value)) {
    const v = (value as Record<string, unknown>)[key];
    if (key === "__proto__") return [key];
    if (key === "constructor" && typeof v === "object" && v !== null && "prototype" in v)
      return [key, "prototype"];
    const p = prototypeKeyPath(v);
    if (p !== null) return [key, ...p];
  }
  return null;
}

/** zod's issues (schemas/issues.ts) with their codes, paths from the request part's root. */
function requestIssues(error: z.ZodError): Issue[] {
  return issuesOf(error).map((i, k) => ({ ...i, code: error.issues[k].code }));
}

/**
 * Validates a request part with its zod schema: the value, or the 400 to answer. A query
 * parameter given more than once (which the query parser makes an array: "expected
 * number, received NaN") is refused as such; none of the API's takes a list.
 */
export function validatePart<S extends z.ZodType>(
  schema: S,
  data: unknown,
  part: string,
): { value: z.output<S> } | { error: RequestValidationError } {
  if (part === "querystring" && typeof data === "object" && data !== null) {
    const repeated = Object.entries(data).filter(([, v]) => Array.isArray(v));
    if (repeated.length > 0)
      return {
        error: new RequestValidationError(
          part,
          repeated.map(([key, v]) => ({
            path: [key],
            message: `"${key}" is given ${(v as unknown[]).length} times: give it once`,
            code: "custom",
          })),
        ),
      };
  }
  const r = schema.safeParse(data);
  if (r.success) return { value: r.data };
  return {
    error: new RequestValidationError(
      part,
      requestIssues(r.error),
      typeof data === "object" && data !== null && "model" in data,
    ),
  };
}

/**
 * Bodies of an unvalidated model as the engine will hold them: its bodies and the nodes of
 * its fem entries (each node is a particle; inline nodes, or a box mesh's
 * (nx + 1)(ny + 1)(nz + 1)). Malformed parts count 0 (validation reports them).
 */
function bodyCount(model: { bodies?: unknown; fem?: unknown }): number {
  let n = Array.isArray(model.bodies) ? model.bodies.length : 0;
  if (!Array.isArray(model.fem)) return n;
  for (const f of model.fem as { nodes?: unknown; box?: { resolution?: unknown } }[]) {
    const r = f?.box?.resolution;
    if (Array.isArray(r) && r.length === 3 && r.every((x) => Number.isInteger(x) && x >= 0))
      n += boxNodeCount(r as number[]);
    else if (Array.isArray(f?.nodes)) n += f.nodes.length;
  }
  return n;
}

/**
 * 413 before validation when a model (given directly, in a snapshot or in a recording) has
 * more bodies than MAX_BODIES, fem nodes included: validating it would cost time for nothing.
 */
export function checkModelSize(body: unknown, maxBodies: number): void {
  type Counted = { bodies?: unknown; fem?: unknown };
  const b = body as
    | {
        model?: Counted;
        snapshot?: { simulation?: { model?: Counted } };
        recording?: { model?: Counted };
      }
    | null
    | undefined;
  const model = b?.model ?? b?.snapshot?.simulation?.model ?? b?.recording?.model;
  if (model === null || typeof model !== "object") return;
  const bodies = bodyCount(model);
  if (bodies > maxBodies)
    throw new ApiError(
      "payload_too_large",
      `the model has ${bodies} bodies (fem nodes included); the limit is ${maxBodies} (MAX_BODIES)`,
      { bodies, limit: maxBodies },
    );
}

/**
 * A model-carrying body from its JSON bytes, as the route would have had it: parsed, size
 * checked against MAX_BODIES, validated with `schema`; failures thrown as the ApiError the
 * route answers (400 invalid_request / invalid_model with zod's paths, 413).
 */
export function parseModelBody<S extends z.ZodType>(
  schema: S,
  bytes: Uint8Array,
  maxBodies: number,
): z.output<S> {
  const data = parseJsonBody(utf8.decode(bytes));
  checkModelSize(data, maxBodies);
  const r = validatePart(schema, data, "body");
  if ("error" in r) throw validationApiError(r.error);
  return r.value;
}
