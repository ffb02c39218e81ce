-- :ThreadRadarTimeline: a text timeline in a float — one row per thread, one cell per time
-- bucket — drawn from the server's `threadRadar/timeline` layout asked at one pixel per cell (the
-- server aggregates; nothing is computed here). A cell shows the thread's state over its bucket;
-- cells where the selected artifact (the function under the cursor, or the one of a "Timeline"
-- lens) was on the stack are highlighted. `<`/`>` pan, `+`/`-` zoom, `0` whole run, `<CR>` jumps
-- to the artifact's frame at the cursor's cell (else the innermost frame sampled there). `:ThreadRadarTimeline browser` opens the full
-- panel in the browser through `threadradar serve`.
local lsp = require("threadradar.lsp")
local ui = require("threadradar.ui")
local util = require("threadradar.util")

local api = vim.api
local M = {}

local view

--- The character of a state cell (computing, waiting for the GIL, idle by blocking kind).
M.CELLS = {
  computing = "█",
  gil = "▒",
  idle = "·",
  lock = "L",
  condition = "c",
  queue = "q",
  join = "j",
  sleep = "z",
  io = "i",
  process = "p",
  other = "·",
}
local LABEL = 18

local KEYS = {
  { "<", "pan left" },
  { ">", "pan right" },
  { "+", "zoom in" },
  { "-", "zoom out" },
  { "0", "whole run" },
  { "<CR>", "jump" },
  { "q", "close" },
}

local function cell_of(state, blocked)
  if state == "idle" and blocked and M.CELLS[blocked] then
    return M.CELLS[blocked]
  end
  return M.CELLS[state] or "?"
end

