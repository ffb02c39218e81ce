-- Without the server: a quiet start. setup() says once, as a warning of one line that fits the
-- screen (no "Error detected while processing init.lua", no hit-enter prompt), that the binary
-- is missing and where to read more; opening Python files raises no error, commands say nothing
-- more, and the health check explains (not found, where it looked, how to install). A real
-- Neovim started with an init.lua that calls setup() prints no error.
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
  local note = notes[1] or { msg = "" }
  H.eq(note.level, vim.log.levels.WARN, "a warning, not an error")
  H.check(not note.msg:find("\n", 1, true), "one line: " .. note.msg)
  H.check(vim.fn.strdisplaywidth(note.msg) < vim.o.columns - 12, "it fits the message line: " .. note.msg)
  H.check(note.msg:find(":checkhealth threadradar", 1, true) ~= nil, "it points to the health check: " .. note.msg)
  H.eq(#vim.api.nvim_buf_get_extmarks(0, H.ns, 0, -1, {}), 0, "no marks")
  vim.cmd("ThreadRadarOverview")
  H.eq(#notes, 1, "still one notification after a command")
  vim.cmd("checkhealth threadradar")
  local text = table.concat(H.lines(0), "\n")
  H.check(text:find("ERROR:? server not found") ~= nil, "health: server not found\n" .. text)
  H.check(text:find("cargo install --path .", 1, true) ~= nil, "health: the advice")
  H.check(text:find("pip install threadradar", 1, true) ~= nil, "health: pip install")
  H.check(text:find("Python: [^\n]+: ▶ Profile and :ThreadRadarRecord run it") ~= nil, "health names the interpreter ▶ Profile uses\n" .. text)

  -- Bad options: one clear notification, no error.
  local before = #notes
  local ok = require("threadradar").setup({ virtual_text = "yes" })
  H.eq(ok, false, "setup with a bad option fails")
  H.eq(#notes, before + 1, "one notification for a bad option")
  H.check(notes[#notes].msg:find("virtual_text", 1, true) ~= nil, "it names the option: " .. notes[#notes].msg)
  H.eq(require("threadradar").setup({ annotations = "some" }), false, "annotations must be glyph, hints or all")

  -- A real start: init.lua calls setup() and a Python file is opened. Neovim writes its
  -- messages to stderr in --headless; an error would say "Error detected while processing".
  local init = vim.fn.tempname() .. "-init.lua"
  local plugin = vim.fn.fnamemodify(H.env("TR_TESTS"), ":h")
  vim.fn.writefile({
    "vim.opt.rtp:prepend(" .. vim.inspect(plugin) .. ")",
    "vim.cmd('filetype on')",
    "require('threadradar').setup({ server_path = '/nonexistent/threadradar' })",
  }, init)
  -- -n: no swap file (this Neovim has the file open: 0.7 would stop at its ATTENTION prompt).
  local out = vim.fn.system({ vim.v.progpath, "--headless", "-n", "-i", "NONE", "-u", init, H.sample_file(), "+qa!" })
  H.eq(vim.v.shell_error, 0, "Neovim exits cleanly: " .. out)
  H.check(not out:find("Error detected", 1, true) and not out:find("E5113", 1, true), "no error at startup: " .. out)
  H.check(not out:find("Press ENTER", 1, true), "no hit-enter prompt: " .. out)
  local lines = vim.split(vim.trim(out), "\n", { plain = true })
  H.eq(#lines, 1, "one message line at startup: " .. out)
end)
