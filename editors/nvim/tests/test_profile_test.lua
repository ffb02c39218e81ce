-- (issue 19) A test profiled from its "▶ Profile" lens with vim.lsp.codelens.run, in a copy of
-- samples/python/testproject: the workspace is asked about once (vim.ui.select, remembered in
-- stdpath("data"); a dismissed question runs nothing and asks again, a "no" is kept), the run is
-- written with pytest's outcome, becomes the active one and its outcome is in the status line.
local H = dofile(os.getenv("TR_TESTS") .. "/helpers.lua")
local api = vim.api

H.run("profile_test", function()
  local root = H.env("TR_TESTPROJECT")
  vim.cmd("cd " .. root)
  local notes = H.capture_notifications()
  local asked = 0
  vim.ui.select = function(items, opts, on_choice)
    if opts.kind == "threadradar_trust" then
      asked = asked + 1
      -- The first time the question is dismissed (nothing runs, nothing is kept), then allowed.
      on_choice(asked > 1 and items[1] or nil)
      return
    end
    -- Several lenses on the line (the run's own lens too, once there is a run): the test's.
    for _, item in ipairs(items) do
      if type(item) == "table" and item.lens and item.lens.command and item.lens.command.command == "threadradar.profileTest" then
        on_choice(item)
        return
      end
    end
    H.fail("an unexpected question: " .. tostring(opts.prompt))
    on_choice(nil)
  end
  H.setup({})
  local record = require("threadradar.record")
  vim.cmd("edit " .. root .. "/tests/check_pool.py")
  local bufnr = api.nvim_get_current_buf()
  local lnum
  for i, l in ipairs(api.nvim_buf_get_lines(bufnr, 0, -1, false)) do
    if l:match("^def test_parallel_sum_is_right") then
      lnum = i
    end
  end
  -- The lens is the server's, on the test's line.
  H.wait(20000, function()
    for _, l in ipairs(vim.lsp.codelens.get(bufnr)) do
      if l.command and l.command.command == "threadradar.profileTest" and l.range.start.line == lnum - 1 then
        return true
      end
    end
  end, "a ▶ Profile lens on test_parallel_sum_is_right")
  api.nvim_win_set_cursor(0, { lnum, 0 })
  local function runs()
    return vim.fn.glob(root .. "/.threadradar/runs/*.json", false, true)
  end
  -- Dismissed: nothing runs, and the next lens asks again.
  vim.lsp.codelens.run()
  H.wait(10000, function()
    return asked == 1
  end, "the question")
  vim.wait(1500)
  H.eq(#runs(), 0, "a dismissed question runs nothing")
  H.eq(vim.fn.filereadable(record.trust_file()), 0, "a dismissed question is not remembered")
  vim.lsp.codelens.run()
  H.wait(60000, function()
    return record.last_test ~= nil
  end, "the profiled test's answer")
  local res = record.last_test
  H.eq(res.test, "tests/check_pool.py::test_parallel_sum_is_right", "the node id")
  H.eq(res.outcome.passed, 1, "passed")
  H.eq(res.outcome.failed, 0, "failed")
  H.check(vim.fn.filereadable(res.run) == 1, "the run is written")
  local info = H.run_info(res.run)
  H.check(type(info) == "table", "the run is readable")
  H.eq(asked, 2, "asked again after the dismissal")
  local trust = vim.fn.json_decode(table.concat(vim.fn.readfile(record.trust_file()), "\n"))
  H.eq(trust[vim.loop.fs_realpath(root)] or trust[root], true, "the answer is remembered")
  -- A second lens run asks no more.
  record.last_test = nil
  vim.lsp.codelens.run()
  H.wait(60000, function()
    return record.last_test ~= nil
  end, "the second run")
  H.eq(asked, 2, "asked only once per workspace once answered")
  local said = false
  for _, n in ipairs(notes) do
    said = said or n.msg:find("test_parallel_sum_is_right: 1 passed", 1, true) ~= nil
  end
  H.check(said, "the outcome is shown")
  -- The status line has the active test run's outcome, as the run's history says it.
  H.wait(10000, function()
    return record.status():find("1 passed", 1, true) ~= nil
  end, "the outcome in the status line")
  H.check(record.status():find(vim.fn.fnamemodify(record.last_test.run, ":t:r"), 1, true) ~= nil, "the status line names the new run: " .. record.status())

  -- :ThreadRadarRuns: a test run offers label / pin / delete / compare with previous.
  local actions_seen
  vim.ui.select = function(items, opts, on_choice)
    if opts.kind == "threadradar_run" then
      H.check(opts.format_item(items[1]):find("test_parallel_sum_is_right: 1 passed", 1, true) ~= nil, "the picker shows the test and its outcome")
      -- The earlier run (not the active one, whose summary says the same): duration and threads.
      local earlier = opts.format_item(items[2])
      H.check(earlier:find("test_parallel_sum_is_right: 1 passed  %d+%.%ds, %d+ threads") ~= nil, "the picker shows duration and threads: " .. earlier)
      on_choice(items[1])
    elseif opts.kind == "threadradar_run_action" then
      actions_seen = items
      on_choice("Label…")
    end
  end
  vim.ui.input = function(_, on_input)
    on_input("baseline")
  end
  vim.cmd("ThreadRadarRuns")
  local index = root .. "/.threadradar/runs.json"
  H.wait(10000, function()
    return vim.fn.filereadable(index) == 1
  end, "the label in .threadradar/runs.json")
  local labels = vim.fn.json_decode(table.concat(vim.fn.readfile(index), "\n"))
  local newest = labels.runs[vim.fn.fnamemodify(record.last_test.run, ":t")]
  H.eq(newest and newest.label, "baseline", "the newest run is labelled")
  H.check(actions_seen and vim.tbl_contains(actions_seen, "Compare with previous run of this test"), "the newest run of a test offers compare with previous")

  -- "No, never in this workspace" is kept: a lens then runs nothing and does not ask.
  local trust_now = vim.fn.json_decode(table.concat(vim.fn.readfile(record.trust_file()), "\n"))
  for k in pairs(trust_now) do
    trust_now[k] = false
  end
  vim.fn.writefile({ vim.fn.json_encode(trust_now) }, record.trust_file())
  local before = #runs()
  local warned = false
  local warn = vim.notify
  vim.notify = function(msg, level, o)
    warned = warned or (level == vim.log.levels.WARN and tostring(msg):find("profiling tests is not allowed", 1, true) ~= nil)
    return warn(msg, level, o)
  end
  vim.ui.select = function(items, opts, on_choice)
    if opts.kind == "threadradar_trust" then
      H.fail("asked again although the answer was kept")
      on_choice(nil)
      return
    end
    for _, item in ipairs(items) do
      if type(item) == "table" and item.lens and item.lens.command and item.lens.command.command == "threadradar.profileTest" then
        on_choice(item)
        return
      end
    end
    on_choice(nil)
  end
  api.nvim_win_set_cursor(0, { lnum, 0 })
  vim.lsp.codelens.run()
  H.wait(10000, function()
    return warned
  end, "the refusal")
  vim.wait(1500)
  H.eq(#runs(), before, "a workspace answered no runs nothing")
end, 150000)
