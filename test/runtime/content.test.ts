/**
 * Images, sounds and links a tool returns beside its text, through the whole pipeline: checked and
 * bounded into the observation, named in its fenced text, stored with an A2 call's result and
 * replayed from a real SQLite store after a restart.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { openStore } from "../../src/idempotency/open.js";
import { toolResult, type ToolSpec } from "../../src/core/tool.js";
import { gateways } from "./helpers.js";

const make = gateways();
const dir = mkdtempSync(join(tmpdir(), "toolgate-runtime-content-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==";
const image = { type: "image" as const, mime_type: "image/png", data: PNG };
const link = { type: "link" as const, uri: "file:///ws/chart.svg?token=sk_live_123456", name: "chart.svg" };

const schema = {
  $schema: "https://json-schema.org/draft/2020-12/schema",
  type: "object",
  properties: {},
  additionalProperties: false,
};

/** A tool that draws a chart: its result is a line of text, the image and a link to the source. */
function chartTool(effect: "read" | "write", content: unknown = [image, link]): ToolSpec & { runs: number } {
  const tool = {
    name: "draw_chart",
    description: "Draws the quarter's chart and links its source.",
    inputSchema: schema,
    effect,
    runs: 0,
    handler: () => {
      tool.runs++;
      return toolResult({ drawn: true }, { text: "chart drawn", content: content as never });
    },
  };
  return tool;
}

const call = (call_id: string) => ({ trajectory_id: "t", turn: 0, call_id, tool: "draw_chart", arguments: {} });

describe("content parts through the gateway", () => {
  it("passes the tool's image and link on and names them inside the fenced output", async () => {
    const { gateway } = make({ tools: [chartTool("read")], secrets: ["sk_live_123456"] });
    const o = await gateway.call(call("c1"));
    expect(o.ok).toBe(true);
    expect(o.content).toEqual([image, { ...link, uri: "file:///ws/chart.svg?token=[REDACTED]" }]);
    const fenced = o.text.slice(o.text.indexOf("<<untrusted"), o.text.lastIndexOf("<<end"));
    expect(fenced).toContain(
      'chart drawn\n[image image/png, 70 bytes, attached]\n[link "chart.svg": file:///ws/chart.svg?token=[REDACTED]]',
    );
    expect(o.text).not.toContain("sk_live_123456");
  });

  it("says in the text what it left out and passes the rest; a result without parts has no content field", async () => {
    const { gateway } = make({
      tools: [chartTool("read", [{ type: "image", mime_type: "text/html", data: "AAAA" }, image])],
    });
    const o = await gateway.call(call("c1"));
    expect(o.content).toEqual([image]);
    expect(o.text).toContain(
      "[toolgate left out content part 1: the image has a mime_type that is not an image/… media type]",
    );
    const bare = make({ tools: [chartTool("read", [])] });
    const plain = await bare.gateway.call(call("c1"));
    expect(plain).not.toHaveProperty("content");
    const notList = make({ tools: [chartTool("read", "an image")] });
    const odd = await notList.gateway.call(call("c1"));
    expect(odd.ok).toBe(true);
    expect(odd).not.toHaveProperty("content");
    expect(odd.text).toContain("[toolgate left out the result's content: it was not a list of parts]");
  });

  it("keeps a write's content with its result: a replay after a restart answers with the same parts", async () => {
    const url = `sqlite:${join(dir, "content.db")}`;
    const tool = chartTool("write");
    const first = make({ tools: [tool], store: await openStore(url) });
    const o1 = await first.gateway.call(call("w1"));
    await first.gateway.close();
    const second = make({ tools: [tool], store: await openStore(url) });
    const o2 = await second.gateway.call(call("w1"));
    expect(tool.runs).toBe(1);
    expect(o2.replay).toBe(true);
    expect(o2.content).toEqual(o1.content);
    expect(o2.content).toEqual([image, link]);
  });
});
