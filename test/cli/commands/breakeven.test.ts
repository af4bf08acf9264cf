/** `toolgate breakeven`: output, --json and the exit codes (0, 2 bad input). */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it, vi } from "vitest";
import { defaultStateDir } from "../../../src/state/location.js";
import { jsonl, traffic } from "../../economics/support/audit.js";
import { cli } from "../../support/cli.js";
import { each, scratch } from "./scratch.js";

const { dir, file } = scratch("tg-econ-cli-");

describe("toolgate breakeven", () => {
  it("prints the worked example of docs/economics.md", async () => {
    const r = await cli("breakeven", "--tokens", "80", "--mask-ms", "0.5", "--repair-ms", "1800");
    expect(r.code).toBe(0);
    expect(r.out).toMatchInlineSnapshot(`
      "p_break = L_gen · t_mask / T_repair = 80 × 0.5 ms / 1,800 ms = 40 ms / 1,800 ms = 2.22 % (1 in 45)
      T_constrained = L_gen · (t_decode + t_mask) = 40 ms (mask overhead only; pass --decode-ms for the full time)
      decision: measure p_err to decide
      p_break = 40 ms / 1,800 ms ≈ 2.2 %: constraining pays when calls fail to parse more often than about one time in forty; measure the tool's own malformation rate (--observed-rate) to decide.
      "
    `);
  });

  it("decides with an observed rate, as JSON", async () => {
    const r = await cli(
      "breakeven",
      "--tokens",
      "80",
      "--mask-ms",
      "0.5",
      "--repair-ms",
      "1800",
      "--observed-rate",
      "0.05",
      "--json",
    );
    expect(r.code).toBe(0);
    expect(JSON.parse(r.out)).toMatchObject({ p_break: 40 / 1800, decision: "constrain", observed_rate: 0.05 });
  });

  it.each([
    [["--tokens", "80", "--mask-ms", "0", "--repair-ms", "1800"]],
    [["--tokens", "80", "--mask-ms", "0.5", "--repair-ms", "-1"]],
    [["--tokens", "80", "--mask-ms", "0.5", "--repair-ms", "1800", "--observed-rate", "2"]],
    [["--tokens", "lots", "--mask-ms", "0.5", "--repair-ms", "1800"]],
    [["--tokens", "80"]],
    [["--audit", "/nonexistent/audit.jsonl"]],
    [["--audit", "AUDIT", "--tokens", "80"]],
  ])("exits 2 with one clear line for %j", async (args) => {
    const argv = args.map((a) =>
      a === "AUDIT" ? file("a.jsonl", jsonl(traffic("t", { calls: 3, failed: 1, tokens: 9, repair_ms: 10 }))) : a,
    );
    const r = await cli("breakeven", ...argv);
    expect(r.code).toBe(2);
    expect(r.out).toBe("");
    expect(r.err.trim().split("\n")).toHaveLength(1);
    expect(r.err).toMatch(/^toolgate: /);
  });

  it("names each bad input", async () => {
    const errs = await each(
      ["breakeven", "--tokens", "80", "--mask-ms", "0.5", "--repair-ms", "-1"],
      ["breakeven", "--tokens", "80"],
      ["breakeven", "--audit", "/nonexistent/audit.jsonl"],
    );
    expect(errs.map((r) => r.err)).toMatchInlineSnapshot(`
      [
        "toolgate: repair_ms (T_repair) must be a number greater than 0; received -1. Pass --repair-ms with a positive value, e.g. 1800. [invalid_input]
      ",
        "toolgate: breakeven needs --mask-ms, --repair-ms (e.g. --tokens 80 --mask-ms 0.5 --repair-ms 1800), or --audit FILE
      ",
        "toolgate: cannot read /nonexistent/audit.jsonl: no such file
      ",
      ]
    `);
  });

  it("estimates per tool from an audit trail, reporting broken lines on stderr", async () => {
    const trail = file(
      "audit.jsonl",
      jsonl([
        ...traffic("file_edit", { calls: 200, failed: 20, tokens: 80, repair_ms: 2000 }),
        ...traffic("grep_search", { calls: 10, failed: 1, tokens: 100, repair_ms: 2000 }),
      ]) + "garbage\n",
    );
    const r = await cli("breakeven", "--audit", trail);
    expect(r.code).toBe(0);
    expect(r.out).toMatchInlineSnapshot(`
      "tool         calls  failed  p_err [95 % CI]     L_gen  T_repair  p_break  recommendation
      file_edit    200    20      10.0 % [6.6, 14.9]  80.0   2,000 ms  2.00 %   constrain
      grep_search  10     1       10.0 % [1.8, 40.4]  100.0  2,000 ms  2.50 %   not enough data

      grep_search: warning: sample too small to decide — p_err 10.0 % (95 % CI 1.8–40.4 %, 1/10) straddles p_break 2.5 %; at this rate about 15 calls would decide
      210 record(s) read; failed = outcome invalid_arguments; t_mask = 0.5 ms
      "
    `);
    expect(r.err.replace(dir, "DIR")).toMatchInlineSnapshot(`
      "toolgate: 1 broken line(s) in DIR/audit.jsonl skipped, 210 used:
        line 211: not valid JSON (Unexpected token 'g', "garbage" is not valid JSON)
      "
    `);
    const j = await cli("breakeven", "--audit", trail, "--mask-ms", "0.25", "--json");
    expect(JSON.parse(j.out)).toMatchObject({ mask_ms: 0.25, records: 210, broken: [{ line: 211 }] });
  });

  it("--audit without FILE reads serve's trail for --workspace, and says what to pass where serve wrote none", async () => {
    vi.stubEnv("XDG_STATE_HOME", join(dir, "state"));
    try {
      const ws = join(dir, "ws-breakeven");
      mkdirSync(ws, { recursive: true });
      const none = await cli("breakeven", "--audit", "--workspace", ws);
      expect(none.code).toBe(2);
      expect(none.err).toBe(
        `toolgate: no audit trail at ${join(defaultStateDir(ws), "audit.jsonl")}: toolgate serve has recorded no call for this workspace yet; run from the folder serve was started in, or pass --workspace DIR (and --state-dir DIR) as serve had them, or --audit FILE\n`,
      );
      mkdirSync(defaultStateDir(ws), { recursive: true });
      writeFileSync(
        join(defaultStateDir(ws), "audit.jsonl"),
        jsonl(traffic("file_edit", { calls: 200, failed: 20, tokens: 80, repair_ms: 2000 })),
      );
      const r = await cli("breakeven", "--audit", "--workspace", ws, "--json");
      expect(r.code).toBe(0);
      expect(JSON.parse(r.out).tools[0]).toMatchObject({ tool: "file_edit", calls: 200, failed: 20 });
    } finally {
      vi.unstubAllEnvs();
    }
  });

  it("a trail whose repairs come within ms (scripted clients) says constraining never pays, not a rate above 100 %", async () => {
    const trail = file("fast.jsonl", jsonl(traffic("file_edit", { calls: 50, failed: 5, tokens: 80, repair_ms: 3 })));
    const r = await cli("breakeven", "--audit", trail);
    expect(r.code).toBe(0);
    expect(r.out).toMatchInlineSnapshot(`
      "tool       calls  failed  p_err [95 % CI]     L_gen  T_repair  p_break  recommendation
      file_edit  50     5       10.0 % [4.3, 21.4]  80.0   3 ms      ≥ 100 %  don't constrain

      file_edit: p_break ≥ 100 %: a repair turn (T_repair 3 ms) costs less than masking one call (L_gen · t_mask = 40 ms); don't constrain
      50 record(s) read; failed = outcome invalid_arguments; t_mask = 0.5 ms
      "
    `);
    expect(r.out).not.toMatch(/\d{3,}\.\d+ %/);
    const t = JSON.parse((await cli("breakeven", "--audit", trail, "--json")).out).tools[0];
    expect(t).toMatchObject({
      p_break: null,
      constraining_never_pays: true,
      recommendation: "dont_constrain",
      t_repair_ms: 3,
    });
    expect(t.p_break_raw).toBeCloseTo((80 * 0.5) / 3, 12);
    expect(
      JSON.parse((await cli("breakeven", "--tokens", "80", "--mask-ms", "0.5", "--repair-ms", "3", "--json")).out),
    ).toMatchObject({
      constraining_never_pays: true,
      decision: "dont_constrain",
      summary: expect.stringMatching(
        /never pays on latency; no rate is needed: do not constrain; repair turns are cheaper\.$/,
      ),
    });
    expect(
      JSON.parse((await cli("breakeven", "--tokens", "80", "--mask-ms", "0.5", "--repair-ms", "1800", "--json")).out),
    ).toMatchObject({ constraining_never_pays: false });
    const direct = await cli(
      "breakeven",
      "--tokens",
      "80",
      "--mask-ms",
      "0.5",
      "--repair-ms",
      "3",
      "--observed-rate",
      "0.1",
    );
    expect(direct.out).toMatchInlineSnapshot(`
      "p_break = L_gen · t_mask / T_repair = 80 × 0.5 ms / 3 ms = 40 ms / 3 ms ≥ 100 % (a repair turn costs less than masking one call)
      T_constrained = L_gen · (t_decode + t_mask) = 40 ms (mask overhead only; pass --decode-ms for the full time)
      E[T_free] = L_gen · t_decode + p_err · T_repair = 0.3 ms at p_err = 10.0 %
      decision: do not constrain
      p_break = 40 ms / 3 ms ≥ 100 %: masking costs more than a repair turn, so constraining never pays on latency; observed 10.0 %: do not constrain; repair turns are cheaper.
      "
    `);
  });

  it("exits 2 for a trail with nothing usable", async () => {
    const r = await cli("breakeven", "--audit", file("bad.jsonl", "nope\n{}\n"));
    expect(r.code).toBe(2);
    expect(r.err).toMatchInlineSnapshot(`
      "toolgate: the audit trail holds no usable record (2 broken line(s); line 1: not valid JSON (Unexpected token 'o', "nope" is not valid JSON)). Expected one AuditRecord JSON object per line, as the gateway writes to its audit trail. [invalid_input]
      "
    `);
  });
});
