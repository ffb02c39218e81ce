-- (2) The overview float lists the run's functions in crt order (as `threadradar report`), its
-- filters reach the server, and <CR> jumps to the right file and line.
local H = dofile(os.getenv("TR_TESTS") .. "/helpers.lua")
local api = vim.api

local function function_rows(view)
  local rows = {}
  for row, item in pairs(view.items) do
    if item.kind == "function" then
      table.insert(rows, row)
    end
  end
  table.sort(rows)
  return rows
end

local function listed(view)
  local out = {}
  for _, row in ipairs(function_rows(view)) do
    local item = view.items[row]
    table.insert(out, ("%s:%d:%s"):format(item.file, item.line, item.qualname))
  end
  return out
end

local function expected(report, n)
  local out = {}
  for i, a in ipairs(report.artifacts) do
    if i > n then
      break
    end
    table.insert(out, ("%s:%d:%s"):format(a.file, a.line, a.qualname))
  end
  return out
end

local function wait_render(view, before)
  return H.wait(10000, function()
    return view.renders > before
  end, "the overview to be drawn again")
end

H.run("overview", function()
  H.setup()
  H.open_sample()
  local source_win = api.nvim_get_current_win()
  local ov = require("threadradar.overview")
  ov.reset_filters()
  local renders = 0
  vim.cmd("ThreadRadarOverview")
  local view = ov.view()
  H.check(view ~= nil, "the overview float is open")
  view.on_render = function(v)
    renders = renders + 1
    v.renders = renders
  end
  view.renders = 0
  H.wait(10000, function()
    return view.renders > 0
  end, "the overview")
  H.check(api.nvim_win_get_config(view.win).relative ~= "", "the overview is a floating window")
  H.eq(api.nvim_get_current_buf(), view.buf, "the float has the focus")

  -- crt order = the report's order (same ties: the report sorts the same way).
  local report = H.expect("new-function")
  local got = listed(view)
  H.check(#got > 10, "many functions listed")
  H.eq(got, expected(report, #got), "functions in crt order")
  local text = table.concat(H.lines(view.buf), "\n")
  H.check(text:find("Program", 1, true) ~= nil, "the Program line")
  H.check(text:find("Classes (", 1, true) ~= nil and text:find("Threads (", 1, true) ~= nil, "classes and threads")
  -- The percentages on the lines are the report's.
  local first = H.lines(view.buf)[function_rows(view)[1]]
  H.check(first:find(H.pct(report.artifacts[1].crt), 1, true) ~= nil, "first line shows the top crt: " .. first)

  -- `s` hides the standard library: the report with --no-stdlib.
  local before = view.renders
  H.feed("s")
  wait_render(view, before)
  got = listed(view)
  H.eq(got, expected(H.expect("new-function-nostdlib"), #got), "stdlib hidden")
  before = view.renders
  H.feed("s")
  wait_render(view, before)

  -- `/` include filter through vim.ui.input.
  local original_input = vim.ui.input
  vim.ui.input = function(_, on_confirm)
    on_confirm("WorkerManager")
  end
  before = view.renders
  H.feed("/")
  wait_render(view, before)
  vim.ui.input = original_input
  got = listed(view)
  local want = {}
  for _, a in ipairs(report.artifacts) do
    if a.qualname:find("WorkerManager", 1, true) or a.file:find("WorkerManager", 1, true) then
      table.insert(want, ("%s:%d:%s"):format(a.file, a.line, a.qualname))
    end
  end
  H.eq(got, want, "include filter WorkerManager")
  H.check(table.concat(H.lines(view.buf), "\n"):find("include /WorkerManager/", 1, true) ~= nil, "the filter is shown")

  -- A bad regex: one notification, the list stays.
  local notes = H.capture_notifications()
  vim.ui.input = function(_, on_confirm)
    on_confirm("(")
  end
  H.feed("\\")
  vim.ui.input = original_input
  H.wait(5000, function()
    return #notes > 0
  end, "the bad regex's notification")
  H.eq(#notes, 1, "one notification for a bad regex")
  H.eq(listed(view), want, "the list stays after a bad regex")

  -- <CR> on WorkerManager._build_table, opened from another file: the source window shows
  -- buggy.py at the function's line.
  ov.close()
  H.eq(api.nvim_get_current_win(), source_win, "closing returns to the source window")
  vim.cmd("edit " .. vim.fn.fnameescape(H.env("TR_WS") .. "/common.py"))
  vim.cmd("ThreadRadarOverview")
  view = ov.view()
  view.renders = 0
  view.on_render = function(v)
    v.renders = v.renders + 1
  end
  wait_render(view, 0)
  local target
  for _, row in ipairs(function_rows(view)) do
    if view.items[row].qualname == "WorkerManager._build_table" then
      target = row
    end
  end
  H.check(target ~= nil, "_build_table is listed")
  local line
  for _, a in ipairs(report.artifacts) do
    if a.qualname == "WorkerManager._build_table" then
      line = a.line
    end
  end
  api.nvim_win_set_cursor(view.win, { target, 0 })
  H.feed("<CR>")
  H.wait(5000, function()
    return api.nvim_buf_get_name(0) == H.sample_file() and api.nvim_win_get_cursor(0)[1] == line
  end, "the jump to buggy.py:" .. tostring(line))
  H.eq(api.nvim_buf_get_name(0), H.sample_file(), "file after <CR>")
  H.eq(api.nvim_win_get_cursor(0)[1], line, "line after <CR>")
  H.eq(api.nvim_get_current_win(), source_win, "the jump happens in the source window")
  H.check(ov.view() == nil, "the float is closed")
  H.check(H.lines(0)[line]:find("def _build_table", 1, true) ~= nil, "the cursor is on the def")
end)
