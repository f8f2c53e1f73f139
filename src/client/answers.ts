/**
 * The zod schemas of the service's answers (schemas/), one per kind of answer the client
 * reads: with `validate: true` (client.ts) each answer is parsed with its schema, so a
 * contract violation throws instead of passing silently. The answer types of client.ts are
 * inferred from them.
 *
 * The browser bundle leaves them out (zod and the schemas would make up most of it): it
 * builds with browser/answers.ts in place of this module (browser/bundle.ts), and a client
 * there refuses `validate: true`.
 */
import type { z } from "zod";
import { Health, Readiness, RunAccepted, Session, SessionList, Snapshot } from "../../schemas/api";
import { InputsAccepted } from "../../schemas/input";
import { Recording } from "../../schemas/recording";
import { AssemblyResult, State } from "../../schemas/state";
import { UrdfImportResult } from "../../schemas/urdf";

const schemas = {
  health: Health,
  readiness: Readiness,
  session: Session,
  sessionList: SessionList,
  state: State,
  runAccepted: RunAccepted,
  inputsAccepted: InputsAccepted,
  recording: Recording,
  snapshot: Snapshot,
  assemblyResult: AssemblyResult,
  urdfImport: UrdfImportResult,
};

/** The kinds of answer and their types (what each schema's parse returns). */
export type Answers = { [K in keyof typeof schemas]: z.output<(typeof schemas)[K]> };

/** A parser per kind of answer. */
export type AnswerSchemas = { [K in keyof Answers]: { parse(x: unknown): Answers[K] } };

/** The parsers (null in the browser bundle: browser/answers.ts). */
export const answerSchemas: AnswerSchemas | null = schemas;
