import loadMujoco from "mujoco-js";
import { mujocoEngine, toMjcf } from "../engines/mujoco";
import { createBodyStates } from "../engines/types";
import { energy, jointDrift } from "../probes";
import { chainScene } from "../scene";

await mujocoEngine.init();
for (const integ of ["Euler", "implicitfast", "RK4", "implicit"]) {
  const scene = chainScene(10);
  const mj = await loadMujoco();
  mj.FS.mkdir("/w");
  const xml = toMjcf(scene, "Newton")
    .replace('integrator="Euler"', `integrator="${integ}"`)
    .replace('<flag autoreset="disable"/>', '<flag autoreset="disable" energy="enable"/>');
  mj.FS.writeFile("/w/a.xml", xml);
  const m = mj.MjModel.loadFromXML("/w/a.xml");
  const d = new mj.MjData(m);
  const inst = mujocoEngine.create(scene) as any;
  inst.model = m;
  inst.data = d;
  inst.mj = mj;
  const st = createBodyStates(10);
  let line = integ + ": ";
  for (let k = 0; k <= 2000; k++) {
    if (k % 400 === 0) {
      inst.read(st);
      mj.mj_energyPos(m, d);
      mj.mj_energyVel(m, d);
      const e = d.energy;
      line += ` [${k}] E=${energy(scene, st).toExponential(3)} mjE=${(e[0] + e[1]).toExponential(3)}`;
    }
    mj.mj_step(m, d);
  }
  console.log(line);
}
