/**
 * A small reader of git's config syntax (git-config(1), "CONFIGURATION FILE"), enough to find
 * which keys a repository sets: sections (`[core]`), subsections (`[diff "lfs"]`, and the old
 * `[branch.main]`), `key = value` and bare `key` (true), double quotes, the escapes `\n \t \b \\
 * \"`, a backslash at the end of a line continuing the value, and `#`/`;` comments. Section and
 * key names come back lower-cased (git compares them so), subsections as written (the old form
 * lower-cased, as git does). A line git would reject is skipped rather than failing the whole
 * file: the caller wants every key that could take effect, and git runs nothing from a file it
 * cannot parse. One pass over the text, so its time is linear in the text's length.
 */

export interface GitConfigEntry {
  section: string;
  subsection: string | null;
  key: string;
  /** null for a bare `key` (git reads it as true). */
  value: string | null;
}

const isAlpha = (c: number) => (c >= 65 && c <= 90) || (c >= 97 && c <= 122);
const isName = (c: number) => isAlpha(c) || (c >= 48 && c <= 57) || c === 45; // letters, digits, -
const isSectionName = (c: number) => isName(c) || c === 46; // and .
const isSpace = (c: number) => c === 32 || c === 9 || c === 13 || c === 12 || c === 11; // space \t \r \f \v

export function parseGitConfig(text: string): GitConfigEntry[] {
  const entries: GitConfigEntry[] = [];
  let section: string | null = null;
  let subsection: string | null = null;
  let i = 0;
  const n = text.length;
  const skipSpace = () => {
    while (i < n && isSpace(text.charCodeAt(i))) i++;
  };
  const skipLine = () => {
    while (i < n && text[i] !== "\n") i++;
    i++;
  };

  while (i < n) {
    skipSpace();
    if (i >= n) break;
    const c = text[i]!;
    if (c === "\n") {
      i++;
      continue;
    }
    if (c === "#" || c === ";") {
      skipLine();
      continue;
    }
    if (c === "[") {
      const header = readHeader();
      if (header === null) {
        section = null; // keys up to the next good header belong to no section: git would stop here
        skipLine();
        continue;
      }
      [section, subsection] = header;
      continue; // a key may follow on the same line
    }
    if (!isAlpha(c.charCodeAt(0)) || section === null) {
      skipLine();
      continue;
    }
    const start = i;
    while (i < n && isName(text.charCodeAt(i))) i++;
    const key = text.slice(start, i).toLowerCase();
    skipSpace();
    if (i >= n || text[i] === "\n" || text[i] === "#" || text[i] === ";") {
      entries.push({ section, subsection, key, value: null });
      skipLine();
      continue;
    }
    if (text[i] !== "=") {
      skipLine();
      continue;
    }
    i++;
    entries.push({ section, subsection, key, value: readValue() });
  }
  return entries;

  /** `[name]`, `[name "sub"]` or `[name.sub]`, from the `[`; null (and nothing consumed past the line) when malformed.
   * */
  function readHeader(): [string, string | null] | null {
    i++; // [
    const start = i;
    while (i < n && isSectionName(text.charCodeAt(i))) i++;
    const name = text.slice(start, i);
    if (name === "") return null;
    skipSpace();
    if (text[i] === "]") {
      i++;
      const dot = name.indexOf(".");
      // The old form: the part after the first dot is a subsection, lower-cased.
      return dot === -1
        ? [name.toLowerCase(), null]
        : [name.slice(0, dot).toLowerCase(), name.slice(dot + 1).toLowerCase()];
    }
    if (text[i] !== '"' || name.includes(".")) return null;
    i++;
    let sub = "";
    while (i < n && text[i] !== '"') {
      if (text[i] === "\n") return null;
      if (text[i] === "\\" && i + 1 < n && text[i + 1] !== "\n") i++;
      sub += text[i];
      i++;
    }
    if (text[i] !== '"' || text[i + 1] !== "]") return null;
    i += 2;
    return [name.toLowerCase(), sub];
  }

  /** The value after `=`, to the end of the line (continuations followed), unquoted and unescaped. */
  function readValue(): string {
    let out = "";
    let pending = ""; // whitespace outside quotes: kept only if something follows it
    let quoted = false;
    skipSpace();
    while (i < n) {
      const ch = text[i]!;
      // The end of the line ends the value (inside quotes git calls it an error; the value ends here too).
      if (ch === "\n") break;
      if (!quoted && (ch === "#" || ch === ";")) {
        skipLine();
        return out;
      }
      if (!quoted && isSpace(ch.charCodeAt(0))) {
        pending += ch;
        i++;
        continue;
      }
      out += pending;
      pending = "";
      if (ch === '"') {
        quoted = !quoted;
        i++;
        continue;
      }
      if (ch === "\\") {
        const next = text[i + 1];
        i += 2;
        if (next === "\n") continue; // continuation
        if (next === "\r" && text[i] === "\n") {
          i++;
          continue;
        }
        out += next === "n" ? "\n" : next === "t" ? "\t" : next === "b" ? "\b" : (next ?? "");
        continue;
      }
      out += ch;
      i++;
    }
    i++; // the newline
    return out;
  }
}
