import loadMujoco from "mujoco-js";
import { toMjcf } from "../engines/mujoco";
import { clothScene } from "../scene";
const mj = await loadMujoco(); mj.FS.mkdir("/w");
const base = toMjcf(clothScene(32), "CG").replace(/<tendon>[\s\S]*<\/tendon>/, "");
const variants: Record<string,string> = {
  nosites: base.replace(/<site name="[^"]*"\/><\/body>/g, "</body>"),
  free: base.replace(/<joint type="slide" axis="1 0 0"\/><joint type="slide" axis="0 1 0"\/><joint type="slide" axis="0 0 1"\/>/g, "<freejoint/>"),
  onejoint: base.replace(/<joint type="slide" axis="1 0 0"\/><joint type="slide" axis="0 1 0"\/>/g, ""),
};
for (const [k, xml] of Object.entries(variants)) {
  mj.FS.writeFile("/w/a.xml", xml);
  const t0 = performance.now();
  const m = mj.MjModel.loadFromXML("/w/a.xml");
  console.log(k, "compile ms", (performance.now()-t0).toFixed(0), "nv", m.nv);
}
