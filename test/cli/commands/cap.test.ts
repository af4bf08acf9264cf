/**
 * `toolgate cap …` end to end in process: issue → attenuate → inspect → verify → revoke, exit
 * codes, usage errors, and that no key ever appears in any output.
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openStore } from "../../../src/idempotency/open.js";
import { cli as runCaptured, type CliRun } from "../../support/cli.js";
import { projectRoot } from "../../support/require.js";

const dir = mkdtempSync(join(tmpdir(), "toolgate-cap-cli-"));
const keyFile = join(dir, "keys.json");
const storeUrl = `sqlite:${join(dir, "state.db")}`;
/** Everything any command printed, to search for key material at the end. */
const transcript: string[] = [];

/** The shared in-process runner, recording every output for the key-leak check. */
async function cli(...argv: string[]): Promise<CliRun> {
  const run = await runCaptured(...argv);
  transcript.push(run.out, run.err);
  return run;
}

let root = "";
let child = "";
beforeAll(async () => {
  // The runtime's store, as a first `toolgate serve` leaves it: verify and inspect never create one.
  await (await openStore(storeUrl)).close();
  expect((await cli("cap", "keygen", "--out", keyFile)).code).toBe(0);
  const issued = await cli(
    "cap",
    "issue",
    "--keys",
    keyFile,
    "--rights",
    "read,write",
    "--objects",
    "path:/ws,host:api.example.com",
    "--max-cost",
    "10",
    "--budget",
    "3",
    "--arg-max",
    "amount=100",
    "--ttl",
    "1h",
  );
  expect(issued).toMatchObject({ code: 0, out: expect.stringMatching(/^tg1\.[A-Za-z0-9_.-]+\n$/) });
  root = issued.out.trim();
  child = (
    await cli("cap", "attenuate", root, "--rights", "read", "--objects", "path:/ws/src", "--ttl", "10m")
  ).out.trim();
});

