-- Small helpers shared by the modules: notifications, formatting, paths and jumps.
local M = {}

local api = vim.api
local uv = vim.loop

local notified = {}

--- Whether vim.notify is Neovim's own (which echoes: a message wider than the screen, or of
--- several lines, waits for Enter) rather than a plugin's (nvim-notify, fidget, noice).
local function builtin_notify()
  local info = debug.getinfo(vim.notify, "S")
  return info ~= nil and type(info.source) == "string" and info.source:find("vim/_editor.lua", 1, true) ~= nil
end

--- A message for Neovim's own vim.notify (pure): one line that fits in `width` display cells,
--- else cut with a pointer to the record log, which has it whole. Returns the line and whether
--- it was cut.
function M.fit_message(msg, width)
  local one = msg:gsub("%s*\n%s*", " ")
  if one == msg and vim.fn.strdisplaywidth(msg) <= width then
    return msg, false
  end
  local tail = " … (:ThreadRadarRecordLog)"
  local room = math.max(10, width - vim.fn.strdisplaywidth(tail))
  if vim.fn.strdisplaywidth(one) <= width then
    return one, one ~= msg
  end
  local chars = vim.fn.split(one, "\\zs")
  local out, w = {}, 0
  for _, c in ipairs(chars) do
    local cw = vim.fn.strdisplaywidth(c)
    if w + cw > room then
      break
    end
    table.insert(out, c)
    w = w + cw
  end
  return table.concat(out) .. tail, true
end

--- One notification, prefixed with "ThreadRadar: " unless the text already names it. With
--- Neovim's own vim.notify a long message is cut to one screen line (no hit-enter prompt) and
--- kept whole in :ThreadRadarRecordLog.
function M.notify(msg, level)
  msg = tostring(msg)
  if not msg:match("^ThreadRadar") then
    msg = "ThreadRadar: " .. msg
  end
  if builtin_notify() then
    -- The room left on the last line of the screen ('showcmd' and 'ruler' take some of it).
    local width = math.max(20, (vim.v.echospace > 0 and vim.v.echospace or vim.o.columns - 12) - 1)
    local line, cut = M.fit_message(msg, width)
    if cut then
      local record = require("threadradar.record")
      local logged = record.log_lines()
      local last = vim.split(msg, "\n", { plain = true })
      if logged[#logged] ~= last[#last] then
        record.log(nil, msg)
      end
      msg = line
    end
  end
  vim.notify(msg, level or vim.log.levels.INFO, { title = "ThreadRadar" })
end

--- Like notify, but at most once per key for the session.
function M.notify_once(key, msg, level)
  if notified[key] then
    return
  end
  notified[key] = true
  M.notify(msg, level)
end

function M.warn(msg)
  M.notify(msg, vim.log.levels.WARN)
end

function M.error(msg)
  M.notify(msg, vim.log.levels.ERROR)
end

--- The first line of an LSP error as one sentence.
function M.error_text(err)
  local msg = type(err) == "table" and err.message or tostring(err)
  msg = (msg or "unknown error"):gsub("\n.*", "")
  return msg
end

--- JSON null (vim.NIL) as nil.
function M.null(v)
  if v == vim.NIL then
    return nil
  end
  return v
end

function M.pct(x)
  return string.format("%.1f%%", (x or 0) * 100)
end

function M.secs(x)
  return string.format("%.2fs", x or 0)
end

--- Level name → 1..3.
function M.level_index(level)
  return ({ low = 1, medium = 2, high = 3 })[level] or 1
end

local COLOUR_HL = { low = "ThreadRadarLow", middle = "ThreadRadarMid", high = "ThreadRadarHigh" }

function M.colour_hl(colour)
  return COLOUR_HL[colour] or "ThreadRadarText"
end

--- The text cell of a cluster of the panel protocol: the server's `cell` (colour, threads and
--- its characters, e.g. `▂▅×9`); the plugin never spells a glyph itself.
function M.cell_of_cluster(c)
  return c.cell or { colour = c.colour, threads = 0, text = "?" }
end

