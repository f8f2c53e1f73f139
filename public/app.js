// The Moreau dashboard: pick an example or upload a model, create (or attach to) a session,
// run / pause / step / reset it at a chosen real-time factor, and watch it live over the
// session's WebSocket stream (3-D view, time plots, solver figures). The stream reconnects
// when it drops. Run-time control: a slider per actuator of the model (its command, sent as
// inputs), a push gesture (shift-drag from a body, or drag in push mode: an impulse at the
// picked point) and a replay of the session's recording (a scrubber over its states, shown
// in the 3-D view and marked in the plots). A session attached by id (one created over
// REST) gets its model (springs, actuators) and the plots of its steps so far from its
// recording. The contact plot shows, besides the frames' own contacts, the largest total
// normal force since the previous frame (the frames' contactPeak), so a one-step impact
// between two frames shows. Errors from the server show in a banner over the 3-D view.
// window.moreauDashboard exposes the page's state for tests and debugging.
// A server with access control answers 401: the page then asks for an API key, keeps it
// for the tab (sessionStorage) and sends it with its API calls and stream.
// /client.js: the typed client of src/client, bundled for the browser (src/server/client-bundle.ts)
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
  view: $("view"),
  actuatorsSection: $("actuators-section"),
  actuators: $("actuators"),
  pushMode: $("push-mode"),
  pushScale: $("push-scale"),
  recording: $("recording-btn"),
  replay: $("replay"),
  replaySlider: $("replay-slider"),
  replayMarks: $("replay-marks"),
  replayInfo: $("replay-info"),
  live: $("live-btn"),
  alert: $("alert"),
  alertText: $("alert-text"),
  alertClose: $("alert-close"),
  fit: $("fit-btn"),
  follow: $("follow"),
};

const viewer = new Viewer($("view"));
// "total + dissipated" is the energy balance (State.energy.dissipated): flat while it holds
const energyPlot = new TimePlot($("plot-energy"), [
  "kinetic",
  "potential",
  "total",
  "total + dissipated",
]);
const bodyPlot = new TimePlot($("plot-body-chart"), ["x", "y", "z"]);
const contactPlot = new TimePlot($("plot-contacts"), [
  "Σ normal",
  "Σ |friction|",
  "max normal",
  "peak Σ normal",
]);
const plots = { energy: energyPlot, body: bodyPlot, contacts: contactPlot };

/** What the page is showing. */
const state = {
  sessionId: null,
  session: null,
  /**
   * the session's model: the one this page posted, or for a session attached by id the one
   * of its recording (null until known)
   */
  model: null,
  stream: null,
  /** the id of the session whose stream the server closed with a reason already shown */
  closedWithReason: null,
  /** the `every` of the open stream */
  streamEvery: null,
  /**
   * live frames kept while the plots show something else (the history being fetched, a
   * replay), plotted after it when it ends; null: not kept
   */
  liveBuffer: null,
  /** the history plotted for a session attached by id: { states, every } (null: none) */
  history: null,
  /** counts attaches and resets: a history fetched before one of them is not plotted */
  epoch: 0,
  framesReceived: 0,
  scenesReceived: 0,
  statesReceived: 0,
  lastFrame: null,
  scene: null,
  poll: null,
  /** actuator id -> its control (slider, number box, range, readout) */
  controls: new Map(),
  /** inputs the server accepted (actuator commands and pushes), and their requests */
  inputsSent: 0,
  inputRequests: 0,
  /** the last push: { id, impulse, point, pixels, step } */
  lastPush: null,
  /** the recording being replayed: { recording, every, index } (null: live) */
  replay: null,
};

/** A status line in the header; an error also shows in the banner over the 3-D view. */
function say(text, isError = false) {
  ui.message.textContent = text;
  ui.message.classList.toggle("error", isError);
  if (isError) showAlert(text);
}

function showAlert(text) {
  ui.alertText.textContent = text;
  ui.alert.hidden = false;
}

function hideAlert() {
  ui.alert.hidden = true;
}

ui.alertClose.addEventListener("click", hideAlert);

