-- Optional real glyph images (PNG, rendered by `threadradar radar` through resvg) in the detail
-- float, through the kitty graphics protocol. Off by default (`image = true` in setup), and only
-- in terminals that speak it: kitty ($KITTY_WINDOW_ID or a $TERM naming kitty), WezTerm
-- ($TERM_PROGRAM, $WEZTERM_EXECUTABLE) and Ghostty ($TERM xterm-ghostty, $TERM_PROGRAM); everywhere
-- else the text glyph stays.
local config = require("threadradar.config")
local lsp = require("threadradar.lsp")
local util = require("threadradar.util")

local api = vim.api
local M = {}

M.rows = 6 -- height of the image in the detail float, in lines
local next_id = 7300
local placed = {} -- image id → true

--- The terminal that speaks the kitty graphics protocol, by its name, or nil.
function M.terminal()
  local env = vim.env
  if (env.KITTY_WINDOW_ID or "") ~= "" or (env.TERM or ""):match("kitty") then
    return "kitty"
  end
  if (env.TERM_PROGRAM or "") == "WezTerm" or (env.WEZTERM_EXECUTABLE or "") ~= "" then
    return "WezTerm"
  end
  if (env.TERM or ""):match("ghostty") or (env.TERM_PROGRAM or ""):lower() == "ghostty" then
    return "Ghostty"
  end
  return nil
end

--- Whether images are on and the terminal speaks the kitty graphics protocol.
function M.supported()
  return config.options.image and M.terminal() ~= nil or false
end

function M.rows_for_detail()
  return M.supported() and M.rows or 0
end

local B64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"

function M.base64(s)
  if vim.base64 and vim.base64.encode then
    return vim.base64.encode(s)
  end
  local out = {}
  for i = 1, #s, 3 do
    local a, b, c = s:byte(i, i + 2)
    local n = a * 65536 + (b or 0) * 256 + (c or 0)
    local c1 = math.floor(n / 262144) % 64
    local c2 = math.floor(n / 4096) % 64
    local c3 = math.floor(n / 64) % 64
    local c4 = n % 64
    table.insert(out, B64:sub(c1 + 1, c1 + 1) .. B64:sub(c2 + 1, c2 + 1))
    table.insert(out, b and B64:sub(c3 + 1, c3 + 1) or "=")
    table.insert(out, c and B64:sub(c4 + 1, c4 + 1) or "=")
  end
  return table.concat(out)
end

--- The kitty escape that shows the PNG file `path` over cols × rows cells at the cursor,
--- without moving it.
function M.display_sequence(path, id, cols, rows)
  return ("\27_Ga=T,f=100,t=f,i=%d,c=%d,r=%d,C=1,q=2;%s\27\\"):format(id, cols, rows, M.base64(path))
end

function M.delete_sequence(id)
  return ("\27_Ga=d,d=I,i=%d,q=2\27\\"):format(id)
end

local function write(seq)
  pcall(vim.fn.chansend, vim.v.stderr, seq)
end

--- Renders (once, cached by run, artifact, size and theme) the glyph PNG; cb(path).
function M.png(run, key, px, theme, cb)
  local dir = vim.fn.stdpath("cache") .. "/threadradar/glyphs"
  vim.fn.mkdir(dir, "p")
  local stat = vim.loop.fs_stat(run)
  local stamp = stat and (stat.mtime.sec .. ":" .. stat.size) or ""
  local file = dir .. "/" .. vim.fn.sha256(table.concat({ run, stamp, key, px, theme }, "\n")) .. ".png"
  if util.exists(file) then
    return cb(file)
  end
  local argv = { config.binary(), "radar", run, "--artifact", key, "-o", file, "--size", tostring(px), "--theme", theme }
  local ok, job = pcall(vim.fn.jobstart, argv, {
    on_exit = function(_, code)
      if code == 0 and util.exists(file) then
        vim.schedule(function()
          cb(file)
        end)
      end
    end,
  })
  if not ok or job <= 0 then
    util.notify_once("radar-png", "could not run `threadradar radar` for the glyph image.", vim.log.levels.WARN)
  end
end

--- Places an image over a float's cells: row/col inside the window's text area.
function M.place(win, row, col, path, cols, rows, id)
  local pos = api.nvim_win_get_position(win)
  local border = config.options.float.border
  local off = (border and border ~= "none" and border ~= "") and 1 or 0
  local srow, scol = pos[1] + off + row + 1, pos[2] + off + col + 1
  write("\27[s\27[" .. srow .. ";" .. scol .. "H" .. M.display_sequence(path, id, cols, rows) .. "\27[u")
  placed[id] = true
end

function M.clear(view)
  if view and view.image_id then
    write(M.delete_sequence(view.image_id))
    placed[view.image_id] = nil
    view.image_id = nil
  end
end

function M.clear_all()
  for id in pairs(placed) do
    write(M.delete_sequence(id))
  end
  placed = {}
end

--- Shows the detail view's glyph image over its reserved lines (the full selection only: the
--- PNG comes from the run without a thread filter).
function M.detail(view)
  if not M.supported() or not view or not view.image_rows or view.image_rows == 0 then
    return
  end
  M.clear(view)
  if next(view.excluded or {}) then
    return
  end
  lsp.request(view.client, "threadRadar/runs", util.empty_object(), function(res)
    if not res or not res.active or not api.nvim_win_is_valid(view.win) then
      return
    end
    local theme = vim.o.background == "dark" and "dark" or "light"
    M.png(res.active, view.key, 128, theme, function(path)
      if not api.nvim_win_is_valid(view.win) then
        return
      end
      next_id = next_id + 1
      view.image_id = next_id
      local rows = view.image_rows
      M.place(view.win, view.image_row, 2, path, math.ceil(rows * 3.5), rows, view.image_id)
    end)
  end, { silent = true })
end

return M
