// The overview and detail panels (spec §5; paper §4.2, §6.1). Everything computed comes from the
// transport (clusters, figures, SVGs); this file only lays it out. Data from the profiled program
// (thread, function, file names) goes into the page through textContent only; the SVGs come from
// ThreadRadar's own SVG writer, which escapes every text, and are parsed as XML, never as HTML.
"use strict";
(function () {
  const T = window.ThreadRadarTransport;
  /** An element of the page by id (the page is ours: forms, tables and canvases alike). @type {(id: string) => any} */
  const $ = (id) => document.getElementById(id);
  const state = {
    units: "threads",    // what the figures count: "threads", or "tasks" (asyncio tasks and threads)
    global: [],          // the applied thread filter (excluded thread ids)
    window: null,        // the applied time window {from_s, to_s} (a brush on the timeline), or null
    excluded: new Set(), // the detail view's selection: deselected threads
    detailKey: null,
    detail: null,
    overview: null,
    overviewTab: "functions",
    treeTab: "cluster",
    theme: "light",
    states: undefined,   // counted states: left out, so the server's (the editor's setting, else auto) apply
    seq: { overview: 0, detail: 0 },
  };

  // ---- helpers -------------------------------------------------------------------------------
  const { el } = window.ThreadRadarDom;
  function pct(x) { return x == null ? "–" : (x * 100).toFixed(1) + "%"; }
  function svgNode(text) {
    const doc = new DOMParser().parseFromString(text, "image/svg+xml");
    const root = doc.documentElement;
    if (!root || root.nodeName !== "svg" || doc.getElementsByTagName("parsererror").length) {
      return el("span", { class: "error", text: "unreadable glyph" });
    }
    return document.importNode(root, true);
  }
  // One error line for the page; `from` names the view whose request failed, so that another
  // view's success (the overview and the detail reload together) does not hide it.
  let errorFrom = null;
  function showError(err, from) {
    const box = $("error");
    if (!err) {
      if (from && errorFrom && errorFrom !== from) return;
      box.hidden = true; box.textContent = ""; errorFrom = null;
      return;
    }
    box.textContent = err.message || String(err);
    box.hidden = false;
    errorFrom = from || null;
  }
  function status(text) { $("status").textContent = text || ""; }
  function colourClass(c) { return c ? "c-" + c : ""; }
  function where(file, line) { return file ? (file.split("/").pop() + (line ? ":" + line : "")) : ""; }
  function navigate(file, line) {
    if (!file) { status("No source location is known for this entry."); return; }
    T.navigate(file, line || 1).then((r) => status("Opened " + ((r && r.shown) || file + ":" + (line || 1))), showError);
  }
  function params(extra) {
    return Object.assign({ exclude_threads: state.global.slice(), states: state.states, theme: state.theme }, extra || {});
  }
  function debounce(fn, ms) { let t; return (...a) => { clearTimeout(t); t = setTimeout(() => fn(...a), ms); }; }

  // ---- theme ---------------------------------------------------------------------------------
  function pickTheme() {
    const choice = $("theme").value;
    if (T.mode === "static") return "light";
    if (choice === "light" || choice === "dark") return choice;
    if (document.body.classList.contains("vscode-dark") || document.body.classList.contains("vscode-high-contrast")) return "dark";
    if (document.body.classList.contains("vscode-light")) return "light";
    return window.matchMedia && window.matchMedia("(prefers-color-scheme: dark)").matches ? "dark" : "light";
  }
  function applyPalette(palette) {
    const p = palette[state.theme];
    const root = document.documentElement.style;
    root.setProperty("--low", p.strong[0]);
    root.setProperty("--middle", p.strong[1]);
    root.setProperty("--high", p.strong[2]);
    root.setProperty("--deselected", p.deselected);
    root.setProperty("--outline", p.outline);
    document.body.classList.toggle("dark", state.theme === "dark");
  }

  // ---- overview ------------------------------------------------------------------------------
  function overviewRequest() {
    const words = (id) => $(id).value.trim() ? [$(id).value.trim()] : [];
    return params({
      include: words("include"),
      exclude: words("exclude"),
      hide_stdlib: $("hide-stdlib").checked,
      hide_third_party: $("hide-third-party").checked,
      only_file: $("only-file").checked && $("current-file").value ? $("current-file").value : null,
    });
  }

  async function loadOverview() {
    const seq = ++state.seq.overview;
    let ov;
    try { ov = await T.request("overview", overviewRequest()); }
    catch (e) { if (seq === state.seq.overview) showError(e, "overview"); return; }
    if (seq !== state.seq.overview) return;
    showError(null, "overview");
    state.overview = ov;
    applyPalette(ov.palette);
    renderOverview(ov);
    $("overview").setAttribute("data-rendered", seq); // lets tests wait for a render
    loadRunSet(seq);
  }

  // ---- run set: the active run's set (record --repeat N), each figure's mean and spread ------------
  function spreadText(s, f) {
    return s.sd == null ? f(s.mean) + " (1 run)" : f(s.mean) + " ± " + f(s.sd) + " [" + f(s.min) + "–" + f(s.max) + "]";
  }
  async function loadRunSet(seq) {
    const box = $("run-set");
    const req = overviewRequest();
    let rs = null;
    try {
      rs = (await T.request("runSet", { level: "function", top: 10, include: req.include, exclude: req.exclude, hide_stdlib: req.hide_stdlib, hide_third_party: req.hide_third_party, states: req.states })).set;
    } catch (e) {
      rs = null; // a run set that cannot be read: the overview stands without it
    }
    if (seq !== state.seq.overview) return;
    if (!rs) { box.hidden = true; box.replaceChildren(); box.setAttribute("data-rendered", seq); return; }
    const n = rs.runs.length;
    const num = (x) => x.toFixed(1);
    const rows = rs.artifacts.map((a) => {
      const name = el("span", { class: "name", text: a.qualname, title: where(a.file, a.line) });
      name.addEventListener("click", () => navigate(a.file, a.line));
      return el("tr", { class: "run-set-row", "data-qualname": a.qualname },
        el("td", {}, name),
        el("td", { class: "num rs-crt", text: spreadText(a.crt, pct) }),
        el("td", { class: "num rs-threads", text: spreadText(a.threads, num) }),
        el("td", { class: "num", text: a.executed_in + " of " + n }));
    });
    const p = rs.program;
    box.replaceChildren(
      el("h3", { text: "Run set " + rs.label + " · " + n + " runs" + (rs.active_index != null ? " (this is run " + (rs.active_index + 1) + ")" : "") }),
      el("p", { class: "note rs-how", text: rs.how }),
      el("p", { class: "rs-program", text: "Program: threads " + spreadText(p.threads, num) + " · clusters " + spreadText(p.clusters, num) + " · counted " + spreadText(p.seconds, (x) => x.toFixed(2) + " s") }),
      ...rs.notes.map((t) => el("p", { class: "note rs-note", text: t })),
      el("table", { class: "run-set-table" },
        el("thead", {}, el("tr", {}, ...["function", "crt (mean ± sd [min–max])", "threads", "executed in"].map((t) => el("th", { text: t })))),
        el("tbody", {}, ...rows)));
    box.hidden = false;
    box.setAttribute("data-rendered", seq);
  }

  // What the figures count (the run's `units`): threads, or asyncio tasks and threads.
  const unitsWord = () => (state.units === "tasks" ? "tasks/threads" : "threads");

  function renderOverview(ov) {
    const r = ov.run;
    state.units = r.units || "threads";
    const tasks = state.units === "tasks";
    document.querySelector('[data-tab="threads"]').firstChild.textContent = tasks ? "Tasks/threads " : "Threads ";
    for (const dt of document.querySelectorAll("dt")) if (/^(thread )?types$/.test(dt.textContent)) dt.textContent = tasks ? "types" : "thread types";
    $("run-info").textContent = (r.command || []).join(" ") + " · " + r.duration_s.toFixed(1) + " s · " + r.thread_count + " " + unitsWord() + " · " + r.counted_samples + " counted samples";
    showFilterInfo();
    $("program-glyph").replaceChildren(svgNode(ov.program.glyph_svg));
    const clusters = ov.program.clusters.map((c) => c.threads.length + " " + c.colour);
    $("program-figures").textContent = ov.program.threads + " " + unitsWord() + ", " + ov.program.thread_types + (tasks ? " types" : " thread types") + (clusters.length ? "; clusters: " + clusters.join(", ") : "");
    $("program-figures").setAttribute("data-threads", ov.program.threads);
    const cur = $("current-file").value;
    $("current-file").replaceChildren(...ov.files.map((f) => el("option", { value: f, text: f, selected: f === cur })));
    fillList($("functions"), ov.functions);
    fillList($("classes"), ov.classes);
    $("count-functions").textContent = "(" + ov.listed_functions + ")";
    $("count-classes").textContent = "(" + ov.listed_classes + ")";
    const rows = ov.threads.filter((t) => t.samples > 0 || t.excluded).sort((a, b) => b.crt - a.crt || a.id - b.id);
    $("count-threads").textContent = "(" + rows.length + ")";
    $("threads").tBodies[0].replaceChildren(...rows.map((t) => {
      const name = el("span", { class: "name " + colourClass(t.colour), text: t.name, title: t.file ? where(t.file, t.line) : "no source location" });
      name.addEventListener("click", () => navigate(t.file, t.line));
      return el("tr", { class: "thread-row" + (t.excluded ? " deselected" : ""), "data-thread": t.id, "data-crt": t.crt },
        el("td", {}, name), el("td", { text: t.type }), el("td", { class: "num", text: t.excluded ? "excluded" : pct(t.crt) }));
    }));
    const note = $("overview-note");
    note.hidden = !ov.note;
    note.textContent = ov.note || "";
  }

  function fillList(list, entries) {
    list.replaceChildren(...entries.map((a) => {
      const glyph = el("button", { class: "glyph-button", title: "Details of " + a.qualname });
      glyph.append(svgNode(a.glyph_svg));
      glyph.addEventListener("click", () => openDetail(a.key));
      const name = el("span", { class: "name", text: a.qualname, title: a.file + (a.line ? ":" + a.line : "") });
      name.addEventListener("click", () => navigate(a.file, a.line));
      const label = el("div", {}, name, el("span", { class: "where", text: where(a.file, a.line) }));
      return el("li", { class: "entry", "data-key": a.key, "data-crt": a.crt }, glyph, el("span", { class: "crt", text: pct(a.crt) }), label);
    }));
  }

  // ---- detail --------------------------------------------------------------------------------
  function openDetail(key) {
    if (compareState.view === "compare") showView("panels");
    state.detailKey = key;
    state.excluded = new Set(state.global);
    $("detail").hidden = false;
    loadDetail();
  }

  async function loadDetail() {
    if (!state.detailKey) return;
    const seq = ++state.seq.detail;
    const box = $("histogram");
    const req = params({
      artifact: state.detailKey,
      exclude_threads: [...state.excluded].sort((a, b) => a - b),
      histogram_width: Math.max(120, Math.floor(box.clientWidth || 480)),
      histogram_height: 120,
    });
    let d;
    try { d = await T.request("detail", req); }
    catch (e) {
      if (seq !== state.seq.detail) return;
      if (e.isStatic && state.detail) { noteDetail(e.message); renderTree(state.detail); return; }
      showError(e, "detail");
      clearDetail(e.message);
      return;
    }
    if (seq !== state.seq.detail) return;
    showError(null, "detail");
    state.detail = d;
    renderDetail(d);
    if (timeline) timeline.setArtifact(d.artifact.key === "program" ? null : d.artifact.key, clusterColours(d.artifact));
    $("detail").setAttribute("data-rendered", seq);
  }

  // The detail's artifact has no figures under this request (e.g. another run became active
  // and it is not in it): the previous figures go, so nothing is drawn without evidence.
  function clearDetail(message) {
    state.detail = null;
    for (const id of ["preview", "histogram", "tree", "callers", "callees"]) $(id).replaceChildren();
    for (const f of $("info-selection").querySelectorAll("[data-field]")) f.textContent = "–";
    noteDetail(message);
    $("detail").setAttribute("data-cleared", String(state.seq.detail));
  }

  function noteDetail(text) {
    const n = $("detail-note");
    n.hidden = !text;
    n.textContent = text || "";
  }

  function renderDetail(d) {
    const a = d.artifact;
    const title = $("detail-title");
    title.textContent = a.kind === "program" ? "Program" : a.qualname + "  (" + a.kind + ", " + where(a.file, a.line) + ")";
    title.onclick = (ev) => { ev.preventDefault(); if (a.file) navigate(a.file, a.line); };
    const svg = svgNode(a.glyph_svg);
    $("preview").replaceChildren(svg);
    for (const hit of svg.querySelectorAll(".hit")) {
      const i = Number(hit.getAttribute("data-cluster"));
      hit.addEventListener("mouseenter", () => hover(svg, a, i));
      hit.addEventListener("mouseleave", () => hover(svg, a, null));
    }
    hover(svg, a, null);
    const s = d.selection;
    fillInfo($("info-selection"), { crt_sum: pct(s.crt_sum), crt: pct(s.crt), thread_types: s.thread_types, threads: s.threads });
    $("histogram").replaceChildren(svgNode(d.histogram_svg));
    noteDetail(d.note);
    renderTree(d);
    renderEdges($("callers"), d.callers);
    renderEdges($("callees"), d.callees);
    $("selection-state").textContent = selectionText();
  }

  function selectionText() {
    const changed = !sameSet(state.excluded, new Set(state.global));
    return (state.excluded.size ? state.excluded.size + " " + unitsWord() + " deselected" : "all " + unitsWord() + " selected") + (changed ? " (preview; Apply to filter every view)" : "");
  }
  function sameSet(a, b) { return a.size === b.size && [...a].every((x) => b.has(x)); }

  function hover(svg, a, i) {
    for (const o of svg.querySelectorAll(".outline")) o.setAttribute("visibility", Number(o.getAttribute("data-cluster")) === i ? "visible" : "hidden");
    const box = $("info-hover");
    if (i == null || !a.clusters[i]) {
      fillInfo(box, { name: "(none)", sum: "–", avg: "–", thread_types: "–", threads: "–" });
      box.removeAttribute("data-cluster");
      return;
    }
    const c = a.clusters[i];
    box.setAttribute("data-cluster", i);
    fillInfo(box, { name: c.colour, sum: pct(c.sum), avg: pct(c.avg), thread_types: c.thread_types, threads: c.threads.length });
  }

  function fillInfo(box, values) {
    for (const [k, v] of Object.entries(values)) {
      const f = box.querySelector('[data-field="' + k + '"]');
      if (f) f.textContent = String(v);
    }
  }

  function renderTree(d) {
    const byId = new Map(d.threads.map((t) => [t.id, t]));
    let groups;
    if (state.treeTab === "cluster") {
      groups = d.artifact.clusters.map((c) => ({ label: "Cluster " + (c.index + 1) + " (" + c.colour + ")", colour: c.colour, ids: c.threads }));
      const rest = d.threads.filter((t) => t.cluster == null).map((t) => t.id);
      if (rest.length) groups.push({ label: "Deselected", colour: null, ids: rest });
    } else {
      groups = d.types.map((g) => ({ label: g.name, colour: null, ids: g.threads }));
    }
    $("tree").replaceChildren(...groups.map((g) => {
      const ids = g.ids.filter((id) => byId.has(id));
      const on = ids.filter((id) => !state.excluded.has(id)).length;
      const box = el("input", { type: "checkbox", checked: on > 0, indeterminate: on > 0 && on < ids.length, title: "Select or deselect the whole group" });
      box.addEventListener("click", (ev) => ev.stopPropagation());
      box.addEventListener("change", () => setSelected(ids, box.checked));
      const summary = el("summary", { class: "group " + colourClass(g.colour) + (on === 0 ? " deselected" : "") }, box, " ", el("span", { text: g.label + " · " + ids.length + " " + unitsWord() }));
      const items = ids.map((id) => {
        const t = byId.get(id);
        const off = state.excluded.has(id);
        const cb = el("input", { type: "checkbox", checked: !off, title: "Select or deselect " + t.name });
        cb.addEventListener("change", () => setSelected([id], cb.checked));
        const name = el("span", { class: "name", text: t.name, title: t.file ? where(t.file, t.line) : "no source location" });
        name.addEventListener("click", () => navigate(t.file, t.line));
        const value = el("span", { class: "value", text: "  " + pct(t.crt != null ? t.crt : t.crt_all) });
        return el("li", { class: "thread " + colourClass(t.colour) + (off ? " deselected" : ""), "data-thread": id }, cb, name, value);
      });
      return el("details", { open: true, class: "tree-group" }, summary, el("ul", {}, ...items));
    }));
  }

  function setSelected(ids, selected) {
    for (const id of ids) { if (selected) state.excluded.delete(id); else state.excluded.add(id); }
    // Grey at once, then ask for the preview.
    for (const li of $("tree").querySelectorAll("li.thread")) li.classList.toggle("deselected", state.excluded.has(Number(li.getAttribute("data-thread"))));
    $("selection-state").textContent = selectionText();
    loadDetail();
  }

  function renderEdges(list, edges) {
    list.replaceChildren(...(edges.length ? edges.map((e) => {
      const name = el("span", { class: "name", text: e.qualname, title: where(e.file, e.line) });
      name.addEventListener("click", () => navigate(e.file, e.line));
      return el("li", { "data-key": e.key }, el("span", { class: "crt", text: pct(e.share) }), name);
    }) : [el("li", { class: "muted", text: "none" })]));
  }

  async function apply() {
    try {
      const r = await T.request("filter", { exclude_threads: [...state.excluded].sort((a, b) => a - b) });
      state.global = r.exclude_threads;
      if (timeline) timeline.setExcluded(state.global);
      status(state.global.length ? "Thread filter applied: " + state.global.length + " " + unitsWord() + " excluded from every view." : "Thread filter cleared.");
      await Promise.all([loadOverview(), loadDetail()]);
    } catch (e) { showError(e); }
  }
  async function reset() {
    state.excluded = new Set();
    try {
      const r = await T.request("filter", { exclude_threads: [] });
      state.global = r.exclude_threads;
      if (timeline) timeline.setExcluded(state.global);
    } catch (e) { showError(e); }
    status("Every thread selected; thread filter cleared.");
    await Promise.all([loadOverview(), loadDetail()]);
  }

  // ---- comparison of two runs ----------------------------------------------------------------
  // Only where another run can be read: `serve` of a directory and the editor (both list ≥ 2 runs);
  // never in the static export. Figures come from the `compare` method (docs/compare.md).
  // Cells carry their own text (`GlyphCell.text`, computed by the server): the page never spells a glyph.
  /** @type {{level: import("./protocol").Level, view: string, detailWasOpen: boolean, seq: number, runs: any[], filled: boolean, req?: any}} */
  const compareState = { level: "function", view: "panels", detailWasOpen: false, seq: 0, runs: [], filled: false };
  function canCompare(runs) { return T.mode !== "static" && runs.length >= 2; }
  function glyphCells(glyph) {
    if (!glyph) return [el("span", { class: "muted", text: "—" })];
    if (!glyph.length) return [el("span", { class: "muted", text: "·" })];
    const cells = [];
    glyph.forEach((c, i) => {
      if (i) cells.push(" ");
      cells.push(el("span", { class: colourClass(c.colour), text: c.text }));
    });
    return cells;
  }
  function radarText(glyph) { return glyph ? glyph.map((c) => c.text).join(" ") : "—"; }
  function side(x, f) { return x ? f(x) : "—"; }

  // Each select may hold several runs (a run set per side, issue 17); `?view=compare&base=A1,A2&new=B1,B2`
  // (`threadradar serve A1,A2 --compare B1,B2`) picks the sets at first.
  const fromQuery = (k) => (new URLSearchParams(location.search).get(k) || "").split(",").filter(Boolean);
  function fillCompareSelects(r) {
    const runs = r.runs || [];
    compareState.runs = runs;
    const base = $("compare-base"), nw = $("compare-new");
    const paths = runs.map((x) => x.path);
    const kept = (sel) => [...sel.selectedOptions].map((o) => o.value).filter((v) => paths.includes(v));
    const first = !compareState.filled; compareState.filled = true;
    const cur = runs.findIndex((x) => x.active);
    let wantNew = first && fromQuery("new").length ? fromQuery("new") : kept(nw);
    if (!wantNew.length) wantNew = [(runs[cur >= 0 ? cur : 0] || {}).path];
    const at = paths.indexOf(wantNew[0]);
    // Runs are listed newest first: the default base is the run recorded before the new one.
    let wantBase = first && fromQuery("base").length ? fromQuery("base") : kept(base);
    if (!wantBase.length) wantBase = [(runs[at + 1] || runs[at - 1] || {}).path];
    const options = (want) => runs.map((x) => el("option", { value: x.path, text: x.name, title: x.path, selected: want.includes(x.path) }));
    base.replaceChildren(...options(wantBase));
    nw.replaceChildren(...options(wantNew));
  }
  // The request's side: one run, or a set of the runs picked; the address's runs first and in
  // its order (the table shows a set's first run), then the others as listed (newest first).
  function compareSide(req, key, id) {
    const order = fromQuery(key), rank = (v) => (order.includes(v) ? order.indexOf(v) : order.length);
    const picked = [...$(id).selectedOptions].map((o) => o.value).sort((a, b) => rank(a) - rank(b));
    if (picked.length > 1) req[key + "_runs"] = picked; else if (picked.length) req[key] = picked[0];
  }
  // How the changes were tested against the sets' spread (the server's words), or why not.
  function significanceLine(c) {
    const s = c.significance;
    if (!s) return "One run per side: no spread to test the changes against. Pick several runs per side (Ctrl-click) to compare run sets.";
    return "Run sets: base n = " + s.n_base + ", new n = " + s.n_new + ". " + (s.tested ? s.test + ", over " + s.tested + " changes; the table shows each set's first run." : s.note);
  }
  function changeItem(ch) {
    const mark = ch.significant == null ? "" : ch.significant ? " (significant" : " (within noise";
    const p = ch.p == null ? "" : ", p = " + (ch.p < 0.001 ? ch.p.toExponential(1) : ch.p.toFixed(3));
    return el("li", { class: "change" + (ch.significant === true ? " significant" : ch.significant === false ? " within-noise" : ""), "data-significant": String(ch.significant) },
      ch.statement, el("span", { class: "evidence", "data-figure": ch.figure, text: " [" + ch.evidence_text + "]" }),
      mark ? el("span", { class: "sig-mark", text: mark + p + ")" }) : null);
  }

  // ---- timeline (web/timeline.js draws the server's `timeline` layouts) ---------------------------
  let timeline = null;
  function showTimeline() {
    if (timeline) { timeline.refresh(); return; }
    timeline = window.ThreadRadarTimeline.create($("timeline"), {
      fetchLayout: (params) => T.request("timeline", params),
      onNavigate: (file, line) => navigate(file, line),
      onTimeWindow: (from, to) => setWindow(from == null ? null : { from_s: from, to_s: to }),
    });
    timeline.setExcluded(state.global);
    if (state.window) timeline.setWindow(state.window.from_s, state.window.to_s);
    if (state.detail && state.detail.artifact.key !== "program") timeline.setArtifact(state.detail.artifact.key, clusterColours(state.detail.artifact));
  }
  // ---- sections (web/sections.js draws the server's `sections` view) ---------------------------
  let sections = null;
  function showSections() {
    if (sections) return;
    sections = window.ThreadRadarSections.create($("sections"), {
      fetchSections: () => T.request("sections", {}),
      fetchViews: T.mode === "static" ? null : (p) => T.request("views", p),
      onNavigate: (file, line) => navigate(file, line),
      // An execution: the Timeline tab at that moment, the executing thread's lane highlighted.
      onExecution: async (from, to, threads) => { await showView("timeline"); timeline.showRange(from, to, threads); },
    });
  }
  // ---- waits (web/waits.js draws the server's `waits` answer: who waited for whom) --------------
  let waits = null;
  function showWaits() {
    if (waits) { waits.refresh(); return; }
    if (!window.ThreadRadarWaits) { showError(new Error("This page was built without the waits panel (web/waits.js); open the run with `threadradar serve RUN`.")); return; }
    waits = window.ThreadRadarWaits.create($("waits"), {
      fetchWaits: (params) => T.request("waits", params),
      onNavigate: (file, line) => navigate(file, line),
    });
  }
  // ---- trace compare (web/tracecompare.js draws the server's `traceCompare` answer, issue 17) ----
  // Runs A and B: `?view=tracecompare&a=…&b=…`, else the server's defaults: after `threadradar
  // serve A --compare B` the active run as A and B; otherwise the active run as B and the run
  // recorded before it as A.
  /** @type {{a: string | string[] | null, b: string | string[] | null, selected?: string | null}} */
  const traceRuns = (() => { const q = new URLSearchParams(location.search); return { a: q.get("a"), b: q.get("b") }; })();
  let traceCompare = null;
  function showTraceCompare() {
    if (traceCompare) { traceCompare.refresh(); return; }
    traceCompare = window.ThreadRadarTraceCompare.create($("tracecompare"), {
      fetchTrace: (params) => T.request("traceCompare", params),
      onNavigate: (file, line) => navigate(file, line),
      a: traceRuns.a, b: traceRuns.b, selected: traceRuns.selected,
    });
    traceCompare.refresh();
  }
  // Thread id → the colour of its cluster for an artifact (the lanes' colour).
  function clusterColours(a) {
    const out = {};
    for (const c of a.clusters) for (const t of c.threads) out[t] = c.colour;
    return out;
  }
  // The Timeline tab focused on an artifact's bars (the editors' "Timeline" lens), its lanes in
  // the colours of the artifact's clusters.
  async function openTimeline(key) {
    await showView("timeline");
    let colours = {};
    try { colours = clusterColours((await T.request("detail", params({ artifact: key }))).artifact); } catch (e) { showError(e); }
    timeline.setArtifact(key, colours, true);
  }
  function windowText(w) { return w ? "window " + w.from_s.toFixed(2) + "–" + w.to_s.toFixed(2) + " s" : ""; }
  function showFilterInfo() {
    const parts = [];
    if (state.global.length) parts.push(state.global.length + " " + unitsWord() + " excluded by the thread filter");
    if (state.window) parts.push(windowText(state.window));
    $("filter-info").textContent = parts.join(" · ");
  }
  // The global time window: every figure (overview, detail, the editor's hints) counts only its
  // samples. The server checks it; `null` resets it.
  async function setWindow(w) {
    try {
      const r = await T.request("filter", { window: w });
      state.window = r.window || null;
      showFilterInfo();
      status(state.window ? "Time window applied: every figure now counts only the samples of " + windowText(state.window).slice(7) + "." : "Time window reset: figures cover the whole run.");
      await Promise.all([loadOverview(), loadDetail()]);
    } catch (e) { showError(e); }
  }

  async function showView(view) {
    compareState.view = view;
    for (const b of $("view-tabs").querySelectorAll("button")) b.classList.toggle("active", b.getAttribute("data-view") === view);
    const cmp = view === "compare", tl = view === "timeline", sec = view === "sections", wt = view === "waits", tc = view === "tracecompare";
    if ((cmp || tl || sec || wt || tc) && $("overview").hidden === false) compareState.detailWasOpen = !$("detail").hidden;
    $("overview").hidden = cmp || tl || sec || wt || tc;
    $("detail").hidden = cmp || tl || sec || wt || tc || !compareState.detailWasOpen || !state.detailKey;
    $("tracecompare").hidden = !tc;
    if (tc) showTraceCompare();
    $("compare").hidden = !cmp;
    $("timeline").hidden = !tl;
    $("sections").hidden = !sec;
    if (tl) showTimeline();
    if (sec) showSections();
    $("waits").hidden = !wt;
    if (wt) showWaits();
    if (!cmp) return;
    try { fillCompareSelects(await T.request("runs", {})); } catch (e) { showError(e); return; }
    await loadCompare();
  }

  async function loadCompare() {
    const seq = ++compareState.seq;
    const req = { level: compareState.level, hide_stdlib: $("compare-hide-stdlib").checked };
    compareSide(req, "base", "compare-base"); compareSide(req, "new", "compare-new");
    compareState.req = req;
    let c;
    try { c = await T.request("compare", req); }
    catch (e) { if (seq === compareState.seq) { showError(e); $("compare").setAttribute("data-rendered", seq); } return; }
    if (seq !== compareState.seq) return;
    showError(null);
    renderCompare(c);
    $("compare").setAttribute("data-rendered", seq);
  }

  // A function of both runs: its match groups lit in the Trace compare tab (same runs, A = base).
  function traceButton(c, a) {
    if (!window.ThreadRadarTraceCompare || c.level !== "function" || a.status !== "changed") return null;
    const b = el("button", { class: "cmp-trace", text: "trace", title: "Show where " + a.qualname + " runs in both runs' traces (Trace compare)" });
    // Run sets stay sets there: the trace of their first runs, the changes tested against them.
    const req = compareState.req || {};
    b.addEventListener("click", (ev) => { ev.stopPropagation(); openTraceCompare(req.base_runs || c.base.path, req.new_runs || c.new.path, a.qualname); });
    return b;
  }
  function sideLine(label, s) {
    const name = s.path ? s.path.split(/[\\/]/).pop() : "";
    return el("div", { title: s.path || "" },
      el("strong", { text: label + " " }),
      el("span", { text: name + " · " + (s.command || []).join(" ") + " · " + s.duration_s.toFixed(1) + " s · " + s.thread_count + " threads · radar " }),
      ...glyphCells(s.program && s.program.glyph));
  }

  function renderCompare(c) {
    $("compare-sides").replaceChildren(sideLine("base", c.base), sideLine("new", c.new));
    const what = c.level === "class" ? "classes" : "functions";
    $("compare-counts").textContent = c.artifacts.length + " of " + c.listed + " " + what + "; " + c.only_in_base + " only in base (removed), " + c.only_in_new + " only in new (added)";
    // The server's changes in its words, each with its evidence (at most ten here).
    $("compare-significance").textContent = significanceLine(c);
    // Ranked by the server (evidence and effect); the ones it left out are counted, with why.
    $("compare-changes").replaceChildren(...c.changes.slice(0, 10).map(changeItem));
    $("compare-suppressed").textContent = c.suppressed_note || "";
    $("compare-table").tBodies[0].replaceChildren(...c.artifacts.map((a) => {
      const b = a.base, n = a.new;
      const deltaClass = "delta num " + a.trend;
      const file = a.status === "removed" ? a.file_base : (a.file_new || a.file_base);
      const line = a.status === "removed" ? a.line_base : (a.line_new != null ? a.line_new : a.line_base);
      const moved = a.file_base && a.file_new && (a.file_base !== a.file_new || a.line_base !== a.line_new);
      const whereText = moved ? where(a.file_base, a.line_base) + " → " + where(a.file_new, a.line_new) : where(file, line);
      const titles = [a.file_base, a.file_new].filter((x, i, xs) => x && xs.indexOf(x) === i).join(" → ");
      const row = el("tr", { class: "cmp-row " + a.status, "data-status": a.status, "data-qualname": a.qualname, title: "Open " + (file || "") + (line ? ":" + line : "") },
        el("td", { class: "num", text: side(b, (x) => pct(x.crt)) + " → " + side(n, (x) => pct(x.crt)) }),
        el("td", { class: deltaClass, text: a.crt_delta_text, title: a.statements.join("\n") }),
        el("td", { class: "num cmp-threads", text: side(b, (x) => String(x.threads)) + " → " + side(n, (x) => String(x.threads)) }),
        el("td", { class: "radar-text", title: radarText(b && b.glyph) + " → " + radarText(n && n.glyph) }, ...glyphCells(b && b.glyph), " → ", ...glyphCells(n && n.glyph)),
        el("td", { class: "cmp-name name", text: a.qualname }),
        el("td", { class: "cmp-where where", text: whereText, title: titles }),
        el("td", {}, a.status === "changed" ? null : el("span", { class: "mark", text: a.status }), traceButton(c, a)));
      row.addEventListener("click", () => navigate(file, line));
      return row;
    }));
  }

  // ---- wiring --------------------------------------------------------------------------------
  function tabs(nav, onPick) {
    for (const b of nav.querySelectorAll("button")) {
      b.addEventListener("click", () => {
        for (const o of nav.querySelectorAll("button")) o.classList.toggle("active", o === b);
        onPick(b.getAttribute("data-tab"));
      });
    }
  }

  async function loadRuns() {
    try {
      const r = await T.request("runs", {});
      const sel = $("runs");
      // The timeline needs a server (not the static export); comparing needs two runs.
      $("view-tabs").hidden = T.mode === "static";
      $("open-compare").hidden = !canCompare(r.runs || []);
      // The waits panel is wherever waits.js is loaded: the served page and VS Code's webview.
      $("open-waits").hidden = !window.ThreadRadarWaits;
      $("open-tracecompare").hidden = !window.ThreadRadarTraceCompare || T.mode === "static" || !(canCompare(r.runs || []) || (traceRuns.a && traceRuns.b));
      if (!r.runs || r.runs.length < 2) { sel.hidden = true; return; }
      sel.replaceChildren(...r.runs.map((x) => el("option", { value: x.path, text: x.name, selected: x.active })));
      sel.hidden = false;
    } catch (e) { /* optional */ }
  }

  async function init() {
    if (T.mode === "static") { $("static-note").hidden = false; $("theme").disabled = true; }
    state.theme = pickTheme();
    try { const f = await T.request("filter", {}); state.global = f.exclude_threads || []; state.window = f.window || null; } catch (e) { showError(e); }
    tabs($("overview-tabs"), (tab) => {
      state.overviewTab = tab;
      for (const id of ["functions", "classes", "threads"]) $(id).hidden = id !== tab;
    });
    tabs($("tree-tabs"), (tab) => { state.treeTab = tab; if (state.detail) renderTree(state.detail); });
    const reload = debounce(loadOverview, 250);
    for (const id of ["include", "exclude"]) $(id).addEventListener("input", reload);
    for (const id of ["hide-stdlib", "hide-third-party", "only-file", "current-file"]) $(id).addEventListener("change", loadOverview);
    $("program-glyph").addEventListener("click", () => openDetail("program"));
    $("apply").addEventListener("click", apply);
    $("reset").addEventListener("click", reset);
    $("close-detail").addEventListener("click", () => { $("detail").hidden = true; state.detailKey = null; });
    $("theme").addEventListener("change", () => { state.theme = pickTheme(); loadOverview(); loadDetail(); });
    $("runs").addEventListener("change", async () => {
      try {
        await T.request("runs", { select: $("runs").value }); state.global = []; state.window = null; await loadOverview(); if (state.detailKey) openDetail("program");
        if (timeline) { timeline.destroy(); timeline = null; if (!$("timeline").hidden) showTimeline(); }
        if (sections) { sections = null; $("sections").replaceChildren(); if (!$("sections").hidden) showSections(); }
        if (waits) { waits.destroy(); waits = null; if (!$("waits").hidden) showWaits(); }
        if (traceCompare) { traceCompare.destroy(); traceCompare = null; if (!$("tracecompare").hidden) showTraceCompare(); }
        // The Compare tab's default sides follow the active run (new = it, base = the run before).
        $("compare-base").replaceChildren(); $("compare-new").replaceChildren();
        if (!$("compare").hidden) { fillCompareSelects(await T.request("runs", {})); await loadCompare(); }
      }
      catch (e) { showError(e); }
    });
    for (const b of $("view-tabs").querySelectorAll("button")) b.addEventListener("click", () => showView(b.getAttribute("data-view")));
    for (const b of $("compare-level").querySelectorAll("button")) {
      b.addEventListener("click", () => {
        compareState.level = b.getAttribute("data-level");
        for (const o of $("compare-level").querySelectorAll("button")) o.classList.toggle("active", o === b);
        loadCompare();
      });
    }
    for (const id of ["compare-base", "compare-new", "compare-hide-stdlib"]) $(id).addEventListener("change", loadCompare);
    window.addEventListener("resize", debounce(() => { if (state.detailKey) loadDetail(); }, 300));
    await loadOverview();
    loadRuns();
    const query = new URLSearchParams(location.search);
    const wanted = query.get("artifact");
    // `?view=timeline[&artifact=key]`: the Timeline tab (Neovim's `:ThreadRadarTimeline browser`).
    if (query.get("view") === "waits" && T.mode !== "static") showView("waits");
    if (query.get("view") === "compare" && T.mode !== "static") showView("compare");
    if (query.get("view") === "tracecompare" && T.mode !== "static" && window.ThreadRadarTraceCompare) showView("tracecompare");
    if (query.get("view") === "timeline" && T.mode !== "static") {
      if (wanted) openTimeline(wanted); else showView("timeline");
    } else if (query.get("view") === "sections" && T.mode !== "static") {
      // `&file=…&function=…&lock=…&line=…`: on that section (the editors' section lens).
      await showView("sections");
      if (query.get("file")) openSections({ file: query.get("file"), function: query.get("function"), lock: query.get("lock"), line: Number(query.get("line")) });
    } else if (wanted) openDetail(wanted);
  }
  // The Trace compare tab on runs `a` and `b` (names or paths; absent: the server's defaults).
  function openTraceCompare(a, b, artifact) {
    traceRuns.a = a || null; traceRuns.b = b || null; traceRuns.selected = artifact || null;
    $("open-tracecompare").hidden = false;
    if (traceCompare) { traceCompare.destroy(); traceCompare = null; }
    return showView("tracecompare");
  }
  // The Sections tab on one section ({file, function, lock, line}; the section lens).
  async function openSections(ref) { await showView("sections"); sections.selectSection(ref); }
  // The wait lens (VS Code): the Waits tab on the lens's object.
  async function openWaits(object) { await showView("waits"); if (object && waits) waits.selectObject(object); }
  window.ThreadRadarPanels = { state, openDetail, openTimeline, openTraceCompare, openSections, openWaits, loadOverview, showView, timeline: () => timeline, sections: () => sections };
  init();
})();
