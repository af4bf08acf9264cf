/** `toolgate --help`: every command and subcommand description reads the same way (lower-case first word, no trailing
 * period). */
import type { Command } from "commander";
import { beforeAll, describe, expect, it } from "vitest";
import { buildProgram } from "../../src/cli/program.js";

function descriptions(cmd: Command, path: string): Array<[string, string]> {
  return cmd.commands.flatMap((c) => [
    [`${path} ${c.name()}`, c.description()] as [string, string],
    ...descriptions(c, `${path} ${c.name()}`),
  ]);
}

describe("toolgate --help", () => {
  let all: Array<[string, string]> = [];
  beforeAll(async () => {
    all = descriptions(await buildProgram(), "toolgate");
  });

  it("lists every command with a description", () => {
    expect(all.map(([name]) => name)).toEqual(
      expect.arrayContaining([
        "toolgate serve",
        "toolgate proxy",
        "toolgate lint",
        "toolgate records show",
        "toolgate cap issue",
      ]),
    );
    expect(all.filter(([, d]) => d.trim() === "")).toEqual([]);
  });

  it("every description starts with a lower-case word and has no trailing period", () => {
    expect(all.filter(([, d]) => !/^[a-z]/.test(d))).toEqual([]);
    expect(all.filter(([, d]) => d.endsWith("."))).toEqual([]);
  });
});
