/**
 * The audit sink's file: created 0600 in a 0700 folder, never written through a link, and a
 * trail that cannot be opened when a timer flushes says so on stderr instead of ending the process.
 */
import { mkdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it, vi } from "vitest";
import { createAuditSink, type PendingAudit } from "../../src/runtime/audit.js";
import { auditRecord } from "../support/audit-record.js";
import { tempDir } from "./support.js";

const entry = (call_id: string): PendingAudit => ({
  record: { ...auditRecord({ call_id }), argument_tokens: 1, observation_tokens: 1 },
  arguments: {},
  observation_text: "",
});

describe("createAuditSink: the file", () => {
  it("openNow creates the folder 0700 and the file 0600 before any line, and refuses a link at once", async () => {
    const root = tempDir("audit");
    const sink = createAuditSink(join(root, "logs", "audit.jsonl"), { openNow: true });
    expect([
      statSync(join(root, "logs")).mode & 0o777,
      statSync(join(root, "logs", "audit.jsonl")).mode & 0o777,
    ]).toEqual([0o700, 0o600]);
    await sink.close();
    writeFileSync(join(root, "victim"), "rc\n");
    symlinkSync(join(root, "victim"), join(root, "logs", "linked.jsonl"));
    expect(() => createAuditSink(join(root, "logs", "linked.jsonl"), { openNow: true })).toThrow(
      /is a symbolic link .*; toolgate does not follow links to its own state; remove the link$/,
    );
    expect(readFileSync(join(root, "victim"), "utf8")).toBe("rc\n");
  });

  it("a link planted before the first timed flush: nothing is written through it, one line on stderr, the process goes on", async () => {
    const root = tempDir("audit");
    mkdirSync(join(root, "logs"), { mode: 0o700 });
    writeFileSync(join(root, "victim"), "rc\n");
    const sink = createAuditSink(join(root, "logs", "audit.jsonl"));
    symlinkSync(join(root, "victim"), join(root, "logs", "audit.jsonl"));
    let stderr = "";
    const spy = vi.spyOn(process.stderr, "write").mockImplementation((chunk) => ((stderr += String(chunk)), true));
    try {
      sink.write(entry("c1"));
      await vi.waitUntil(() => stderr.length > 0, { timeout: 10_000 });
    } finally {
      spy.mockRestore();
    }
    expect(stderr).toMatch(
      new RegExp(
        `^toolgate: audit lines not written to ${root}/logs/audit\\.jsonl: the audit trail ${root}/logs/audit\\.jsonl is a symbolic link`,
      ),
    );
    expect(readFileSync(join(root, "victim"), "utf8")).toBe("rc\n");
    await sink.close();
  });
});
