import loadMujoco from "mujoco-js";
import { toMjcf } from "../engines/mujoco";
import { chainScene } from "../scene";

const mj = await loadMujoco();
mj.FS.mkdir("/w");
for (const [integ, div] of [
  ["Euler", 1],
  ["Euler", 2],
  ["Euler", 4],
  ["Euler", 8],
  ["implicitfast", 4],
  ["RK4", 1],
  ["RK4", 2],
] as const) {
  const scene = chainScene(10);
  const xml = toMjcf(scene, "Newton")
    .replace('integrator="Euler"', `integrator="${integ}"`)
    .replace(`timestep="${scene.h}"`, `timestep="${scene.h / div}"`)
    .replace('<flag autoreset="disable"/>', '<flag autoreset="disable" energy="enable"/>');
  mj.FS.writeFile("/w/a.xml", xml);
  const m = mj.MjModel.loadFromXML("/w/a.xml");
  const d = new mj.MjData(m);
  let maxE = 0,
    bad = -1;
  for (let k = 0; k < 2000 * div; k++) {
    mj.mj_step(m, d);
    if (k % div === 0) {
      const e = d.energy;
      const E = e[0] + e[1];
      if (!Number.isFinite(E) || Math.abs(E) > 1e3) {
        bad = k / div;
        break;
      }
      maxE = Math.max(maxE, Math.abs(E));
    }
  }
  console.log(integ, "h/", div, "max|dE|/9.81", (maxE / 9.81).toFixed(4), "diverged at", bad);
}
