import { spawnSync } from "node:child_process";
import { closeSync, constants, mkdtempSync, openSync, rmSync, writeSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Worker } from "node:worker_threads";
import { afterAll, describe, expect, it } from "vitest";
import { readAllSync } from "../../src/cli/io.js";

const dir = mkdtempSync(join(tmpdir(), "tg-read-stdin-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

// `curl … | toolgate lint -`: once anything touches process.stdin (the ESM facade of node:process
// does), Node makes a piped stdin non-blocking, and a read that finds the pipe empty — the writer
// has not sent everything yet — fails with EAGAIN. Here a FIFO opened non-blocking stands in for it.
describe("readAllSync on a non-blocking pipe", () => {
  it("waits for data that arrives later instead of failing with EAGAIN", async () => {
    const fifo = join(dir, "stdin");
    expect(spawnSync("mkfifo", [fifo]).status).toBe(0);
    const rfd = openSync(fifo, constants.O_RDONLY | constants.O_NONBLOCK);
    const wfd = openSync(fifo, constants.O_WRONLY);
    writeSync(wfd, '{"a":');
    // The rest comes from another thread while this one is reading; closing it is the EOF.
    const worker = new Worker(
      `const { workerData } = require("node:worker_threads"); const fs = require("node:fs");
       setTimeout(() => { fs.writeSync(workerData.wfd, "1}"); fs.closeSync(workerData.wfd); }, 100);`,
      { eval: true, workerData: { wfd } },
    );
    try {
      expect(readAllSync(rfd)).toBe('{"a":1}');
    } finally {
      closeSync(rfd);
      await worker.terminate();
    }
  });
});
