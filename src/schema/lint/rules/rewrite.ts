/**
 * TG008 whole-file rewrite — docs/schemas.md ("Shapes that mislead a model": `content: string`): output
 * length grows with the file, long files are truncated and unrelated lines drift; an exact
 * replacement (`old_str`, `new_str`) scales with the change.
 */
import type { ToolRule } from "../finding.js";
import { isPlainObject } from "../../../core/json.js";
import { join } from "../../../core/pointer.js";
import { typesOf } from "../util.js";
import { declaredReadOnly } from "./effect.js";

const WHOLE_CONTENT = new Set([
  "content",
  "contents",
  "text",
  "body",
  "file_text",
  "file_content",
  "filecontent",
  "new_content",
  "newcontent",
  "data",
]);
const FILE_ARGUMENT = new Set(["path", "file", "file_path", "filepath", "filename", "file_name"]);
const EXACT_REPLACEMENT = new Set([
  "old_str",
  "old_string",
  "oldstring",
  "old_text",
  "oldtext",
  "search",
  "find",
  "edits",
  "patch",
  "diff",
]);

export const wholeFileRewrite: ToolRule = (tool, ctx) => {
  if (declaredReadOnly(tool.effect, tool.annotations) || !isPlainObject(tool.schema) || tool.schemaPointer === null)
    return;
  const props = tool.schema.properties;
  if (!isPlainObject(props)) return;
  const names = Object.keys(props);
  if (names.some((n) => EXACT_REPLACEMENT.has(n.toLowerCase()))) return;
  // A file rewrite: the tool names a file (a path argument or "file" in its name); a comment body is not one.
  if (!names.some((n) => FILE_ARGUMENT.has(n.toLowerCase())) && !/file/i.test(tool.name)) return;
  for (const name of names) {
    const prop = props[name];
    if (!WHOLE_CONTENT.has(name.toLowerCase()) || !isPlainObject(prop) || !typesOf(prop).includes("string")) continue;
    ctx.report({
      rule: "TG008",
      severity: "warning",
      pointer: join(tool.schemaPointer, "properties", name),
      message: `${tool.name} writes with a whole-content string (${name}): output tokens grow with the file, not the change`,
      fix: "offer an exact-replacement edit (old_str, new_str) for changes to existing content; keep whole-content writes for new files",
    });
    return;
  }
};
