/**
 * toolgate run by an ordinary user (a child under setpriv as uid/gid 65534; these tests need
 * root to switch to it). `toolgate proxy` started from `/`, as an MCP client may start it, keeps
 * its state in that user's state folder, not in the working directory (which the user cannot
 * write), and without a usable home folder the start fails with the fix. An in-workspace state
 * folder belongs to that user like everything the agent writes, so only the sandbox hides it.
 */
import { spawn } from "node:child_process";
import { chownSync, statSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { binaryAvailable } from "../support/require.js";
import { CLI, listTree, runCli, tempDir } from "./support.js";

const asRoot = process.getuid?.() === 0;
const upstream = join(import.meta.dirname, "..", "mcp", "fixtures", "paging-server.mjs");
const setpriv = (uid: number) => ["setpriv", `--reuid=${uid}`, `--regid=${uid}`, "--clear-groups"];

describe.runIf(asRoot && binaryAvailable("setpriv", ["--version"]))(
  "toolgate proxy from / as an unprivileged user",
  { timeout: 120_000 },
  () => {
    it("serves, with its SQLite store and audit trail in the user's state folder (0600 files, 0700 folders, theirs)", async () => {
      const home = tempDir("nobody-home");
      chownSync(home, 65534, 65534);
      const [command, ...args] = [...setpriv(65534), ...CLI, "proxy", "--", process.execPath, upstream];
      const transport = new StdioClientTransport({
        command: command!,
        args,
        cwd: "/",
        env: { PATH: process.env.PATH!, HOME: home },
        stderr: "pipe",
      });
      let stderr = "";
      transport.stderr?.on("data", (d: Buffer) => (stderr += d));
      const client = new Client({ name: "proxy-from-root", version: "1.0.0" });
      try {
        await client.connect(transport);
        const { tools } = await client.listTools();
        expect(tools.map((t) => t.name)).toContain("echo_0");
        const echoed = await client.callTool({ name: "echo_0", arguments: { text: "hello" } });
        expect(echoed.isError, stderr).toBeUndefined();
      } finally {
        await client.close();
      }
      const files = listTree(join(home, ".local", "state", "toolgate"));
      const db = files.find((f) => f.endsWith("/state.db"));
      const audit = files.find((f) => f.endsWith("/audit.jsonl"));
      expect([db, audit], `${stderr}\n${files.join("\n")}`).toEqual([
        expect.stringMatching(/^[0-9a-f]{16}\/state\.db$/),
        expect.stringMatching(/^[0-9a-f]{16}\/audit\.jsonl$/),
      ]);
      const stat = (rel: string) => statSync(join(home, ".local", "state", "toolgate", rel));
      const folder = db!.split("/")[0]!;
      expect([stat(folder), stat(db!), stat(audit!)].map((s) => [s.uid, (s.mode & 0o777).toString(8)])).toEqual([
        [65534, "700"],
        [65534, "600"],
        [65534, "600"],
      ]);
    });

    it("without HOME, where the account's home (/nonexistent) cannot be created: exit 2, naming the folder and the fix", async () => {
      const r = await runCli(["proxy", "--", process.execPath, upstream], {
        cwd: "/",
        env: { PATH: process.env.PATH! },
        prefix: setpriv(65534),
      });
      expect(r.code).toBe(2);
      expect(r.stderr).toMatch(
        /^toolgate: cannot create the state folder \/nonexistent\/\.local\/state\/toolgate\/[0-9a-f]{16}: permission denied; choose a folder you can create \(--state-dir DIR\), or set XDG_STATE_HOME \(or HOME\) to a folder you own \[state_dir_unusable\]\n$/,
      );
    });

    it("for a uid with no account and no HOME: exit 2, saying there is no home folder and what to set", async () => {
      const r = await runCli(["proxy", "--", process.execPath, upstream], {
        cwd: "/",
        env: { PATH: process.env.PATH! },
        prefix: setpriv(54321),
      });
      expect([r.code, r.stderr]).toEqual([
        2,
        "toolgate: toolgate keeps its state and keys under your home folder, and there is none: HOME is unset and the user database gives no absolute home for uid 54321; set XDG_STATE_HOME (or HOME) to an absolute folder you own, or name the place explicitly (--state-dir DIR, --store URL, --audit FILE, --keys FILE) [state_dir_unusable]\n",
      ]);
    });
  },
);

describe.runIf(asRoot && binaryAvailable("setpriv", ["--version"]) && binaryAvailable("bwrap"))(
  "--state-dir .toolgate as an unprivileged user",
  { timeout: 120_000 },
  () => {
    it("the folder (theirs, like everything the agent writes) is hidden from the first bash_execute by the sandbox alone", async () => {
      const home = tempDir("nobody-home");
      const ws = tempDir("nobody-ws");
      chownSync(home, 65534, 65534);
      chownSync(ws, 65534, 65534);
      const fixture = join(import.meta.dirname, "fixtures", "first-call.ts");
      const command =
        "id -u; ls -A .toolgate | wc -l; cat .toolgate/.toolgate-dir 2>&1; rm -rf .toolgate 2>&1 | head -1; ls -A .toolgate | wc -l";
      const r = await new Promise<{ code: number | null; out: string; err: string }>((done) => {
        const child = spawn(
          "setpriv",
          [
            ...setpriv(65534).slice(1),
            process.execPath,
            "--import",
            import.meta.resolve("tsx"),
            fixture,
            ws,
            ".toolgate",
            command,
          ],
          { cwd: "/", env: { PATH: process.env.PATH!, HOME: home } },
        );
        let out = "";
        let err = "";
        child.stdout.on("data", (d: Buffer) => (out += d));
        child.stderr.on("data", (d: Buffer) => (err += d));
        child.on("close", (code) => done({ code, out, err }));
      });
      expect(r.code, r.err).toBe(0);
      const lines = r.out.split("\n");
      expect([lines[0], lines[1]]).toEqual(["65534", "0"]);
      expect(r.out).toContain("No such file or directory");
      expect(listTree(join(ws, ".toolgate"))).toEqual([".toolgate-dir", "audit.jsonl", "state.db"]);
      expect(statSync(join(ws, ".toolgate")).uid).toBe(65534);
    });
  },
);
