-- The language-server client: one `threadradar lsp` per project root, requests with one-sentence
-- errors, the server's notifications and the refresh events the views listen to.
local config = require("threadradar.config")
local util = require("threadradar.util")

local api = vim.api
local M = {}

M.name = "threadradar"

local clients = {} -- root → client id
local ready = {} -- client id → true once initialized
local queued = {} -- client id → functions waiting for initialization
local buf_client = {} -- bufnr → client id
local shown_messages = {} -- client id → { message → true }
local listeners = {} -- functions(client_id, change)
local client_state = {} -- client id → { run, exclude_threads, recording, changes }
local stopping = {} -- client id → true once the plugin asked it to stop
local last_client -- id of the client of the last profiled buffer entered

-- Neovim 0.11 made the client's functions methods (`client:request()`); the dot form is deprecated.
local method_style = util.has("0.11")

local function call(client, name, ...)
  if method_style then
    return client[name](client, ...)
  end
  return client[name](...)
end

local function get_client(id)
  if not id then
    return nil
  end
  local client = vim.lsp.get_client_by_id(id)
  if not client or call(client, "is_stopped") then
    return nil
  end
  return client
end

local function all_clients()
  local list = {}
  local get = vim.lsp.get_clients or vim.lsp.get_active_clients
  for _, c in pairs(get()) do
    if c.name == M.name then
      table.insert(list, c)
    end
  end
  return list
end

--- The running ThreadRadar clients.
M.all_clients = all_clients

--- A saved `pyproject.toml` or `threadradar.toml`: the server hears of saves only of the buffers
--- it is attached to (Python files), so each client is told of this one, and checks the
--- configuration again (a new mistake is said when it is made).
function M.config_saved(path)
  local uri = vim.uri_from_fname(path)
  for _, c in ipairs(all_clients()) do
    call(c, "notify", "textDocument/didSave", { textDocument = { uri = uri } })
  end
end

-- Roots -------------------------------------------------------------------------------------

local function has_marker(dir, marker)
  return util.exists(dir .. "/" .. marker)
end

--- The project root of a file or directory. Walking up to the repository (`.git`) or the home
--- directory, whichever comes first: the nearest directory with the first marker (`.threadradar`,
--- where the runs are), else the nearest with any other marker, else the file's directory.
function M.find_root(path)
  if not path or path == "" then
    path = vim.fn.getcwd()
  end
  path = vim.fn.fnamemodify(path, ":p")
  local start = vim.fn.isdirectory(path) == 1 and path or vim.fn.fnamemodify(path, ":h")
  start = start:gsub("(.)/+$", "%1")
  local markers = config.options.root_markers
  local home = (vim.loop.os_homedir() or ""):gsub("(.)/+$", "%1")
  local preferred, other
  local dir = start
  while true do
    if not preferred and markers[1] and has_marker(dir, markers[1]) then
      preferred = dir
    end
    if not other then
      for i = 2, #markers do
        if has_marker(dir, markers[i]) then
          other = dir
          break
        end
      end
    end
    if preferred or has_marker(dir, ".git") or dir == home then
      break
    end
    local parent = vim.fn.fnamemodify(dir, ":h")
    if parent == dir then
      break
    end
    dir = parent
  end
  return preferred or other or start
end

-- Events ------------------------------------------------------------------------------------

