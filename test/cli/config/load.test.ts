import { readdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { loadServersConfig, parseServersConfig } from "../../../src/cli/config/load.js";
import { ConfigError } from "../../../src/cli/config/problems.js";
import { matchesPattern } from "../../../src/mcp/proxy/aggregate-catalog.js";

const fixtures = join(dirname(fileURLToPath(import.meta.url)), "fixtures");
const env = { TG_TEST_ROOT: "/srv/data", TG_TEST_TOKEN: "s3cret" };

function problemsOf(file: string) {
  try {
    loadServersConfig(join(fixtures, "bad", file), { env });
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return (err as ConfigError).problems;
  }
  throw new Error(`${file} was accepted`);
}

describe("an mcpServers file as the clients write it", () => {
  it("reads Claude Desktop's format: stdio and HTTP entries, variables expanded, the toolgate blocks", () => {
    const config = loadServersConfig(join(fixtures, "claude-desktop.json"), { env });
    expect(config.separator).toBe("__");
    expect(config.disabled).toEqual(["old"]);
    expect(config.servers.map((s) => s.name)).toEqual(["filesystem", "memory", "remote"]);
    const [fs, memory, remote] = config.servers;
    expect(fs!.transport).toEqual({
      kind: "stdio",
      command: "npx",
      args: ["-y", "@modelcontextprotocol/server-filesystem", "/srv/data"],
      env: {},
    });
    expect(fs!.namespace).toBe("fs");
    expect(fs!.exclude).toEqual(["move_file", "write_*"]);
    expect(fs!.effect).toBe("read");
    expect(memory!.namespace).toBe("memory");
    expect(memory!.transport).toMatchObject({ env: { MEMORY_FILE_PATH: "/srv/data/memory.jsonl" } });
    expect(memory!.include).toEqual(["read_graph", "search_nodes", "create_entities"]);
    expect(memory!.tools.create_entities).toEqual({ effect: "write", rate_limit: { calls: 10, window_ms: 60000 } });
    expect(memory!.concurrency).toBe(4);
    expect(remote!.transport).toEqual({
      kind: "http",
      url: "http://127.0.0.1:3001/mcp",
      headers: { Authorization: "Bearer s3cret" },
    });
    expect(remote!.rate_limits.server).toEqual({ calls: 100, window_ms: 1000 });
    expect(remote!.budget_tokens).toBe(4000);
  });

  it("reads VS Code's servers list with comments, trailing commas and a separator of its own", () => {
    const config = loadServersConfig(join(fixtures, "vscode.jsonc"), { env });
    expect(config.separator).toBe(".");
    expect(config.servers[0]).toMatchObject({ name: "everything", transport: { kind: "stdio", command: "npx" } });
  });

  it("a default after :- stands in for a variable that is not set", () => {
    const config = parseServersConfig('{"mcpServers": {"m": {"command": "${TG_BIN:-npx}"}}}', "x.json", { env: {} });
    expect(config.servers[0]!.transport).toMatchObject({ command: "npx" });
  });

  it("matches include and exclude patterns with * only, every other character literal", () => {
    expect(matchesPattern("write_file", "write_*")).toBe(true);
    expect(matchesPattern("rewrite_file", "write_*")).toBe(false);
    expect(matchesPattern("a.b", "a.b")).toBe(true);
    expect(matchesPattern("axb", "a.*")).toBe(false);
    expect(matchesPattern("file:///docs/a/b.md", "file:///*/*.md")).toBe(true);
    expect(matchesPattern("file:///docs/a/b.mdx", "file:///*/*.md")).toBe(false);
    expect(matchesPattern("aXbXc", "a*b*c")).toBe(true);
    expect(matchesPattern("abc", "abc*abc")).toBe(false);
    expect(matchesPattern("demo://t/{id}", "demo://t/{id}")).toBe(true);
  });

  it("matches a pattern of many stars against a long URI a client chose without backtracking", () => {
    // A regular expression of this pattern took minutes on this URI; the piece-by-piece match is linear.
    expect(matchesPattern("a".repeat(2048), "*a*a*a*a*a*a*a*a*b")).toBe(false);
  });

  it("reads a server's include_/exclude_ lists for prompts and resources", () => {
    const config = parseServersConfig(
      JSON.stringify({
        mcpServers: {
          m: {
            command: "npx",
            toolgate: { include_prompts: ["review_*"], exclude_resources: ["file:///secret/*", "demo://t/{id}"] },
          },
          n: { command: "npx" },
        },
      }),
      "lists.json",
      { env: {} },
    );
    expect(config.servers[0]!.prompts).toEqual({ include: ["review_*"], exclude: [] });
    expect(config.servers[0]!.resources).toEqual({ exclude: ["file:///secret/*", "demo://t/{id}"] });
    expect(config.servers[1]!.prompts).toBeUndefined();
    expect(config.servers[1]!.resources).toBeUndefined();
  });
});

/** Each bad file holds one mistake; the first problem names where it is and how to fix it. */
const BAD: Record<string, { pointer: string; message: RegExp; fix: RegExp }> = {
  "unknown-key.json": {
    pointer: "/mcpServers/memory/comand",
    message: /unknown key "comand"/,
    fix: /did you mean "command"/,
  },
  "missing-command.json": {
    pointer: "/mcpServers/memory/command",
    message: /needs command .* or url/,
    fix: /"command": "npx"/,
  },
  "duplicate-name.json": { pointer: "/mcpServers/memory", message: /written twice/, fix: /remove or rename/ },
  "duplicate-namespace.json": {
    pointer: "/mcpServers/b/toolgate/namespace",
    message: /"a" and "b" both publish/,
    fix: /its own/,
  },
  "unset-variable.json": {
    pointer: "/mcpServers/gh/headers/Authorization",
    message: /TG_TEST_UNSET_TOKEN, which is not set/,
    fix: /:-VALUE/,
  },
  "relative-url.json": {
    pointer: "/mcpServers/gh/url",
    message: /absolute http or https URL/,
    fix: /https:\/\/HOST\/mcp/,
  },
  "sse-type.json": { pointer: "/mcpServers/gh/type", message: /SSE transport is not supported/, fix: /"type": "http"/ },
  "unknown-toolgate-key.json": {
    pointer: "/mcpServers/m/toolgate/efect",
    message: /unknown key "efect"/,
    fix: /did you mean "effect"/,
  },
  "bad-effect.json": {
    pointer: "/mcpServers/m/toolgate/effect",
    message: /received string "readonly"/,
    fix: /"read" \(A0\)/,
  },
  "rate-limit-without-window.json": {
    pointer: "/mcpServers/m/toolgate/rate_limit/window_ms",
    message: /needs window_ms/,
    fix: /"window_ms": 60000/,
  },
  "args-not-array.json": { pointer: "/mcpServers/m/args", message: /array of strings, received string/, fix: /\["-y"/ },
  "env-not-string.json": {
    pointer: "/mcpServers/m/env/N",
    message: /expected a string, received number 3/,
    fix: /\$\{env:API_KEY\}/,
  },
  "misspelt-list.json": { pointer: "/mcpServer", message: /unknown key "mcpServer"/, fix: /did you mean "mcpServers"/ },
  "bad-server-name.json": { pointer: "/mcpServers/my server", message: /received "my server"/, fix: /"my_server"/ },
  "unknown-tool-override-key.json": {
    pointer: "/mcpServers/m/toolgate/tools/t/timeout",
    message: /unknown key "timeout"/,
    fix: /did you mean "timeout_ms"/,
  },
  "bad-include-pattern.json": {
    pointer: "/mcpServers/m/toolgate/include/0",
    message: /received "read file"/,
    fix: /read_\*/,
  },
  "bad-resource-pattern.json": {
    pointer: "/mcpServers/m/toolgate/exclude_resources/0",
    message:
      /expected a resource URI or \* pattern, received string "file:\/\/\/my docs\/\*": white space, which no URI holds/,
    fix: /file:\/\/\/docs\/\* for every URI starting so/,
  },
  "empty-prompt-pattern.json": {
    pointer: "/mcpServers/m/toolgate/include_prompts/1",
    message: /expected a prompt name or \* pattern, received string "": empty/,
    fix: /review_\* for every prompt starting so/,
  },
  "prompts-not-array.json": {
    pointer: "/mcpServers/m/toolgate/exclude_prompts",
    message: /expected an array of strings, received string "summarise"/,
    fix: /\["review_\*", "summarise"\]/,
  },
  "invisible-resource-pattern.json": {
    pointer: "/mcpServers/m/toolgate/include_resources/0",
    message: /: control or invisible characters$/,
    fix: /file:\/\/\/docs\/readme.md/,
  },
  "starts-itself.json": { pointer: "/mcpServers/toolgate", message: /start itself/, fix: /"disabled": true/ },
  "syntax-error.json": {
    pointer: "",
    message: /not JSON: line 2, column 1: the file ends before an object is closed/,
    fix: /fix the JSON/,
  },
  "zero-concurrency.json": {
    pointer: "/mcpServers/m/toolgate/concurrency",
    message: /from 1 to 10000, received number 0/,
    fix: /such as/,
  },
  "windsurf-server-url.json": {
    pointer: "/mcpServers/m/serverUrl",
    message: /unknown key "serverUrl"/,
    fix: /keys a stdio server entry takes/,
  },
};

describe("a bad config file is refused whole, each mistake named by its place with a fix", () => {
  it("every bad fixture has its expectation", () => {
    expect(readdirSync(join(fixtures, "bad")).sort()).toEqual(Object.keys(BAD).sort());
  });

  for (const [file, want] of Object.entries(BAD)) {
    it(file, () => {
      const [first] = problemsOf(file);
      expect(first!.pointer).toBe(want.pointer);
      expect(first!.message).toMatch(want.message);
      expect(first!.fix).toMatch(want.fix);
    });
  }

  it("reports every mistake of a file at once, in the error's message too", () => {
    const text = '{"mcpServers": {"a": {"comand": "x"}, "b": {"command": "y", "toolgate": {"effect": 1}}}}';
    let error: ConfigError | undefined;
    try {
      parseServersConfig(text, "two.json", { env: {} });
    } catch (err) {
      error = err as ConfigError;
    }
    expect(error?.problems.map((p) => p.pointer)).toEqual([
      "/mcpServers/a/comand",
      "/mcpServers/a/command",
      "/mcpServers/b/toolgate/effect",
    ]);
    expect(error?.message).toMatch(/^two\.json: 3 mistakes, nothing started:/);
  });

  it("a missing file is named with where client configs usually are", () => {
    expect(() => loadServersConfig(join(fixtures, "no-such.json"))).toThrow(
      /no such file; name the file your MCP client reads/,
    );
  });

  it("a hostile file nested past the bound is refused as a syntax error, not a stack overflow", () => {
    const deep = `{"mcpServers": ${"[".repeat(100_000)}`;
    expect(() => parseServersConfig(deep, "deep.json")).toThrow(/nested deeper than 64 levels/);
  });

  it("a __proto__ key is a server name like any other, never the prototype", () => {
    const config = (() => {
      try {
        return parseServersConfig('{"mcpServers": {"__proto__": {"command": "x"}}}', "p.json", { env: {} });
      } catch (err) {
        return err as ConfigError;
      }
    })();
    expect(config).not.toBeInstanceOf(ConfigError);
    expect((config as { servers: { name: string }[] }).servers.map((s) => s.name)).toEqual(["__proto__"]);
    expect(({} as Record<string, unknown>).command).toBeUndefined();
  });
});

describe("a server's task_timeout_ms (the bound of a call it runs as a task)", () => {
  const parse = (toolgate: unknown) =>
    parseServersConfig(JSON.stringify({ mcpServers: { m: { command: "x", toolgate } } }), "t.json", { env: {} });
  const problems = (toolgate: unknown) => {
    try {
      parse(toolgate);
    } catch (err) {
      expect(err).toBeInstanceOf(ConfigError);
      return (err as ConfigError).problems;
    }
    throw new Error("accepted");
  };

  it("is read for the server and for each tool", () => {
    const [m] = parse({ task_timeout_ms: 7_200_000, tools: { t: { task_timeout_ms: 100 } } }).servers;
    expect(m!.task_timeout_ms).toBe(7_200_000);
    expect(m!.tools.t).toEqual({ task_timeout_ms: 100 });
    expect(parse({ task_timeout_ms: 2 ** 31 - 1 }).servers[0]!.task_timeout_ms).toBe(2 ** 31 - 1);
    expect(parse({}).servers[0]!.task_timeout_ms).toBeUndefined();
  });

  it.each([
    ["99", 99, "number 99"],
    ["2 ** 31", 2 ** 31, "number 2147483648"],
    ["1.5", 1.5, "number 1.5"],
    ["a string", "3600000", 'string "3600000"'],
  ])("refuses %s, naming the field, the range, what arrived and an example", (_label, value, shown) => {
    // The tools block is read first.
    expect(problems({ task_timeout_ms: value, tools: { t: { task_timeout_ms: value } } })).toEqual([
      {
        pointer: "/mcpServers/m/toolgate/tools/t/task_timeout_ms",
        message: `expected a whole number from 100 to 2147483647, received ${shown}`,
        fix: "write a number such as 7200000",
      },
      {
        pointer: "/mcpServers/m/toolgate/task_timeout_ms",
        message: `expected a whole number from 100 to 2147483647, received ${shown}`,
        fix: "write a number such as 7200000",
      },
    ]);
  });

  it("a misspelt key is named with the right one", () => {
    expect(problems({ task_timeout: 5000 })).toEqual([
      expect.objectContaining({
        pointer: "/mcpServers/m/toolgate/task_timeout",
        fix: expect.stringMatching(/did you mean "task_timeout_ms"/),
      }),
    ]);
  });
});
