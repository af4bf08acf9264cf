import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it, vi } from "vitest";
import { register } from "../../../src/cli/commands/records.js";
import type { CliError } from "../../../src/cli/io.js";
import { openStore } from "../../../src/idempotency/open.js";
import { runOnce } from "../../../src/idempotency/run-once.js";
import { defaultStateDir } from "../../../src/state/location.js";
import { projectRoot } from "../../support/require.js";
import { runCommand } from "./runtime-cli.js";

const notesCatalog = join(projectRoot, "test/mcp/fixtures/notes-catalog.ts");
const dir = mkdtempSync(join(tmpdir(), "toolgate-cli-records-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A SQLite store with one record in each state (and one IN_FLIGHT past its lease). */
async function seeded(name: string): Promise<string> {
  const url = `sqlite:${join(dir, `${name}.db`)}`;
  const store = await openStore(url);
  const now = Date.now();
  await runOnce(store, "a-done", () => ({ refund_id: "r_1" }), { lease_ms: 60_000, tool: "refund_order" });
  await runOnce(store, "b-doubt", () => Promise.reject(new Error("gateway timeout")), {
    lease_ms: 60_000,
    tool: "refund_order",
  });
  await store.records.claim("c-dead", {
    owner: "dead",
    lease_until: now - 1000,
    fingerprint: null,
    tool: "cancel_order",
    now: now - 61_000,
  });
  await store.records.claim("d-live", {
    owner: "live",
    lease_until: now + 600_000,
    fingerprint: null,
    tool: "cancel_order",
    now,
  });
  await store.close();
  return url;
}

describe("toolgate records", () => {
  it("show: a tool's error, a tool name and a stored result with terminal sequences are printed escaped", async () => {
    const url = `sqlite:${join(dir, "hostile.db")}`;
    const store = await openStore(url);
    await runOnce(store, "k-doubt", () => Promise.reject(new Error("failed\x1b[2J\x1b]52;c;ZXZpbA==\x07")), {
      lease_ms: 60_000,
      tool: "sync\u202e",
    });
    await runOnce(store, "k-done", () => ({ note: "ok\u2066\u200b", esc: "\x1b[8m" }), {
      lease_ms: 60_000,
      tool: "note",
    });
    await store.close();
    for (const key of ["k-doubt", "k-done"]) {
      for (const argv of [
        ["records", "show", key, "--store", url],
        ["records", "show", key, "--store", url, "--json"],
        ["records", "list", "--store", url],
      ]) {
        const out = (await runCommand(register, argv)).stdout;
        expect([argv.join(" "), out]).not.toEqual([argv.join(" "), expect.stringMatching(/(?!\n)[\p{Cc}\p{Cf}]/u)]);
      }
    }
    const doubt = (await runCommand(register, ["records", "show", "k-doubt", "--store", url])).stdout;
    expect(doubt).toContain("sync\\u{202E}");
    expect(doubt).toContain(
      "why: the tool threw before confirming its effect: failed\\u{001B}[2J\\u{001B}]52;c;ZXZpbA==\\u{0007}",
    );
    expect((await runCommand(register, ["records", "show", "k-done", "--store", url])).stdout).toContain(
      'result: {"note":"ok\\u2066\\u200b","esc":"\\u001b[8m"}',
    );
  });

  it("list: every record in key order, an IN_FLIGHT past its lease shown as IN_DOUBT", async () => {
    const url = await seeded("list");
    const all = await runCommand(register, ["records", "list", "--store", url]);
    expect(all.error).toBeNull();
    const lines = all.stdout.trim().split("\n");
    expect(lines.map((l) => l.split("  ").slice(0, 3).join(" | "))).toEqual([
      "a-done | COMPLETED | refund_order",
      "b-doubt | IN_DOUBT | refund_order",
      "c-dead | IN_DOUBT (stored IN_FLIGHT) | cancel_order",
      "d-live | IN_FLIGHT | cancel_order",
    ]);
    const doubt = await runCommand(register, ["records", "list", "--store", url, "--state", "in_doubt", "--json"]);
    expect(
      (JSON.parse(doubt.stdout) as Array<{ key: string; reads_as: string }>).map((r) => [r.key, r.reads_as]),
    ).toEqual([
      ["b-doubt", "IN_DOUBT"],
      ["c-dead", "IN_DOUBT"],
    ]);
    const flight = await runCommand(register, ["records", "list", "--store", url, "--state", "in_flight", "--json"]);
    expect((JSON.parse(flight.stdout) as Array<{ key: string }>).map((r) => r.key)).toEqual(["d-live"]);
    const page = await runCommand(register, [
      "records",
      "list",
      "--store",
      url,
      "--limit",
      "2",
      "--after",
      "a-done",
      "--json",
    ]);
    expect((JSON.parse(page.stdout) as Array<{ key: string }>).map((r) => r.key)).toEqual(["b-doubt", "c-dead"]);
  });

  it("show: the reason a record is in doubt and how to settle it; the stored result of a completed one", async () => {
    const url = await seeded("show");
    const doubt = await runCommand(register, ["records", "show", "b-doubt", "--store", url]);
    expect(doubt.stdout).toContain("b-doubt  IN_DOUBT  refund_order  since ");
    expect(doubt.stdout).toContain("  why: the tool threw before confirming its effect: gateway timeout\n");
    expect(doubt.stdout).toContain(
      "  settle: toolgate records settle b-doubt --outcome applied --result JSON | --outcome not_applied\n",
    );
    const done = await runCommand(register, ["records", "show", "a-done", "--store", url, "--json"]);
    expect(JSON.parse(done.stdout)).toMatchObject({
      key: "a-done",
      state: "COMPLETED",
      reads_as: "COMPLETED",
      result: { refund_id: "r_1" },
    });
    const missing = (await runCommand(register, ["records", "show", "zz", "--store", url])).error;
    expect(missing?.message).toBe(
      `no record for key zz in ${url}: it was never claimed, was released, or was COMPLETED and passed its TTL`,
    );
    // Not found is a result (exit 1), not a usage error (exit 2).
    expect([missing?.name, (missing as CliError).exitCode]).toEqual(["CliError", 1]);
  });

  it("settle: applied stores the result repeats receive; not_applied releases the key", async () => {
    const url = await seeded("settle");
    const applied = await runCommand(register, [
      "records",
      "settle",
      "b-doubt",
      "--outcome",
      "applied",
      "--result",
      '{"refund_id":"r_2"}',
      "--store",
      url,
    ]);
    expect(applied.stdout).toBe(`b-doubt settled: COMPLETED; repeats receive {"refund_id":"r_2"}\n`);
    const released = await runCommand(register, [
      "records",
      "settle",
      "c-dead",
      "--outcome",
      "not_applied",
      "--store",
      url,
      "--json",
    ]);
    expect(JSON.parse(released.stdout)).toEqual({ settled: "released", key: "c-dead" });

    const store = await openStore(url);
    expect(await runOnce(store, "b-doubt", () => "again", { lease_ms: 1000 })).toMatchObject({
      status: "replay",
      result: { refund_id: "r_2" },
    });
    expect(await runOnce(store, "c-dead", () => "ran", { lease_ms: 1000 })).toMatchObject({
      status: "executed",
      result: "ran",
    });
    await store.close();

    expect(
      (await runCommand(register, ["records", "settle", "d-live", "--outcome", "not_applied", "--store", url])).error
        ?.message,
    ).toMatch(
      /^record d-live is IN_FLIGHT until .* ms\); its executor may still finish; settle it after the lease passes$/,
    );
    expect(
      (await runCommand(register, ["records", "settle", "a-done", "--outcome", "not_applied", "--store", url])).error
        ?.message,
    ).toMatch(/^record a-done is already COMPLETED/);
  });

  it("settle checks --result against the tool's outputSchema (the coding tools, or --catalog's) before storing it", async () => {
    const url = `sqlite:${join(dir, "checked.db")}`;
    const store = await openStore(url);
    for (const [key, tool] of [
      ["k-edit", "file_edit"],
      ["k-note", "note_append"],
      ["k-proxied", "read_graph"],
    ] as const) {
      await runOnce(store, key, () => Promise.reject(new Error("lost")), { lease_ms: 60_000, tool });
    }
    await store.close();
    const settle = (key: string, result: string, ...more: string[]) =>
      runCommand(register, [
        "records",
        "settle",
        key,
        "--outcome",
        "applied",
        "--result",
        result,
        "--store",
        url,
        ...more,
      ]);

    expect((await settle("k-edit", '{"path":"/ws/a.txt","bogus":1}')).error?.message).toMatchInlineSnapshot(`
      "--result does not match the outputSchema of file_edit, so every repeat of the call would receive a result its client rejects; nothing was settled:
        - version is required: a string
        - unknown field: bogus; allowed: path, version, previous_version, replacements, changed_lines, total_lines, snippet, probed
      Give the result file_edit would have returned (toolgate records show k-edit shows the call's record)."
    `);
    expect((await settle("k-note", '{"name":"a","lines":"two"}', "--catalog", notesCatalog)).error?.message)
      .toMatchInlineSnapshot(`
      "--result does not match the outputSchema of note_append, so every repeat of the call would receive a result its client rejects; nothing was settled:
        - lines must be an integer; received "two" (string)
      Give the result note_append would have returned (toolgate records show k-note shows the call's record)."
    `);
    const reads = await openStore(url);
    expect((await reads.records.get("k-note", Date.now()))?.state).toBe("IN_DOUBT"); // nothing was settled
    await reads.close();
    expect((await settle("k-note", '{"name":"a","lines":2}', "--catalog", notesCatalog)).stdout).toBe(
      `k-note settled: COMPLETED; repeats receive {"name":"a","lines":2}\n`,
    );

    // A proxied tool is in no catalog the CLI can load: stored unchecked, and stderr says so.
    let stderr = "";
    const spy = vi
      .spyOn(process.stderr, "write")
      .mockImplementation((chunk: string | Uint8Array) => ((stderr += String(chunk)), true));
    try {
      expect((await settle("k-proxied", '{"entities":[]}')).error).toBeNull();
    } finally {
      spy.mockRestore();
    }
    expect(stderr).toMatchInlineSnapshot(`
      "toolgate: read_graph is not among the coding tools, so --result is stored without checking it against read_graph's outputSchema (pass --catalog MODULE, as toolgate serve had, for a tool of yours)
      "
    `);
  });

  it("bad input is named", async () => {
    const url = `sqlite:${join(dir, "empty.db")}`;
    await (await openStore(url)).close(); // an existing, empty store
    const err = async (argv: string[]) =>
      (await runCommand(register, ["records", ...argv, "--store", url])).error?.message;
    expect(await err(["list", "--state", "done"])).toMatchInlineSnapshot(
      `"--state must be one of in_flight, completed, in_doubt; received "done""`,
    );
    expect(await err(["list", "--limit", "x"])).toMatchInlineSnapshot(
      `"--limit must be a positive integer; received "x""`,
    );
    // Read by cli/whole-number.ts like every whole-number flag: digits only.
    for (const text of ["0", "2.5", "1e2", "0x10"])
      expect(await err(["list", "--limit", text])).toBe(
        `--limit must be a positive integer; received ${JSON.stringify(text)}`,
      );
    expect(await err(["settle", "k", "--outcome", "maybe"])).toMatchInlineSnapshot(
      `"--outcome must be applied or not_applied; received "maybe""`,
    );
    expect(await err(["settle", "k", "--outcome", "not_applied", "--result", "1"])).toMatchInlineSnapshot(
      `"--result goes only with --outcome applied: a call that did not apply has no result"`,
    );
    expect(await err(["settle", "k", "--outcome", "applied", "--result", "{oops"])).toMatch(
      /^--result is not valid JSON: /,
    );
    expect(await err(["settle", "k", "--outcome", "applied", "--result", "1"])).toMatchInlineSnapshot(
      `"no record for key k: it was never claimed, was released, or was COMPLETED and passed its TTL"`,
    );
    expect((await runCommand(register, ["records", "list", "--store", "sqlit:x.db"])).error?.message).toMatch(/sqlit/);
  });

  it("a missing SQLite file is refused by list, show and settle, and none of them creates it", async () => {
    const path = join(dir, "typo", "x.db");
    const message = `no toolgate state at ${path}: nothing has been recorded there yet; run from the workspace toolgate serves (or pass --workspace DIR), or name the store with --store`;
    for (const argv of [["list"], ["show", "k"], ["settle", "k", "--outcome", "not_applied"]]) {
      const r = await runCommand(register, ["records", ...argv, "--store", `sqlite:${path}`]);
      expect([argv[0], r.stdout, r.error?.message]).toEqual([argv[0], "", message]);
    }
    expect(existsSync(join(dir, "typo"))).toBe(false);
  });

  it("records list where toolgate serve never ran exits 2 with one line and creates nothing", () => {
    const fresh = mkdtempSync(join(dir, "fresh-"));
    const r = spawnSync(
      join(projectRoot, "node_modules", ".bin", "tsx"),
      [join(projectRoot, "src", "cli", "main.ts"), "records", "list"],
      { cwd: fresh, encoding: "utf8" },
    );
    expect([r.status, r.stdout, r.stderr]).toEqual([
      2,
      "",
      `toolgate: no toolgate state at ${join(defaultStateDir(fresh), "state.db")}: nothing has been recorded there yet; run from the workspace toolgate serves (or pass --workspace DIR), or name the store with --store [store_missing]\n`,
    ]);
    expect(readdirSync(fresh)).toEqual([]);
    expect(existsSync(defaultStateDir(fresh))).toBe(false);
  });
});
