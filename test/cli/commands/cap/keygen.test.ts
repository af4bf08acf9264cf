/**
 * Where capability keys live: `cap keygen` writes them outside every workspace by default
 * (0600 in a 0700 folder), warns when told to write inside the current folder, and `serve`
 * refuses a key file inside its workspace — where `bash_execute "base64 -w0 keys.json"` would
 * print the HMAC key and let the agent mint any capability.
 */
import { chmodSync, existsSync, readFileSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { cli } from "../../../support/cli.js";
import { runCli, tempDir } from "../../../state/support.js";

const mode = (path: string) => (statSync(path).mode & 0o777).toString(8);

// The default key file is per user: each test gets a config folder of its own.
let config = "";
const saved = process.env.XDG_CONFIG_HOME;
const savedKeys = process.env.TOOLGATE_KEYS;
beforeEach(() => {
  config = join(tempDir("config"), "config");
  process.env.XDG_CONFIG_HOME = config;
  delete process.env.TOOLGATE_KEYS;
});
afterEach(() => {
  process.env.XDG_CONFIG_HOME = saved;
  if (savedKeys !== undefined) process.env.TOOLGATE_KEYS = savedKeys;
});

describe("toolgate cap keygen", () => {
  it("refuses a --kid the key file could not hold, before writing anything", async () => {
    const r = await cli("cap", "keygen", "--kid", "a b");
    expect(r.code).toBe(2);
    expect(r.err).toContain('--kid must be 1–64 letters, digits, _ or -; received "a b"; example --kid k2');
    expect(existsSync(join(config, "toolgate", "keys.json"))).toBe(false);
  });

  it("a key file that is not JSON is named, never quoted (its text is key material), and left as it was", async () => {
    const file = join(tempDir("keys"), "keys.json");
    const secret = "c2VjcmV0LWtleS1tYXRlcmlhbC1kby1ub3QtcHJpbnQ";
    writeFileSync(file, `{"k1": "${secret}"`, { mode: 0o600 });
    const r = await cli("cap", "keygen", "--out", file);
    expect(r.code).toBe(2);
    expect(r.err).toContain(`${file} is not valid JSON`);
    expect(r.err).not.toContain("c2VjcmV0");
    expect(readFileSync(file, "utf8")).toBe(`{"k1": "${secret}"`);
  });

  it("without --out writes $XDG_CONFIG_HOME/toolgate/keys.json, 0600 in a 0700 folder, and the other cap commands find it", async () => {
    const made = await cli("cap", "keygen");
    const file = join(config, "toolgate", "keys.json");
    expect(made).toEqual({
      code: 0,
      out: `wrote kid k1 to ${file} (kids: k1; cap issue signs with the last one)\n`,
      err: "",
    });
    expect([mode(join(config, "toolgate")), mode(file)]).toEqual(["700", "600"]);
    const issued = await cli("cap", "issue", "--rights", "read", "--objects", "path:/ws", "--ttl", "1h");
    expect(issued.code).toBe(0);
    expect((await cli("cap", "inspect", issued.out.trim())).out).toMatch(/^status: valid\n/);
    expect((await cli("cap", "keygen", "--json")).out).toBe(
      JSON.stringify({ file, kid: "k2", kids: ["k1", "k2"] }, null, 2) + "\n",
    );
  });

  it("warns when --out is inside the current folder, which may be a workspace, and names the default instead", async () => {
    const ws = tempDir("ws");
    const r = await runCli(["cap", "keygen", "--out", "keys.json"], {
      cwd: ws,
      env: { ...process.env, XDG_CONFIG_HOME: config },
    });
    expect(r.code).toBe(0);
    expect(r.stderr).toBe(
      `toolgate: warning: ${ws}/keys.json is inside the current folder ${ws}: if toolgate serves this folder as a workspace, the agent can read the key and mint any capability, and toolgate serve refuses a key file inside its workspace. Keep keys outside it: toolgate cap keygen without --out writes ${config}/toolgate/keys.json\n`,
    );
    expect(mode(join(ws, "keys.json"))).toBe("600");
  });

  it("rotating a 0644 key file leaves it 0600; a link at --out is refused, its target untouched", async () => {
    const dir = tempDir("keys");
    const file = join(dir, "keys.json");
    expect((await cli("cap", "keygen", "--out", file)).code).toBe(0);
    chmodSync(file, 0o644);
    expect((await cli("cap", "keygen", "--out", file)).code).toBe(0);
    expect([mode(file), Object.keys(JSON.parse(readFileSync(file, "utf8")))]).toEqual(["600", ["k1", "k2"]]);
    writeFileSync(join(dir, "target"), "not a key file\n");
    symlinkSync(join(dir, "target"), join(dir, "link.json"));
    expect(await cli("cap", "keygen", "--out", join(dir, "link.json"))).toEqual({
      code: 2,
      out: "",
      err: `toolgate: ${dir}/link.json is a symbolic link; name the key file itself with --out\n`,
    });
    expect(readFileSync(join(dir, "target"), "utf8")).toBe("not a key file\n");
  });
});

describe("toolgate serve --keys", () => {
  it("refuses a key file inside the workspace before serving anything: exit 2, where it is, why, where to move it", async () => {
    const ws = tempDir("ws");
    const keys = join(ws, "keys.json");
    expect((await cli("cap", "keygen", "--out", keys)).code).toBe(0);
    const r = await runCli(["serve", "--workspace", ws, "--keys", keys], {
      cwd: ws,
      env: { ...process.env, XDG_CONFIG_HOME: config },
    });
    expect([r.code, r.stdout]).toEqual([2, ""]);
    expect(r.stderr).toBe(
      `toolgate: the capability key file ${keys} is inside the workspace ${ws}: anything the agent runs there can read it (e.g. bash_execute "base64 keys.json") and mint any capability. Move it outside the workspace, e.g. mkdir -p -m 700 ${config}/toolgate && mv ${keys} ${config}/toolgate/keys.json, and pass --keys with the new path (or set TOOLGATE_KEYS); toolgate cap keygen without --out writes there [key_file_in_workspace]\n`,
    );
    expect(existsSync(join(ws, ".toolgate"))).toBe(false);
  });
});
