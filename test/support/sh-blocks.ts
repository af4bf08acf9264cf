/** The commands of a Markdown file's ```sh blocks, for the tests that run them as written. */
import { readFileSync } from "node:fs";

export interface Example {
  line: number;
  command: string;
  comment: string;
}

/** The commands of every ```sh block: continuation lines joined, comments split off, output lines (`#
 * …` alone) dropped. */
export function shellExamples(file: string): Example[][] {
  const lines = readFileSync(file, "utf8").split("\n");
  const blocks: Example[][] = [];
  let block: Example[] | null = null;
  lines.forEach((text, i) => {
    if (block === null) {
      if (/^```(sh|bash)\s*$/.test(text)) blocks.push((block = []));
      return;
    }
    if (text.startsWith("```")) return void (block = null);
    const [, code = "", comment = ""] = /^(.*?)(?:\s+#\s(.*))?$/.exec(text) ?? [];
    if (/^\s/.test(text) && block.length > 0) {
      const last = block[block.length - 1]!;
      last.command += code.trim() ? ` ${code.trim()}` : "";
      last.comment += comment ? ` ${comment}` : (/^\s*#\s?(.*)$/.exec(text)?.[1] ?? "");
    } else if (code.trim() && !code.trim().startsWith("#")) block.push({ line: i + 1, command: code.trim(), comment });
  });
  return blocks;
}

/** The synopsis made a command: options in brackets left out, the first of `a|b`. */
export function concrete(command: string): string {
  let c = command;
  for (let before = ""; before !== c;) {
    before = c;
    c = c.replace(/\s*\[[^[\]]*\](\.\.\.)?/g, "");
  }
  return c.replace(/(^|\s)([^\s|]+)(?:\|[^\s|]+)+(?=\s|$)/g, "$1$2");
}
