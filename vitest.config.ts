import { defineConfig } from "vitest/config";
import LongRunFirst from "./test/support/sequencer";

/** Files that replace a module (vi.mock): they need a module registry of their own. */
const MOCKING = [
  "test/reliability/delete-durable.test.ts",
  "test/server/memory-admit.test.ts",
  "test/server/worker-boot-failure.test.ts",
];
/** Files that drive a page in the run's Chromium (test/dashboard/global-setup.ts, browser.ts). */
const DASHBOARD = ["test/dashboard/**/*.test.ts", "test/client/browser-bundle.test.ts"];

export default defineConfig({
  test: {
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: "forks",
    // two files at a time even on 2 cores (vitest's default would be cores − 1 = 1): many
    // files wait on servers, sockets and child processes more than they compute, and no test
    // depends on wall-clock speed
    maxWorkers: 2,
    // the solver worker bundled once for the run (a worker thread then starts in 0.9 s
    // instead of 2.4 s through tsx)
    globalSetup: ["test/support/global-setup.ts"],
    // the long-run mechanism tests first on a run with no durations kept (sequencer.ts)
    sequence: { sequencer: LongRunFirst },
    projects: [
      {
        extends: true,
        test: {
          name: "shared",
          include: ["test/**/*.test.ts", "src/**/*.test.ts"],
          exclude: [...MOCKING, ...DASHBOARD],
          // the files of a worker share one module registry: the engine and the server are
          // imported once per worker instead of once per file (a third of the suite's time);
          // every file builds its own apps, sessions and simulations
          isolate: false,
        },
      },
      {
        extends: true,
        test: {
          name: "dashboard",
          include: DASHBOARD,
          isolate: false,
          // launched only when a dashboard file runs
          globalSetup: ["test/dashboard/global-setup.ts"],
        },
      },
      { extends: true, test: { name: "isolated", include: MOCKING, isolate: true } },
    ],
  },
});
