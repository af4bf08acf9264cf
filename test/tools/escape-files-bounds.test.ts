/**
 * The escape suite, file tools and bounded work: FIFOs, sockets and devices are refused without
 * being opened (a FIFO's open blocks a libuv thread until a writer comes; four of them stall every
 * file tool), file_edit is bounded in size, and its near-match search in size and work, giving the
 * event loop back while it runs.
 */
import { spawnSync } from "node:child_process";
import { constants, openSync, closeSync, readFileSync } from "node:fs";
import net from "node:net";
import { afterAll, describe, expect, it } from "vitest";
import { createCodingCatalog } from "../../src/tools/catalog.js";
import { editFile } from "../../src/tools/edit.js";
import { FUZZY_MAX_WORK, NEAR_MATCH_MAX_CHARS, nearestMatch } from "../../src/tools/nearmatch.js";
import { viewPath } from "../../src/tools/view.js";
import { makeWorkspace, refusalText } from "./fixtures.js";

const s = makeWorkspace("bounds");
const fifos: string[] = [];
afterAll(() => {
  // Were a FIFO's open blocked in a libuv thread (the failure this file tests for), a writer
  // releases it, so the worker can exit.
  for (const f of fifos) {
    try {
      closeSync(openSync(f, constants.O_WRONLY | constants.O_NONBLOCK));
    } catch {
      // ENXIO: nobody is waiting to read it, as it should be.
    }
  }
  s.cleanup();
});
const refusal = (p: Promise<unknown>) => refusalText(p, s);

function mkfifo(name: string): string {
  const p = `${s.root}/${name}`;
  expect(spawnSync("mkfifo", [p]).status).toBe(0);
  fifos.push(p);
  return p;
}

describe("non-regular files", () => {
  it("file_view refuses a FIFO that no one writes without blocking: five at once, then a regular file still reads", async () => {
    const pipes = [1, 2, 3, 4, 5].map((i) => mkfifo(`pipe${i}`));
    const results = await Promise.all(pipes.map((p) => refusal(viewPath(s.ws, { path: p, offset: 1, limit: 10 }))));
    expect(results[0]).toMatchInlineSnapshot(
      `"not_a_file: path <tmp>/ws/pipe1 is a FIFO (named pipe), not a regular file or directory; file_view reads text files and does not open pipes, sockets or devices"`,
    );
    expect(new Set(results.map((r) => r.split(" is ")[1]))).toEqual(
      new Set([
        "a FIFO (named pipe), not a regular file or directory; file_view reads text files and does not open pipes, sockets or devices",
      ]),
    );
    const file = s.write("after.txt", "still served\n");
    expect((await viewPath(s.ws, { path: file, offset: 1, limit: 1 })).output).toMatchObject({
      content: "1\tstill served",
    });
  });

  it("file_edit and its probe refuse a FIFO without blocking", async () => {
    const p = mkfifo("edit-pipe");
    expect(await refusal(editFile(s.ws, { path: p, old_str: "a", new_str: "b" }))).toMatchInlineSnapshot(
      `"not_a_file: path <tmp>/ws/edit-pipe is a FIFO (named pipe), not a regular file; file_edit edits text files"`,
    );
  });

  it("file_view refuses a socket and a device, naming what it is", async () => {
    const sock = `${s.root}/tool.sock`;
    const server = net.createServer().listen(sock);
    await new Promise((r) => server.once("listening", r));
    try {
      expect(await refusal(viewPath(s.ws, { path: sock, offset: 1, limit: 1 }))).toContain(
        "is a socket, not a regular file or directory",
      );
    } finally {
      server.close();
    }
    // A character device like /dev/zero, made in the workspace (root may; an unprivileged run skips this part).
    if (process.getuid?.() === 0 && spawnSync("mknod", [`${s.root}/zero`, "c", "1", "5"]).status === 0) {
      expect(await refusal(viewPath(s.ws, { path: `${s.root}/zero`, offset: 1, limit: 1 }))).toContain(
        "is a character device, not a regular file or directory",
      );
    }
  });
});

