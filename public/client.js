// The dashboard's client of the Moreau API (v1): a plain-JS copy of src/client (same class
// and method names, same semantics) that runs in the browser without a build step.
// Differences: the stream speaks JSON only (no msgpack decoder in the page) and takes the
// WebSocket constructor from the options (default: the browser's). Kept aligned with the
// TypeScript client by test/client/alignment.test.ts, which runs both against one server.

export class MoreauApiError extends Error {
  /**
   * @param {number} status HTTP status
   * @param {string} code the service's error code
   * @param {string} message
   * @param {unknown} [details]
   * @param {string} [request]
   */
  constructor(status, code, message, details, request) {
    super(message);
    this.name = "MoreauApiError";
    this.status = status;
    this.code = code;
    this.details = details;
    this.request = request;
  }

  /** @returns {string[]} the issues of a 400 answer as `path: message` lines */
  issueLines() {
    const issues = this.details?.issues;
    if (!Array.isArray(issues)) return [];
    return issues.map(
      (i) =>
        `${Array.isArray(i.path) && i.path.length ? i.path.join(".") : "(root)"}: ${i.message}`,
    );
  }
}

export class MoreauConnectionError extends Error {
  constructor(message, cause) {
    super(message, { cause });
    this.name = "MoreauConnectionError";
  }
}

/** The subprotocol that carries an API key on a WebSocket upgrade: bearer.<base64url(key)>. */
function bearerProtocol(key) {
  let binary = "";
  for (const byte of new TextEncoder().encode(key)) binary += String.fromCharCode(byte);
  return `bearer.${btoa(binary).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "")}`;
}

/** Close codes after which reconnecting is pointless (1000: session deleted). */
const FINAL_CLOSE_CODES = new Set([1000, 1008, 1003]);

/**
 * A session's stream that reconnects when it drops (same policy as src/client/stream.ts):
 * close() stops it; 1000 from the server (session deleted) ends it; a connection that
 * never opens is retried unless the session is gone (GET /v1/sessions/:id answers 404,
 * the browser hides the HTTP status of a refused upgrade); anything else reconnects after
 * a delay doubling from initialDelayMs to maxDelayMs.
 */
export class SessionStream {
  /** protocols: the WebSocket subprotocols to offer (the API key's, see MoreauClient) */
  constructor(url, reconnect, handlers, WebSocketImpl, sessionExists, protocols) {
    this.url = url;
    this.protocols = protocols;
    const r = typeof reconnect === "object" && reconnect ? reconnect : {};
    this.reconnectEnabled = reconnect !== false;
    this.initialDelayMs = r.initialDelayMs ?? 250;
    this.maxDelayMs = r.maxDelayMs ?? 5000;
    this.maxAttempts = r.maxAttempts ?? Number.POSITIVE_INFINITY;
    this.handlers = handlers ?? {};
    this.WebSocketImpl = WebSocketImpl;
    this.sessionExists = sessionExists;
    this.ws = null;
    this.stopped = false;
    this.attempt = 0;
    this.timer = null;
    this.statusValue = "connecting";
    this.listeners = new Set();
    this.reconnects = 0;
    this.frames = 0;
    this.dropped = 0;
    this.lastClose = null;
    this.connect();
  }

  get status() {
    return this.statusValue;
  }

  get socket() {
    return this.ws;
  }

  opened(timeoutMs = 10_000) {
    return this.waitForStatus("open", timeoutMs);
  }

  ended(timeoutMs = 10_000) {
    return this.waitForStatus("closed", timeoutMs);
  }

  close() {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    if (this.ws && this.ws.readyState !== 3) this.ws.close(1000, "client closed");
    else this.setStatus("closed", { attempt: this.attempt });
  }

  waitForStatus(want, timeoutMs) {
    if (this.statusValue === want) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const t = setTimeout(() => {
        this.listeners.delete(check);
        reject(new Error(`stream did not become ${want} within ${timeoutMs} ms`));
      }, timeoutMs);
      const check = (s) => {
        if (s === want) {
          clearTimeout(t);
          this.listeners.delete(check);
          resolve();
        } else if (s === "closed") {
          clearTimeout(t);
          this.listeners.delete(check);
          reject(new Error("stream closed"));
        }
      };
      this.listeners.add(check);
    });
  }

  setStatus(s, info) {
    if (this.statusValue === s && s !== "reconnecting") return;
    this.statusValue = s;
    this.handlers.onStatus?.(s, info);
    for (const l of [...this.listeners]) l(s);
  }

  connect() {
    if (this.stopped) return;
    let ws;
    try {
      ws = new this.WebSocketImpl(this.url, this.protocols);
    } catch (err) {
      this.handlers.onError?.(err);
      this.scheduleReconnect(0, String(err));
      return;
    }
    this.ws = ws;
    let opened = false;
    ws.onopen = () => {
      opened = true;
      if (this.attempt > 0 || this.frames > 0) this.reconnects++;
      this.attempt = 0;
      this.setStatus("open", { attempt: 0 });
    };
    ws.onerror = () => {
      this.handlers.onError?.(new Error("stream connection error"));
    };
    ws.onmessage = (ev) => {
      if (typeof ev.data !== "string") return;
      let frame;
      try {
        frame = JSON.parse(ev.data);
      } catch (err) {
        this.handlers.onError?.(err);
        return;
      }
      this.frames++;
      if (frame.type === "scene") this.handlers.onScene?.(frame);
      else if (frame.type === "state") {
        this.dropped += frame.dropped ?? 0;
        this.handlers.onState?.(frame);
      }
    };
    ws.onclose = async (ev) => {
      const code = ev.code;
      const reason = ev.reason ?? "";
      this.lastClose = { code, reason };
      if (this.ws === ws) this.ws = null;
      if (this.stopped || !this.reconnectEnabled || (opened && FINAL_CLOSE_CODES.has(code))) {
        this.stopped = true;
        this.setStatus("closed", { code, reason, attempt: this.attempt });
        return;
      }
      if (!opened && this.sessionExists) {
        // the browser hides why an upgrade failed: ask whether the session still exists
        const exists = await this.sessionExists().catch(() => true);
        if (!exists) {
          this.stopped = true;
          this.setStatus("closed", { code, reason: "session not found", attempt: this.attempt });
          return;
        }
      }
      this.scheduleReconnect(code, reason);
    };
  }

  scheduleReconnect(code, reason) {
    if (this.stopped) return;
    this.attempt++;
    if (this.attempt > this.maxAttempts) {
      this.stopped = true;
      this.setStatus("closed", { code, reason, attempt: this.attempt });
      return;
    }
    const delay = Math.min(this.maxDelayMs, this.initialDelayMs * 2 ** (this.attempt - 1));
    this.setStatus("reconnecting", { code, reason, attempt: this.attempt });
    this.timer = setTimeout(() => {
      this.timer = null;
      this.connect();
    }, delay);
  }
}

