/**
 * A session created and stepped over REST, then attached in the dashboard (headless
 * Chromium, test/dashboard/browser.ts): the page draws its springs (its model comes from
 * the session's recording) between the bodies at their current positions, plots its steps
 * so far (the recording's replayed states, from its first step) before the live frames, and
 * its recording can be scrubbed: at its first state the bodies and the springs are where
 * GET /v1/sessions/:id/recording has them. Errors from the server show in the banner over the 3-D view: a 400 on create
 * with the path, and the reason a stream was closed (the session deleted).
 */
import { mkdirSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { useDashboard } from "./browser";

const SHOTS = resolve(import.meta.dirname, "__screenshots__");
const MODEL = JSON.parse(
  readFileSync(resolve(import.meta.dirname, "../../examples/spring-mass-chain.json"), "utf8"),
) as {
  bodies: { id: string; position: number[] }[];
  forces: { type: string; a: { body: string; point?: number[] }; b: { body: string } }[];
};
const SPRINGS = MODEL.forces.filter((f) => f.type === "spring");
const STEPS = 300;

const h = useDashboard();
const { dash, waitDash, post } = h;

/** The springs' ends as drawn: [a, b] per spring, world coordinates. */
const drawnSprings = () =>
  dash<number[][][]>(
    "Array.from({ length: d.viewer.springs.list.length }, (_, i) => { const a = d.viewer.springs.seg.geometry.attributes.position.array; return [Array.from(a.slice(6 * i, 6 * i + 3)), Array.from(a.slice(6 * i + 3, 6 * i + 6))]; })",
  );

/** The springs' ends expected for body positions (every spring joins body origins; ground: its point). */
function expectedSprings(positions: Map<string, number[]>): number[][][] {
  return SPRINGS.map((f) => [
    f.a.body === "ground" ? (f.a.point ?? [0, 0, 0]) : positions.get(f.a.body)!,
    positions.get(f.b.body)!,
  ]);
}

function expectClose(got: number[][][], want: number[][][]) {
  expect(got.length).toBe(want.length);
  got.forEach((pair, i) => {
    pair.forEach((p, j) => {
      p.forEach((v, k) => {
        expect(v).toBeCloseTo(want[i][j][k], 5); // drawn in float32
      });
    });
  });
}

describe("dashboard attached to a REST session", () => {
  it("shows its springs, its history and its recording; errors show in the banner", async () => {
    const { page, base } = h;
    const created = await post("/v1/sessions", { model: MODEL });
    expect(created.status).toBe(201);
    const { id } = (await created.json()) as { id: string };
    expect((await post(`/v1/sessions/${id}/step`, { steps: STEPS })).status).toBe(200);

    await h.open();
    await page.selectOption("#session-select", id);
    await page.click("#attach-btn");
    await waitDash(
      `d.state.sessionId === ${JSON.stringify(id)} && d.state.lastFrame?.step === ${STEPS} && d.viewer.springs.list?.length === ${SPRINGS.length} && d.state.history !== null`,
    );

    // ---- the springs, between the bodies where the last frame has them
    const frame = await dash<{ bodies: { id: string; position: number[] }[] }>("d.state.lastFrame");
    const now = new Map(frame.bodies.map((b) => [b.id, b.position]));
    expect(now.get("m5")?.[2]).not.toBeCloseTo(MODEL.bodies[4].position[2], 3); // it has moved
    expectClose(await drawnSprings(), expectedSprings(now));

    // ---- the history: the plots start at the first step, one point per step, then live
    const history = await dash<{ states: number; every: number }>("d.state.history");
    expect(history.every).toBe(1);
    expect(history.states).toBeGreaterThanOrEqual(STEPS);
    const rec = (await (await fetch(`${base}/v1/sessions/${id}/recording?every=1`)).json()) as {
      states: { step: number; time: number; bodies: { id: string; position: number[] }[] }[];
    };
    expect(rec.states[0].step).toBe(1);
    const energyT = await dash<number[]>("d.plots.energy.data[0]");
    expect(energyT[0]).toBe(rec.states[0].time);
    expect(energyT.length).toBeGreaterThanOrEqual(STEPS);
    for (let i = 1; i < energyT.length; i++) expect(energyT[i]).toBeGreaterThan(energyT[i - 1]);
    mkdirSync(SHOTS, { recursive: true });
    await page.screenshot({ path: join(SHOTS, "attach.png") });

    // ---- the recording scrubbed to its first state
    await page.click("#recording-btn");
    await waitDash("d.state.replay !== null");
    expect(await dash<number>("d.state.replay.every")).toBe(1);
    await page.locator("#replay-slider").fill("0");
    await waitDash("d.state.replay.index === 0");
    const first = new Map(rec.states[0].bodies.map((b) => [b.id, b.position]));
    for (const [bid, x] of first) {
      const drawn = await dash<number[]>(`d.viewer.poses.get(${JSON.stringify(bid)}).x.toArray()`);
      drawn.forEach((v, k) => {
        expect(v).toBeCloseTo(x[k], 12);
      });
    }
    expectClose(await drawnSprings(), expectedSprings(first));
    await page.click("#live-btn");
    await waitDash("d.state.replay === null");
    // back live: the plots keep the recording
    expect(await dash<number>("d.plots.energy.length")).toBeGreaterThanOrEqual(STEPS);
    expect(await page.isHidden("#alert")).toBe(true);

    // ---- the stream's close reason shows in the banner
    expect((await fetch(`${base}/v1/sessions/${id}`, { method: "DELETE" })).status).toBe(204);
    await page.waitForSelector("#alert:not([hidden])");
    expect(await page.textContent("#alert-text")).toMatch(/stream closed: session deleted/);
    await page.click("#alert-close");
    expect(await page.isHidden("#alert")).toBe(true);

    // ---- a 400 on create: the server's message and the path, in the banner
    await page.click("#model-details summary");
    await page.fill("#model-text", JSON.stringify({ bodies: [{ id: "x", mass: -1 }] }));
    await page.click("#create-btn");
    // the banner may still show a message about the deleted session (its stream's reconnect
    // attempts): wait for the create's own answer to replace it
    await page.waitForFunction(() =>
      /creating the session failed/.test(document.querySelector("#alert-text")?.textContent ?? ""),
    );
    expect(await page.textContent("#alert-text")).toMatch(
      /creating the session failed: 400 invalid_model[\s\S]*model\.bodies\.0\.mass/,
    );
    expect(await page.locator("#alert").isVisible()).toBe(true);
    await page.screenshot({ path: join(SHOTS, "attach-error.png") });
    expect(h.pageErrors).toEqual([]);
  });
});
