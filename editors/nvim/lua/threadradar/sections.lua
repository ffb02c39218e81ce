-- :ThreadRadarSections [browser] [filter]: the critical sections of the active run (docs/sections.md),
-- from the server's `threadRadar/sections` — the web panel's Sections tab as text. How the
-- figures were obtained and the notes, then per section its lock, function and line, its
-- executions (seen, and counted shorter than one sampling period), median, p95 and p99, the time
-- others waited to enter and the outliers. A section lens opens it on its section. <CR> jumps to
-- the section's line, `b` opens the Sections tab in the browser on it. Every figure is the
-- server's.
local lsp = require("threadradar.lsp")
local ui = require("threadradar.ui")
local util = require("threadradar.util")

local api = vim.api
local M = {}

local view

local null = util.null

M.KEYS = {
  { "<CR>", "jump" },
  { "b", "browser" },
  { "q", "close" },
}

--- A duration as the lenses write it: `0.40 ms`, `2 ms`, `41 ms`, `3.1 s`.
function M.fmt_s(s)
  s = s or 0
  if s >= 1 then
    return ("%.1f s"):format(s)
  elseif s >= 0.01 then
    return ("%.0f ms"):format(s * 1e3)
  elseif s >= 0.001 then
    return (("%.1f ms"):format(s * 1e3):gsub("%.0 ms$", " ms"))
  end
  return ("%.2f ms"):format(s * 1e3)
end

local clean = function(s)
  return require("threadradar.waits").clean(s)
end

--- Whether section `s` is the one `ref` ({file, function, lock, line}) names.
function M.matches(s, ref)
  if type(ref) ~= "table" then
    return false
  end
  return s.file == null(ref.file) and s.line == null(ref.line) and s.lock == null(ref.lock)
    and (null(ref["function"]) == nil or s["function"] == ref["function"])
end

--- Whether section `s` matches a filter text (its lock, function or file contains it).
local function selected(s, filter)
  if not filter or filter == "" then
    return true
  end
  local f = filter:lower()
  for _, field in ipairs({ s.lock, s["function"], s.file }) do
    if type(field) == "string" and field:lower():find(f, 1, true) then
      return true
    end
  end
  return false
end

