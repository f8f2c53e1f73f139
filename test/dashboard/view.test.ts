/**
 * The dashboard's camera in headless Chromium (test/dashboard/browser.ts): for every model
 * in examples/, attached with its model, the whole scene is in view at the start — the
 * corners of the scene's box, computed here from the model file (the shapes at their poses,
 * planes excepted, the joints' anchors and the springs' ends), projected with the page's
 * camera, fall inside the canvas and in front of the camera; the pendulum's rod stays in
 * view as it swings down; "follow" keeps the rolling ball of ball-slope in the middle of the
 * view; "Fit" brings the whole scene back after the user has moved the camera. Screenshots
 * of the views are saved to test/dashboard/__screenshots__/view-<example>.png.
 */
import { mkdirSync } from "node:fs";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { exampleFiles, readExample } from "../support/examples";
import { qmul, rotate } from "../support/quat";
import { useDashboard } from "./browser";

const SHOTS = resolve(import.meta.dirname, "__screenshots__");

type V3 = [number, number, number];
type Q = [number, number, number, number]; // w, x, y, z
interface Point {
  body?: string;
  point?: V3;
}
interface Shape {
  type: string;
  radius?: number;
  halfLength?: number;
  halfExtents?: V3;
  position?: V3;
  orientation?: Q;
}
interface Model {
  name: string;
  bodies: { id: string; position?: V3; orientation?: Q; shapes?: Shape[] }[];
  joints?: { a: Point; b: Point }[];
  forces?: { type: string; a: Point; b: Point }[];
}

const add = (a: V3, b: V3): V3 => [a[0] + b[0], a[1] + b[1], a[2] + b[2]];
const ID: Q = [1, 0, 0, 0];

/**
 * The corners of the box around what the model's scene draws at its initial poses: every
 * shape but planes (exact boxes: a sphere's centre ± r, a box's corners, a capsule's axis
 * ends ± r, a cylinder's |a_i| h + r √(1 − a_i²) about its centre), a shapeless body's
 * position, the joints' anchors and the springs' ends.
 */
function sceneCorners(m: Model): V3[] {
  const lo: V3 = [Infinity, Infinity, Infinity];
  const hi: V3 = [-Infinity, -Infinity, -Infinity];
  const put = (p: V3, ext: V3 = [0, 0, 0]) => {
    for (let i = 0; i < 3; i++) {
      lo[i] = Math.min(lo[i], p[i] - ext[i]);
      hi[i] = Math.max(hi[i], p[i] + ext[i]);
    }
  };
  const pose = new Map(
    m.bodies.map((b) => [b.id, { x: b.position ?? [0, 0, 0], q: b.orientation ?? ID }]),
  );
  const world = (p: Point): V3 => {
    const b = pose.get(p.body ?? "ground");
    const local = p.point ?? [0, 0, 0];
    return b ? add(b.x as V3, rotate(b.q as Q, local)) : local;
  };
  for (const b of m.bodies) {
    const x = (b.position ?? [0, 0, 0]) as V3;
    const q = (b.orientation ?? ID) as Q;
    const shapes = (b.shapes ?? []).filter((s) => s.type !== "plane");
    if ((b.shapes ?? []).length === 0) put(x);
    for (const s of shapes) {
      const c = add(x, rotate(q, s.position ?? [0, 0, 0]));
      const sq = qmul(q, s.orientation ?? ID);
      const r = s.radius ?? 0;
      if (s.type === "sphere") put(c, [r, r, r]);
      else if (s.type === "box") {
        const [hx, hy, hz] = s.halfExtents!;
        for (const sx of [-1, 1])
          for (const sy of [-1, 1])
            for (const sz of [-1, 1]) put(add(c, rotate(sq, [sx * hx, sy * hy, sz * hz])));
      } else if (s.type === "capsule") {
        const a = rotate(sq, [0, 0, s.halfLength!]);
        put(add(c, a), [r, r, r]);
        put(add(c, a.map((v) => -v) as V3), [r, r, r]);
      } else if (s.type === "cylinder") {
        const a = rotate(sq, [0, 0, 1]);
        put(
          c,
          a.map(
            (ai) => Math.abs(ai) * s.halfLength! + r * Math.sqrt(Math.max(0, 1 - ai * ai)),
          ) as V3,
        );
      } else throw new Error(`no bounds for a ${s.type}`);
    }
  }
  const links = [...(m.joints ?? []), ...(m.forces ?? []).filter((f) => f.type === "spring")];
  for (const l of links) {
    put(world(l.a));
    put(world(l.b));
  }
  const corners: V3[] = [];
  for (const x of [lo[0], hi[0]])
    for (const y of [lo[1], hi[1]]) for (const z of [lo[2], hi[2]]) corners.push([x, y, z]);
  return corners;
}

const h = useDashboard();
const { dash, waitDash, post } = h;

async function create(model: unknown): Promise<string> {
  const res = await post("/v1/sessions", { model });
  expect(res.status).toBe(201);
  return ((await res.json()) as { id: string }).id;
}

/** Attaches the page to a new session of the model (known to the page) and waits for its frames. */
async function show(model: unknown): Promise<string> {
  const id = await create(model);
  await dash(`d.attach(${JSON.stringify(id)}, ${JSON.stringify(model)})`);
  await waitDash(
    `d.state.sessionId === ${JSON.stringify(id)} && d.state.scene?.session === ${JSON.stringify(id)} && d.state.lastFrame !== null && d.streamStatus === 'open'`,
  );
  return id;
}