describe("file_edit size bound", () => {
  it("a file over limits.edit.file_bytes is refused by name, size and bound, and left unchanged", async () => {
    const p = s.write("big.txt", "x".repeat(2000) + "\n");
    const tools = createCodingCatalog({ workspace: s.root, limits: { edit: { file_bytes: 1000 } } });
    const edit = tools.find((t) => t.name === "file_edit")!;
    const ctx = {
      signal: new AbortController().signal,
      trajectory_id: "t",
      turn: 0,
      call_id: "c",
      now: Date.now,
      budget_tokens: 10_000,
    };
    expect(
      await refusal(Promise.resolve(edit.handler({ path: p, old_str: "xx", new_str: "y", allow_multiple: true }, ctx))),
    ).toMatchInlineSnapshot(
      `"too_large: <tmp>/ws/big.txt is 2001 bytes, more than file_edit rewrites (1000); change it with bash_execute (e.g. sed -i), or ask the operator to raise limits.edit.file_bytes"`,
    );
    expect(readFileSync(p, "utf8")).toBe("x".repeat(2000) + "\n");
  });
});

describe("near-match bounds", () => {
  it("a file larger than the near-match search reads: the refusal says none was searched for, and why", async () => {
    const body = "const a = 1;\n".repeat(Math.ceil((NEAR_MATCH_MAX_CHARS + 10) / 13));
    const p = s.write("huge.js", body);
    expect(await refusal(editFile(s.ws, { path: p, old_str: "const b = 2;", new_str: "x" }))).toMatchInlineSnapshot(
      `"no_match: old_str matches 0 blocks in <tmp>/ws/huge.js; the file is unchanged. No near-match is named: the file is 1048593 characters, more than the near-match search reads (1048576). Find the exact text with grep_search or file_view and copy it, including indentation."`,
    );
  });

  it("a similarity search that would take more than its work bound is skipped, and the refusal says so", async () => {
    const lines =
      Array.from({ length: 19_000 }, (_, i) => `    const value${i} = compute(${i}) + other;`).join("\n") + "\n";
    const needle = Array.from({ length: 30 }, (_, i) => `    let thing${i} = compute(${i}) - another;`).join("\n");
    const near = await nearestMatch(lines, needle);
    expect(near).toEqual({
      skipped: expect.stringMatching(
        new RegExp(
          `^no similar block was searched for: comparing old_str's 30 lines with the file's 19000 would take \\d+ steps, more than the similarity search makes \\(${FUZZY_MAX_WORK}\\)$`,
        ),
      ),
    });
  });

  it("gives the event loop back while it searches: other work runs before it answers", async () => {
    const lines =
      Array.from({ length: 8000 }, (_, i) => `    const value${i} = compute(${i}) + other;`).join("\n") + "\n";
    // A ticker that runs once per turn of the event loop while the search is under way.
    let ticks = 0;
    let searching = true;
    const tick = () => {
      ticks++;
      if (searching) setImmediate(tick);
    };
    setImmediate(tick);
    const near = await nearestMatch(
      lines,
      "    const valueX = compute(1234) + other;\n    const valueY = compute(1235) + other;",
    );
    searching = false;
    expect(near).toMatchObject({ differs: "content" });
    // The passes over 8,000 lines are several slices of work: the loop turned between them.
    expect(ticks).toBeGreaterThan(2);
  });
});

describe("large files, scanned a slice at a time (test/tools/scan.test.ts shows the scans yield)", () => {
  it("file_view of a window near the end of a 1.5-million-line file is exact", async () => {
    const p = s.write("long.txt", Array.from({ length: 1_500_000 }, (_, i) => `line ${i + 1}`).join("\n") + "\n");
    const result = await viewPath(s.ws, { path: p, offset: 1_499_999, limit: 5 });
    expect(result.output).toMatchObject({
      total_lines: 1_500_000,
      first_line: 1_499_999,
      content: "1499999\tline 1499999\n1500000\tline 1500000",
    });
  });

  it("file_edit of a long repetitive file: no match, named; two million replacements, all made", async () => {
    const p = s.write("rep.txt", "a".repeat(12 * 1024 * 1024) + "\n");
    expect(await refusal(editFile(s.ws, { path: p, old_str: "a".repeat(50_000) + "b", new_str: "x" }))).toContain(
      "no_match: old_str matches 0 blocks",
    );
    const many = s.write("many.txt", "x\n".repeat(2_000_000));
    const r = await editFile(s.ws, { path: many, old_str: "x\n", new_str: "y\n", allow_multiple: true });
    expect(r.output).toMatchObject({
      replacements: 2_000_000,
      changed_lines: { start: 1, end: 2_000_000 },
      total_lines: 2_000_000,
    });
    expect(readFileSync(many, "utf8")).toBe("y\n".repeat(2_000_000));
  });
});
