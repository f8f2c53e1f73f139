import * as CANNON from "cannon-es";

const w = new CANNON.World({ gravity: new CANNON.Vec3(0, 0, -9.81) });
const b = new CANNON.Body({
  mass: 0.1,
  position: new CANNON.Vec3(1, 0, 0),
  linearDamping: 0,
  angularDamping: 0,
});
console.log("inertia", b.inertia, b.invInertia, b.aabb);
w.addBody(b);
for (let i = 0; i < 3; i++) w.step(1 / 240);
console.log(b.position, b.velocity);

import loadMujoco from "mujoco-js";

const mj = await loadMujoco();
mj.FS.mkdir("/w");
const xml = `<mujoco><option timestep="0.0041666667" gravity="0 0 -9.81"><flag autoreset="disable"/></option><worldbody>
<body name="a" pos="0.05 0 0"><joint type="ball" pos="-0.05 0 0"/><inertial pos="0 0 0" mass="0.1" diaginertia="6.667e-6 8.667e-5 8.667e-5"/>
<body name="b" pos="0.1 0 0"><joint type="ball" pos="-0.05 0 0"/><inertial pos="0 0 0" mass="0.1" diaginertia="6.667e-6 8.667e-5 8.667e-5"/></body></body></worldbody></mujoco>`;
mj.FS.writeFile("/w/a.xml", xml);
const m = mj.MjModel.loadFromXML("/w/a.xml");
const d = new mj.MjData(m);
for (let i = 0; i < 100; i++) mj.mj_step(m, d);
mj.mj_kinematics(m, d);
mj.mj_comPos(m, d);
mj.mj_comVel(m, d);
const res = new Float64Array(6);
try {
  mj.mj_objectVelocity(m, d, 1, 2, res, 0);
  console.log("objvel", res);
} catch (e) {
  console.log("objvel err", e.message);
}
console.log(
  "xpos",
  d.xpos,
  "cvel",
  d.cvel.slice(12),
  "subtree",
  d.subtree_com,
  "rootid",
  m.body_rootid,
);
const q1 = d.qpos;
mj.mj_step(m, d);
console.log("view live?", q1 === d.qpos, q1[0], d.qpos[0]);
