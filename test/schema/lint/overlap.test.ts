import { describe, expect, it } from "vitest";
import { overlapFindings, OVERLAP_THRESHOLD, similarities } from "../../../src/schema/lint/rules/overlap.js";
import { stem, terms } from "../../../src/schema/lint/terms.js";
import { lintCatalog } from "../../../src/schema/lint/index.js";
import { testdataAvailable } from "../../support/require.js";
import { mcpCatalogs, seedListing5 } from "../../support/catalogs.js";

const orders = [
  { name: "search_orders", description: "Search a customer's orders by status and date; newest first." },
  { name: "find_orders", description: "Find the orders of one customer, filtered by status." },
  { name: "get_order_details", description: "Line items, totals and shipping of one order." },
];

describe("terms", () => {
  it("splits snake and camel case, drops stop words, stems lightly and folds synonyms", () => {
    expect(terms("searchCustomerOrders")).toEqual(["search", "customer", "order"]);
    expect(terms("find_orders")).toEqual(["search", "order"]);
    expect(terms("Lists the matching entries in an HTTPServer directory")).toEqual([
      "list",
      "match",
      "entry",
      "http",
      "server",
      "directory",
    ]);
    expect(["boxes", "classes", "entities", "status", "analysis", "running", "used"].map(stem)).toEqual([
      "box",
      "class",
      "entity",
      "status",
      "analysis",
      "runn",
      "used",
    ]);
  });
});

describe("TG009 overlapping tools", () => {
  it("warns about search_orders / find_orders, naming both and the shared terms", () => {
    const findings = overlapFindings(orders);
    expect(findings).toHaveLength(1);
    expect(findings[0]).toMatchInlineSnapshot(`
      {
        "fix": "merge search_orders and find_orders into one tool, or give each a distinct verb and a description that says when to use it instead of the other",
        "message": "tools search_orders and find_orders could serve the same user sentence: similarity 0.73 ≥ 0.5 over name and description (shared terms: search, order, customer, status)",
        "other": "find_orders",
        "pointer": "",
        "rule": "TG009",
        "severity": "warning",
        "shared_terms": [
          "search",
          "order",
          "customer",
          "status",
        ],
        "similarity": 0.731,
        "tool": "search_orders",
      }
    `);
  });

  it("finds no overlap among the four coding tools of seed-listing-5.json", () => {
    expect(overlapFindings(seedListing5())).toEqual([]);
    const top = similarities(seedListing5())[0]!;
    expect(top.similarity).toBeLessThan(OVERLAP_THRESHOLD);
  });

  it("runs inside lintCatalog as a catalog rule", () => {
    const tg009 = lintCatalog(
      orders.map((o) => ({ ...o, inputSchema: { type: "object", properties: {}, additionalProperties: false } })),
    ).filter((f) => f.rule === "TG009");
    expect(tg009.map((f) => [f.tool, f.severity])).toEqual([["search_orders", "warning"]]);
  });

  it("honours a threshold and handles tools without words", () => {
    expect(overlapFindings(orders, { threshold: 0.1 }).length).toBe(3);
    expect(
      overlapFindings([
        { name: "a", description: "" },
        { name: "b", description: "" },
      ]),
    ).toEqual([]);
  });

  it.runIf(testdataAvailable("mcp-catalogs"))("records the pairs found in the real MCP catalogs", () => {
    const rows = mcpCatalogs().map(({ id, tools }) => {
      const found = overlapFindings(tools);
      return `${id}: ${found.length} pair(s) of ${tools.length} tools${found[0] ? `; top ${found[0].tool}/${found[0].other} ${found[0].similarity}` : ""}`;
    });
    expect(rows).toMatchInlineSnapshot(`
      [
        "desktop-commander: 4 pair(s) of 26 tools; top create_directory/move_file 0.645",
        "everything: 1 pair(s) of 13 tools; top get-resource-links/get-resource-reference 0.564",
        "filesystem: 1 pair(s) of 14 tools; top list_directory/list_directory_with_sizes 0.801",
        "github-mcp-server: 93 pair(s) of 117 tools; top manage_notification_subscription/manage_repository_notification_subscription 0.933",
        "memory: 5 pair(s) of 9 tools; top delete_entities/delete_relations 0.731",
        "playwright: 1 pair(s) of 25 tools; top browser_network_requests/browser_network_request 0.662",
      ]
    `);
  });
});
