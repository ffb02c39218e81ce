-- (5) :ThreadRadarRuns through vim.ui.select (stubbed: Neovim's UI hook) selects the other,
-- older run, and the virtual text shows its figures; "follow the newest" goes back.
local H = dofile(os.getenv("TR_TESTS") .. "/helpers.lua")

local function decl(run, qualname)
  for _, a in pairs(H.expected_declarations(run, H.sample_file())) do
    if a.qualname == qualname then
      return a
    end
  end
end

local function rows(run)
  local out = {}
  for line in pairs(H.expected_declarations(run, H.sample_file())) do
    table.insert(out, line - 1)
  end
  table.sort(out)
  return out
end

local function mark_rows()
  local out = {}
  for row in pairs(H.marks(0)) do
    table.insert(out, row)
  end
  table.sort(out)
  return out
end

local function shows(a, threads)
  local text = H.marks(0)[a.line - 1] or ""
  return text:find(H.pct(a.crt), 1, true) ~= nil and text:find(threads .. " thr", 1, true) ~= nil
end

H.run("runs", function()
  H.setup({ settings = { pollMs = 200 } })
  H.open_sample()
  local new_run, old_run = decl("new", "Worker.run"), decl("old", "Worker.run")
  H.check(shows(new_run, 6), "the newest run (6 workers) is shown first")
  H.eq(mark_rows(), rows("new"), "marks of the newest run")

  local offered, actions
  local original = vim.ui.select
  vim.ui.select = function(items, opts, on_choice)
    -- A chosen run (issue 19): what to do with it; any run can be labelled, pinned, deleted.
    if opts.kind == "threadradar_run_action" then
      actions = items
      return on_choice("Show this run", 1)
    end
    offered = {}
    for _, item in ipairs(items) do
      table.insert(offered, opts.format_item(item))
    end
    for _, item in ipairs(items) do
      if item.run and item.run.path == H.env("TR_RUN_OLD") then
        return on_choice(item, 1)
      end
    end
    on_choice(nil)
  end
  vim.cmd("ThreadRadarRuns")
  H.wait(10000, function()
    return shows(old_run, 4)
  end, "the old run's figures (4 workers)")
  vim.ui.select = original
  local runs = #vim.fn.glob(H.env("TR_WS") .. "/.threadradar/runs/*.json", true, true)
  H.check(offered and #offered == runs + 1, "the runs and 'follow the newest' offered")
  H.check(offered and offered[1]:find("●", 1, true) ~= nil, "the active run is marked: " .. vim.inspect(offered))
  -- A run that is no test: its program, duration and threads (the old run: 4 workers and more).
  local old_line
  for _, l in ipairs(offered or {}) do
    old_line = l:find(vim.fn.fnamemodify(H.env("TR_RUN_OLD"), ":t"), 1, true) and l or old_line
  end
  H.check(old_line and old_line:find("buggy.py --workers 4", 1, true) ~= nil and old_line:find("%d%.%ds, %d+ threads") ~= nil, "the old run's program, duration and threads: " .. tostring(old_line))
  H.check(actions ~= nil and vim.tbl_contains(actions, "Label…") and vim.tbl_contains(actions, "Pin (never pruned)") and vim.tbl_contains(actions, "Delete"), "a run that is no test can be labelled, pinned and deleted: " .. vim.inspect(actions))
  H.check(not vim.tbl_contains(actions or {}, "Compare with previous run of this test"), "no compare for a run that is no test")
  H.eq(mark_rows(), rows("old"), "marks of the old run")

  -- Back to the newest.
  vim.ui.select = function(items, _, on_choice)
    on_choice(items[#items], #items)
  end
  vim.cmd("ThreadRadarRuns")
  H.wait(10000, function()
    return shows(new_run, 6)
  end, "the newest run again")
  vim.ui.select = original

  local client = require("threadradar.lsp").client_for(0)
  if not require("threadradar.lsp").supports(client, "threadRadar/changed") then
    H.log("this server has no threadRadar/changed: skipping the new-run and delete checks")
    return
  end
  -- A newer run file appears (a copy of the old run): the server's threadRadar/changed alone
  -- brings its figures.
  local copy = H.env("TR_WS") .. "/.threadradar/runs/20200101T000200Z-copy.json"
  vim.fn.writefile(vim.fn.readfile(H.env("TR_RUN_OLD"), "b"), copy, "b")
  H.wait(10000, function()
    return shows(old_run, 4)
  end, "the new run file's figures (server notification)")

  -- :ThreadRadarDeleteRun on it (chooser and confirmation stubbed): back to the newest left.
  local original_input = vim.ui.input
  vim.ui.select = function(items, _, on_choice)
    for _, item in ipairs(items) do
      if item.path == copy then
        return on_choice(item, 1)
      end
    end
    on_choice(nil)
  end
  vim.ui.input = function(_, on_confirm)
    on_confirm("y")
  end
  vim.cmd("ThreadRadarDeleteRun")
  H.wait(10000, function()
    return shows(new_run, 6)
  end, "the figures of the newest run after deleting the copy")
  vim.ui.select, vim.ui.input = original, original_input
  H.check(vim.loop.fs_stat(copy) == nil, "the copy is deleted")
end)