/** Normalized device coordinates of world points through the page's camera (x, y, z in [−1, 1] when in view). */
/**
 * Points in normalized device coordinates of the viewer's camera as it is now: its world
 * matrix is refreshed first (the renderer does it only when it draws, at the next animation
 * frame, which a headless page may not have run yet after a camera move such as Fit).
 */
function project(points: V3[]): Promise<V3[]> {
  return dash<V3[]>(
    `(d.viewer.camera.updateMatrixWorld(), ${JSON.stringify(points)}.map((p) => { const v = d.viewer.camera.position.clone().set(...p).project(d.viewer.camera); return [v.x, v.y, v.z]; }))`,
  );
}

function expectInView(ndc: V3[], what: string) {
  for (const [x, y, z] of ndc) {
    expect(Math.abs(x), `${what}: x ${x}`).toBeLessThanOrEqual(1);
    expect(Math.abs(y), `${what}: y ${y}`).toBeLessThanOrEqual(1);
    expect(Math.abs(z), `${what}: depth ${z}`).toBeLessThan(1); // in front of the camera
  }
}

const run = (id: string, body: unknown) => post(`/v1/sessions/${id}/run`, body);

describe("dashboard camera", () => {
  it("shows the whole scene of every example, the swinging rod and the followed ball", async () => {
    const { page } = h;
    await h.open();
    mkdirSync(SHOTS, { recursive: true });
    const files = exampleFiles();
    expect(files.length).toBeGreaterThanOrEqual(10);
    const canvas = page.locator("#view canvas");
    for (const f of files) {
      const model = readExample<Model>(f.replace(/\.json$/, ""));
      await show(model);
      const corners = sceneCorners(model);
      expectInView(await project(corners), f);
      // the same corners in page pixels (what a screenshot shows) are inside the canvas
      const rect = (await canvas.boundingBox())!;
      const px = await dash<{ x: number; y: number }[]>(
        `${JSON.stringify(corners)}.map(([x, y, z]) => d.viewer.screenPoint({ x, y, z }))`,
      );
      for (const p of px) {
        expect(p.x).toBeGreaterThanOrEqual(rect.x - 0.5);
        expect(p.x).toBeLessThanOrEqual(rect.x + rect.width + 0.5);
        expect(p.y).toBeGreaterThanOrEqual(rect.y - 0.5);
        expect(p.y).toBeLessThanOrEqual(rect.y + rect.height + 0.5);
      }
      await canvas.screenshot({ path: join(SHOTS, `view-${f.replace(/\.json$/, "")}.png`) });
    }

    // ---- the pendulum released sideways: its rod stays in view as it swings down
    const pendulum = readExample<Model>("pendulum");
    const pid = await show(pendulum);
    const camera = await dash<number[]>("d.viewer.camera.position.toArray()");
    expect((await run(pid, { realtimeFactor: null, until: 0.45 })).status).toBe(202);
    // about a quarter period (0.48 s): the rod hangs nearly straight down
    await waitDash("d.state.lastFrame.time >= 0.4");
    const rod = pendulum.bodies[0].shapes![0];
    const end = rod.halfLength! + rod.radius!;
    const frame = await dash<{ position: V3; orientation: Q }>("d.state.lastFrame.bodies[0]");
    expect(frame.position[2]).toBeLessThan(-0.4); // swung down
    const ends = [end, -end].map((e) => add(frame.position, rotate(frame.orientation, [0, 0, e])));
    expectInView(await project(ends), "the swung rod");
    // in view without the camera having to move
    const after = await dash<number[]>("d.viewer.camera.position.toArray()");
    for (let i = 0; i < 3; i++) expect(after[i]).toBeCloseTo(camera[i], 9);

    // ---- follow: the ball rolling down the slope stays in the middle of the view
    const slope = readExample<Model>("ball-slope");
    const sid = await show(slope);
    await page.check("#follow");
    expect((await run(sid, { realtimeFactor: null, until: 2 })).status).toBe(202);
    await waitDash("d.state.lastFrame.time >= 1.9");
    const ball = await dash<{ position: V3 }>("d.state.lastFrame.bodies[0]");
    const start = slope.bodies[0].position!;
    expect(Math.hypot(...ball.position.map((v, i) => v - start[i]))).toBeGreaterThan(3); // rolled away
    const [centre] = await project([ball.position]);
    expect(Math.abs(centre[0])).toBeLessThan(0.05);
    expect(Math.abs(centre[1])).toBeLessThan(0.05);
    await canvas.screenshot({ path: join(SHOTS, "view-follow.png") });

    // ---- the user moves the camera away; "Fit" brings the whole scene back
    await page.uncheck("#follow");
    const box = (await canvas.boundingBox())!;
    await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
    await page.mouse.wheel(0, -2000); // zoom in a lot
    await page.mouse.move(box.x + 60, box.y + 60);
    await page.mouse.down();
    await page.mouse.move(box.x + 160, box.y + 120, { steps: 5 });
    await page.mouse.up();
    await page.click("#fit-btn");
    const pose = await dash<{ position: V3; orientation: Q }>("d.state.lastFrame.bodies[0]");
    const moved = { ...slope, bodies: [{ ...slope.bodies[0], ...pose }, slope.bodies[1]] };
    expectInView(await project(sceneCorners(moved)), "after Fit");
    expect(h.pageErrors).toEqual([]);
  });
});
