// Validates speedscope files against the schema of the speedscope npm package, with Ajv
// (both installed under the folder given first). Exit 1 when a file does not conform or
// when no file holds a profile. Usage: node speedscope-check.cjs DIR FILE...
const path = require("path");
const fs = require("fs");
const [dir, ...files] = process.argv.slice(2);
const need = (m) => require(path.resolve(dir, "node_modules", m));
const Ajv = need("ajv");
const schema = JSON.parse(
  fs.readFileSync(path.resolve(dir, "node_modules/speedscope/dist/release/file-format-schema.json"), "utf8"),
);
const validate = new Ajv({ allErrors: true, strict: false }).compile(schema);
let bad = 0;
let profiles = 0;
for (const f of files) {
  const doc = JSON.parse(fs.readFileSync(f, "utf8"));
  if (!validate(doc)) {
    bad++;
    console.error(`${f}: ${JSON.stringify(validate.errors.slice(0, 5))}`);
  }
  profiles += doc.profiles.length;
}
console.log(`speedscope schema: ${files.length - bad} of ${files.length} files valid, ${profiles} profiles`);
process.exit(bad > 0 || profiles === 0 ? 1 : 0);
