// What every panel script builds its DOM with: one `el()` for all of them (loaded right after the
// transport, before the views). Text from the profiled program only ever goes in as `text`
// (textContent) or an attribute, never as markup.
"use strict";
(function () {
  /**
   * `el("li", {class, text, style: {…}, "data-x": …, "aria-label": …, other: property}, ...children)`:
   * `class` → className, `text` → textContent, `style` → CSSOM properties (which the pages' CSP
   * allows), `data-*` and `aria-*` → attributes, anything else → the element's property. `null`
   * and `undefined` children are left out.
   */
  function el(tag, props, ...children) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(props || {})) {
      if (k === "class") e.className = v;
      else if (k === "style") Object.assign(e.style, v);
      else if (k === "text") e.textContent = v;
      else if (k.startsWith("data-") || k.startsWith("aria-")) e.setAttribute(k, v);
      else e[k] = v;
    }
    for (const c of children) if (c != null) e.append(c);
    return e;
  }
  window.ThreadRadarDom = { el };
})();
