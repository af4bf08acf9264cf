import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { userInfo } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { register } from "../../../src/cli/commands/approvals.js";
import { createGateway } from "../../../src/runtime/gateway.js";
import { openStore } from "../../../src/idempotency/open.js";
import { orderCatalog } from "../../runtime/catalog.js";
import { runCommand } from "./runtime-cli.js";

const dir = mkdtempSync(join(tmpdir(), "toolgate-cli-approvals-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("toolgate approvals", () => {
  it("lists, approves and denies approvals a gateway requested, through a shared SQLite store", async () => {
    const url = `sqlite:${join(dir, "state.db")}`;
    const catalog = orderCatalog();
    const gateway = createGateway({ tools: catalog.tools, store: await openStore(url), audit: false });
    const p = { trajectory_id: "t", turn: 0, tool: "refund_order" };
    const ask = await gateway.call({ ...p, call_id: "1", arguments: { order_id: "o_001", amount_cents: 5 } });
    const id = ask.error!.detail!.approval_id as string;
    const ask2 = await gateway.call({ ...p, call_id: "2", arguments: { order_id: "o_002", amount_cents: 7 } });
    const id2 = ask2.error!.detail!.approval_id as string;

    const list = await runCommand(register, ["approvals", "list", "--store", url, "--state", "pending"]);
    expect(list.error).toBeNull();
    expect(list.stdout).toContain(`${id}  pending  refund_order  trajectory t`);
    expect(list.stdout).toContain(`arguments: {"order_id":"o_001","amount_cents":5}`);

    const approve = await runCommand(register, [
      "approvals",
      "approve",
      id,
      "--store",
      url,
      "--approver",
      "alice",
      "--note",
      "ok",
      "--json",
    ]);
    // The OS user who ran the command is the approver; --approver is only a label beside it.
    const user = `${userInfo().username} (uid ${process.getuid!()})`;
    expect(JSON.parse(approve.stdout)).toMatchObject({
      id,
      state: "approved",
      approver: `cli:${user} [unverified name "alice"]`,
      note: "ok",
    });
    const deny = await runCommand(register, [
      "approvals",
      "deny",
      id2,
      "--store",
      url,
      "--reason",
      "too late",
      "--approver",
      "bob",
    ]);
    expect(deny.stdout).toContain(`by cli:${user} [unverified name "bob"]: too late`);

    const run = await gateway.call({
      ...p,
      call_id: "1",
      arguments: { order_id: "o_001", amount_cents: 5 },
      approval_id: id,
    });
    expect(run.ok).toBe(true);
    const refused = await gateway.call({
      ...p,
      call_id: "2",
      arguments: { order_id: "o_002", amount_cents: 7 },
      approval_id: id2,
    });
    expect(refused.error?.code).toBe("approval_denied");
    await gateway.close();

    const again = await runCommand(register, ["approvals", "approve", id, "--store", url]);
    expect(again.error?.message).toBe(
      `approval ${id} is already consumed (by cli:${user} [unverified name "alice"]); an approval is decided once`,
    );
  });

  it("lists an approval whose ids and arguments hold terminal sequences without forging lines or hiding the arguments", async () => {
    const url = `sqlite:${join(dir, "hostile.db")}`;
    const store = await openStore(url);
    const now = Date.now();
    // A trajectory id that ends its line, forges an arguments line, then conceals (SGR 8) what follows.
    const trajectory = 'run-1\r\n  arguments: {"order_id":"o_harmless"}\n\x1b[8m';
    await store.approvals.create({
      id: "ap_hostile0000000000",
      tool: "refund_order\u202e",
      args_hash: "0".repeat(64),
      arguments: { order_id: "o_001\u2066", amount_cents: 999_999 },
      capability_id: null,
      trajectory_id: trajectory,
      state: "pending",
      created_at: now,
      expires_at: now + 600_000,
      decided_at: null,
      approver: null,
      note: null,
    });
    await store.close();
    const list = await runCommand(register, ["approvals", "list", "--store", url]);
    expect(list.error).toBeNull();
    const lines = list.stdout.trimEnd().split("\n");
    expect(lines).toHaveLength(3);
    expect(lines[0]).toBe(
      'ap_hostile0000000000  pending  refund_order\\u{202E}  trajectory run-1\\u{000D}\\u{000A}  arguments: {"order_id":"o_harmless"}\\u{000A}\\u{001B}[8m',
    );
    expect(lines[1]).toBe('  arguments: {"order_id":"o_001\\u2066","amount_cents":999999}');
    expect(list.stdout).not.toMatch(/(?!\n)[\p{Cc}\p{Cf}]/u);
    const json = await runCommand(register, ["approvals", "list", "--store", url, "--json"]);
    expect(json.stdout).not.toMatch(/(?!\n)[\p{Cc}\p{Cf}]/u);
    expect(JSON.parse(json.stdout)[0].trajectory_id).toBe(trajectory);
  });

  it("records the OS user of the process as the approver, whatever $USER says", async () => {
    const url = `sqlite:${join(dir, "user.db")}`;
    const store = await openStore(url);
    const now = Date.now();
    await store.approvals.create({
      id: "ap_user000000000000",
      tool: "refund_order",
      args_hash: "0".repeat(64),
      arguments: {},
      capability_id: null,
      trajectory_id: "t",
      state: "pending",
      created_at: now,
      expires_at: now + 600_000,
      decided_at: null,
      approver: null,
      note: null,
    });
    await store.close();
    const saved = process.env.USER;
    process.env.USER = "the-security-officer";
    try {
      const r = await runCommand(register, ["approvals", "approve", "ap_user000000000000", "--store", url, "--json"]);
      expect(JSON.parse(r.stdout).approver).toBe(`cli:${userInfo().username} (uid ${process.getuid!()})`);
    } finally {
      if (saved === undefined) delete process.env.USER;
      else process.env.USER = saved;
    }
  });

  it("bad input is named", async () => {
    const url = `sqlite:${join(dir, "empty.db")}`;
    await (await openStore(url)).close(); // an existing, empty store
    expect((await runCommand(register, ["approvals", "list", "--store", url, "--state", "done"])).error?.message).toBe(
      `--state must be one of pending, approved, denied, consumed; received "done"`,
    );
    for (const text of ["0", "1e2", "-3"]) {
      expect((await runCommand(register, ["approvals", "list", "--store", url, "--limit", text])).error?.message).toBe(
        `--limit must be a positive integer; received ${JSON.stringify(text)}`,
      );
    }
    expect((await runCommand(register, ["approvals", "approve", "ap_x", "--store", url])).error?.message).toBe(
      "approval ap_x does not exist; run `toolgate approvals list` to see the ids",
    );
    expect((await runCommand(register, ["approvals", "list", "--store", url])).stdout).toBe("no approvals\n");
  });

  it("a missing SQLite file is refused by list, approve and deny, and none of them creates it", async () => {
    const path = join(dir, "typo", "x.db");
    const message = `no toolgate state at ${path}: nothing has been recorded there yet; run from the workspace toolgate serves (or pass --workspace DIR), or name the store with --store`;
    for (const argv of [["list"], ["approve", "ap_x"], ["deny", "ap_x", "--reason", "no"]]) {
      const r = await runCommand(register, ["approvals", ...argv, "--store", `sqlite:${path}`]);
      expect([argv[0], r.stdout, r.error?.message]).toEqual([argv[0], "", message]);
    }
    expect(existsSync(join(dir, "typo"))).toBe(false);
  });
});
