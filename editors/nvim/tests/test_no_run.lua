-- (6) A workspace without runs, and one whose only run file is cut off: no error, exactly one
-- notification each, no marks.
local H = dofile(os.getenv("TR_TESTS") .. "/helpers.lua")
local api = vim.api

H.run("no run", function()
  local notes = H.capture_notifications()
  H.setup()
  vim.cmd("edit " .. vim.fn.fnameescape(H.env("TR_NORUN") .. "/buggy.py"))
  H.wait(10000, function()
    return #notes >= 1
  end, "the no-run notification")
  vim.wait(1500, function()
    return false
  end)
  H.eq(#notes, 1, "one notification without runs")
  H.check(notes[1] and notes[1].msg:find("threadradar record", 1, true) ~= nil, "it says how to record")
  H.eq(#api.nvim_buf_get_extmarks(0, H.ns, 0, -1, {}), 0, "no marks without runs")
  -- Editing and re-entering adds nothing.
  api.nvim_buf_set_lines(0, 0, 0, false, { "# edit" })
  vim.cmd("doautocmd TextChanged")
  vim.cmd("doautocmd InsertLeave")
  vim.wait(800, function()
    return false
  end)
  H.eq(#notes, 1, "still one notification after edits")

  vim.cmd("edit! " .. vim.fn.fnameescape(H.env("TR_BADRUN") .. "/buggy.py"))
  H.wait(10000, function()
    return #notes >= 2
  end, "the bad-run notification")
  vim.wait(1500, function()
    return false
  end)
  H.eq(#notes, 2, "one notification for the cut-off run")
  H.check(notes[2] and notes[2].msg:find("20200101T000000Z-cut.json", 1, true) ~= nil, "it names the file: " .. (notes[2] and notes[2].msg or ""))
  H.eq(#api.nvim_buf_get_extmarks(0, H.ns, 0, -1, {}), 0, "no marks with a bad run")
  H.eq(vim.v.errmsg, "", "no error message")
end)
