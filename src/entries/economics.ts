/**
 * `toolgate/economics`: the arithmetic of the boundary (`toolgate breakeven`, `toolgate cost`):
 * when constraining decoding pays, from figures or from an audit trail, and what a catalog costs
 * in tokens. An explicit list, documented in docs/api.md.
 */
export { breakeven } from "../economics/breakeven.js";
export type { BreakevenInput, BreakevenResult, BreakevenDecision } from "../economics/breakeven.js";
export { breakevenFromAudit } from "../economics/breakeven-audit.js";
export type {
  AuditBreakeven,
  AuditBreakevenOptions,
  ToolBreakeven,
  Recommendation,
} from "../economics/breakeven-audit.js";
export type { Interval } from "../economics/wilson.js";
export { catalogCost, compareCatalogShapes } from "../economics/cost.js";
export type { CatalogCost, CatalogCostOptions, CatalogShape, ShapeComparison } from "../economics/cost.js";
export type { ToolDescriptor } from "../schema/descriptor.js";
