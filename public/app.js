// The Moreau dashboard: pick an example or upload a model, create (or attach to) a session,
// run / pause / step / reset it at a chosen real-time factor, and watch it live over the
// session's WebSocket stream (3-D view, time plots, solver figures). The stream reconnects
// when it drops. window.moreauDashboard exposes the page's state for tests and debugging.
// A server with access control answers 401: the page then asks for an API key, keeps it
// for the tab (sessionStorage) and sends it with its API calls and stream.
import { MoreauApiError, MoreauClient } from "./client.js";
import { TimePlot } from "./plots.js";
import { Viewer } from "./viewer.js";

const $ = (id) => document.getElementById(id);
const KEY_STORAGE = "moreau.apiKey";

/** The API client with the key entered in this tab, if any. */
function makeClient() {
  const apiKey = sessionStorage.getItem(KEY_STORAGE) ?? undefined;
  return new MoreauClient(location.origin, { apiKey });
}

let client = makeClient();

const ui = {
  example: $("example-select"),
  file: $("model-file"),
  text: $("model-text"),
  details: $("model-details"),
  create: $("create-btn"),
  sessions: $("session-select"),
  refresh: $("refresh-sessions-btn"),
  attach: $("attach-btn"),
  del: $("delete-btn"),
  run: $("run-btn"),
  pause: $("pause-btn"),
  reset: $("reset-btn"),
  step: $("step-btn"),
  stepCount: $("step-count"),
  rtf: $("rtf"),
  rtfMax: $("rtf-max"),
  every: $("every"),
  message: $("message"),
  serverStatus: $("server-status"),
  streamStatus: $("stream-status"),
  plotBody: $("plot-body"),
  plotQuantity: $("plot-quantity"),
  legend: $("legend"),
  keyForm: $("key-form"),
  key: $("api-key"),
};

const viewer = new Viewer($("view"));
const energyPlot = new TimePlot($("plot-energy"), ["kinetic", "potential", "total"]);
const bodyPlot = new TimePlot($("plot-body-chart"), ["x", "y", "z"]);
const contactPlot = new TimePlot($("plot-contacts"), ["Σ normal", "Σ |friction|", "max normal"]);

/** What the page is showing. */
const state = {
  sessionId: null,
  session: null,
  /** the model this page posted for the session (null when attached to someone else's) */
  model: null,
  stream: null,
  framesReceived: 0,
  scenesReceived: 0,
  statesReceived: 0,
  lastFrame: null,
  scene: null,
  poll: null,
};

function say(text, isError = false) {
  ui.message.textContent = text;
  ui.message.classList.toggle("error", isError);
}

function describeError(err) {
  if (err instanceof MoreauApiError) {
    const lines = err.issueLines();
    return `${err.status} ${err.code}: ${err.message}${lines.length ? `\n${lines.slice(0, 6).join("\n")}` : ""}`;
  }
  return String(err?.message ?? err);
}

async function guarded(what, fn) {
  try {
    return await fn();
  } catch (err) {
    say(`${what} failed: ${describeError(err)}`, true);
    if (err instanceof MoreauApiError && err.status === 401) askForKey();
    return undefined;
  }
}

// ------------------------------------------------------------------ API key

function askForKey() {
  ui.keyForm.hidden = false;
  ui.key.focus();
}

ui.keyForm.addEventListener("submit", (ev) => {
  ev.preventDefault();
  const key = ui.key.value.trim();
  if (key) sessionStorage.setItem(KEY_STORAGE, key);
  else sessionStorage.removeItem(KEY_STORAGE);
  client = makeClient();
  ui.key.value = "";
  ui.keyForm.hidden = true;
  guarded("listing sessions", async () => {
    await refreshSessions();
    say(key ? "API key set for this tab" : "API key cleared");
  });
});

// ------------------------------------------------------------------ models

