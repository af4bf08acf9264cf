/**
 * Variable references in a config string, as the clients that write these files expand them:
 * `${env:NAME}` (VS Code, Cursor), `${NAME}` and `${NAME:-default}` (Claude Code). A reference to
 * a variable that is not set and has no default is a mistake named by its place, never an empty
 * string: an API key that silently became "" makes the upstream fail far from the cause.
 */
import type { Problems } from "./problems.js";

const REFERENCE = /\$\{(env:)?([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g;

/** `text` with every reference replaced from `env`; a missing variable is added to `problems` at `pointer`. */
export function expandVariables(
  text: string,
  env: Readonly<Record<string, string | undefined>>,
  problems: Problems,
  pointer: string,
): string {
  if (!text.includes("${")) return text;
  return text.replace(REFERENCE, (whole, _prefix: string | undefined, name: string, fallback: string | undefined) => {
    const value = env[name];
    if (value !== undefined) return value;
    if (fallback !== undefined) return fallback;
    problems.add(
      pointer,
      `${whole} names the environment variable ${name}, which is not set`,
      `set ${name} in the environment toolgate starts in, or give a default: \${${name}:-VALUE}`,
    );
    return "";
  });
}
