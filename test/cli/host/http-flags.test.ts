/** The HTTP and approval flags of serve and proxy: refused with one clear line before anything starts. */
import { describe, expect, it } from "vitest";
import { parseHttpFlags } from "../../../src/cli/host/http-flags.js";
import { cli } from "../../support/cli.js";

describe("serve/proxy HTTP and approval flags", () => {
  it("a non-loopback --http without keys is refused before any state is opened, unless --no-auth", async () => {
    const runs = [
      await cli("serve", "--http", "0.0.0.0:0"),
      await cli("proxy", "--http", "192.0.2.7:0", "--", "node", "-e", "0"),
    ];
    expect(runs.map((r) => [r.code, r.out, r.err])).toEqual([
      [
        2,
        "",
        "toolgate: --http 0.0.0.0 is not a loopback address and no capability keys are configured, so anyone who can reach it could run every tool; pass --keys FILE, bind 127.0.0.1, or pass --no-auth to serve it unauthenticated on purpose [auth_required]\n",
      ],
      [
        2,
        "",
        "toolgate: --http 192.0.2.7 is not a loopback address and no capability keys are configured, so anyone who can reach it could run every tool; pass --keys FILE, bind 127.0.0.1, or pass --no-auth to serve it unauthenticated on purpose [auth_required]\n",
      ],
    ]);
    expect(parseHttpFlags({ auth: false }, { host: "0.0.0.0" }, false).http).toEqual({ noAuth: true });
    expect(parseHttpFlags({}, { host: "0.0.0.0" }, true).http).toEqual({});
    expect(parseHttpFlags({}, { host: "127.0.0.5" }, false).http).toEqual({});
  });

  it("over HTTP without keys, A3 approvals default to the CLI; otherwise both; --approve-via chooses", () => {
    expect(parseHttpFlags({}, { host: "127.0.0.1" }, false).approveVia).toBe("cli");
    expect(parseHttpFlags({}, { host: "127.0.0.1" }, true).approveVia).toBe("both");
    expect(parseHttpFlags({}, undefined, false).approveVia).toBe("both");
    expect(parseHttpFlags({ approveVia: "elicitation" }, { host: "127.0.0.1" }, false).approveVia).toBe("elicitation");
  });

  it("names a bad value or an HTTP flag without --http", async () => {
    const runs = [
      await cli("serve", "--approve-via", "anyone"),
      await cli("serve", "--allow-origin", "http://localhost:6274"),
      await cli("serve", "--http", "127.0.0.1:0", "--allow-origin", "localhost:6274/app"),
      await cli("serve", "--http", "127.0.0.1:0", "--max-sessions", "0"),
      await cli("serve", "--http", "127.0.0.1:0", "--max-connections-per-peer", "many"),
      await cli("serve", "--max-connections", "10"),
    ];
    expect(runs.map((r) => [r.code, r.out, r.err])).toEqual([
      [
        2,
        "",
        'toolgate: --approve-via must be one of cli, elicitation, both; received "anyone"; example --approve-via cli [bad_flag]\n',
      ],
      [2, "", "toolgate: --allow-origin applies to Streamable HTTP: add --http HOST:PORT, or drop it [bad_flag]\n"],
      [
        2,
        "",
        'toolgate: --allow-origin must be an http or https origin with no path, e.g. http://localhost:6274; received "localhost:6274/app" [bad_flag]\n',
      ],
      [
        2,
        "",
        'toolgate: --max-sessions must be a whole number of at least 1; received "0"; example --max-sessions 64 [bad_flag]\n',
      ],
      [
        2,
        "",
        'toolgate: --max-connections-per-peer must be a whole number of at least 1; received "many"; example --max-connections-per-peer 64 [bad_flag]\n',
      ],
      [2, "", "toolgate: --max-connections applies to Streamable HTTP: add --http HOST:PORT, or drop it [bad_flag]\n"],
    ]);
    expect(
      parseHttpFlags({ maxConnections: "200", maxConnectionsPerPeer: "8" }, { host: "127.0.0.1" }, false).http,
    ).toEqual({ maxConnections: 200, maxConnectionsPerPeer: 8 });
    expect(
      parseHttpFlags({ maxRequestsPerClient: "16", maxRequestBytes: "65536" }, { host: "127.0.0.1" }, false).http,
    ).toEqual({ maxRequestsPerClient: 16, maxRequestBytes: 65536 });
    expect(() => parseHttpFlags({ maxRequestsPerClient: "0" }, { host: "127.0.0.1" }, false)).toThrow(
      '--max-requests-per-client must be a whole number of at least 1; received "0"; example --max-requests-per-client 64',
    );
    expect(() => parseHttpFlags({ maxRequestsPerClient: "4" }, undefined, false)).toThrow(
      "--max-requests-per-client applies to Streamable HTTP: add --http HOST:PORT, or drop it",
    );
  });
});