--- The whole float as a ui builder (pure: no server, no window). `state`: { filter, focus = ref }.
function M.build(result, state)
  state = state or {}
  local b = ui.builder()
  local title = { { "ThreadRadar critical sections", "ThreadRadarTitle" } }
  if state.filter and state.filter ~= "" then
    table.insert(title, { "  · matching “" .. clean(state.filter) .. "”", "ThreadRadarText" })
  end
  b:add(title, { kind = "header" })
  b:add({ { clean(result.how), "ThreadRadarText" } })
  b:add({ { ("sampling period %s: shorter executions fall between samples and are counted, not listed"):format(M.fmt_s(result.interval_s)), "ThreadRadarText" } })
  if null(result.config_file) then
    b:add({ { "configuration: " .. clean(util.short_path(result.config_file)), "ThreadRadarText" } })
  end
  for _, n in ipairs(result.notes or {}) do
    b:add({ { "note: " .. clean(n), "ThreadRadarText" } }, { kind = "note" })
  end
  b:blank()
  local shown = 0
  for i, s in ipairs(result.sections or {}) do
    if selected(s, state.filter) then
      shown = shown + 1
      local item = { kind = "section", index = i - 1, section = s, file = s.file, line = s.line }
      local focus = M.matches(s, state.focus)
      local head = {
        { focus and "▶ " or "  ", "ThreadRadarKey" },
        { clean(s.lock), "ThreadRadarSection" },
      }
      if null(s.lock_type) then
        table.insert(head, { " (" .. clean(s.lock_type) .. ")", "ThreadRadarText" })
      end
      table.insert(head, { "  in " .. clean(s["function"]) .. "  ", "ThreadRadarText" })
      table.insert(head, { clean(util.where(s.file, s.line)), "ThreadRadarPath" })
      local row = b:add(head, item)
      if focus then
        item.focus = true
        item.row = row
      end
      if (s.execution_count or 0) == 0 then
        b:add({ { "    never seen executing: not executed, or every execution was shorter than the sampling period", "ThreadRadarText" } }, item)
      else
        b:add({
          {
            ("    %s · median %s · p95 %s · p99 %s · max %s · held %s in all"):format(
              util.plural(s.execution_count, "execution"),
              M.fmt_s(s.median_s),
              M.fmt_s(s.p95_s),
              M.fmt_s(s.p99_s),
              M.fmt_s(s.max_s),
              M.fmt_s(s.total_hold_s)
            ),
          },
        }, item)
        b:add({
          {
            ("    others waited %s · waiters in %.0f%% of the held samples · %s"):format(
              M.fmt_s(s.others_waited_s),
              (s.waited_share or 0) * 100,
              util.plural(#(s.outliers or {}), "outlier")
            ),
            "ThreadRadarText",
          },
        }, item)
      end
      -- What the samples could not see, said where the figures are (issue 32, Deliver 5).
      local short = s.short or {}
      if (short.count_at_least or 0) > 0 then
        b:add({
          {
            ("    %d listed; at least %d more were shorter than one period (%s) and are only counted: record with a smaller --interval-ms to see them"):format(
              #(s.executions or {}),
              short.count_at_least,
              M.fmt_s(result.interval_s)
            ),
            "ThreadRadarIncrease",
          },
        }, item)
      end
    end
  end
  if shown == 0 then
    b:add({ { (state.filter and state.filter ~= "") and "no section matches" or "no critical section was found in this run's source", "ThreadRadarText" } })
  end
  b:blank()
  ui.keys_line(b, M.KEYS)
  return b
end

local function render()
  if not ui.is_open(view) or not view.result then
    return
  end
  ui.set(view, M.build(view.result, { filter = view.filter, focus = view.focus }))
end

local function place_cursor()
  local row = ui.find(view, function(item)
    return item.kind == "section" and (item.focus or not view.focus)
  end)
  if row then
    api.nvim_win_set_cursor(view.win, { row, 0 })
  end
end

--- Asks the server again (a new run, other settings) and redraws.
function M.load()
  if not ui.is_open(view) then
    return
  end
  lsp.request(view.client, "threadRadar/sections", util.empty_object(), function(res)
    if not ui.is_open(view) or type(res) ~= "table" then
      return
    end
    view.result = res
    render()
  end)
end

local function enter()
  local item = ui.item(view)
  if not item or item.kind ~= "section" then
    return
  end
  if vim.fn.filereadable(item.file) == 0 then
    util.warn(clean(item.file) .. " is not a file on disk.")
    return
  end
  local origin = view.origin_win
  M.close()
  util.open_at(item.file, item.line, nil, origin)
end

--- The web panel's Sections tab through `threadradar serve`, on `section` when given.
function M.browser(client, section)
  local open = require("threadradar.open")
  local query = "?view=sections"
  if type(section) == "table" then
    query = query
      .. "&file=" .. open.url_encode(section.file)
      .. "&function=" .. open.url_encode(section["function"])
      .. "&lock=" .. open.url_encode(section.lock)
      .. "&line=" .. tostring(section.line)
  end
  open.panel(client, "sections", query)
end

--- Opens the float after the server's first answer (an error is one sentence and no float).
local function show(client, filter, focus)
  lsp.request(client, "threadRadar/sections", util.empty_object(), function(res)
    if type(res) ~= "table" then
      return
    end
    if ui.is_open(view) then
      ui.close(view)
    end
    view = ui.open({
      name = "sections",
      filetype = "threadradar",
      on_close = function()
        view = nil
      end,
    })
    view.client = client
    view.filter = filter
    view.focus = focus
    view.result = res
    local v = view
    ui.map(v, "q", M.close, "close")
    ui.map(v, "<Esc>", M.close, "close")
    ui.map(v, "<CR>", enter, "jump to the section")
    ui.map(v, "b", function()
      local item = ui.item(v)
      M.browser(v.client, item and item.section or v.focus)
    end, "the Sections tab in the browser")
    render()
    place_cursor()
  end)
end

--- Opens the float (opts.section: the section to put the cursor on, {file, function, lock,
--- line} as the section lens gives it; opts.filter: only sections whose lock, function or file
--- contains it), or with opts.browser the web panel.
function M.open(opts)
  opts = opts or {}
  local client = lsp.require_method("threadRadar/sections", "list critical sections", "update it, or run `threadradar sections RUN` in a terminal.")
  if not client then
    return
  end
  if opts.browser then
    return M.browser(client, opts.section)
  end
  show(client, opts.filter, opts.section)
end

--- :ThreadRadarSections's argument line: `browser` and/or a filter (the rest of the line).
function M.command(args)
  args = vim.trim(args or "")
  local browser = false
  local first, rest = args:match("^(%S+)%s*(.*)$")
  if first == "browser" then
    browser, args = true, rest
  end
  M.open({ browser = browser, filter = args ~= "" and args or nil })
end

--- close() and the open view (tests and integrations).
M.close, M.view = ui.holder(function()
  return view
end, function()
  view = nil
end)

lsp.on_change(function(client_id, change)
  if ui.is_open(view) and view.client.id == client_id and lsp.changes_view(change) and change.reason ~= "filter" then
    M.load()
  end
end)

return M