function describeError(err) {
  if (err instanceof MoreauApiError) {
    // the issues the message does not already spell out
    const lines = err.issueLines().filter((l) => !err.message.includes(l));
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

/** Frames per second of wall time the automatic `every` aims at (under the server's default 60). */
const AUTO_FPS = 50;

/**
 * The stream's `every`: the one entered, else about AUTO_FPS frames per second of wall time
 * at the real-time factor (1 for "as fast as possible"). A stream over the server's frame
 * rate loses frames, and a lost frame's contact peak with it.
 */
function streamEvery() {
  const entered = Number(ui.every.value);
  if (entered >= 1) return Math.floor(entered);
  const dt = state.session?.dt ?? 0.005;
  return Math.max(1, Math.ceil((realtimeFactor() ?? 1) / (AUTO_FPS * dt) - 1e-9));
}

/** Reopens the stream when the `every` it should have changed (a new real-time factor). */
function keepEvery() {
  if (state.stream && state.streamEvery !== streamEvery()) openStream();
}

function detach() {
  exitReplay(false);
  state.liveBuffer = null;
  clearInputQueue();
  cancelPush();
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
  hideAlert();
  state.sessionId = id;
  state.model = model;
  state.scene = null;
  state.lastFrame = null;
  state.lastPush = null;
  state.history = null;
  state.epoch++;
  clearPlots();
  buildActuators(model?.actuators ?? [], model);
  const s = await guarded("reading the session", () => client.getSession(id));
  if (!s) return;
  showSession(s);
  // attached by id: keep the frames from the start, the history goes before them
  if (!model) state.liveBuffer = [];
  openStream();
  state.poll = setInterval(pollSession, 1000);
  if (!model) fetchModelAndHistory(id);
}

/** The history is replayed (GET .../recording?every=k) only up to this many body-steps. */
const HISTORY_BODY_STEPS = 100_000;
/** ... at about this many states. */
const HISTORY_STATES = 1000;
/** Live frames kept at most while the plots show something else. */
const MAX_LIVE_BUFFER = 5000;

/**
 * A session attached by id: its model from its recording (the actuators' types and ranges,
 * the bodies' masses, the springs of the view; from its snapshot when the recording is
 * refused, e.g. truncated), then the plots of its steps so far from the recording's
 * replayed states when that replay is short (it runs on the session's worker). Without the
 * model the actuators' ids come from the frames.
 */
async function fetchModelAndHistory(id) {
  const epoch = state.epoch;
  let head;
  try {
    head = await client.getRecording(id);
  } catch {
    state.liveBuffer = null;
    const snap = await client.getSnapshot(id).catch(() => null);
    if (snap && state.sessionId === id && !state.model) adoptModel(snap.simulation.model);
    return;
  }
  if (state.sessionId !== id) return;
  if (!state.model) adoptModel(head.model);
  if (state.epoch !== epoch) return; // reset meanwhile: those steps are gone
  const span = head.end.step - (head.start?.step ?? 0);
  const bodies = Math.max(1, head.model.bodies.length);
  if (span <= 0 || span * bodies > HISTORY_BODY_STEPS) {
    state.liveBuffer = null;
    if (span > 0)
      say(
        `attached at step ${head.end.step}: the plots start now (Recording replays the steps before)`,
      );
    return;
  }
  const every = Math.max(1, Math.ceil(span / HISTORY_STATES));
  const rec = await guarded("fetching the history", () => client.getRecording(id, every));
  if (state.epoch !== epoch) return;
  if (!rec) {
    state.liveBuffer = null;
    return;
  }
  state.history = { states: rec.states.length, every };
  if (!state.replay) replot(rec.states);
}

/**
 * Plots recorded states (the history, a replay's) followed by the live frames kept
 * meanwhile, and stops keeping them.
 */
function replot(states) {
  const live = state.liveBuffer ?? [];
  state.liveBuffer = null;
  clearPlots();
  const first = live.length ? live[0].step : Number.POSITIVE_INFINITY;
  for (const s of states) if (s.step < first) plotFrame(s);
  for (const f of live) plotFrame(f);
  for (const p of Object.values(plots)) p.maybeRedraw(true);
}

function adoptModel(model) {
  state.model = model;
  if (state.scene) {
    viewer.setScene(state.scene, model);
    if (state.replay) showReplayState(state.replay.index);
    else if (state.lastFrame) viewer.update(state.lastFrame);
  }
  buildActuators(model?.actuators ?? [], model);
}

function openStream() {
  const id = state.sessionId;
  if (!id) return;
  state.stream?.close();
  const every = streamEvery();
  state.streamEvery = every;
  const stream = client.stream(
    id,
    {
      every,
      fields: [
        "bodies",
        "contacts",
        "joints",
        "actuators",
        "energy",
        "solver",
        "contactPeak",
        "fem",
        "femStrain",
      ],
    },
    {
      onScene: onScene,
      onState: onState,
      onStatus: (s, info) => {
        if (state.stream !== stream) return; // replaced by a newer stream
        setStreamStatus(s, info);
        // the server's reason, e.g. "session deleted" (1000) or a refusal
        if (s === "closed" && state.sessionId === id && info.reason) {
          say(`stream closed: ${info.reason}`, true);
          state.closedWithReason = id;
        }
      },
    },
  );
  state.stream = stream;
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
      // the server closes a deleted session's stream with its reason, which onStatus shows:
      // while that stream is open the close is on its way; once it has shown, leave it
      if (state.stream?.status === "open") return;
      if (state.closedWithReason !== id) say(`session ${id} no longer exists`, true);
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
    `${c.bodies} (${c.forces} forces, ${c.joints} joints, ${c.motors} motors, ` +
    `${c.actuators} actuators, ${c.sensors} sensors)`;
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
  ui.recording.disabled = !has;
  ui.live.disabled = !state.replay;
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

ui.run.addEventListener("click", async () => {
  await command("run", (id) => client.run(id, { realtimeFactor: realtimeFactor() }));
  keepEvery();
});
ui.pause.addEventListener("click", () => command("pause", (id) => client.pause(id)));
ui.reset.addEventListener("click", () =>
  command("reset", async (id) => {
    const st = await client.reset(id);
    exitReplay(false);
    state.liveBuffer = null;
    state.epoch++;
    clearPlots();
    releaseControls(); // the commands are the model's again
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
async function rateChanged() {
  await changeRate();
  keepEvery();
}
ui.rtf.addEventListener("change", rateChanged);
ui.rtfMax.addEventListener("change", rateChanged);

// ------------------------------------------------------------------ frames

function onScene(scene) {
  state.framesReceived++;
  state.scenesReceived++;
  // the same session's scene again (a reconnection, a new `every`): the view stays as it is
  const again = state.scene?.session === scene.session;
  state.scene = scene;
  viewer.setScene(scene, state.model, !again);
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
  if (state.replay) showReplayState(state.replay.index);
  else if (again && state.lastFrame) viewer.update(state.lastFrame); // until the next frame
}

function onState(frame) {
  state.framesReceived++;
  state.statesReceived++;
  state.lastFrame = frame;
  if (frame.actuators?.length && state.controls.size === 0 && !state.model)
    buildActuators(
      frame.actuators.map((a) => ({ id: a.id })),
      null,
    );
  $("stream-frames").textContent = `${state.stream?.frames ?? 0} / ${state.stream?.dropped ?? 0}`;
  $("info-time").textContent = `${frame.time.toFixed(4)} s`;
  $("info-step").textContent = String(frame.step);
  if (state.liveBuffer) {
    state.liveBuffer.push(frame);
    if (state.liveBuffer.length > MAX_LIVE_BUFFER) state.liveBuffer.shift();
  }
  if (state.replay) return; // the view shows a recorded state: live frames wait
  showFrame(frame);
  plotFrame(frame);
}

/** Draws a state (live or recorded) in the 3-D view, the solver figures and the actuators. */
function showFrame(frame) {
  viewer.update(frame);
  if (frame.actuators) showActuators(frame.actuators);
  if (frame.solver) {
    $("solver-newton").textContent = String(frame.solver.newtonIterations);
    $("solver-linear").textContent = String(frame.solver.linearIterations);
    $("solver-contact").textContent = String(frame.solver.contactIterations);
    // the step's contact figures, flagged when the solver's budget ran out before its
    // stated tolerance (README, Solver settings)
    const { contactResidual, contactConverged, penetration, projectionConverged } = frame.solver;
    $("solver-residual").textContent =
      contactResidual.toExponential(2) + (contactConverged ? "" : " (sweeps ran out)");
    $("solver-penetration").textContent =
      `${(1000 * penetration).toPrecision(3)} mm${projectionConverged ? "" : " (over tolerance)"}`;
    // generalized-α's error control and the joints' projection, flagged alike
    const { substeps, stepError, stepToleranceMet, jointToleranceMet } = frame.solver;
    $("solver-substeps").textContent = String(substeps);
    $("solver-step-error").textContent =
      `${stepError.toExponential(2)} m${stepToleranceMet ? "" : " (over tolerance)"}`;
    $("solver-joints").textContent = jointToleranceMet ? "within tolerance" : "over tolerance";
  }
  $("solver-contacts").textContent = String(frame.contacts?.length ?? 0);
  ui.legend.textContent =
    viewer.arrowScale > 0
      ? `contact arrows: 1 m = ${(1 / viewer.arrowScale).toPrecision(3)} N`
      : "";
}

function clearPlots() {
  for (const p of Object.values(plots)) p.clear();
}

/** Appends a state to the time plots (bodyOnly: to the body's plot only). */
function plotFrame(frame, bodyOnly = false) {
  const t = frame.time;
  const bodyId = ui.plotBody.value;
  const b = frame.bodies?.find((x) => x.id === bodyId);
  if (b) bodyPlot.push(t, b[ui.plotQuantity.value]);
  if (bodyOnly) return;
  if (frame.energy) {
    const e = frame.energy;
    energyPlot.push(t, [e.kinetic, e.potential, e.total, e.total + e.dissipated]);
  }
  if (frame.contacts) {
    let sn = 0;
    let st = 0;
    let mx = 0;
    for (const c of frame.contacts) {
      sn += c.normalForce;
      st += Math.hypot(...c.tangentForce);
      mx = Math.max(mx, c.normalForce);
    }
    // the largest Σ normal of the steps since the previous frame; a frame that covers no
    // step (after a reset, inputs) and a recorded state have only their own
    const peak = frame.contactPeak?.steps > 0 ? frame.contactPeak.maxNormalForce : sn;
    contactPlot.push(t, [sn, st, mx, peak]);
  }
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
  if (state.replay) {
    for (const s of state.replay.recording.states) plotFrame(s, true);
    bodyPlot.maybeRedraw(true);
    markPlots(state.replay.recording.states[state.replay.index].time);
  }
};
ui.plotBody.addEventListener("change", resetBodyPlot);
ui.plotQuantity.addEventListener("change", resetBodyPlot);

// ------------------------------------------------------------------ inputs

/** Actuator commands are sent at most this often (ms): the last value of a burst wins. */
const INPUT_INTERVAL_MS = 40;

/**
 * Sends run-time inputs (POST /v1/sessions/:id/inputs); a refusal (400 with the issue
 * path, 409 for a diverged session…) is shown in the message area. Returns the answer
 * ({ step, pending }) or undefined.
 */
async function sendInputs(inputs, what = "sending inputs") {
  const id = state.sessionId;
  if (!id) return undefined;
  const out = await guarded(what, () => client.sendInputs(id, inputs));
  if (out) {
    state.inputsSent += inputs.length;
    state.inputRequests++;
  }
  return out;
}

/** Throttled inputs: key -> the latest input for it, sent in one request. */
const inputQueue = { pending: new Map(), timer: null, busy: false, last: -Infinity };

function queueInput(key, input) {
  inputQueue.pending.set(key, input);
  scheduleInputs();
}

function scheduleInputs() {
  if (inputQueue.timer || inputQueue.busy || inputQueue.pending.size === 0) return;
  const wait = Math.max(0, inputQueue.last + INPUT_INTERVAL_MS - performance.now());
  inputQueue.timer = setTimeout(flushInputs, wait);
}

async function flushInputs() {
  inputQueue.timer = null;
  const inputs = [...inputQueue.pending.values()];
  inputQueue.pending.clear();
  if (inputs.length === 0) return;
  inputQueue.last = performance.now();
  inputQueue.busy = true; // one request at a time: the server sees the commands in order
  try {
    await sendInputs(inputs, "setting the actuators");
  } finally {
    inputQueue.busy = false;
    scheduleInputs();
  }
}

function clearInputQueue() {
  clearTimeout(inputQueue.timer);
  inputQueue.timer = null;
  inputQueue.pending.clear();
}

// ------------------------------------------------------------------ actuators

const fmt = (v) =>
  v == null || !Number.isFinite(v)
    ? "–"
    : v !== 0 && (Math.abs(v) >= 1e4 || Math.abs(v) < 1e-3)
      ? v.toExponential(2)
      : v.toFixed(3);

/**
 * An actuator's default slider range and units: a position servo ±π rad on a revolute
 * joint, ±1 m on a prismatic one (the joint's limits when it has some), a velocity servo
 * ±20 rad/s or m/s, a torque ±20 N·m or N (± its effort limit when it has one).
 */
function actuatorRange(a, model) {
  const joint = model?.joints?.find((j) => j.id === a.joint);
  const prismatic = joint?.type === "prismatic";
  const effortUnit = joint ? (prismatic ? "N" : "N·m") : "";
  switch (a.type) {
    case "position": {
      const [lo, hi] = joint?.limits
        ? [joint.limits.lower, joint.limits.upper]
        : prismatic
          ? [-1, 1]
          : [-Math.PI, Math.PI];
      return { min: lo, max: hi, unit: joint ? (prismatic ? "m" : "rad") : "", effortUnit };
    }
    case "velocity":
      return { min: -20, max: 20, unit: joint ? (prismatic ? "m/s" : "rad/s") : "", effortUnit };
    case "torque": {
      const l = a.effortLimit ?? 20;
      return { min: -l, max: l, unit: effortUnit, effortUnit };
    }
    default:
      return { min: -20, max: 20, unit: "", effortUnit };
  }
}

function el(tag, props = {}, children = []) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(props)) {
    if (k === "dataset") Object.assign(e.dataset, v);
    else e[k] = v;
  }
  for (const c of children) e.append(c);
  return e;
}

/** One actuator's row: slider, number box, min / max, "model" (back to its function), readout. */
function actuatorControl(a, model, previous) {
  const range = actuatorRange(a, model);
  const min = previous?.rangeEdited ? Number(previous.slider.min) : range.min;
  const max = previous?.rangeEdited ? Number(previous.slider.max) : range.max;
  const slider = el("input", { type: "range", step: "any", min: String(min), max: String(max) });
  slider.setAttribute("aria-label", `${a.id} command`);
  const box = el("input", { type: "number", step: "any", className: "act-value" });
  box.setAttribute("aria-label", `${a.id} command value`);
  const minBox = el("input", { type: "number", step: "any", value: String(+min.toFixed(3)) });
  const maxBox = el("input", { type: "number", step: "any", value: String(+max.toFixed(3)) });
  minBox.setAttribute("aria-label", `${a.id} slider minimum`);
  maxBox.setAttribute("aria-label", `${a.id} slider maximum`);
  const release = el("button", {
    type: "button",
    textContent: "model",
    title: "give the actuator back to the model's function (value null)",
  });
  const readout = el("div", { className: "actuator-readout", textContent: "command – · effort –" });
  const kind = a.type ? `${a.type}${a.joint ? ` · ${a.joint}` : ""}` : "";
  const root = el("div", { className: "actuator", dataset: { id: a.id } }, [
    el("div", { className: "actuator-head" }, [
      el("span", { className: "actuator-name", textContent: a.id }),
      el("span", {
        className: "actuator-kind",
        textContent: range.unit ? `${kind} (${range.unit})` : kind,
      }),
    ]),
    el("div", { className: "row" }, [slider, box, release]),
    el("div", { className: "row bounds" }, [
      el("label", { className: "inline" }, ["min ", minBox]),
      el("label", { className: "inline" }, ["max ", maxBox]),
    ]),
    readout,
  ]);
  // touched: the user set the command (the slider no longer follows the frames')
  const c = { id: a.id, spec: a, range, el: root, slider, box, readout, touched: false };
  c.rangeEdited = previous?.rangeEdited ?? false;
  setControlValue(c, previous ? Number(previous.box.value) || 0 : 0);
  c.touched = previous?.touched ?? false;

  const command = (value) => {
    c.touched = true;
    queueInput(`actuator:${a.id}`, { type: "actuator", id: a.id, value });
  };
  slider.addEventListener("input", () => {
    const v = Number(slider.value);
    box.value = String(+v.toFixed(6));
    command(v);
  });
  box.addEventListener("change", () => {
    const v = Number(box.value);
    if (box.value.trim() === "" || !Number.isFinite(v)) return;
    setControlValue(c, v);
    command(v);
  });
  const bounds = () => {
    const lo = Number(minBox.value);
    const hi = Number(maxBox.value);
    if (!(Number.isFinite(lo) && Number.isFinite(hi) && lo < hi)) {
      minBox.value = slider.min;
      maxBox.value = slider.max;
      return;
    }
    c.rangeEdited = true;
    slider.min = String(lo);
    slider.max = String(hi);
    slider.value = box.value; // the browser clamps it into the new range
  };
  minBox.addEventListener("change", bounds);
  maxBox.addEventListener("change", bounds);
  release.addEventListener("click", () => {
    c.touched = false; // the slider follows the frames' command (the model's) again
    queueInput(`actuator:${a.id}`, { type: "actuator", id: a.id, value: null });
  });
  return c;
}

/** Puts a value on a control, widening its slider's range to hold it. */
function setControlValue(c, v) {
  const { slider, box } = c;
  if (v < Number(slider.min)) slider.min = String(v);
  if (v > Number(slider.max)) slider.max = String(v);
  const [minBox, maxBox] = c.el.querySelectorAll(".bounds input");
  if (minBox) minBox.value = String(+Number(slider.min).toFixed(3));
  if (maxBox) maxBox.value = String(+Number(slider.max).toFixed(3));
  slider.value = String(v);
  box.value = String(+v.toFixed(6));
}

/** (Re)builds the actuators' panel; values and ranges the user set are kept. */
function buildActuators(list, model) {
  const old = state.controls;
  state.controls = new Map();
  ui.actuators.textContent = "";
  for (const a of list) {
    const c = actuatorControl(a, model, old.get(a.id));
    state.controls.set(a.id, c);
    ui.actuators.appendChild(c.el);
  }
  ui.actuatorsSection.hidden = list.length === 0;
}

/** After a reset: the sliders show the next frame's commands (the model's). */
function releaseControls() {
  clearInputQueue();
  for (const c of state.controls.values()) c.touched = false;
}

/**
 * The frame's commands and applied efforts; a slider the user has not moved (or gave back
 * to the model) follows the command.
 */
function showActuators(actuators) {
  for (const a of actuators) {
    const c = state.controls.get(a.id);
    if (!c) continue;
    const u = c.range.unit ? ` ${c.range.unit}` : "";
    const eu = c.range.effortUnit ? ` ${c.range.effortUnit}` : "";
    c.readout.textContent = `command ${fmt(a.command)}${u} · effort ${fmt(a.effort)}${eu}`;
    c.command = a.command;
    c.effort = a.effort;
    if (!c.touched && document.activeElement !== c.slider && document.activeElement !== c.box)
      setControlValue(c, a.command);
  }
}

// ------------------------------------------------------------------ push

/**
 * The push gesture: shift-drag (or drag in push mode) from a dynamic body draws an arrow
 * from the picked point in the view plane; releasing sends an impulse along it, at the
 * picked point (in the body frame, through the body's pose of the latest frame), of
 * magnitude scale × mass × drag length in pixels: the body's speed changes by about
 * scale (m/s) per pixel whatever its mass (plus the turn an off-centre kick gives).
 * Without the modifier, or away from a body, the camera orbits (pans with shift) as before.
 */
const push = { drag: null };
const MIN_PUSH_PIXELS = 3;

function pushScale() {
  const k = Number(ui.pushScale.value);
  return Number.isFinite(k) && k >= 0 ? k : 0.01;
}

function bodyMass(id) {
  const m = state.model?.bodies?.find((b) => b.id === id)?.mass;
  return Number.isFinite(m) && m > 0 ? m : 1;
}

function pushImpulse(d) {
  const pixels = Math.hypot(d.x - d.x0, d.y - d.y0);
  const dir = d.end.clone().sub(d.hit);
  if (pixels < MIN_PUSH_PIXELS || dir.lengthSq() === 0) return null;
  const magnitude = pushScale() * bodyMass(d.id) * pixels;
  dir.normalize().multiplyScalar(magnitude);
  return { pixels, magnitude, impulse: [dir.x, dir.y, dir.z] };
}

function setPushCursor(on) {
  ui.view.classList.toggle("push", on || ui.pushMode.checked || push.drag !== null);
}

ui.view.addEventListener(
  "pointerdown",
  (ev) => {
    if (ev.button !== 0 || !(ev.shiftKey || ui.pushMode.checked)) return;
    if (!state.sessionId || state.replay || push.drag) return;
    const hit = viewer.pick(ev.clientX, ev.clientY);
    const pose = hit && viewer.poses.get(hit.id);
    if (!hit || !pose) return; // not on a body: the camera takes it
    // capture phase on the view's container: the camera controls never see this drag
    ev.stopPropagation();
    ev.preventDefault();
    ui.view.setPointerCapture(ev.pointerId);
    const local = hit.point.clone().sub(pose.x).applyQuaternion(pose.q.clone().invert());
    push.drag = {
      id: hit.id,
      pointerId: ev.pointerId,
      hit: hit.point,
      local: [local.x, local.y, local.z],
      end: hit.point.clone(),
      x0: ev.clientX,
      y0: ev.clientY,
      x: ev.clientX,
      y: ev.clientY,
    };
    setPushCursor(true);
  },
  { capture: true },
);

ui.view.addEventListener("pointermove", (ev) => {
  const d = push.drag;
  if (!d || ev.pointerId !== d.pointerId) return;
  ev.stopPropagation();
  const end = viewer.viewPlanePoint(ev.clientX, ev.clientY, d.hit);
  if (!end) return;
  d.end = end;
  d.x = ev.clientX;
  d.y = ev.clientY;
  viewer.showPushArrow(d.hit, end);
  const p = pushImpulse(d);
  ui.legend.textContent = p
    ? `push ${d.id}: ${p.magnitude.toPrecision(3)} N·s (${p.pixels.toFixed(0)} px × ${pushScale()} m/s/px × ${bodyMass(d.id)} kg)`
    : `push ${d.id}: drag to aim`;
});

ui.view.addEventListener("pointerup", (ev) => {
  const d = push.drag;
  if (!d || ev.pointerId !== d.pointerId) return;
  ev.stopPropagation();
  const end = viewer.viewPlanePoint(ev.clientX, ev.clientY, d.hit);
  if (end) {
    d.end = end;
    d.x = ev.clientX;
    d.y = ev.clientY;
  }
  cancelPush();
  const p = pushImpulse(d);
  if (!p) return;
  const input = { type: "impulse", id: d.id, impulse: p.impulse, point: d.local };
  sendInputs([input], `pushing ${d.id}`).then((out) => {
    if (!out) return;
    state.lastPush = { id: d.id, impulse: p.impulse, point: d.local, pixels: p.pixels, ...out };
    say(`pushed ${d.id}: ${p.magnitude.toPrecision(3)} N·s at step ${out.step}`);
  });
});

function cancelPush() {
  const d = push.drag;
  push.drag = null;
  viewer.hidePushArrow();
  if (d && ui.view.hasPointerCapture?.(d.pointerId)) ui.view.releasePointerCapture(d.pointerId);
  setPushCursor(false);
}

ui.view.addEventListener("pointercancel", cancelPush);
ui.view.addEventListener("lostpointercapture", () => {
  if (push.drag) cancelPush();
});
window.addEventListener("keydown", (ev) => {
  if (ev.key === "Escape" && push.drag) cancelPush();
  else if (ev.key === "Shift") setPushCursor(true);
});
window.addEventListener("keyup", (ev) => {
  if (ev.key === "Shift") setPushCursor(false);
});
window.addEventListener("blur", () => setPushCursor(false));
ui.pushMode.addEventListener("change", () => setPushCursor(false));

// ------------------------------------------------------------------ recording replay

/** The replay asks for at most about this many states (every = ⌈steps / this⌉). */
const MAX_REPLAY_STATES = 2000;

/**
 * Fetches the session's recording (GET /v1/sessions/:id/recording: first without states,
 * for its span, then with ?every=k) and shows its states under the scrubber.
 */
async function loadRecording() {
  const id = state.sessionId;
  if (!id) return;
  ui.recording.disabled = true;
  try {
    await guarded("fetching the recording", async () => {
      const head = await client.getRecording(id);
      const span = head.end.step - (head.start?.step ?? 0);
      if (span <= 0) {
        say("nothing recorded yet: run or step the session first");
        return;
      }
      const every = Math.max(1, Math.ceil(span / MAX_REPLAY_STATES));
      say(`replaying ${span} steps…`);
      const rec = await client.getRecording(id, every);
      if (state.sessionId !== id) return;
      if (!state.model) adoptModel(rec.model);
      if (!rec.states?.length) {
        say("the recording has no states");
        return;
      }
      enterReplay(rec, every);
      say(
        `recording: ${rec.states.length} states (every ${every} steps), ${rec.inputs.length} inputs`,
      );
    });
  } finally {
    updateButtons();
  }
}

function enterReplay(rec, every) {
  const states = rec.states;
  state.replay = { recording: rec, every, index: states.length - 1 };
  // live frames arriving meanwhile are plotted after the recording when it ends
  state.liveBuffer ??= [];
  ui.replay.dataset.mode = "replay";
  ui.replaySlider.min = "0";
  ui.replaySlider.max = String(states.length - 1);
  ui.replaySlider.disabled = false;
  ui.replaySlider.value = String(states.length - 1);
  // the recorded inputs' steps on the track (not those still pending after its end)
  ui.replayMarks.textContent = "";
  const s0 = states[0].step;
  const span = Math.max(1, states[states.length - 1].step - s0);
  const seen = new Set();
  for (const x of rec.inputs) {
    if (x.step > rec.end.step) continue;
    const f = Math.min(1, Math.max(0, (x.step - s0) / span));
    const key = Math.round(f * 500);
    if (seen.has(key)) continue;
    seen.add(key);
    ui.replayMarks.appendChild(el("span", { style: `left: ${(100 * f).toFixed(2)}%` }));
  }
  clearPlots();
  for (const s of states) plotFrame(s);
  for (const p of Object.values(plots)) p.maybeRedraw(true);
  showReplayState(state.replay.index);
  updateButtons();
}

/** Shows recorded state i in the view (and the actuators' readouts), marked in the plots. */
function showReplayState(i) {
  const r = state.replay;
  if (!r) return;
  const states = r.recording.states;
  r.index = Math.min(states.length - 1, Math.max(0, i));
  const s = states[r.index];
  showFrame(s);
  markPlots(s.time);
  setReplayInfo(
    `t ${s.time.toFixed(3)} s · step ${s.step}`,
    `${r.recording.inputs.length} inputs · ${r.index + 1}/${states.length}`,
  );
}

function setReplayInfo(a, b) {
  ui.replayInfo.textContent = "";
  ui.replayInfo.append(el("span", { textContent: a }), el("span", { textContent: b }));
}

/** A dashed line at time t in every plot (and uPlot's cursor there, for its legend). */
function markPlots(t) {
  for (const p of Object.values(plots)) {
    const u = p.plot;
    if (!u?.over) continue;
    let m = u.over.querySelector(".replay-mark");
    if (!m) {
      m = el("div", { className: "replay-mark" });
      u.over.appendChild(m);
    }
    const x = u.valToPos(t, "x");
    m.hidden = !Number.isFinite(x);
    if (Number.isFinite(x)) {
      m.style.left = `${x}px`;
      u.setCursor({ left: x, top: u.over.clientHeight / 2 });
    }
  }
}

function unmarkPlots() {
  for (const p of Object.values(plots)) p.plot?.over?.querySelector(".replay-mark")?.remove();
}

/**
 * Back to the live stream: the plots hold the recording and the live frames since it was
 * loaded (with showLatest; else, on a reset or a detach, they start again from the next frame).
 */
function exitReplay(showLatest = true) {
  const r = state.replay;
  if (!r) return;
  state.replay = null;
  ui.replay.dataset.mode = "live";
  ui.replaySlider.disabled = true;
  ui.replayMarks.textContent = "";
  setReplayInfo("live", "");
  unmarkPlots();
  if (showLatest) {
    replot(r.recording.states);
    if (state.lastFrame) showFrame(state.lastFrame);
  } else {
    state.liveBuffer = null;
    clearPlots();
  }
  updateButtons();
}

ui.recording.addEventListener("click", loadRecording);
ui.live.addEventListener("click", () => exitReplay(true));
ui.replaySlider.addEventListener("input", () => showReplayState(Number(ui.replaySlider.value)));

// ------------------------------------------------------------------ camera

ui.fit.addEventListener("click", () => {
  ui.follow.checked = false;
  viewer.setFollow(false);
  viewer.fit();
});
ui.follow.addEventListener("change", () => viewer.setFollow(ui.follow.checked));

// ------------------------------------------------------------------ start

window.moreauDashboard = {
  client,
  state,
  viewer,
  plots,
  get streamStatus() {
    return state.stream?.status ?? "idle";
  },
  get reconnects() {
    return state.stream?.reconnects ?? 0;
  },
  get streamEvery() {
    return state.streamEvery;
  },
  attach,
  sendInputs,
  loadRecording,
  exitReplay,
  /** the push gesture's scale: velocity change (m/s) per pixel of drag */
  get pushScale() {
    return pushScale();
  },
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
