// The trace compare panel (issue 17; TraceDiff, paper 001; docs/compare.md): run A's lane above,
// run B's mirrored below, one lane pair per matched thread pair, joined by bundled edges whose
// width is the matched duration and whose colour is the time shift (earlier / same / later);
// stretches only in one run hatched; the changes in words at the top. The page computes no
// figure: it asks `fetchTrace(params)` (the protocol method `traceCompare`, which lays out every
// bar and edge in pixels) and draws the answer. Names from the profiled program reach the DOM
// through textContent only (labels, statements, tooltip, the artifact list); the SVG carries no
// program text.
//
//   const t = ThreadRadarTraceCompare.create(element, {
//     fetchTrace: (params) => Promise<TraceCompareResult>, // params: TraceCompareParams (web/protocol.d.ts)
//     onNavigate: (file, line) => {},                      // click on an edge or bar
//     a, b,                                                 // the runs (names or paths); absent: the server's defaults
//     selected,                                             // a function whose groups are lit at first
//   });
//   t.refresh(); t.selectArtifact(qualname | null); t.destroy();
//
// The root element carries what was drawn, for tests: data-lanes, data-groups, data-edges (edges
// drawn: bundles), data-bars-a, data-bars-b, data-only-a, data-only-b (bars only in one run),
// data-width-px (the width asked for), data-changes, data-matched-share, data-colour-by, data-selected, data-lit-groups, data-error.
"use strict";
(function () {
  const SVG = "http://www.w3.org/2000/svg";
  const LANE = 14;    // px of one run's lane
  const BAND = 46;    // px between A's lane and B's lane, where the edges run
  const GAP = 14;     // px between lane pairs
  const AXIS = 20;    // px of the time axis
  const PAD = 8;      // px left and right of the time area
  const LABELS = 220; // px of the thread labels
  const SHIFT = {
    earlier: { colour: "#2c7bb6", text: "earlier in B" },
    same: { colour: "#8a8a8a", text: "same time" },
    later: { colour: "#d7452b", text: "later in B" },
  };

  const { el } = window.ThreadRadarDom;
  function svg(tag, attrs) {
    const e = document.createElementNS(SVG, tag);
    for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, String(v));
    return e;
  }
  const fmtS = (s) => (Math.abs(s) < 1 ? (s * 1000).toFixed(Math.abs(s) < 0.01 ? 2 : 1) + " ms" : s.toFixed(3) + " s");
  const signed = (s) => (s > 0 ? "+" : s < 0 ? "−" : "±") + fmtS(Math.abs(s));

  function create(root, opts) {
    const fetchTrace = opts.fetchTrace;
    const onNavigate = opts.onNavigate || (() => {});
    const st = { result: null, seq: 0, selected: opts.selected || null, a: opts.a, b: opts.b, colourBy: "shift" };

    root.classList.add("tr-tracecompare");
    const sides = el("div", { class: "tc-sides" });
    const changes = el("ul", { class: "tc-changes", "aria-label": "What changed, in words" });
    const moreBox = el("div");
    const how = el("div", { class: "tc-how note", "aria-label": "How the figures were obtained" });
    const legend = el("div", { class: "tc-legend", "aria-label": "Legend" });
    const pick = el("select", { class: "tc-artifact", "aria-label": "Light the match groups of a function" });
    const info = el("span", { class: "tr-info" });
    // TraceDiff's permutation colouring: an edge's hue is its group's rank in A within its lane
    // pair, so groups that B runs in another order show as out-of-order hues.
    const colourSel = el("select", { class: "tc-colour", "aria-label": "Colour the edges by" },
      el("option", { value: "shift", text: "colour: time shift" }),
      el("option", { value: "order", text: "colour: order in A (permutation)" }));
    const labels = el("div", { class: "tc-labels", style: { width: LABELS + "px" } });
    const picture = svg("svg", { class: "tc-svg", role: "img", "aria-label": "Run A's lanes above, run B's below, matched stretches joined" });
    const unmatched = el("div", { class: "tc-unmatched" });
    const tip = el("div", { class: "tr-tip tc-tip", role: "tooltip" });
    tip.hidden = true;
    root.replaceChildren(
      sides, changes, moreBox,
      el("div", { class: "tr-toolbar" }, el("label", { text: "light the groups of " }, pick), colourSel, info),
      legend, how,
      el("div", { class: "tc-body" }, labels, el("div", { class: "tc-scroll" }, picture)),
      unmatched, tip);
    legendBody();
    pick.addEventListener("change", () => selectArtifact(pick.value || null));
    colourSel.addEventListener("change", () => { st.colourBy = colourSel.value; if (st.result) draw(); });

    function legendBody() {
      const swatch = (cls, colour) => el("span", { class: "tc-swatch " + cls, style: colour ? { background: colour } : {} });
      legend.replaceChildren(
        el("span", { text: "edges (width: matched duration; colour: time shift of B against A): " }),
        ...Object.entries(SHIFT).map(([k, s]) => el("span", { class: "tc-key", "data-shift": k }, swatch("", s.colour), el("span", { text: s.text }))),
        el("span", { class: "tc-key" }, swatch("tc-matched", null), el("span", { text: "matched stretch" })),
        el("span", { class: "tc-key" }, swatch("tc-only", null), el("span", { text: "only in A / only in B" })));
    }

    async function refresh() {
      const width = Math.max(240, Math.floor(root.clientWidth || 1000) - LABELS - 24);
      info.textContent = "matching the runs…";
      // A side may be a run set (several runs: its first is drawn, the changes tested against the sets' spread).
      const side = (k, v) => (Array.isArray(v) ? (v.length > 1 ? { [k + "_runs"]: v } : { [k]: v[0] }) : v ? { [k]: v } : {});
      const r = await window.ThreadRadarTransport.latest(st, root, info, () => fetchTrace({ ...side("a", st.a), ...side("b", st.b), width_px: width - 2 * PAD }));
      if (!r) return;
      st.result = r;
      st.width = width;
      render();
    }

    function render() {
      const r = st.result;
      const run = (label, s) => el("div", { title: s.path },
        el("strong", { text: label + " " }),
        el("span", { text: s.name + " · " + (s.command || []).join(" ") + " · " + s.duration_s.toFixed(2) + " s · sampled every " + s.period_ms.toFixed(2) + " ms" }));
      sides.replaceChildren(run("A (above)", r.a), run("B (below)", r.b));
      // The first statements in sight, the rest one click away.
      const SHOWN = 8;
      const items = r.changes.map((c) => {
        const sig = c.significant == null ? "one run per side: no spread to test against" : c.significant ? "significant: exceeds the runs' spread" : "within noise";
        const li = el("li", { class: "change", "data-artifact": c.artifact, "data-significant": String(c.significant), title: sig },
          el("span", { text: c.statement }),
          c.significant === false ? el("span", { class: "muted", text: " (within noise)" }) : null);
        li.addEventListener("click", () => selectArtifact(c.artifact));
        return li;
      });
      const more = items.length > SHOWN ? el("details", { class: "tc-more" }, el("summary", { text: (items.length - SHOWN) + " more" }), el("ul", { class: "tc-changes" }, ...items.slice(SHOWN))) : null;
      changes.replaceChildren(...items.slice(0, SHOWN));
      if (!items.length) changes.replaceChildren(el("li", { class: "muted", text: "No change of the program's own code stands out." }));
      moreBox.replaceChildren(...(more ? [more] : []));
      how.replaceChildren(...r.notes.map((n) => el("div", { text: n })),
        el("div", { text: (r.matched_share * 100).toFixed(1) + "% of the stack time of both runs matched; " + r.groups.length + " match groups in " + r.lanes.length + (r.lanes.some((l) => l.a.parent != null) ? " pairs of tasks or threads." : " thread pairs.") }));
      info.textContent = "";
      // The functions the groups stand for: the link with the artifact table.
      const names = new Set();
      for (const g of r.groups) for (const f of g.functions) names.add(f);
      const sel = st.selected;
      pick.replaceChildren(el("option", { value: "", text: "(none)" }), ...[...names].sort().map((n) => el("option", { value: n, text: n, selected: n === sel })));
      unmatched.replaceChildren(
        ...[["A", r.unmatched_a], ["B", r.unmatched_b]].filter(([, ts]) => ts.length).map(([side, ts]) =>
          el("div", { class: "tc-only-threads", "data-side": side.toLowerCase() },
            el("strong", { text: "Threads only in " + side + " (no partner in the other run): " }),
            ...ts.map((t, i) => el("span", { class: "tc-thread", text: (i ? ", " : "") + t.name + " (" + t.thread_type + ", " + fmtS(t.stack_s) + ")" })))));
      draw();
    }

    function draw() {
      const r = st.result;
      const lit = litGroups();
      const x = (px) => PAD + px;
      const height = AXIS + r.lanes.length * (2 * LANE + BAND + GAP);
      picture.setAttribute("width", st.width);
      picture.setAttribute("height", height);
      picture.setAttribute("viewBox", "0 0 " + st.width + " " + height);
      const defs = svg("defs");
      const hatch = svg("pattern", { id: "tc-hatch", patternUnits: "userSpaceOnUse", width: 6, height: 6, patternTransform: "rotate(45)" });
      hatch.append(svg("rect", { width: 6, height: 6, fill: "#eee" }), svg("line", { x1: 0, y1: 0, x2: 0, y2: 6, stroke: "#999", "stroke-width": 3 }));
      defs.append(hatch);
      const nodes = [defs];
      // The time axis: seconds from each run's own start, one scale for both.
      const step = niceStep(r.axis_s / 8);
      for (let t = 0; t <= r.axis_s + 1e-9; t += step) {
        const px = x((t / r.axis_s) * r.width_px);
        nodes.push(svg("line", { x1: px, y1: AXIS - 4, x2: px, y2: height, class: "tc-grid" }));
        const label = svg("text", { x: px + 2, y: AXIS - 8, class: "tc-tick" });
        label.textContent = (step < 0.1 ? t.toFixed(2) : t.toFixed(1)) + " s";
        nodes.push(label);
      }
      const maxDur = Math.max(1e-12, ...r.edges.map((e) => (e.a_duration_s + e.b_duration_s) / 2));
      // Per lane pair: each edge's rank by its position in A (the permutation colouring).
      const rank = new Map(), perLane = {};
      r.edges.forEach((e, i) => { (perLane[e.lane] = perLane[e.lane] || []).push(i); });
      for (const ids of Object.values(perLane)) {
        ids.sort((i, j) => r.edges[i].a_x - r.edges[j].a_x);
        ids.forEach((i, k) => rank.set(i, ids.length > 1 ? k / (ids.length - 1) : 0));
      }
      const edgeColour = (e, i) => st.colourBy === "order" ? "hsl(" + Math.round(240 * rank.get(i)) + ",70%,45%)" : SHIFT[e.shift].colour;
      let barsA = 0, barsB = 0, onlyA = 0, onlyB = 0;
      const tasks = r.lanes.some((l) => l.a.parent != null);
      const rows = [el("div", { class: "tc-axis-label", text: (tasks ? "task (↳) or thread" : "thread") + " (A above, B below)", style: { height: AXIS + "px" } })];
      r.lanes.forEach((lane, k) => {
        const top = AXIS + k * (2 * LANE + BAND + GAP);
        const yA = top, yB = top + LANE + BAND;
        // An asyncio task unit's pair comes right after its event loop thread's, indented and
        // marked with the thread it ran on.
        const task = lane.a.parent != null;
        const taskOf = (t) => (t.parent != null ? el("span", { class: "tc-task-of", text: " · task of " + t.parent }) : null);
        rows.push(el("div", { class: "tc-lane-label" + (task ? " tc-task" : ""), "data-parent": task ? lane.a.parent : "", title: "A: " + lane.a.name + " (" + lane.a.id + ") · B: " + lane.b.name + " (" + lane.b.id + ")", style: { height: (2 * LANE + BAND) + "px", marginBottom: GAP + "px" } },
          el("div", { class: "tc-name-a" }, el("span", { text: lane.a.name }), el("span", { class: "tr-type", text: " " + lane.a.thread_type }), taskOf(lane.a)),
          el("div", { class: "tc-pair-info", text: (lane.matched_share * 100).toFixed(0) + "% matched · paired by " + (lane.paired_by === "key" ? "name, type and entry" : "stack similarity") }),
          el("div", { class: "tc-name-b" }, el("span", { text: lane.b.name }), el("span", { class: "tr-type", text: " " + lane.b.thread_type }), taskOf(lane.b))));
        nodes.push(svg("rect", { x: x(0), y: yA, width: r.width_px, height: LANE, class: "tc-lane" }), svg("rect", { x: x(0), y: yB, width: r.width_px, height: LANE, class: "tc-lane" }));
        for (const [side, bars, y] of [["a", lane.a_bars, yA], ["b", lane.b_bars, yB]]) {
          for (const b of bars) {
            const only = b.group == null;
            const rect = svg("rect", {
              x: x(b.x0), y, width: Math.max(1, b.x1 - b.x0), height: LANE,
              class: "tc-bar " + (only ? "tc-only" : "tc-matched") + (only ? "" : lit && lit.has(b.group) ? " tc-lit" : lit ? " tc-dim" : ""),
              fill: only ? "url(#tc-hatch)" : SHIFT[r.groups[b.group].shift].colour,
              "data-side": side,
            });
            if (!only) { rect.setAttribute("data-group", b.group); rect.setAttribute("data-shift", r.groups[b.group].shift); }
            rect.addEventListener("mousemove", (ev) => showBarTip(ev, side, b));
            rect.addEventListener("mouseleave", hideTip);
            rect.addEventListener("click", () => goBar(side, b));
            nodes.push(rect);
            if (side === "a") { barsA++; if (only) onlyA++; } else { barsB++; if (only) onlyB++; }
          }
        }
      });
      r.edges.forEach((e, i) => {
        const lane = e.lane;
        const top = AXIS + lane * (2 * LANE + BAND + GAP);
        const y0 = top + LANE, y1 = top + LANE + BAND;
        const ax = x(e.a_x), bx = x(e.b_x);
        const width = 1 + 9 * ((e.a_duration_s + e.b_duration_s) / 2) / maxDur;
        const isLit = lit && e.groups.some((g) => lit.has(g));
        const path = svg("path", {
          d: "M" + ax + "," + y0 + " C" + ax + "," + (y0 + BAND / 2) + " " + bx + "," + (y1 - BAND / 2) + " " + bx + "," + y1,
          stroke: edgeColour(e, i), "stroke-width": width.toFixed(2), fill: "none",
          class: "tc-edge" + (isLit ? " tc-lit" : lit ? " tc-dim" : ""),
          "data-shift": e.shift, "data-lane": lane, "data-groups": e.groups.length,
        });
        path.addEventListener("mousemove", (ev) => showEdgeTip(ev, e));
        path.addEventListener("mouseleave", hideTip);
        path.addEventListener("click", () => goGroup(r.groups[e.groups[0]]));
        nodes.push(path);
      });
      picture.replaceChildren(...nodes);
      labels.replaceChildren(...rows);
      const set = (k, v) => root.setAttribute("data-" + k, String(v));
      set("lanes", r.lanes.length); set("groups", r.groups.length); set("edges", r.edges.length);
      set("bars-a", barsA); set("bars-b", barsB); set("only-a", onlyA); set("only-b", onlyB);
      set("width-px", r.width_px); set("changes", r.changes.length); set("matched-share", r.matched_share.toFixed(4));
      set("colour-by", st.colourBy); set("selected", st.selected || ""); set("lit-groups", lit ? lit.size : 0);
    }

    function niceStep(raw) {
      const p = Math.pow(10, Math.floor(Math.log10(Math.max(raw, 1e-6))));
      for (const m of [1, 2, 5, 10]) if (m * p >= raw) return m * p;
      return 10 * p;
    }
    function litGroups() {
      if (!st.selected || !st.result) return null;
      const s = new Set();
      st.result.groups.forEach((g, i) => { if (g.functions.includes(st.selected)) s.add(i); });
      return s;
    }
    function selectArtifact(name) {
      st.selected = name || null;
      pick.value = st.selected || "";
      if (st.result) draw();
    }

    // ---- hover and click ------------------------------------------------------------------------
    function frameRows(stack) {
      // Innermost first, as a stack is read.
      return stack.slice().reverse().map((f) => el("div", { class: "tc-frame", title: f.file + ":" + f.line, text: f.qualname + "  " + f.file.split("/").pop() + ":" + f.line }));
    }
    function place(ev) {
      tip.hidden = false;
      const box = root.getBoundingClientRect();
      tip.style.left = Math.min(ev.clientX - box.left + 14, Math.max(0, box.width - 620)) + "px";
      tip.style.top = (ev.clientY - box.top + 14) + "px";
    }
    function showEdgeTip(ev, e) {
      const r = st.result, g = r.groups[e.groups[0]];
      tip.setAttribute("data-kind", "edge");
      tip.replaceChildren(
        el("div", { class: "tc-tip-head", text: (e.groups.length > 1 ? e.groups.length + " match groups bundled; the longest: " : "match group: ") +
          "A " + fmtS(e.a_duration_s) + " at " + g.a_start_s.toFixed(3) + " s → B " + fmtS(e.b_duration_s) + " at " + g.b_start_s.toFixed(3) + " s, shift " + signed(e.shift_s) + " (" + SHIFT[e.shift].text + "), similarity " + g.similarity.toFixed(2) }),
        el("div", { class: "tc-stacks" },
          el("div", { class: "tc-stack", "data-side": "a" }, el("strong", { text: "A" }), ...frameRows(g.stack_a)),
          el("div", { class: "tc-stack", "data-side": "b" }, el("strong", { text: "B" }), ...frameRows(g.stack_b))),
        el("div", { class: "muted", text: "sampled stacks (the longest segment of the group); click to open the source" }));
      place(ev);
    }
    function showBarTip(ev, side, b) {
      const r = st.result;
      tip.setAttribute("data-kind", b.group == null ? "only" : "bar");
      if (b.group == null) {
        tip.replaceChildren(
          el("div", { class: "tc-tip-head", text: "only in " + side.toUpperCase() + ": " + fmtS(b.duration_s) + " of stack time from " + b.start_s.toFixed(3) + " s" + (b.count > 1 ? " (" + b.count + " stretches)" : "") }),
          el("div", { class: "tc-stacks" }, el("div", { class: "tc-stack", "data-side": side }, ...frameRows(b.stack || []))));
      } else {
        const g = r.groups[b.group];
        tip.replaceChildren(
          el("div", { class: "tc-tip-head", text: "matched: A " + fmtS(g.a_duration_s) + " ↔ B " + fmtS(g.b_duration_s) + ", shift " + signed(g.shift_s) + " (" + SHIFT[g.shift].text + ")" + (b.count > 1 ? " (" + b.count + " groups in this pixel)" : "") }),
          el("div", { class: "tc-stacks" },
            el("div", { class: "tc-stack", "data-side": "a" }, el("strong", { text: "A" }), ...frameRows(g.stack_a)),
            el("div", { class: "tc-stack", "data-side": "b" }, el("strong", { text: "B" }), ...frameRows(g.stack_b))));
      }
      place(ev);
    }
    function hideTip() { tip.hidden = true; }
    // The innermost frame of the program's own code (a function the group lists), else the innermost.
    function target(stack, own) {
      for (let i = stack.length - 1; i >= 0; i--) if (own.includes(stack[i].qualname)) return stack[i];
      return stack[stack.length - 1];
    }
    function goGroup(g) {
      const f = target(g.stack_b.length ? g.stack_b : g.stack_a, g.functions);
      if (f) onNavigate(f.file, f.line);
    }
    function goBar(side, b) {
      if (b.group != null) { goGroup(st.result.groups[b.group]); return; }
      const s = b.stack || [];
      const f = s[s.length - 1];
      if (f) onNavigate(f.file, f.line);
    }

    return {
      refresh,
      selectArtifact,
      setRuns: (a, b) => { st.a = a; st.b = b; return refresh(); },
      destroy: () => { st.seq++; root.replaceChildren(); },
    };
  }

  window.ThreadRadarTraceCompare = { create };
})();
