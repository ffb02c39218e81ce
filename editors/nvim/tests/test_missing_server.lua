-- Without the server: setup() notifies once with the install command, opening Python files
-- raises no error, commands say what is missing, and the health check reports the error.
local H = dofile(os.getenv("TR_TESTS") .. "/helpers.lua")

H.run("missing server", function()
  local notes = H.capture_notifications()
  H.setup({ server_path = "/nonexistent/threadradar" })
  vim.cmd("edit " .. vim.fn.fnameescape(H.sample_file()))
  vim.cmd("edit " .. vim.fn.fnameescape(H.env("TR_WS") .. "/common.py"))
  vim.wait(300, function()
    return false
  end)
  H.eq(#notes, 1, "one notification")
  H.check(notes[1] and notes[1].msg:find("cargo install", 1, true) ~= nil, "it has the install command")
  H.eq(#vim.api.nvim_buf_get_extmarks(0, H.ns, 0, -1, {}), 0, "no marks")
  vim.cmd("ThreadRadarOverview")
  H.eq(#notes, 1, "still one notification after a command")
  vim.cmd("checkhealth threadradar")
  local text = table.concat(H.lines(0), "\n")
  H.check(text:find("ERROR:? server not found") ~= nil, "health: server not found\n" .. text)
  H.check(text:find("cargo install --path .", 1, true) ~= nil, "health: the advice")

  -- Bad options: one clear notification, no error.
  local before = #notes
  local ok = require("threadradar").setup({ virtual_text = "yes" })
  H.eq(ok, false, "setup with a bad option fails")
  H.eq(#notes, before + 1, "one notification for a bad option")
  H.check(notes[#notes].msg:find("virtual_text", 1, true) ~= nil, "it names the option: " .. notes[#notes].msg)
end)
