-- Options of the plugin: defaults, validation and the current values.
local M = {}

M.defaults = {
  -- The server: `cmd` wins over `server_path` (the binary, run as `<server_path> lsp`).
  cmd = nil,
  server_path = "threadradar",
  filetypes = { "python" },
  -- A buffer's project root: the nearest directory (walking up) that holds `.threadradar`,
  -- else the nearest one with any of the other markers, else the file's directory.
  root_markers = { ".threadradar", ".git", "pyproject.toml", "setup.py", "setup.cfg" },
  -- In-situ radars: false, true, or { position = "eol" | "right_align" | "above", label = "full" | "crt" | "glyph" }.
  virtual_text = true,
  code_lens = true,
  -- The server's inlay hints through Neovim's own client (Neovim >= 0.10 only). They repeat the
  -- virtual text, so they are off by default.
  native_inlay_hints = false,
  -- Real glyph images in the detail float through the kitty graphics protocol.
  image = false,
  -- How :ThreadRadarOpen opens a URL: nil (vim.ui.open, xdg-open, open or $BROWSER),
  -- a command list ({ "firefox" }; the URL is appended) or a function(url).
  open_cmd = nil,
  -- Milliseconds to wait after an edit before asking for the radars again.
  debounce_ms = 300,
  -- Server settings (docs/lsp.md), sent as initializationOptions. `notifyChanges` and `panels`
  -- are always on: the plugin refreshes on `threadRadar/changed` and opens its own floats.
  -- `testCommand`, `intervalMs`, `runsDir`, `keepRuns`, `include` and `exclude` override the
  -- project's `[tool.threadradar]` keys of the same meaning (docs/testing.md); nil: the project's.
  settings = {},
  -- :ThreadRadarRecord without arguments records this (the server's `recordCommand`): a list of
  -- words or a command line (split like a shell, quotes kept together). nil = the server's
  -- default, { "python3", "-m", "pytest" }.
  record_command = nil,
  -- Whether recordings sample Python subprocesses too (the server's `recordSubprocesses`).
  -- nil = the server's default (true).
  record_subprocesses = nil,
  -- How many times :ThreadRadarRecord and ▶ Profile run the program (the server's `repeat`);
  -- more than 1 records a run set. nil = the server's default (1). :5ThreadRadarRecord overrides it.
  ["repeat"] = nil,
  -- How much the server annotates the code (its `annotations` setting, VS Code's
  -- threadradar.annotations): "glyph" (the radar only), "hints" (the radar and its figures, the
  -- default) or "all" (everything, every code lens included).
  annotations = "hints",
  -- What every figure, radar, cluster, hint and float counts as a unit of concurrency (the
  -- server's `units` setting, VS Code's threadradar.units): "threads" (the default) or "tasks",
  -- the program's asyncio tasks (recorded on CPython 3.14+; samples outside any task stay with
  -- their thread). A run without tasks is shown with threads, and the server says so.
  units = "threads",
  -- Buffer-local keys in profiled buffers, none by default (`K` stays vim.lsp.buf.hover()): a
  -- key for an action maps it to <Plug>(ThreadRadar…) (:help threadradar-mappings); false = none.
  keymaps = {
    hover = false,
    detail = false,
    overview = false,
    codelens = false,
    timeline = false,
    waits = false,
    sections = false,
    runs = false,
    record = false,
    compare = false,
    toggle = false,
  },
  float = {
    border = "rounded",
    max_width = 0.9, -- of the editor's columns
    max_height = 0.85, -- of the editor's lines
  },
  overview = {
    top = 200,
    hide_stdlib = false,
    hide_third_party = false,
  },
}

M.options = vim.deepcopy(M.defaults)

--- keymaps.<name> → the <Plug>(ThreadRadar<Name>) mapping it maps to (plugin/threadradar.lua).
M.KEYMAP_PLUGS = {
  hover = "Hover",
  detail = "Detail",
  overview = "Overview",
  codelens = "CodeLens",
  timeline = "Timeline",
  waits = "Waits",
  sections = "Sections",
  runs = "Runs",
  record = "Record",
  compare = "Compare",
  toggle = "Toggle",
}

M.ANNOTATIONS = { glyph = true, hints = true, all = true }

M.UNITS = { threads = true, tasks = true }

local function is_key(v)
  return v == false or type(v) == "string"
end

--- Checks the user's options; returns the merged options or raises one clear error.
function M.build(user)
  user = user or {}
  if type(user) ~= "table" then
    error("threadradar: setup() takes a table of options")
  end
  local types = {
    cmd = { "table" },
    server_path = { "string" },
    filetypes = { "table" },
    root_markers = { "table" },
    virtual_text = { "boolean", "table" },
    code_lens = { "boolean" },
    native_inlay_hints = { "boolean" },
    image = { "boolean" },
    open_cmd = { "table", "function", "string" },
    debounce_ms = { "number" },
    settings = { "table" },
    record_command = { "table", "string" },
    record_subprocesses = { "boolean" },
    ["repeat"] = { "number" },
    keymaps = { "table" },
    annotations = { "string" },
    units = { "string" },
    float = { "table" },
    overview = { "table" },
  }
  for name, value in pairs(user) do
    local want = types[name]
    if not want then
      error(("threadradar: unknown option %q"):format(tostring(name)))
    end
    if not vim.tbl_contains(want, type(value)) then
      error(("threadradar: %s: expected %s, got %s"):format(name, table.concat(want, " or "), type(value)))
    end
  end

  for name, lhs in pairs(user.keymaps or {}) do
    if M.defaults.keymaps[name] == nil then
      error(("threadradar: unknown keymap %q"):format(name))
    end
    if not is_key(lhs) then
      error(("threadradar: keymaps.%s must be a key (string) or false"):format(name))
    end
  end
  if user.annotations ~= nil and not M.ANNOTATIONS[user.annotations] then
    error("threadradar: annotations must be \"glyph\", \"hints\" or \"all\"")
  end
  if user.units ~= nil and not M.UNITS[user.units] then
    error("threadradar: units must be \"threads\" or \"tasks\"")
  end
  if type(user.virtual_text) == "table" then
    local vt = user.virtual_text
    if vt.position ~= nil and vt.position ~= "eol" and vt.position ~= "right_align" and vt.position ~= "above" then
      error("threadradar: virtual_text.position must be \"eol\", \"right_align\" or \"above\"")
    end
    if vt.label ~= nil and vt.label ~= "full" and vt.label ~= "crt" and vt.label ~= "glyph" then
      error("threadradar: virtual_text.label must be \"full\", \"crt\" or \"glyph\"")
    end
  end
  if user.cmd ~= nil and (#user.cmd == 0 or type(user.cmd[1]) ~= "string") then
    error("threadradar: cmd must be a non-empty list of strings")
  end
  if user.record_command ~= nil then
    local words = M.command_words(user.record_command)
    if not words then
      error("threadradar: record_command must be a command line or a non-empty list of strings, e.g. { \"python3\", \"app.py\" }")
    end
  end
  local merged = vim.tbl_deep_extend("force", vim.deepcopy(M.defaults), user)
  -- Lists are replaced, not merged.
  for _, k in ipairs({ "cmd", "filetypes", "root_markers", "record_command" }) do
    if user[k] ~= nil then
      merged[k] = vim.deepcopy(user[k])
    end
  end
  return merged
end

function M.set(opts)
  M.options = opts
end

--- The server command line.
function M.cmd()
  local o = M.options
  if o.cmd then
    return vim.deepcopy(o.cmd)
  end
  return { M.binary(), "lsp" }
end

--- The server binary (for `serve`, `radar` and the health check): `cmd[1]`, a server_path with
--- a directory as it is, and a bare name (the default `threadradar`) beside the project's Python
--- interpreter (pip install threadradar) or on PATH (threadradar.locate); unfound, the name.
function M.binary()
  local o = M.options
  if o.cmd then
    return o.cmd[1]
  end
  if o.server_path:find("/", 1, true) then
    return o.server_path
  end
  local found = require("threadradar.locate").find_here(o.server_path)
  return found and found.path or o.server_path
end

--- Virtual text options as a table.
function M.virtual_text()
  local vt = M.options.virtual_text
  if not vt then
    return nil
  end
  if vt == true then
    vt = {}
  end
  return { position = vt.position or "eol", label = vt.label or "full" }
end

--- A command (record_command) as the server takes it: a non-empty list of strings (copied), or a
--- command line, which the server splits (threadRadar/splitCommand's rules: quotes keep blanks).
--- nil when it is empty or not made of strings.
function M.command_words(cmd)
  if type(cmd) == "string" then
    return vim.trim(cmd) ~= "" and cmd or nil
  end
  if type(cmd) ~= "table" or #cmd == 0 then
    return nil
  end
  for _, w in ipairs(cmd) do
    if type(w) ~= "string" then
      return nil
    end
  end
  return vim.deepcopy(cmd)
end

--- initializationOptions for the server.
function M.server_settings()
  local o = M.options
  local s = vim.deepcopy(o.settings or {})
  s.notifyChanges = true
  s.panels = true
  if s.annotations == nil then
    s.annotations = o.annotations
  end
  if s.units == nil then
    s.units = o.units
  end
  if o.record_command ~= nil then
    s.recordCommand = M.command_words(o.record_command)
  end
  if o.record_subprocesses ~= nil then
    s.recordSubprocesses = o.record_subprocesses
  end
  if o["repeat"] ~= nil then
    s["repeat"] = o["repeat"]
  end
  return s
end

return M
