// The Waits tab opened on one object (`?view=waits&object=…`, what Neovim's `:ThreadRadarWaits
// browser` and `b` in its float open) in headless Chromium against a real `threadradar serve` of
// the bundled Bug 2 recording (analysis/tests/fixtures/timeline/bug2_producer_consumer.json):
// - the object named by its label is selected once drawn (its row, and its waits and edges lit);
// - a part of a label, type or name, in any case, selects the first object it fits (the `waits`
//   method's own filter);
// - a name that fits nothing, or a hostile one, selects nothing and runs nothing;
// - clicking the selected row clears the selection as usual.
//
//   THREADRADAR_BIN=/path/to/threadradar node --test --test-concurrency=1 waits_object.test.mjs
import { test, before, after, describe } from "node:test";
import assert from "node:assert/strict";
import path from "node:path";
import { api, launch, out, root, serve, watchedPage } from "./harness.mjs";

const RUN = path.join(root, "analysis/tests/fixtures/timeline/bug2_producer_consumer.json");
const COND = "threading.Condition in Storage";

let browser, server, answer;
before(async () => {
  browser = await launch();
  server = await serve(RUN);
  answer = await api(server.url, "waits", { width_px: 800 });
});
after(async () => {
  if (browser) await browser.close();
  if (server) server.child.kill();
});

const drawn = (page) => page.waitForFunction(() => { const w = document.querySelector("#waits"); return w && !w.hidden && (w.hasAttribute("data-drawn-edges") || w.hasAttribute("data-error")); }, null, { timeout: 60000 });
const selected = (page) => page.$eval("#waits", (w) => w.getAttribute("data-selected-object"));
const selectedRows = (page) => page.$$eval("#waits table.tr-objects tbody tr[aria-selected=true]", (trs) => trs.map((tr) => tr.getAttribute("data-object")));

/** Opens the Waits tab with `?…&object=<object>`; the page once drawn. */
async function openOn(object, problems) {
  const page = await watchedPage(browser, problems);
  await page.goto(server.url + "?view=waits&object=" + encodeURIComponent(object));
  await drawn(page);
  return page;
}

describe("?view=waits&object=…", () => {
  const problems = [];

  test("the object named by its label is selected", async () => {
    const cond = answer.view.objects.findIndex((o) => o.object === COND);
    assert.ok(cond >= 0, "the fixture's objects: " + answer.view.objects.map((o) => o.object).join(", "));
    assert.ok(answer.view.objects.length > 1, "more than one object to choose from");
    const page = await openOn(COND, problems);
    assert.equal(await selected(page), String(cond));
    assert.deepEqual(await selectedRows(page), [String(cond)]);
    const cells = await page.$$eval(`#waits tr[data-object="${cond}"] td`, (tds) => tds.map((td) => td.textContent));
    assert.equal(cells[0], COND);
    assert.ok(cells[6].includes("consumer-9") && cells[6].includes("producer-0"), "its wakers: " + cells[6]);
    await page.screenshot({ path: path.join(out, "waits-object.png"), fullPage: true });
    // A click on the row clears the selection as usual.
    await page.click(`#waits tr[data-object="${cond}"]`);
    assert.equal(await selected(page), null);
    await page.close();
  });

  test("a part of a label, type or name in any case selects the first object it fits", async () => {
    const cond = answer.view.objects.findIndex((o) => o.object === COND);
    for (const q of ["storage", "THREADING.CONDITION"]) {
      const want = answer.view.objects.findIndex((o) => [o.object, o.type, o.name || ""].some((s) => s.toLowerCase().includes(q.toLowerCase())));
      assert.equal(want, cond, q);
      const page = await openOn(q, problems);
      assert.equal(await selected(page), String(cond), q);
      await page.close();
    }
    // "lock" is a part of the lock's label and type only.
    const lock = answer.view.objects.findIndex((o) => o.type === "lock");
    assert.ok(lock >= 0 && lock !== cond);
    const page = await openOn("lock in", problems);
    assert.equal(await selected(page), String(lock));
    await page.close();
  });

  test("a name that fits nothing, or a hostile one, selects nothing", async () => {
    for (const q of ["no such object", "<img src=x onerror=alert(1)>", "\"]) x [data-object=\""]) {
      const page = await openOn(q, problems);
      assert.equal(await selected(page), null, q);
      assert.deepEqual(await selectedRows(page), [], q);
      assert.equal(await page.$$eval("#waits img, #waits script", (x) => x.length), 0);
      await page.close();
    }
  });

  test("without the parameter nothing is selected", async () => {
    const page = await watchedPage(browser, problems);
    await page.goto(server.url + "?view=waits");
    await drawn(page);
    assert.equal(await selected(page), null);
    await page.close();
  });

  test("no dialogs, page errors or console errors", () => assert.deepEqual(problems, []));
});
