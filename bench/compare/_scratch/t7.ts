import { loadEngine } from "../engines/index";
import { createBodyStates } from "../engines/types";
import { clothScene } from "../scene";

const scene = clothScene(32, 10);
// reference symplectic Euler
const n = scene.bodies.length;
const x = new Float64Array(3 * n),
  v = new Float64Array(3 * n),
  f = new Float64Array(3 * n);
scene.bodies.forEach((b, i) => x.set(b.position, 3 * i));
function refStep() {
  f.fill(0);
  for (let i = 0; i < n; i++) f[3 * i + 2] = -9.81 * scene.bodies[i].mass;
  for (const s of scene.springs) {
    const d = [0, 1, 2].map((k) => x[3 * s.b + k] - x[3 * s.a + k]);
    const l = Math.hypot(...d);
    const u = d.map((c) => c / l);
    const ldot = [0, 1, 2].reduce((acc, k) => acc + (v[3 * s.b + k] - v[3 * s.a + k]) * u[k], 0);
    const fm = -s.stiffness * (l - s.rest) - s.damping * ldot;
    for (let k = 0; k < 3; k++) {
      f[3 * s.b + k] += fm * u[k];
      f[3 * s.a + k] -= fm * u[k];
    }
  }
  for (let i = 0; i < n; i++) {
    if (scene.bodies[i].fixed) continue;
    for (let k = 0; k < 3; k++) {
      v[3 * i + k] += (scene.h * f[3 * i + k]) / scene.bodies[i].mass;
      x[3 * i + k] += scene.h * v[3 * i + k];
    }
  }
}
const steps = Number(process.argv[2] ?? 200);
for (let k = 0; k < steps; k++) refStep();
const probe = 32 * 31 + 15;
console.log(
  "ref",
  Array.from(x.slice(3 * probe, 3 * probe + 3))
    .map((c) => c.toFixed(6))
    .join(" "),
);
for (const key of ["cannon", "mujoco", "rapier", "moreau"]) {
  const e = await loadEngine(key);
  await e.init();
  const inst = e.create(scene);
  for (let k = 0; k < steps; k++) inst.step();
  const st = createBodyStates(n);
  inst.read(st);
  let maxd = 0;
  for (let i = 0; i < 3 * n; i++) maxd = Math.max(maxd, Math.abs(st.pos[i] - x[i]));
  console.log(
    key,
    Array.from(st.pos.slice(3 * probe, 3 * probe + 3))
      .map((c) => c.toFixed(6))
      .join(" "),
    "max |x-ref|",
    maxd.toExponential(2),
  );
}
