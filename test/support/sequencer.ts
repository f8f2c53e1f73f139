/**
 * The order the test files start in (vitest.config.ts `sequence.sequencer`): vitest's own
 * (each project's files, longest first by the durations it keeps from the previous run in
 * node_modules/.vite, largest first when it has none), except that on a first run (a clean
 * clone: no durations yet) the long-run mechanism tests (test/engine/integrators/long-run/:
 * 100 s of simulated time at small steps, up to 20 s each in small files) start first:
 * ordered by size they came last, and the other worker waited for them at the end.
 */
import { relative } from "node:path";
import { BaseSequencer, type TestSpecification } from "vitest/node";

const LONG_RUN = "test/engine/integrators/long-run/";

export default class LongRunFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const root = this.ctx.config.root;
    const known = (f: TestSpecification) =>
      this.ctx.cache.getFileTestResults(`${f.project.name}:${relative(root, f.moduleId)}`) !==
      undefined;
    const first = (f: TestSpecification) =>
      !known(f) && relative(root, f.moduleId).startsWith(LONG_RUN);
    return [...sorted.filter(first), ...sorted.filter((f) => !first(f))];
  }
}
