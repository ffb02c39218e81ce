-- :ThreadRadarTraceCompare [a] [b] (each a run, or `a1,a2` a run set): two runs matched as traces (TraceDiff, issue 17), from the
-- server's `threadRadar/traceCompare` — what the web panel's Trace compare tab draws, as text: the
-- changes in words, how it was obtained, then per matched thread pair (A ↔ B) its differing
-- stretches: matched groups that moved or changed length (A's start and length → B's, the
-- shift), and stretches only in A or only in B, each with the function it ran. <CR> opens the
-- source (the innermost frame of the program's own code on B's stack, as the panel's click).
-- Nothing is computed here but which of the server's stretches to list.
local lsp = require("threadradar.lsp")
local ui = require("threadradar.ui")
local util = require("threadradar.util")

local M = {}

local view

--- Stretches listed per thread pair (the largest; the panel shows them all).
M.PER_PAIR = 8
--- The width the server lays the bars out for: fine enough that few stretches are merged.
M.WIDTH_PX = 2000

M.KEYS = {
  { "<CR>", "jump" },
  { "q", "close" },
}

local null = util.null

local function secs(x)
  return ("%.3f s"):format(x or 0)
end

--- The frame a stretch opens: the innermost of the program's own code (a function in `own`),
--- else the innermost.
function M.target(stack, own)
  stack = null(stack) or {}
  local set = {}
  for _, q in ipairs(null(own) or {}) do
    set[q] = true
  end
  for i = #stack, 1, -1 do
    if set[stack[i].qualname] then
      return stack[i]
    end
  end
  return stack[#stack]
end

--- A group's shift in words, by the server's class (`shift`: earlier, same or later).
function M.shift_word(g)
  if g.shift == "earlier" then
    return ("%.3f s earlier"):format(-g.shift_s)
  elseif g.shift == "later" then
    return ("%.3f s later"):format(g.shift_s)
  end
  return "same time"
end

--- The differing stretches of lane `k` (0-based, as groups name their pair), largest first then
--- in time order: groups the server says moved (`shift` not `same`) or changed length
--- (`resized`), and the bars only in A or only in B. Pure.
function M.stretches(result, k)
  local lane = result.lanes[k + 1]
  local out = {}
  for i, g in ipairs(result.groups or {}) do
    if g.pair == k then
      if g.shift ~= "same" or g.resized then
        local f = M.target(#g.stack_b > 0 and g.stack_b or g.stack_a, g.functions)
        table.insert(out, {
          kind = "matched",
          group = i - 1,
          start = g.a_start_s,
          size = math.max(g.a_duration_s, g.b_duration_s),
          text = ("A %s +%s → B %s +%s  %s"):format(secs(g.a_start_s), secs(g.a_duration_s), secs(g.b_start_s), secs(g.b_duration_s), M.shift_word(g)),
          frame = f,
        })
      end
    end
  end
  local function only(bars, side)
    for _, b in ipairs(bars or {}) do
      if null(b.group) == nil then
        local stack = null(b.stack) or {}
        table.insert(out, {
          kind = "only_" .. side,
          start = b.start_s,
          size = b.duration_s,
          text = ("only in %s  %s +%s"):format(side:upper(), secs(b.start_s), secs(b.duration_s)),
          frame = stack[#stack],
        })
      end
    end
  end
  only(lane.a_bars, "a")
  only(lane.b_bars, "b")
  table.sort(out, function(x, y)
    if x.size ~= y.size then
      return x.size > y.size
    end
    return x.start < y.start
  end)
  local total = #out
  while #out > M.PER_PAIR do
    table.remove(out)
  end
  table.sort(out, function(x, y)
    if x.start ~= y.start then
      return x.start < y.start
    end
    return x.kind < y.kind
  end)
  return out, total
end

local function side_text(s)
  return ("%s (%.2f s, every %.2f ms)"):format(s.name or "?", s.duration_s or 0, s.period_ms or 0)
end

local function thread_text(t)
  local entry = null(t.entry)
  return ("%s [%s%s]"):format(t.name or "?", t.thread_type or "?", entry and (" · " .. entry) or "")
end

--- The whole float as a ui builder (pure: no server, no window).
function M.build(result)
  local b = ui.builder()
  b:add({ { "ThreadRadar trace compare", "ThreadRadarTitle" }, { "  sampled stacks matched as traces (TraceDiff)", "ThreadRadarText" } })
  b:add({ { "A ", "ThreadRadarText" }, { side_text(result.a), "ThreadRadarSection" }, { "  →  B ", "ThreadRadarText" }, { side_text(result.b), "ThreadRadarSection" } }, { kind = "header" })
  local lanes = result.lanes or {}
  b:add({
    {
      ("%.1f%% of the stack time matched (τ = %s) · %s · unmatched threads: %d in A, %d in B"):format(
        (result.matched_share or 0) * 100,
        tostring(result.tau),
        util.plural(#lanes, "thread pair"),
        #(result.unmatched_a or {}),
        #(result.unmatched_b or {})
      ),
      "ThreadRadarText",
    },
  })
  for _, n in ipairs(result.notes or {}) do
    b:add({ { "  " .. n, "ThreadRadarText" } }, { kind = "note" })
  end
  b:blank()
  local changes = result.changes or {}
  b:add({ { "What changed", "ThreadRadarSection" } })
  if #changes == 0 then
    b:add({ { "  no change of the program's own code stands out", "ThreadRadarText" } })
  end
  for _, c in ipairs(changes) do
    local sig = null(c.significant)
    local mark = sig == nil and "" or (sig and "  (significant)" or "  (within noise)")
    b:add({ { "  • " .. c.statement }, { mark, sig and "ThreadRadarIncrease" or "ThreadRadarText" } }, { kind = "change", artifact = c.artifact, significant = sig })
  end
  for k, lane in ipairs(lanes) do
    b:blank()
    b:add({
      { thread_text(lane.a), "ThreadRadarSection" },
      { " ↔ ", "ThreadRadarText" },
      { thread_text(lane.b), "ThreadRadarSection" },
      { ("  paired by %s · similarity %.2f · %.0f%% matched"):format(lane.paired_by, lane.similarity or 0, (lane.matched_share or 0) * 100), "ThreadRadarText" },
    }, { kind = "pair", pair = k - 1, a = lane.a.name, b = lane.b.name })
    local list, total = M.stretches(result, k - 1)
    if total == 0 then
      b:add({ { "    every stretch matched at the same time and length", "ThreadRadarText" } })
    end
    for _, s in ipairs(list) do
      local f = s.frame
      local hl = s.kind == "matched" and nil or (s.kind == "only_a" and "ThreadRadarDecrease" or "ThreadRadarIncrease")
      b:add({
        { "    " .. s.text .. "  ", hl },
        { f and f.qualname or "?" },
        { f and ("  " .. util.where(f.file, f.line)) or "", "ThreadRadarPath" },
      }, { kind = s.kind, stretch = true, pair = k - 1, group = s.group, file = f and f.file, line = f and f.line, qualname = f and f.qualname })
    end
    if total > #list then
      b:add({ { ("    … %d more differing stretches (the browser panel shows them all: :ThreadRadarOpen)"):format(total - #list), "ThreadRadarText" } })
    end
  end
  local function unmatched(label, list)
    if #(list or {}) > 0 then
      local names = {}
      for _, t in ipairs(list) do
        table.insert(names, thread_text(t))
      end
      b:blank()
      b:add({ { label, "ThreadRadarSection" }, { table.concat(names, ", ") } }, { kind = "unmatched" })
    end
  end
  unmatched("Only in A: ", result.unmatched_a)
  unmatched("Only in B: ", result.unmatched_b)
  b:blank()
  ui.keys_line(b, M.KEYS)
  return b
end

local function jump(item)
  if not item or not item.stretch or not item.file or item.file == "" then
    return
  end
  local win = view and view.origin_win
  M.close()
  util.open_at(item.file, item.line, nil, win)
end

--- Opens the trace comparison of runs `a` and `b` (names or paths; nil: the server's default,
--- the active run as B against the run recorded before it as A).
function M.open(a, b, opts)
  opts = opts or {}
  local client = lsp.require_method("threadRadar/traceCompare", "compare traces", "update it, or run `threadradar compare A B` in a terminal.")
  if not client then
    return
  end
  local params = { width_px = M.WIDTH_PX }
  -- `a1.json,a2.json`: a run set (its first run is matched; the changes are tested against the
  -- sets' spread and marked).
  for key, v in pairs({ a = a, b = b }) do
    if v and v:find(",", 1, true) then
      params[key .. "_runs"] = vim.split(v, ",", { plain = true, trimempty = true })
    elseif v then
      params[key] = v
    end
  end
  lsp.request(client, "threadRadar/traceCompare", params, function(result)
    M.close()
    view = ui.open({ name = "tracecompare", filetype = "threadradar" })
    local v = view
    v.data = result
    ui.map(v, "q", M.close, "close")
    ui.map(v, "<Esc>", M.close, "close")
    ui.map(v, "<CR>", function()
      jump(ui.item(v))
    end, "jump to source")
    ui.set(v, M.build(result))
    local row = ui.find(v, function(item)
      return item.stretch == true
    end)
    if row then
      vim.api.nvim_win_set_cursor(v.win, { row, 0 })
    end
    if opts.on_render then
      opts.on_render(v)
    end
  end)
end

--- :ThreadRadarTraceCompare's argument line: up to two run names or paths, [a] [b].
function M.command(args)
  lsp.two_runs(args, "ThreadRadarTraceCompare takes at most two runs: [a] [b].", function(words)
    M.open(words[1], words[2])
  end)
end

--- close() and the open view (tests and integrations).
M.close, M.view = ui.holder(function()
  return view
end, function()
  view = nil
end)

return M
