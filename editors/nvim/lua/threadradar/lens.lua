-- Code lenses: Neovim's own code-lens display, refreshed on attach, on entering the buffer,
-- after insert mode and whenever the run or the thread filter changes (Neovim 0.7 has no
-- workspace/codeLens/refresh).
local config = require("threadradar.config")
local lsp = require("threadradar.lsp")

local api = vim.api
local M = {}

local group = api.nvim_create_augroup("ThreadRadarLens", { clear = true })
local attached = {}

local function lens_namespace(client_id)
  -- The namespace Neovim 0.7's codelens module draws a client's lenses in (0.9+ has clear()).
  return api.nvim_create_namespace("vim_lsp_codelens:" .. client_id)
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
  lsp.request(client, "textDocument/codeLens", params, function(result, ctx)
    if not api.nvim_buf_is_valid(bufnr) then
      return
    end
    ctx = ctx or {}
    ctx.bufnr, ctx.client_id = bufnr, client.id
    result = result or {}
    if #result == 0 then
      -- Neovim 0.7 leaves old lenses drawn when the answer is empty.
      if vim.lsp.codelens.clear then
        pcall(vim.lsp.codelens.clear, client.id, bufnr)
      else
        api.nvim_buf_clear_namespace(bufnr, lens_namespace(client.id), 0, -1)
      end
    end
    vim.lsp.codelens.on_codelens(nil, result, ctx, nil)
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
