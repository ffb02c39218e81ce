-- Floating views: a scratch buffer in a centred float, filled from a line builder that keeps
-- per-chunk highlights and one item (what <CR> acts on) per line.
local config = require("threadradar.config")
local util = require("threadradar.util")

local api = vim.api
local M = {}

M.ns = api.nvim_create_namespace("threadradar_float")

local Builder = {}
Builder.__index = Builder

function M.builder()
  return setmetatable({ lines = {}, hls = {}, items = {} }, Builder)
end

--- Adds a line from chunks ({text, hl} or plain strings); `item` is attached to it.
function Builder:add(chunks, item)
  local text = ""
  local row = #self.lines
  for _, chunk in ipairs(chunks or {}) do
    if type(chunk) == "string" then
      chunk = { chunk }
    end
    local s = chunk[1] or ""
    if chunk[2] and #s > 0 then
      table.insert(self.hls, { row, #text, #text + #s, chunk[2] })
    end
    text = text .. s
  end
  table.insert(self.lines, text)
  self.items[#self.lines] = item
  return #self.lines
end

function Builder:blank()
  return self:add({})
end

local function geometry(lines)
  local opts = config.options.float
  local max_w = math.max(20, math.floor(vim.o.columns * opts.max_width))
  local max_h = math.max(3, math.floor((vim.o.lines - vim.o.cmdheight) * opts.max_height))
  local w = 40
  for _, l in ipairs(lines) do
    w = math.max(w, util.width(l) + 1)
  end
  w = math.min(w, max_w)
  local h = math.max(1, math.min(#lines, max_h))
  local row = math.max(0, math.floor((vim.o.lines - vim.o.cmdheight - h) / 2) - 1)
  local col = math.max(0, math.floor((vim.o.columns - w) / 2))
  return { relative = "editor", width = w, height = h, row = row, col = col }
end

--- Opens an empty float; returns the view { buf, win, origin_win }.
function M.open(opts)
  local origin_win = api.nvim_get_current_win()
  local buf = api.nvim_create_buf(false, true)
  vim.bo[buf].bufhidden = "wipe"
  vim.bo[buf].buftype = "nofile"
  vim.bo[buf].swapfile = false
  vim.bo[buf].modifiable = false
  local g = geometry({ "" })
  g.style = "minimal"
  g.border = config.options.float.border
  local win = api.nvim_open_win(buf, true, g)
  vim.wo[win].cursorline = true
  vim.wo[win].wrap = false
  local view = { buf = buf, win = win, origin_win = origin_win, items = {}, name = opts.name }
  vim.bo[buf].filetype = opts.filetype or "threadradar"
  api.nvim_create_autocmd("BufWipeout", {
    buffer = buf,
    once = true,
    callback = function()
      view.closed = true
      if opts.on_close then
        opts.on_close(view)
      end
    end,
  })
  return view
end

function M.is_open(view)
  return view ~= nil and not view.closed and api.nvim_win_is_valid(view.win) and api.nvim_buf_is_valid(view.buf)
end

--- Fills the view from a builder, keeps the cursor line and fits the window.
function M.set(view, b)
  if not M.is_open(view) then
    return
  end
  local cursor = api.nvim_win_get_cursor(view.win)
  vim.bo[view.buf].modifiable = true
  api.nvim_buf_set_lines(view.buf, 0, -1, false, b.lines)
  vim.bo[view.buf].modifiable = false
  api.nvim_buf_clear_namespace(view.buf, M.ns, 0, -1)
  for _, h in ipairs(b.hls) do
    api.nvim_buf_add_highlight(view.buf, M.ns, h[4], h[1], h[2], h[3])
  end
  view.items = b.items
  local g = geometry(b.lines)
  api.nvim_win_set_config(view.win, g)
  local row = math.max(1, math.min(cursor[1], #b.lines))
  api.nvim_win_set_cursor(view.win, { row, 0 })
end

--- The item of the cursor's line.
function M.item(view)
  if not M.is_open(view) then
    return nil
  end
  return view.items[api.nvim_win_get_cursor(view.win)[1]]
end

--- The first line (1-based) whose item satisfies pred.
function M.find(view, pred)
  local best
  for row, item in pairs(view.items) do
    if pred(item) and (not best or row < best) then
      best = row
    end
  end
  return best
end

function M.close(view)
  if view and api.nvim_win_is_valid(view.win) then
    api.nvim_win_close(view.win, true)
  end
  if view and api.nvim_buf_is_valid(view.buf) then
    pcall(api.nvim_buf_delete, view.buf, { force = true })
  end
  if view and view.origin_win and api.nvim_win_is_valid(view.origin_win) then
    api.nvim_set_current_win(view.origin_win)
  end
end

--- A module's `close()` and `view()` for the one view it holds: `get` returns it, `forget` drops
--- it (before the window closes, so the module's on_close sees it gone).
function M.holder(get, forget)
  local function close()
    local v = get()
    if v then
      forget()
      M.close(v)
    end
  end
  local function current()
    local v = get()
    return M.is_open(v) and v or nil
  end
  return close, current
end

function M.map(view, lhs, fn, desc)
  vim.keymap.set("n", lhs, fn, { buffer = view.buf, nowait = true, silent = true, desc = desc })
end

--- The footer: "key what" pairs.
function M.keys_line(b, pairs_)
  local chunks = {}
  for i, p in ipairs(pairs_) do
    if i > 1 then
      table.insert(chunks, { "  " })
    end
    table.insert(chunks, { p[1], "ThreadRadarKey" })
    table.insert(chunks, { " " .. p[2], "ThreadRadarText" })
  end
  b:add(chunks)
end

return M
