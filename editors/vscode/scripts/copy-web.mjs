// Copies the panels' web app (../../web: index.html, style.css, transport.js, app.js) into
// media/web, where the extension reads it and from where it goes into the .vsix. Run before every
// build, so the extension always ships the repository's current panels.
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
const from = path.resolve(here, "../../../web");
const to = path.resolve(here, "../media/web");
const files = ["index.html", "style.css", "timeline.css", "transport.js", "dom.js", "timeline.js", "sections.css", "sections.js", "waits.css", "waits.js", "tracecompare.css", "tracecompare.js", "app.js"];

fs.rmSync(to, { recursive: true, force: true });
fs.mkdirSync(to, { recursive: true });
for (const f of files) {
  const src = path.join(from, f);
  if (!fs.existsSync(src)) {
    console.error(`copy-web: ${src} is missing: the extension is built from the ThreadRadar repository (editors/vscode).`);
    process.exit(1);
  }
  fs.copyFileSync(src, path.join(to, f));
}
console.log(`copy-web: ${files.length} files from ${path.relative(process.cwd(), from) || from} to ${path.relative(process.cwd(), to)}`);
