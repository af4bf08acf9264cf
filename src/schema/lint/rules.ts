/**
 * The rule registry. `lintTool` runs `schemaRules` on every schema node and `toolRules` once
 * per tool; `lintCatalog` also runs `catalogRules` over the whole catalog (duplicate names,
 * TG009 overlap). Every rule, TG000–TG011, lives in rules/ or, for TG000, in index.ts and walk.ts.
 */
import type { CatalogRule, SchemaRule, ToolRule } from "./finding.js";
import { bounded } from "./rules/bounded.js";
import { closed, untypedBag } from "./rules/closed.js";
import { sideEffect } from "./rules/effect.js";
import { duplicateNames, propertyDescription, toolNaming } from "./rules/naming.js";
import { required } from "./rules/required.js";
import { wholeFileRewrite } from "./rules/rewrite.js";
import { overlapRule } from "./rules/overlap.js";
import { toolPoisoning } from "./rules/poisoning.js";
import { unions } from "./rules/unions.js";
import { units } from "./rules/units.js";

/** Rules run on every schema node of a tool's input schema. */
export const schemaRules: SchemaRule[] = [closed, required, bounded, units, unions, untypedBag, propertyDescription];

/** Rules run once per tool descriptor. */
export const toolRules: ToolRule[] = [sideEffect, wholeFileRewrite, toolNaming, toolPoisoning];

/** Rules run once over a whole catalog. */
export const catalogRules: CatalogRule[] = [duplicateNames, overlapRule];
