// Print the name, version and LICENSE text of every package bundled into editor.js (all of
// node_modules but esbuild, a build tool), for grader/web/static/editor.LICENSE.txt.
const fs = require("fs");
const path = require("path");
const root = path.join(__dirname, "node_modules");
const dirs = [];
for (const name of fs.readdirSync(root)) {
  if (name.startsWith(".")) continue;
  if (name.startsWith("@")) {
    for (const sub of fs.readdirSync(path.join(root, name))) dirs.push(path.join(name, sub));
  } else dirs.push(name);
}
console.log("grader/web/static/editor.js bundles these npm packages (built by tools/codemirror/build.sh).\n");
for (const dir of dirs.sort()) {
  if (dir.startsWith("esbuild") || dir.startsWith("@esbuild")) continue;
  const pkg = JSON.parse(fs.readFileSync(path.join(root, dir, "package.json"), "utf8"));
  const file = fs.readdirSync(path.join(root, dir)).find((f) => /^licen[cs]e/i.test(f));
  console.log(`== ${pkg.name} ${pkg.version} (${pkg.license}) ==`);
  console.log(file ? fs.readFileSync(path.join(root, dir, file), "utf8").trim() : `License: ${pkg.license}`);
  console.log();
}
