/**
 * The dashboard end to end in real headless Chromium (Debian's /usr/bin/chromium driven by
 * playwright-core; WebGL through SwiftShader, no GPU): the page loads with its examples,
 * a session is created from one and run at a real-time factor, frames arrive, the 3-D
 * canvas is not blank (pixel statistics read back from the WebGL drawing buffer) and
 * changes as the ball moves, the plots gain points and their canvases change, the
 * real-time factor reaches the server, the resting ball shows a contact whose plotted
 * normal force is its weight m g, the stream reconnects after the server drops it, pause /
 * step / reset work, and an uploaded model file creates a session. A screenshot of the
 * page is saved to test/dashboard/__screenshots__/dashboard.png.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { poll } from "../support/wait";
import { useDashboard } from "./browser";

const SHOTS = resolve(import.meta.dirname, "__screenshots__");

const h = useDashboard();
const { dash, waitDash, createFromExample } = h;

async function session(id: string) {
  return (await (await fetch(`${h.base}/v1/sessions/${id}`)).json()) as {
    status: string;
    step: number;
    time: number;
    run: { realtimeFactor: number | null } | null;
  };
}

describe("dashboard at GET /", () => {
  it("streams a session live: 3-D view, plots, controls, reconnection, upload", async () => {
    const { page, app, filesDir, pageErrors } = h;
    await h.open();
    expect(await page.locator("#example-select option").count()).toBe(12); // placeholder + 11
    expect(await page.textContent("#server-status")).toBe("server: up");

    // ---- a session from the double-pendulum example (it never stops moving), at 1× real time
    const id1 = await createFromExample("double-pendulum");
    expect((await session(id1)).status).toBe("ready");
    await page.fill("#rtf", "1");
    await page.click("#run-btn");
    await waitDash("d.state.statesReceived >= 20");
    const s1 = await session(id1);
    expect(s1.status).toBe("running");
    expect(s1.run?.realtimeFactor).toBe(1);

    // ---- the canvas shows something, and it moves; the plots gain points and redraw
    const px = await dash<{ distinct: number; stddev: number }>("d.viewer.pixelStats()");
    expect(px.distinct).toBeGreaterThan(20);
    expect(px.stddev).toBeGreaterThan(3);
    const view = page.locator("#view canvas");
    const shotA = await view.screenshot();
    const energyA = await dash<number>("d.plots.energy.length");
    const plotA = await dash<string>("d.plots.energy.canvas.toDataURL()");
    await poll(async () => (await view.screenshot()).equals(shotA)).toBe(false);
    await poll(() => dash<number>("d.plots.energy.length")).toBeGreaterThan(energyA);
    await poll(() => dash<string>("d.plots.energy.canvas.toDataURL()")).not.toBe(plotA);
    expect(await dash<number>("d.plots.body.length")).toBeGreaterThan(10);
    expect(await page.textContent("#solver-newton")).toMatch(/^\d+$/);
    expect(await page.textContent("#solver-substeps")).toMatch(/^\d+$/);
    expect(await page.textContent("#solver-step-error")).toMatch(
      /^\d\.\d\de[-+]\d+ m( \(over tolerance\))?$/,
    );
    expect(await page.textContent("#solver-joints")).toBe("within tolerance");

    // ---- a new real-time factor while running reaches the server (pause + run)
    await page.fill("#rtf", "3");
    await page.locator("#rtf").blur(); // "change"
    await poll(async () => (await session(id1)).run?.realtimeFactor).toBe(3);
    expect((await session(id1)).status).toBe("running");
    await page.click("#pause-btn");
    await poll(async () => (await session(id1)).status).toBe("paused");

    // ---- the bouncing ball as fast as possible: once it rests (after ~3.9 s of bounces)
    // ---- the floor carries m g = 9.81 N, drawn as a contact with a force arrow
    const id = await createFromExample("bouncing-ball");
    await page.check("#rtf-max");
    await page.click("#run-btn");
    await poll(async () => (await session(id)).time).toBeGreaterThan(4.5);
    await page.click("#pause-btn");
    await poll(async () => (await session(id)).status).toBe("paused");
    await page.uncheck("#rtf-max");
    await waitDash("d.viewer.contactsDrawn >= 1 && d.state.lastFrame.time > 4.5");
    const normal = await dash<number>("d.plots.contacts.data[1].at(-1)");
    expect(Math.abs(normal / 9.81 - 1)).toBeLessThan(0.02);
    expect(
      await dash<number>("d.viewer.normalArrows.filter((a) => a.visible).length"),
    ).toBeGreaterThanOrEqual(1);
    expect(await page.textContent("#solver-contacts")).not.toBe("0");
    // the resting ball's penetration, as the step reported it, within the default
    // projection tolerance: 2e-3 of the ball's 0.1 m radius (README, Solver settings)
    const depth = await dash<number>("d.state.lastFrame.solver.penetration");
    expect(depth).toBeGreaterThanOrEqual(0);
    expect(depth).toBeLessThanOrEqual(2e-4);
    expect(await page.textContent("#solver-penetration")).toBe(
      `${(1000 * depth).toPrecision(3)} mm`,
    );
    expect(await page.textContent("#legend")).toMatch(/contact arrows: 1 m = .* N/);
    mkdirSync(SHOTS, { recursive: true });
    await page.screenshot({ path: join(SHOTS, "dashboard.png") });

    // ---- the server drops the stream: the page reconnects (scene and state again)
    const framesBefore = await dash<number>("d.state.statesReceived");
    for (const sub of app.moreau.sessions.streams.subscribers(id)) sub.ws.terminate();
    await waitDash("d.reconnects === 1 && d.streamStatus === 'open'");
    await waitDash(`d.state.scenesReceived >= 2 && d.state.statesReceived > ${framesBefore}`);
    expect(await page.textContent("#stream-status")).toBe("stream: open");

    // ---- step and reset; frames keep arriving on the new connection
    const stepBefore = (await session(id)).step;
    // the automatic `every`: about 50 frames per second of wall time at 3× real time
    const every = await dash<number>("d.streamEvery");
    expect(every).toBe(Math.ceil(3 / (50 * 0.002)));
    await page.fill("#step-count", String(2 * every));
    await page.click("#step-btn");
    await poll(async () => (await session(id)).step).toBe(stepBefore + 2 * every);
    // frames come at the steps divisible by the stream's `every`
    await waitDash(
      `d.state.lastFrame.step > ${stepBefore} && d.state.lastFrame.step % ${every} === 0`,
    );
    await poll(() => page.textContent("#info-step")).toBe(String(stepBefore + 2 * every));
    await page.click("#reset-btn");
    await poll(async () => (await session(id)).time).toBe(0);
    await poll(() => page.textContent("#info-time")).toBe("0.0000 s");
    expect(await dash<number>("d.plots.energy.length")).toBeLessThanOrEqual(2);

    // ---- upload a model file: a new session with its bodies
    const upload = join(filesDir, "my-pendulum.json");
    writeFileSync(
      upload,
      JSON.stringify({
        name: "uploaded",
        bodies: [
          {
            id: "bob",
            kind: "particle",
            mass: 1,
            position: [0.5, 0, 0],
            shapes: [{ type: "sphere", radius: 0.05 }],
          },
        ],
        joints: [{ id: "rod", type: "distance", a: { body: "ground" }, b: { body: "bob" } }],
      }),
    );
    await page.setInputFiles("#model-file", upload);
    await page.waitForFunction(() =>
      (document.getElementById("model-text") as HTMLTextAreaElement).value.includes("uploaded"),
    );
    await page.click("#create-btn");
    await waitDash(
      `d.state.sessionId !== ${JSON.stringify(id)} && d.state.scenesReceived >= 1 && d.streamStatus === 'open'`,
    );
    expect(await page.textContent("#info-name")).toBe("uploaded");
    expect(await page.locator("#plot-body option").allTextContents()).toEqual(["bob"]);

    // ---- an invalid model (edited in the page) is reported with its issue path
    await page.click("#model-details summary");
    await page.fill("#model-text", JSON.stringify({ bodies: [{ id: "x", mass: -1 }] }));
    await page.click("#create-btn");
    await poll(() => page.textContent("#message")).toMatch(
      /400 invalid_model[\s\S]*model\.bodies\.0\.mass/,
    );

    expect(pageErrors).toEqual([]);
  });
});
