-- Code lenses on their own line, above their declaration (virt_lines_above), never appended to
-- the radar's virtual text at the end of the line (where Neovim up to 0.11 draws lenses). The
-- lenses are also saved with vim.lsp.codelens.save, so vim.lsp.codelens.run() runs the one on the
-- cursor's line. Refreshed on attach, on entering the buffer, after insert mode and whenever the
-- run or the thread filter changes (Neovim 0.7 has no workspace/codeLens/refresh).
--
-- Lenses are drawn one way only: vim.lsp.codelens.run() (and vim.lsp.codelens.refresh(), which
-- users call from autocommands) asks every server again and draws the answers with
-- vim.lsp.codelens.display; for this plugin's servers that display draws ours instead (above the
-- line), so no lens shows twice.
local config = require("threadradar.config")
local lsp = require("threadradar.lsp")

local api = vim.api
local M = {}

M.ns = api.nvim_create_namespace("threadradar_lens")

local group = api.nvim_create_augroup("ThreadRadarLens", { clear = true })
local attached = {}

--- Draws lenses (LSP CodeLens[] with commands) as virtual lines above their lines, indented like
--- the line; several lenses on one line share it, separated by " | ".
function M.draw(bufnr, lenses)
  api.nvim_buf_clear_namespace(bufnr, M.ns, 0, -1)
  local count = api.nvim_buf_line_count(bufnr)
  local titles, rows = {}, {}
  for _, l in ipairs(lenses or {}) do
    local row = l.range and l.range.start and l.range.start.line
    local title = l.command and l.command.title
    if type(row) == "number" and row >= 0 and row < count and type(title) == "string" and title ~= "" then
      if not titles[row] then
        titles[row] = {}
        table.insert(rows, row)
      end
      table.insert(titles[row], (title:gsub("[\r\n]+", " ")))
    end
  end
  for _, row in ipairs(rows) do
    local text = api.nvim_buf_get_lines(bufnr, row, row + 1, false)[1] or ""
    local indent = vim.fn.strdisplaywidth(text:match("^%s*"))
    pcall(api.nvim_buf_set_extmark, bufnr, M.ns, row, 0, {
      virt_lines = { { { string.rep(" ", indent) .. table.concat(titles[row], " | "), "ThreadRadarLens" } } },
      virt_lines_above = true,
    })
  end
end

local function ours(client_id)
  local client = vim.lsp.get_client_by_id(client_id)
  return client ~= nil and client.name == lsp.name
end

-- Neovim's display of lenses, kept for every other server.
local builtin_display = vim.lsp.codelens.display
if builtin_display and not vim.lsp.codelens.threadradar_display then
  vim.lsp.codelens.display = function(lenses, bufnr, client_id)
    if ours(client_id) then
      if config.options.code_lens and api.nvim_buf_is_loaded(bufnr) then
        M.draw(bufnr, lenses or {})
      end
      return
    end
    return builtin_display(lenses, bufnr, client_id)
  end
  vim.lsp.codelens.threadradar_display = true
end

local function save(lenses, bufnr, client_id)
  if vim.lsp.codelens.save then
    pcall(vim.lsp.codelens.save, lenses, bufnr, client_id)
  end
end

function M.refresh(bufnr)
  if not config.options.code_lens or not api.nvim_buf_is_valid(bufnr) then
    return
  end
  local client = lsp.client_of_buffer(bufnr)
  if not client then
    return
  end
  local params = { textDocument = { uri = vim.uri_from_bufnr(bufnr) } }
  lsp.request(client, "textDocument/codeLens", params, function(result)
    if not api.nvim_buf_is_valid(bufnr) then
      return
    end
    result = result or {}
    save(result, bufnr, client.id)
    M.draw(bufnr, result)
  end, { silent = true, bufnr = bufnr })
end

function M.attach(client_id, bufnr)
  if not config.options.code_lens then
    return
  end
  if not attached[bufnr] then
    attached[bufnr] = true
    api.nvim_create_autocmd({ "BufEnter", "InsertLeave" }, {
      group = group,
      buffer = bufnr,
      callback = function()
        M.refresh(bufnr)
      end,
    })
    api.nvim_create_autocmd({ "BufUnload", "BufWipeout" }, {
      group = group,
      buffer = bufnr,
      callback = function()
        attached[bufnr] = nil
        pcall(api.nvim_clear_autocmds, { group = group, buffer = bufnr })
        pcall(api.nvim_buf_clear_namespace, bufnr, M.ns, 0, -1)
      end,
    })
  end
  M.refresh(bufnr)
end

lsp.on_change(function(client_id, change)
  if not lsp.changes_view(change) then
    return
  end
  for _, bufnr in ipairs(lsp.buffers(client_id)) do
    M.refresh(bufnr)
  end
end)

return M
