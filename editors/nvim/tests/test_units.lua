-- (units) The `units` option reaches the server as its `units` setting (initializationOptions,
-- and again on a second setup()), a wrong value is one clear error, and the server answers it:
-- the sample's runs were recorded without asyncio tasks, so asking for tasks shows threads (the
-- radars stay) and the server says so once, in its one sentence. Then, on a real recording of
-- tests/scripts/asyncio_truth.py on CPython 3.14 (run.sh's TR_TASKS: six tasks of
-- `Fetcher.fetch` on one event loop), the radar of `Fetcher.fetch` counts its 6 tasks with
-- `units = "tasks"`, and one thread with `units = "threads"`.
local H = dofile(os.getenv("TR_TESTS") .. "/helpers.lua")
local api = vim.api

H.run("units", function()
  local ok, err = pcall(require("threadradar.config").build, { units = "fibres" })
  H.check(not ok and tostring(err):find("units must be \"threads\" or \"tasks\"", 1, true) ~= nil, "a wrong units is an error: " .. tostring(err))

  local notes = H.capture_notifications()
  H.setup({ units = "tasks" })
  H.open_sample()
  local lsp = require("threadradar.lsp")
  local client = lsp.client_for(0)
  H.eq(client.config.init_options.units, "tasks", "initializationOptions carry units")
  local buf = api.nvim_get_current_buf()
  H.wait(10000, function()
    return H.count(H.marks(buf)) > 0
  end, "the radars, counted with threads")
  local function said()
    local n = 0
    for _, m in ipairs(notes) do
      local text = type(m) == "table" and (m.msg or m[1] or "") or tostring(m)
      if tostring(text):find("this run has no asyncio tasks", 1, true) then
        n = n + 1
      end
    end
    return n
  end
  H.wait(10000, function()
    return said() > 0
  end, "the server's sentence about a run without tasks")
  H.eq(said(), 1, "said once")

  local summary
  lsp.request(client, "threadRadar/runs", {}, function(res)
    summary = res and res.summary or false
  end)
  H.wait(10000, function()
    return summary ~= nil
  end, "the runs answer")
  H.eq(summary.units, nil, "the units shown are threads")
  H.eq(summary.tasks, nil, "the run has no tasks")

  -- Back to threads: the server loads the run again (threadRadar/changed says the units).
  H.setup({ units = "threads" })
  H.eq(require("threadradar.config").server_settings().units, "threads", "a second setup() sends the new units")
  H.wait(10000, function()
    return H.count(H.marks(buf)) > 0
  end, "the radars after switching back")

  local tasks = os.getenv("TR_TASKS") or ""
  if tasks == "" then
    return -- run.sh logged the skip (no CPython 3.14 here)
  end
  H.setup({ units = "tasks" })
  vim.cmd("edit " .. vim.fn.fnameescape(tasks .. "/asyncio_truth.py"))
  local tbuf = api.nvim_get_current_buf()
  local row
  for i, l in ipairs(api.nvim_buf_get_lines(tbuf, 0, -1, false)) do
    if l:find("async def fetch(", 1, true) then
      row = i - 1
    end
  end
  H.check(row ~= nil, "asyncio_truth.py declares Fetcher.fetch")
  H.wait(20000, function()
    local m = H.marks(tbuf)[row]
    return m ~= nil and m:find("6 tasks", 1, true) ~= nil
  end, "Fetcher.fetch's radar counting its 6 tasks: " .. vim.inspect(H.marks(tbuf)[row]))
  H.setup({ units = "threads" })
  H.wait(20000, function()
    local m = H.marks(tbuf)[row]
    return m ~= nil and m:find("tasks", 1, true) == nil
  end, "Fetcher.fetch's radar with threads, no tasks counted")
end)
