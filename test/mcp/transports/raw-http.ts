/**
 * Raw HTTP requests against a Streamable HTTP endpoint, with exactly the headers a test names
 * (Host and Origin included) and, when asked, from a chosen local address — for the tests that
 * try the endpoint as a hostile page or process would.
 */
import http from "node:http";
import { expect } from "vitest";

export interface Answer {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
}

export interface RawRequest {
  method?: string;
  headers?: Record<string, string>;
  body?: string;
  /** The local address to connect from, e.g. `127.0.0.2` (every 127.0.0.0/8 address is this machine's). */
  localAddress?: string;
}

/** One request on its own connection. */
export function request(url: URL, options: RawRequest = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      url,
      {
        method: options.method ?? "POST",
        agent: false,
        headers: options.headers ?? {},
        ...(options.localAddress ? { localAddress: options.localAddress } : {}),
      },
      (res) => {
        let body = "";
        res.setEncoding("utf8");
        res.on("data", (d: string) => (body += d));
        res.on("end", () => resolve({ status: res.statusCode!, headers: res.headers, body }));
      },
    );
    req.on("error", reject);
    req.end(options.body);
  });
}

export const INIT = JSON.stringify({
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "raw", version: "1" } },
});
export const JSON_HEADERS = { "content-type": "application/json", accept: "application/json, text/event-stream" };

/** The headers of a request in session `sid`, besides the caller's own. */
export const inSession = (sid: string, headers: Record<string, string> = {}) => ({
  ...JSON_HEADERS,
  ...headers,
  "mcp-session-id": sid,
  "mcp-protocol-version": "2025-11-25",
});

/** A raw initialize (+ initialized) by the caller `headers` and `from` describe; the new session's id. */
export async function open(
  url: URL,
  headers: Record<string, string> = {},
  from: Pick<RawRequest, "localAddress"> = {},
): Promise<string> {
  const init = await request(url, { headers: { ...JSON_HEADERS, ...headers }, body: INIT, ...from });
  expect(init.status).toBe(200);
  const sid = init.headers["mcp-session-id"] as string;
  const done = await request(url, {
    headers: inSession(sid, headers),
    body: JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }),
    ...from,
  });
  expect(done.status).toBe(202);
  return sid;
}

/** tools/list in session `sid` as the caller `headers` and `from` describe; the answer. */
export const list = (
  url: URL,
  sid: string,
  headers: Record<string, string> = {},
  from: Pick<RawRequest, "localAddress"> = {},
) =>
  request(url, {
    headers: inSession(sid, headers),
    body: JSON.stringify({ jsonrpc: "2.0", id: 2, method: "tools/list" }),
    ...from,
  });

export const errorOf = (a: Answer) => (JSON.parse(a.body) as { error: { code: number; message: string } }).error;
