/**
 * The browser bundle's stand-in for src/client/answers.ts (browser/bundle.ts substitutes
 * it): no schemas, so no zod in the page; a client there refuses `validate: true`.
 */
import type { AnswerSchemas } from "../answers";

export const answerSchemas: AnswerSchemas | null = null;
