-- :ThreadRadarRecord, :ThreadRadarStop, :ThreadRadarRecordLog and the status line
-- (require("threadradar").status()). The server records (`threadradar.record`): it answers at
-- once, passes the program's output on as window/logMessage (collected here, in the record log,
-- instead of notifications), reports $/progress (for progress plugins and vim.lsp.status();
-- the status line shows it too), says `threadRadar/changed` reason "recording" when it starts and ends, and shows the
-- recorder's summary with window/showMessage.
local lsp = require("threadradar.lsp")
local util = require("threadradar.util")

local api = vim.api
local uv = vim.loop
local M = {}

M.MAX_LOG_LINES = 10000
M.LOG_NAME = "threadradar://record-log"

local log_lines = {}
local log_buf
local ticker -- redraws the status line every second while something is recorded

-- Commands ----------------------------------------------------------------------------------

--- The words to record from :ThreadRadarRecord's argument, as the server split it
--- (threadRadar/splitCommand; pure). A first word `%` stands for `<python> <file>` (`python`: the
--- project's interpreter, python3 when not given); any other `%` word for <file>. Returns words,
--- or nil and an error.
function M.build_command(words, file, python)
  local out = {}
  for i, w in ipairs(words) do
    if w == "%" then
      if not file or file == "" then
        return nil, "% stands for the current file, and this buffer has none."
      end
      if i == 1 then
        table.insert(out, python or "python3")
      end
      table.insert(out, file)
    else
      table.insert(out, w)
    end
  end
  return out
end

--- A short name of a command for the status line (pure): the script or module a Python
--- interpreter runs (`python3 -m pytest` → pytest, `python3 app/main.py` → main.py), else the
--- program's file name.
function M.program_name(words)
  words = words or {}
  local first = words[1]
  if not first then
    return "?"
  end
  local base = vim.fn.fnamemodify(first, ":t")
  if base:match("^python[%d%.]*$") or base:match("^pypy[%d%.]*$") then
    local i = 2
    while words[i] do
      local w = words[i]
      if w == "-m" and words[i + 1] then
        return words[i + 1]
      elseif w == "-c" then
        return base .. " -c"
      elseif not w:match("^%-") then
        return vim.fn.fnamemodify(w, ":t")
      end
      i = i + 1
    end
  end
  return base
end

local function shown_command(words)
  local parts = {}
  for _, w in ipairs(words or {}) do
    table.insert(parts, w:find("/", 1, true) and util.short_path(w) or w)
  end
  return table.concat(parts, " ")
end

local function root_client()
  local client = lsp.client_for(0)
  if client then
    return client
  end
  -- No server yet (no Python file opened): the working directory's project.
  if not lsp.server_available() then
    return nil
  end
  local id = lsp.ensure_client(lsp.find_root(vim.fn.getcwd()))
  return id and vim.lsp.get_client_by_id(id) or nil
end

--- :[N]ThreadRadarRecord [command…]: a count N > 1 records a run set of N runs.
function M.record(args, count)
  local bufnr = api.nvim_get_current_buf()
  local file
  if api.nvim_buf_get_name(bufnr) ~= "" and vim.bo[bufnr].buftype == "" then
    file = vim.fn.fnamemodify(api.nvim_buf_get_name(bufnr), ":p")
  end
  local client = root_client()
  if not client then
    return
  end
  -- The project's interpreter (as ▶ Profile uses it), not python3 from PATH.
  local python = require("threadradar.locate").python_here(client.config and client.config.root_dir).python
  local o = require("threadradar.config").options
  -- The argument split by the server (quotes keep blanks), then `%` replaced.
  local function with_words(typed)
    local words, err
    if typed then
      words, err = M.build_command(typed, file, python)
      if err then
        util.warn(err)
        return
      end
    elseif o.record_command == nil and (o.settings or {}).recordCommand == nil then
      -- No argument and no record_command: the server's default (pytest) run by that interpreter.
      words = { python, "-m", "pytest" }
    end
    M.start(client, bufnr, file, words, count)
  end
  lsp.when_ready(client, function()
    if vim.trim(args or "") == "" then
      with_words(nil)
    else
      lsp.split_command(client, args, function(typed)
        with_words(#typed > 0 and typed or nil)
      end)
    end
  end)
end

--- Sends `threadradar.record` for `words` (nil: the server's recordCommand) once it can.
function M.start(client, bufnr, file, words, count)
  lsp.when_ready(client, function()
    if not lsp.supports(client, "threadradar.record") then
      util.warn("this threadradar server cannot record from the editor: update it, or run `threadradar record -- python3 your_program.py` in a terminal.")
      return
    end
    if file and vim.bo[bufnr].modified and words and vim.tbl_contains(words, file) then
      util.warn(util.short_path(file) .. " has unsaved changes: the recording runs the file on disk.")
    end
    local arg = {}
    if words then
      arg.command = words
    end
    -- :5ThreadRadarRecord: five runs as one run set (else the `repeat` setting decides).
    if (count or 0) > 1 then
      arg["repeat"] = count
    end
    local cwd = vim.fn.getcwd()
    local root = client.config and client.config.root_dir
    if root and (cwd == root or cwd:sub(1, #root + 1) == root .. "/") then
      arg.cwd = cwd
    end
    lsp.execute(client, "threadradar.record", next(arg) and arg or nil, function(res)
      res = res or {}
      util.notify(
        ("recording `%s`: :ThreadRadarStop stops it and keeps the run, :ThreadRadarRecordLog shows its output."):format(
          shown_command(res.command or words or {})
        )
      )
      M.status_changed()
    end)
  end)
end

--- The client that is recording: the current buffer's when it is, else any that is.
local function recording_client()
  local client = lsp.client_for(0)
  if client and lsp.state(client.id).recording then
    return client
  end
  for _, c in ipairs(lsp.all_clients()) do
    if lsp.state(c.id).recording then
      return c
    end
  end
  return client
end

--- :ThreadRadarStop: the recorder's Ctrl-C; the run recorded so far is written and shown.
function M.stop()
  local client = recording_client()
  if not client then
    if lsp.server_available() then
      util.warn("nothing is being recorded.")
    end
    return
  end
  if not lsp.supports(client, "threadradar.stopRecording") then
    util.warn("this threadradar server cannot record from the editor: update it.")
    return
  end
  lsp.execute(client, "threadradar.stopRecording", nil, function(res)
    if res and res.stopping then
      util.notify("stopping the recording: the run recorded so far is kept.")
    else
      util.warn("the recording is only starting: stop it again in a moment.")
    end
  end)
end

-- The record log ----------------------------------------------------------------------------

local function log_buffer_valid()
  return log_buf ~= nil and api.nvim_buf_is_valid(log_buf)
end

local function append_to_buffer(new_lines, dropped)
  if not log_buffer_valid() then
    return
  end
  -- Windows whose cursor is on the last line follow the output.
  local following = {}
  local last = api.nvim_buf_line_count(log_buf)
  for _, win in ipairs(api.nvim_list_wins()) do
    if api.nvim_win_get_buf(win) == log_buf and api.nvim_win_get_cursor(win)[1] >= last then
      table.insert(following, win)
    end
  end
  vim.bo[log_buf].modifiable = true
  local empty = last == 1 and api.nvim_buf_get_lines(log_buf, 0, 1, false)[1] == ""
  if empty then
    api.nvim_buf_set_lines(log_buf, 0, -1, false, new_lines)
  else
    api.nvim_buf_set_lines(log_buf, -1, -1, false, new_lines)
  end
  if dropped > 0 then
    api.nvim_buf_set_lines(log_buf, 0, math.min(dropped, api.nvim_buf_line_count(log_buf) - 1), false, {})
  end
  vim.bo[log_buf].modifiable = false
  vim.bo[log_buf].modified = false
  local count = api.nvim_buf_line_count(log_buf)
  for _, win in ipairs(following) do
    if api.nvim_win_is_valid(win) then
      api.nvim_win_set_cursor(win, { count, 0 })
    end
  end
end

--- Adds a server log message (a recording's output line, or a note) to the record log.
function M.log(_, message)
  message = tostring(message)
  local new_lines = vim.split(message, "\n", { plain = true })
  if message:match("^ThreadRadar: recording `") and #log_lines > 0 then
    table.insert(new_lines, 1, "")
  end
  vim.list_extend(log_lines, new_lines)
  local dropped = 0
  if #log_lines > M.MAX_LOG_LINES then
    dropped = #log_lines - M.MAX_LOG_LINES
    local kept = {}
    for i = dropped + 1, #log_lines do
      kept[#kept + 1] = log_lines[i]
    end
    log_lines = kept
  end
  append_to_buffer(new_lines, dropped)
end

--- The record log's lines (tests and integrations).
function M.log_lines()
  return vim.deepcopy(log_lines)
end

--- :ThreadRadarRecordLog: the servers' log messages (recordings' output) in a scratch buffer,
--- in a split at the bottom; it follows new output while its cursor is on the last line.
function M.open_log()
  if not log_buffer_valid() then
    log_buf = api.nvim_create_buf(false, true)
    vim.bo[log_buf].buftype = "nofile"
    vim.bo[log_buf].bufhidden = "hide"
    vim.bo[log_buf].swapfile = false
    pcall(api.nvim_buf_set_name, log_buf, M.LOG_NAME)
    vim.bo[log_buf].filetype = "threadradarlog"
    vim.bo[log_buf].modifiable = true
    local initial = #log_lines > 0 and log_lines
      or { "ThreadRadar record log: the output of :ThreadRadarRecord's recordings appears here." }
    api.nvim_buf_set_lines(log_buf, 0, -1, false, initial)
    vim.bo[log_buf].modifiable = false
    vim.bo[log_buf].modified = false
    vim.keymap.set("n", "q", "<cmd>close<CR>", { buffer = log_buf, silent = true, desc = "close" })
  end
  for _, win in ipairs(api.nvim_list_wins()) do
    if api.nvim_win_get_buf(win) == log_buf then
      api.nvim_set_current_win(win)
      return log_buf
    end
  end
  vim.cmd("botright 12split")
  api.nvim_win_set_buf(0, log_buf)
  api.nvim_win_set_cursor(0, { api.nvim_buf_line_count(log_buf), 0 })
  return log_buf
end

-- The status line ---------------------------------------------------------------------------

local function run_name(path)
  return (vim.fn.fnamemodify(path, ":t"):gsub("%.json$", ""))
end

--- A short text for status lines: "ThreadRadar: recording pytest… 12s" while recording, else
--- "ThreadRadar: <run name>" (with the thread filter), "ThreadRadar: no run", or "" without a
--- server. For the buffer's server (the current buffer by default), else the last one used.
function M.status(bufnr)
  if bufnr == 0 then
    bufnr = nil
  end
  local ok, text = pcall(function()
    if not require("threadradar").is_setup() then
      return ""
    end
    local client = lsp.client_for(bufnr)
    if not client then
      return ""
    end
    local st = lsp.state(client.id)
    if st.recording then
      local secs = math.floor((uv.now() - (st.recording.started or uv.now())) / 1000)
      return ("ThreadRadar: recording %s… %ds"):format(M.program_name(st.recording.command), secs)
    end
    if not st.known then
      return "ThreadRadar"
    end
    if not st.run then
      return "ThreadRadar: no run"
    end
    local text = "ThreadRadar: " .. run_name(st.run)
    -- The active run of a profiled test: its outcome (issue 19).
    local h = st.history
    if type(h) == "table" and type(h.test) == "string" then
      local o = h.outcome
      text = text .. " · " .. (type(o) == "table" and M.outcome_words(o) or "outcome unknown")
    end
    local n = #(st.exclude_threads or {})
    if n > 0 then
      text = text .. (" (%s filtered out)"):format(util.plural(n, "thread"))
    end
    return text
  end)
  return ok and text or ""
end

local function any_recording()
  for _, c in ipairs(lsp.all_clients()) do
    if lsp.state(c.id).recording then
      return true
    end
  end
  return false
end

local function announce()
  if #api.nvim_get_autocmds({ event = "User", pattern = "ThreadRadarStatus" }) > 0 then
    api.nvim_exec_autocmds("User", { pattern = "ThreadRadarStatus", modeline = false })
  end
  pcall(vim.cmd, "redrawstatus!")
end

--- Redraws status lines and fires `User ThreadRadarStatus`; keeps a 1 s ticker while recording.
function M.status_changed()
  vim.schedule(function()
    announce()
    local recording = any_recording()
    if recording and not ticker then
      ticker = uv.new_timer()
      ticker:start(1000, 1000, vim.schedule_wrap(function()
        if ticker then
          announce()
        end
      end))
    elseif not recording and ticker then
      ticker:stop()
      ticker:close()
      ticker = nil
    end
  end)
end

-- Profiling a test (issue 19) ----------------------------------------------------------------
-- The server's "▶ Profile" lenses carry `threadradar.profileTest`; vim.lsp.codelens.run (and the
-- plugin's own lens keys) call this handler instead of sending it directly, so that a workspace's
-- tests (its own Python, its own code) never run before the user said yes once for it.

--- Where the answers are kept: stdpath("data")/threadradar/workspaces.json, {root: true|false}.
function M.trust_file()
  return vim.fn.stdpath("data") .. "/threadradar/workspaces.json"
end

local function read_trust()
  local f = io.open(M.trust_file(), "r")
  if not f then
    return {}
  end
  local text = f:read("*a")
  f:close()
  local ok, t = pcall(vim.fn.json_decode, text)
  return (ok and type(t) == "table") and t or {}
end

local function write_trust(t)
  vim.fn.mkdir(vim.fn.fnamemodify(M.trust_file(), ":h"), "p")
  local f = io.open(M.trust_file(), "w")
  if f then
    f:write(vim.fn.json_encode(t))
    f:close()
  end
end

M.ALLOW = "Yes, profile tests in this workspace"
M.DENY = "No, never in this workspace"

--- Calls fn(allowed, remembered) after asking once per workspace root (the answer is remembered;
--- dismissing the question decides nothing, fn(false, false), and asks again next time).
function M.ask_trust(root, fn)
  local t = read_trust()
  if t[root] ~= nil then
    fn(t[root] == true, true)
    return
  end
  vim.ui.select({ M.ALLOW, M.DENY }, {
    prompt = "ThreadRadar: profiling a test runs this workspace's Python and pytest (" .. util.short_path(root) .. "). Allow?",
    kind = "threadradar_trust",
  }, function(choice)
    if not choice then
      fn(false, false)
      return
    end
    local now = read_trust()
    now[root] = choice == M.ALLOW
    write_trust(now)
    fn(now[root], true)
  end)
end

local function outcome_words(o)
  if type(o) ~= "table" then
    return "outcome unknown (no report: killed, cancelled or interrupted)"
  end
  local parts = {}
  for _, k in ipairs({ "passed", "failed", "errors", "skipped" }) do
    if (o[k] or 0) > 0 then
      table.insert(parts, o[k] .. " " .. k)
    end
  end
  return #parts > 0 and table.concat(parts, ", ") or "no tests ran"
end
M.outcome_words = outcome_words

--- The last profiled test's answer ({run, outcome, test}), for the status line and tests.
M.last_test = nil

--- vim.lsp.commands["threadradar.profileTest"]: (command, ctx) as Neovim calls it.
function M.profile_test(command, ctx)
  local client = ctx and ctx.client_id and vim.lsp.get_client_by_id(ctx.client_id) or root_client()
  if not client then
    util.warn("no ThreadRadar server for this buffer.")
    return
  end
  local arg = command.arguments and command.arguments[1] or {}
  local root = (client.config and client.config.root_dir) or vim.fn.getcwd()
  M.ask_trust(root, function(allowed, remembered)
    if not allowed and not remembered then
      util.notify("nothing was run: ThreadRadar asks again at the next ▶ Profile.")
      return
    elseif not allowed then
      util.warn("profiling tests is not allowed in " .. util.short_path(root) .. " (your answer is kept in " .. M.trust_file() .. ": delete its entry to be asked again).")
      return
    end
    local what = arg.name ~= nil and arg.name ~= vim.NIL and arg.name or vim.fn.fnamemodify(vim.uri_to_fname(arg.uri), ":t")
    util.notify("profiling " .. what .. ": :ThreadRadarStop cancels it.")
    M.status_changed()
    lsp.execute(client, "threadradar.profileTest", arg, function(res)
      M.last_test = res
      util.notify(("%s: %s."):format(res and res.test or what, outcome_words(res and res.outcome)))
      lsp.emit_change(client.id, { reason = "run" })
      M.status_changed()
    end)
  end)
end

vim.lsp.commands["threadradar.profileTest"] = M.profile_test

lsp.on_change(function()
  M.status_changed()
end)

return M