--- Cells as { {text, hl}, {" "}, … } chunks.
function M.cell_chunks(cells)
  local chunks = {}
  for i, cell in ipairs(cells or {}) do
    if i > 1 then
      table.insert(chunks, { " ", "ThreadRadarText" })
    end
    table.insert(chunks, { cell.text, M.colour_hl(cell.colour) })
  end
  return chunks
end

function M.cells_text(cells)
  local parts = {}
  for _, cell in ipairs(cells or {}) do
    table.insert(parts, cell.text)
  end
  return table.concat(parts, " ")
end

function M.plural(n, word, plural)
  return string.format("%d %s", n, n == 1 and word or (plural or word .. "s"))
end

function M.width(s)
  return vim.fn.strdisplaywidth(s)
end

function M.pad(s, w)
  local d = w - M.width(s)
  return d > 0 and s .. string.rep(" ", d) or s
end

function M.lpad(s, w)
  local d = w - M.width(s)
  return d > 0 and string.rep(" ", d) .. s or s
end

function M.exists(path)
  return path ~= nil and uv.fs_stat(path) ~= nil
end

function M.dirname(path)
  local d = vim.fn.fnamemodify(path, ":h")
  return d
end

function M.join(...)
  return table.concat({ ... }, "/")
end

--- A path for display: relative to the working directory or ~ when possible.
function M.short_path(path)
  if not path or path == "" then
    return ""
  end
  return vim.fn.fnamemodify(path, ":~:.")
end

--- Keeps the end of `s` within `w` display cells ("…" + tail).
function M.truncate_left(s, w)
  if M.width(s) <= w then
    return s
  end
  local chars = vim.fn.split(s, "\\zs")
  local out = ""
  for i = #chars, 1, -1 do
    if M.width(chars[i] .. out) > w - 1 then
      break
    end
    out = chars[i] .. out
  end
  return "…" .. out
end

--- `file:line` for display (just the file when the line is unknown).
function M.where(file, line)
  if not file or file == "" then
    return ""
  end
  local s = M.short_path(file)
  if line and line > 0 then
    s = s .. ":" .. line
  end
  return s
end

--- Opens `file` in `win` (or the current window) at a 1-based line and a byte column.
function M.open_at(file, line, col, win)
  if not file or file == "" or vim.fn.filereadable(file) == 0 then
    M.warn(("%s is not a file on disk."):format(file or "?"))
    return false
  end
  if win and api.nvim_win_is_valid(win) then
    api.nvim_set_current_win(win)
  end
  local current = api.nvim_buf_get_name(0)
  if vim.fn.fnamemodify(current, ":p") ~= vim.fn.fnamemodify(file, ":p") then
    local ok, err = pcall(vim.cmd, "edit " .. vim.fn.fnameescape(file))
    if not ok then
      M.error("cannot open " .. file .. ": " .. M.error_text(err))
      return false
    end
  end
  local count = api.nvim_buf_line_count(0)
  line = math.max(1, math.min(line or 1, count))
  api.nvim_win_set_cursor(0, { line, col or 0 })
  if not col then
    vim.cmd("normal! ^")
  end
  vim.cmd("normal! zz")
  return true
end

--- Jumps to an LSP Location ({uri, range}) in `win` (or the current window).
function M.jump_to_location(loc, win)
  if not loc or not (loc.uri or loc.targetUri) then
    return false
  end
  local uri = loc.uri or loc.targetUri
  local range = loc.range or loc.targetSelectionRange or loc.targetRange
  local file = vim.uri_to_fname(uri)
  local line = range and range.start.line + 1 or 1
  if not M.open_at(file, line, nil, win) then
    return false
  end
  if range and range.start.character and range.start.character > 0 then
    local text = api.nvim_buf_get_lines(0, line - 1, line, false)[1] or ""
    local ok, col = pcall(vim.str_byteindex, text, range.start.character, true)
    if ok and col then
      api.nvim_win_set_cursor(0, { line, col })
    end
  end
  return true
end

--- vim.empty_dict() where it exists (an empty JSON object).
function M.empty_object()
  return vim.empty_dict and vim.empty_dict() or {}
end


--- Version test: has("nvim-0.10").
function M.has(version)
  return vim.fn.has("nvim-" .. version) == 1
end

return M
