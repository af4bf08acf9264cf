/** How GBNF spells a literal and a rule name. */

/** A GBNF string literal matching `text` exactly. */
export function literal(text: string): string {
  let out = "";
  for (const ch of text) {
    const code = ch.codePointAt(0)!;
    if (ch === "\\") out += "\\\\";
    else if (ch === '"') out += '\\"';
    else if (ch === "\n") out += "\\n";
    else if (ch === "\r") out += "\\r";
    else if (ch === "\t") out += "\\t";
    else if (code < 0x20) out += `\\x${code.toString(16).padStart(2, "0")}`;
    else out += ch;
  }
  return `"${out}"`;
}

/** A rule name made of `text`: runs of anything but letters and digits become one `-`, lower case; `x` when nothing is
 * left. */
export const ruleSafe = (text: string) =>
  text
    .replace(/[^a-zA-Z0-9]+/g, "-")
    .replace(/^-|-$/g, "")
    .toLowerCase() || "x";
