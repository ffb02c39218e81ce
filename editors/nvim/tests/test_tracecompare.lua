-- (issue 17) :ThreadRadarTraceCompare: the stretches as a pure function, then the real trace
-- comparison of the buggy run ("new", 6 workers) as A with the run of fixed.py as B: the
-- constructor's statement names the buggy run's thread count (its own report) → 1, every worker
-- is paired with itself, the buggy workers' loop until the time limit is time only in A, and <CR>
-- on a stretch opens its frame. Then :ThreadRadarCompare on run sets (`a,b` per side): the n's,
-- the test and each change's verdict, checked against what the runs are.
local H = dofile(os.getenv("TR_TESTS") .. "/helpers.lua")
local api = vim.api

local function artifact(report, qualname)
  for _, a in ipairs(report.artifacts) do
    if a.qualname == qualname then
      return a
    end
  end
end

local function items_of(view, pred)
  local out = {}
  for row, item in pairs(view.items) do
    if pred(item) then
      out[#out + 1] = { row = row, item = item }
    end
  end
  table.sort(out, function(a, b)
    return a.row < b.row
  end)
  return out
end

H.run("tracecompare", function()
  local tc = require("threadradar.tracecompare")
  H.setup()

  -- Pure: which stretches are listed, in what order, and where <CR> goes.
  local f = function(q, file, line)
    return { qualname = q, file = file, line = line }
  end
  local fake = {
    same_shift_s = 0.01,
    lanes = {
      {
        a = { name = "w", thread_type = "Worker" },
        b = { name = "w", thread_type = "Worker" },
        a_bars = { { start_s = 0.5, duration_s = 1.0, group = vim.NIL, stack = { f("run", "/p/a.py", 3), f("spin", "/p/a.py", 9) } }, { start_s = 0, duration_s = 0.1, group = 0 } },
        b_bars = { { start_s = 0.2, duration_s = 0.05, group = vim.NIL, stack = { f("run", "/p/b.py", 3) } } },
      },
    },
    groups = {
      -- moved (the server's class): listed
      { pair = 0, a_start_s = 0, a_duration_s = 0.1, b_start_s = 0.3, b_duration_s = 0.1, shift_s = 0.3, shift = "later", resized = false, stack_a = { f("run", "/p/a.py", 3) }, stack_b = { f("run", "/p/b.py", 3), f("lib", "/usr/lib/x.py", 1) }, functions = { "run" } },
      -- the same time and length: not listed
      { pair = 0, a_start_s = 0.2, a_duration_s = 0.1, b_start_s = 0.205, b_duration_s = 0.1, shift_s = 0.005, shift = "same", resized = false, stack_a = {}, stack_b = {}, functions = {} },
    },
  }
  local list, total = tc.stretches(fake, 0)
  H.eq(total, 3, "the moved group and the two stretches only in one run")
  local kinds = {}
  for _, s in ipairs(list) do
    table.insert(kinds, s.kind)
  end
  H.eq(kinds, { "matched", "only_b", "only_a" }, "in time order")
  H.eq({ list[1].frame.file, list[1].frame.line }, { "/p/b.py", 3 }, "a group opens the innermost own frame on B's stack, not the library's")
  H.check(list[1].text:find("0.300 s later", 1, true) ~= nil, "the shift in words: " .. list[1].text)
  H.eq(list[3].frame.qualname, "spin", "an A-only stretch opens its innermost frame")
  tc.PER_PAIR = 1
  list, total = tc.stretches(fake, 0)
  H.eq({ #list, total, list[1].kind }, { 1, 3, "only_a" }, "the largest kept")
  tc.PER_PAIR = 8
  H.eq(tc.shift_word({ shift_s = -0.5, shift = "earlier" }), "0.500 s earlier", "earlier")
  H.eq(tc.shift_word({ shift_s = 0.004, shift = "same" }), "same time", "the server's class")

  -- The real trace comparison.
  H.open_sample()
  local source_win = api.nvim_get_current_win()
  local buggy = vim.fn.fnamemodify(H.env("TR_RUN_NEW"), ":t")
  local fixed = vim.fn.fnamemodify(H.env("TR_RUN_FIXED"), ":t")
  local init_buggy = artifact(H.expect("new-function"), "WorkerManager.__init__")
  H.check(init_buggy and init_buggy.threads > 1, "the buggy run built the manager in several threads (its report)")
  vim.cmd("ThreadRadarTraceCompare " .. buggy .. " " .. fixed)
  H.wait(20000, function()
    return tc.view() ~= nil
  end, "the trace compare float")
  local view = tc.view()
  H.check(api.nvim_win_get_config(view.win).relative ~= "", "a floating window")
  local lines = H.lines(view.buf)
  local text = table.concat(lines, "\n")
  H.check(text:find("A " .. buggy .. " (", 1, true) ~= nil and text:find("B " .. fixed .. " (", 1, true) ~= nil, "both runs in the header:\n" .. text:sub(1, 400))
  H.check(text:find("How this was obtained: from sampled stacks", 1, true) ~= nil, "how it was obtained")
  H.check(text:find(("WorkerManager.__init__: run by %d threads → 1"):format(init_buggy.threads), 1, true) ~= nil, ("the constructor's %d threads → 1:\n%s"):format(init_buggy.threads, text:sub(1, 1500)))
  -- Every worker paired with itself (6 in each run).
  local pairs_ = items_of(view, function(i)
    return i.kind == "pair"
  end)
  for w = 0, 5 do
    local found = false
    for _, p in ipairs(pairs_) do
      found = found or (p.item.a == "worker-" .. w and p.item.b == "worker-" .. w)
    end
    H.check(found, "worker-" .. w .. " paired with itself")
  end
  H.eq(#pairs_, #view.data.lanes, "one heading per thread pair of the server's answer")
  -- The matched stretches listed are the server's: its groups whose class is not `same` or that it
  -- says changed length, each with the server's class in words.
  for k = 0, #view.data.lanes - 1 do
    local list, total = tc.stretches(view.data, k)
    local want = 0
    for _, g in ipairs(view.data.groups) do
      if g.pair == k then
        H.check(g.shift == "earlier" or g.shift == "same" or g.shift == "later", "a class from the server: " .. tostring(g.shift))
        H.check(type(g.resized) == "boolean", "resized from the server")
        if g.shift ~= "same" or g.resized then
          want = want + 1
        end
      end
    end
    local only = 0
    for _, bars in ipairs({ view.data.lanes[k + 1].a_bars, view.data.lanes[k + 1].b_bars }) do
      for _, b in ipairs(bars) do
        if b.group == vim.NIL or b.group == nil then
          only = only + 1
        end
      end
    end
    H.eq(total, want + only, "pair " .. k .. ": the server's moved or resized groups and the stretches only in one run")
    for _, s in ipairs(list) do
      if s.kind == "matched" then
        local g = view.data.groups[s.group + 1]
        local word = g.shift == "same" and "same time" or (g.shift == "earlier" and "earlier" or "later")
        H.check(s.text:find(word, 1, true) ~= nil, "the server's class in words: " .. s.text)
      end
    end
  end
  -- The buggy workers loop until the time limit: the server has stretches only in A, or matches
  -- A's longer stretches to B's shorter ones (which of the two varies with the recordings; the
  -- list keeps the largest per pair, so this is asked of the server's answer, and the listing of
  -- both kinds is checked above).
  local longer_in_a = false
  for _, lane in ipairs(view.data.lanes) do
    for _, b in ipairs(lane.a_bars) do
      longer_in_a = longer_in_a or b.group == vim.NIL or b.group == nil
    end
  end
  for _, g in ipairs(view.data.groups) do
    longer_in_a = longer_in_a or (g.resized and g.a_duration_s > g.b_duration_s)
  end
  H.check(longer_in_a, "stretches only in A, or longer in A:\n" .. text:sub(1, 2000))
  -- <CR> on a stretch with a frame: its file at its line, in the source window.
  local target
  for _, s in ipairs(items_of(view, function(i)
    return i.stretch and i.file ~= nil and vim.fn.filereadable(i.file) == 1
  end)) do
    target = target or s
  end
  H.check(target ~= nil, "a stretch whose frame is a file on disk")
  api.nvim_win_set_cursor(view.win, { target.row, 0 })
  H.feed("<CR>")
  H.wait(5000, function()
    return api.nvim_buf_get_name(0) == target.item.file
  end, "the stretch's file opened")
  H.eq(api.nvim_win_get_cursor(0)[1], target.item.line, "at the frame's line")
  H.eq(api.nvim_get_current_win(), source_win, "in the source window")
  H.check(tc.view() == nil, "the float is closed")

  -- No argument: the active (newest) run as B against the one before it as A.
  vim.cmd("ThreadRadarTraceCompare")
  H.wait(20000, function()
    return tc.view() ~= nil
  end, "the default trace comparison")
  text = table.concat(H.lines(tc.view().buf), "\n")
  H.check(text:find("A " .. fixed .. " (", 1, true) ~= nil and text:find("B " .. buggy .. " (", 1, true) ~= nil, "the run before against the newest:\n" .. text:sub(1, 300))
  tc.close()
  -- Run sets (`a,b`): each run twice has no spread, so the constructor's exact change is
  -- significant, and a note says how it was tested.
  vim.cmd(("ThreadRadarTraceCompare %s,%s %s,%s"):format(buggy, buggy, fixed, fixed))
  H.wait(30000, function()
    return tc.view() ~= nil
  end, "the trace comparison of run sets")
  text = table.concat(H.lines(tc.view().buf), "\n")
  H.check(text:find(("WorkerManager.__init__: run by %d threads → 1  (significant)"):format(init_buggy.threads), 1, true) ~= nil, "marked significant:\n" .. text:sub(1, 1500))
  H.check(text:find("significance: Welch's t-test", 1, true) ~= nil, "how it was tested")
  tc.close()
  local notes = H.capture_notifications()
  vim.cmd("ThreadRadarTraceCompare a b c")
  -- The server splits the arguments (asynchronously): the warning follows its answer.
  H.wait(10000, function()
    return #notes >= 1
  end, "the warning on three runs")
  H.eq(#notes, 1, "three runs: one warning")

  -- :ThreadRadarCompare on run sets: the same two runs on both sides (a buggy one shown as base,
  -- the fixed one as new) cannot differ beyond their spread; sets of each run twice have no
  -- spread, so the constructor's exact change is significant.
  local compare = require("threadradar.compare")
  compare.reset()
  vim.cmd(("ThreadRadarCompare %s,%s %s,%s"):format(buggy, fixed, fixed, buggy))
  H.wait(20000, function()
    return compare.view() ~= nil
  end, "the comparison of run sets")
  text = table.concat(H.lines(compare.view().buf), "\n")
  H.check(text:find("Run sets: base n = 2, new n = 2; Welch's t-test", 1, true) ~= nil, "the n's and the test:\n" .. text:sub(1, 800))
  H.check(text:find("(within noise)", 1, true) ~= nil and text:find("(significant)", 1, true) == nil, "the same runs: all within noise:\n" .. text:sub(1, 1500))
  compare.close()
  vim.cmd(("ThreadRadarCompare %s,%s %s,%s"):format(buggy, buggy, fixed, fixed))
  H.wait(20000, function()
    return compare.view() ~= nil
  end, "the comparison of the two sets")
  text = table.concat(H.lines(compare.view().buf), "\n")
  -- The change's line: the server's words, how it was obtained ("[sampled: …]"), the verdict.
  local line
  for l in text:gmatch("[^\n]+") do
    if l:find(("WorkerManager.__init__: run by %d threads → 1  ["):format(init_buggy.threads), 1, true) then
      line = l
    end
  end
  H.check(line ~= nil and line:find("(significant)", 1, true) ~= nil, "the constructor's change, significant:\n" .. text:sub(1, 1500))
  compare.close()
end, 120000)
