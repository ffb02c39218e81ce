-- ThreadRadar for Neovim: per-function thread radars from `threadradar lsp`.
local config = require("threadradar.config")
local util = require("threadradar.util")

local api = vim.api
local M = {}

local did_setup = false

-- name → default link. `default` links keep a colour scheme's own definitions.
M.highlights = {
  ThreadRadarLow = "DiagnosticInfo",
  ThreadRadarMid = "DiagnosticWarn",
  ThreadRadarHigh = "DiagnosticError",
  ThreadRadarText = "Comment",
  ThreadRadarLens = "LspCodeLens", -- Comment where there is no LspCodeLens
  ThreadRadarTitle = "Title",
  ThreadRadarTimelineHit = "IncSearch", -- the selected artifact's cells in :ThreadRadarTimeline
  ThreadRadarSection = "Statement",
  ThreadRadarKey = "Special",
  ThreadRadarPath = "Directory",
  ThreadRadarExcluded = "NonText",
  ThreadRadarIncrease = "ThreadRadarHigh",
  ThreadRadarDecrease = "DiagnosticOk", -- String where there is no DiagnosticOk (Neovim < 0.10)
}

function M.define_highlights()
  for name, link in pairs(M.highlights) do
    if link == "DiagnosticOk" and vim.fn.hlexists("DiagnosticOk") == 0 then
      link = "String"
    elseif link == "LspCodeLens" and vim.fn.hlexists("LspCodeLens") == 0 then
      link = "Comment"
    end
    vim.cmd(("highlight default link %s %s"):format(name, link))
  end
end

local function attach_loaded_buffers()
  local fts = {}
  for _, ft in ipairs(config.options.filetypes) do
    fts[ft] = true
  end
  for _, bufnr in ipairs(api.nvim_list_bufs()) do
    if api.nvim_buf_is_loaded(bufnr) and fts[vim.bo[bufnr].filetype] then
      require("threadradar.lsp").attach(bufnr)
    end
  end
end

--- require("threadradar").setup{…}: see :help threadradar-setup.
function M.setup(opts)
  local ok, merged = pcall(config.build, opts)
  if not ok then
    local msg = tostring(merged):gsub("^[^\n]-:%d+: ", ""):gsub("^threadradar: ", "")
    util.error("invalid setup option: " .. msg)
    return false
  end
  config.set(merged)
  M.define_highlights()
  local group = api.nvim_create_augroup("ThreadRadar", { clear = true })
  api.nvim_create_autocmd("ColorScheme", { group = group, callback = M.define_highlights })
  api.nvim_create_autocmd("FileType", {
    group = group,
    pattern = merged.filetypes,
    callback = function(args)
      require("threadradar.lsp").attach(args.buf)
    end,
  })
  api.nvim_create_autocmd("BufWritePost", {
    group = group,
    pattern = { "pyproject.toml", "threadradar.toml" },
    callback = function(args)
      require("threadradar.lsp").config_saved(api.nvim_buf_get_name(args.buf))
    end,
  })
  api.nvim_create_autocmd("VimLeavePre", {
    group = group,
    callback = function()
      require("threadradar.open").stop_all()
      require("threadradar.image").clear_all()
    end,
  })
  local lsp = require("threadradar.lsp")
  -- The "▶ Profile" lenses' command asks once per workspace before a test runs (issue 19).
  require("threadradar.record")
  if did_setup then
    -- A second setup: running servers take the new settings at once.
    local seen = {}
    for _, bufnr in ipairs(api.nvim_list_bufs()) do
      local client = lsp.client_of_buffer(bufnr)
      if client and not seen[client.id] then
        seen[client.id] = true
        lsp.notify(client, "workspace/didChangeConfiguration", { settings = config.server_settings() })
        lsp.emit_change(client.id, { reason = "settings" })
      end
    end
  end
  did_setup = true
  if lsp.server_available() then
    attach_loaded_buffers()
  end
  return true
end

function M.is_setup()
  return did_setup
end

--- A short text for status lines (see :help threadradar-status): "ThreadRadar: recording
--- pytest… 12s", "ThreadRadar: <run name>", "ThreadRadar: no run", or "" without a server.
function M.status(bufnr)
  if not did_setup then
    return ""
  end
  return require("threadradar.record").status(bufnr)
end

local function ensure_setup()
  if did_setup then
    return true
  end
  if vim.g.threadradar_auto_setup then
    return M.setup({})
  end
  util.warn("call require(\"threadradar\").setup{} first (see :help threadradar-setup).")
  return false
end

--- The user commands (plugin/threadradar.lua) land here.
function M.command(name, args)
  if not ensure_setup() then
    return
  end
  args = args or {}
  if name == "overview" then
    require("threadradar.overview").open({ only_current = args.bang })
  elseif name == "detail" then
    local arg = args.args ~= "" and args.args or nil
    require("threadradar.detail").open({ artifact = arg })
  elseif name == "timeline" then
    local arg = vim.trim(args.args or "")
    require("threadradar.timeline").open({ browser = arg == "browser", artifact = (arg ~= "" and arg ~= "browser") and arg or nil })
  elseif name == "sections" then
    require("threadradar.sections").command(args.args or "")
  elseif name == "waits" then
    require("threadradar.waits").command(args.args or "")
  elseif name == "runs" then
    require("threadradar.runs").select()
  elseif name == "delete_run" then
    require("threadradar.runs").delete()
  elseif name == "open" then
    require("threadradar.open").open()
  elseif name == "views" then
    require("threadradar.views").open()
  elseif name == "hottest" then
    require("threadradar.runs").hottest(args.args ~= "" and args.args or "function")
  elseif name == "record" then
    require("threadradar.record").record(args.args or "", args.count)
  elseif name == "stop" then
    require("threadradar.record").stop()
  elseif name == "record_log" then
    require("threadradar.record").open_log()
  elseif name == "compare" then
    require("threadradar.compare").command(args.args or "")
  elseif name == "trace_compare" then
    require("threadradar.tracecompare").command(args.args or "")
  elseif name == "clear_filter" then
    require("threadradar.runs").clear_filter()
  elseif name == "refresh" then
    local lsp = require("threadradar.lsp")
    local client = lsp.require_client()
    if client then
      lsp.emit_change(client.id, { reason = "refresh" })
    end
  elseif name == "toggle" then
    local vt = config.options.virtual_text
    config.options.virtual_text = not vt and true or false
    local lsp = require("threadradar.lsp")
    for _, bufnr in ipairs(api.nvim_list_bufs()) do
      local client = lsp.client_of_buffer(bufnr)
      if client then
        require("threadradar.virtual_text").refresh(bufnr)
      end
    end
  end
end

return M