async function loadExamples() {
  const res = await fetch("/examples");
  const { examples } = await res.json();
  for (const e of examples) {
    const opt = document.createElement("option");
    opt.value = e.file;
    const extra = [
      `${e.bodies} bodies`,
      e.joints ? `${e.joints} joints` : null,
      e.contact ? `contact ${e.contact}` : null,
      e.integrator,
    ]
      .filter(Boolean)
      .join(", ");
    opt.textContent = `${e.name} (${extra})`;
    opt.dataset.id = e.id;
    ui.example.appendChild(opt);
  }
}

function setModelText(text) {
  ui.text.value = text;
  ui.create.disabled = text.trim().length === 0;
}

ui.example.addEventListener("change", () =>
  guarded("loading the example", async () => {
    if (!ui.example.value) return;
    const res = await fetch(ui.example.value);
    setModelText(await res.text());
    say(`example ${ui.example.selectedOptions[0].textContent} loaded`);
  }),
);

ui.file.addEventListener("change", () =>
  guarded("reading the file", async () => {
    const f = ui.file.files?.[0];
    if (!f) return;
    const text = await f.text();
    JSON.parse(text); // a syntax error is reported here, before posting
    setModelText(text);
    ui.example.value = "";
    say(`${f.name} loaded (${text.length} bytes)`);
  }),
);

ui.text.addEventListener("input", () => {
  ui.create.disabled = ui.text.value.trim().length === 0;
});

ui.create.addEventListener("click", () =>
  guarded("creating the session", async () => {
    let model;
    try {
      model = JSON.parse(ui.text.value);
    } catch (err) {
      throw new Error(`the model is not valid JSON: ${err.message}`);
    }
    if (model && typeof model === "object" && "model" in model && !("bodies" in model))
      model = model.model;
    const s = await client.createSession(model);
    say(`session ${s.id} created`);
    await refreshSessions();
    attach(s.id, model);
  }),
);

// ------------------------------------------------------------------ sessions

async function refreshSessions() {
  const list = await client.listSessions();
  const keep = ui.sessions.value;
  ui.sessions.textContent = "";
  for (const s of list) {
    const opt = document.createElement("option");
    opt.value = s.id;
    opt.textContent = `${s.name} · ${s.status} · ${s.id.slice(0, 8)}`;
    ui.sessions.appendChild(opt);
  }
  if (state.sessionId && list.some((s) => s.id === state.sessionId))
    ui.sessions.value = state.sessionId;
  else if (list.some((s) => s.id === keep)) ui.sessions.value = keep;
}

ui.refresh.addEventListener("click", () => guarded("listing sessions", refreshSessions));
ui.attach.addEventListener("click", () => {
  if (ui.sessions.value) attach(ui.sessions.value, null);
});
ui.del.addEventListener("click", () =>
  guarded("deleting the session", async () => {
    if (!state.sessionId) return;
    const id = state.sessionId;
    detach();
    await client.deleteSession(id);
    say(`session ${id} deleted`);
    await refreshSessions();
  }),
);

function autoEvery(dt) {
  // about 60 frames per simulated second
  return Math.max(1, Math.round(1 / (60 * dt)));
}

function detach() {
  state.stream?.close();
  state.stream = null;
  clearInterval(state.poll);
  state.poll = null;
  state.sessionId = null;
  state.session = null;
  setStreamStatus("idle");
  updateButtons();
}

async function attach(id, model) {
  detach();
  state.sessionId = id;
  state.model = model;
  state.scene = null;
  energyPlot.clear();
  bodyPlot.clear();
  contactPlot.clear();
  const s = await guarded("reading the session", () => client.getSession(id));
  if (!s) return;
  showSession(s);
  openStream();
  state.poll = setInterval(pollSession, 1000);
}

