import { describe, expect, it } from "vitest";
import { targetFromArgv } from "../../../src/mcp/proxy/list-tools.js";

describe("lint --mcp targets", () => {
  it("takes one URL as an HTTP server and anything else as a command", () => {
    expect(targetFromArgv(["http://127.0.0.1:3001/mcp"])).toEqual({ url: "http://127.0.0.1:3001/mcp" });
    expect(targetFromArgv(["npx", "-y", "server"], { PATH: "/bin" })).toEqual({
      command: "npx",
      args: ["-y", "server"],
      env: { PATH: "/bin" },
    });
    expect(() => targetFromArgv([])).toThrow(/--mcp needs the server to lint/);
  });
});
