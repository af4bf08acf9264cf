/**
 * The layers of src/, bottom first (ARCHITECTURE.md, "Layers"). A folder may import only the
 * layers below it, never its own layer's other folders; every folder of src/ must be listed, and
 * the public API's entry points (src/index.ts, src/entries/) sit above them all. So the folder graph is acyclic by
 * construction: an import that runs up or across a layer fails `npm run lint`, as does any cycle
 * between files.
 */
const LAYERS = [
  ["core"],
  ["canonical", "observation", "state"],
  ["schema"],
  ["idempotency"],
  ["capability"],
  ["tools"],
  ["runtime"],
  ["economics", "export"],
  ["adapters"],
  ["mcp"],
  ["cli"],
];

const above = (i) => LAYERS.slice(i + 1).flat();
const sameLayer = (i, folder) => LAYERS[i].filter((f) => f !== folder);

const LISTED = LAYERS.flat().join("|");
/** The public API: the root and one file per subpath entry, above every layer (ARCHITECTURE.md, "The public API"). */
const ENTRIES = "index\\.ts$|entries/";

const layerRules = LAYERS.flatMap((folders, i) =>
  folders.map((folder) => ({
    name: `layer-${folder}`,
    comment: `src/${folder}/ may import only from the layers below it (${LAYERS.slice(0, i).flat().join(", ") || "none"})`,
    severity: "error",
    from: { path: `^src/${folder}/` },
    to: { path: `^src/(${[...above(i), ...sameLayer(i, folder)].join("|")})/` },
  })),
);

/**
 * Inside mcp/: transports/ carry a server/, proxy/ stands apart (it turns an upstream's tools
 * into ToolSpecs for any gateway), so server/ and proxy/ import neither each other nor transports/.
 */
const mcpRules = [
  { name: "mcp-server", from: "server", to: "transports|proxy" },
  { name: "mcp-proxy", from: "proxy", to: "server|transports" },
].map(({ name, from, to }) => ({
  name,
  comment: `src/mcp/${from}/ may not import src/mcp/(${to})/`,
  severity: "error",
  from: { path: `^src/mcp/${from}/` },
  to: { path: `^src/mcp/(${to})/` },
}));

/** A folder missing from LAYERS would be bound by no layer rule: its first import, either way, fails. */
const placeRules = [
  {
    name: "layer-unlisted",
    comment: `every folder of src/ has a place in LAYERS in .dependency-cruiser.cjs (listed: ${LAYERS.flat().join(", ")})`,
    severity: "error",
    from: { path: "^src/", pathNot: `^src/((${LISTED})/|${ENTRIES})` },
    to: {},
  },
  {
    name: "layer-unlisted-target",
    comment: `every folder of src/ has a place in LAYERS in .dependency-cruiser.cjs (listed: ${LAYERS.flat().join(", ")})`,
    severity: "error",
    from: {},
    to: { path: "^src/", pathNot: `^src/((${LISTED})/|${ENTRIES})` },
  },
  {
    name: "no-barrel-import",
    comment:
      "src/index.ts and src/entries/ are the public API, above every layer: code inside src/ imports the module itself",
    severity: "error",
    from: { path: "^src/" },
    to: { path: `^src/(${ENTRIES})` },
  },
];

module.exports = {
  forbidden: [
    ...layerRules,
    ...placeRules,
    ...mcpRules,
    {
      name: "no-circular",
      comment: "no module may reach itself through its imports",
      severity: "error",
      from: {},
      to: { circular: true },
    },
    {
      name: "no-src-to-test",
      comment: "shipped code never imports test or bench code",
      severity: "error",
      from: { path: "^src/" },
      to: { path: "^(test|bench)/" },
    },
  ],
  options: {
    doNotFollow: { path: "node_modules" },
    exclude: { path: "^(dist|node_modules)/" },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: "tsconfig.json" },
  },
};
