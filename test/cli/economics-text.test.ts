import { describe, expect, it } from "vitest";
import { compareCatalogShapes } from "../../src/economics/cost.js";
import { renderComparison } from "../../src/cli/economics-text.js";

const last = (a: { k: number; s: number }, b: { k: number; s: number }) =>
  renderComparison(compareCatalogShapes(a, b, 40))
    .trimEnd()
    .split("\n")
    .at(-1);

describe("renderComparison's verdict", () => {
  it("keeps the worked example's sentence when B is smaller", () => {
    expect(last({ k: 80, s: 350 }, { k: 4, s: 250 })).toBe("B sends 96.4 % less than A");
  });

  it("says 'more' when B is larger, never a negative 'less'", () => {
    expect(last({ k: 4, s: 250 }, { k: 80, s: 350 })).toBe("B sends 2,700.0 % more than A");
  });

  it("says so when the two send the same, or when A sends nothing", () => {
    expect(last({ k: 4, s: 250 }, { k: 10, s: 100 })).toBe("A and B send the same: 40,000 tokens each over 40 turns");
    expect(last({ k: 4, s: 0 }, { k: 80, s: 0 })).toBe("A and B send the same: 0 tokens each over 40 turns");
    expect(last({ k: 0, s: 350 }, { k: 4, s: 250 })).toBe("B sends 40,000 tokens over 40 turns; A sends none");
  });
});
