import loadMujoco from "mujoco-js";
import { toMjcf } from "../engines/mujoco";
import { clothScene } from "../scene";
const mj = await loadMujoco(); mj.FS.mkdir("/w");
const base = toMjcf(clothScene(24), "CG").replace(/<tendon>[\s\S]*<\/tendon>/, "");
let c = 0;
const variants: Record<string,string> = {
  base,
  named: base.replace(/<joint type="slide"/g, () => `<joint name="j${c++}" type="slide"`),
  nosite: base.replace(/<site name="[^"]*"\/><\/body>/g, "</body>"),
  default: base.replace('<worldbody>', '<default><joint type="slide"/></default>\n<worldbody>'),
  slidejoint2: base.replace(/<joint type="slide" axis="0 0 1"\/>/g, ""),
};
for (const [k, xml] of Object.entries(variants)) {
  mj.FS.writeFile("/w/a.xml", xml);
  const t0 = performance.now();
  const m = mj.MjModel.loadFromXML("/w/a.xml");
  console.log(k, "compile ms", (performance.now()-t0).toFixed(0), "njnt", m.njnt);
}
