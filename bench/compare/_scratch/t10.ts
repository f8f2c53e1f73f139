import loadMujoco from "mujoco-js";
import { toMjcf } from "../engines/mujoco";
import { clothScene } from "../scene";
const mj = await loadMujoco(); mj.FS.mkdir("/w");
const base = toMjcf(clothScene(32), "CG");
const variants: Record<string,string> = {
  full: base,
  notendons: base.replace(/<tendon>[\s\S]*<\/tendon>/, ""),
  half: base.replace(/(<spatial[^\n]*\n){1900}/, ""),
  nospringlength: base.replace(/ springlength="[^"]*"/g, ""),
};
for (const [k, xml] of Object.entries(variants)) {
  mj.FS.writeFile("/w/a.xml", xml);
  const t0 = performance.now();
  const m = mj.MjModel.loadFromXML("/w/a.xml");
  console.log(k, "compile ms", (performance.now()-t0).toFixed(0), m.ntendon);
  if (k === "full") { const d = new mj.MjData(m); const q = d.qpos; q[0] = 5; console.log("qpos live view?", d.qpos[0]); const ts = m.tendon_stiffness; console.log("ts", ts[0]); ts[0] = 123; console.log("ts live?", m.tendon_stiffness[0]); }
}
