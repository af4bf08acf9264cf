/** What `cap issue` and `cap attenuate` print: the token on stdout and its grant on stderr, or both as JSON. */
import { summariseGrant, viewGrant } from "../../../capability/grant.js";
import { parseToken } from "../../../capability/token.js";
import { escapeUntrusted } from "../../../observation/escape.js";
import { printJson } from "../../io.js";

export function printGrant(token: string, json: boolean | undefined): void {
  const g = parseToken(token).grant;
  if (json) printJson({ token, id: g.id, grant: viewGrant(g) });
  else {
    process.stdout.write(token + "\n");
    process.stderr.write(`grant ${g.id}: ${escapeUntrusted(summariseGrant(g))}\n`);
  }
}
