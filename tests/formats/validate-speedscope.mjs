// Validates speedscope files against the JSON schema that ships in speedscope's npm package.
// usage: node validate-speedscope.mjs FILE...   (exit 0 when every file is valid)
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import Ajv from "ajv";

const require = createRequire(import.meta.url);
const schema = JSON.parse(readFileSync(require.resolve("speedscope/dist/release/file-format-schema.json"), "utf8"));
delete schema.$schema; // draft-07 meta-schema: ajv's default
const validate = new Ajv({ allErrors: true, strict: false }).compile(schema);
let failed = 0;
for (const file of process.argv.slice(2)) {
  const data = JSON.parse(readFileSync(file, "utf8"));
  if (validate(data)) {
    console.log(`${file}: valid speedscope file (${data.profiles.length} profiles)`);
  } else {
    failed++;
    console.log(`${file}: INVALID`);
    for (const e of validate.errors.slice(0, 20)) console.log(`  ${e.instancePath} ${e.message}`);
  }
}
process.exit(failed ? 1 : 0);
