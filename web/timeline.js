// The timeline panel (spec §6 "Icicle panel"): every thread's icicle on one merged time axis,
// drawn on a <canvas> from the layouts the analysis computes (`analysis::timeline::layout`). The
// page computes no figure: it asks `fetchLayout(params)` for the viewport it shows and draws the
// answer. Names from the profiled program reach the DOM through textContent only (lane labels,
// tooltip); on the canvas they are pixels.
//
//   const tl = ThreadRadarTimeline.create(element, {
//     fetchLayout: (params) => Promise<layout>,   // params: a LayoutRequest (docs/timeline.md)
//     onNavigate: (file, line) => {},             // click on a bar
//     onTimeWindow: (fromS, toS) => {},           // brush on the time axis; (null, null) = reset
//   });
//   tl.setThreads(ids | null); tl.setTheta(x); tl.setFold({top, stdlib, depth}); tl.setSort(key);
//   tl.zoomTo(fromS, toS); tl.destroy();
//   tl.setExcluded(ids);          // the global thread filter: those lanes are not shown
//   tl.setArtifact(key | null, colours);  // highlight its bars (and, when `focus`, zoom to
//                                 // them); colours = {thread id: cluster colour} for the lanes
//   tl.setWindow(fromS, toS);     // show the applied time window (null, null: none)
//   tl.showRange(fromS, toS, threadIds); // zoom to a moment and highlight those threads' lanes
//
// Lanes fit (issue 32): by default each lane shows at most DEPTH rows (the server folds deeper
// levels into the last row and says how many, `folded_below`; the label's "+N" expands that
// lane) and runs of standard-library frames — the interpreter's import machinery among them —
// are folded into one band (the "fold stdlib" box expands them). Every entry point that
// highlights something (an artifact, a moment's threads) scrolls the first lane it lights into
// view once its layout is drawn (data-scrolled-to: that lane's thread id).
"use strict";
(function () {
  const ROW = 12;      // px per stack level
  const HEAD = 16;     // px of a lane's state strip above its rows
  const GAP = 4;       // px between lanes
  const AXIS = 28;     // px of the time axis (the brush lives here)
  const LABEL = 180;   // px of the lane labels
  const SORTS = { first: "first seen", name: "name", type: "type", crt: "crt" };
  const DEPTH = 8;     // rows per lane by default (the lane depth select offers more)
  const DEPTHS = [[8, "lanes ≤ 8 rows"], [16, "lanes ≤ 16 rows"], [32, "lanes ≤ 32 rows"], [0, "lanes: full depth"]];

  const { el } = window.ThreadRadarDom;

  const fmtS = (s) => (Math.abs(s) < 1 ? (s * 1000).toFixed(s < 0.01 ? 2 : 1) + " ms" : s.toFixed(3) + " s");

  // ---- pieces of the panel that need none of its state -----------------------------------------
  function makeToolbar() {
    const theta = el("input", { type: "range", min: "0", max: "5", step: "0.05", value: "0", "aria-label": "θ (logarithmic time scaling)" });
    const thetaOut = el("output", { text: "linear" });
    const foldTop = el("select", { "aria-label": "Fold top levels" });
    for (let n = 0; n <= 6; n++) foldTop.append(el("option", { value: String(n), text: n < 2 ? "no folding" : "fold top " + n }));
    const foldStd = el("input", { type: "checkbox", "aria-label": "Fold standard library", checked: true });
    const depth = el("select", { "aria-label": "Rows per lane" });
    for (const [n, text] of DEPTHS) depth.append(el("option", { value: String(n), text, selected: n === DEPTH }));
    const sort = el("select", { "aria-label": "Sort lanes" });
    for (const [k, v] of Object.entries(SORTS)) sort.append(el("option", { value: k, text: v }));
    const resetZoom = el("button", { type: "button", text: "whole run" });
    const resetBrush = el("button", { type: "button", text: "reset time window", disabled: true });
    const info = el("span", { class: "tr-info" });
    const toolbar = el("div", { class: "tr-toolbar" },
      el("label", {}, "θ ", theta, " ", thetaOut),
      el("label", {}, foldTop),
      el("label", { title: "Runs of standard-library frames (the interpreter's imports among them) as one band each" }, foldStd, " fold stdlib"),
      el("label", { title: "Deeper lanes fold their innermost levels into the last row; +N on a lane expands it" }, depth),
      el("label", {}, "sort ", sort),
      resetZoom, resetBrush, info);
    return { toolbar, theta, thetaOut, foldTop, foldStd, depth, sort, resetZoom, resetBrush, info };
  }

  /** A lane's label: its name, type, and when levels are folded the button that expands them. */
  function laneLabel(p, colour, lit, expanded, onToggle) {
    const lane = p.lane;
    const fold = lane.folded_below > 0 || expanded
      ? el("button", { type: "button", class: "tr-fold", "data-folded": String(lane.folded_below), text: lane.folded_below > 0 ? "+" + lane.folded_below : "−",
        title: lane.folded_below > 0 ? lane.folded_below + " deeper levels folded into the last row (of " + lane.full_depth + "): show them all" : "Fold this lane again" })
      : null;
    if (fold) fold.addEventListener("click", (e) => { e.stopPropagation(); onToggle(lane.thread); });
    const task = lane.parent != null;
    const d = el("div", { class: "tr-lane-label" + (task ? " tr-task" : "") + (colour ? " tr-c-" + colour : "") + (lit ? " tr-lit" : ""), "data-thread": String(lane.thread), "data-parent": task ? String(lane.parent) : "", "data-cluster": colour || "", "data-lit": lit ? "1" : "", "data-depth": String(lane.depth), "data-folded-below": String(lane.folded_below || 0) },
      el("span", { class: "tr-name", text: lane.name }),
      el("span", { class: "tr-type", text: lane.type }),
      task ? el("span", { class: "tr-task-of", text: "task of " + p.parentName }) : null, fold);
    d.style.height = p.h + "px";
    d.style.marginBottom = GAP + "px";
    d.title = (task ? `asyncio task of ${p.parentName}: ` : "") + `${lane.name} (${lane.type}), crt ${(lane.crt * 100).toFixed(1)} %` + (colour ? `, ${colour} cluster of the selected artifact` : "") +
      (lane.folded_below > 0 ? `; ${lane.folded_below} deeper levels folded into its last row` : "");
    return d;
  }

  function paintAxis(c, l, w, ay) {
    c.fillStyle = "#f4f4f4";
    c.fillRect(0, ay, w, AXIS);
    c.fillStyle = "#444";
    c.font = "10px sans-serif";
    c.textBaseline = "top";
    for (const t of l.axis) {
      c.fillRect(t.x, ay, 1, 4);
      c.textAlign = t.x <= 0 ? "left" : t.x >= w - 1 ? "right" : "center";
      c.fillText(fmtS(t.t_s), t.x, ay + 6);
    }
  }

  /** A lane whose deeper levels are folded: a dashed line under its last row. */
  function paintFold(c, p, w) {
    if (!(p.lane.folded_below > 0)) return;
    const y = p.y + HEAD + p.lane.depth * ROW - 1;
    c.save();
    c.strokeStyle = "#888";
    c.setLineDash([4, 3]);
    c.beginPath(); c.moveTo(0, y + 0.5); c.lineTo(w, y + 0.5); c.stroke();
    c.restore();
  }

  /** Lanes in `sort` order with their y offset and height; per lane and depth the drawn items
   *  sorted by x for hit-testing. */
  function placeLanes(l, excluded, sort) {
    const lanes = l.lanes.filter((lane) => !excluded.has(lane.thread));
    const by = {
      first: (a, b) => a.first_s - b.first_s || a.thread - b.thread,
      name: (a, b) => a.name.localeCompare(b.name) || a.thread - b.thread,
      type: (a, b) => a.type.localeCompare(b.type) || a.name.localeCompare(b.name),
      crt: (a, b) => b.crt - a.crt || a.thread - b.thread,
    }[sort];
    // A task's lane (asyncio tasks as units) follows its event-loop thread's lane: the threads
    // are sorted, then each one's tasks (sorted alike) are put right after it; tasks whose thread
    // has no lane here come last, still labelled with their thread.
    const threads = lanes.filter((lane) => lane.parent == null).sort(by);
    const tasksOf = new Map();
    for (const lane of lanes) if (lane.parent != null) (tasksOf.get(lane.parent) || tasksOf.set(lane.parent, []).get(lane.parent)).push(lane);
    lanes.length = 0;
    for (const t of threads) {
      lanes.push(t);
      lanes.push(...(tasksOf.get(t.thread) || []).sort(by));
      tasksOf.delete(t.thread);
    }
    for (const rest of tasksOf.values()) lanes.push(...rest.sort(by));
    const nameOf = new Map(l.lanes.map((lane) => [lane.thread, lane.name]));
    let y = 0;
    const placed = lanes.map((lane) => {
      const h = HEAD + Math.max(1, lane.depth) * ROW;
      const rows = [];
      for (const b of lane.bars) (rows[b.depth] ||= []).push({ kind: "bar", item: b });
      for (const b of lane.blocks) (rows[b.depth] ||= []).push({ kind: "block", item: b });
      for (const r of rows) if (r) r.sort((a, b) => a.item.x0 - b.item.x0);
      const p = { lane, y, h, rows, parentName: lane.parent != null ? (nameOf.get(lane.parent) ?? "#" + lane.parent) : null };
      y += h + GAP;
      return p;
    });
    return { lanes: placed, height: y };
  }

  /** The item under (x, y) of placed lanes: a bar, a block, or the lane's state there. */
  function hitIn(index, x, y) {
    if (!index) return null;
    for (const p of index.lanes) {
      if (y < p.y || y >= p.y + p.h) continue;
      const depth = Math.floor((y - p.y - HEAD) / ROW);
      const row = depth >= 0 ? p.rows[depth] : null;
      if (row) {
        let lo = 0, hi = row.length;
        while (lo < hi) { const m = (lo + hi) >> 1; if (row[m].item.x1 <= x) lo = m + 1; else hi = m; }
        const c = row[lo];
        if (c && c.item.x0 <= x) return { lane: p.lane, ...c };
      }
      const s = p.lane.states.find((s) => s.x0 <= x && x < s.x1);
      if (s) return { lane: p.lane, kind: "state", item: s };
      const a = (p.lane.awaits || []).find((a) => a.x0 <= x && x < a.x1);
      return a ? { lane: p.lane, kind: "await", item: a } : null;
    }
    return null;
  }

  // Time ↔ x through a layout's axis ticks (the merged axis, sampled every ~120 px).
  function timeOfX(a, x) {
    if (!a.length) return 0;
    if (x <= a[0].x) return a[0].t_s;
    for (let i = 1; i < a.length; i++) {
      if (x <= a[i].x) return a[i - 1].t_s + (a[i].t_s - a[i - 1].t_s) * (x - a[i - 1].x) / (a[i].x - a[i - 1].x || 1);
    }
    return a[a.length - 1].t_s;
  }
  function xOfTime(a, t) {
    if (!a.length) return 0;
    if (t <= a[0].t_s) return a[0].x;
    for (let i = 1; i < a.length; i++) {
      if (t <= a[i].t_s) return a[i - 1].x + (a[i].x - a[i - 1].x) * (t - a[i - 1].t_s) / (a[i].t_s - a[i - 1].t_s || 1);
    }
    return a[a.length - 1].x;
  }

  /** The tooltip's lines for a hit item of layout `l`. */
  function tipLines(l, h) {
    const i = h.item, lines = [];
    const stateText = (s, k) => s + (k ? " (" + k + ")" : "");
    if (h.kind === "bar") {
      const f = l.frames[i.frame];
      lines.push(f.function, `${f.file}:${f.line}`, `thread ${h.lane.name} (${h.lane.type})`,
        `start ${fmtS(i.start_s)}, duration ${fmtS(i.end_s - i.start_s)}`, `state ${stateText(i.state, i.blocked)}`);
      if (i.folded_levels) lines.push(`${i.folded_levels} outer levels folded`);
      if (i.stdlib_band) lines.push("standard-library frames folded");
      if (h.lane.folded_below && i.depth === h.lane.depth - 1) lines.push(`this row also covers ${h.lane.folded_below} deeper levels (folded; +${h.lane.folded_below} on the label shows them)`);
    } else if (h.kind === "block") {
      lines.push(`${i.count} bars narrower than a pixel`, `thread ${h.lane.name} (${h.lane.type})`,
        `${fmtS(i.start_s)} – ${fmtS(i.end_s)}`, "zoom in to see them");
    } else if (h.kind === "await") {
      lines.push(`task ${h.lane.name} (${h.lane.type})`, `awaiting ${i.awaits != null ? "task " + i.awaits : "a future (not a task)"}`,
        `${fmtS(i.start_s)} – ${fmtS(i.end_s)}`, `evidence: ${i.evidence} (the recorded task state, read at the sampler's ticks)`);
    } else {
      lines.push(`thread ${h.lane.name} (${h.lane.type})`, `state ${stateText(i.state, i.blocked)}${i.sampled ? " (sampled at this pixel)" : ""}`);
    }
    return lines;
  }

  // The per-unit table (threads, or asyncio tasks and threads), in lane order; names as text.
  function overviewTable(table, layout, order) {
    const rows = (layout.overview || []).slice();
    const parentOf = new Map((layout.lanes || []).map((l) => [l.thread, l.parent]));
    const tasks = [...parentOf.values()].some((p) => p != null);
    const at = new Map(order.map((t, i) => [t, i]));
    const shown = rows.filter((r) => at.has(r.thread)).sort((a, b) => at.get(a.thread) - at.get(b.thread));
    const pct = (x) => (x * 100).toFixed(1) + " %";
    const head = el("tr", {}, ...[tasks ? "task or thread" : "thread", "type", "samples", "busy", "waiting", "longest wait", "top frames"].map((t) => el("th", { text: t })));
    const body = shown.map((r) => {
      const w = r.longest_wait;
      const wait = w ? `${fmtS(w.duration_s)} ${w.state}${w.blocked ? " (" + w.blocked + ")" : ""} at ${fmtS(w.start_s)}` : "–";
      const top = r.top_frames.map((f) => `${f.function} ${pct(f.share)}`).join(", ");
      const task = parentOf.get(r.thread) != null;
      return el("tr", { "data-thread": String(r.thread), "data-task": task ? "1" : "" },
        el("td", { text: (task ? "↳ " : "") + r.name }), el("td", { text: r.type }), el("td", { class: "num", text: String(r.samples) }),
        el("td", { class: "num", "data-field": "busy", text: pct(r.busy) }),
        el("td", { class: "num", "data-field": "waiting", text: pct(r.gil + r.idle) }),
        el("td", { text: wait }), el("td", { text: top }));
    });
    const per = tasks ? "Per asyncio task (↳, under its event loop's thread) and thread" : "Per thread";
    table.replaceChildren(el("caption", { text: `${per} over the viewport (sampled): busy = computing, waiting = GIL or idle` }), el("thead", {}, head), el("tbody", {}, ...body));
  }

  /** Every lane of a placed layout: cluster stripe, state underlay, blocks, bars, fold marks. */
  function paintLanes(c, l, index, laneColours, css, w) {
    const colours = l.state_colours;
    const highlighting = !!l.focus;
    for (const p of index.lanes) {
      const lane = p.lane;
      // The lane's cluster colour for the selected artifact: a stripe along its left edge.
      const cc = laneColours[lane.thread];
      if (cc) {
        c.fillStyle = css.getPropertyValue("--" + cc).trim() || "#888";
        c.fillRect(0, p.y, 3, p.h);
      }
      // State underlay: the strip above the rows, and faintly behind them.
      for (const s of lane.states) {
        c.fillStyle = colours[s.state];
        c.fillRect(s.x0, p.y, Math.max(s.x1 - s.x0, 0.5), HEAD - 3);
        c.globalAlpha = 0.45;
        c.fillRect(s.x0, p.y + HEAD, Math.max(s.x1 - s.x0, 0.5), p.h - HEAD);
        c.globalAlpha = 1;
      }
      // A task's recorded awaiting time: a hatched strip (it did not run; evidence task-state).
      if (lane.awaits) {
        c.save();
        c.strokeStyle = "#8a8a8a";
        c.lineWidth = 1;
        for (const a of lane.awaits) {
          const aw = Math.max(a.x1 - a.x0, 1);
          c.fillStyle = "rgba(138,138,138,0.18)";
          c.fillRect(a.x0, p.y, aw, HEAD - 3);
          c.beginPath();
          for (let x = a.x0; x < a.x0 + aw; x += 4) { c.moveTo(x, p.y + HEAD - 3); c.lineTo(Math.min(x + 4, a.x0 + aw), p.y); }
          c.stroke();
        }
        c.restore();
      }
      c.fillStyle = "rgba(120,120,120,0.35)";
      for (const b of lane.blocks) c.fillRect(b.x0, p.y + HEAD + b.depth * ROW, b.x1 - b.x0, ROW - 1);
      c.font = "9px sans-serif";
      c.textBaseline = "middle";
      for (const b of lane.bars) {
        const f = l.frames[b.frame];
        const x = b.x0, y = p.y + HEAD + b.depth * ROW, bw = b.x1 - b.x0;
        c.fillStyle = f.colour;
        // With an artifact selected, its bars stay bright and outlined; the others fade.
        if (highlighting && !f.highlighted) c.globalAlpha = 0.3;
        c.fillRect(x, y, bw, ROW - 1);
        c.globalAlpha = 1;
        if (highlighting && f.highlighted) {
          c.strokeStyle = "#d0006f";
          c.lineWidth = 1.5;
          c.strokeRect(x + 0.75, y + 0.75, Math.max(bw - 1.5, 0.5), ROW - 2.5);
        }
        if (b.folded_levels > 0 || b.stdlib_band) {
          c.fillStyle = "rgba(255,255,255,0.45)";
          c.fillRect(x, y + ROW - 4, bw, 3);
        }
        if (bw > 40) {
          c.save();
          c.beginPath();
          c.rect(x, y, bw, ROW);
          c.clip();
          c.fillStyle = "#222";
          c.fillText(f.function, x + 2, y + ROW / 2);
          c.restore();
        }
      }
      paintFold(c, p, w);
    }
  }

  /** One frame: the painted layout blitted (shifted while a pan's layout is on its way), then the
   *  brush, the hovered bar and the box or brush being dragged. */
  function drawFrame(st, canvas, cache, ctx, w) {
    const t0 = performance.now();
    if (!st.layout || !st.index) return;
    const h = st.index.height + AXIS;
    const dpr = window.devicePixelRatio || 1;
    if (canvas.width !== cache.width || canvas.height !== cache.height) {
      canvas.width = cache.width;
      canvas.height = cache.height;
      canvas.style.width = w + "px";
      canvas.style.height = h + "px";
    }
    ctx.setTransform(1, 0, 0, 1, 0, 0);
    ctx.clearRect(0, 0, canvas.width, canvas.height);
    const sx = st.shift;
    ctx.drawImage(cache, Math.round(sx * dpr), 0);
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    const ay = st.index.height;
    if (st.brush) {
      const [a, b] = [xOfTime(st.layout.axis, st.brush[0]), xOfTime(st.layout.axis, st.brush[1])];
      ctx.fillStyle = "rgba(47,111,208,0.18)";
      ctx.fillRect(a + sx, 0, b - a, ay + AXIS);
    }
    const hv = st.hover;
    if (hv && hv.kind === "bar") {
      const p = st.index.lanes.find((q) => q.lane === hv.lane);
      if (p) {
        ctx.strokeStyle = "#ff7a00";
        ctx.lineWidth = 2;
        ctx.strokeRect(hv.item.x0 + sx + 1, p.y + HEAD + hv.item.depth * ROW + 1, hv.item.x1 - hv.item.x0 - 2, ROW - 3);
      }
    }
    if (st.drag && st.drag.mode !== "pan" && st.drag.moved) {
      const [a, b] = [Math.min(st.drag.x0, st.drag.x), Math.max(st.drag.x0, st.drag.x)];
      ctx.fillStyle = st.drag.mode === "brush" ? "rgba(47,111,208,0.25)" : "rgba(255,122,0,0.2)";
      ctx.fillRect(a, 0, b - a, ay + AXIS);
    }
    st.frameTimes.push(performance.now() - t0);
    if (st.frameTimes.length > 2000) st.frameTimes.splice(0, 1000);
  }

  // ---- interaction: pan, zoom, box zoom, brush, hover, click, wheel and keys --------------------
  function wireInput(P) {
    const { st, root, canvas, tip, resetBrush, request, draw, plotWidth, onNavigate, onTimeWindow } = P;
    const timeAt = (x) => timeOfX(st.layout.axis, x);
    function viewport() {
      const l = st.layout;
      return [st.from ?? l.from_s, st.to ?? l.to_s, l.run_from_s, l.run_to_s];
    }
    function setViewport(from, to) {
      const [, , r0, r1] = viewport();
      const span = Math.max(to - from, st.layout.period_s || 1e-6);
      from = Math.max(r0, Math.min(from, r1 - span));
      to = Math.min(r1, from + span);
      st.from = from; st.to = to;
      request();
    }
    function zoom(factor, x) {
      if (!st.layout) return;
      const [f, t] = viewport();
      const at = x == null ? (f + t) / 2 : timeAt(x);
      setViewport(at - (at - f) * factor, at + (t - at) * factor);
    }
    function pan(dx) {
      if (!st.layout) return;
      const [f, t] = viewport();
      const dt = (t - f) * dx / plotWidth();
      setViewport(f - dt, t - dt);
    }

    function panFromBase(d, dx) {
      const [f, t] = d.base;
      const dt = (t - f) * dx / plotWidth();
      st.viewDx = dx;
      setViewport(f - dt, t - dt);
    }

    const hit = (x, y) => hitIn(st.index, x, y);

    function showTip(h, cx, cy) {
      if (!h) { tip.hidden = true; return; }
      const lines = tipLines(st.layout, h);
      tip.replaceChildren(...lines.map((t) => el("div", { text: t })));
      tip.hidden = false;
      tip.style.left = cx + 12 + "px";
      tip.style.top = cy + 12 + "px";
    }

    function local(e) {
      const r = canvas.getBoundingClientRect();
      return [e.clientX - r.left, e.clientY - r.top];
    }
    const onDown = (e) => {
      if (!st.layout) return;
      const [x, y] = local(e);
      const mode = y >= st.index.height ? "brush" : e.shiftKey ? "box" : "pan";
      const [f, t] = viewport();
      st.drag = { mode, x0: x, x, moved: false, base: [f, t], applied: 0 };
      st.viewDx = 0;
      canvas.setPointerCapture && e.pointerId != null && canvas.setPointerCapture(e.pointerId);
    };
    const onMove = (e) => {
      const [x, y] = local(e);
      const d = st.drag;
      if (d) {
        if (Math.abs(x - d.x0) > 2) d.moved = true;
        d.x = x;
        if (d.mode === "pan") {
          // Draw the layout at hand shifted at once (a frame costs only drawing); ask for the
          // viewport under the pointer, which replaces it when it comes.
          st.shift = (x - d.x0) - d.applied;
          panFromBase(d, x - d.x0);
        }
        requestAnimationFrame(draw);
        return;
      }
      st.hover = hit(x, y);
      showTip(st.hover, e.clientX - root.getBoundingClientRect().left, e.clientY - root.getBoundingClientRect().top);
      root.setAttribute("data-hover", st.hover ? st.hover.kind : "");
      requestAnimationFrame(draw);
    };
    const onUp = (e) => {
      const d = st.drag;
      st.drag = null;
      if (!d) return;
      const [x, y] = local(e);
      if (!d.moved) {
        const h = hit(x, y);
        if (h && h.kind === "bar") {
          const f = st.layout.frames[h.item.frame];
          onNavigate(f.file, f.line);
        }
        draw();
        return;
      }
      const [a, b] = [Math.min(d.x0, x), Math.max(d.x0, x)];
      if (d.mode === "pan") {
        panFromBase(d, x - d.x0);
      } else if (d.mode === "box") {
        setViewport(timeAt(a), timeAt(b));
      } else {
        st.brush = [timeAt(a), timeAt(b)];
        resetBrush.disabled = false;
        onTimeWindow(st.brush[0], st.brush[1]);
      }
      draw();
    };
    canvas.addEventListener("pointerdown", onDown);
    canvas.addEventListener("pointermove", onMove);
    canvas.addEventListener("pointerup", onUp);
    canvas.addEventListener("pointerleave", () => { if (!st.drag) { tip.hidden = true; st.hover = null; draw(); } });
    canvas.addEventListener("wheel", (e) => {
      e.preventDefault();
      if (e.shiftKey) pan(-e.deltaY);
      else zoom(e.deltaY > 0 ? 1.25 : 0.8, local(e)[0]);
    }, { passive: false });
    root.addEventListener("keydown", (e) => {
      const k = e.key;
      if (k === "+" || k === "=") zoom(0.8);
      else if (k === "-") zoom(1.25);
      else if (k === "ArrowLeft") pan(plotWidth() / 10);
      else if (k === "ArrowRight") pan(-plotWidth() / 10);
      else if (k === "0") { st.from = st.to = null; request(); }
      else return;
      e.preventDefault();
    });
  }

  /** A panel's state: what it asks for, what it drew, what the user is doing. */
  function initialState() {
    return {
      from: null, to: null,        // the requested viewport (s); null = the whole run
      theta: 0, fold: { top: 0, stdlib: true, depth: DEPTH }, sort: "first", threads: null,
      expand: new Set(),           // lanes shown whole although deeper than fold.depth
      scrollNext: false,           // scroll to the first lit lane when the next layout is drawn
      layout: null,                // the last layout drawn
      shift: 0,                    // px the drawn layout is shifted by while a new one is on its way
      viewDx: 0,                   // px of the current pan contained in st.from/st.to
      seq: 0, pending: false, again: false,
      brush: null,                 // [fromS, toS] of the time window
      drag: null, hover: null, index: null, frameTimes: [],
      excluded: new Set(),         // lanes left out by the global thread filter
      artifact: null,              // the selected artifact's key: its bars are highlighted
      laneColours: {},             // thread id → its cluster colour for the selected artifact
      focusNext: false,            // zoom to the artifact's bars when its layout comes
      lit: new Set(),              // lanes highlighted by showRange (e.g. a section's execution)
    };
  }

  /** The note under the lanes: how the figures were obtained, the period, what is folded. */
  function obtainedNote(l, placed) {
    const folded = placed.filter((p) => p.lane.folded_below > 0).length;
    return `How this was obtained: ${l.obtained}. Sampling period ${fmtS(l.period_s)}; lighter blocks stand for bars narrower than a pixel (hover for their count).` +
      (folded ? ` ${folded} lane(s) deeper than ${l.fold.depth} rows show their deepest levels folded into the last row (dashed; +N on the label expands one).` : "") +
      (l.fold.stdlib ? " Runs of standard-library frames (imports among them) are folded into one band each." : "");
  }

  /** The toolbar's controls: each changes the state and asks for a new layout (or redraws). */
  function wireToolbar(st, c, on) {
    c.theta.addEventListener("input", () => {
      st.theta = Number(c.theta.value);
      c.thetaOut.textContent = st.theta > 0 ? `θ ${st.theta}/ms` : "linear";
      on.request();
    });
    c.foldTop.addEventListener("change", () => { st.fold = { ...st.fold, top: Number(c.foldTop.value) }; on.request(); });
    c.foldStd.addEventListener("change", () => { st.fold = { ...st.fold, stdlib: c.foldStd.checked }; on.request(); });
    c.depth.addEventListener("change", () => { st.fold = { ...st.fold, depth: Number(c.depth.value) }; st.expand.clear(); on.request(); });
    c.sort.addEventListener("change", () => { st.sort = c.sort.value; on.rebuild(); });
    c.resetZoom.addEventListener("click", () => { st.from = st.to = null; on.request(); });
    c.resetBrush.addEventListener("click", () => { st.brush = null; c.resetBrush.disabled = true; on.onTimeWindow(null, null); on.draw(); });
  }

  function create(root, opts) {
    const fetchLayout = opts.fetchLayout;
    const onNavigate = opts.onNavigate || (() => {});
    const onTimeWindow = opts.onTimeWindow || (() => {});
    const st = initialState();

    // ---- DOM ------------------------------------------------------------------------------------
    root.classList.add("tr-timeline");
    root.tabIndex = 0;
    const { toolbar, theta, thetaOut, foldTop, foldStd, depth, sort, resetZoom, resetBrush, info } = makeToolbar();
    const labels = el("div", { class: "tr-labels" });
    const canvas = el("canvas", { class: "tr-canvas", "aria-label": "Timeline lanes" });
    const tip = el("div", { class: "tr-tip", role: "tooltip", hidden: true });
    const note = el("div", { class: "tr-note" });
    const body = el("div", { class: "tr-body" }, labels, canvas);
    // The textual per-thread overview (Trümper et al.): one row per lane, over the viewport.
    const table = el("table", { class: "tr-overview", "aria-label": "Per-thread overview of the viewport" });
    root.replaceChildren(toolbar, body, note, table, tip);
    const ctx = canvas.getContext("2d");

    // ---- data -----------------------------------------------------------------------------------
    function params() {
      return {
        from_s: st.from, to_s: st.to, width_px: plotWidth(), theta: st.theta, fold: st.fold,
        threads: st.threads == null ? undefined : st.threads,
        highlight: st.artifact || undefined, overview: true,
        expand: st.expand.size ? [...st.expand] : undefined,
      };
    }
    function plotWidth() {
      return Math.max(100, Math.floor(root.clientWidth - LABEL - 2));
    }
    // One request in flight; the newest wanted viewport is asked for when it returns.
    function request() {
      if (st.pending) { st.again = true; return; }
      st.pending = true;
      const seq = ++st.seq;
      const dx = st.viewDx; // the drag offset this viewport already contains
      Promise.resolve(fetchLayout(params())).then((layout) => {
        st.pending = false;
        if (layout && layout.error) throw new Error(layout.error);
        st.layout = layout;
        // Focused on an artifact (a code lens, a list): show where its bars are, with a margin.
        if (st.focusNext && layout.focus) {
          st.focusNext = false;
          const f = layout.focus;
          if (f.to_s > f.from_s && (f.from_s > layout.from_s || f.to_s < layout.to_s || st.from == null)) {
            const m = (f.to_s - f.from_s) * 0.05;
            st.from = Math.max(layout.run_from_s, f.from_s - m);
            st.to = Math.min(layout.run_to_s, f.to_s + m);
            st.again = true;
          }
        }
        // While a pan goes on, keep drawing the part of the drag the new layout does not have.
        st.shift = st.drag && st.drag.mode === "pan" ? (st.drag.x - st.drag.x0) - dx : 0;
        if (st.drag && st.drag.mode === "pan") st.drag.applied = dx;
        build();
        paint();
        draw();
        if (st.scrollNext && !st.again) { st.scrollNext = false; scrollToLit(); }
        root.setAttribute("data-rendered", String(seq));
        if (st.again) { st.again = false; request(); }
      }).catch((e) => {
        st.pending = false;
        note.textContent = String(e && e.message || e);
        root.setAttribute("data-error", note.textContent);
        if (st.again) { st.again = false; request(); }
      });
    }

    // Lanes in the chosen order, with their y offset; per lane and depth the drawn items sorted by
    // x for hit-testing.
    function build() {
      const l = st.layout;
      st.index = placeLanes(l, st.excluded, st.sort);
      const placed = st.index.lanes;
      const toggle = (thread) => { if (st.expand.has(thread)) st.expand.delete(thread); else st.expand.add(thread); request(); };
      labels.replaceChildren(...placed.map((p) => laneLabel(p, st.laneColours[p.lane.thread], st.lit.has(p.lane.thread), st.expand.has(p.lane.thread), toggle)));
      overviewTable(table, l, placed.map((p) => p.lane.thread));
      const scale = l.theta > 0 ? `log-scaled (θ = ${l.theta}/ms)` : "linear";
      const focus = l.focus ? ` · ${l.focus.name}: ${l.focus.span_count} span(s) on ${l.focus.threads.length} thread(s), highlighted` : "";
      info.textContent = `${fmtS(l.from_s)} – ${fmtS(l.to_s)} of ${fmtS(l.run_to_s)}, ${scale}${focus}`;
      root.setAttribute("data-highlight", l.focus ? l.focus.artifact : "");
      note.textContent = obtainedNote(l, placed);
    }
    // The first lane the layout lights (the artifact's threads, or a moment's threads), into view.
    function scrollToLit() {
      const l = st.layout;
      const want = st.lit.size ? st.lit : l.focus ? new Set(l.focus.threads) : null;
      if (!want || !st.index) return;
      const p = st.index.lanes.find((x) => want.has(x.lane.thread));
      if (!p) return;
      const label = labels.querySelector('[data-thread="' + p.lane.thread + '"]');
      if (label) label.scrollIntoView({ block: "center" });
      root.setAttribute("data-scrolled-to", String(p.lane.thread));
    }

    // ---- drawing --------------------------------------------------------------------------------
    // A layout is painted once into an offscreen canvas; a frame (pan, hover, brush) is one blit
    // of it plus the overlays, so panning costs the same on a million samples as on ten.
    const cache = document.createElement("canvas");
    function paint() {
      const l = st.layout;
      const w = plotWidth();
      const h = st.index.height + AXIS;
      const dpr = window.devicePixelRatio || 1;
      cache.width = Math.round(w * dpr);
      cache.height = Math.round(h * dpr);
      const c = cache.getContext("2d");
      c.setTransform(dpr, 0, 0, dpr, 0, 0);
      paintLanes(c, l, st.index, st.laneColours, getComputedStyle(root), w);
      paintAxis(c, l, w, st.index.height);
    }

    const draw = () => drawFrame(st, canvas, cache, ctx, plotWidth());

    // ---- interaction ----------------------------------------------------------------------------
    wireInput({ st, root, canvas, tip, resetBrush, request, draw, plotWidth, onNavigate, onTimeWindow });
    wireToolbar(st, { theta, thetaOut, foldTop, foldStd, depth, sort, resetZoom, resetBrush }, { request, rebuild: () => { if (st.layout) { build(); paint(); draw(); } }, draw, onTimeWindow });
    const resize = () => request();
    window.addEventListener("resize", resize);

    request();
    return {
      setThreads(ids) { st.threads = ids; request(); },
      setExcluded(ids) { st.excluded = new Set(ids || []); if (st.layout) { build(); paint(); draw(); } },
      setArtifact(key, colours, focus) {
        st.laneColours = colours || {};
        if (key !== st.artifact || focus) { st.artifact = key; st.focusNext = !!focus && !!key; st.scrollNext = !!key; request(); }
        else if (st.layout) { build(); paint(); draw(); }
      },
      setWindow(from, to) { st.brush = from == null ? null : [from, to]; resetBrush.disabled = !st.brush; draw(); },
      setTheta(x) { theta.value = String(x); theta.dispatchEvent(new Event("input")); },
      setFold(f) {
        st.fold = { top: f.top || 0, stdlib: !!f.stdlib, depth: f.depth == null ? DEPTH : f.depth };
        foldStd.checked = st.fold.stdlib; depth.value = String(st.fold.depth);
        request();
      },
      setSort(k) { sort.value = k; sort.dispatchEvent(new Event("change")); },
      zoomTo(from, to) { st.from = from; st.to = to; request(); },
      showRange(from, to, threads) { st.lit = new Set(threads || []); st.from = from; st.to = to; st.scrollNext = st.lit.size > 0; request(); },
      refresh() { request(); },
      layout() { return st.layout; },
      lanesInOrder() { return st.index ? st.index.lanes.map((p) => ({ thread: p.lane.thread, y: p.y, h: p.h, parent: p.lane.parent ?? null })) : []; },
      frameTimes() { return st.frameTimes.slice(); },
      paintTime() { const t0 = performance.now(); paint(); return performance.now() - t0; },
      destroy() { window.removeEventListener("resize", resize); root.replaceChildren(); },
    };
  }

  window.ThreadRadarTimeline = { create };
})();
