/**
 * The dashboard's run-time control end to end in headless Chromium (test/dashboard/browser.ts):
 * a model with a PD position servo on a revolute joint (a rod, gravity off) and a free ball
 * is uploaded and run; the servo's slider (moved through the DOM) sends actuator inputs, and
 * over REST the command becomes 1.0 and the joint angle approaches it; a shift-drag on the
 * canvas from the ball sends an impulse whose velocity change (read over REST) points along
 * the drag and has the documented size (scale × pixels, m/s); a refused input (400) is shown
 * in the message area with its issue path; the recording panel replays the run and, scrubbed
 * to its first state, the 3-D view shows the poses of recording.states[0]; "Live" returns to
 * the stream; a session attached by id gets its actuators' panel from its recording.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { poll } from "../support/wait";
import { useDashboard } from "./browser";

const SHOTS = resolve(import.meta.dirname, "__screenshots__");

const h = useDashboard();
const { dash, waitDash } = h;

const MODEL = {
  name: "servo-rod",
  gravity: [0, 0, 0],
  bodies: [
    {
      id: "rod",
      mass: 1,
      position: [0.5, 0, 0],
      shapes: [{ type: "box", halfExtents: [0.5, 0.03, 0.03] }],
    },
    {
      id: "ball",
      mass: 2,
      position: [-0.8, 0, 0],
      shapes: [{ type: "sphere", radius: 0.2 }],
    },
  ],
  joints: [
    {
      id: "pin",
      type: "revolute",
      a: { body: "ground", point: [0, 0, 0] },
      b: { body: "rod", point: [-0.5, 0, 0] },
      axis: [0, 0, 1],
    },
  ],
  actuators: [{ id: "servo", joint: "pin", type: "position", kp: 20, kd: 2 }],
};

interface StateOut {
  step: number;
  time: number;
  bodies: { id: string; position: number[]; orientation: number[]; velocity: number[] }[];
  joints: { id: string; coordinates: number[] }[];
  actuators: { id: string; command: number; effort: number }[];
}

async function getState(id: string): Promise<StateOut> {
  return (await (await fetch(`${h.base}/v1/sessions/${id}/state`)).json()) as StateOut;
}

async function status(id: string): Promise<string> {
  return ((await (await fetch(`${h.base}/v1/sessions/${id}`)).json()) as { status: string }).status;
}

const body = (s: StateOut, id: string) => s.bodies.find((b) => b.id === id)!;

describe("dashboard run-time control", () => {
  it("drives actuators, pushes bodies and replays the recording", async () => {
    const { page, base } = h;
    await h.open();
    expect(await page.isHidden("#actuators-section")).toBe(true);

    // ---- upload the servo model and create a session from it
    const file = join(h.filesDir, "servo-rod.json");
    writeFileSync(file, JSON.stringify(MODEL));
    await page.setInputFiles("#model-file", file);
    await page.waitForFunction(() =>
      (document.getElementById("model-text") as HTMLTextAreaElement).value.includes("servo-rod"),
    );
    await page.click("#create-btn");
    await waitDash(
      "d.state.sessionId && d.state.scenesReceived >= 1 && d.state.statesReceived >= 1 && d.streamStatus === 'open'",
    );
    const id = await dash<string>("d.state.sessionId");
    expect(await page.isVisible("#actuators-section")).toBe(true);
    // the session's counts, its actuator among them (it showed bodies, forces, joints, motors)
    expect(await page.textContent("#info-counts")).toBe(
      "2 (0 forces, 1 joints, 0 motors, 1 actuators, 0 sensors)",
    );
    const slider = page.locator('#actuators .actuator[data-id="servo"] input[type=range]');
    expect(await slider.getAttribute("min")).toBe(String(-Math.PI));
    expect(await slider.getAttribute("max")).toBe(String(Math.PI));
    await poll(() =>
      page.textContent('#actuators .actuator[data-id="servo"] .actuator-readout'),
    ).toMatch(/command 0\.000 rad · effort 0\.000 N·m/);

    // ---- run, and move the slider to 1.0: the command reaches the server, the rod follows
    await page.fill("#rtf", "1");
    await page.click("#run-btn");
    await poll(() => status(id)).toBe("running");
    await slider.fill("1"); // sets the value and fires input + change
    expect(await page.inputValue('#actuators .actuator[data-id="servo"] .act-value')).toBe("1");
    await poll(async () => (await getState(id)).actuators[0].command).toBe(1);
    await poll(async () =>
      Math.abs((await getState(id)).joints.find((j) => j.id === "pin")!.coordinates[0] - 1),
    ).toBeLessThan(0.02);
    await poll(() =>
      page.textContent('#actuators .actuator[data-id="servo"] .actuator-readout'),
    ).toMatch(/command 1\.000 rad/);

    // ---- a burst of slider moves is throttled: few requests, the last value wins
    const sent = await dash<number>("d.state.inputRequests");
    const burstMs = await page.evaluate(async () => {
      const el = document.querySelector<HTMLInputElement>(
        '#actuators .actuator[data-id="servo"] input[type=range]',
      )!;
      const t0 = performance.now();
      for (let i = 1; i <= 50; i++) {
        el.value = String(1 + i / 100);
        el.dispatchEvent(new Event("input", { bubbles: true }));
        await new Promise((r) => setTimeout(r, 4));
      }
      return performance.now() - t0;
    });
    await poll(async () => (await getState(id)).actuators[0].command).toBe(1.5);
    const requests = (await dash<number>("d.state.inputRequests")) - sent;
    expect(requests).toBeGreaterThanOrEqual(2);
    expect(requests).toBeLessThanOrEqual(Math.ceil(burstMs / 33) + 2); // ≤ 30 per second
    await slider.fill("1");
    await poll(async () => (await getState(id)).actuators[0].command).toBe(1);

    // ---- a plain drag still orbits the camera
    const canvas = (await page.locator("#view canvas").boundingBox())!;
    const cam0 = await dash<number[]>("d.viewer.camera.position.toArray()");
    await page.mouse.move(canvas.x + 40, canvas.y + 40);
    await page.mouse.down();
    await page.mouse.move(canvas.x + 90, canvas.y + 60, { steps: 5 });
    await page.mouse.up();
    await poll(() => dash<number[]>("d.viewer.camera.position.toArray()")).not.toEqual(cam0);

    // ---- shift-drag from the ball to the right: an impulse along the drag
    const before = body(await getState(id), "ball");
    expect(Math.hypot(...before.velocity)).toBeLessThan(1e-9);
    const p = (await dash<{ x: number; y: number } | null>('d.viewer.bodyScreenPoint("ball")'))!;
    expect(p).not.toBeNull();
    // the camera is not moved: no orbit starts under the modifier
    const camBefore = await dash<number[]>("d.viewer.camera.position.toArray()");
    const DRAG = 80;
    await page.keyboard.down("Shift");
    await page.mouse.move(p.x, p.y);
    await page.mouse.down();
    await page.mouse.move(p.x + DRAG / 2, p.y, { steps: 4 });
    await waitDash("d.viewer.pushArrow && d.viewer.pushArrow.visible");
    mkdirSync(SHOTS, { recursive: true });
    await page.screenshot({ path: join(SHOTS, "control.png") });
    await page.mouse.move(p.x + DRAG, p.y, { steps: 4 });
    await page.mouse.up();
    await page.keyboard.up("Shift");
    await waitDash("d.state.lastPush !== null");
    expect(await dash<boolean>("d.viewer.pushArrow.visible")).toBe(false);
    const camAfter = await dash<number[]>("d.viewer.camera.position.toArray()");
    for (let i = 0; i < 3; i++) expect(camAfter[i]).toBeCloseTo(camBefore[i], 9);
    const push = await dash<{ id: string; impulse: number[]; pixels: number; step: number }>(
      "d.state.lastPush",
    );
    expect(push.id).toBe("ball");
    expect(push.pixels).toBeCloseTo(DRAG, 0);
    // the drag's direction in the world: screen right as the camera sees it
    const right = await dash<number[]>(
      "d.viewer.camera.matrixWorld.elements.slice(0, 3)", // the camera's x axis
    );
    expect(
      push.impulse[0] * right[0] + push.impulse[1] * right[1] + push.impulse[2] * right[2],
    ).toBeGreaterThan(0);
    await poll(async () => (await getState(id)).step).toBeGreaterThan(push.step);
    const after = body(await getState(id), "ball");
    // Δv = J / m (gravity off, nothing else acts on the ball): along the drag (screen right)
    const dv = after.velocity.map((v, i) => v - before.velocity[i]);
    const dvRight = dv[0] * right[0] + dv[1] * right[1] + dv[2] * right[2];
    expect(dvRight).toBeGreaterThan(0);
    for (let i = 0; i < 3; i++) expect(dv[i]).toBeCloseTo(push.impulse[i] / 2, 6);
    const scale = await dash<number>("d.pushScale");
    expect(Math.hypot(...dv)).toBeCloseTo(scale * push.pixels, 6);
    expect(await page.textContent("#message")).toMatch(/pushed ball/);

    // ---- a refused input is shown where the user looks
    await dash("d.sendInputs([{ type: 'actuator', id: 'no-such-actuator', value: 1 }])");
    await poll(() => page.textContent("#message")).toMatch(/400[\s\S]*inputs\.0\.id/);
    expect(await page.getAttribute("#message", "class")).toContain("error");

    // ---- pause, then replay the recording and scrub to its first state
    await page.click("#pause-btn");
    await poll(() => status(id)).toBe("paused");
    await page.click("#recording-btn");
    await waitDash("d.state.replay !== null", 20_000);
    const rec = await dash<{ every: number; n: number; inputs: number; first: StateOut }>(
      "({ every: d.state.replay.every, n: d.state.replay.recording.states.length, inputs: d.state.replay.recording.inputs.length, first: d.state.replay.recording.states[0] })",
    );
    expect(rec.n).toBeGreaterThan(10);
    expect(rec.n).toBeLessThanOrEqual(2001);
    expect(rec.inputs).toBeGreaterThanOrEqual(2); // the slider's commands and the push
    expect(await page.textContent("#replay-info")).toContain(`${rec.inputs} inputs`);
    expect(await page.locator("#replay-marks span").count()).toBeGreaterThanOrEqual(1);
    // the page's recording is the server's
    const rest = (await (
      await fetch(`${base}/v1/sessions/${id}/recording?every=${rec.every}`)
    ).json()) as { states: StateOut[] };
    expect(rest.states[0]).toEqual(rec.first);

    await page.locator("#replay-slider").fill("0");
    await waitDash("d.state.replay.index === 0");
    const view = await dash<Record<string, { x: number[]; q: number[] }>>(
      "Object.fromEntries([...d.viewer.poses].map(([k, p]) => [k, { x: p.x.toArray(), q: p.q.toArray() }]))",
    );
    for (const b of rec.first.bodies) {
      expect(view[b.id].x).toEqual(b.position);
      const [w, x, y, z] = b.orientation;
      expect(view[b.id].q).toEqual([x, y, z, w]);
    }
    expect(await page.textContent("#replay-info")).toContain(`step ${rec.first.step}`);
    await page.locator("#replay-slider").fill(String(Math.floor(rec.n / 3)));
    await page.screenshot({ path: join(SHOTS, "control-replay.png") });
    await page.locator("#replay-slider").fill("0");
    expect(
      await dash<boolean>("!d.plots.energy.plot.over.querySelector('.replay-mark').hidden"),
    ).toBe(true);
    // live frames do not move the view while scrubbing
    const framed = await dash<number>("d.state.lastFrame.step");
    await page.fill("#step-count", "100"); // more than the stream's `every`
    await page.click("#step-btn");
    await waitDash(`d.state.lastFrame.step > ${framed}`);
    expect(await dash<number[]>('d.viewer.poses.get("ball").x.toArray()')).toEqual(
      rec.first.bodies.find((b) => b.id === "ball")!.position,
    );

    // ---- back to live: the view shows the latest frame
    await page.click("#live-btn");
    await waitDash("d.state.replay === null");
    const last = await dash<StateOut>("d.state.lastFrame");
    expect(await dash<number[]>('d.viewer.poses.get("ball").x.toArray()')).toEqual(
      body(last, "ball").position,
    );
    expect(await page.isDisabled("#replay-slider")).toBe(true);

    // ---- attached by id (the page has no model): the actuators come from the recording
    await dash(`d.attach(${JSON.stringify(id)}, null)`);
    await waitDash("d.state.model !== null && d.state.controls.size === 1", 20_000);
    expect(await slider.getAttribute("max")).toBe(String(Math.PI));
    expect(await page.textContent('#actuators .actuator[data-id="servo"] .actuator-kind')).toBe(
      "position · pin (rad)",
    );

    // ---- reset: the commands are the model's again, and the slider follows them
    await page.click("#reset-btn");
    await poll(async () => (await getState(id)).actuators[0].command).toBe(0);
    await poll(() => slider.inputValue()).toBe("0");

    expect(h.pageErrors).toEqual([]);
  });
});
