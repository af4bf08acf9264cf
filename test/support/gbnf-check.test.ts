import { describe, expect, it } from "vitest";
import { gbnfAccepts, parseGbnf } from "./gbnf-check.js";

describe("the GBNF recogniser", () => {
  it("handles literals, classes, groups, alternation and every repetition form", () => {
    const g = `root ::= "a" [0-9]{2,3} ( "x" | "y" )* tail?\ntail ::= [^a-c\\n] "\\"" "\\x41"`;
    expect(gbnfAccepts(g, "a12")).toBe(true);
    expect(gbnfAccepts(g, "a123xyx")).toBe(true);
    expect(gbnfAccepts(g, 'a12d"A')).toBe(true);
    expect(gbnfAccepts(g, "a1")).toBe(false);
    expect(gbnfAccepts(g, "a1234")).toBe(false);
    expect(gbnfAccepts(g, 'a12b"A')).toBe(false);
    expect(gbnfAccepts(`root ::= "a"+ "b"{2} "c"{1,}`, "aaabbc")).toBe(true);
    expect(gbnfAccepts(`root ::= "a"+ "b"{2} "c"{1,}`, "bbc")).toBe(false);
  });

  it("matches nested recursion and empty alternatives", () => {
    const g = `root ::= list\nlist ::= "[" ( item ( "," item )* )? "]"\nitem ::= list | [a-z]\nws ::= | " "`;
    expect(gbnfAccepts(g, "[a,[b,[]],c]")).toBe(true);
    expect(gbnfAccepts(g, "[a,,b]")).toBe(false);
    expect(gbnfAccepts(g, " ", "ws")).toBe(true);
  });

  it("reports grammar errors clearly", () => {
    expect(() => parseGbnf(`root ::= missing`)).toThrowErrorMatchingInlineSnapshot(
      `[GbnfSyntaxError: rule root refers to undefined rule missing]`,
    );
    expect(() => parseGbnf(`root ::= "abc`)).toThrowErrorMatchingInlineSnapshot(
      `[GbnfSyntaxError: rule root: unterminated literal at column 6: ]`,
    );
    expect(() => parseGbnf(`root ::= "a"\nroot ::= "b"`)).toThrowErrorMatchingInlineSnapshot(
      `[GbnfSyntaxError: rule root is defined twice]`,
    );
    expect(() => gbnfAccepts(`a ::= "a"`, "a")).toThrowErrorMatchingInlineSnapshot(`[GbnfSyntaxError: no rule root]`);
  });
});
