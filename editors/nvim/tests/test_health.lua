-- (4) :checkhealth threadradar reports the server found (OK) with its version, and the runs.
local H = dofile(os.getenv("TR_TESTS") .. "/helpers.lua")

H.run("health", function()
  H.setup()
  H.open_sample()
  vim.cmd("checkhealth threadradar")
  local text = table.concat(H.lines(0), "\n")
  local version = vim.fn.system({ H.env("TR_BIN"), "--version" }):gsub("%s+$", "")
  H.check(text:find("OK:? server found: " .. vim.pesc(vim.fn.exepath(H.env("TR_BIN")))) ~= nil, "OK server found:\n" .. text)
  H.check(text:find(version, 1, true) ~= nil, "the server's version")
  H.check(text:find("OK:? setup%(%) was called") ~= nil, "setup called")
  local runs = #vim.fn.glob(H.env("TR_WS") .. "/.threadradar/runs/*.json", true, true)
  H.check(text:find("OK:? " .. runs .. " run%(s%) in") ~= nil, ("the %d runs"):format(runs))
  H.check(text:find("OK:? the server records from the editor") ~= nil, "recording supported")
  H.check(text:find("server running for", 1, true) ~= nil, "the running server")
  H.check(text:find("ERROR", 1, true) == nil, "no error")
  -- The Neovim version's feature set: what it has is OK, what it lacks says since when.
  local v = vim.version()
  H.check(text:find(("ThreadRadar: Neovim %d.%d.%d features"):format(v.major, v.minor, v.patch), 1, true) ~= nil, "the features section names the version")
  local hints_ok = text:find("OK:? vim.lsp.inlay_hint:") ~= nil
  H.eq(hints_ok, vim.fn.has("nvim-0.10") == 1, "native inlay hints reported as available exactly on 0.10+")
  if vim.fn.has("nvim-0.10") == 0 then
    H.check(text:find("vim.lsp.inlay_hint: not in this Neovim (0.10+)", 1, true) ~= nil, "the missing feature and since when")
  end
  H.check(text:find("OK:? virtual lines %(virt_lines_above%)") ~= nil, "virtual lines for the lenses")
  H.check(text:find("glyph images: off", 1, true) ~= nil, "images off by default")
end)
