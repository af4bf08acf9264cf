import js from "@eslint/js";
import tseslint from "typescript-eslint";
import selfContainedComments from "./eslint/self-contained-comments.js";

export default tseslint.config(
  { ignores: ["dist/**", "node_modules/**", "coverage/**", ".toolgate/**"] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_" }],
      "@typescript-eslint/consistent-type-imports": "error",
      "no-constant-condition": ["error", { checkLoops: false }],
    },
  },
  {
    // Tool configuration in CommonJS (dependency-cruiser reads .cjs).
    files: ["**/*.cjs"],
    languageOptions: { sourceType: "commonjs", globals: { module: "writable", require: "readonly" } },
  },
  {
    files: ["test/**", "bench/**"],
    rules: { "@typescript-eslint/no-non-null-assertion": "off" },
  },
  {
    // Comments and test titles cite only what the repository holds (ARCHITECTURE.md, docs/).
    files: ["src/**/*.ts", "test/**/*.ts", "bench/**/*.ts", "examples/**/*.ts"],
    plugins: { toolgate: { rules: { "self-contained-comments": selfContainedComments } } },
    rules: { "toolgate/self-contained-comments": "error" },
  },
);
