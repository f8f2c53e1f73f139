import { loadEngine } from "../engines/index";
import { createBodyStates } from "../engines/types";
import { energy, jointDrift } from "../probes";
import { buildScene } from "../scene";

const [ek, sid, probe] = process.argv.slice(2);
const e = await loadEngine(ek);
await e.init();
const scene = buildScene(sid);
const inst = e.create(scene);
const st = createBodyStates(scene.bodies.length);
const n = 2000;
const t = new Float64Array(n);
for (let k = 0; k < n; k++) {
  const a = process.hrtime.bigint();
  inst.step();
  t[k] = Number(process.hrtime.bigint() - a) / 1e6;
  if (probe === "1") {
    inst.read(st);
    jointDrift(scene, st);
    energy(scene, st);
  }
}
const idx = Array.from(t.keys())
  .sort((a, b) => t[b] - t[a])
  .slice(0, 8);
console.log(
  idx.map((i) => `${i}:${t[i].toFixed(2)}`).join(" "),
  "sum",
  t.reduce((a, b) => a + b, 0).toFixed(1),
);
