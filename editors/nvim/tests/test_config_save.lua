-- Saving a pyproject.toml with a mistake in [tool.threadradar] says so at once, naming the key
-- and its line: the plugin tells the server of the save (it is not a Python buffer).
local H = dofile(os.getenv("TR_TESTS") .. "/helpers.lua")

H.run("a saved configuration is checked again", function()
  local notes = H.capture_notifications()
  local dir = vim.fn.tempname()
  vim.fn.mkdir(dir .. "/.threadradar/runs", "p")
  vim.fn.writefile({ "[tool.threadradar]", 'states = "computing"' }, dir .. "/pyproject.toml")
  vim.fn.writefile({ "def f():", "    pass" }, dir .. "/app.py")
  H.setup()
  vim.cmd("edit " .. vim.fn.fnameescape(dir .. "/app.py"))
  H.wait(10000, function()
    return #require("threadradar.lsp").all_clients() > 0
  end, "the server for the project")
  vim.wait(1500, function()
    return false
  end)
  local before = #notes
  for i = 1, before do
    H.check(not notes[i].msg:find("bogus", 1, true), "no mistake said before there is one: " .. notes[i].msg)
  end
  vim.cmd("edit " .. vim.fn.fnameescape(dir .. "/pyproject.toml"))
  vim.api.nvim_buf_set_lines(0, 0, -1, false, { "[tool.threadradar]", 'states = "computing"', "bogus-key = 3" })
  vim.cmd("write")
  H.wait(10000, function()
    for i = before + 1, #notes do
      if notes[i].msg:find("bogus-key", 1, true) then
        return true
      end
    end
    return false
  end, "the mistake said after the save")
  local said
  for i = before + 1, #notes do
    if notes[i].msg:find("bogus-key", 1, true) then
      said = notes[i].msg
    end
  end
  H.check(said and said:find("line 3", 1, true) ~= nil, "it names the line: " .. tostring(said))
  vim.fn.delete(dir, "rf")
end)
