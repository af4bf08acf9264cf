import type { Rule } from "eslint";

export declare const CITATIONS: readonly { pattern: RegExp; what: string }[];
export declare function findCitation(text: string): { index: number; text: string; what: string } | null;
declare const rule: Rule.RuleModule;
export default rule;
