-- :ThreadRadarOverview: the Program ThreadRadar and the functions, classes and threads of the run
-- by computational runtime (crt), with include/exclude filters, in a float.
local config = require("threadradar.config")
local lsp = require("threadradar.lsp")
local ui = require("threadradar.ui")
local util = require("threadradar.util")

local api = vim.api
local M = {}

-- Filters last the session, like the panels' checkboxes.
local filters = {
  include = nil, -- regex
  exclude = nil, -- regex
  hide_stdlib = nil, -- nil: the configured default
  hide_third_party = nil,
  only_file = false,
}

local view -- the open overview

local KEYS = {
  { "<CR>", "jump" },
  { "d", "detail" },
  { "/", "include" },
  { "\\", "exclude" },
  { "s", "stdlib" },
  { "t", "third-party" },
  { "f", "this file" },
  { "c", "clear" },
  { "q", "close" },
}

local function hide_stdlib()
  if filters.hide_stdlib == nil then
    return config.options.overview.hide_stdlib
  end
  return filters.hide_stdlib
end

local function hide_third_party()
  if filters.hide_third_party == nil then
    return config.options.overview.hide_third_party
  end
  return filters.hide_third_party
end

--- The overview request for the current filters.
function M.params(file)
  local p = {
    include = filters.include and { filters.include } or {},
    exclude = filters.exclude and { filters.exclude } or {},
    hide_stdlib = hide_stdlib(),
    hide_third_party = hide_third_party(),
    top = config.options.overview.top,
    glyph_size = 1,
  }
  if filters.only_file and file then
    p.only_file = file
  end
  return p
end

local function entry_line(b, e, widths, kind)
  local cells = M.cells(e)
  local cells_text = util.cells_text(cells)
  local chunks = {
    { util.lpad(util.pct(e.crt), 7) .. "  ", "ThreadRadarSection" },
    { util.lpad(util.secs(e.seconds), 7) .. "  ", "ThreadRadarText" },
  }
  vim.list_extend(chunks, util.cell_chunks(cells))
  table.insert(chunks, { string.rep(" ", widths.cells - util.width(cells_text)) .. "  " })
  table.insert(chunks, { util.pad(e.qualname, widths.name) .. "  " })
  local where = util.truncate_left(util.where(e.file, e.line), 56)
  table.insert(chunks, { where, "ThreadRadarPath" })
  b:add(chunks, { kind = kind, key = e.key, file = e.file, line = e.line, qualname = e.qualname, crt = e.crt })
end

function M.cells(e)
  local cells = {}
  for _, c in ipairs(e.clusters or {}) do
    table.insert(cells, util.cell_of_cluster(c))
  end
  return cells
end

