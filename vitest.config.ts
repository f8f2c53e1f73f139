import { defineConfig } from "vitest/config";

/** Files that replace a module (vi.mock): they need a module registry of their own. */
const MOCKING = ["test/reliability/delete-durable.test.ts"];

export default defineConfig({
  test: {
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: "forks",
    // two files at a time even on 2 cores (vitest's default would be cores − 1 = 1): many
    // files wait on servers, sockets and child processes more than they compute, and no test
    // depends on wall-clock speed
    maxWorkers: 2,
    projects: [
      {
        extends: true,
        test: {
          name: "shared",
          include: ["test/**/*.test.ts", "src/**/*.test.ts"],
          exclude: MOCKING,
          // the files of a worker share one module registry: the engine and the server are
          // imported once per worker instead of once per file (a third of the suite's time);
          // every file builds its own apps, sessions and simulations
          isolate: false,
        },
      },
      { extends: true, test: { name: "isolated", include: MOCKING, isolate: true } },
    ],
  },
});
