-- (annotations) The `annotations` option reaches the server as its `annotations` setting, in
-- initializationOptions and again after a second setup() (workspace/didChangeConfiguration),
-- and the server annotates accordingly: "glyph" keeps the radar and drops the figures' code
-- lenses and inlay hints; "all" has them.
-- The server's part (lsp-server's `annotations` setting) is the VS Code items' (issue 32): this
-- test passes once it is merged.
local H = dofile(os.getenv("TR_TESTS") .. "/helpers.lua")
local api = vim.api

local function figure_lenses(bufnr)
  local n = 0
  for _, text in pairs(H.lens_lines(bufnr)) do
    if text:find("ThreadRadar ", 1, true) then
      n = n + 1
    end
  end
  return n
end

H.run("annotations", function()
  H.setup({ annotations = "glyph" })
  H.open_sample()
  local lsp = require("threadradar.lsp")
  local client = lsp.client_for(0)
  H.eq(client.config.init_options.annotations, "glyph", "initializationOptions carry annotations")
  local buf = api.nvim_get_current_buf()
  local hints
  local params = { textDocument = { uri = vim.uri_from_bufnr(buf) }, range = { start = { line = 0, character = 0 }, ["end"] = { line = api.nvim_buf_line_count(buf), character = 0 } } }
  lsp.request(client, "textDocument/inlayHint", params, function(res)
    hints = res or {}
  end)
  H.wait(10000, function()
    return hints ~= nil
  end, "the inlay hints")
  H.eq(#hints, 0, "glyph: no inlay hints")
  vim.wait(500, function()
    return false
  end)
  H.eq(figure_lenses(buf), 0, "glyph: no figures lens")
  H.check(H.count(H.marks(buf)) > 0, "glyph: the radars are drawn")

  require("threadradar").setup({ annotations = "all" })
  H.wait(10000, function()
    return figure_lenses(buf) > 0
  end, "all: the figures lenses after setup{ annotations = \"all\" }")
end)
