-- (7) :ThreadRadarRecord / :ThreadRadarStop / :ThreadRadarRecordLog / status(): real recordings
-- through the server (`threadradar.record`) in a project that already has two runs; the command
-- splitter and `%` as pure functions.
local H = dofile(os.getenv("TR_TESTS") .. "/helpers.lua")
local api = vim.api

local function runs_in(dir)
  local list = vim.fn.glob(dir .. "/.threadradar/runs/*.json", true, true)
  table.sort(list)
  return list
end

local function new_file(before, after)
  local seen = {}
  for _, f in ipairs(before) do
    seen[f] = true
  end
  for _, f in ipairs(after) do
    if not seen[f] then
      return f
    end
  end
end

local function count(list, pattern)
  local n = 0
  for _, note in ipairs(list) do
    if note.msg:find(pattern, 1, true) then
      n = n + 1
    end
  end
  return n
end

H.run("record", function()
  -- :ThreadRadarRecord's argument (pure): `%`, the default, errors.
  local record = require("threadradar.record")
  H.eq(record.build_command({ "%" }, "/p/app.py"), { "python3", "/p/app.py" }, "% alone")
  H.eq(record.build_command({ "%", "--workers", "3" }, "/p/app.py"), { "python3", "/p/app.py", "--workers", "3" }, "% with arguments")
  H.eq(record.build_command({ "python3", "-X", "dev", "%", "-v" }, "/p/app.py"), { "python3", "-X", "dev", "/p/app.py", "-v" }, "% inside")
  local none, why = record.build_command({ "%" }, nil)
  H.check(none == nil and why ~= nil, "% without a file is an error")
  H.eq(record.program_name({ "python3", "-m", "pytest", "-x" }), "pytest", "program name of -m")
  H.eq(record.program_name({ "python3", "-u", "/p/app.py" }), "app.py", "program name of a script")
  H.eq(record.program_name({ "./run.sh" }), "run.sh", "program name of a program")

  -- The options: record_command as a line or a list, record_subprocesses → server settings.
  local config = require("threadradar.config")
  local built = config.build({ record_command = "python3 -m pytest -k 'a b'", record_subprocesses = false })
  local saved = config.options
  config.set(built)
  local s = config.server_settings()
  config.set(saved)
  H.eq(s.recordCommand, "python3 -m pytest -k 'a b'", "recordCommand from record_command: the line, which the server splits")
  H.check(not pcall(config.build, { record_command = "   " }), "a blank record_command is refused")
  H.eq(s.recordSubprocesses, false, "recordSubprocesses from record_subprocesses")
  H.eq(config.server_settings().recordCommand, nil, "no recordCommand by default (the server's)")
  H.check(not pcall(config.build, { record_command = {} }), "an empty record_command is refused")
  H.check(not pcall(config.build, { record_subprocesses = "yes" }), "record_subprocesses must be a boolean")
  -- `repeat` is an option; the overrides of [tool.threadradar] go to the server as they are.
  local overrides = { testCommand = { "{python}", "-m", "pytest", "-x", "{tests}" }, intervalMs = 2, runsDir = "profiles", keepRuns = 5, include = { "pool" } }
  config.set(config.build({ ["repeat"] = 3, settings = overrides }))
  s = config.server_settings()
  config.set(saved)
  H.eq(s["repeat"], 3, "repeat from the option")
  for k, v in pairs(overrides) do
    H.eq(s[k], v, k .. " passed to the server")
  end
  H.check(not pcall(config.build, { ["repeat"] = "3" }), "repeat must be a number")

  -- The real thing, in a project with runs of another copy of the sample.
  local rec = H.env("TR_REC")
  vim.cmd("cd " .. vim.fn.fnameescape(rec))
  H.setup({ settings = { pollMs = 200 } })
  local tr = require("threadradar")
  local lsp = require("threadradar.lsp")
  local file = rec .. "/bug1_worker_manager/buggy.py"
  vim.cmd("edit " .. vim.fn.fnameescape(file))
  local src = api.nvim_get_current_buf()
  local runs0 = runs_in(rec)
  H.eq(#runs0, 2, "the project has two runs")
  H.wait(10000, function()
    return tr.status() == "ThreadRadar: " .. vim.fn.fnamemodify(runs0[#runs0], ":t:r")
  end, "the status of the newest run: " .. tr.status())
  local status0 = tr.status()
  H.check(vim.tbl_contains(vim.fn.getcompletion("ThreadRadarRecord ", "cmdline"), "%"), "<Tab> offers %")
  H.check(vim.tbl_contains(vim.fn.getcompletion("ThreadRadarRecord python3 bug1_", "cmdline"), "bug1_worker_manager/"), "<Tab> completes files after the program")
  H.wait(10000, function()
    return require("threadradar.virtual_text").data(src) ~= nil
  end, "the first answer for buggy.py")
  H.eq(H.count(H.marks(src)), 0, "no marks: the runs are of another copy of buggy.py")

  -- The one splitter is the server's (threadRadar/splitCommand): every shared case.
  local client = lsp.client_for(src)
  local function split(line)
    return lsp.request_sync(client, "threadRadar/splitCommand", { line = line }, 5000)
  end
  H.eq(split([[python3 app.py --name 'a b' "c \"d\"" e\ f x'y z'w]]).words, { "python3", "app.py", "--name", "a b", 'c "d"', "e f", "xy zw" }, "quotes and escapes")
  local cases_file = os.getenv("TR_TESTS") .. "/../../../lsp-server/src/cmdline_cases.json"
  local cases = vim.fn.json_decode(table.concat(vim.fn.readfile(cases_file), "\n"))
  H.check(#cases >= 10, "the shared cases are read")
  for _, c in ipairs(cases) do
    local got = split(c.line)
    if c.words ~= nil then
      H.eq(got.words, c.words, "shared case " .. vim.inspect(c.line))
    else
      H.check(type(got.error) == "string" and got.error:find("a quote is not closed", 1, true) ~= nil, "shared case " .. vim.inspect(c.line) .. " is an error")
    end
  end
  -- An unclosed quote: one warning, nothing recorded.
  local quote_notes = H.capture_notifications()
  vim.cmd("ThreadRadarRecord python3 'app.py")
  H.wait(5000, function()
    return #quote_notes > 0
  end, "a warning for the unclosed quote")
  H.eq(#quote_notes, 1, "one warning")
  H.check(quote_notes[1].msg:find("a quote is not closed", 1, true) ~= nil, quote_notes[1].msg)
  vim.wait(300)
  H.eq(#runs_in(rec), 2, "nothing recorded")
  H.check(not lsp.state(client.id).recording, "not recording")

  local changes = {}
  lsp.on_change(function(_, change)
    table.insert(changes, { reason = change.reason, recording = change.recording ~= nil and change.recording ~= vim.NIL })
  end)
  local function recording_ended(from)
    for i = from + 1, #changes do
      if changes[i].reason == "recording" and not changes[i].recording then
        return true
      end
    end
    return false
  end
  local function recording_started(from)
    for i = from + 1, #changes do
      if changes[i].reason == "recording" and changes[i].recording then
        return true
      end
    end
    return false
  end
  local notes = H.capture_notifications()
  local status_events = 0
  api.nvim_create_autocmd("User", {
    pattern = "ThreadRadarStatus",
    callback = function()
      status_events = status_events + 1
    end,
  })

  -- 1. `% --workers 3 --timeout 0.5`: it runs to its end.
  local mark = #changes
  vim.cmd("ThreadRadarRecord % --workers 3 --timeout 0.5")
  H.wait(10000, function()
    return recording_started(mark)
  end, "threadRadar/changed reason recording (started)")
  H.wait(3000, function()
    return status_events > 0
  end, "User ThreadRadarStatus when the recording starts")
  local during = tr.status()
  H.check(during:find("ThreadRadar: recording buggy.py…", 1, true) == 1, "status while recording: " .. during)
  H.wait(15000, function()
    return recording_ended(mark)
  end, "threadRadar/changed reason recording with recording = null")
  local runs1 = runs_in(rec)
  H.eq(#runs1, 3, "one more run file")
  local run1 = new_file(runs0, runs1)
  H.check(run1 ~= nil and run1:find("buggy", 1, true) ~= nil, "the new run is named after buggy.py: " .. tostring(run1))
  H.wait(10000, function()
    return run1 and tr.status() == "ThreadRadar: " .. vim.fn.fnamemodify(run1, ":t:r")
  end, "the status names the new run (was " .. status0 .. ", is " .. tr.status() .. ")")
  H.wait(10000, function()
    return H.count(H.marks(src)) > 0
  end, "the virtual text of the new run in buggy.py")
  local marks = H.marks(src)
  local lines = H.lines(src)
  for row in pairs(marks) do
    H.check(lines[row + 1]:match("^%s*def ") or lines[row + 1]:match("^%s*class "), "a mark on a def/class line: " .. lines[row + 1])
  end
  H.eq(count(notes, "ThreadRadar: recording `python3 bug1_worker_manager/buggy.py --workers 3 --timeout 0.5`"), 1, "one notification at the start")
  H.wait(5000, function()
    return count(notes, "ThreadRadar: recorded ") == 1
  end, "the server's summary")
  H.eq(#notes, 2, "two notifications: the start and the summary; " .. vim.inspect(notes))
  local log = table.concat(record.log_lines(), "\n")
  H.check(log:find("3 managers for 3 workers", 1, true) ~= nil or log:find("managers for 3 workers", 1, true) ~= nil, "the program's output in the log:\n" .. log)
  H.check(log:find("ThreadRadar: recording `python3 " .. file, 1, true) ~= nil, "the recording's header in the log")
  vim.cmd("ThreadRadarRecordLog")
  H.eq(api.nvim_buf_get_name(0), record.LOG_NAME, "the log buffer")
  H.check(table.concat(H.lines(0), "\n"):find("managers for 3 workers", 1, true) ~= nil, "the log buffer has the output")
  local log_buf = api.nvim_get_current_buf()
  vim.cmd("close")
  vim.cmd("buffer " .. src)

  -- 2. `%` alone (10 workers, 5 s limit), stopped after a second: the run so far is written at
  -- once; the recorder then asks the program to end (this one does not, so it is killed).
  -- Run files are named after the second they start in; a second run of the same program in the
  -- same second gets "-2", which sorts before the first by name (the server would then show the
  -- first as the newest): start in the next second.
  local second = os.time()
  vim.wait(1100, function()
    return os.time() > second
  end, 20)
  mark = #changes
  local before_notes = #notes
  vim.cmd("ThreadRadarRecord %")
  H.wait(10000, function()
    return recording_started(mark)
  end, "the second recording")
  -- A second one meanwhile: one warning from the server.
  vim.cmd("ThreadRadarRecord %")
  H.wait(5000, function()
    return count(notes, "already being recorded") == 1
  end, "the warning for a second recording")
  vim.wait(1000, function()
    return false
  end)
  H.check(tr.status():find("ThreadRadar: recording buggy.py… ", 1, true) == 1, "status while recording: " .. tr.status())
  vim.cmd("ThreadRadarStop")
  H.wait(2500, function()
    return #runs_in(rec) == 4
  end, "the stopped recording's run file, written at once")
  H.wait(15000, function()
    return recording_ended(mark)
  end, "the end of the stopped recording")
  H.eq(count(notes, "stopping the recording"), 1, "one notification for the stop")
  local runs2 = runs_in(rec)
  H.eq(#runs2, 4, "the stopped recording's run is kept")
  local run2 = new_file(runs1, runs2)
  local meta = run2 and H.run_info(run2).meta or {}
  H.eq(meta.end_reason, "interrupted", "the run ends where it was stopped")
  H.check((meta.duration_s or 99) < 3, ("a run of about a second, not the program's 5 s (%.1fs)"):format(meta.duration_s or -1))
  H.wait(10000, function()
    return run2 and tr.status() == "ThreadRadar: " .. vim.fn.fnamemodify(run2, ":t:r")
  end, "the status names the stopped recording's run")
  H.wait(5000, function()
    return count(notes, "ThreadRadar: recorded ") == 2
  end, "the summary of the stopped recording")
  H.check(#api.nvim_buf_get_lines(log_buf, 0, -1, false) > 3, "the hidden log buffer keeps growing")

  -- 3. :ThreadRadarStop when nothing is recorded: one notification, no error.
  before_notes = #notes
  vim.cmd("ThreadRadarStop")
  H.wait(5000, function()
    return #notes > before_notes
  end, "the notification of an idle stop")
  vim.wait(300, function()
    return false
  end)
  H.eq(#notes, before_notes + 1, "one notification for an idle stop")
  H.check(notes[#notes].msg:find("nothing is being recorded", 1, true) ~= nil, "it says so: " .. notes[#notes].msg)
  H.eq(vim.v.errmsg, "", "no error message")

  -- 4. :2ThreadRadarRecord: the program twice as one run set (issue 17): two run files and the
  -- set's manifest listing them; the server names the set.
  local before_runs = runs_in(rec)
  second = os.time()
  vim.wait(1100, function()
    return os.time() > second
  end, 20)
  mark = #changes
  vim.cmd("2ThreadRadarRecord % --workers 2 --timeout 0.3")
  H.wait(10000, function()
    return recording_started(mark)
  end, "the repeated recording")
  H.wait(30000, function()
    return count(notes, "ThreadRadar: run set of 2 runs") == 1
  end, "the server's message naming the run set")
  local after_runs = runs_in(rec)
  H.eq(#after_runs, #before_runs + 3, "two runs and a manifest: " .. vim.inspect(after_runs))
  local manifest
  for _, f in ipairs(after_runs) do
    if f:find("%.runset%.json$") then
      manifest = f
    end
  end
  H.check(manifest ~= nil, "a run set manifest")
  if manifest then
    local set = H.read_json(manifest)
    H.eq(set.format, "threadradar-runset", "the manifest's format")
    H.eq(#set.runs, 2, "the manifest lists the two runs")
  end
end, 120000)
