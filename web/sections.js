// The Sections panel (issue 18, docs/sections.md; CSI's three linked views): a call tree of the
// run's critical sections (nesting from the analysis' `nested_in`) with their figures, a
// squarified treemap of them by total hold time coloured by the coefficient of variation, and the
// selected section's executions (a line graph in time order, wait-to-enter stacked, outliers
// marked, and their distribution on a log axis). Selecting in one view selects in the others;
// clicking an execution asks `onExecution(fromS, toS, [thread])` (the Timeline tab at that moment).
// The page computes no figure the server has not: it lays out the `sections` answer. Program
// strings (locks, functions, files, threads) reach the DOM through textContent only, in SVG too.
//
//   const s = ThreadRadarSections.create(element, {
//     fetchSections: () => Promise<SectionsResult>,
//     onNavigate: (file, line) => {},
//     onExecution: (fromS, toS, threadIds) => {},
//     fetchViews: (params) => Promise<ViewsResult>,   // optional: the saved views (`views`)
//   });
//   s.select(index); s.selected(); s.view();
//   s.selectSection({file, function, lock, line});  // e.g. from the editor's section lens
//
// Saved views (CSI's annotations): the selected section, optionally one of its executions, and a
// note, saved by the server beside the runs; the list shows every saved view with the server's
// sentence on whether this run has its section (found by file, function and lock, not by line).
"use strict";
(function () {
  const SVG = "http://www.w3.org/2000/svg";
  const { el } = window.ThreadRadarDom;
  function sv(tag, attrs, text) {
    const e = document.createElementNS(SVG, tag);
    for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, String(v));
    if (text != null) e.textContent = text; // escaped by the DOM, never parsed
    return e;
  }
  function fmtS(s) {
    if (s == null || !isFinite(s)) return "–";
    const a = Math.abs(s);
    if (a >= 1) return s.toFixed(2) + " s";
    if (a >= 1e-3) return (s * 1e3).toFixed(a >= 0.1 ? 0 : 1) + " ms";
    return (s * 1e6).toFixed(0) + " µs";
  }
  function name(s) { return s.lock + " in " + s.function; }
  function waitSourceText(w) { return w === "kernel" ? "kernel-exact (scheduler events)" : w === "sampled" ? "sampled" : "no wait data in this run"; }
  function where(s) { return s.file.split(/[\\/]/).pop() + ":" + s.line; }
  // CV → colour: a sequential blue → orange → red scale, capped at 2 (legend drawn with it).
  const CV_MAX = 2;
  function cvColour(cv) {
    const t = Math.max(0, Math.min(1, cv / CV_MAX));
    const stops = [[70, 130, 200], [240, 170, 40], [210, 40, 40]];
    const i = t < 0.5 ? 0 : 1, u = t < 0.5 ? t * 2 : (t - 0.5) * 2;
    const c = stops[i].map((a, k) => Math.round(a + (stops[i + 1][k] - a) * u));
    return "rgb(" + c.join(",") + ")";
  }

  // Squarified treemap (Bruls, Huizing, van Wijk): items [{value, ...}] into the rectangle.
  function squarify(items, x, y, w, h) {
    const out = [];
    const total = items.reduce((t, i) => t + i.value, 0);
    if (!(total > 0)) return out;
    const scale = (w * h) / total;
    const rest = items.map((i) => ({ item: i, area: i.value * scale })).sort((a, b) => b.area - a.area);
    let row = [];
    const worst = (r, side) => {
      const s = r.reduce((t, i) => t + i.area, 0);
      let max = 0, min = Infinity;
      for (const i of r) { max = Math.max(max, i.area); min = Math.min(min, i.area); }
      return Math.max((side * side * max) / (s * s), (s * s) / (side * side * min));
    };
    const layoutRow = (r) => {
      const s = r.reduce((t, i) => t + i.area, 0);
      if (w >= h) {
        const rw = s / h;
        let yy = y;
        for (const i of r) { const ih = i.area / rw; out.push({ item: i.item, x, y: yy, w: rw, h: ih }); yy += ih; }
        x += rw; w -= rw;
      } else {
        const rh = s / w;
        let xx = x;
        for (const i of r) { const iw = i.area / rh; out.push({ item: i.item, x: xx, y, w: iw, h: rh }); xx += iw; }
        y += rh; h -= rh;
      }
    };
    for (const i of rest) {
      const side = Math.min(w, h);
      if (!row.length || worst(row.concat([i]), side) <= worst(row, side)) row.push(i);
      else { layoutRow(row); row = [i]; }
    }
    if (row.length) layoutRow(row);
    return out;
  }

  function create(root, opts) {
    const st = { view: null, selected: null, seq: 0, want: null, views: null };
    root.classList.add("sx-panel");
    const how = el("p", { class: "sx-how note" });
    // What the samples could not resolve (executions seen in one sample only), first and large.
    const banner = el("div", { class: "sx-unseen", role: "status", "aria-label": "What the sampling could not see" });
    banner.hidden = true;
    const notes = el("ul", { class: "sx-notes" });
    const tree = el("table", { class: "sx-tree", "aria-label": "Sections as a call tree" });
    const map = el("div", { class: "sx-treemap", "aria-label": "Treemap of sections by total hold time" });
    const legend = el("div", { class: "sx-legend" });
    const title = el("h3", { class: "sx-title" });
    const graph = el("div", { class: "sx-graph", "aria-label": "Executions of the selected section" });
    const hist = el("div", { class: "sx-hist", "aria-label": "Distribution of the selected section's durations" });
    const detailNote = el("p", { class: "sx-detail-note note" });
    // Which lock: its type, how the section was found, the objects threads waited on here.
    const lockLine = el("p", { class: "sx-lock" });
    // Saved views: the list, and the form that saves the selected section.
    const viewsList = el("ul", { class: "sx-views", "aria-label": "Saved views" });
    const viewsNote = el("p", { class: "sx-views-note muted" });
    const noteInput = el("input", { class: "sx-note-input", type: "text", maxLength: 4000, placeholder: "A note on the selected section", "aria-label": "Note" });
    const execPick = el("select", { class: "sx-save-exec", "aria-label": "What to save" });
    const saveButton = el("button", { class: "sx-save", type: "button", text: "Save view" });
    const saveForm = el("div", { class: "sx-save-form" }, noteInput, execPick, saveButton);
    const saved = el("div", { class: "sx-saved" }, el("h4", { text: "Saved views" }), viewsNote, viewsList);
    if (!opts.fetchViews) { saved.hidden = true; saveForm.hidden = true; }
    root.replaceChildren(banner, how, notes, saved,
      el("div", { class: "sx-top" }, el("div", { class: "sx-tree-box" }, tree), el("div", { class: "sx-map-box" }, map, legend)),
      el("div", { class: "sx-detail" }, title, lockLine, saveForm, detailNote, graph, hist));

    async function load() {
      const seq = ++st.seq;
      root.setAttribute("data-loading", "1");
      let v;
      try { v = await opts.fetchSections(); }
      catch (e) {
        if (seq !== st.seq) return;
        how.textContent = "The sections could not be computed: " + (e && e.message || e);
        root.setAttribute("data-error", how.textContent);
        root.removeAttribute("data-loading");
        return;
      }
      if (seq !== st.seq) return;
      st.view = v;
      render();
      root.removeAttribute("data-loading");
      root.setAttribute("data-rendered", String(seq));
    }

    function render() {
      const v = st.view;
      how.textContent = "How this was obtained: " + v.how + " Durations are ± one sampling interval (" + fmtS(v.interval_s) +
        "); executions shorter than that are counted, not listed. Wait to enter: " + waitSourceText(v.wait_source) + ".";
      notes.replaceChildren(...v.notes.map((n) => el("li", { class: "note", text: n })));
      renderUnseen(v.unseen);
      if (!v.sections.length) {
        tree.replaceChildren(el("caption", { text: "No critical sections were found in this run (see docs/sections.md for what is recognised and how to configure more)." }));
        map.replaceChildren(); legend.replaceChildren(); graph.replaceChildren(); hist.replaceChildren(); title.textContent = "";
        return;
      }
      renderTree();
      renderMap();
      const wanted = st.want ? findRef(st.want) : -1;
      const first = wanted >= 0 ? wanted : st.selected != null && st.selected < v.sections.length ? st.selected : biggest();
      select(first);
      if (st.want) wantNote(wanted);
      st.want = null;
      if (opts.fetchViews && !st.views) loadViews({});
    }
    // The banner: listed vs. seen in one sample, and the interval that would list them (the
    // server's sentence; the figures as attributes for tests).
    function renderUnseen(u) {
      banner.hidden = !u || !u.short_at_least;
      banner.classList.toggle("sx-unseen-none", !u || !u.short_at_least);
      if (!u) { banner.replaceChildren(); return; }
      banner.setAttribute("data-listed", String(u.listed));
      banner.setAttribute("data-short", String(u.short_at_least));
      banner.setAttribute("data-interval-ms", u.interval_ms == null ? "" : String(u.interval_ms));
      const total = u.listed + u.short_at_least;
      banner.replaceChildren(
        el("div", { class: "sx-unseen-figures" },
          el("strong", { class: "sx-unseen-listed", text: u.listed + " listed" }),
          el("span", { text: " of at least " + total + " executions seen · " }),
          el("strong", { class: "sx-unseen-short", text: u.short_at_least + " too short to list" }),
          el("span", { text: " (sampled: seen in one sample, shorter than ~" + fmtS(u.shorter_than_s) + ")" })),
        el("div", { class: "sx-unseen-sentence", text: u.sentence }));
    }
    // The section a reference names in this run: the same file, function, lock and entry line.
    function findRef(r) {
      return st.view.sections.findIndex((s) => s.file === r.file && s.lock === r.lock && s.line === Number(r.line) && (r.function == null || s.function === r.function));
    }
    function wantNote(found) {
      if (found >= 0) root.setAttribute("data-wanted", String(found));
      else { root.setAttribute("data-wanted", "-1"); detailNote.textContent = "The section asked for (" + st.want.lock + " at " + String(st.want.file).split(/[\\/]/).pop() + ":" + st.want.line + ") is not in this run; showing the section held longest instead. " + detailNote.textContent; }
    }
    function selectSection(r) {
      st.want = r;
      if (!st.view) return;
      const i = findRef(r);
      if (i >= 0) select(i);
      wantNote(i);
      st.want = null;
    }

    // ---- saved views ------------------------------------------------------------------------------
    async function loadViews(params) {
      let v;
      try { v = await opts.fetchViews(params); }
      catch (e) {
        viewsNote.textContent = "Saved views: " + (e && e.message || e);
        saved.setAttribute("data-error", viewsNote.textContent);
        return null;
      }
      saved.removeAttribute("data-error");
      st.views = v;
      renderViews();
      return v;
    }
    function renderViews() {
      const v = st.views;
      viewsNote.textContent = v.views.length ? "Stored in " + v.file + "; each is looked up in this run by file, function and lock." :
        "No saved views yet: select a section (and an execution), write a note and press Save view. They are stored in " + v.file + ".";
      viewsList.replaceChildren(...v.views.map((item) => {
        const s = item.section;
        const what = s.lock + " in " + s.function + " (" + s.file.split(/[\\/]/).pop() + ":" + s.line + ")" +
          (item.execution ? ", execution #" + (item.execution.index + 1) + " at " + item.execution.start_s.toFixed(3) + " s (" + fmtS(item.execution.duration_s) + ")" : "") +
          (item.thread ? ", thread " + item.thread : "");
        const open = el("button", { type: "button", class: "sx-view-open", text: "Open", disabled: item.section_index == null, title: item.section_index == null ? "Not in this run" : "Select it in every view" });
        const del = el("button", { type: "button", class: "sx-view-delete", text: "Delete" });
        open.addEventListener("click", () => openView(item));
        del.addEventListener("click", () => loadViews({ delete: item.id }));
        return el("li", { class: "sx-view", "data-view-id": item.id, "data-found": item.section_index == null ? "0" : "1" },
          el("span", { class: "sx-view-note", text: item.note || "(no note)" }), " ",
          el("span", { class: "sx-view-what muted", text: what }), " ",
          el("span", { class: "sx-view-status", text: item.status }), " ", open, " ", del);
      }));
      saved.setAttribute("data-count", String(v.views.length));
    }
    // A saved view: its section selected in every view; on the run it was saved on, its execution
    // (or its thread's executions) marked in the graph.
    function openView(item) {
      if (item.section_index == null || !st.view) return;
      select(item.section_index);
      const s = st.view.sections[item.section_index];
      for (const c of graph.querySelectorAll("circle.sx-exec")) {
        const e = s.executions[Number(c.getAttribute("data-exec"))];
        const mark = item.same_run && (item.execution ? Number(c.getAttribute("data-exec")) === item.execution.index : item.thread != null && e && e.thread === item.thread);
        c.classList.toggle("sx-saved", !!mark);
      }
      noteInput.value = "";
      root.setAttribute("data-opened-view", item.id);
    }
    async function saveView() {
      const s = st.view && st.view.sections[st.selected];
      if (!s) return;
      const save = { section: { file: s.file, function: s.function, lock: s.lock, line: s.line }, note: noteInput.value };
      if (execPick.value !== "") save.execution = Number(execPick.value);
      const v = await loadViews({ save });
      if (v) { noteInput.value = ""; viewsNote.textContent = "Saved. " + viewsNote.textContent; }
    }
    saveButton.addEventListener("click", saveView);
    noteInput.addEventListener("keydown", (ev) => { if (ev.key === "Enter") saveView(); });
    function fillExecPick(s) {
      const outliers = new Set(s.outliers);
      execPick.replaceChildren(el("option", { value: "", text: "the whole section" }),
        ...s.executions.map((e, k) => el("option", { value: String(k), text: "execution #" + (k + 1) + " · " + e.thread + " · " + fmtS(e.duration_s) + (outliers.has(k) ? " · outlier" : "") })));
    }
    function biggest() {
      let b = 0;
      st.view.sections.forEach((s, i) => { if (s.total_hold_s > st.view.sections[b].total_hold_s) b = i; });
      return b;
    }

    // ---- call tree ------------------------------------------------------------------------------
    // A section's parent is the innermost of the sections it was seen nested in (the one of them
    // that is itself nested in the most); roots are the sections seen in no other.
    function renderTree() {
      const secs = st.view.sections;
      const parent = secs.map((s) => {
        let p = null;
        for (const o of s.nested_in) if (o !== secs.indexOf(s) && (p == null || secs[o].nested_in.length > secs[p].nested_in.length)) p = o;
        return p;
      });
      const kids = secs.map(() => []);
      const roots = [];
      secs.forEach((_, i) => (parent[i] == null ? roots : kids[parent[i]]).push(i));
      const order = (a, b) => secs[b].total_hold_s - secs[a].total_hold_s || a - b;
      const rows = [];
      const seen = new Set();
      const walk = (i, depth) => {
        if (seen.has(i)) return;
        seen.add(i);
        rows.push(row(i, depth));
        kids[i].sort(order).forEach((k) => walk(k, depth + 1));
      };
      roots.sort(order).forEach((r) => walk(r, 0));
      secs.forEach((_, i) => walk(i, 0)); // a nesting cycle: still list every section once
      const head = el("tr", {}, ...["section", "executions", "total hold", "median", "p99", "CV", "others waited"].map((t) => el("th", { text: t })));
      tree.replaceChildren(el("caption", { text: "Sections (sampled; nesting as seen on the stacks)" }), el("thead", {}, head), el("tbody", {}, ...rows));
    }
    function row(i, depth) {
      const s = st.view.sections[i];
      const label = el("span", { class: "sx-name", text: name(s) });
      const loc = el("a", { class: "sx-where", href: "#", text: where(s), title: s.file + ":" + s.line });
      loc.addEventListener("click", (ev) => { ev.preventDefault(); ev.stopPropagation(); if (opts.onNavigate) opts.onNavigate(s.file, s.line); });
      const first = el("td", { class: "sx-first" }, label, " ", loc);
      first.style.paddingLeft = (4 + depth * 16) + "px";
      const count = s.short.count_at_least > 0 ? s.execution_count + " (" + s.short.count_at_least + " short)" : String(s.execution_count);
      const tr = el("tr", { class: "sx-row", "data-section": String(i), "data-depth": String(depth), title: "found " + s.found + "; lock " + (s.lock_type || "of unknown type") },
        first,
        el("td", { class: "num", text: count }),
        el("td", { class: "num", text: fmtS(s.total_hold_s) }),
        el("td", { class: "num", text: fmtS(s.median_s) }),
        el("td", { class: "num", text: fmtS(s.p99_s) }),
        el("td", { class: "num", text: s.cv.toFixed(2) }),
        el("td", { class: "num", text: fmtS(s.others_waited_s) }));
      tr.addEventListener("click", () => select(i));
      return tr;
    }

    // ---- treemap --------------------------------------------------------------------------------
    function renderMap() {
      const W = Math.max(240, Math.floor(map.clientWidth || 420)), H = 260;
      const items = st.view.sections.map((s, i) => ({ value: s.total_hold_s, index: i }));
      const svg = sv("svg", { width: W, height: H, viewBox: "0 0 " + W + " " + H, role: "img", class: "sx-map-svg" });
      svg.append(sv("title", {}, "Sections by total hold time (area), coloured by CV"));
      const cells = squarify(items.filter((i) => i.value > 0), 0, 0, W, H);
      for (const c of cells) {
        const s = st.view.sections[c.item.index];
        const g = sv("g", { class: "sx-cell", "data-section": c.item.index });
        g.append(sv("rect", { x: c.x.toFixed(1), y: c.y.toFixed(1), width: Math.max(0, c.w - 1).toFixed(1), height: Math.max(0, c.h - 1).toFixed(1), fill: cvColour(s.cv) }));
        g.append(sv("title", {}, name(s) + " (" + where(s) + "): held " + fmtS(s.total_hold_s) + ", CV " + s.cv.toFixed(2)));
        if (c.w > 50 && c.h > 16) {
          const clip = "sx-clip-" + c.item.index;
          const cp = sv("clipPath", { id: clip });
          cp.append(sv("rect", { x: c.x, y: c.y, width: c.w, height: c.h }));
          g.append(cp);
          g.append(sv("text", { x: (c.x + 3).toFixed(1), y: (c.y + 12).toFixed(1), "clip-path": "url(#" + clip + ")", class: "sx-cell-label" }, name(s)));
        }
        g.addEventListener("click", () => select(c.item.index));
        svg.append(g);
      }
      map.replaceChildren(svg);
      const zero = st.view.sections.filter((s) => !(s.total_hold_s > 0)).length;
      const scale = sv("svg", { width: 160, height: 12 });
      for (let k = 0; k < 16; k++) scale.append(sv("rect", { x: k * 10, y: 0, width: 10, height: 12, fill: cvColour((k + 0.5) / 16 * CV_MAX) }));
      legend.replaceChildren(el("span", { text: "area = total hold time · colour = CV  0 " }), scale, el("span", { text: " ≥ " + CV_MAX }),
        ...(zero ? [el("span", { class: "muted", text: " · " + zero + " section(s) without a listed hold time not drawn" })] : []));
    }

    // ---- the selected section -------------------------------------------------------------------
    function select(i) {
      const v = st.view;
      if (!v || !v.sections[i]) return;
      st.selected = i;
      for (const r of tree.querySelectorAll("tr.sx-row")) r.classList.toggle("selected", Number(r.getAttribute("data-section")) === i);
      for (const c of map.querySelectorAll("g.sx-cell")) c.classList.toggle("selected", Number(c.getAttribute("data-section")) === i);
      const s = v.sections[i];
      title.textContent = name(s) + " (" + where(s) + ")";
      const objects = (s.lock_objects || []).map((o) => el("li", { class: "sx-lock-object", text: o.type_name + " at " + o.address + " · waited on in " + o.samples + " sample" + (o.samples === 1 ? "" : "s") }));
      lockLine.replaceChildren(
        el("span", { class: "sx-lock-type", text: "Lock " + s.lock + (s.lock_type ? " (" + s.lock_type + ")" : " (type unknown)") }),
        el("span", { class: "muted sx-found", text: " · found " + s.found }),
        ...(objects.length ? [el("span", { text: " · threads waited here on:" }), el("ul", { class: "sx-lock-objects" }, ...objects)] : []));
      detailNote.textContent = s.executions.length + " listed executions in time order, each with its ± uncertainty; outliers (even the shortest possible duration above " + fmtS(s.outlier_threshold_s) + ") marked in red" +
        (s.short.count_at_least ? "; at least " + s.short.count_at_least + " shorter executions (seen in one sample, " + fmtS(s.short.total_s) + " in all) are counted, not listed" : "") +
        ". Each duration is ± " + fmtS(v.interval_s) + ". Click an execution to see it on the timeline.";
      renderGraph(s);
      renderHist(s);
      fillExecPick(s);
      root.setAttribute("data-selected", String(i));
    }

    function renderGraph(s) {
      const W = Math.max(300, Math.floor(graph.clientWidth || 700)), H = 200, L = 56, B = 24, T = 8, R = 8;
      const ex = s.executions;
      const svg = sv("svg", { width: W, height: H, class: "sx-graph-svg" });
      if (!ex.length) { graph.replaceChildren(el("p", { class: "muted", text: "No execution of this section was seen in two samples or more: nothing to draw." })); return; }
      const ymax = Math.max(...ex.map((e) => e.duration_s + (e.wait_s || 0))) * 1.05 || 1;
      const n = ex.length;
      const xOf = (k) => L + (n === 1 ? (W - L - R) / 2 : k * (W - L - R) / (n - 1));
      const yOf = (d) => H - B - (d / ymax) * (H - B - T);
      svg.append(sv("line", { x1: L, y1: H - B, x2: W - R, y2: H - B, class: "sx-axis" }));
      svg.append(sv("line", { x1: L, y1: T, x2: L, y2: H - B, class: "sx-axis" }));
      for (const f of [0, 0.5, 1]) {
        svg.append(sv("text", { x: L - 4, y: yOf(ymax * f) + 4, "text-anchor": "end", class: "sx-tick" }, fmtS(ymax * f)));
      }
      svg.append(sv("text", { x: (L + W - R) / 2, y: H - 6, "text-anchor": "middle", class: "sx-tick" }, "execution (time order), 1 – " + n));
      // Wait to enter, stacked under the hold: the duration line sits on top of the wait.
      const hasWait = ex.some((e) => e.wait_s != null && e.wait_s > 0);
      if (hasWait) {
        let d = "M" + xOf(0) + "," + yOf(0);
        ex.forEach((e, k) => { d += " L" + xOf(k).toFixed(1) + "," + yOf(e.wait_s || 0).toFixed(1); });
        d += " L" + xOf(n - 1) + "," + yOf(0) + " Z";
        svg.append(sv("path", { d, class: "sx-wait" }));
      }
      const pts = ex.map((e, k) => xOf(k).toFixed(1) + "," + yOf((e.wait_s || 0) + e.duration_s).toFixed(1)).join(" ");
      svg.append(sv("polyline", { points: pts, class: "sx-line" }));
      const out = new Set(s.outliers);
      // Each duration's uncertainty (± error_s) as a vertical bar: an execution is an outlier only
      // when even its shortest possible duration is above the threshold.
      ex.forEach((e, k) => {
        const base = e.wait_s || 0;
        svg.append(sv("line", { x1: xOf(k).toFixed(1), x2: xOf(k).toFixed(1), y1: yOf(base + Math.max(0, e.duration_s - e.error_s)).toFixed(1), y2: yOf(Math.min(ymax, base + e.duration_s + e.error_s)).toFixed(1), class: "sx-err" }));
      });
      ex.forEach((e, k) => {
        const o = out.has(k);
        const c = sv("circle", { cx: xOf(k).toFixed(1), cy: yOf((e.wait_s || 0) + e.duration_s).toFixed(1), r: o ? 4 : 2.5, class: "sx-exec" + (o ? " sx-outlier" : ""), "data-exec": k, "data-outlier": o ? "1" : "0" });
        c.append(sv("title", {}, "#" + (k + 1) + " " + e.thread + " at " + e.start_s.toFixed(3) + " s: held " + fmtS(e.duration_s) + " ± " + fmtS(e.error_s) +
          (e.wait_s != null ? ", waited " + fmtS(e.wait_s) + " to enter" : "") + (o ? " (outlier)" : "")));
        c.addEventListener("click", () => {
          const pad = Math.max(e.duration_s, 0.01) * 2;
          if (opts.onExecution) opts.onExecution(Math.max(0, e.start_s - pad), e.start_s + e.duration_s + pad, [e.thread_id]);
        });
        svg.append(c);
      });
      const key = el("div", { class: "sx-key" },
        el("span", { class: "sx-key-line", text: "— held (+ wait) " }),
        hasWait ? el("span", { class: "sx-key-wait", text: "▇ wait to enter (" + waitSourceText(st.view.wait_source) + ") " }) : el("span", { class: "muted", text: "no wait to enter seen " }),
        el("span", { class: "sx-key-out", text: "● outlier" }));
      graph.replaceChildren(svg, key);
    }

    // The server's histogram of the listed durations on a log x axis (bins of equal ratio).
    function renderHist(s) {
      const W = Math.max(300, Math.floor(hist.clientWidth || 700)), H = 140, L = 40, B = 24, T = 6, R = 8;
      const h = s.histogram;
      if (!h.bins.length) { hist.replaceChildren(); return; }
      const lo = Math.log10(h.from_s), hi = Math.log10(h.to_s);
      const cmax = Math.max(...h.bins.map((b) => b.count));
      const svg = sv("svg", { width: W, height: H, class: "sx-hist-svg" });
      const bw = (W - L - R) / h.bins.length;
      h.bins.forEach((b, k) => {
        if (!b.count) return;
        const y = (b.count / cmax) * (H - B - T);
        const r = sv("rect", { x: (L + k * bw).toFixed(1), y: (H - B - y).toFixed(1), width: Math.max(1, bw - 1).toFixed(1), height: y.toFixed(1), class: "sx-bar", "data-count": b.count, "data-bin": k });
        r.append(sv("title", {}, b.count + " executions of " + fmtS(b.from_s) + " – " + fmtS(b.to_s)));
        svg.append(r);
      });
      svg.append(sv("line", { x1: L, y1: H - B, x2: W - R, y2: H - B, class: "sx-axis" }));
      const lt = Math.log10(s.outlier_threshold_s);
      if (s.outlier_threshold_s > 0 && lt >= lo && lt <= hi) {
        const x = L + (lt - lo) / (hi - lo) * (W - L - R);
        svg.append(sv("line", { x1: x, y1: T, x2: x, y2: H - B, class: "sx-threshold" }));
        svg.append(sv("text", { x: x + 3, y: T + 10, class: "sx-tick sx-threshold-label" }, "outlier threshold " + fmtS(s.outlier_threshold_s)));
      }
      for (let p = Math.ceil(lo); p <= Math.floor(hi); p++) {
        const x = L + (p - lo) / (hi - lo) * (W - L - R);
        svg.append(sv("line", { x1: x, y1: H - B, x2: x, y2: H - B + 4, class: "sx-axis" }));
        svg.append(sv("text", { x, y: H - 8, "text-anchor": "middle", class: "sx-tick" }, fmtS(Math.pow(10, p))));
      }
      svg.append(sv("text", { x: L - 4, y: T + 10, "text-anchor": "end", class: "sx-tick" }, String(cmax)));
      hist.replaceChildren(el("div", { class: "sx-hist-title", text: "Distribution of durations (log scale; " + h.count + " listed executions)" }), svg);
    }

    load();
    return {
      select,
      selectSection,
      views: () => st.views,
      selected: () => st.selected,
      view: () => st.view,
      refresh: load,
    };
  }

  window.ThreadRadarSections = { create, squarify };
})();
