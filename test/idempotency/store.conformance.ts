/**
 * The Store contract (`src/idempotency/store.ts`) as tests, written once and run against every
 * backend: `describeStoreConformance("sqlite", () => openStore("sqlite:…"))`.
 *
 * Each call uses a fresh random key prefix, so several files and runs can share one Redis or
 * PostgreSQL server. Key order is code-unit order (ASCII keys here, so any binary collation agrees).
 */
import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe } from "vitest";
import type { Store } from "../../src/idempotency/store.js";
import { recordCases } from "./conformance/records.cases.js";
import { sideCases } from "./conformance/side.cases.js";
import { runOnceCases } from "./conformance/run-once.cases.js";
import { taskCases } from "./conformance/tasks.cases.js";

export interface ConformanceOptions {
  /** Concurrent claimers / settlers in the race cases. Default 100. */
  concurrency?: number;
}

/** What every case file receives: the open store (after beforeAll) and a key maker unique to this run. */
export interface ConformanceContext {
  store(): Store;
  /** A key unique to this run and case, e.g. `tgc-1a2b3c4d-claim-race`. */
  key(name: string): string;
  /** The run's prefix; every key and id made here starts with it. */
  prefix: string;
  concurrency: number;
}

export function describeStoreConformance(
  name: string,
  open: () => Promise<Store>,
  options: ConformanceOptions = {},
): void {
  describe(`Store conformance: ${name}`, () => {
    let store: Store | undefined;
    const prefix = `tgc-${randomBytes(4).toString("hex")}-`;
    let n = 0;
    const ctx: ConformanceContext = {
      store: () => {
        if (!store) throw new Error("store not opened (beforeAll failed)");
        return store;
      },
      key: (label) => `${prefix}${String(n++).padStart(4, "0")}-${label}`,
      prefix,
      concurrency: options.concurrency ?? 100,
    };
    beforeAll(async () => {
      store = await open();
    });
    afterAll(async () => {
      await store?.close();
      await store?.close(); // close() is idempotent
    });
    recordCases(ctx);
    sideCases(ctx);
    runOnceCases(ctx);
    taskCases(ctx);
  });
}