--- Registers fn(client_id, change) for run, filter, runs and settings changes (server
--- notifications, and the plugin's own commands for servers without notifications).
function M.on_change(fn)
  table.insert(listeners, fn)
end

function M.emit_change(client_id, change)
  for _, fn in ipairs(listeners) do
    local ok, err = pcall(fn, client_id, change or {})
    if not ok then
      util.error("refresh failed: " .. util.error_text(err))
    end
  end
end

--- Whether a change alters what the views show: not when only the list of run files changed
--- (`runs`) or a recording started (its end is followed by the new run).
function M.changes_view(change)
  if change.reason == "runs" then
    return false
  end
  if change.reason == "recording" and change.recording ~= nil and change.recording ~= vim.NIL then
    return false
  end
  return true
end

--- Buffers attached to a client (valid and loaded).
function M.buffers(client_id)
  local list = {}
  for bufnr, id in pairs(buf_client) do
    if id == client_id and api.nvim_buf_is_valid(bufnr) and api.nvim_buf_is_loaded(bufnr) then
      table.insert(list, bufnr)
    end
  end
  table.sort(list)
  return list
end

-- What each server last said: the active run, the thread filter and the recording ----------

local null = util.null

--- The state of a client as the server last described it (threadRadar/changed, or the
--- threadRadar/runs asked at start): { run = path|nil, exclude_threads = {…},
--- recording = { command, output, started = ms }|nil, known = bool }.
function M.state(client_id)
  local st = client_state[client_id]
  if not st then
    st = { exclude_threads = {}, changes = 0, known = false }
    client_state[client_id] = st
  end
  return st
end

--- The active run's history (a profiled test: its id and outcome, issue 19) from a
--- threadRadar/runs answer, for the status line.
local function set_history(st, res)
  st.history = nil
  for _, r in ipairs(type(res) == "table" and type(res.runs) == "table" and res.runs or {}) do
    if r.path == st.run and type(r.history) == "table" then
      st.history = r.history
    end
  end
end

--- Updates the state from threadRadar/changed's parameters (run, exclude_threads, recording).
function M.update_state(client_id, params)
  local st = M.state(client_id)
  st.changes = st.changes + 1
  st.known = true
  local before = st.run
  st.run = null(params.run)
  if st.run ~= before or params.reason == "runs" then
    -- A new active run (or new facts about the runs): its outcome for the status line.
    st.history = nil
    local client = vim.lsp.get_client_by_id(client_id)
    if st.run and client and M.supports(client, "threadRadar/runs") then
      M.request(client, "threadRadar/runs", util.empty_object(), function(res)
        set_history(M.state(client_id), res)
        require("threadradar.record").status_changed()
      end, { silent = true })
    end
  end
  st.exclude_threads = null(params.exclude_threads) or {}
  local rec = null(params.recording)
  if rec then
    local command = null(rec.command) or {}
    if not (st.recording and vim.deep_equal(st.recording.command, command)) then
      st.recording = { command = command, output = null(rec.output), started = vim.loop.now() }
    end
  else
    st.recording = nil
  end
end

-- Handlers ----------------------------------------------------------------------------------

local LEVELS = { [1] = vim.log.levels.ERROR, [2] = vim.log.levels.WARN, [3] = vim.log.levels.INFO, [4] = vim.log.levels.DEBUG }

local handlers = {
  ["threadRadar/changed"] = function(_, params, ctx)
    -- The state is kept at once: messages that follow (a recording's summary) see it.
    M.update_state(ctx.client_id, params or {})
    vim.schedule(function()
      M.emit_change(ctx.client_id, params or {})
    end)
  end,
  ["threadRadar/openPanel"] = function(_, params, ctx)
    vim.schedule(function()
      last_client = ctx.client_id
      M.open_view(params or {})
    end)
  end,
  -- Every message once per server, through vim.notify (Neovim 0.7 writes them to the message
  -- area without vim.notify). A recording's messages (its summary or its error) are shown each
  -- time, and go to the record log too.
  ["window/showMessage"] = function(_, params, ctx)
    if not params or not params.message then
      return
    end
    if M.state(ctx.client_id).recording then
      vim.schedule(function()
        require("threadradar.record").log(ctx.client_id, params.message)
        util.notify(params.message, LEVELS[params.type] or vim.log.levels.INFO)
      end)
      return
    end
    local seen = shown_messages[ctx.client_id] or {}
    shown_messages[ctx.client_id] = seen
    if seen[params.message] then
      return
    end
    seen[params.message] = true
    vim.schedule(function()
      util.notify(params.message, LEVELS[params.type] or vim.log.levels.INFO)
    end)
  end,
  -- The server's log: a recording's output (and the server's notes) go to :ThreadRadarRecordLog
  -- instead of notifications.
  ["window/logMessage"] = function(_, params, ctx)
    if not params or type(params.message) ~= "string" then
      return
    end
    vim.schedule(function()
      require("threadradar.record").log(ctx.client_id, params.message)
    end)
  end,
}

--- Opens the view a lens or the server's `threadRadar/openPanel` names: `panel` = "detail"
--- {artifact}, "timeline" {artifact, from_s, to_s}, "waits" {object}, "sections" {section},
--- else the overview {file}.
function M.open_view(params)
  local panel = params.panel
  if panel == "detail" then
    require("threadradar.detail").open({ artifact = util.null(params.artifact) })
  elseif panel == "timeline" then
    require("threadradar.timeline").open({ artifact = util.null(params.artifact), from_s = util.null(params.from_s), to_s = util.null(params.to_s) })
  elseif panel == "waits" then
    require("threadradar.waits").open({ object = util.null(params.object) })
  elseif panel == "sections" then
    require("threadradar.sections").open({ section = util.null(params.section) })
  else
    require("threadradar.overview").open({ file = util.null(params.file) })
  end
end

--- The view each lens command opens (its argument's fields are the view's).
M.LENS_VIEWS = {
  ["threadradar.openDetail"] = "detail",
  ["threadradar.openOverview"] = "overview",
  ["threadradar.openWaits"] = "waits",
  ["threadradar.openSections"] = "sections",
}

-- Code lenses run these on the client side: the floats instead of a server message. The timeline
-- lens goes to the server (`threadradar.openTimeline`), which answers with the range to show
-- through `threadRadar/openPanel`.
local commands = {}
for command_name, panel in pairs(M.LENS_VIEWS) do
  commands[command_name] = function(command, ctx)
    local arg = command.arguments and command.arguments[1] or {}
    if ctx and ctx.client_id then
      last_client = ctx.client_id
    end
    local params = vim.deepcopy(type(arg) == "table" and arg or {})
    params.panel = panel
    M.open_view(params)
  end
end

-- Buffers -----------------------------------------------------------------------------------

local function map(bufnr, lhs, rhs, desc)
  if lhs and lhs ~= "" then
    vim.keymap.set("n", lhs, rhs, { buffer = bufnr, silent = true, remap = true, desc = desc })
  end
end

local function enable_native_hints(bufnr)
  local ih = vim.lsp.inlay_hint
  if type(ih) == "table" and ih.enable then
    if not pcall(ih.enable, true, { bufnr = bufnr }) then
      pcall(ih.enable, bufnr, true)
    end
  elseif type(ih) == "function" then
    pcall(ih, bufnr, true)
  else
    util.notify_once(
      "native-hints",
      "native inlay hints need Neovim 0.10 or newer; the virtual text shows the radars instead.",
      vim.log.levels.WARN
    )
  end
end

local function on_attach(client, bufnr)
  buf_client[bufnr] = client.id
  last_client = client.id
  -- Keys only where the user asked for them (keymaps = { … }); the <Plug>(ThreadRadar…)
  -- mappings of plugin/threadradar.lua are there for everyone.
  local km = config.options.keymaps
  for name, lhs in pairs(km) do
    if lhs then
      map(bufnr, lhs, "<Plug>(ThreadRadar" .. config.KEYMAP_PLUGS[name] .. ")", "ThreadRadar " .. name)
    end
  end
  if config.options.native_inlay_hints then
    enable_native_hints(bufnr)
  end
  require("threadradar.virtual_text").attach(client.id, bufnr)
  require("threadradar.lens").attach(client.id, bufnr)
end

local function on_exit(code, signal, client_id)
  vim.schedule(function()
    for root, id in pairs(clients) do
      if id == client_id then
        clients[root] = nil
      end
    end
    ready[client_id], queued[client_id], shown_messages[client_id] = nil, nil, nil
    client_state[client_id] = nil
    stopping[client_id] = nil
    for bufnr, id in pairs(buf_client) do
      if id == client_id then
        buf_client[bufnr] = nil
        require("threadradar.virtual_text").detach(bufnr)
      end
    end
    if last_client == client_id then
      last_client = nil
    end
    require("threadradar.record").status_changed()
    if (code ~= 0 or signal ~= 0) and vim.v.exiting == vim.NIL then
      util.notify_once(
        "exit-" .. client_id,
        ("the language server stopped (exit code %d, signal %d); reopen the file to start it again."):format(code, signal),
        vim.log.levels.WARN
      )
    end
  end)
end

local function server_config(root)
  return {
    name = M.name,
    cmd = config.cmd(),
    root_dir = root,
    workspace_folders = { { uri = vim.uri_from_fname(root), name = root } },
    init_options = config.server_settings(),
    handlers = handlers,
    commands = commands,
    flags = { debounce_text_changes = 150 },
    on_init = function(client)
      ready[client.id] = true
      local waiting = queued[client.id] or {}
      queued[client.id] = nil
      for _, fn in ipairs(waiting) do
        fn()
      end
      M.ask_state(client)
    end,
    on_attach = on_attach,
    on_exit = on_exit,
  }
end

--- Whether the server can be started; says once per session (a warning, one short line: no
--- error and no hit-enter prompt at startup) where to read more when not.
function M.server_available()
  local bin = config.cmd()[1]
  if vim.fn.executable(bin) == 1 then
    return true
  end
  util.notify_once(
    "missing-server",
    ("no `%s` binary; see :checkhealth threadradar"):format(vim.fn.fnamemodify(bin, ":t")),
    vim.log.levels.WARN
  )
  return false
end

--- Starts (or reuses) the client of `root`; attaches `bufnr` when given. Returns the client id.
function M.ensure_client(root, bufnr)
  local id = clients[root]
  if id and get_client(id) then
    if bufnr then
      vim.lsp.buf_attach_client(bufnr, id)
    end
    return id
  end
  if not M.server_available() then
    return nil
  end
  local cfg = server_config(root)
  if vim.lsp.start and bufnr then
    id = vim.lsp.start(cfg, {
      bufnr = bufnr,
      reuse_client = function(client, conf)
        return client.name == conf.name and client.config.root_dir == conf.root_dir
      end,
    })
  else
    id = vim.lsp.start_client(cfg)
    if id and bufnr then
      vim.lsp.buf_attach_client(bufnr, id)
    end
  end
  if id then
    clients[root] = id
  end
  return id
end

--- Attaches a Python buffer to its project's server.
function M.attach(bufnr)
  bufnr = (bufnr == nil or bufnr == 0) and api.nvim_get_current_buf() or bufnr
  if not api.nvim_buf_is_valid(bufnr) or vim.bo[bufnr].buftype ~= "" then
    return
  end
  local name = api.nvim_buf_get_name(bufnr)
  if name == "" then
    return
  end
  local id = buf_client[bufnr]
  if id and get_client(id) then
    last_client = id
    return
  end
  local root = M.find_root(name)
  if not util.exists(root .. "/.threadradar") and not clients[root] then
    -- No runs here (the standard library, a scratch file): the running server annotates the
    -- file when its run has it, instead of a new server that would only say there are no runs.
    local running = M.client_for(bufnr)
    if running then
      vim.lsp.buf_attach_client(bufnr, running.id)
      return
    end
  end
  M.ensure_client(root, bufnr)
end

function M.detach_buffer(bufnr)
  buf_client[bufnr] = nil
end

function M.set_last_client(id)
  last_client = id
end

--- The client for `bufnr` (the current buffer when nil): the buffer's own, else the one of the
--- last profiled buffer, else any running one.
function M.client_for(bufnr)
  bufnr = bufnr or api.nvim_get_current_buf()
  local client = get_client(buf_client[bufnr]) or get_client(last_client)
  if client then
    return client
  end
  local list = all_clients()
  if list[1] then
    return list[1]
  end
  return nil
end

--- Like client_for, with one notification when there is none.
function M.require_client(bufnr)
  local client = M.client_for(bufnr)
  if not client then
    if M.server_available() then
      util.warn("no ThreadRadar server is running: open a Python file of a profiled project first.")
    end
  end
  return client
end

--- The running client when its server answers `method`; nil after saying so (`otherwise`: what the
--- user can do instead, e.g. "update it, or run `threadradar compare` in a terminal.").
function M.require_method(method, what, otherwise)
  local client = M.require_client()
  if client and not M.supports(client, method) then
    util.warn("this threadradar server cannot " .. what .. ": " .. otherwise)
    return nil
  end
  return client
end

function M.client_of_buffer(bufnr)
  return get_client(buf_client[bufnr])
end

--- Whether the server advertises a custom request, notification or command.
function M.supports(client, method)
  local caps = client.server_capabilities or client.resolved_capabilities or {}
  local exp = caps.experimental and caps.experimental.threadRadar
  if exp then
    for _, list in ipairs({ exp.requests, exp.notifications, exp.commands }) do
      for _, m in ipairs(list or {}) do
        if m == method then
          return true
        end
      end
    end
  end
  local ecp = caps.executeCommandProvider
  for _, c in ipairs(ecp and ecp.commands or {}) do
    if c == method then
      return true
    end
  end
  return false
end

--- Sends a request; calls cb(result, ctx) on success. An error is one notification unless
--- opts.silent; opts.on_error(err) runs as well. opts.bufnr is the buffer of the request.
function M.request(client, method, params, cb, opts)
  opts = opts or {}
  local function send()
    if call(client, "is_stopped") then
      if not opts.silent then
        util.warn("the ThreadRadar server is not running.")
      end
      return
    end
    local ok = call(client, "request", method, params, function(err, result, ctx)
      if err and (stopping[client.id] or vim.v.exiting ~= vim.NIL or call(client, "is_stopped")) then
        return -- answered while shutting down: nothing to say
      end
      if err then
        if opts.on_error then
          opts.on_error(err)
        end
        if not opts.silent then
          util.warn(util.error_text(err))
        end
        return
      end
      if cb then
        cb(result, ctx)
      end
    end, opts.bufnr)
    if not ok and not opts.silent then
      util.warn("the ThreadRadar server is not running.")
    end
  end
  if ready[client.id] then
    send()
  else
    queued[client.id] = queued[client.id] or {}
    table.insert(queued[client.id], send)
  end
end

--- Runs fn once the client is initialized (at once when it is).
function M.when_ready(client, fn)
  if ready[client.id] then
    fn()
  else
    queued[client.id] = queued[client.id] or {}
    table.insert(queued[client.id], fn)
  end
end

--- Splits a typed command line with the server's splitter (threadRadar/splitCommand: a shell's
--- quoting without expansions; no client splits one itself): cb(words), or one notification
--- saying why it cannot be split (an unclosed quote).
function M.split_command(client, line, cb)
  M.request(client, "threadRadar/splitCommand", { line = line or "" }, function(res)
    if type(res) ~= "table" then
      return
    end
    if type(res.error) == "string" then
      util.warn(res.error .. ".")
      return
    end
    cb(res.words or {})
  end)
end

--- A command's argument line of at most two run names or paths (quotes keep blanks), split by
--- the server: cb(words), or one notification (`usage`, e.g. "X takes at most two runs: [a] [b].").
function M.two_runs(args, usage, cb)
  if vim.trim(args or "") == "" then
    cb({})
    return
  end
  local client = M.require_client()
  if not client then
    return
  end
  M.split_command(client, args, function(words)
    if #words > 2 then
      util.warn(usage)
      return
    end
    cb(words)
  end)
end

--- A request answered before returning (for completions): the result, or nil.
function M.request_sync(client, method, params, timeout_ms)
  if not ready[client.id] or call(client, "is_stopped") then
    return nil
  end
  local ok, res = pcall(call, client, "request_sync", method, params, timeout_ms or 1000)
  if not ok or type(res) ~= "table" or res.err then
    return nil
  end
  return res.result
end

--- Asks for the active run and the filter once the server is up (threadRadar/changed keeps
--- them current afterwards); the status line shows them.
function M.ask_state(client)
  if not M.supports(client, "threadRadar/runs") then
    return
  end
  local st = M.state(client.id)
  local before = st.changes
  M.request(client, "threadRadar/runs", util.empty_object(), function(res)
    local now = M.state(client.id)
    if now.changes ~= before or type(res) ~= "table" then
      return -- a notification has said more recent things
    end
    now.known = true
    now.run = null(res.active)
    now.exclude_threads = null(res.exclude_threads) or {}
    set_history(now, res)
    require("threadradar.record").status_changed()
  end, { silent = true })
end

--- workspace/executeCommand with one argument object (or none).
function M.execute(client, command, argument, cb, opts)
  local params = { command = command, arguments = argument ~= nil and { argument } or {} }
  M.request(client, "workspace/executeCommand", params, cb, opts)
end

--- Opens an artifact at its current line (the server's `threadradar.goTo`, which follows edits),
--- falling back to the recorded `file:line` when the server cannot place it (stale, no key).
function M.goto_artifact(client, key, file, line, win)
  if not key then
    util.open_at(file, line, nil, win)
    return
  end
  M.execute(client, "threadradar.goTo", { artifact = key }, function(loc)
    if not util.jump_to_location(loc, win) then
      util.open_at(file, line, nil, win)
    end
  end, {
    silent = true,
    on_error = function()
      util.open_at(file, line, nil, win)
    end,
  })
end

--- Sends a notification (e.g. workspace/didChangeConfiguration).
function M.notify(client, method, params)
  call(client, "notify", method, params)
end

--- Markdown's backslash escapes (`\_`, `\<`) undone outside code spans: Neovim's Markdown
--- float shows them as they are written.
function M.unescape_markdown(line)
  local out, i, in_code = {}, 1, false
  while i <= #line do
    local c = line:sub(i, i)
    if c == "`" then
      in_code = not in_code
      table.insert(out, c)
      i = i + 1
    elseif c == "\\" and not in_code and line:sub(i + 1, i + 1):match("^%p$") then
      table.insert(out, line:sub(i + 1, i + 1))
      i = i + 2
    else
      table.insert(out, c)
      i = i + 1
    end
  end
  return table.concat(out)
end

--- The cells of a Markdown table row (`| a | b\|c |`), unescaped and trimmed.
local function table_cells(row)
  local cells, cur, i = {}, {}, 1
  row = vim.trim(row):gsub("^|", ""):gsub("|$", "")
  while i <= #row do
    local c = row:sub(i, i)
    if c == "\\" and i < #row then
      table.insert(cur, c .. row:sub(i + 1, i + 1))
      i = i + 2
    elseif c == "|" then
      table.insert(cells, cur)
      cur = {}
      i = i + 1
    else
      table.insert(cur, c)
      i = i + 1
    end
  end
  table.insert(cells, cur)
  for k, cell in ipairs(cells) do
    cells[k] = vim.trim(M.unescape_markdown(table.concat(cell))):gsub("`", "")
  end
  return cells
end

--- A hover's Markdown as Neovim's float shows it cleanly (pure): escapes undone and tables as
--- aligned columns in a code block (the float draws no tables: it would show the pipes and the
--- `|---|` row). Fenced code is kept as it is.
function M.hover_lines(lines)
  local out, i, fenced = {}, 1, false
  while i <= #lines do
    local line = lines[i]
    if line:match("^%s*```") then
      fenced = not fenced
      table.insert(out, line)
      i = i + 1
    elseif not fenced and line:match("^%s*|") and lines[i + 1] and lines[i + 1]:match("^%s*|[%s:%-|]+$") then
      local rows = {}
      while lines[i] and lines[i]:match("^%s*|") do
        if not lines[i]:match("^%s*|[%s:%-|]+$") then
          table.insert(rows, table_cells(lines[i]))
        end
        i = i + 1
      end
      local widths = {}
      for _, r in ipairs(rows) do
        for k, c in ipairs(r) do
          widths[k] = math.max(widths[k] or 0, util.width(c))
        end
      end
      table.insert(out, "```text")
      for _, r in ipairs(rows) do
        local cells = {}
        for k, c in ipairs(r) do
          cells[k] = k < #r and util.pad(c, widths[k]) or c
        end
        table.insert(out, (table.concat(cells, "  "):gsub("%s+$", "")))
      end
      table.insert(out, "```")
    else
      table.insert(out, fenced and line or M.unescape_markdown(line))
      i = i + 1
    end
  end
  return out
end

--- <Plug>(ThreadRadarHover): the server's hover, drawn cleanly (see hover_lines); elsewhere
--- the other servers' hover or 'keywordprg'. `K` stays Neovim's (vim.lsp.buf.hover()) unless
--- the user maps this.
function M.hover()
  local bufnr = api.nvim_get_current_buf()
  local client = M.client_of_buffer(bufnr)
  local function fallback()
    local others = false
    local get = vim.lsp.get_clients or vim.lsp.get_active_clients
    for _, c in pairs(get({ bufnr = bufnr })) do
      if c.name ~= M.name and vim.lsp.buf_is_attached(bufnr, c.id) then
        others = true
      end
    end
    if others then
      vim.lsp.buf.hover()
    else
      pcall(vim.cmd, "normal! K")
    end
  end
  if not client then
    return fallback()
  end
  local params = vim.lsp.util.make_position_params(0, client.offset_encoding)
  M.request(client, "textDocument/hover", params, function(result)
    local lines = {}
    if result and result.contents then
      lines = vim.lsp.util.convert_input_to_markdown_lines(result.contents)
    end
    local text = table.concat(lines, "\n")
    if text:match("^%s*$") then
      return fallback()
    end
    vim.lsp.util.open_floating_preview(M.hover_lines(lines), "markdown", {
      border = config.options.float.border,
      focus_id = "threadradar_hover",
    })
  end, { bufnr = bufnr })
end

--- Stops every ThreadRadar client (used by the tests).
function M.stop_all()
  for _, c in ipairs(all_clients()) do
    stopping[c.id] = true
    call(c, "stop")
  end
end

return M
