import { afterAll, describe, expect, it } from "vitest";
import { DEFAULT_GREP_LIMITS, grepSearch } from "../../src/tools/grep.js";
import { binaryAvailable } from "../support/require.js";
import { makeWorkspace, refusalText } from "./fixtures.js";

const s = makeWorkspace("grep-cursor");
afterAll(() => s.cleanup());

describe.runIf(binaryAvailable("rg"))("grep_search cursor past the last match", () => {
  s.write("three.txt", "hit\nhit\nhit\n");

  it("is refused like file_view's offset past the end, naming the total and the valid cursors", async () => {
    expect(await refusalText(grepSearch(s.ws, { pattern: "hit", path: s.root, cursor: 3 }), s)).toMatchInlineSnapshot(
      `"cursor_out_of_range: cursor 3 is past the last of the 3 matches; use a cursor from 0 to 2 (0 is the first page; each page's next_cursor continues it)"`,
    );
    expect(
      await refusalText(grepSearch(s.ws, { pattern: "hit", path: s.root, cursor: 100_000 }), s),
    ).toMatchInlineSnapshot(
      `"cursor_out_of_range: cursor 100000 is past the last of the 3 matches; use a cursor from 0 to 2 (0 is the first page; each page's next_cursor continues it)"`,
    );
  });

  it("says how to reach later matches when the search stopped at max_matches", async () => {
    const stopped = grepSearch(
      s.ws,
      { pattern: "hit", path: s.root, cursor: 2 },
      { ...DEFAULT_GREP_LIMITS, max_matches: 2 },
    );
    expect(await refusalText(stopped, s)).toMatchInlineSnapshot(
      `"cursor_out_of_range: cursor 2 is past the last of the 2 matches; use a cursor from 0 to 1 (0 is the first page; each page's next_cursor continues it); the search stops after 2 matches, so narrow the pattern, path or glob to reach later ones"`,
    );
  });

  it("still answers the last page and a search with no matches at cursor 0", async () => {
    const last = await grepSearch(s.ws, { pattern: "hit", path: s.root, cursor: 2 });
    expect(last.output).toMatchObject({ total: 3, cursor: 2, next_cursor: null });
    const none = await grepSearch(s.ws, { pattern: "absent", path: s.root, cursor: 0 });
    expect(none.output).toMatchObject({ total: 0, next_cursor: null });
  });
});
