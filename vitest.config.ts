import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts", "src/**/*.test.ts"],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: "forks",
    // two files at a time even on 2 cores (vitest's default would be cores − 1 = 1): many
    // files wait on servers, sockets and child processes more than they compute, and no test
    // depends on wall-clock speed
    maxWorkers: 2,
  },
});
