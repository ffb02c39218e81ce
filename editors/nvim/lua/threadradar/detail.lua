-- :ThreadRadarDetail: one artifact's radar enlarged, its clusters, the thread tree (by cluster or
-- by type) with a local thread selection previewed at once, applied globally with `a`, and a
-- text histogram of crt(a, th).
local config = require("threadradar.config")
local lsp = require("threadradar.lsp")
local ui = require("threadradar.ui")
local util = require("threadradar.util")

local api = vim.api
local M = {}

local view

local KEYS = {
  { "x", "toggle thread" },
  { "a", "apply" },
  { "r", "reset" },
  { "t", "by type/cluster" },
  { "<CR>", "jump" },
  { "q", "close" },
}

local COLOUR_NAME = { low = "low", middle = "middle", high = "high" }
local LEVEL_LABEL = { "low", "med", "high" }
local BAR_WIDTH = 36

local function sorted_ids(set)
  local ids = {}
  for id in pairs(set or {}) do
    table.insert(ids, id)
  end
  table.sort(ids)
  return ids
end

local function same_set(a, b)
  for k in pairs(a or {}) do
    if not (b or {})[k] then
      return false
    end
  end
  for k in pairs(b or {}) do
    if not (a or {})[k] then
      return false
    end
  end
  return true
end