export class MoreauClient {
  /**
   * @param {string | URL} baseUrl e.g. location.origin
   * @param {{ fetch?: typeof fetch, headers?: Record<string, string>, timeoutMs?: number,
   *           apiKey?: string, WebSocket?: typeof WebSocket }} [options]
   * A browser cannot set headers on a WebSocket upgrade: with apiKey the stream offers the
   * subprotocols ["moreau", "bearer." + base64url(apiKey)] instead (src/server/auth.ts).
   */
  constructor(baseUrl, options = {}) {
    this.baseUrl = String(baseUrl).replace(/\/+$/, "");
    this.fetchFn = options.fetch ?? globalThis.fetch.bind(globalThis);
    this.headers = { ...options.headers };
    if (options.apiKey) this.headers.authorization = `Bearer ${options.apiKey}`;
    this.streamProtocols = options.apiKey ? ["moreau", bearerProtocol(options.apiKey)] : undefined;
    this.timeoutMs = options.timeoutMs ?? 60_000;
    this.WebSocketImpl = options.WebSocket ?? globalThis.WebSocket;
  }

  health() {
    return this.request("GET", "/health");
  }

  ready() {
    return this.request("GET", "/ready", undefined, [503]);
  }

  async metrics() {
    return (await this.send("GET", "/metrics")).text();
  }

  createSession(model) {
    return this.request("POST", "/v1/sessions", { model });
  }

  async listSessions() {
    return (await this.request("GET", "/v1/sessions")).sessions;
  }

  getSession(id) {
    return this.request("GET", this.path(id));
  }

  getState(id) {
    return this.request("GET", this.path(id, "/state"));
  }

  step(id, input) {
    return this.request("POST", this.path(id, "/step"), input);
  }

  run(id, input = {}) {
    return this.request("POST", this.path(id, "/run"), input);
  }

  pause(id) {
    return this.request("POST", this.path(id, "/pause"));
  }

  reset(id) {
    return this.request("POST", this.path(id, "/reset"));
  }

  patch(id, patch) {
    return this.request("PATCH", this.path(id), patch);
  }

  async deleteSession(id) {
    await this.send("DELETE", this.path(id));
  }

  assembleSession(id, options = {}) {
    return this.request("POST", this.path(id, "/assembly"), options);
  }

  assemble(model, options = {}) {
    return this.request("POST", "/v1/assembly", { model, options });
  }

  streamUrl(id, options = {}) {
    const u = new URL(`${this.baseUrl}${this.path(id, "/stream")}`);
    u.protocol = u.protocol === "https:" ? "wss:" : "ws:";
    if (options.every !== undefined) u.searchParams.set("every", String(options.every));
    if (options.fields !== undefined) u.searchParams.set("fields", options.fields.join(","));
    if (options.format !== undefined) u.searchParams.set("format", options.format);
    return u.toString();
  }

  stream(id, options = {}, handlers = {}) {
    if (options.format === "msgpack") throw new Error("the browser client streams JSON only");
    const exists = async () => {
      try {
        await this.getSession(id);
        return true;
      } catch (err) {
        return !(err instanceof MoreauApiError && err.status === 404);
      }
    };
    return new SessionStream(
      this.streamUrl(id, options),
      options.reconnect,
      handlers,
      this.WebSocketImpl,
      exists,
      this.streamProtocols,
    );
  }

  path(id, suffix = "") {
    return `/v1/sessions/${encodeURIComponent(id)}${suffix}`;
  }

  async request(method, path, body, okStatuses = []) {
    const res = await this.send(method, path, body, okStatuses);
    return res.json();
  }

  async send(method, path, body, okStatuses = []) {
    const headers = { accept: "application/json", ...this.headers };
    if (body !== undefined) headers["content-type"] = "application/json";
    let res;
    try {
      res = await this.fetchFn(`${this.baseUrl}${path}`, {
        method,
        headers,
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(this.timeoutMs),
      });
    } catch (err) {
      throw new MoreauConnectionError(`${method} ${this.baseUrl}${path}: ${err.message}`, err);
    }
    if (res.ok || okStatuses.includes(res.status)) return res;
    const text = await res.text();
    let e = {};
    try {
      e = JSON.parse(text);
    } catch {
      e = { error: "http_error", message: text.slice(0, 500) };
    }
    throw new MoreauApiError(
      res.status,
      e.error ?? "http_error",
      e.message ?? `HTTP ${res.status}`,
      e.details,
      `${method} ${path}`,
    );
  }
}
