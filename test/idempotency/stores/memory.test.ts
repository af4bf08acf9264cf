import { createMemoryStore } from "../../../src/idempotency/stores/memory.js";
import { describeStoreConformance } from "../store.conformance.js";

describeStoreConformance("memory", async () => createMemoryStore());
