-- Shared by the test scripts (run by tests/run.sh in `nvim --headless -u NONE`).
local H = {}

H.failures = {}
H.checks = 0

local api = vim.api

function H.env(name)
  local v = os.getenv(name)
  if not v or v == "" then
    error("the environment variable " .. name .. " is not set (run tests/run.sh)")
  end
  return v
end

function H.log(msg)
  io.stdout:write("  " .. msg .. "\n")
end

function H.fail(msg)
  table.insert(H.failures, msg)
  io.stderr:write("  FAIL: " .. msg .. "\n")
end

function H.check(cond, msg)
  H.checks = H.checks + 1
  if not cond then
    H.fail(msg)
  end
  return cond
end

function H.eq(got, want, msg)
  H.checks = H.checks + 1
  if not vim.deep_equal(got, want) then
    H.fail(("%s: expected %s, got %s"):format(msg, vim.inspect(want), vim.inspect(got)))
    return false
  end
  return true
end

--- Waits for pred (processing events); a timeout is a failure.
function H.wait(ms, pred, what)
  local ok = vim.wait(ms, function()
    local good, res = pcall(pred)
    return good and res
  end, 20)
  if not ok then
    H.fail("timed out waiting for " .. what)
  end
  return ok
end

function H.read_json(path)
  return vim.fn.json_decode(table.concat(vim.fn.readfile(path), "\n"))
end

--- A run file's meta, processes and threads, as `threadradar info --json` reads them (run files
--- of format 2 are JSON lines, read by the binary, not by the test).
function H.run_info(path)
  return vim.fn.json_decode(vim.fn.system({ H.env("TR_BIN"), "info", "--json", path }))
end

--- An expected-figures file written by run.sh (`threadradar report --json …`).
function H.expect(name)
  return H.read_json(H.env("TR_EXPECT") .. "/" .. name .. ".json")
end

--- Loads the plugin as a user would, without a config file: filetype detection, the plugin
--- file, then setup{} with the server under test.
function H.setup(opts)
  vim.cmd("filetype on")
  vim.cmd("runtime plugin/threadradar.lua")
  opts = opts or {}
  if opts.server_path == nil and opts.cmd == nil then
    opts.server_path = H.env("TR_BIN")
  end
  return require("threadradar").setup(opts)
end

H.ns = api.nvim_create_namespace("threadradar")

--- Extmarks of the threadradar namespace: { row0 → virt_text as a string }.
function H.marks(bufnr)
  local out = {}
  for _, m in ipairs(api.nvim_buf_get_extmarks(bufnr or 0, H.ns, 0, -1, { details = true })) do
    local text = {}
    for _, chunk in ipairs(m[4].virt_text or {}) do
      table.insert(text, chunk[1])
    end
    out[m[2]] = table.concat(text)
  end
  return out
end

function H.count(t)
  local n = 0
  for _ in pairs(t) do
    n = n + 1
  end
  return n
end

function H.sample_file()
  return H.env("TR_WS") .. "/bug1_worker_manager/buggy.py"
end

--- Opens the sample and waits for its radars.
function H.open_sample()
  vim.cmd("edit " .. vim.fn.fnameescape(H.sample_file()))
  H.wait(15000, function()
    return H.count(H.marks(0)) > 0
  end, "the radars' extmarks in buggy.py")
end

--- Profiled declarations of `file` that the server annotates: functions and classes of the
--- reports with crt ≥ minCrt (0.1 %), not the module itself. { recorded line → artifact }.
function H.expected_declarations(run, file)
  local out = {}
  for _, level in ipairs({ "function", "class" }) do
    for _, a in ipairs(H.expect(run .. "-" .. level).artifacts) do
      if a.file == file and a.line > 0 and a.qualname ~= "<module>" and a.crt * 100 >= 0.1 then
        out[a.line] = a
      end
    end
  end
  return out
end

function H.pct(x)
  return string.format("%.1f%%", x * 100)
end

function H.lines(bufnr)
  return api.nvim_buf_get_lines(bufnr or 0, 0, -1, false)
end

--- Feeds keys as typed (mappings apply) and runs them now.
function H.feed(keys)
  api.nvim_feedkeys(api.nvim_replace_termcodes(keys, true, false, true), "x", false)
end

--- Records vim.notify calls; returns the list.
function H.capture_notifications()
  local list = {}
  local original = vim.notify
  vim.notify = function(msg, level, opts)
    table.insert(list, { msg = msg, level = level })
    return original(msg, level, opts)
  end
  return list
end

--- The plugin's code lenses drawn in a buffer: { row0 → text of the virtual line }.
function H.lens_lines(bufnr)
  local ns = api.nvim_create_namespace("threadradar_lens")
  local out = {}
  for _, m in ipairs(api.nvim_buf_get_extmarks(bufnr or 0, ns, 0, -1, { details = true })) do
    local parts = {}
    for _, line in ipairs(m[4].virt_lines or {}) do
      for _, chunk in ipairs(line) do
        table.insert(parts, chunk[1])
      end
    end
    out[m[2]] = vim.trim(table.concat(parts))
  end
  return out
end

--- Extmarks Neovim's own code lens display drew (its namespaces `nvim.lsp.codelens:<client>`,
--- `vim_lsp_codelens:<client>` before 0.11) in a buffer: a list of { row, text }.
function H.builtin_lens_marks(bufnr)
  local out = {}
  for name, ns in pairs(api.nvim_get_namespaces()) do
    if name:find("codelens", 1, true) and name ~= "threadradar_lens" then
      for _, m in ipairs(api.nvim_buf_get_extmarks(bufnr or 0, ns, 0, -1, { details = true })) do
        local parts = {}
        for _, chunk in ipairs(m[4].virt_text or {}) do
          table.insert(parts, chunk[1])
        end
        table.insert(out, { row = m[2], text = table.concat(parts) })
      end
    end
  end
  return out
end

--- Runs a test body with a global timeout and exits: 0 when every check passed.
function H.run(name, body, timeout_ms)
  local timer = vim.loop.new_timer()
  timer:start(timeout_ms or 60000, 0, function()
    io.stderr:write("  FAIL: " .. name .. ": global timeout\n")
    os.exit(1)
  end)
  local ok, err = xpcall(body, debug.traceback)
  if not ok then
    H.fail("error: " .. tostring(err))
  end
  timer:stop()
  timer:close()
  pcall(function()
    require("threadradar.lsp").stop_all()
    require("threadradar.open").stop_all()
  end)
  vim.wait(300, function()
    return false
  end)
  if #H.failures == 0 then
    io.stdout:write(("\n  %d checks passed\n"):format(H.checks))
    vim.cmd("qa!")
  else
    io.stderr:write(("\n  %d failure(s) in %d checks\n"):format(#H.failures, H.checks))
    vim.cmd("cquit 1")
  end
end

return H
