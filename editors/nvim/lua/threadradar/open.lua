-- :ThreadRadarOpen: the full web panels of the active run through `threadradar serve --port 0`,
-- opened in the browser; the servers stop when Neovim exits.
local config = require("threadradar.config")
local lsp = require("threadradar.lsp")
local util = require("threadradar.util")

local M = {}

local servers = {} -- run path → { job, url }

--- Opens a URL with open_cmd, vim.ui.open (0.10+), $BROWSER, xdg-open or open.
function M.open_url(url)
  local cmd = config.options.open_cmd
  if type(cmd) == "function" then
    return cmd(url)
  end
  if type(cmd) == "string" then
    cmd = { cmd }
  end
  if not cmd and vim.ui.open then
    local ok = pcall(vim.ui.open, url)
    if ok then
      return
    end
  end
  if not cmd then
    local browser = vim.env.BROWSER
    for _, c in ipairs({ browser, "xdg-open", "open" }) do
      if c and c ~= "" and vim.fn.executable(c) == 1 then
        cmd = { c }
        break
      end
    end
  end
  if not cmd then
    util.notify("open " .. url .. " in a browser (no opener found; set open_cmd).")
    return
  end
  local argv = vim.deepcopy(cmd)
  table.insert(argv, url)
  local ok, job = pcall(vim.fn.jobstart, argv, { detach = true })
  if not ok or job <= 0 then
    util.warn("could not run " .. argv[1] .. "; open " .. url .. " yourself.")
  end
end

--- Starts (or reuses) the panel server of `run`; cb(url).
function M.serve(run, cb)
  local s = servers[run]
  if s and s.url then
    return cb(s.url)
  end
  if s then
    table.insert(s.waiting, cb)
    return
  end
  local bin = config.binary()
  s = { waiting = { cb }, stderr = {} }
  servers[run] = s
  local ok, job = pcall(vim.fn.jobstart, { bin, "serve", run, "--port", "0" }, {
    on_stdout = function(_, data)
      for _, line in ipairs(data or {}) do
        local url = line:match("(http://127%.0%.0%.1:%d+/?)")
        if url and not s.url then
          s.url = url
          local waiting = s.waiting
          s.waiting = {}
          for _, fn in ipairs(waiting) do
            fn(url)
          end
        end
      end
    end,
    on_stderr = function(_, data)
      for _, line in ipairs(data or {}) do
        if line ~= "" then
          table.insert(s.stderr, line)
        end
      end
    end,
    on_exit = function(_, code)
      if servers[run] == s then
        servers[run] = nil
      end
      if code ~= 0 and not s.stopping then
        local why = s.stderr[#s.stderr] or ("exit code " .. code)
        util.warn("the panel server stopped: " .. why)
      end
    end,
  })
  if not ok or job <= 0 then
    servers[run] = nil
    util.error("could not start `" .. bin .. " serve`.")
    return
  end
  s.job = job
end

function M.open()
  local client = lsp.require_client()
  if not client then
    return
  end
  M.panel(client, "panels", "")
end

--- Percent-encodes `s` (a string or number) for a URL's query.
function M.url_encode(s)
  return (tostring(s):gsub("[^%w%-%._~]", function(c)
    return ("%%%02X"):format(c:byte())
  end))
end

--- Serves the active run (`threadradar serve`) and opens its panels in the browser, at `query`
--- ("?view=…", or "" for the panels' start); `what` names the page in the message.
function M.panel(client, what, query)
  lsp.request(client, "threadRadar/runs", util.empty_object(), function(res)
    if not res or not res.active then
      util.warn("there is no run to show: record one with `threadradar record -- python3 your_program.py`.")
      return
    end
    M.serve(res.active, function(url)
      local target = url
      if query ~= "" then
        target = (url:sub(-1) == "/" and url or (url .. "/")) .. query
      end
      util.notify(what .. " of " .. vim.fn.fnamemodify(res.active, ":t") .. " at " .. target)
      M.open_url(target)
    end)
  end)
end

--- The running panel servers: { [run] = url } (for tests and the health check).
function M.running()
  local list = {}
  for run, s in pairs(servers) do
    list[run] = s.url or false
  end
  return list
end

function M.stop_all()
  for _, s in pairs(servers) do
    s.stopping = true
    if s.job then
      pcall(vim.fn.jobstop, s.job)
    end
  end
  servers = {}
end

return M
