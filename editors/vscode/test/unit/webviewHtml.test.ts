import * as path from "node:path";
import { expect } from "expect";
import { describe, test } from "node:test";
import { buildWebviewHtml, cspSources, makeNonce, readWebAssets, scriptJson, webviewCsp } from "../../src/webviewHtml";
import type { WebAssets } from "../../src/webviewHtml";

const WEB = path.resolve(__dirname, "../../../../web");
// What `webview.cspSource` is in current VS Code.
const CSP_SOURCE = "'self' https://*.vscode-cdn.net";

describe("the webview page", () => {
  const assets = readWebAssets(WEB);

  test("fresh 128-bit nonces", () => {
    const a = makeNonce();
    expect(a).toMatch(/^[0-9a-f]{32}$/);
    expect(makeNonce()).not.toBe(a);
  });

  test("the CSP allows only the nonce'd style and scripts and data: or webview images", () => {
    expect(webviewCsp("abc", CSP_SOURCE)).toBe(
      `default-src 'none'; img-src data: ${CSP_SOURCE}; style-src 'nonce-abc'; script-src 'nonce-abc'; base-uri 'none'; form-action 'none'`,
    );
  });

  test("the page inlines web/ under one nonce, and has no placeholder left", () => {
    const nonce = makeNonce();
    const html = buildWebviewHtml(assets, { nonce, cspSource: CSP_SOURCE, boot: { panel: "overview" } });
    expect(html).toContain(`content="${webviewCsp(nonce, CSP_SOURCE)}"`);
    // The only "{{" left are those of the inlined files (transport.js tests for "{{DATA}}").
    const count = (t: string) => t.split("{{").length - 1;
    expect(count(html)).toBe(count(assets.style + assets.transport + assets.app));
    const scripts = [...html.matchAll(/<script\b([^>]*)>/g)].map((m) => m[1]);
    expect(scripts).toHaveLength(2);
    for (const s of scripts) expect(s).toContain(`nonce="${nonce}"`);
    expect([...html.matchAll(/<style\b([^>]*)>/g)].map((m) => m[1])).toEqual([` nonce="${nonce}"`]);
    expect(html).toContain(assets.app.slice(0, 200));
    expect(html).toContain(assets.transport.slice(0, 200));
    expect(html).toContain(assets.style.slice(0, 100));
    // No static data: the page uses the vscode transport.
    expect(html).toMatch(/<script type="application\/json" id="static-data" nonce="[0-9a-f]+">null<\/script>/);
    // No external resource of any kind.
    expect(html).not.toMatch(/\s(src|href)="(https?:|\/\/)/);
  });

  test("substitution is one pass: placeholders inside the inlined files stay as they are", () => {
    const fake: WebAssets = { index: "<s>{{STYLE}}</s><x>{{SCRIPT}}</x>{{UNKNOWN}}{{", style: "a{{NONCE}}b", transport: "t{{CSP}}", app: "" };
    const html = buildWebviewHtml(fake, { nonce: "0123456789abcdef", cspSource: "x", boot: { panel: "overview" } });
    expect(html.startsWith("<s>a{{NONCE}}b")).toBe(true);
    expect(html).toContain("t{{CSP}}");
    expect(html).toContain("{{UNKNOWN}}{{");
  });

  test("the boot data cannot end the script element or inject replacement patterns", () => {
    const key = `function:/x.py:1:</script><script>alert(1)</script>$'$&`;
    const html = buildWebviewHtml(assets, { nonce: makeNonce(), cspSource: CSP_SOURCE, boot: { panel: "detail", artifact: key } });
    expect(html).not.toContain("</script><script>alert(1)");
    expect(html).toContain(scriptJson({ panel: "detail", artifact: key }));
    expect(JSON.parse(scriptJson(key))).toBe(key);
    expect(scriptJson("\u2028<&>")).toBe('"\\u2028\\u003c\\u0026\\u003e"');
  });

  test("a CSP source cannot add directives or quote anything but 'self'", () => {
    expect(cspSources("https://a.example; script-src * 'unsafe-inline' \"x")).toBe("");
    expect(cspSources("'self' https://*.vscode-cdn.net vscode-resource:")).toBe("'self' https://*.vscode-cdn.net vscode-resource:");
    const html = buildWebviewHtml(assets, { nonce: "0123456789abcdef0123", cspSource: "x; script-src *", boot: { panel: "overview" } });
    expect(html).not.toContain("script-src *");
    expect(html).toContain("img-src data:; style-src");
  });

  test("a weak nonce is refused", () => {
    expect(() => buildWebviewHtml(assets, { nonce: "1", cspSource: CSP_SOURCE, boot: { panel: "overview" } })).toThrow(/nonce/);
    expect(() => buildWebviewHtml(assets, { nonce: "'unsafe-inline' 12345678901234567", cspSource: CSP_SOURCE, boot: { panel: "overview" } })).toThrow(/nonce/);
  });
});