--- The enlarged text glyph: the radar unrolled into bars, one per cluster (low → high), width ∝
--- threads, strong part (█) = level of the average crt(a, th), weak part (░) = level of the sum;
--- the pedestals (threads, thread types) on the right.
function M.glyph_lines(b, artifact)
  local clusters = artifact.clusters or {}
  local total = 0
  for _, c in ipairs(clusters) do
    total = total + #c.threads
  end
  local widths = {}
  for i, c in ipairs(clusters) do
    widths[i] = math.max(4, math.floor(BAR_WIDTH * #c.threads / math.max(total, 1) + 0.5))
  end
  for level = 3, 1, -1 do
    local chunks = { { util.lpad(LEVEL_LABEL[level], 6) .. " │", "ThreadRadarText" } }
    for i, c in ipairs(clusters) do
      local avg, sum = util.level_index(c.avg_level), util.level_index(c.sum_level)
      local ch = (avg >= level) and "█" or ((sum >= level) and "░" or " ")
      table.insert(chunks, { string.rep(ch, widths[i]), util.colour_hl(c.colour) })
      if i < #clusters then
        table.insert(chunks, { " " })
      end
    end
    if level == 2 then
      table.insert(chunks, { "   ▔ " .. util.plural(artifact.thread_types or 0, "thread type"), "ThreadRadarText" })
    elseif level == 1 then
      table.insert(chunks, { "   ▁ " .. util.plural(artifact.threads or 0, "thread"), "ThreadRadarText" })
    end
    b:add(chunks)
  end
  local axis = { { "       └", "ThreadRadarText" } }
  local labels = { { "        " } }
  for i, c in ipairs(clusters) do
    table.insert(axis, { string.rep("─", widths[i] + (i < #clusters and 1 or 0)), "ThreadRadarText" })
    local label = ("%s ×%d"):format(COLOUR_NAME[c.colour] or "?", #c.threads)
    table.insert(labels, { util.pad(label, widths[i] + 1), util.colour_hl(c.colour) })
  end
  b:add(axis)
  b:add(labels)
  b:add({ { "        █ average crt(a,th) level   ░ sum level   (low < 33% ≤ med < 66% ≤ high)", "ThreadRadarText" } })
end

--- Columns of the text histogram; the server bins the threads into them (`histogram_columns`).
M.HISTOGRAM_COLUMNS = 48

--- The histogram of crt(a, th) over the selected threads, as the server binned it
--- (`histogram_bins`): one ■ per thread in its cluster's colour, equal bins stacked.
function M.histogram_lines(b, d, width)
  width = width or M.HISTOGRAM_COLUMNS
  local max = 0
  for _, t in ipairs(d.threads or {}) do
    if not t.excluded and t.crt then
      max = math.max(max, t.crt)
    end
  end
  local bins = {}
  local tallest = 0
  for _, bin in ipairs(d.histogram_bins or {}) do
    local list = {}
    for _, colour in ipairs(bin.colours or {}) do
      table.insert(list, { colour = colour })
    end
    bins[bin.column] = list
    tallest = math.max(tallest, #list)
  end
  if tallest == 0 then
    b:add({ { "  (no selected thread)", "ThreadRadarText" } })
    return
  end
  local max_rows = 6
  local per = math.max(1, math.ceil(tallest / max_rows))
  local rows = math.ceil(tallest / per)
  for row = rows, 1, -1 do
    local chunks = { { "  │" , "ThreadRadarText" } }
    for x = 0, width - 1 do
      local list = bins[x]
      local idx = (row - 1) * per + 1
      if list and list[idx] then
        table.insert(chunks, { "■", util.colour_hl(list[idx].colour) })
      else
        table.insert(chunks, { " " })
      end
    end
    b:add(chunks)
  end
  b:add({ { "  └" .. string.rep("─", width), "ThreadRadarText" } })
  local left, right = "0%", util.pct(max)
  local note = per > 1 and ("   each ■ ≈ " .. per .. " threads") or ""
  b:add({ { "   " .. left .. string.rep(" ", math.max(1, width - #left - #right)) .. right .. note, "ThreadRadarText" } })
end

local function thread_line(b, t, v)
  local excluded = v.excluded[t.id] == true
  local figure
  if excluded or not t.crt then
    figure = "(" .. util.pct(t.crt_all) .. " unfiltered)"
  else
    figure = util.pct(t.crt)
  end
  local hl = excluded and "ThreadRadarExcluded" or nil
  b:add({
    { "    " },
    { excluded and "[ ] " or "[x] ", excluded and "ThreadRadarExcluded" or "ThreadRadarKey" },
    { "■ ", excluded and "ThreadRadarExcluded" or util.colour_hl(t.colour) },
    { util.pad(t.name, 16) .. " ", hl },
    { util.pad(t.type or "", 14) .. " ", "ThreadRadarText" },
    { util.lpad(figure, 7) .. "  ", excluded and "ThreadRadarExcluded" or "ThreadRadarSection" },
    { excluded and "" or util.plural(t.samples or 0, "sample"), "ThreadRadarText" },
  }, { kind = "thread", id = t.id, file = t.file, line = t.line })
end

local function tree(b, d, v)
  local by_id = {}
  for _, t in ipairs(d.threads or {}) do
    by_id[t.id] = t
  end
  local groups = {}
  if v.by == "type" then
    for _, g in ipairs(d.types or {}) do
      local list = {}
      for _, id in ipairs(g.threads) do
        if by_id[id] then
          table.insert(list, by_id[id])
        end
      end
      table.insert(groups, { title = g.name, list = list })
    end
    -- Threads of the artifact missing from the type groups (excluded ones).
    local listed = {}
    for _, g in ipairs(groups) do
      for _, t in ipairs(g.list) do
        listed[t.id] = true
      end
    end
    local rest = {}
    for _, t in ipairs(d.threads or {}) do
      if not listed[t.id] then
        table.insert(rest, t)
      end
    end
    if #rest > 0 then
      table.insert(groups, { title = "other", list = rest })
    end
  else
    for _, c in ipairs(d.artifact.clusters or {}) do
      local list = {}
      for _, id in ipairs(c.threads) do
        if by_id[id] then
          table.insert(list, by_id[id])
        end
      end
      table.insert(groups, { title = (COLOUR_NAME[c.colour] or "?") .. " cluster", colour = c.colour, list = list })
    end
    local rest = {}
    for _, t in ipairs(d.threads or {}) do
      if v.excluded[t.id] or t.cluster == nil then
        table.insert(rest, t)
      end
    end
    if #rest > 0 then
      table.insert(groups, { title = "excluded", list = rest })
    end
  end
  b:add({
    { v.by == "type" and "Threads by type" or "Threads by cluster", "ThreadRadarSection" },
    { "  (t: by " .. (v.by == "type" and "cluster" or "type") .. ")", "ThreadRadarText" },
  })
  for _, g in ipairs(groups) do
    table.sort(g.list, function(p, q)
      return (p.crt_all or 0) > (q.crt_all or 0)
    end)
    local ids = {}
    for _, t in ipairs(g.list) do
      table.insert(ids, t.id)
    end
    b:add({
      { "  ▾ " },
      { g.title, g.colour and util.colour_hl(g.colour) or "ThreadRadarSection" },
      { " (" .. util.plural(#g.list, "thread") .. ")", "ThreadRadarText" },
    }, { kind = "group", ids = ids })
    for _, t in ipairs(g.list) do
      thread_line(b, t, v)
    end
  end
end

local function edges(b, title, list, arrow)
  b:add({ { title, "ThreadRadarSection" }, { "  (share of this function's runtime)", "ThreadRadarText" } })
  if #list == 0 then
    b:add({ { "  none", "ThreadRadarText" } })
  end
  for _, e in ipairs(list) do
    b:add({
      { "  " .. arrow .. " " .. util.lpad(util.pct(e.share), 6) .. "  ", "ThreadRadarSection" },
      { util.pad(e.qualname, 32) .. "  " },
      { util.truncate_left(util.where(e.file, e.line), 56), "ThreadRadarPath" },
    }, { kind = "edge", key = e.key, file = e.file, line = e.line })
  end
end

local function build(v)
  local d = v.data
  local a = d.artifact
  local s = d.selection or {}
  local b = ui.builder()
  local where = util.where(a.file, a.line)
  b:add({
    { "ThreadRadar  ", "ThreadRadarTitle" },
    { a.qualname, "ThreadRadarTitle" },
    { "  (" .. a.kind .. ")  ", "ThreadRadarText" },
    { where, "ThreadRadarPath" },
  }, { kind = "artifact", key = a.key, file = a.file, line = a.line })
  local head = { { "crt " .. util.pct(a.crt), "ThreadRadarSection" } }
  table.insert(head, {
    ("  %s · self %s · %s · %s/%s  "):format(
      util.secs(a.seconds),
      util.pct(a.self_crt),
      util.plural(a.samples or 0, "sample"),
      util.plural(a.threads or 0, "thread"),
      util.plural(a.thread_types or 0, "type")
    ),
    "ThreadRadarText",
  })
  vim.list_extend(head, util.cell_chunks(require("threadradar.overview").cells(a)))
  b:add(head, { kind = "header" })
  local local_ids = sorted_ids(v.excluded)
  local state
  if same_set(v.excluded, v.applied) then
    state = #local_ids == 0 and "no thread filter" or (util.plural(#local_ids, "thread") .. " filtered out (applied)")
  else
    state = ("preview: %s deselected, not applied (a applies, r resets)"):format(util.plural(#local_ids, "thread"))
  end
  b:add({
    {
      ("selection: %s/%s · Σ crt(a,th) %s · %s"):format(
        util.plural(s.threads or 0, "thread"),
        util.plural(s.thread_types or 0, "type"),
        util.pct(s.crt_sum),
        state
      ),
      "ThreadRadarText",
    },
  })
  if d.note and d.note ~= "" then
    b:add({ { d.note, "ThreadRadarText" } })
  end
  b:blank()
  v.image_row = #b.lines
  if v.image_rows and v.image_rows > 0 then
    for _ = 1, v.image_rows do
      b:blank()
    end
  end
  M.glyph_lines(b, a)
  b:blank()
  b:add({
    { "  cluster         threads  types   avg crt(a,th)      Σ crt(a,th)", "ThreadRadarSection" },
  })
  for _, c in ipairs(a.clusters or {}) do
    local cell = util.cell_of_cluster(c)
    b:add({
      { "  " },
      { util.pad(cell.text .. " " .. (COLOUR_NAME[c.colour] or "?"), 15), util.colour_hl(c.colour) },
      {
        ("%8d %6d   %7s %-6s     %7s %-6s"):format(
          #c.threads,
          c.thread_types or 0,
          util.pct(c.avg),
          c.avg_level,
          util.pct(c.sum),
          c.sum_level
        ),
      },
    })
  end
  b:blank()
  tree(b, d, v)
  b:blank()
  b:add({ { "Histogram of crt(a,th)", "ThreadRadarSection" }, { "  (one ■ per selected thread)", "ThreadRadarText" } })
  M.histogram_lines(b, d, M.HISTOGRAM_COLUMNS)
  b:blank()
  edges(b, "Callers", d.callers or {}, "←")
  edges(b, "Callees", d.callees or {}, "→")
  b:blank()
  ui.keys_line(b, KEYS)
  return b
end

--- Asks for the detail under the local selection (the global filter until the first answer).
function M.load()
  if not ui.is_open(view) then
    return
  end
  local v = view
  local params = { artifact = v.key, size = 1, histogram_width = 1, histogram_height = 1, histogram_columns = M.HISTOGRAM_COLUMNS }
  if v.excluded then
    params.exclude_threads = sorted_ids(v.excluded)
  end
  v.seq = (v.seq or 0) + 1
  local seq = v.seq
  lsp.request(v.client, "threadRadar/detail", params, function(d)
    if view ~= v or v.seq ~= seq or not ui.is_open(v) then
      return
    end
    if not v.excluded then
      -- Without exclude_threads the server used the global filter: that is the starting
      -- selection, and what is applied.
      v.excluded, v.applied = {}, {}
      for _, t in ipairs(d.threads or {}) do
        if t.excluded then
          v.excluded[t.id], v.applied[t.id] = true, true
        end
      end
    end
    v.data = d
    ui.set(v, build(v))
    require("threadradar.image").detail(v)
    if v.on_render then
      v.on_render(v)
    end
  end, {
    on_error = function()
      if v.revert then
        v.revert()
        v.revert = nil
      elseif not v.data then
        M.close()
      end
    end,
  })
end

local function toggle()
  local v = view
  local item = ui.item(v)
  if not item or not v.excluded then
    return
  end
  local ids = item.kind == "thread" and { item.id } or (item.kind == "group" and item.ids) or nil
  if not ids or #ids == 0 then
    return
  end
  local before = vim.deepcopy(v.excluded)
  local all_excluded = true
  for _, id in ipairs(ids) do
    if not v.excluded[id] then
      all_excluded = false
    end
  end
  for _, id in ipairs(ids) do
    v.excluded[id] = (not all_excluded) or nil
  end
  v.revert = function()
    v.excluded = before
  end
  M.load()
end

local function apply()
  local v = view
  if not v.excluded then
    return
  end
  local ids = sorted_ids(v.excluded)
  local function done(result)
    v.applied = vim.deepcopy(v.excluded)
    local names = {}
    for _, t in ipairs(result and result.excluded or {}) do
      table.insert(names, t.name)
    end
    util.notify(#names == 0 and "thread filter cleared." or ("thread filter applied: " .. table.concat(names, ", ") .. " left out."))
    v.excluded = nil -- reload with the (new) global filter
    lsp.emit_change(v.client.id, { reason = "filter" })
  end
  if #ids == 0 then
    lsp.execute(v.client, "threadradar.clearThreadFilter", nil, done)
  else
    lsp.execute(v.client, "threadradar.setThreadFilter", { exclude = ids }, done)
  end
end

local function reset()
  local v = view
  lsp.execute(v.client, "threadradar.clearThreadFilter", nil, function()
    v.excluded, v.applied = nil, nil
    util.notify("thread filter cleared.")
    lsp.emit_change(v.client.id, { reason = "filter" })
  end)
end

local function jump()
  local v = view
  local item = ui.item(v)
  if not item or not item.file or item.file == "" then
    return
  end
  local client = v.client
  M.close()
  local key = (item.key and item.key ~= "program") and item.key or nil
  lsp.goto_artifact(client, key, item.file, item.line, api.nvim_get_current_win())
end

local function show(client, key, opts)
  M.close()
  view = ui.open({
    name = "detail",
    filetype = "threadradar",
    on_close = function(v)
      require("threadradar.image").clear(v)
    end,
  })
  local v = view
  v.client, v.key, v.by, v.on_render = client, key, "cluster", opts.on_render
  v.image_rows = require("threadradar.image").rows_for_detail()
  ui.map(v, "q", M.close, "close")
  ui.map(v, "<Esc>", M.close, "close")
  ui.map(v, "x", toggle, "toggle the thread (or group)")
  ui.map(v, "a", apply, "apply the selection as the global thread filter")
  ui.map(v, "r", reset, "reset the thread filter")
  ui.map(v, "t", function()
    v.by = v.by == "type" and "cluster" or "type"
    if v.data then
      ui.set(v, build(v))
    end
  end, "tree by type / by cluster")
  ui.map(v, "<CR>", jump, "jump to source")
  local b = ui.builder()
  b:add({ { "ThreadRadar detail: loading…", "ThreadRadarText" } })
  ui.set(v, b)
  M.load()
  return v
end

--- Opens the detail of opts.artifact (a key, or "program"), else of the profiled declaration
--- around the cursor, else of the program.
function M.open(opts)
  opts = opts or {}
  local bufnr = api.nvim_get_current_buf()
  local client = lsp.require_client(bufnr)
  if not client then
    return
  end
  if opts.artifact then
    return show(client, opts.artifact, opts)
  end
  local cursor = api.nvim_win_get_cursor(0)
  if not lsp.client_of_buffer(bufnr) then
    return show(client, "program", opts)
  end
  -- The server finds the innermost profiled function (else class) around the cursor with
  -- tree-sitter on the buffer as it is now.
  local params = { uri = vim.uri_from_bufnr(bufnr), line = cursor[1] - 1, character = cursor[2] }
  lsp.request(client, "threadRadar/artifactAt", params, function(at)
    local a = at and (util.null(at["function"]) or util.null(at.class))
    show(client, a and a.key or "program", opts)
  end, { bufnr = bufnr })
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
      -- Thread ids belong to a run: start again from the global filter.
      view.excluded, view.applied = nil, nil
    elseif change.reason == "filter" and view.excluded and not same_set(view.excluded, view.applied) then
      -- Someone else changed the filter while a preview was open: keep the preview.
      return M.load()
    elseif change.reason == "filter" then
      view.excluded, view.applied = nil, nil
    end
    M.load()
  end
end)

return M
