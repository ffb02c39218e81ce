-- Run by pty_image.py in a real (non-headless) Neovim on a pseudo-terminal: opens the detail of
-- Worker.run with `image = true`, waits until its glyph image is placed (or, in a terminal without
-- the kitty graphics protocol, until the float is drawn), closes it and quits. The Python side
-- asserts the escape sequences the terminal received.
local H = dofile(os.getenv("TR_TESTS") .. "/helpers.lua")
local api = vim.api

H.run("pty_image", function()
  H.setup({ image = true })
  H.open_sample()
  local report = H.expect("new-function")
  local run
  for _, a in ipairs(report.artifacts) do
    if a.qualname == "Worker.run" then
      run = a
    end
  end
  api.nvim_win_set_cursor(0, { run.line + 2, 0 })
  local detail = require("threadradar.detail")
  vim.cmd("ThreadRadarDetail")
  local view
  H.wait(15000, function()
    view = detail.view()
    return view and view.data
  end, "the detail float")
  local image = require("threadradar.image")
  if image.supported() then
    H.wait(20000, function()
      return view.image_id ~= nil
    end, "the glyph image placed")
  else
    vim.wait(1500, function()
      return false
    end)
    H.check(view.image_id == nil, "no image outside kitty-protocol terminals")
  end
  vim.cmd("redraw")
  detail.close()
  vim.wait(300, function()
    return false
  end)
end, 60000)
