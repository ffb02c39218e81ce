// The waits panel (issue 16, "correspondence view"; docs/waits.md): one lane per thread with its
// wait intervals on a canvas, wake edges drawn from the waker's lane to the end of the wait they
// ended, the objects table and the evidence notes. The page computes no figure: it asks
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
// data-lanes, data-intervals, data-edges (edges in the answer), data-drawn-edges (lines drawn:
// bundles when the server bundled them), data-bundled (edges folded into bundles of more than one).
"use strict";
(function () {
  const LANE = 20;     // px per thread lane
  const AXIS = 22;     // px of the time axis
  const PAD = 8;       // px left and right of the time area
  const PALETTE = ["#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#86bc86"];
  const EVIDENCE = {
    "kernel": "kernel-exact: the scheduler's wake-up event",
    "gil-holder": "inferred: the thread that held the GIL next",
    "same-object": "inferred: the thread last seen releasing the same object",
    "running-thread": "inferred: the only thread running when the wait ended",
  };

  const { el } = window.ThreadRadarDom;
  // `?view=waits&object=…` (Neovim's `:ThreadRadarWaits browser`, `b` in its float): the panel
  // opens with that object selected — the object with that label, else the first whose label,
  // type or name contains it (case-insensitive, as the `waits` method's own filter). Once per page.
  let wantedObject = new URLSearchParams(location.search).get("object") || null;
  const fmtS = (s) => (Math.abs(s) < 1 ? (s * 1000).toFixed(s < 0.01 ? 2 : 1) + " ms" : s.toFixed(3) + " s");

  function create(root, opts) {
    const fetchWaits = opts.fetchWaits;
    const onNavigate = opts.onNavigate || (() => {});
    const st = { result: null, colourBy: "thread", selected: null, seq: 0, hits: [], lanes: [], t1: 1 };

    root.classList.add("tr-waits");
    const colourSel = el("select", { "aria-label": "Colour edges and waits by" },
      el("option", { value: "thread", text: "colour by waiting thread" }),
      el("option", { value: "object", text: "colour by object" }));
    const info = el("span", { class: "tr-info" });
    const evidence = el("div", { class: "tr-evidence", "aria-label": "Evidence" });
    const labels = el("div", { class: "tr-labels" });
    const canvas = el("canvas", { class: "tr-canvas" });
    const tip = el("div", { class: "tr-tip", role: "tooltip" });
    tip.hidden = true;
    const tbody = el("tbody");
    const table = el("table", { class: "tr-objects" },
      el("caption", { text: "Waited-on objects — select a row to highlight its waits and edges" }),
      el("thead", {}, el("tr", {}, ...["object", "type", "name", "waits", "wait time", "futile wake-ups", "wakers", "waiting radar"].map((h, i) => el("th", { text: h, class: i >= 3 && i <= 5 ? "num" : "" })))),
      tbody);
    root.replaceChildren(
      el("div", { class: "tr-toolbar" }, colourSel, info),
      evidence,
      el("div", { class: "tr-body" }, labels, canvas),
      tip, table);

    colourSel.addEventListener("change", () => { st.colourBy = colourSel.value; draw(); });

    function colourOf(thread, object) {
      if (st.colourBy === "object") return PALETTE[object % PALETTE.length];
      const i = st.lanes.indexOf(thread);
      return PALETTE[(i < 0 ? 0 : i) % PALETTE.length];
    }

    async function refresh() {
      const width = Math.max(200, Math.floor(root.clientWidth || 900) - 190);
      info.textContent = "loading…";
      const r = await window.ThreadRadarTransport.latest(st, root, info, () => fetchWaits({ width_px: width - 2 * PAD }));
      if (!r) return;
      st.result = r;
      st.width = width;
      layout();
      showEvidence();
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
      st.selected = i;
      markRows();
      const row = tbody.children[i];
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
      let t1 = 0;
      for (const i of v.intervals) t1 = Math.max(t1, i.end_s);
      for (const e of v.edges) t1 = Math.max(t1, e.time_s);
      st.t1 = t1 > 0 ? t1 : 1;
      labels.replaceChildren(el("div", { class: "tr-axis-label", text: "thread", style: { height: AXIS + "px" } }),
        ...ids.map((id) => {
          const t = st.names[id];
          return el("div", { class: "tr-lane-label", title: t.name + " (" + id + ")", style: { height: LANE + "px", lineHeight: LANE + "px" } },
            el("span", { text: t.name }), el("span", { class: "tr-type", text: t.type || "" }));
        }));
    }

    function showEvidence() {
      const v = st.result.view, c = st.result.counts, edges = c.edges;
      const parts = [
        "Waits: sampled every " + fmtS(v.period_s) + " (a sampled start or end is known to within one period)" +
          (c.kernel_ends ? "; " + c.kernel_ends + " of " + c.ends + " starts and ends are the kernel's (the context switch into the sleep, the wake-up out of it)." : "."),
        "Edges: " + edges.kernel + " kernel-exact, " + edges.inferred + " inferred" +
          (edges.inferred ? " (" + edges.inferred_by.map((x) => x.count + " " + x.evidence).join(", ") + ")" : "") + ".",
        v.evidence.kernel ? "Scheduler wake-ups were recorded (record --sched) and used." : "No scheduler wake-ups in this run: every edge is inferred from samples.",
        v.evidence.targets ? "What each wait waited on was recorded." : "What each wait waited on was not recorded: objects are named by their wait site.",
      ];
      evidence.replaceChildren(
        ...parts.map((p) => el("div", { class: "tr-evidence-line", text: p })),
        ...v.evidence.notes.map((n) => el("div", { class: "tr-evidence-note", text: n })),
        el("div", { class: "tr-legend", text: "solid line: kernel-exact · dashed: inferred · grey: futile wake-up (the thread waited again) · hatched end: the wait never ended in the run" }));
    }

    function showObjects() {
      const v = st.result.view;
      tbody.replaceChildren(...v.objects.map((o, i) => {
        const all = Object.entries(o.wakers).sort((a, b) => b[1] - a[1]).map(([n, c]) => n + " ×" + c);
        const wakers = all.slice(0, 4).join(", ") + (all.length > 4 ? ", … " + (all.length - 4) + " more" : "");
        const row = el("tr", { "data-object": String(i), tabIndex: 0, "aria-selected": "false" },
          el("td", {}, el("span", { class: "tr-swatch", style: { background: PALETTE[i % PALETTE.length] } }), el("span", { text: o.object })),
          el("td", { text: o.type }),
          el("td", { text: o.name || "" }),
          el("td", { class: "num", text: String(o.waits) }),
          el("td", { class: "num", text: fmtS(o.wait_s) }),
          el("td", { class: "num", text: String(o.futile_wakeups) }),
          el("td", { text: wakers || "—", title: all.join(", ") }),
          radarCell(o));
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
        const on = st.selected !== null && r.getAttribute("data-object") === String(st.selected);
        r.classList.toggle("tr-selected", on);
        r.setAttribute("aria-selected", String(on));
      }
      if (st.selected === null) root.removeAttribute("data-selected-object"); else root.setAttribute("data-selected-object", String(st.selected));
    }

    const xOf = (t) => PAD + (t / st.t1) * (st.width - 2 * PAD);
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
      const ticks = 6;
      for (let k = 0; k <= ticks; k++) {
        const t = (st.t1 * k) / ticks, x = xOf(t);
        g.fillRect(x, AXIS - 6, 1, 5);
        g.textAlign = k === 0 ? "left" : k === ticks ? "right" : "center";
        g.fillText(fmtS(t), x, AXIS - 9);
      }
      // Lane backgrounds.
      st.lanes.forEach((_, i) => {
        g.fillStyle = i % 2 ? "rgba(128,128,128,0.06)" : "rgba(128,128,128,0.12)";
        g.fillRect(0, AXIS + i * LANE, st.width, LANE);
      });
      const dim = (obj) => st.selected !== null && obj !== st.selected;
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
      // Edges: bundles when the server bundled them (one line per pixel column and pair), else each.
      const lines = st.result.bundles
        ? st.result.bundles.map((b) => ({ waker: b.waker_thread, wakee: b.wakee_thread, object: b.object_index, evidence: b.evidence, t: b.to_s, from_s: b.from_s, count: b.count, futile: b.futile, confidence: b.confidence, bundle: b, edge: b.first_edge }))
        : v.edges.map((e, i) => ({ waker: e.waker_thread, wakee: e.wakee_thread, object: e.object_index, evidence: e.evidence, t: e.time_s, from_s: e.time_s, count: 1, futile: e.futile ? 1 : 0, confidence: e.confidence, edge: i }));
      let bundled = 0;
      for (const l of lines) {
        const x = xOf(l.t), ya = laneY(l.waker) + LANE / 2, yb = laneY(l.wakee) + (laneY(l.wakee) > laneY(l.waker) ? 3 : LANE - 3);
        g.globalAlpha = dim(l.object) ? 0.12 : 1;
        g.strokeStyle = l.futile === l.count ? "#999" : colourOf(l.wakee, l.object);
        g.lineWidth = l.count > 1 ? Math.min(1 + Math.log2(l.count), 5) : 1.5;
        g.setLineDash(l.evidence === "kernel" ? [] : [4, 3]);
        g.beginPath(); g.moveTo(x, ya); g.lineTo(x, yb); g.stroke();
        g.setLineDash([]);
        // the waker's end: a dot; the woken end: an arrow head
        g.fillStyle = g.strokeStyle;
        g.beginPath(); g.arc(x, ya, 2.5, 0, 2 * Math.PI); g.fill();
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
      info.textContent = st.lanes.length + " threads · " + v.intervals.length + " waits · " + v.edges.length + " wake edges" +
        (st.result.bundles ? " (drawn as " + lines.length + " lines, bundled per pixel column)" : "") + " · whole run, " + fmtS(st.t1);
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
        if (ended.length) for (const e of ended) out.push("woken by " + e.waker + " — " + (EVIDENCE[e.evidence] || e.evidence) + ", confidence " + e.confidence.toFixed(2));
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
        if (e && e.waker_frame) out.push("waker at: " + e.waker_frame.function + " " + e.waker_frame.file + ":" + e.waker_frame.line + (l.count > 1 ? " (the first of the bundle)" : "") + " (click to open)");
        else out.push("waker's code: no sample near the wake-up");
      }
      return out;
    }

    canvas.addEventListener("mousemove", (ev) => {
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
    return { refresh, destroy: () => { st.seq++; root.replaceChildren(); } };
  }

  window.ThreadRadarWaits = { create };
})();
