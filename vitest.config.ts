import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // Store suites share real Redis/PostgreSQL servers; files use distinct key prefixes,
    // but two cores are all a CI machine has, so keep the pool small.
    maxWorkers: 2,
  },
});
