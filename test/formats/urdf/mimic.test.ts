/**
 * URDF <mimic joint multiplier offset> → the model joint's `mimic` (schemas/model.ts), no
 * actuator on the mimicking joint, and the imported gripper moving as the coupling says.
 *
 * Gripper: two vertical prismatic fingers (masses m1, m2, gravity −z), finger 2 mimics
 * finger 1 with −1. On q = s1 the Lagrangian is ½(m1 + m2) q̇² − (m1 − m2) g q, so from rest
 * q(t) = ½ a t² with a = (m2 − m1) g / (m1 + m2), s2 = −q throughout, and the coupling
 * holds finger 2 with λ = m2 (g − a) along z.
 */
import { describe, expect, it } from "vitest";
import { loadModel } from "../../../src/engine/index";
import { importUrdf } from "../../../src/formats/urdf/index";

const G = 9.81;
const inertial = (m: number) =>
  `<inertial><mass value="${m}"/><inertia ixx="1e-4" ixy="0" ixz="0" iyy="1e-4" iyz="0" izz="1e-4"/></inertial>`;
const slide = (name: string, child: string, x: number, extra = "") =>
  `<joint name="${name}" type="prismatic"><parent link="palm"/><child link="${child}"/><origin xyz="${x} 0 0"/><axis xyz="0 0 1"/><limit lower="-1" upper="1" effort="20" velocity="1"/>${extra}</joint>`;

function gripper(m1: number, m2: number, mimic: string): string {
  return [
    `<robot name="gripper">`,
    `<link name="palm"/>`,
    `<link name="f1">${inertial(m1)}</link>`,
    `<link name="f2">${inertial(m2)}</link>`,
    slide("s1", "f1", -0.05),
    slide("s2", "f2", 0.05, mimic),
    `</robot>`,
  ].join("\n");
}

describe("URDF <mimic>", () => {
  it("becomes the joint's mimic; the imported gripper moves as the Lagrangian says", async () => {
    const m1 = 0.2;
    const m2 = 0.35;
    const r = await importUrdf({ urdf: gripper(m1, m2, `<mimic joint="s1" multiplier="-1"/>`) });
    const s2 = r.model.joints.find((j) => j.id === "s2");
    expect(s2).toMatchObject({
      type: "prismatic",
      mimic: { joint: "s1", multiplier: -1, offset: 0 },
    });
    expect(r.model.actuators.map((a) => a.joint)).toEqual(["s1"]);
    expect(r.warnings.join("\n")).toContain(
      'mimic joints get no actuator (their coupling drives them): "s2"',
    );
    // the articulated integrator refuses a mimic: generalized-alpha, not a model that fails
    expect(r.model.solver.integrator).toBe("generalized-alpha");
    const sim = loadModel({ ...r.model, gravity: [0, 0, -G] });
    const a = ((m2 - m1) * G) / (m1 + m2);
    let worst = 0;
    // 0.75 s (the import's dt 1 ms for a passive robot on generalized-alpha): q reaches
    // 0.75 m, inside the ±1 m limits
    expect(sim.solver.dt).toBe(0.001);
    for (let n = 0; n < 50; n++) {
      sim.step(15);
      const s = sim.state();
      const q = (id: string) => s.joints.find((j) => j.id === id)?.coordinates[0] ?? Number.NaN;
      worst = Math.max(worst, Math.abs(q("s2") + q("s1")));
      if (n % 10 === 9) {
        expect(q("s1")).toBeCloseTo(0.5 * a * s.time ** 2, 9);
        // finger 2 accelerates at −a: m2 (−a) = −m2 g + λ, the coupling's force along z
        const f = s.joints.find((j) => j.id === "s2:mimic")?.force ?? [];
        expect(f[2]).toBeCloseTo(m2 * (G - a), 9);
      }
    }
    expect(worst).toBeLessThan(1e-8);
  });

  it("a mimicking joint keeps its <dynamics>: its damping slows the coupled pair to the closed form", async () => {
    // damping c on s2 (s2 = −q): (m1 + m2) q̈ = (m2 − m1) g − c q̇, so from rest
    // q̇ = v∞ (1 − e^(−t/τ)) and q = v∞ (t − τ (1 − e^(−t/τ))), v∞ = (m2 − m1) g/c,
    // τ = (m1 + m2)/c. The damping was dropped with the drive the coupling replaces (the
    // fingers accelerated at 2.7 m/s² for good), and its friction went unmentioned
    const [m1, m2, c] = [0.2, 0.35, 5];
    const r = await importUrdf({
      urdf: gripper(
        m1,
        m2,
        `<mimic joint="s1" multiplier="-1"/><dynamics damping="${c}" friction="0.3"/>`,
      ),
    });
    expect(r.model.actuators.map((a) => [a.id, a.joint])).toEqual([
      ["s1.actuator", "s1"],
      ["s2.damping", "s2"],
    ]);
    expect(r.warnings.join("\n")).toContain(
      '<dynamics friction> is not modelled (no joint friction in the model format): "s2"',
    );
    const sim = loadModel({
      ...r.model,
      gravity: [0, 0, -G],
      solver: { ...r.model.solver, dt: 0.001 },
    });
    const vInf = ((m2 - m1) * G) / c;
    const tau = (m1 + m2) / c;
    for (let n = 0; n < 3; n++) {
      sim.step(250);
      const s = sim.state();
      const t = s.time;
      const q = s.joints.find((j) => j.id === "s1")?.coordinates[0] ?? Number.NaN;
      const rate = s.joints.find((j) => j.id === "s1")?.rates[0] ?? Number.NaN;
      expect(q).toBeCloseTo(vInf * (t - tau * (1 - Math.exp(-t / tau))), 5);
      expect(rate).toBeCloseTo(vInf * (1 - Math.exp(-t / tau)), 5);
    }
  });

  it("keeps multiplier and offset (revolute), and warns that the zero pose is off the offset", async () => {
    const urdf = [
      `<robot name="pair">`,
      `<link name="base"/><link name="l1">${inertial(1)}</link><link name="l2">${inertial(1)}</link>`,
      `<joint name="j1" type="continuous"><parent link="base"/><child link="l1"/><axis xyz="0 1 0"/></joint>`,
      `<joint name="j2" type="revolute"><parent link="l1"/><child link="l2"/><origin xyz="0.5 0 0"/><axis xyz="0 1 0"/>`,
      `<limit lower="-3" upper="3" effort="5" velocity="1"/><mimic joint="j1" multiplier="2" offset="0.1"/></joint>`,
      `</robot>`,
    ].join("\n");
    const r = await importUrdf({ urdf });
    expect(r.model.joints[1]).toMatchObject({ mimic: { joint: "j1", multiplier: 2, offset: 0.1 } });
    expect(r.warnings.join("\n")).toContain(
      'the zero configuration is off the <mimic offset> of "j2": the first step moves those joints onto it',
    );
    const sim = loadModel(r.model);
    sim.step(10);
    const s = sim.state();
    const q = (id: string) => s.joints.find((j) => j.id === id)?.coordinates[0] ?? Number.NaN;
    expect(Math.abs(q("j2") - 2 * q("j1") - 0.1)).toBeLessThan(1e-8);
  });
});
