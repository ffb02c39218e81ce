// Renders media/icon.svg to the 128 × 128 media/icon.png of the marketplace listing with headless
// Chromium (Debian's /usr/bin/chromium, or CHROMIUM=…). Run by hand after changing the SVG; the PNG
// is committed.
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { chromium } from "playwright-core";

const here = path.dirname(fileURLToPath(import.meta.url));
const svg = fs.readFileSync(path.join(here, "../media/icon.svg"), "utf8");
const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
  args: ["--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"],
});
try {
  const page = await browser.newPage({ viewport: { width: 128, height: 128 }, deviceScaleFactor: 1 });
  await page.setContent(`<html><body style="margin:0;background:transparent">${svg}</body></html>`);
  await page.locator("svg").screenshot({ path: path.join(here, "../media/icon.png"), omitBackground: true });
} finally {
  await browser.close();
}
console.log("make-icon: media/icon.png");