function openStream() {
  const id = state.sessionId;
  if (!id) return;
  state.stream?.close();
  const every = Number(ui.every.value) || autoEvery(state.session?.dt ?? 0.005);
  state.stream = client.stream(
    id,
    { every, fields: ["bodies", "contacts", "joints", "energy", "solver"] },
    {
      onScene: onScene,
      onState: onState,
      onStatus: (s, info) => {
        setStreamStatus(s, info);
        if (s === "closed" && state.sessionId === id && info.reason)
          say(`stream closed: ${info.reason}`, info.code !== 1000);
      },
    },
  );
}

ui.every.addEventListener("change", () => {
  if (state.sessionId) openStream();
});

function setStreamStatus(s, info) {
  ui.streamStatus.dataset.status = s;
  ui.streamStatus.textContent =
    s === "reconnecting" ? `stream: reconnecting (attempt ${info?.attempt ?? 1})` : `stream: ${s}`;
  $("stream-reconnects").textContent = String(state.stream?.reconnects ?? 0);
}

async function pollSession() {
  const id = state.sessionId;
  if (!id) return;
  try {
    showSession(await client.getSession(id));
    ui.serverStatus.textContent = "server: up";
  } catch (err) {
    if (err instanceof MoreauApiError && err.status === 404) {
      say(`session ${id} no longer exists`, true);
      detach();
    } else ui.serverStatus.textContent = "server: unreachable";
  }
}

function showSession(s) {
  state.session = s;
  $("info-id").textContent = s.id;
  $("info-name").textContent = s.name;
  $("info-status").textContent = s.message ? `${s.status} — ${s.message}` : s.status;
  $("info-time").textContent = `${s.time.toFixed(4)} s`;
  $("info-step").textContent = String(s.step);
  $("info-dt").textContent = `${s.dt} s`;
  const c = s.counts;
  $("info-counts").textContent =
    `${c.bodies} (${c.forces} forces, ${c.joints} joints, ${c.motors} motors)`;
  if (s.run?.realtimeFactor != null && document.activeElement !== ui.rtf)
    ui.rtf.value = String(s.run.realtimeFactor);
  updateButtons();
}

function updateButtons() {
  const s = state.session;
  const has = Boolean(state.sessionId && s);
  const status = s?.status;
  ui.run.disabled = !has || !(status === "ready" || status === "paused");
  ui.step.disabled = ui.run.disabled;
  ui.pause.disabled = !has || status !== "running";
  ui.reset.disabled = !has;
  ui.del.disabled = !has;
}

// ------------------------------------------------------------------ controls

function realtimeFactor() {
  if (ui.rtfMax.checked) return null;
  const r = Number(ui.rtf.value);
  return Number.isFinite(r) && r > 0 ? r : 1;
}

async function command(what, fn) {
  const id = state.sessionId;
  if (!id) return;
  await guarded(what, async () => {
    const out = await fn(id);
    if (out?.session) showSession(out.session);
    else if (out?.status) showSession(out);
    else showSession(await client.getSession(id));
    return out;
  });
}

ui.run.addEventListener("click", () =>
  command("run", (id) => client.run(id, { realtimeFactor: realtimeFactor() })),
);
ui.pause.addEventListener("click", () => command("pause", (id) => client.pause(id)));
ui.reset.addEventListener("click", () =>
  command("reset", async (id) => {
    const st = await client.reset(id);
    energyPlot.clear();
    bodyPlot.clear();
    contactPlot.clear();
    onState({ ...st, type: "state", dropped: 0 });
    return st;
  }),
);
ui.step.addEventListener("click", () =>
  command("step", async (id) => {
    const n = Math.max(1, Math.floor(Number(ui.stepCount.value) || 1));
    return client.step(id, { steps: n });
  }),
);