local function build(ov, runs)
  local b = ui.builder()
  local run_name = runs and runs.active and vim.fn.fnamemodify(runs.active, ":t") or "?"
  b:add({ { "ThreadRadar overview", "ThreadRadarTitle" }, { "  " .. run_name, "ThreadRadarText" } })
  local p = ov.program
  local chunks = { { "Program  ", "ThreadRadarSection" } }
  vim.list_extend(chunks, util.cell_chunks(M.cells(p)))
  local run = ov.run or {}
  table.insert(chunks, {
    ("  %s · %s/%s · %d samples in %.1fs"):format(
      util.secs(p.seconds),
      util.plural(p.threads or 0, "thread"),
      util.plural(p.thread_types or 0, "type"),
      run.sample_count or 0,
      run.duration_s or 0
    ),
    "ThreadRadarText",
  })
  b:add(chunks, { kind = "program", key = "program" })
  local f = {}
  table.insert(f, "include " .. (filters.include and ("/" .. filters.include .. "/") or "all"))
  if filters.exclude then
    table.insert(f, "exclude /" .. filters.exclude .. "/")
  end
  table.insert(f, hide_stdlib() and "stdlib hidden" or "stdlib shown")
  table.insert(f, hide_third_party() and "third-party hidden" or "third-party shown")
  table.insert(f, filters.only_file and ("only " .. util.short_path(view and view.file or "")) or "all files")
  if run.excluded_threads and #run.excluded_threads > 0 then
    table.insert(f, util.plural(#run.excluded_threads, "thread") .. " filtered out")
  end
  b:add({ { "Filters: ", "ThreadRadarText" }, { table.concat(f, " · "), "ThreadRadarText" } })
  if ov.note and ov.note ~= "" then
    b:add({ { ov.note, "ThreadRadarText" } })
  end

  local entries = {}
  vim.list_extend(entries, ov.functions or {})
  vim.list_extend(entries, ov.classes or {})
  local widths = { cells = 4, name = 10 }
  for _, e in ipairs(entries) do
    widths.cells = math.max(widths.cells, util.width(util.cells_text(M.cells(e))))
    widths.name = math.min(48, math.max(widths.name, util.width(e.qualname)))
  end

  local function section(title, list, listed, kind)
    b:blank()
    b:add({ { ("%s (%d of %d)"):format(title, #list, listed or #list), "ThreadRadarSection" } }, { kind = "section" })
    if #list == 0 then
      b:add({ { "  none", "ThreadRadarText" } })
    end
    for _, e in ipairs(list) do
      entry_line(b, e, widths, kind)
    end
  end
  section("Functions", ov.functions or {}, ov.listed_functions, "function")
  section("Classes", ov.classes or {}, ov.listed_classes, "class")

  local threads = vim.deepcopy(ov.threads or {})
  table.sort(threads, function(x, y)
    if (x.crt or 0) ~= (y.crt or 0) then
      return (x.crt or 0) > (y.crt or 0)
    end
    return x.id < y.id
  end)
  b:blank()
  b:add({ { ("Threads (%d)"):format(#threads), "ThreadRadarSection" } }, { kind = "section" })
  for _, t in ipairs(threads) do
    local hl = t.excluded and "ThreadRadarExcluded" or util.colour_hl(t.colour)
    local chunks_ = {
      { util.lpad(util.pct(t.crt), 7) .. "  ", "ThreadRadarSection" },
      { util.lpad(util.secs(t.seconds), 7) .. "  ", "ThreadRadarText" },
      { "■ ", hl },
      { util.pad(t.name, 16) .. " ", t.excluded and "ThreadRadarExcluded" or nil },
      { util.pad(t.type or "", 14) .. " ", "ThreadRadarText" },
    }
    if t.excluded then
      table.insert(chunks_, { "filtered out  ", "ThreadRadarExcluded" })
    end
    if t.file and t.file ~= "" then
      table.insert(chunks_, { util.where(t.file, t.line), "ThreadRadarPath" })
    end
    b:add(chunks_, { kind = "thread", id = t.id, file = t.file, line = t.line })
  end
  b:blank()
  ui.keys_line(b, KEYS)
  return b
end

--- Asks the server and redraws the open overview.
function M.refresh()
  if not ui.is_open(view) then
    return
  end
  local v = view
  local params = M.params(v.file)
  local pending, ov, runs = 2, nil, nil
  local function done()
    pending = pending - 1
    if pending > 0 or not ov or view ~= v or not ui.is_open(v) then
      return
    end
    v.data = ov
    ui.set(v, build(ov, runs))
    if not v.positioned then
      v.positioned = true
      local row = ui.find(v, function(item)
        return item.kind == "function"
      end)
      if row then
        api.nvim_win_set_cursor(v.win, { row, 0 })
      end
    end
    if v.on_render then
      v.on_render(v)
    end
  end
  lsp.request(v.client, "threadRadar/overview", params, function(result)
    ov = result
    done()
  end, {
    on_error = function()
      if v.revert then
        v.revert()
      end
      v.revert = nil
      pending = pending - 1
      if not v.data then
        M.close()
      end
    end,
  })
  lsp.request(v.client, "threadRadar/runs", util.empty_object(), function(result)
    runs = result
    done()
  end, { silent = true, on_error = function() done() end })
end

local function set_filter(change)
  local before = vim.deepcopy(filters)
  change()
  view.revert = function()
    filters = before
  end
  M.refresh()
end

local function jump(item)
  local v = view
  if not item or not item.file or item.file == "" then
    return
  end
  local client = v.client
  M.close()
  local key = (item.key and item.kind ~= "thread") and item.key or nil
  lsp.goto_artifact(client, key, item.file, item.line, api.nvim_get_current_win())
end

local function prompt(kind)
  local current = filters[kind]
  vim.ui.input({
    prompt = (kind == "include" and "Include regex" or "Exclude regex") .. " (qualified name or path, empty clears): ",
    default = current or "",
  }, function(input)
    if input == nil or not ui.is_open(view) then
      return
    end
    set_filter(function()
      filters[kind] = input ~= "" and input or nil
    end)
  end)
end

--- Opens the overview. opts.file limits it to a file (the code lens), opts.only_current to the
--- current buffer's file.
function M.open(opts)
  opts = opts or {}
  local bufnr = api.nvim_get_current_buf()
  local client = lsp.require_client(bufnr)
  if not client then
    return
  end
  M.close()
  local file = opts.file
  if not file then
    local name = api.nvim_buf_get_name(bufnr)
    if name ~= "" and vim.bo[bufnr].buftype == "" then
      file = vim.fn.fnamemodify(name, ":p")
    end
  end
  if opts.file or opts.only_current then
    filters.only_file = file ~= nil
  end
  view = ui.open({ name = "overview", filetype = "threadradar" })
  view.client = client
  view.file = file
  view.on_render = opts.on_render
  local v = view
  ui.map(v, "q", M.close, "close")
  ui.map(v, "<Esc>", M.close, "close")
  ui.map(v, "<CR>", function()
    jump(ui.item(v))
  end, "jump to source")
  ui.map(v, "d", function()
    local item = ui.item(v)
    if item and (item.kind == "function" or item.kind == "class" or item.kind == "program") then
      M.close()
      require("threadradar.detail").open({ artifact = item.key })
    end
  end, "detail")
  ui.map(v, "/", function()
    prompt("include")
  end, "include filter")
  ui.map(v, "\\", function()
    prompt("exclude")
  end, "exclude filter")
  ui.map(v, "s", function()
    set_filter(function()
      filters.hide_stdlib = not hide_stdlib()
    end)
  end, "toggle the standard library")
  ui.map(v, "t", function()
    set_filter(function()
      filters.hide_third_party = not hide_third_party()
    end)
  end, "toggle third-party code")
  ui.map(v, "f", function()
    if not v.file then
      util.warn("the overview was not opened from a file.")
      return
    end
    set_filter(function()
      filters.only_file = not filters.only_file
    end)
  end, "toggle this file only")
  ui.map(v, "c", function()
    set_filter(function()
      filters.include, filters.exclude = nil, nil
    end)
  end, "clear the filters")
  ui.set(v, (function()
    local b = ui.builder()
    b:add({ { "ThreadRadar overview: loading…", "ThreadRadarText" } })
    return b
  end)())
  M.refresh()
  return v
end

--- close() and the open view (tests and integrations).
M.close, M.view = ui.holder(function()
  return view
end, function()
  view = nil
end)

--- Resets the session's filters (tests).
function M.reset_filters()
  filters = { include = nil, exclude = nil, hide_stdlib = nil, hide_third_party = nil, only_file = false }
end

lsp.on_change(function(client_id, change)
  if ui.is_open(view) and view.client.id == client_id and lsp.changes_view(change) then
    M.refresh()
  end
end)

return M
