import { defineConfig } from "vitest/config";

export default defineConfig({
  // `toolgate` and `toolgate/*` resolve to the sources, as tsconfig.json's "paths" say (examples import the package by name).
  resolve: { tsconfigPaths: true },
  test: {
    include: ["test/**/*.test.ts"],
    // Per-user state and key defaults go to a temporary folder, not the real home.
    globalSetup: ["test/support/state-home.ts"],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // Store suites share real Redis/PostgreSQL servers; files use distinct key prefixes,
    // but two cores are all a CI machine has, so keep the pool small.
    maxWorkers: 2,
  },
});