async function changeRate() {
  // a running session takes a new real-time factor by pause + run (once per new value:
  // an input also fires "change" when it loses the focus), decided on the server's
  // current status, not on the last one shown (a refresh may be in flight). The factor
  // is read now, synchronously: once the input has lost the focus a session refresh
  // shows the server's old factor in it.
  const id = state.sessionId;
  if (!id) return;
  const wanted = realtimeFactor();
  const s = await client.getSession(id).catch(() => state.session);
  if (s?.status !== "running" || (s.run?.realtimeFactor ?? null) === wanted) return;
  await command("changing the real-time factor", async (id) => {
    await client.pause(id);
    return client.run(id, { realtimeFactor: wanted });
  });
}
ui.rtf.addEventListener("change", changeRate);
ui.rtfMax.addEventListener("change", changeRate);

// ------------------------------------------------------------------ frames

function onScene(scene) {
  state.framesReceived++;
  state.scenesReceived++;
  state.scene = scene;
  viewer.setScene(scene, state.model);
  const keep = ui.plotBody.value;
  ui.plotBody.textContent = "";
  for (const b of scene.bodies) {
    if (b.fixed) continue;
    const opt = document.createElement("option");
    opt.value = b.id;
    opt.textContent = b.id;
    ui.plotBody.appendChild(opt);
  }
  if ([...ui.plotBody.options].some((o) => o.value === keep)) ui.plotBody.value = keep;
}

function onState(frame) {
  state.framesReceived++;
  state.statesReceived++;
  state.lastFrame = frame;
  viewer.update(frame);
  const t = frame.time;
  if (frame.energy)
    energyPlot.push(t, [frame.energy.kinetic, frame.energy.potential, frame.energy.total]);
  const bodyId = ui.plotBody.value;
  const b = frame.bodies?.find((x) => x.id === bodyId);
  if (b) bodyPlot.push(t, b[ui.plotQuantity.value]);
  if (frame.contacts) {
    let sn = 0;
    let st = 0;
    let mx = 0;
    for (const c of frame.contacts) {
      sn += c.normalForce;
      st += Math.hypot(...c.tangentForce);
      mx = Math.max(mx, c.normalForce);
    }
    contactPlot.push(t, [sn, st, mx]);
  }
  if (frame.solver) {
    $("solver-newton").textContent = String(frame.solver.newtonIterations);
    $("solver-linear").textContent = String(frame.solver.linearIterations);
    $("solver-contact").textContent = String(frame.solver.contactIterations);
    $("solver-residual").textContent = frame.solver.contactResidual.toExponential(2);
  }
  $("solver-contacts").textContent = String(frame.contacts?.length ?? 0);
  $("stream-frames").textContent = `${state.stream?.frames ?? 0} / ${state.stream?.dropped ?? 0}`;
  $("info-time").textContent = `${t.toFixed(4)} s`;
  $("info-step").textContent = String(frame.step);
  ui.legend.textContent =
    viewer.arrowScale > 0
      ? `contact arrows: 1 m = ${(1 / viewer.arrowScale).toPrecision(3)} N`
      : "";
}

const resetBodyPlot = () => {
  const q = ui.plotQuantity.value;
  bodyPlot.setLabels(
    q === "angularVelocity"
      ? ["ωx", "ωy", "ωz"]
      : q === "velocity"
        ? ["vx", "vy", "vz"]
        : ["x", "y", "z"],
  );
};
ui.plotBody.addEventListener("change", resetBodyPlot);
ui.plotQuantity.addEventListener("change", resetBodyPlot);

// ------------------------------------------------------------------ start

window.moreauDashboard = {
  client,
  state,
  viewer,
  plots: { energy: energyPlot, body: bodyPlot, contacts: contactPlot },
  get streamStatus() {
    return state.stream?.status ?? "idle";
  },
  get reconnects() {
    return state.stream?.reconnects ?? 0;
  },
  attach,
};

(async () => {
  await guarded("loading the examples", loadExamples);
  await guarded("contacting the server", async () => {
    await client.health();
    ui.serverStatus.textContent = "server: up";
  });
  await guarded("listing sessions", refreshSessions);
  updateButtons();
  document.body.dataset.ready = "true";
})();
