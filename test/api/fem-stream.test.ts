/**
 * A fem body over the service: the scene frame carries its surface triangles once, the
 * State its node positions and nodal strains as arrays, and the stream's `fem` and
 * `femStrain` fields send them (JSON number arrays; msgpack bins of little-endian float64
 * positions and float32 strains).
 */
import { unpack } from "msgpackr";
import { describe, expect, it } from "vitest";
import { SceneFrame, StateFrame } from "../../schemas/api";
import { FrameClient } from "../support/frames";
import { useServer } from "../support/server";
import { createSession, step } from "./helpers";

const server = useServer({ workers: 1 });

/** A 0.4 m cantilever of 4 × 1 × 1 cells (20 nodes), clamped at x = 0, under gravity. */
const BEAM = {
  name: "beam",
  bodies: [{ id: "wall", fixed: true }],
  fem: [
    {
      id: "beam",
      box: { size: [0.4, 0.1, 0.1], resolution: [4, 1, 1], center: [0.2, 0, 0] },
      density: 1000,
      youngModulus: 1e6,
      poissonRatio: 0.3,
      fixedFaces: ["-x"],
    },
  ],
  solver: { integrator: "newmark", dt: 0.005 },
};

describe("fem over the stream", () => {
  it("JSON: the surface once in the scene, positions and strains in the frames", async () => {
    const id = await createSession(server.app, BEAM);
    const c = new FrameClient(`${server.ws}/v1/sessions/${id}/stream?fields=bodies,fem,femStrain`);
    await c.open();
    await c.waitForMessages(2);
    const scene = SceneFrame.parse(c.messages[0]);
    expect(scene.fem).toHaveLength(1);
    const surface = scene.fem[0];
    expect(surface.id).toBe("beam");
    expect(surface.nodeCount).toBe(20);
    // every boundary quad of the 4 × 1 × 1 box in two triangles: 2 (4 + 4 + 4 + 4 + 1 + 1)
    expect(surface.triangles).toHaveLength(3 * 36);
    const after = await step(server.app, id, 20);
    await c.waitForMessages(22); // scene, step 0, one frame per step
    const frame = StateFrame.parse(c.messages[21]);
    expect(frame.step).toBe(20);
    const fem = frame.fem?.[0];
    const strain = frame.femStrain?.[0];
    if (!fem || !strain) throw new Error("no fem fields");
    expect(fem.id).toBe("beam");
    expect(fem.positions).toHaveLength(60);
    // the same numbers as the nodes' particles in `bodies`
    for (let k = 0; k < 20; k++)
      expect(fem.positions.slice(3 * k, 3 * k + 3)).toEqual(
        after.bodies.find((b) => b.id === `beam/${k}`)?.position,
      );
    expect(strain.strain).toHaveLength(20);
    // the beam sags: the clamped end strains most
    expect(Math.max(...strain.strain)).toBeGreaterThan(0);
    expect(after.fem?.[0].strain).toEqual(strain.strain);
    c.close();
  });

  it("msgpack: positions as a float64 bin, strains as a float32 bin", async () => {
    const id = await createSession(server.app, BEAM);
    await step(server.app, id, 10);
    const c = new FrameClient(
      `${server.ws}/v1/sessions/${id}/stream?fields=fem,femStrain&format=msgpack`,
    );
    await c.open();
    await c.waitForMessages(2);
    const f = unpack(c.raw[1]) as {
      fem: { id: string; positions: Uint8Array }[];
      femStrain: { id: string; strain: Uint8Array }[];
    };
    const bytes = f.fem[0].positions;
    expect(bytes).toBeInstanceOf(Uint8Array);
    expect(bytes.byteLength).toBe(60 * 8);
    const positions = new Float64Array(
      bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength),
    );
    const s = f.femStrain[0].strain;
    expect(s.byteLength).toBe(20 * 4);
    const strain = new Float32Array(s.buffer.slice(s.byteOffset, s.byteOffset + s.byteLength));
    const json = await fetch(`${server.url}/v1/sessions/${id}/state`).then((r) => r.json());
    expect(Array.from(positions)).toEqual(json.fem[0].positions);
    expect(Array.from(strain)).toEqual(json.fem[0].strain.map(Math.fround));
    c.close();
  });
});
