/**
 * A deformable body in the dashboard (headless Chromium, test/dashboard/browser.ts): a soft
 * cantilever attached with its model draws its surface (the scene frame's triangles at the
 * node positions of the stream's `fem` field), straight and one colour (zero strain) at
 * the start; after steps under gravity the drawn vertices are where the State puts the
 * nodes (to float32 rounding), the surface is coloured by strain — the clamped end hotter
 * than the tip — the legend shows the scale, and the canvas shows strained (green to
 * red) pixels where it had only blue ones.
 */
import { describe, expect, it } from "vitest";
import { poll } from "../support/wait";
import { useDashboard } from "./browser";

const h = useDashboard();

/** A 1 m soft cantilever, 10 × 2 × 2 cells (99 nodes), clamped at x = 0. */
const MODEL = {
  name: "soft-beam",
  bodies: [{ id: "wall", fixed: true }],
  fem: [
    {
      id: "beam",
      box: { size: [1, 0.1, 0.1], resolution: [10, 2, 2], center: [0.5, 0, 0] },
      density: 1000,
      youngModulus: 1e7,
      poissonRatio: 0.3,
      fixedFaces: ["-x"],
    },
  ],
  solver: { integrator: "newmark", dt: 0.005 },
};

interface Drawn {
  visible: boolean;
  positions: number[];
  colors: number[];
  legend: string | null;
}

const DRAWN = `(() => {
  const e = d.viewer.fem.get("beam");
  const g = e.mesh.geometry.attributes;
  const legend = d.viewer.legend;
  return {
    visible: e.mesh.visible,
    positions: Array.from(g.position.array),
    colors: Array.from(g.color.array),
    legend: legend.hidden ? null : legend.textContent,
  };
})()`;

/** Node index of (i, j, k) on the 10 × 2 × 2 grid. */
const node = (i: number, j: number, k: number) => i + 11 * (j + 3 * k);

/** Mean colour (r, g, b) of the nodes of cross-section i. */
function sectionColor(colors: number[], i: number): number[] {
  const out = [0, 0, 0];
  for (let j = 0; j <= 2; j++)
    for (let k = 0; k <= 2; k++)
      for (let c = 0; c < 3; c++) out[c] += colors[3 * node(i, j, k) + c] / 9;
  return out;
}

/** The canvas's pixels by colour (4 bits a channel: r << 8 | g << 4 | b) and their count. */
async function canvasColors(): Promise<Map<number, number>> {
  const list = await h.dash<[number, number][]>(`(() => {
    const src = d.viewer.renderer.domElement;
    const c = document.createElement("canvas");
    c.width = 300;
    c.height = Math.round((300 * src.height) / src.width);
    const ctx = c.getContext("2d");
    ctx.drawImage(src, 0, 0, c.width, c.height);
    const px = ctx.getImageData(0, 0, c.width, c.height).data;
    const m = new Map();
    for (let i = 0; i < px.length; i += 4) {
      const k = ((px[i] >> 4) << 8) | ((px[i + 1] >> 4) << 4) | (px[i + 2] >> 4);
      m.set(k, (m.get(k) ?? 0) + 1);
    }
    return [...m];
  })()`);
  return new Map(list);
}

describe("dashboard: fem bodies", () => {
  it("draws the deformed surface with a strain colour map and a legend", async () => {
    await h.open();
    const res = await h.post("/v1/sessions", { model: MODEL });
    expect(res.status).toBe(201);
    const { id } = (await res.json()) as { id: string };
    await h.dash(`d.attach(${JSON.stringify(id)}, ${JSON.stringify(MODEL)})`);
    await h.waitDash("d.state.scenesReceived >= 1 && d.state.lastFrame && d.viewer.fem.size === 1");
    await h.waitDash(`d.viewer.fem.get("beam").drawn`);
    const before = await h.dash<Drawn>(DRAWN);
    expect(before.visible).toBe(true);
    // straight at rest: the model's box, zero strain everywhere, one colour
    expect(before.positions[3 * node(10, 2, 2)]).toBeCloseTo(1, 6);
    expect(before.positions[3 * node(10, 2, 2) + 2]).toBeCloseTo(0.05, 6);
    for (let k = 3; k < before.colors.length; k++)
      expect(before.colors[k]).toBeCloseTo(before.colors[k % 3], 6);
    const pixelsBefore = await canvasColors();

    const every = await h.dash<number>("d.streamEvery");
    const steps = every * Math.ceil(60 / every);
    const state = (await (await h.post(`/v1/sessions/${id}/step`, { steps })).json()) as {
      fem: { positions: number[]; strain: number[] }[];
    };
    await h.waitDash(`d.state.lastFrame.step === ${steps}`);
    await h.waitDash(`d.viewer.renders > 0`);
    const after = await h.dash<Drawn>(DRAWN);
    // the drawn vertices are the State's nodes (float32)
    const p = state.fem[0].positions;
    expect(after.positions.length).toBe(p.length);
    for (let k = 0; k < p.length; k++) expect(after.positions[k]).toBe(Math.fround(p[k]));
    // it sags at the tip (released straight, it swings down)
    expect(p[3 * node(10, 1, 1) + 2]).toBeLessThan(-0.01);
    // coloured by strain: the clamped section (largest bending strain) is hotter (redder,
    // less blue) than the free tip, which stays near zero strain (blue)
    const root = sectionColor(after.colors, 0);
    const tip = sectionColor(after.colors, 10);
    expect(root[0] - root[2]).toBeGreaterThan(tip[0] - tip[2] + 0.3);
    const s = state.fem[0].strain;
    expect(Math.max(...s)).toBeGreaterThan(1e-4);
    // the legend shows the scale's top, the largest strain so far
    expect(after.legend).toMatch(/equivalent strain/);
    expect(Number(after.legend?.match(/([0-9.e+-]+)$/)?.[1])).toBeGreaterThanOrEqual(
      Number(Math.max(...s).toPrecision(2)) * 0.99,
    );
    // the canvas shows it (once the next frame is drawn): strained (green to red) pixels,
    // none before (all blue then)
    const strained = (m: Map<number, number>) => {
      let n = 0;
      for (const [k, c] of m) if (((k >> 4) & 15) > (k & 15) + 2) n += c;
      return n;
    };
    expect(strained(pixelsBefore)).toBeLessThan(20);
    await poll(async () => strained(await canvasColors())).toBeGreaterThan(200);
    expect(h.pageErrors).toEqual([]);
  }, 30_000);
});
