-- (3) The detail float of the function under the cursor: `x` deselects a thread and the figures
-- shown change to those of the report without that thread; `a` applies the filter globally (the
-- server's filter, the virtual text); `r` resets it.
local H = dofile(os.getenv("TR_TESTS") .. "/helpers.lua")
local api = vim.api

local function header_crt(view)
  for _, l in ipairs(H.lines(view.buf)) do
    local crt = l:match("^crt (%d+%.%d%%)")
    if crt then
      return crt
    end
  end
end

local function thread_row(view, id)
  for row, item in pairs(view.items) do
    if item.kind == "thread" and item.id == id then
      return row
    end
  end
end

local function find(list, pred)
  for _, x in ipairs(list) do
    if pred(x) then
      return x
    end
  end
end

H.run("detail", function()
  H.setup()
  H.open_sample()
  local source_buf = api.nvim_get_current_buf()
  local report = H.expect("new-function")
  local without = H.expect("new-function-without-worker-0")
  local run = find(report.artifacts, function(a)
    return a.qualname == "Worker.run"
  end)
  local run_without = find(without.artifacts, function(a)
    return a.qualname == "Worker.run"
  end)
  local worker0 = find(report.threads, function(t)
    return t.name == "worker-0"
  end)

  -- The cursor inside Worker.run's body (two lines below the def).
  api.nvim_win_set_cursor(0, { run.line + 2, 0 })
  local detail = require("threadradar.detail")
  vim.cmd("ThreadRadarDetail")
  local view
  H.wait(10000, function()
    view = detail.view()
    return view and view.data
  end, "the detail float")
  local lines = table.concat(H.lines(view.buf), "\n")
  H.check(lines:find("Worker.run", 1, true) ~= nil, "the detail is Worker.run's")
  H.eq(header_crt(view), H.pct(run.crt), "header crt = report")
  H.check(lines:find("Threads by cluster", 1, true) ~= nil, "the thread tree")
  H.check(lines:find("Histogram", 1, true) ~= nil and lines:find("■", 1, true) ~= nil, "the histogram")
  H.check(lines:find("█", 1, true) ~= nil, "the enlarged glyph")
  -- Every thread of the artifact is in the tree, selected.
  for _, p in ipairs(run.per_thread) do
    local row = thread_row(view, p.thread)
    H.check(row ~= nil and H.lines(view.buf)[row]:find("[x]", 1, true) ~= nil, "thread " .. p.thread .. " selected")
  end
  -- One ■ per thread in the histogram.
  local squares = 0
  local in_hist = false
  for _, l in ipairs(H.lines(view.buf)) do
    if l:find("^Histogram") then
      in_hist = true
    elseif in_hist and l:find("^  └") then
      break
    elseif in_hist then
      local _, n = l:gsub("■", "")
      squares = squares + n
    end
  end
  H.eq(squares, #run.per_thread, "histogram squares = threads")

  -- `t` shows the tree by type.
  H.feed("t")
  H.check(table.concat(H.lines(view.buf), "\n"):find("Threads by type", 1, true) ~= nil, "tree by type")
  H.feed("t")

  -- `x` on worker-0: the preview's figures are those without worker-0.
  local row = thread_row(view, worker0.id)
  api.nvim_win_set_cursor(view.win, { row, 0 })
  local seq = view.seq
  H.feed("x")
  H.wait(10000, function()
    return view.seq > seq and header_crt(view) == H.pct(run_without.crt)
  end, "the preview without worker-0")
  H.eq(header_crt(view), H.pct(run_without.crt), "preview crt = report --exclude-thread worker-0")
  H.check(H.lines(view.buf)[thread_row(view, worker0.id)]:find("[ ]", 1, true) ~= nil, "worker-0 deselected")
  H.check(table.concat(H.lines(view.buf), "\n"):find("not applied", 1, true) ~= nil, "the preview is marked")
  -- The preview is local: the server's filter and the virtual text are unchanged.
  local client = require("threadradar.lsp").client_for(source_buf)
  local runs
  require("threadradar.lsp").request(client, "threadRadar/runs", vim.empty_dict(), function(r)
    runs = r
  end)
  H.wait(5000, function()
    return runs ~= nil
  end, "threadRadar/runs")
  H.eq(runs.exclude_threads, {}, "no global filter during the preview")
  H.check((H.marks(source_buf)[run.line - 1] or ""):find(H.pct(run.crt), 1, true) ~= nil, "virtual text unchanged")

  -- `a` applies: the server's filter holds worker-0 and the virtual text shows the new figures.
  H.feed("a")
  H.wait(10000, function()
    return (H.marks(source_buf)[run.line - 1] or ""):find(H.pct(run_without.crt), 1, true) ~= nil
  end, "the virtual text under the filter")
  runs = nil
  require("threadradar.lsp").request(client, "threadRadar/runs", vim.empty_dict(), function(r)
    runs = r
  end)
  H.wait(5000, function()
    return runs ~= nil
  end, "threadRadar/runs")
  H.eq(runs.exclude_threads, { worker0.id }, "global filter = worker-0")
  H.wait(5000, function()
    return table.concat(H.lines(view.buf), "\n"):find("filtered out (applied)", 1, true) ~= nil
  end, "the detail to show the applied filter")
  H.eq(header_crt(view), H.pct(run_without.crt), "detail crt under the applied filter")

  -- `r` resets: no filter, the report's figures again.
  H.feed("r")
  H.wait(10000, function()
    return (H.marks(source_buf)[run.line - 1] or ""):find(H.pct(run.crt), 1, true) ~= nil
      and header_crt(view) == H.pct(run.crt)
  end, "the figures without a filter")
  runs = nil
  require("threadradar.lsp").request(client, "threadRadar/runs", vim.empty_dict(), function(r)
    runs = r
  end)
  H.wait(5000, function()
    return runs ~= nil
  end, "threadRadar/runs")
  H.eq(runs.exclude_threads, {}, "filter cleared")

  -- <CR> on a callee jumps to it.
  local callee_row
  for r, item in pairs(view.items) do
    if item.kind == "edge" and item.key and item.key:find("WorkerManager.get_instance", 1, true) then
      callee_row = r
    end
  end
  H.check(callee_row ~= nil, "get_instance is a callee")
  api.nvim_win_set_cursor(view.win, { callee_row, 0 })
  H.feed("<CR>")
  local gi = find(report.artifacts, function(a)
    return a.qualname == "WorkerManager.get_instance"
  end)
  H.wait(5000, function()
    return api.nvim_get_current_buf() == source_buf and api.nvim_win_get_cursor(0)[1] == gi.line
  end, "the jump to get_instance")
  H.check(detail.view() == nil, "the detail float is closed")

  -- Outside any profiled function (module level): the program's detail.
  api.nvim_win_set_cursor(0, { 1, 0 })
  vim.cmd("ThreadRadarDetail")
  H.wait(10000, function()
    view = detail.view()
    return view and view.data
  end, "the program's detail")
  H.check(H.lines(view.buf)[1]:find("Program", 1, true) ~= nil, "program detail at the top of the file")
  detail.close()
end)
