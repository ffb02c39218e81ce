// The waits panel (issue 16, "correspondence view"; issue 32, SyncTrace's aggregation;
// docs/waits.md): first, per group of objects (one type at one site), a waker → wakee matrix
// with counts and the wait time the wake-ups ended; then one lane per thread with its wait
// intervals on a canvas, wake edges drawn from the waker's lane to the end of the wait they ended
// only where they separate (drag across the lanes to zoom there; the server says when they do);
// the objects table (a row per group, fitting the panel) and the evidence notes. The page computes no figure: it asks
// `fetchWaits(params)` (the protocol method `waits`) and draws the answer. Names from the
// profiled program reach the DOM through textContent only (lane labels, tooltip, table); on the
// canvas they are pixels.
//
//   const w = ThreadRadarWaits.create(element, {
//     fetchWaits: (params) => Promise<WaitsResult>,  // params: WaitsParams (web/protocol.d.ts)
//     onNavigate: (file, line) => {},                 // click on a wait: its waiting frame
//   });
//   w.refresh(); w.destroy();
//
// The root element carries what was drawn, for tests and for anyone debugging a picture:
// data-width-px (the width the server was asked to lay out), data-lanes, data-intervals,
// data-edges (edges in the answer), data-drawn-edges (lines drawn:
// bundles when the server bundled them; 0 while the edges do not separate), data-bundled (edges
// folded into bundles of more than one), data-separate, data-groups, data-matrix-cells (cells
// drawn in the matrices), data-range (the time range shown, "from-to" seconds).
"use strict";
(function () {
  const LANE = 20;     // px per thread lane
  const AXIS = 22;     // px of the time axis
  const PAD = 8;       // px left and right of the time area
  const PALETTE = ["#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#86bc86"];
  const EVIDENCE = {
    "kernel": "kernel-exact: the scheduler's wake-up event",
    "lock-event": "exact (uprobe): the waker's release of the lock, then the wakee's acquire returned (record --exact-locks)",
    "gil-holder": "inferred: the thread that held the GIL next",
    "same-object": "inferred: the thread last seen releasing the same object",
    "running-thread": "inferred: the only other thread running when the wait ended (with tasks as units: the task the event loop ran then)",
    "task-state": "recorded: the awaiting asyncio task's state named the task it awaited (the time is the sample at which it was seen going on)",
  };

  const { el } = window.ThreadRadarDom;
  // An exact hand-off's figures (the server's `exact` field of a lock-event edge), as text.
  const exactText = (e) => !e.exact ? "" :
    " · waited " + fmtS(e.exact.wait_s) + " to acquire" + (e.exact.hold_s != null ? " · held " + fmtS(e.exact.hold_s) + (e.exact.held_by ? " by " + e.exact.held_by : "") + " before the release" : "") + (e.kind === "lock-handoff" ? " (a hand-off of the object's lock)" : "");
  // `?view=waits&object=…` (Neovim's `:ThreadRadarWaits browser`, `b` in its float): the panel
  // opens with that object selected — the object with that label, else the first whose label,
  // type or name contains it (case-insensitive, as the `waits` method's own filter). Once per page.
  let wantedObject = new URLSearchParams(location.search).get("object") || null;
  const fmtS = (s) => (Math.abs(s) < 1 ? (s * 1000).toFixed(s < 0.01 ? 2 : 1) + " ms" : s.toFixed(3) + " s");
  // A thread name cut in the middle, so that `ThreadPoolExecutor-0_7` keeps what tells it from
  // `…-0_6` (the full name goes in the title).
  const middle = (s, max) => (s.length <= max ? s : s.slice(0, Math.ceil((max - 1) / 2)) + "…" + s.slice(s.length - Math.floor((max - 1) / 2)));
  const MATRIX_MAX = 12; // rows and columns per matrix; the rest are summed as "others"
  const GROUPS_SHOWN = 6; // matrices in sight; the rest one click away

  function create(root, opts) {
    const fetchWaits = opts.fetchWaits;
    const onNavigate = opts.onNavigate || (() => {});
    const st = { result: null, colourBy: "thread", selected: null, seq: 0, hits: [], lanes: [], t0: 0, t1: 1, range: null, drag: null };

    root.classList.add("tr-waits");
    const colourSel = el("select", { "aria-label": "Colour edges and waits by" },
      el("option", { value: "thread", text: "colour by waiting thread" }),
      el("option", { value: "object", text: "colour by object" }));
    const info = el("span", { class: "tr-info" });
    const whole = el("button", { type: "button", class: "tr-whole", text: "whole run", title: "Zoom out to the whole run" });
    whole.disabled = true;
    const zoomNote = el("div", { class: "tr-zoom-note", role: "status" });
    const matrices = el("div", { class: "tr-matrices", "aria-label": "Who woke whom, per object" });
    const evidence = el("div", { class: "tr-evidence", "aria-label": "Evidence" });
    const labels = el("div", { class: "tr-labels" });
    const canvas = el("canvas", { class: "tr-canvas" });
    const tip = el("div", { class: "tr-tip", role: "tooltip" });
    tip.hidden = true;
    const tbody = el("tbody");
    const table = el("table", { class: "tr-objects" },
      el("caption", { text: "Waited-on objects — select a row to highlight its waits and edges" }),
      el("colgroup", {}, ...["28%", "13%", "11%", "7%", "9%", "8%", "14%", "10%"].map((w) => el("col", { style: { width: w } }))),
      el("thead", {}, el("tr", {}, ...["object", "type", "name", "waits", "wait time", "futile wake-ups", "wakers", "waiting radar"].map((h, i) => el("th", { text: h, class: i >= 3 && i <= 5 ? "num" : "" })))),
      tbody);
    root.replaceChildren(
      el("div", { class: "tr-toolbar" }, colourSel, whole, info),
      evidence,
      matrices,
      zoomNote,
      el("div", { class: "tr-body" }, labels, el("div", { class: "tr-canvas-box" }, canvas)),
      tip, table);

    colourSel.addEventListener("change", () => { st.colourBy = colourSel.value; draw(); });
    whole.addEventListener("click", () => { st.range = null; refresh(); });

    function colourOf(thread, object) {
      if (st.colourBy === "object") return PALETTE[object % PALETTE.length];
      const i = st.lanes.indexOf(thread);
      return PALETTE[(i < 0 ? 0 : i) % PALETTE.length];
    }

    async function refresh() {
      const width = Math.max(200, Math.floor(root.clientWidth || 900) - 190);
      info.textContent = "loading…";
      const range = st.range ? { from_s: st.range[0], to_s: st.range[1] } : {};
      const r = await window.ThreadRadarTransport.latest(st, root, info, () => fetchWaits({ width_px: width - 2 * PAD, ...range }));
      if (!r) return;
      st.result = r;
      st.width = width;
      root.setAttribute("data-width-px", String(width - 2 * PAD)); // what the server was asked for
      whole.disabled = !st.range;
      layout();
      showEvidence();
      showMatrices();
      showObjects();
      if (wantedObject !== null) { selectWanted(wantedObject); wantedObject = null; }
      draw();
    }

    /** Selects the object `q` names (its label, else a part of its label, type or name). */
    function selectWanted(q) {
      const objects = st.result.view.objects, lower = q.toLowerCase();
      let i = objects.findIndex((o) => o.object === q);
      if (i < 0) i = objects.findIndex((o) => [o.object, o.type, o.name || ""].some((s) => s.toLowerCase().includes(lower)));
      if (i < 0) return;
      st.selected = st.result.groups.group_of[i];
      markRows();
      const row = tbody.querySelector('tr[data-group="' + st.selected + '"]');
      if (row) row.scrollIntoView({ block: "nearest" });
    }

    function layout() {
      const v = st.result.view;
      const ids = v.threads.map((t) => t.id);
      // A waker that never waited still needs a lane for its edges to start from.
      for (const e of v.edges) for (const t of [e.waker_thread, e.wakee_thread]) if (!ids.includes(t)) ids.push(t);
      st.lanes = ids;
      st.names = {};
      for (const t of v.threads) st.names[t.id] = t;
      for (const e of v.edges) {
        if (!st.names[e.waker_thread]) st.names[e.waker_thread] = { id: e.waker_thread, name: e.waker, type: "" };
        if (!st.names[e.wakee_thread]) st.names[e.wakee_thread] = { id: e.wakee_thread, name: e.wakee, type: "" };
      }
      if (st.range) { st.t0 = st.range[0]; st.t1 = st.range[1]; }
      else {
        let t1 = 0;
        for (const i of v.intervals) t1 = Math.max(t1, i.end_s);
        for (const e of v.edges) t1 = Math.max(t1, e.time_s);
        st.t0 = 0; st.t1 = t1 > 0 ? t1 : 1;
      }
      labels.replaceChildren(el("div", { class: "tr-axis-label", text: "thread", style: { height: AXIS + "px" } }),
        ...ids.map((id) => {
          const t = st.names[id];
          // The name cut in the middle (its end tells pool threads apart), the type after it.
          return el("div", { class: "tr-lane-label", title: t.name + " (" + id + ")" + (t.type ? " · " + t.type : ""), style: { height: LANE + "px", lineHeight: LANE + "px" } },
            el("span", { class: "tr-name", text: middle(t.name, 22) }), el("span", { class: "tr-type", text: t.type || "" }));
        }));
    }

    function showEvidence() {
      const v = st.result.view, c = st.result.counts, edges = c.edges;
      const parts = [
        "Waits: sampled every " + fmtS(v.period_s) + " (a sampled start or end is known to within one period)" +
          (c.kernel_ends ? "; " + c.kernel_ends + " of " + c.ends + " starts and ends are the kernel's (the context switch into the sleep, the wake-up out of it)." : "."),
        "Edges: " + edges.kernel + " kernel-exact, " + (edges.recorded ? edges.recorded + " recorded (asyncio tasks' awaits, from their recorded state), " : "") + edges.inferred + " inferred" +
          (edges.inferred ? " (" + edges.inferred_by.map((x) => x.count + " " + x.evidence).join(", ") + ")" : "") + ".",
        v.evidence.kernel ? "Scheduler wake-ups were recorded (record --sched) and used." : "No scheduler wake-ups in this run: every edge is inferred from samples.",
        v.evidence.targets ? "What each wait waited on was recorded." : "What each wait waited on was not recorded: objects are named by their wait site.",
      ];
      evidence.replaceChildren(
        ...parts.map((p) => el("div", { class: "tr-evidence-line", text: p })),
        ...v.evidence.notes.map((n) => el("div", { class: "tr-evidence-note", text: n })),
        el("div", { class: "tr-legend", text: "solid line: kernel-exact · square end: exact lock hand-off (uprobe) · dashed: inferred · grey: futile wake-up (the thread waited again) · hatched end: the wait never ended in the run" }));
    }

    // One row per group (objects of one type at one site; an object's inner lock merged in),
    // most wait time first. `data-object` is the group's first object (the named one).
    function showObjects() {
      const v = st.result.view, gs = st.result.groups;
      const tname = (id) => (st.names[id] ? st.names[id].name : String(id));
      tbody.replaceChildren(...gs.groups.map((g, gi) => {
        const first = v.objects[g.objects[0]];
        const byWaker = new Map();
        for (const c of g.cells) byWaker.set(c.waker, (byWaker.get(c.waker) || 0) + c.count);
        const all = [...byWaker.entries()].sort((a, b) => b[1] - a[1]).map(([id, c]) => tname(id) + " ×" + c);
        const wakers = all.slice(0, 3).map((w) => middle(w, 28)).join(", ") + (all.length > 3 ? ", … " + (all.length - 3) + " more" : "");
        const title = g.label + (g.objects.length > 1 ? "\n" + g.objects.length + " objects: " + g.objects.map((j) => v.objects[j].object).join(", ") : "") +
          (g.merged.length ? "\n" + g.merged.join("\n") : "") + (g.site ? "\nwaited on at " + g.site.function + " " + g.site.file + ":" + g.site.line : "");
        const row = el("tr", { "data-object": String(g.objects[0]), "data-group": String(gi), "data-objects": String(g.objects.length), tabIndex: 0, "aria-selected": "false" },
          el("td", { title }, el("span", { class: "tr-swatch", style: { background: PALETTE[g.objects[0] % PALETTE.length] } }), el("span", { text: g.label })),
          el("td", { text: g.type + (g.merged.length ? " (+ inner lock)" : ""), title: g.merged.join("\n") }),
          el("td", { text: g.name || "" }),
          el("td", { class: "num", text: String(g.waits) }),
          el("td", { class: "num", text: fmtS(g.wait_s) }),
          el("td", { class: "num", text: String(g.futile_wakeups) }),
          el("td", { text: wakers || "—", title: all.join(", ") }),
          g.objects.length - g.merged.length === 1 ? radarCell(first) : el("td", { class: "muted", text: "—", title: "one radar per object: this row groups " + g.objects.length }));
        const i = gi;
        const select = () => { st.selected = st.selected === i ? null : i; markRows(); draw(); };
        row.addEventListener("click", select);
        row.addEventListener("keydown", (ev) => { if (ev.key === "Enter" || ev.key === " ") { ev.preventDefault(); select(); } });
        return row;
      }));
      markRows();
    }
    // The waiting radar as the text glyph (average level, sum level, threads per cluster), in the
    // cluster colours: which threads waited on the object and how much of its wait time each took.
    function radarCell(o) {
      const cells = (o.radar || []).map((c) => el("span", { class: "c-" + c.colour, text: c.text }));
      const title = "waiting radar (sampled): " + (o.radar || []).map((c) => c.threads + " thread(s), each ~" + c.avg.replace("_", " ") + ", together " + c.sum.replace("_", " ") + " of its wait time").join("; ")
        + " · " + Object.keys(o.waiters).length + " threads of " + o.waiter_types + " type(s)";
      return el("td", { class: "radar-text tr-radar", title }, ...(cells.length ? cells.flatMap((c, i) => i ? [" ", c] : [c]) : ["—"]));
    }
    function markRows() {
      for (const r of tbody.children) {
        const on = st.selected !== null && r.getAttribute("data-group") === String(st.selected);
        r.classList.toggle("tr-selected", on);
        r.setAttribute("aria-selected", String(on));
      }
      for (const m of matrices.querySelectorAll(".tr-matrix")) m.classList.toggle("tr-selected", st.selected !== null && m.getAttribute("data-group") === String(st.selected));
      if (st.selected === null) { root.removeAttribute("data-selected-object"); root.removeAttribute("data-selected-group"); }
      else { root.setAttribute("data-selected-object", String(st.result.groups.groups[st.selected].objects[0])); root.setAttribute("data-selected-group", String(st.selected)); }
    }

    // The matrices: per group, wakers (rows) × woken threads (columns), each cell the wake-ups,
    // the futile ones and the wait time they ended; shade by count. The biggest groups first.
    function showMatrices() {
      const gs = st.result.groups, v = st.result.view;
      const tname = (id) => (st.names[id] ? st.names[id].name : String(id));
      let cellsDrawn = 0;
      const block = (g, gi) => {
        const rows = g.wakers.slice(0, MATRIX_MAX), cols = g.wakees.slice(0, MATRIX_MAX);
        const otherRows = g.wakers.length > rows.length, otherCols = g.wakees.length > cols.length;
        const at = new Map();
        const key = (r, c) => r + "→" + c;
        for (const c of g.cells) {
          const r = rows.includes(c.waker) ? c.waker : "others", k = cols.includes(c.wakee) ? c.wakee : "others";
          const x = at.get(key(r, k)) || { count: 0, futile: 0, kernel: 0, wait_s: 0 };
          x.count += c.count; x.futile += c.futile; x.kernel += c.kernel; x.wait_s += c.wait_s;
          at.set(key(r, k), x);
        }
        const max = Math.max(1, ...[...at.values()].map((x) => x.count));
        const rowIds = otherRows ? [...rows, "others"] : rows, colIds = otherCols ? [...cols, "others"] : cols;
        const head = el("tr", {}, el("th", { class: "tr-corner", text: "waker ↓ · woken →" }),
          ...colIds.map((c) => el("th", { class: "tr-col", text: c === "others" ? "others" : middle(tname(c), 16), title: c === "others" ? (g.wakees.length - cols.length) + " more threads" : tname(c) + " (" + c + ")" })));
        const body = rowIds.map((r) => el("tr", {},
          el("th", { class: "tr-row", text: r === "others" ? "others" : middle(tname(r), 22), title: r === "others" ? (g.wakers.length - rows.length) + " more threads" : tname(r) + " (" + r + ")" }),
          ...colIds.map((c) => {
            const x = at.get(key(r, c));
            if (!x) return el("td", { class: "tr-cell tr-empty" });
            cellsDrawn++;
            const alpha = 0.12 + 0.7 * Math.sqrt(x.count / max);
            const ev = x.kernel === x.count ? "kernel-exact" : x.kernel ? x.kernel + " kernel-exact, " + (x.count - x.kernel) + " inferred" : "inferred";
            return el("td", { class: "tr-cell" + (x.futile === x.count ? " tr-futile" : ""), style: { background: "rgba(78,121,167," + alpha.toFixed(2) + ")" },
              title: (r === "others" ? "others" : tname(r)) + " → " + (c === "others" ? "others" : tname(c)) + ": " + x.count + " wake-ups (" + ev + ")" +
                (x.futile ? ", " + x.futile + " futile (the thread waited again)" : "") + "; they ended " + fmtS(x.wait_s) + " of waiting (sampled)" },
            el("span", { class: "tr-count", text: String(x.count) }),
            x.futile ? el("span", { class: "tr-futile-count", text: " (" + x.futile + " futile)" }) : null,
            el("div", { class: "tr-cell-time", text: fmtS(x.wait_s) }));
          })));
        const ev = g.kernel_edges + g.recorded_edges + g.inferred_edges;
        const evText = ev ? g.kernel_edges + " kernel-exact, " + (g.recorded_edges ? g.recorded_edges + " recorded (task state), " : "") + g.inferred_edges + " inferred wake-ups" : "no wake-up with evidence";
        const head2 = el("div", { class: "tr-matrix-head" },
          el("strong", { text: g.label }),
          el("span", { class: "tr-matrix-figures", text: " · " + g.waits + " waits, " + fmtS(g.wait_s) + " waited over the run (sampled) · " + (st.range ? "in view: " : "") + evText +
            (g.futile_wakeups ? " · " + g.futile_wakeups + " futile" : "") + (g.unexplained ? " · " + g.unexplained + " waits with no waker found" : "") +
            (g.lock_handoffs ? " · " + g.lock_handoffs + " lock hand-offs (not counted)" : "") }),
          ...g.merged.map((m) => el("div", { class: "tr-matrix-merged muted", text: "merged: " + m })));
        const box = el("div", { class: "tr-matrix", "data-group": String(gi), "data-cells": String(g.cells.length) }, head2,
          g.cells.length ? el("div", { class: "tr-matrix-scroll" }, el("table", { class: "tr-matrix-table" }, el("thead", {}, head), el("tbody", {}, ...body))) : null);
        box.addEventListener("click", () => { st.selected = st.selected === gi ? null : gi; markRows(); draw(); });
        return box;
      };
      const shown = gs.groups.map((g, gi) => [g, gi]).filter(([g]) => g.cells.length || g.waits);
      const first = shown.slice(0, GROUPS_SHOWN).map(([g, gi]) => block(g, gi));
      const rest = shown.slice(GROUPS_SHOWN);
      const more = rest.length ? el("details", { class: "tr-matrices-more" }, el("summary", { text: rest.length + " more objects" }), ...rest.map(([g, gi]) => block(g, gi))) : null;
      matrices.replaceChildren(el("div", { class: "tr-matrices-caption", text: "Who woke whom, per object (" + gs.groups.length + " groups of " + v.objects.length + " objects: one type at one site is one row) — wake-ups (futile), and the wait time they ended" }),
        ...first, ...(more ? [more] : []));
      root.setAttribute("data-groups", String(gs.groups.length));
      root.setAttribute("data-matrix-cells", String(cellsDrawn));
    }

    const xOf = (t) => PAD + ((t - st.t0) / (st.t1 - st.t0)) * (st.width - 2 * PAD);
    const tOf = (x) => st.t0 + ((x - PAD) / (st.width - 2 * PAD)) * (st.t1 - st.t0);
    const laneY = (thread) => AXIS + st.lanes.indexOf(thread) * LANE;

    function draw() {
      if (!st.result) return;
      const v = st.result.view;
      const dpr = window.devicePixelRatio || 1;
      const h = AXIS + st.lanes.length * LANE + 4;
      canvas.width = Math.round(st.width * dpr); canvas.height = Math.round(h * dpr);
      canvas.style.width = st.width + "px"; canvas.style.height = h + "px";
      const g = canvas.getContext("2d");
      g.setTransform(dpr, 0, 0, dpr, 0, 0);
      const dark = window.matchMedia && window.matchMedia("(prefers-color-scheme: dark)").matches && !document.documentElement.classList.contains("light");
      const fg = dark ? "#ccc" : "#444";
      g.clearRect(0, 0, st.width, h);
      // Time axis.
      g.fillStyle = fg; g.strokeStyle = fg; g.font = "10px system-ui, sans-serif"; g.lineWidth = 1;
      // Round ticks, as many as their labels fit without touching (a label is skipped when it
      // would come within 8 px of the previous one).
      const span = st.t1 - st.t0, usable = st.width - 2 * PAD;
      const maxTicks = Math.max(2, Math.floor(usable / 90));
      const raw = span / maxTicks, mag = Math.pow(10, Math.floor(Math.log10(raw)));
      const step = [1, 2, 5, 10].map((m) => m * mag).find((x) => x >= raw) || 10 * mag;
      let lastEnd = -Infinity;
      const axisBoxes = [];
      for (let k = Math.ceil(st.t0 / step); k * step <= st.t1 + step * 1e-9; k++) {
        const t = k * step, x = xOf(t), text = fmtS(t), w = g.measureText(text).width;
        const left = Math.min(Math.max(x - w / 2, 0), st.width - w);
        g.fillRect(x, AXIS - 6, 1, 5);
        if (left < lastEnd + 8) continue;
        g.textAlign = "left";
        g.fillText(text, left, AXIS - 9);
        lastEnd = left + w;
        axisBoxes.push([Math.round(left * 10) / 10, Math.round(lastEnd * 10) / 10]);
      }
      root.setAttribute("data-axis-labels", JSON.stringify(axisBoxes));
      // Lane backgrounds.
      st.lanes.forEach((_, i) => {
        g.fillStyle = i % 2 ? "rgba(128,128,128,0.06)" : "rgba(128,128,128,0.12)";
        g.fillRect(0, AXIS + i * LANE, st.width, LANE);
      });
      const gof = st.result.groups.group_of;
      const dim = (obj) => st.selected !== null && gof[obj] !== st.selected;
      st.hits = [];
      // Wait intervals.
      v.intervals.forEach((w, idx) => {
        const x0 = xOf(w.start_s), x1 = Math.max(x0 + 2, xOf(w.end_s)), y = laneY(w.thread) + 4;
        g.globalAlpha = dim(w.object) ? 0.15 : 0.85;
        g.fillStyle = colourOf(w.thread, w.object);
        g.fillRect(x0, y, x1 - x0, LANE - 8);
        if (w.open) { // no end was seen: hatch the last few pixels
          g.fillStyle = "rgba(255,255,255,0.6)";
          for (let x = Math.max(x0, x1 - 12); x < x1; x += 4) g.fillRect(x, y, 2, LANE - 8);
        }
        if (st.selected !== null && !dim(w.object)) { g.globalAlpha = 1; g.strokeStyle = fg; g.strokeRect(x0 + 0.5, y + 0.5, x1 - x0 - 1, LANE - 9); }
        st.hits.push({ kind: "wait", x0, x1, y0: y, y1: y + LANE - 8, idx });
      });
      g.globalAlpha = 1;
      // Edges: only where they separate (the server says so for this range and width); bundles
      // when the server bundled them (one line per pixel column and pair), else each.
      const separate = st.result.groups.separate !== false;
      const lines = !separate ? [] : st.result.bundles
        ? st.result.bundles.map((b) => ({ waker: b.waker_thread, wakee: b.wakee_thread, object: b.object_index, evidence: b.evidence, t: b.to_s, from_s: b.from_s, count: b.count, futile: b.futile, confidence: b.confidence, bundle: b, edge: b.first_edge }))
        : v.edges.map((e, i) => ({ waker: e.waker_thread, wakee: e.wakee_thread, object: e.object_index, evidence: e.evidence, t: e.time_s, from_s: e.time_s, count: 1, futile: e.futile ? 1 : 0, confidence: e.confidence, edge: i }));
      let bundled = 0;
      for (const l of lines) {
        const x = xOf(l.t), ya = laneY(l.waker) + LANE / 2, yb = laneY(l.wakee) + (laneY(l.wakee) > laneY(l.waker) ? 3 : LANE - 3);
        g.globalAlpha = dim(l.object) ? 0.12 : 1;
        g.strokeStyle = l.futile === l.count ? "#999" : colourOf(l.wakee, l.object);
        g.lineWidth = l.count > 1 ? Math.min(1 + Math.log2(l.count), 5) : 1.5;
        g.setLineDash(l.evidence === "kernel" || l.evidence === "lock-event" ? [] : [4, 3]);
        g.beginPath(); g.moveTo(x, ya); g.lineTo(x, yb); g.stroke();
        g.setLineDash([]);
        // the waker's end: a dot; the woken end: an arrow head
        g.fillStyle = g.strokeStyle;
        if (l.evidence === "lock-event") g.fillRect(x - 3, ya - 3, 6, 6); // the release, exact
        else { g.beginPath(); g.arc(x, ya, 2.5, 0, 2 * Math.PI); g.fill(); }
        const dir = yb > ya ? 1 : -1;
        g.beginPath(); g.moveTo(x, yb); g.lineTo(x - 3.5, yb - dir * 5); g.lineTo(x + 3.5, yb - dir * 5); g.closePath(); g.fill();
        if (l.count > 1) {
          bundled += l.count;
          g.font = "bold 10px system-ui, sans-serif"; g.textAlign = "left"; g.fillStyle = fg;
          g.fillText("×" + l.count, x + 3, (ya + yb) / 2);
        }
        st.hits.push({ kind: "edge", x0: x - 3, x1: x + 3, y0: Math.min(ya, yb) - 3, y1: Math.max(ya, yb) + 3, line: l });
      }
      g.globalAlpha = 1;
      root.setAttribute("data-lanes", String(st.lanes.length));
      root.setAttribute("data-intervals", String(v.intervals.length));
      root.setAttribute("data-edges", String(v.edges.length));
      root.setAttribute("data-drawn-edges", String(lines.length));
      root.setAttribute("data-bundled", String(bundled));
      root.setAttribute("data-colour-by", st.colourBy);
      root.setAttribute("data-separate", String(separate));
      root.setAttribute("data-range", st.t0 + "-" + st.t1);
      const below = st.result.groups.separate_below_s;
      zoomNote.textContent = separate ? (st.range ? "Zoomed to " + fmtS(st.t0) + "–" + fmtS(st.t1) + ": the wake edges separate here and are drawn one by one." : "") :
        v.edges.length + " wake edges are too close together to draw one by one over " + fmtS(st.t1 - st.t0) + " (the matrices above count them)" +
        (below ? "; they separate over a range of about " + fmtS(below) + " or less" : "") + ": drag across the lanes to zoom in.";
      zoomNote.hidden = !zoomNote.textContent;
      info.textContent = st.lanes.length + " threads · " + v.intervals.length + " waits · " + v.edges.length + " wake edges" +
        (!separate ? " (not drawn at this zoom)" : st.result.bundles ? " (drawn as " + lines.length + " lines, bundled per pixel column)" : "") + " · " +
        (st.range ? fmtS(st.t0) + "–" + fmtS(st.t1) : "whole run, " + fmtS(st.t1));
      if (st.drag && st.drag.x1 !== undefined) {
        g.fillStyle = "rgba(47,111,208,0.18)";
        g.fillRect(Math.min(st.drag.x0, st.drag.x1), AXIS, Math.abs(st.drag.x1 - st.drag.x0), h - AXIS);
      }
    }

    function hitAt(ev) {
      const r = canvas.getBoundingClientRect();
      const x = ev.clientX - r.left, y = ev.clientY - r.top;
      // Edges first: they are drawn over the waits.
      let best = null;
      for (const h of st.hits) {
        if (x < h.x0 || x > h.x1 || y < h.y0 || y > h.y1) continue;
        if (h.kind === "edge") return h;
        best = best || h;
      }
      return best;
    }

    /** Where the wait `idx` was released: the waker's frame of the last edge that ended it. */
    function releaseOf(idx) {
      const ended = st.result.view.edges.filter((e) => e.interval === idx && e.waker_frame);
      return ended.length ? ended[ended.length - 1].waker_frame : null;
    }

    function tipLines(h) {
      const v = st.result.view;
      if (h.kind === "wait") {
        const w = v.intervals[h.idx], o = v.objects[w.object];
        const ended = v.edges.filter((e) => e.interval === h.idx);
        const out = [
          "object: " + (o ? o.object : "?") + (o && o.name ? " (" + o.name + ")" : ""),
          "thread: " + (st.names[w.thread] ? st.names[w.thread].name : w.thread),
          "waited: " + fmtS(w.end_s - w.start_s) + (w.open ? " (no end seen in the run)" : "") + " · " + w.samples + " samples",
          "from " + fmtS(w.start_s) + (w.kernel_start ? " (kernel)" : " (sampled)") + " to " + fmtS(w.end_s) + (w.kernel_end ? " (kernel)" : " (sampled)"),
        ];
        if (w.syscall) out.push("blocked in: " + w.syscall);
        if (w.frame) out.push("at: " + w.frame.function + " " + w.frame.file + ":" + w.frame.line + " (click to open)");
        if (w.futile) out.push("ended in a futile wake-up: the thread waited again");
        if (ended.length) for (const e of ended) out.push("woken by " + e.waker + " — " + (EVIDENCE[e.evidence] || e.evidence) + ", confidence " + e.confidence.toFixed(2) + exactText(e));
        else out.push("waker: none found (no evidence for one)");
        const release = releaseOf(h.idx);
        if (release) out.push("released at: " + release.function + " " + release.file + ":" + release.line + " (Alt+click to open)");
        return out;
      }
      const l = h.line, o = v.objects[l.object];
      const n = (id) => (st.names[id] ? st.names[id].name : String(id));
      const out = [
        n(l.waker) + " → " + n(l.wakee) + (l.count > 1 ? " ×" + l.count + " (bundled: " + fmtS(l.from_s) + "–" + fmtS(l.t) + ")" : " at " + fmtS(l.t)),
        "object: " + (o ? o.object : "?"),
        "evidence: " + (EVIDENCE[l.evidence] || l.evidence) + ", confidence " + l.confidence.toFixed(2),
      ];
      if (l.futile) out.push(l.futile + " futile (the thread waited again)");
      if (l.edge !== undefined) {
        const e = v.edges[l.edge];
        if (e && e.exact) out.push("lock " + e.exact.lock + exactText(e));
        if (e && e.waker_frame) out.push("waker at: " + e.waker_frame.function + " " + e.waker_frame.file + ":" + e.waker_frame.line + (l.count > 1 ? " (the first of the bundle)" : "") + " (click to open)");
        else out.push("waker's code: no sample near the wake-up");
      }
      return out;
    }

    // Drag across the lanes: zoom to that range (the server answers it; edges are drawn once
    // they separate there).
    canvas.addEventListener("mousedown", (ev) => {
      if (!st.result || ev.button !== 0) return;
      const r = canvas.getBoundingClientRect();
      st.drag = { x0: ev.clientX - r.left };
    });
    window.addEventListener("mouseup", (ev) => {
      const d = st.drag;
      st.drag = null;
      if (!d || d.x1 === undefined) return;
      if (Math.abs(d.x1 - d.x0) < 6) { draw(); return; }
      const a = Math.max(st.t0, tOf(Math.min(d.x0, d.x1))), b = Math.min(st.t1, tOf(Math.max(d.x0, d.x1)));
      if (b > a) { st.range = [a, b]; refresh(); } else draw();
      st.dragged = true;
    });
    canvas.addEventListener("mousemove", (ev) => {
      if (st.drag) {
        const r = canvas.getBoundingClientRect();
        st.drag.x1 = ev.clientX - r.left;
        if (Math.abs(st.drag.x1 - st.drag.x0) >= 6) { tip.hidden = true; draw(); return; }
      }
      const h = st.result && hitAt(ev);
      if (!h) { tip.hidden = true; canvas.style.cursor = ""; return; }
      tip.textContent = tipLines(h).join("\n");
      tip.setAttribute("data-kind", h.kind);
      const rr = root.getBoundingClientRect();
      tip.style.left = (ev.clientX - rr.left + 12) + "px";
      tip.style.top = (ev.clientY - rr.top + 12) + "px";
      tip.hidden = false;
      canvas.style.cursor = h.kind === "wait" && st.result.view.intervals[h.idx].frame ? "pointer" : "default";
    });
    canvas.addEventListener("mouseleave", () => { tip.hidden = true; });
    canvas.addEventListener("click", (ev) => {
      if (st.dragged) { st.dragged = false; return; }
      const h = st.result && hitAt(ev);
      if (!h) return;
      if (h.kind === "wait") {
        // Click: where the thread waited; Alt+click: where it was released.
        const w = st.result.view.intervals[h.idx];
        const target = ev.altKey ? releaseOf(h.idx) : w.frame;
        if (target) onNavigate(target.file, target.line);
      } else if (h.line.edge !== undefined) {
        const e = st.result.view.edges[h.line.edge];
        if (e && e.waker_frame) onNavigate(e.waker_frame.file, e.waker_frame.line);
      }
    });

    refresh();
    /** Selects the object `q` names (the wait lens's object), now or once the waits are in. */
    function selectObject(q) {
      if (st.result) { selectWanted(q); draw(); } else wantedObject = q;
    }
    return { refresh, selectObject, destroy: () => { st.seq++; root.replaceChildren(); } };
  }

  window.ThreadRadarWaits = { create };
})();