describe("toolgate cap", () => {
  it("keygen writes a 0600 file and can add a kid for rotation, printing only kids", async () => {
    expect(statSync(keyFile).mode & 0o777).toBe(0o600);
    const r = await cli("cap", "keygen", "--out", join(dir, "other.json"), "--kid", "a", "--json");
    expect(JSON.parse(r.out)).toEqual({ file: join(dir, "other.json"), kid: "a", kids: ["a"] });
    expect((await cli("cap", "keygen", "--out", join(dir, "other.json"), "--kid", "a")).err).toMatch(
      /already has kid a; choose another with --kid/,
    );
  });

  it("inspect shows the blocks and effective grant, unverified without keys and valid with them", async () => {
    const saved = process.env.TOOLGATE_KEYS;
    delete process.env.TOOLGATE_KEYS;
    const bare = await cli("cap", "inspect", child);
    if (saved !== undefined) process.env.TOOLGATE_KEYS = saved;
    expect(bare.out).toMatch(/^status: unverified \(no keys configured/);
    const json = JSON.parse((await cli("cap", "inspect", child, "--keys", keyFile, "--json")).out);
    expect(json).toMatchObject({
      status: "valid",
      grant: { rights: ["read"], objects: ["path:/ws/src"], max_cost: 10, args: [{ arg: "amount", max: 100 }] },
    });
    expect(json.blocks).toHaveLength(2);
  });

  it("verify exits 0 when allowed and 1 when denied, printing code and reason", async () => {
    const denied = await cli(
      "cap",
      "verify",
      child,
      "--keys",
      keyFile,
      "--op",
      "write",
      "--target",
      "path:/ws/a.txt",
      "--store",
      storeUrl,
    );
    expect(denied).toMatchObject({
      code: 1,
      out: 'denied: right_missing: the call needs the right "write"; the capability allows read\n',
    });
    const ok = await cli(
      "cap",
      "verify",
      child,
      "--keys",
      keyFile,
      "--op",
      "read",
      "--target",
      "path:/ws/src/a.ts",
      "--args",
      '{"amount":5}',
      "--store",
      storeUrl,
      "--json",
    );
    expect(ok.code).toBe(0);
    expect(JSON.parse(ok.out)).toMatchObject({ allowed: true, remaining_budget: 2 });
    const outside = await cli(
      "cap",
      "verify",
      child,
      "--keys",
      keyFile,
      "--op",
      "read",
      "--target",
      "path:/ws2/a",
      "--args",
      '{"amount":5}',
      "--store",
      storeUrl,
    );
    expect(outside.code).toBe(1);
  });

  it("verify without --store checks a budgeted grant against a fresh budget, and says what it did not check", async () => {
    const r = await cli(
      "cap",
      "verify",
      child,
      "--keys",
      keyFile,
      "--op",
      "read",
      "--target",
      "path:/ws/src/a.ts",
      "--args",
      '{"amount":5}',
    );
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/^allowed: grant cap_\S+, budget left \d+\n$/);
    expect(r.err).toBe(
      "toolgate: without --store, the budget is checked as if nothing had been spent and revocation is not checked; pass --store sqlite: (toolgate serve's store for the workspace) to check both and spend\n",
    );
    const over = await cli(
      "cap",
      "verify",
      child,
      "--keys",
      keyFile,
      "--op",
      "read",
      "--target",
      "path:/ws/src/a.ts",
      "--args",
      '{"amount":5}',
      "--cost",
      "1000",
    );
    expect(over.code).toBe(1);
  });

  it("revoke by id rejects the child on the next verify", async () => {
    const id = JSON.parse((await cli("cap", "inspect", root, "--json")).out).grant.id as string;
    expect((await cli("cap", "revoke", id, "--reason", "test", "--store", storeUrl)).out).toBe(
      `revoked ${id} (and every grant attenuated from it)\n`,
    );
    const r = await cli(
      "cap",
      "verify",
      child,
      "--keys",
      keyFile,
      "--op",
      "read",
      "--target",
      "path:/ws/src/a.ts",
      "--args",
      '{"amount":5}',
      "--store",
      storeUrl,
      "--json",
    );
    expect(r.code).toBe(1);
    expect(JSON.parse(r.out)).toMatchObject({ allowed: false, code: "revoked" });
    const inspected = await cli("cap", "inspect", child, "--keys", keyFile, "--store", storeUrl);
    expect(inspected.out).toMatch(
      new RegExp(
        `^status: revoked \\(the capability cap_\\S+ is revoked: the grant it was delegated from \\(${id}\\) was revoked; ask for a new grant\\)\n`,
      ),
    );
  });

  it("inspect and verify --store refuse a missing SQLite file without creating it", async () => {
    const missing = join(dir, "typo", "x.db");
    const refusal = {
      code: 2,
      out: "",
      err: `toolgate: no toolgate state at ${missing}: nothing has been recorded there yet; run from the workspace toolgate serves (or pass --workspace DIR), or name the store with --store [store_missing]\n`,
    };
    expect(await cli("cap", "inspect", child, "--keys", keyFile, "--store", `sqlite:${missing}`)).toMatchObject(
      refusal,
    );
    expect(
      await cli(
        "cap",
        "verify",
        child,
        "--keys",
        keyFile,
        "--op",
        "read",
        "--target",
        "path:/ws/src/a.ts",
        "--args",
        '{"amount":5}',
        "--store",
        `sqlite:${missing}`,
      ),
    ).toMatchObject(refusal);
    expect(
      await cli(
        "cap",
        "verify",
        root,
        "--keys",
        keyFile,
        "--op",
        "write",
        "--target",
        "path:/elsewhere",
        "--store",
        `sqlite:${missing}`,
        "--json",
      ),
    ).toMatchObject(refusal);
    expect(existsSync(join(dir, "typo"))).toBe(false);
  });

  it("revoke creates a missing store and says so on stderr; into an existing one it says nothing more", async () => {
    const id = JSON.parse((await cli("cap", "inspect", child, "--json")).out).grant.id as string;
    const fresh = join(dir, "revocations", "x.db");
    const first = await cli("cap", "revoke", id, "--store", `sqlite:${fresh}`, "--json");
    expect(first.code).toBe(0);
    expect(JSON.parse(first.out)).toMatchObject({ revoked: id, created_store: fresh });
    expect(first.err).toBe(
      `toolgate: note: created a new store at ${fresh} (there was none); the revocation takes effect only where the runtime uses this same store (toolgate serve --store); if you meant an existing one, pass it with --store\n`,
    );
    expect(existsSync(fresh)).toBe(true);
    const again = await cli("cap", "revoke", id, "--store", `sqlite:${fresh}`);
    expect(again).toMatchObject({ code: 0, out: `revoked ${id} (and every grant attenuated from it)\n`, err: "" });
    const verified = await cli(
      "cap",
      "verify",
      child,
      "--keys",
      keyFile,
      "--op",
      "read",
      "--target",
      "path:/ws/src/a.ts",
      "--args",
      '{"amount":5}',
      "--store",
      `sqlite:${fresh}`,
      "--json",
    );
    expect([verified.code, JSON.parse(verified.out).code]).toEqual([1, "revoked"]);
  });

  it("issue warns on stderr for a right outside read, write, execute, connect, and still issues it; --help lists them", async () => {
    const r = await cli(
      "cap",
      "issue",
      "--keys",
      keyFile,
      "--rights",
      "read,fly",
      "--objects",
      "path:/ws",
      "--ttl",
      "1h",
    );
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/^tg1\./);
    const [warning, ...rest] = r.err.split("\n");
    expect(warning).toBe(
      "toolgate: warning: right 'fly' is not one of read, write, execute, connect; it is accepted as a custom right",
    );
    expect(rest.join("\n")).toMatch(/^grant cap_\S+: /);
    expect(
      (
        await cli(
          "cap",
          "issue",
          "--keys",
          keyFile,
          "--rights",
          "read,write,execute,connect",
          "--objects",
          "path:/ws",
          "--ttl",
          "1h",
        )
      ).err,
    ).not.toContain("warning");
    const typo = await cli(
      "cap",
      "issue",
      "--keys",
      keyFile,
      "--rights",
      "raed",
      "--objects",
      "path:/ws",
      "--ttl",
      "1h",
    );
    expect(typo.code).toBe(0);
    expect(typo.err.split("\n")[0]).toBe(
      "toolgate: warning: right 'raed' is not one of read, write, execute, connect (did you mean 'read'?); it is accepted as a custom right",
    );
    const help = await cli("cap", "issue", "--help");
    expect(help.out.replace(/\s+/g, " ")).toContain(
      "standard: read, write, execute, connect (bash_execute needs execute on path:<workspace>); others are accepted as custom rights",
    );
  });

  it("reads TOKEN from standard input with -", () => {
    const tsx = join(projectRoot, "node_modules", ".bin", "tsx");
    const r = spawnSync(tsx, [join(projectRoot, "src", "cli", "main.ts"), "cap", "inspect", "-", "--json"], {
      input: child + "\n",
      encoding: "utf8",
      env: { ...process.env, TOOLGATE_KEYS: "" },
    });
    transcript.push(r.stdout, r.stderr);
    expect(r.status).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ status: "unverified", grant: { objects: ["path:/ws/src"] } });
  });

  it("usage and input errors exit 2 with one line naming the fix", async () => {
    expect(await cli("cap", "issue", "--keys", keyFile, "--rights", "read", "--objects", "path:/ws")).toMatchObject({
      code: 2,
      err: "toolgate: cap issue needs --ttl (e.g. 1h) or --expires-at\n",
    });
    expect(
      await cli("cap", "issue", "--keys", keyFile, "--rights", "read", "--objects", "path:/ws", "--ttl", "soon"),
    ).toMatchObject({
      code: 2,
      err: 'toolgate: --ttl must be a positive number with a unit (ms, s, m, h, d), e.g. 10m or 1h; received "soon" [invalid_duration]\n',
    });
    expect((await cli("cap", "attenuate", root, "--rights", "execute")).err).toBe(
      "toolgate: attenuation may only narrow a capability: rights execute are not held by the parent (it holds read,write) [attenuation_widens]\n",
    );
    expect((await cli("cap", "verify", "nope", "--keys", keyFile, "--op", "read", "--target", "path:/ws")).err).toMatch(
      /TOKEN must be a tg1\.… capability token/,
    );
    expect((await cli("cap", "verify", root, "--op", "read")).code).toBe(2);
    expect(await cli("cap", "verify", root, "--keys", keyFile, "--op", "read", "--target", "/ws/a.txt")).toMatchObject({
      code: 2,
      out: "",
      err: expect.stringMatching(
        /^toolgate: --target: object "\/ws\/a\.txt" has no known kind \(expected one of path, host, repo, tenant, tool\); write it as kind:value, e\.g\. path:\/ws/,
      ),
    });
    expect(
      (
        await cli(
          "cap",
          "issue",
          "--keys",
          join(dir, "missing.json"),
          "--rights",
          "read",
          "--objects",
          "path:/ws",
          "--ttl",
          "1h",
        )
      ).err,
    ).toMatch(/cannot read key file .*missing\.json: no such file \(create one with toolgate cap keygen --out FILE\)/);
  });

  it("every malformed flag is named with its expected form", async () => {
    const issue = (...extra: string[]) =>
      cli("cap", "issue", "--keys", keyFile, "--rights", "read", "--objects", "path:/ws", ...extra);
    // One at a time: each run captures process.stdout/stderr.
    const runs: Array<() => ReturnType<typeof cli>> = [
      () => issue("--ttl", "1h", "--max-cost", "ten"),
      () => issue("--ttl", "1h", "--arg-max", "amount"),
      () => issue("--ttl", "1h", "--arg-min", "amount=low"),
      () => issue("--expires-at", "tomorrow"),
      () => issue("--ttl", "1h", "--expires-at", "2030-01-01T00:00:00Z"),
      () => issue("--ttl", "1h", "--objects", "/ws"),
      () => cli("cap", "issue", "--keys", keyFile, "--objects", "path:/ws", "--ttl", "1h"),
      () =>
        cli("cap", "verify", root, "--keys", keyFile, "--op", "read", "--target", "path:/ws", "--args", "{amount:1}"),
      () => cli("cap", "revoke", "not an id", "--store", storeUrl),
    ];
    const errs: Array<{ code: number; err: string }> = [];
    for (const run of runs) errs.push(await run());
    expect(errs.map((r) => `${r.code} ${r.err.trim()}`)).toMatchInlineSnapshot(`
      [
        "2 toolgate: --max-cost must be a number; received "ten"",
        "2 toolgate: --arg-max must be NAME=VALUE, e.g. --arg-max amount=100; received "amount"",
        "2 toolgate: --arg-min must be a number; received "low"",
        "2 toolgate: --expires-at must be an ISO-8601 time, e.g. 2026-12-31T23:00:00Z; received "tomorrow"",
        "2 toolgate: give --ttl or --expires-at, not both",
        "2 toolgate: invalid grant: objects: object "/ws" has no known kind (expected one of path, host, repo, tenant, tool); write it as kind:value, e.g. path:/ws, host:api.example.com, host:*.example.com, host:api.example.com:443, repo:owner/name, tenant:acme, tool:file_view [invalid_grant]",
        "2 toolgate: cap issue needs --rights and --objects, e.g. --rights read --objects path:/ws",
        "2 toolgate: --args is not valid JSON: Expected property name or '}' in JSON at position 1",
        "2 toolgate: cannot revoke "not an id": expected a grant id such as cap_3q2Xn0u8mB1Kc9dZ (toolgate cap inspect TOKEN shows it) or a whole tg1. token [invalid_grant]",
      ]
    `);
  });

  it("bad key files are named by kid and size, never by content", async () => {
    const short = join(dir, "short.json");
    const shortKey = Buffer.alloc(16, 0x5a).toString("base64");
    writeFileSync(short, JSON.stringify({ old: shortKey }));
    const r = await cli("cap", "issue", "--keys", short, "--rights", "read", "--objects", "path:/ws", "--ttl", "1h");
    expect(r.err).toBe(
      `toolgate: key file ${short}: the key for kid old is 16 bytes; at least 32 are required (toolgate cap keygen makes one) [bad_keys]\n`,
    );
    const broken = join(dir, "broken.json");
    writeFileSync(broken, `{"k1": "${shortKey}`);
    expect(
      (await cli("cap", "issue", "--keys", broken, "--rights", "read", "--objects", "path:/ws", "--ttl", "1h")).err,
    ).toBe(`toolgate: key file ${broken} is not valid JSON; expected {"kid":"base64 key"} [bad_keys]\n`);
    transcript.push(shortKey); // checked below: it must be the only place it appears
    expect(transcript.filter((t) => t.includes(shortKey))).toHaveLength(1);
  });
});

afterAll(() => {
  // No key ever appears in any output, in any encoding.
  const keys = JSON.parse(readFileSync(keyFile, "utf8")) as Record<string, string>;
  const all = transcript.join("\n");
  for (const b64 of Object.values(keys)) {
    const raw = Buffer.from(b64, "base64");
    for (const form of [b64, raw.toString("base64url"), raw.toString("hex"), raw.toString("latin1")]) {
      expect(all.includes(form)).toBe(false);
    }
  }
  expect(all.length).toBeGreaterThan(1000);
});
