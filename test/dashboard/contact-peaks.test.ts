/**
 * The contact-force plot shows every bounce of the bouncing-ball example, in headless
 * Chromium (test/dashboard/browser.ts). The dashboard streams a frame every 20 steps (40 ms
 * of simulated time at a real-time factor of 2), so almost no impact — one step of
 * NSC — falls on a frame; the plot's "peak Σ normal" series (the frames' contactPeak) must
 * still show each one. The bounces are counted independently from the ball's trajectory
 * in the session's states (its recording replayed at every step): steps where the vertical
 * velocity changes sign from − to +, each with the contact force that turned it round,
 * m (v⁺ − v⁻)/h + m g. The peaks are counted in the plotted series read from the page:
 * runs of points above a threshold between the impacts' forces (454 N, their geometric
 * mean: the tenth impact pushes with 508 N, the eleventh with 406 N, each e = 0.8 times the
 * one before with the impacts located within their steps, down to resting on m g).
 */
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { useDashboard } from "./browser";

const MODEL = JSON.parse(
  readFileSync(resolve(import.meta.dirname, "../../examples/bouncing-ball.json"), "utf8"),
) as { bodies: { mass?: number }[]; solver: { dt: number }; gravity: number[] };
const THRESHOLD = 454; // N

const h = useDashboard();

interface RecordedState {
  step: number;
  time: number;
  bodies: { velocity: number[] }[];
}

describe("dashboard contact-force plot", () => {
  it("shows every bounce of the bouncing ball, though frames fall between them", async () => {
    const { page, base } = h;
    await h.open();
    await page.fill("#rtf", "2"); // before Create: the stream's `every` follows it
    const id = await h.createFromExample("bouncing-ball");
    // about 50 frames per second of wall time at 2× real time, under the server's 60
    expect(await h.dash<number>("d.streamEvery")).toBe(20);
    await page.click("#run-btn");
    // past the eleventh impact (step 1745, t = 3.49 s)
    await h.waitDash("d.state.lastFrame.time >= 3.6", 15_000);
    await page.click("#pause-btn");
    await h.waitDash("d.state.session.status === 'paused'");
    expect(await h.dash<number>("d.state.stream.dropped")).toBe(0);

    const [t, sumNormal, , , peak] = await h.dash<number[][]>("d.plots.contacts.data");
    expect(t.length).toBeGreaterThan(80);
    const last = Math.round(t[t.length - 1] / MODEL.solver.dt);

    // ---- the bounces, from the trajectory
    const rec = (await (await fetch(`${base}/v1/sessions/${id}/recording?every=1`)).json()) as {
      states: RecordedState[];
    };
    const m = MODEL.bodies[0].mass ?? 1;
    const g = -MODEL.gravity[2];
    const h0 = MODEL.solver.dt;
    const impacts: { step: number; force: number }[] = [];
    const states = rec.states.filter((s) => s.step <= last);
    for (let i = 1; i < states.length; i++) {
      const before = states[i - 1].bodies[0].velocity[2];
      const after = states[i].bodies[0].velocity[2];
      if (before < 0 && after > 0)
        impacts.push({ step: states[i].step, force: (m * (after - before)) / h0 + m * g });
    }
    const bounces = impacts.filter((x) => x.force > THRESHOLD);
    expect(bounces.length).toBeGreaterThanOrEqual(10);
    // no impact pushes within 10 % of the threshold: the count does not hang on rounding
    for (const x of impacts) expect(Math.abs(x.force / THRESHOLD - 1)).toBeGreaterThan(0.1);
    // the frames' steps miss the impacts: the sampled Σ normal shows few of them
    const sampled = bounces.filter((x) => x.step % 20 === 0).length;
    expect(sampled).toBeLessThan(bounces.length / 2);

    // ---- the peaks, from the plotted series: runs of points above the threshold
    let peaks = 0;
    for (let i = 0; i < peak.length; i++)
      if (peak[i] > THRESHOLD && !(i > 0 && peak[i - 1] > THRESHOLD)) peaks++;
    expect(peaks).toBe(bounces.length);
    // each bounce in the frame that follows it, at its force
    for (const x of bounces) {
      const i = t.findIndex((ti) => ti >= x.step * h0 - 1e-9);
      expect(peak[i] / x.force).toBeCloseTo(1, 6);
      if (x.step % 20 !== 0) expect(sumNormal[i]).toBeLessThan(THRESHOLD);
    }
    expect(h.pageErrors).toEqual([]);
  });
});
