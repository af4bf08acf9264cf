/** JSON Pointers (RFC 6901), as lint findings and validation issues name places in a document. */

/** JSON Pointer token escaping. */
export function escapeToken(token: string): string {
  // Most names need no escape: skip the two replaces for them.
  return token.includes("~") || token.includes("/") ? token.replace(/~/g, "~0").replace(/\//g, "~1") : token;
}

/** `pointer` with each token appended, escaped: the one JSON Pointer join. */
export function join(pointer: string, ...tokens: (string | number)[]): string {
  let out = pointer;
  for (const t of tokens) out += "/" + escapeToken(String(t));
  return out;
}
