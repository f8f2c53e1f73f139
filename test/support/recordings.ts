/**
 * REST steps the recording tests share: inputs and steps on a session, and a session's
 * recording replayed as a new session, whose motion must equal the live one bit for bit.
 */
import type request from "supertest";
import { expect } from "vitest";

/** A supertest agent on the app under test. */
export type Api = () => ReturnType<typeof request>;

/** Posts `list` as inputs at `step` (omitted: the current step) on session `id`; the answer's body. */
export async function postInputs(api: Api, id: string, list: unknown[], step?: number) {
  return (
    await api()
      .post(`/v1/sessions/${id}/inputs`)
      .send({ inputs: list, ...(step === undefined ? {} : { step }) })
      .expect(200)
  ).body;
}

/** Steps session `id` by `steps`; the State it answers. */
export const stepBy = async (api: Api, id: string, steps: number) =>
  (await api().post(`/v1/sessions/${id}/step`).send({ steps }).expect(200)).body;

/** Posts the session's recording as a new session, steps it to the end: its end hash and State. */
export async function replayed(api: Api, id: string) {
  const rec = (await api().get(`/v1/sessions/${id}/recording`).expect(200)).body;
  const copy = (await api().post("/v1/sessions").send({ recording: rec }).expect(201)).body.id;
  const at = (await api().get(`/v1/sessions/${copy}`).expect(200)).body.step;
  const state = await stepBy(api, copy, rec.end.step - at);
  const again = (await api().get(`/v1/sessions/${copy}/recording`).expect(200)).body;
  return { rec, state, hash: again.end.hash as string };
}

/** What must be equal bit for bit: the bodies' and joints' states, the time and step. */
export const motion = (s: { time: number; step: number; bodies: unknown; joints: unknown }) => ({
  time: s.time,
  step: s.step,
  bodies: s.bodies,
  joints: s.joints,
});

/** An impulse of vz N·s along z on hingedRods' rod r2 at its tip. */
export const rodImpulse = (vz: number) => ({
  type: "impulse",
  id: "r2",
  impulse: [0, 0, vz],
  point: [0.5, 0, 0],
});

/** The 2 N·s rod impulse driveWithImpulse sends. */
export const ROD_IMPULSE = rodImpulse(2);

/** Steps 10, ROD_IMPULSE (acknowledged: checkpointed before its answer), steps 5: the State. */
export async function driveWithImpulse(api: Api, id: string) {
  await stepBy(api, id, 10);
  await postInputs(api, id, [ROD_IMPULSE]);
  return stepBy(api, id, 5);
}

/**
 * Steps session `id` (driven by driveWithImpulse, then restored: its acknowledged impulse
 * must be in it) by 5 to `step`, and expects it bit for bit a new session of `model` driven
 * the same way (driveWithImpulse, then stepped on to `step`) with no loss or restart.
 */
export async function expectDrivenWithoutLoss(api: Api, id: string, model: unknown, step: number) {
  const after = await stepBy(api, id, 5);
  const ref = (await api().post("/v1/sessions").send({ model }).expect(201)).body.id;
  let expected = await driveWithImpulse(api, ref);
  if (step > expected.step) expected = await stepBy(api, ref, step - expected.step);
  expect(after.step).toBe(step);
  expect(after.bodies).toEqual(expected.bodies);
  expect(after.joints).toEqual(expected.joints);
}
