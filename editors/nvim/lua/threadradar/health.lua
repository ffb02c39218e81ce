-- :checkhealth threadradar
local config = require("threadradar.config")

local M = {}

-- vim.health.start/ok/… (0.10+), vim.health.report_* (0.8, 0.9), require("health") (0.7).
local function reporter()
  local h = vim.health
  if h and h.start then
    return { start = h.start, ok = h.ok, warn = h.warn, error = h.error, info = h.info }
  end
  if not (h and h.report_start) then
    h = require("health")
  end
  return { start = h.report_start, ok = h.report_ok, warn = h.report_warn, error = h.report_error, info = h.report_info }
end

local function version_text()
  local v = vim.version and vim.version()
  if type(v) == "table" and v.major then
    return ("%d.%d.%d"):format(v.major, v.minor, v.patch)
  end
  return vim.fn.matchstr(vim.fn.execute("version"), "NVIM v\\zs[^\\n]*")
end

--- The Neovim features the plugin looks for, whether this Neovim has them and what it does
--- with them or without them.
function M.features()
  local has = function(v)
    return vim.fn.has("nvim-" .. v) == 1
  end
  local opts = config.options
  return {
    {
      name = "virtual lines (virt_lines_above)",
      since = "0.6",
      available = has("0.6"),
      use = "code lenses on their own line above each declaration",
      fallback = "no code lenses",
    },
    {
      name = "vim.lsp.start",
      since = "0.8",
      available = vim.lsp.start ~= nil,
      use = "one server per project root, reused by every buffer",
      fallback = "vim.lsp.start_client and buf_attach_client",
    },
    {
      name = "vim.lsp.inlay_hint",
      since = "0.10",
      available = vim.lsp.inlay_hint ~= nil,
      use = "the server's inlay hints natively " .. (opts.native_inlay_hints and "(on)" or "(off: native_inlay_hints = true; the virtual text shows the same figures)"),
      fallback = "the radar's virtual text carries the figures",
    },
    {
      name = "vim.lsp.codelens.save / run",
      since = "0.7",
      available = vim.lsp.codelens ~= nil and vim.lsp.codelens.save ~= nil,
      use = "the lens on the cursor's line runs with vim.lsp.codelens.run()",
      fallback = "lenses are shown but not runnable from vim.lsp.codelens.run()",
    },
    {
      name = "vim.base64",
      since = "0.10",
      available = vim.base64 ~= nil,
      use = "encodes the kitty graphics escapes",
      fallback = "a Lua base64 encoder",
    },
  }
end

local report_of = { ok = "ok", warn = "warn", error = "error" }

--- `threadradar doctor --json` in the current directory: each check as OK, WARNING or ERROR, a
--- problem with its next step as the advice.
function M.doctor(r, bin)
  r.start("ThreadRadar: doctor (what this machine allows)")
  local out = vim.fn.system({ bin, "doctor", "--json" })
  local ok, doc = pcall(vim.fn.json_decode, out)
  if not ok or type(doc) ~= "table" or type(doc.checks) ~= "table" then
    r.warn(("`%s doctor --json` gave no report: %s"):format(bin, (out:gsub("%s+$", ""):sub(1, 200))), {
      "update the threadradar binary (doctor is new in 0.1): `pip install -U threadradar`",
    })
    return
  end
  for _, c in ipairs(doc.checks) do
    local f = r[report_of[c.status] or "info"]
    local advice = c.next and c.next ~= vim.NIL and { c.next } or nil
    f(c.id .. ": " .. c.summary, advice)
  end
end

