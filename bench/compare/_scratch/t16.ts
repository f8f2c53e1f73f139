import loadMujoco from "mujoco-js";
import { toMjcf } from "../engines/mujoco";
import { spheresScene } from "../scene";
const mj = await loadMujoco(); mj.FS.mkdir("/w");
const base = toMjcf(spheresScene(1000), "Newton");
for (const [k, xml] of Object.entries({ auto: base, sparse: base.replace('cone="pyramidal"', 'cone="pyramidal" jacobian="sparse"'), cg: base.replace('solver="Newton"','solver="CG"') })) {
  mj.FS.writeFile("/w/a.xml", xml);
  let t0 = performance.now();
  const m = mj.MjModel.loadFromXML("/w/a.xml");
  const d = new mj.MjData(m);
  const tc = performance.now() - t0;
  t0 = performance.now();
  for (let i = 0; i < 3; i++) mj.mj_step(m, d);
  console.log(k, "compile", tc.toFixed(0), "3 steps ms", (performance.now()-t0).toFixed(0), "ncon", d.ncon, "nefc", d.nefc, "nisland", d.nisland);
}
