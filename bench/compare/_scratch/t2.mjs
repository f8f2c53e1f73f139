import loadMujoco from "mujoco-js";

const mj = await loadMujoco();
mj.FS.mkdir("/w");
const xml = `<mujoco><option timestep="0.0041666667" gravity="0 0 -9.81"><flag autoreset="disable"/></option><worldbody>
<body name="a" pos="0.05 0 0"><joint type="ball" pos="-0.05 0 0"/><inertial pos="0 0 0" mass="0.1" diaginertia="6.667e-6 8.667e-5 8.667e-5"/>
</body></worldbody></mujoco>`;
mj.FS.writeFile("/w/a.xml", xml);
const m = mj.MjModel.loadFromXML("/w/a.xml");
const d = new mj.MjData(m);
for (let i = 0; i <= 60; i++) {
  if (i % 10 == 0) {
    mj.mj_kinematics(m, d);
    mj.mj_comPos(m, d);
    mj.mj_comVel(m, d);
    const x = d.xpos,
      c = d.cvel;
    const v = Math.hypot(c[9], c[10], c[11]);
    console.log(
      i,
      x[3].toFixed(4),
      x[5].toFixed(4),
      "cvel",
      Array.from(c.slice(6))
        .map((a) => a.toFixed(3))
        .join(" "),
      "sub",
      Array.from(d.subtree_com.slice(3))
        .map((a) => a.toFixed(3))
        .join(" "),
    );
  }
  mj.mj_step(m, d);
}
