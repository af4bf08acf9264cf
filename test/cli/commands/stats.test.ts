import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { register } from "../../../src/cli/commands/stats.js";
import { createGateway } from "../../../src/runtime/gateway.js";
import { createMemoryStore } from "../../../src/idempotency/stores/memory.js";
import { orderCatalog } from "../../runtime/catalog.js";
import { runCommand } from "./runtime-cli.js";
import { auditRecord } from "../../support/audit-record.js";

const dir = mkdtempSync(join(tmpdir(), "toolgate-cli-stats-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("toolgate stats", () => {
  it("reads a trail a gateway wrote and prints per-tool figures, as a table and as JSON", async () => {
    const audit = join(dir, "audit.jsonl");
    const gateway = createGateway({ tools: orderCatalog().tools, store: createMemoryStore(), audit });
    const p = { trajectory_id: "t", turn: 0 };
    await gateway.call({ ...p, call_id: "1", tool: "get_order", arguments: { order_id: "o_001" } });
    await gateway.call({ ...p, call_id: "2", tool: "get_order", arguments: { order_id: "nope" } });
    await gateway.call({ ...p, call_id: "3", tool: "add_order_note", arguments: { order_id: "o_001", note: "n" } });
    await gateway.call({ ...p, call_id: "3", tool: "add_order_note", arguments: { order_id: "o_001", note: "n" } });
    await gateway.close();
    writeFileSync(audit, "not json\n", { flag: "a" });

    const json = await runCommand(register, ["stats", "--audit", audit, "--json"]);
    expect(json.error).toBeNull();
    const s = JSON.parse(json.stdout);
    expect(s.broken_lines).toBe(1);
    expect(s.overall.calls).toBe(4);
    expect(s.tools.get_order).toMatchObject({ calls: 2, validation_error_rate: 0.5 });
    expect(s.tools.add_order_note).toMatchObject({ calls: 2, replays: 1 });

    const table = await runCommand(register, ["stats", "--audit", audit]);
    expect(table.stdout.split("\n")[0]).toMatch(
      /^tool\s+calls\s+ok\s+invalid\s+denied\s+replays\s+in-doubt\s+latency ms p50\/p95/,
    );
    expect(table.stdout).toContain("5 line(s), 1 broken: line 5");
  });

  it("a file of only broken lines is an input error (the wrong file), an empty one is zero calls", async () => {
    const wrong = join(dir, "wrong.jsonl");
    writeFileSync(wrong, "garbage\n{bad\n");
    const r = await runCommand(register, ["stats", "--audit", wrong]);
    expect(r.stdout).toBe("");
    expect(r.error?.message).toMatch(
      /^the audit trail holds no usable record \(2 broken line\(s\); line 1: not JSON .*check --audit$/,
    );
    const empty = join(dir, "empty.jsonl");
    writeFileSync(empty, "");
    const e = await runCommand(register, ["stats", "--audit", empty, "--json"]);
    expect(e.error).toBeNull();
    expect(JSON.parse(e.stdout).overall.calls).toBe(0);
  });

  it("prints tool names a model chose with their escape sequences shown, not sent to the terminal", async () => {
    // A clear-screen, an OSC 52 clipboard write and a bidi override, as a model could name a tool.
    const names = ["\x1b[2J\x1b[H", "x\x1b]52;c;Y3VybCBldmlsLnNofHNo\x07", "\u202enoitcelfer", "\x9b31m"];
    const audit = join(dir, "hostile.jsonl");
    writeFileSync(
      audit,
      names.map((tool) => JSON.stringify(auditRecord({ tool, outcome: "unknown_tool" }))).join("\n") + "\n",
    );
    for (const argv of [
      ["stats", "--audit", audit],
      ["stats", "--audit", audit, "--json"],
    ]) {
      const out = (await runCommand(register, argv)).stdout;
      expect(out).not.toMatch(/(?!\n)[\p{Cc}\p{Cf}]/u);
    }
    const table = (await runCommand(register, ["stats", "--audit", audit])).stdout;
    expect(table).toContain("\\u{001B}[2J\\u{001B}[H");
    expect(table).toContain("x\\u{001B}]52;c;Y3VybCBldmlsLnNofHNo\\u{0007}");
    expect(table).toContain("\\u{202E}noitcelfer");
    const json = JSON.parse((await runCommand(register, ["stats", "--audit", audit, "--json"])).stdout);
    expect(Object.keys(json.tools).sort()).toEqual([...names].sort());
  });

  it("a missing file is a usage error naming it", async () => {
    const r = await runCommand(register, ["stats", "--audit", join(dir, "none.jsonl")]);
    expect(r.error?.message).toBe(`cannot read ${join(dir, "none.jsonl")}: no such file`);
  });
});
