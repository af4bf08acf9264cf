/** state/location.ts: the per-user default folders, keyed by the workspace's real path. */
import { mkdirSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { defaultKeyFile, defaultStateDir, workspaceKey } from "../../src/state/location.js";
import { tempDir } from "./support.js";

describe("defaultStateDir", () => {
  it("is $XDG_STATE_HOME/toolgate/<name>-<hash>, the same folder for every spelling of the workspace", () => {
    const root = tempDir("loc");
    mkdirSync(join(root, "project"));
    symlinkSync(join(root, "project"), join(root, "alias"));
    const env = { XDG_STATE_HOME: "/srv/state", HOME: "/home/u" };
    const dir = defaultStateDir(join(root, "project"), env);
    expect(dir).toMatch(/^\/srv\/state\/toolgate\/project-[0-9a-f]{16}$/);
    expect(defaultStateDir(join(root, "alias"), env)).toBe(dir);
    expect(defaultStateDir(join(root, "project", "..", "project"), env)).toBe(dir);
    expect(defaultStateDir(join(root, "other"), env)).not.toBe(dir);
  });

  it("falls back to ~/.local/state, ignoring a relative XDG_STATE_HOME as the XDG specification says", () => {
    expect(defaultStateDir("/srv/ws", { HOME: "/home/u" })).toMatch(
      /^\/home\/u\/\.local\/state\/toolgate\/ws-[0-9a-f]{16}$/,
    );
    expect(defaultStateDir("/srv/ws", { HOME: "/home/u", XDG_STATE_HOME: "rel/state" })).toMatch(
      /^\/home\/u\/\.local\/state\/toolgate\//,
    );
  });

  it("names the workspace with file-name-safe characters only, and the root by its hash alone", () => {
    expect(workspaceKey("/srv/my project\u001b[2J")).toMatch(/^my_project__2J-[0-9a-f]{16}$/);
    expect(workspaceKey("/srv/.hidden")).toMatch(/^hidden-[0-9a-f]{16}$/);
    expect(workspaceKey("/")).toMatch(/^[0-9a-f]{16}$/);
  });

  it("without HOME uses the account's home; a relative HOME is not one", () => {
    // This process's account has a home in the user database (root: /root).
    expect(defaultStateDir("/srv/ws", {})).toMatch(/\/\.local\/state\/toolgate\/ws-/);
    expect(defaultStateDir("/srv/ws", { HOME: "relative" }).startsWith("/")).toBe(true);
  });
});

describe("defaultKeyFile", () => {
  it("is $XDG_CONFIG_HOME/toolgate/keys.json, else ~/.config/toolgate/keys.json", () => {
    expect(defaultKeyFile({ XDG_CONFIG_HOME: "/etc/xdg-user", HOME: "/home/u" })).toBe(
      "/etc/xdg-user/toolgate/keys.json",
    );
    expect(defaultKeyFile({ HOME: "/home/u" })).toBe("/home/u/.config/toolgate/keys.json");
  });
});
