import { describe, expect, it } from "vitest";
import { sandboxDenials } from "../../../src/tools/sandbox/denial.js";
import { EMPTY_REPORT } from "../../../src/tools/sandbox/launcher.js";
import type { RunOutcome } from "../../../src/tools/sandbox/run.js";

const limits = {
  max_processes: 64,
  max_file_bytes: 1024,
  max_memory_bytes: 1 << 30,
  max_cpu_seconds: 10,
  max_write_bytes: 1 << 20,
  max_tmp_bytes: 1 << 20,
};
const outcome = (stderr: string, extra: Partial<RunOutcome> = {}): RunOutcome => ({
  exit_code: 1,
  signal: null,
  timed_out: false,
  aborted: false,
  ran: true,
  stopped: null,
  process_limit_hit: false,
  report: EMPTY_REPORT,
  duration_ms: 1,
  stdout: { text: "", omitted_bytes: 0, omitted_tokens: 0 },
  stderr: { text: stderr, omitted_bytes: 0, omitted_tokens: 0 },
  ...extra,
});
const codes = (o: RunOutcome) => sandboxDenials(o, "/ws", limits).map((d) => d.code);

describe("sandboxDenials", () => {
  it("recognises each envelope denial from the command's own messages", () => {
    expect(codes(outcome("touch: cannot touch '/usr/x': Read-only file system"))).toEqual(["read_only_filesystem"]);
    expect(codes(outcome("curl: (6) Could not resolve host: example.com"))).toEqual(["no_network"]);
    expect(codes(outcome("redis-cli: Connection refused"))).toEqual(["host_service_unreachable"]);
    expect(codes(outcome("bash: fork: retry: Resource temporarily unavailable"))).toEqual(["process_limit"]);
    expect(codes(outcome("", { signal: "SIGXFSZ" }))).toEqual(["file_size_limit"]);
  });

  it("uses the cgroup's own record of a refused fork", () => {
    expect(codes(outcome("", { process_limit_hit: true }))).toEqual(["process_limit"]);
  });

  it("a write refused in the repository's .git, where the run keeps it read-only as a whole, is told as such; elsewhere, or with only parts of .git protected, it is a read-only write", () => {
    const whole = ["/ws/.git"];
    const git = (stderr: string, readOnly: string[]) =>
      sandboxDenials(outcome(stderr), "/ws", limits, readOnly).map((d) => d.code);
    expect(git("fatal: Unable to create '/ws/.git/index.lock': Read-only file system", whole)).toEqual([
      "protected_path",
    ]);
    expect(git("error: could not lock config file .git/config: Read-only file system", whole)).toEqual([
      "protected_path",
    ]);
    expect(
      git(
        "mkdir: cannot create directory ‘.git/x’: Read-only file system\ntouch: cannot touch '/usr/x': Read-only file system",
        whole,
      ),
    ).toEqual(["protected_path", "read_only_filesystem"]);
    expect(git("fatal: Unable to create '/other/.git/index.lock': Read-only file system", whole)).toEqual([
      "read_only_filesystem",
    ]);
    expect(git("error: could not lock config file .git/config: Read-only file system", ["/ws/.git/config"])).toEqual([
      "read_only_filesystem",
    ]);
    expect(
      sandboxDenials(
        outcome("fatal: Unable to create '/ws/.git/index.lock': Read-only file system"),
        "/ws",
        limits,
        whole,
      )[0]!.message,
    ).toContain("toolgate serve --git-writable");
  });

  it("says nothing about an ordinary failure", () => {
    expect(codes(outcome("error TS2322: Type 'string' is not assignable to type 'number'."))).toEqual([]);
  });
});