--- A lane's label: the thread name cut or padded to LABEL bytes (its cells start at LABEL + 1).
local function label(name)
  local s = name:gsub("[%c]", "?")
  if #s >= LABEL then
    s = s:sub(1, LABEL - 2) .. "~"
    -- Never cut a multi-byte character in half: drop its continuation bytes' lead.
    s = s:gsub("[\192-\255][\128-\191]*~$", "~")
  end
  return s .. string.rep(" ", LABEL - #s)
end

local function fmt_s(s)
  if math.abs(s) < 1 then
    return ("%.1f ms"):format(s * 1000)
  end
  return ("%.2f s"):format(s)
end

--- The row of one lane: a cell per column from the state underlay, the columns where a
--- highlighted frame's bar lies, and per column the innermost bar (for <CR>).
function M.lane_cells(layout, lane, width)
  local cells, hit, inner = {}, {}, {}
  for c = 1, width do
    cells[c] = " "
  end
  local function cols(x0, x1)
    local a = math.max(1, math.floor(x0) + 1)
    local b = math.min(width, math.max(a, math.ceil(x1)))
    return a, b
  end
  for _, s in ipairs(lane.states or {}) do
    local a, b = cols(s.x0, s.x1)
    local ch = cell_of(s.state, util.null(s.blocked))
    for c = a, b do
      cells[c] = ch
    end
  end
  for _, bar in ipairs(lane.bars or {}) do
    local f = layout.frames[bar.frame + 1]
    local a, b = cols(bar.x0, bar.x1)
    for c = a, b do
      -- <CR> goes to the highlighted artifact's frame where there is one, else the innermost.
      local lit = f and f.highlighted or false
      if lit then
        hit[c] = true
      end
      local cur = inner[c]
      if not cur or (lit and not cur.lit) or (lit == cur.lit and bar.depth > cur.depth) then
        inner[c] = { depth = bar.depth, frame = f, lit = lit }
      end
    end
  end
  return cells, hit, inner
end

local function render()
  local l = view.layout
  local b = ui.builder()
  local title = "ThreadRadar timeline"
  if l.focus then
    title = title .. " · " .. l.focus.name .. " highlighted (" .. util.plural(l.focus.span_count, "span") .. " on " .. util.plural(#l.focus.threads, "thread") .. ")"
  end
  b:add({ { title, "ThreadRadarTitle" } })
  b:add({ { ("%s – %s of %s, one cell = %s"):format(fmt_s(l.from_s), fmt_s(l.to_s), fmt_s(l.run_to_s), fmt_s((l.to_s - l.from_s) / view.width)), "ThreadRadarText" } })
  view.first_lane_row = nil
  for _, lane in ipairs(l.lanes) do
    local cells, hit, inner = M.lane_cells(l, lane, view.width)
    local chunks = { { label(lane.name) } }
    local run_text, run_hit = "", nil
    local function flush()
      if run_text ~= "" then
        table.insert(chunks, { run_text, run_hit and "ThreadRadarTimelineHit" or "ThreadRadarText" })
      end
      run_text = ""
    end
    for c = 1, view.width do
      local h = hit[c] or false
      if h ~= run_hit then
        flush()
        run_hit = h
      end
      run_text = run_text .. cells[c]
    end
    flush()
    local row = b:add(chunks, { thread = lane.thread, inner = inner })
    view.first_lane_row = view.first_lane_row or row
  end
  if #l.lanes == 0 then
    b:add({ { "no thread has samples in this run", "ThreadRadarText" } })
  end
  b:blank()
  b:add({ { "█ computing  ▒ GIL  · idle  L lock  c condition  q queue  j join  z sleep  i I/O  p process", "ThreadRadarText" } })
  -- How the figures were obtained, as the server says it (it begins with "sampled").
  b:add({ { l.obtained, "ThreadRadarText" } })
  ui.keys_line(b, KEYS)
  ui.set(view, b)
end

function M.load()
  if not ui.is_open(view) then
    return
  end
  local params = { width_px = view.width, highlight = view.artifact, from_s = view.from_s, to_s = view.to_s }
  lsp.request(view.client, "threadRadar/timeline", params, function(res)
    if not ui.is_open(view) or not res then
      return
    end
    view.layout = res
    view.from_s, view.to_s = res.from_s, res.to_s
    render()
  end)
end

local function set_range(from_s, to_s)
  local l = view.layout
  if not l then
    return
  end
  local span = math.max(to_s - from_s, l.period_s or 1e-3)
  from_s = math.max(l.run_from_s, math.min(from_s, l.run_to_s - span))
  view.from_s, view.to_s = from_s, math.min(l.run_to_s, from_s + span)
  M.load()
end

local function pan(frac)
  local l = view.layout
  if l then
    local d = (l.to_s - l.from_s) * frac
    set_range(l.from_s + d, l.to_s + d)
  end
end

local function zoom(factor)
  local l = view.layout
  if l then
    local mid = (l.from_s + l.to_s) / 2
    local half = (l.to_s - l.from_s) / 2 * factor
    set_range(mid - half, mid + half)
  end
end

local function jump()
  local item = ui.item(view)
  if not item or not item.inner then
    return
  end
  local col = api.nvim_win_get_cursor(view.win)[2]
  -- Byte column → cell: the label is ASCII, every cell one (possibly multi-byte) character.
  local line = api.nvim_buf_get_lines(view.buf, api.nvim_win_get_cursor(view.win)[1] - 1, api.nvim_win_get_cursor(view.win)[1], false)[1] or ""
  local cell = vim.fn.strchars(line:sub(LABEL + 1, col + 1))
  local hit = item.inner[cell]
  if not hit or not hit.frame then
    util.notify("no frame was sampled in this cell.")
    return
  end
  local f = hit.frame
  local origin = view.origin_win
  M.close()
  util.open_at(f.file, f.line, nil, origin)
end

--- Opens the float on a first layout: asked before any window opens, so an unknown artifact or
--- range is one sentence and no empty float.
local function show(client, artifact, range)
  local params = { width_px = math.max(20, math.floor(vim.o.columns * 0.8) - LABEL - 2), highlight = artifact }
  -- The artifact's spans as they are (both ends inside the run: the server refuses others).
  if range and range.from_s and range.to_s and range.to_s > range.from_s then
    params.from_s, params.to_s = range.from_s, range.to_s
  end
  lsp.request(client, "threadRadar/timeline", params, function(res)
    if not res then
      return
    end
    if ui.is_open(view) then
      ui.close(view)
    end
    view = ui.open({ name = "timeline", filetype = "threadradar", on_close = function()
      view = nil
    end })
    view.client = client
    view.artifact = artifact
    view.width = params.width_px
    view.layout = res
    view.from_s, view.to_s = res.from_s, res.to_s
    ui.map(view, "q", function()
      ui.close(view)
    end, "close")
    ui.map(view, "<", function()
      pan(-0.25)
    end, "pan left")
    ui.map(view, ">", function()
      pan(0.25)
    end, "pan right")
    ui.map(view, "+", function()
      zoom(0.5)
    end, "zoom in")
    ui.map(view, "-", function()
      zoom(2)
    end, "zoom out")
    ui.map(view, "0", function()
      view.from_s, view.to_s = nil, nil
      M.load()
    end, "whole run")
    ui.map(view, "<CR>", jump, "jump to source")
    render()
  end)
end

--- Opens the timeline (opts.artifact: a key; else the function under the cursor, if profiled;
--- opts.from_s/to_s: the range to show). opts.browser: the web panel instead.
function M.open(opts)
  opts = opts or {}
  local bufnr = api.nvim_get_current_buf()
  local client = lsp.require_client(bufnr)
  if not client then
    return
  end
  local function go(key)
    if opts.browser then
      return M.browser(client, key)
    end
    show(client, key, opts)
  end
  if opts.artifact then
    return go(opts.artifact)
  end
  if not lsp.client_of_buffer(bufnr) then
    return go(nil)
  end
  local cursor = api.nvim_win_get_cursor(0)
  local params = { uri = vim.uri_from_bufnr(bufnr), line = cursor[1] - 1, character = cursor[2] }
  lsp.request(client, "threadRadar/artifactAt", params, function(at)
    local a = at and (util.null(at["function"]) or util.null(at.class))
    go(a and a.key or nil)
  end, { bufnr = bufnr })
end

--- The web panel's Timeline tab (on `key`, if any) through `threadradar serve`.
function M.browser(client, key)
  local open = require("threadradar.open")
  open.panel(client, "timeline", "?view=timeline" .. (key and ("&artifact=" .. open.url_encode(key)) or ""))
end

--- close() and the open view (tests and integrations).
M.close, M.view = ui.holder(function()
  return view
end, function()
  view = nil
end)

lsp.on_change(function(client_id, change)
  if ui.is_open(view) and view.client.id == client_id and lsp.changes_view(change) then
    if change.reason == "run" then
      view.from_s, view.to_s = nil, nil
    end
    M.load()
  end
end)

return M
