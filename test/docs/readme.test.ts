/** The README's model-format section is the one generated from the schema. */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { withModelFormat } from "../../schemas/markdown";

describe("README", () => {
  it("holds the model format generated from schemas/model.ts (run `npm run docs` after a schema change)", () => {
    const readme = readFileSync(new URL("../../README.md", import.meta.url), "utf8");
    expect(withModelFormat(readme)).toBe(readme);
  });
  it("states the two commands", () => {
    const readme = readFileSync(new URL("../../README.md", import.meta.url), "utf8");
    expect(readme).toContain("npm ci && npm start");
    expect(readme).toContain("npm ci && npm test");
  });
});
