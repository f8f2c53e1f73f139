/**
 * Reading a model for the command line: a file path or "-" (standard input), holding a
 * Model or a create-session body `{ "model": Model }` (unwrapped).
 */
import { readFile } from "node:fs/promises";
import { resolve } from "node:path";
import type { Readable } from "node:stream";

export class CliError extends Error {
  constructor(
    message: string,
    /** process exit code */
    readonly exitCode = 2,
  ) {
    super(message);
    this.name = "CliError";
  }
}

async function readAll(stream: Readable): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of stream) chunks.push(typeof c === "string" ? Buffer.from(c) : (c as Buffer));
  return Buffer.concat(chunks).toString("utf8");
}

export async function readModelFile(path: string, cwd: string, stdin?: Readable): Promise<unknown> {
  let text: string;
  try {
    text =
      path === "-"
        ? await readAll(stdin ?? process.stdin)
        : await readFile(resolve(cwd, path), "utf8");
  } catch (err) {
    throw new CliError(`cannot read ${path}: ${(err as Error).message}`);
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    throw new CliError(`${path} is not valid JSON: ${(err as Error).message}`, 1);
  }
  if (json !== null && typeof json === "object" && "model" in json && !("bodies" in json))
    return (json as { model: unknown }).model;
  return json;
}