function M.check()
  local r = reporter()
  local tr = require("threadradar")
  local opts = config.options

  r.start("ThreadRadar: Neovim")
  if vim.fn.has("nvim-0.7") == 1 then
    r.ok("Neovim " .. version_text())
  else
    r.error("Neovim " .. version_text() .. " is too old: ThreadRadar needs 0.7 or newer")
  end
  if tr.is_setup() then
    r.ok('setup() was called')
  else
    r.warn('setup() was not called', { 'add require("threadradar").setup{} to your config' })
  end
  r.info("virtual text: " .. (opts.virtual_text and "on" or "off") .. ", code lenses: " .. (opts.code_lens and "on" or "off"))

  -- What this Neovim offers and what the plugin uses of it.
  r.start("ThreadRadar: Neovim " .. version_text() .. " features")
  for _, f in ipairs(M.features()) do
    if f.available then
      r.ok(f.name .. ": " .. f.use)
    else
      r.info(f.name .. ": not in this Neovim (" .. f.since .. "+); " .. f.fallback)
    end
  end
  local image = require("threadradar.image")
  local term = image.terminal()
  if opts.image then
    if term then
      r.ok("glyph images: on, " .. term .. " speaks the kitty graphics protocol (PNG from the server)")
    else
      r.warn("glyph images: on, but this terminal is not kitty, WezTerm or Ghostty; the text glyph is shown")
    end
  else
    r.info("glyph images: off" .. (term and (" (" .. term .. " could show them: setup{ image = true })") or ""))
  end

  r.start("ThreadRadar: language server")
  local opts_bin = opts.cmd and opts.cmd[1] or opts.server_path
  local path, source = "", nil
  if opts.cmd or opts_bin:find("/", 1, true) then
    path = vim.fn.exepath(opts_bin)
    source = opts.cmd and "setup{ cmd }" or "setup{ server_path }"
  else
    local found, tried = require("threadradar.locate").find_here(opts_bin)
    if found then
      path, source = found.path, found.source
    end
    r.info("looked for the server in: " .. table.concat(tried, ", "))
  end
  if path == "" then
    r.error(("server not found: `%s` is not executable"):format(opts_bin), {
      "install it into the project's Python environment: `pip install threadradar` (from a ThreadRadar checkout: `pip install .`)",
      "or build and install it: `cargo install --path .` in the ThreadRadar repository",
      "or point setup{ server_path = \"/path/to/threadradar\" } at the binary",
    })
  else
    local out = vim.fn.system({ path, "--version" })
    if vim.v.shell_error == 0 then
      r.ok(("server found: %s (%s), from %s"):format(path, (out:gsub("%s+$", "")), source))
      M.doctor(r, path)
    else
      r.error(("server found at %s but `--version` failed: %s"):format(path, (out:gsub("%s+$", ""))))
    end
  end
  r.start("ThreadRadar: language server (running)")
  local running = 0
  local get = vim.lsp.get_clients or vim.lsp.get_active_clients
  for _, c in pairs(get()) do
    if c.name == "threadradar" then
      running = running + 1
      r.info(("server running for %s (client %d)"):format(c.config.root_dir or "?", c.id))
    end
  end
  if running == 0 then
    r.info("no server running (it starts with the first Python buffer)")
  end

  r.start("ThreadRadar: recording")
  local lsp = require("threadradar.lsp")
  for _, c in ipairs(lsp.all_clients()) do
    local where = c.config and c.config.root_dir or "?"
    if lsp.supports(c, "threadradar.record") then
      r.ok(("the server records from the editor (:ThreadRadarRecord) for %s"):format(where))
    elseif c.initialized or c.server_capabilities then
      r.warn(("the server for %s cannot record from the editor (no threadradar.record)"):format(where), {
        "update the threadradar binary, or record in a terminal: `threadradar record -- python3 app.py`",
      })
    end
    if lsp.supports(c, "threadRadar/compare") then
      r.ok(("the server compares runs (:ThreadRadarCompare) for %s"):format(where))
    end
  end
  local root = require("threadradar.lsp").find_root(vim.fn.getcwd())
  -- The interpreter ▶ Profile, :ThreadRadarRecord without arguments and `%` use.
  local py = require("threadradar.locate").python_here(root)
  if vim.fn.executable(py.python) == 1 then
    local where = py.path and (py.python .. " = " .. py.path) or py.python
    r.ok(("Python: %s (%s): ▶ Profile and :ThreadRadarRecord run it"):format(where, py.source))
  else
    r.warn(("no Python interpreter found (%s: %s)"):format(py.source, py.python), {
      "set [tool.threadradar] python = \"/path/to/python\" in pyproject.toml, or create the project's .venv",
    })
  end
  local words = opts.record_command ~= nil and config.command_words(opts.record_command) or nil
  local shown = type(words) == "string" and words or (words and table.concat(words, " "))
  r.info("recorded without arguments: " .. (shown or (py.python .. " -m pytest")))
  local runs = vim.fn.glob(root .. "/.threadradar/runs/*.json", true, true)
  if #runs > 0 then
    r.ok(("%d run(s) in %s/.threadradar/runs"):format(#runs, root))
  else
    r.warn(("no runs in %s/.threadradar/runs"):format(root), {
      "record one in the project directory: `threadradar record -- python3 your_program.py`",
    })
  end
end

return M
