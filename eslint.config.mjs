// The page's JavaScript: plain ES modules in static/, run by the browser without a build step.
// eslint catches mistakes; prettier (.prettierrc.json) lays the code out, at ruff's 100 columns.
import js from "@eslint/js";
import stylistic from "@stylistic/eslint-plugin";
import globals from "globals";

export default [
  { ignores: ["static/vendor/**", "node_modules/**", "artifacts/**", "build/**", "dist/**"] },
  js.configs.recommended,
  {
    files: ["static/**/*.js"],
    languageOptions: {
      ecmaVersion: 2022,
      sourceType: "module",
      // The vendored libraries the templates load before the modules.
      globals: { ...globals.browser, Plotly: "readonly", dagre: "readonly", CodeMirror: "readonly" },
    },
    plugins: { "@stylistic": stylistic },
    rules: {
      // Comments and strings, which prettier leaves alone, keep to the same 100 columns.
      "@stylistic/max-len": ["error", { code: 100, ignoreUrls: true, ignoreRegExpLiterals: true }],
      "no-unused-vars": ["error", { argsIgnorePattern: "^_" }],
      eqeqeq: ["error", "smart"],
    },
  },
];
