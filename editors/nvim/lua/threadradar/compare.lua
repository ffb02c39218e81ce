-- :ThreadRadarCompare [base] [new]: what changed per function (or class) between two runs, from
-- the server's `threadRadar/compare` (the shape of `threadradar compare --json`), in a float.
local config = require("threadradar.config")
local lsp = require("threadradar.lsp")
local ui = require("threadradar.ui")
local util = require("threadradar.util")

local api = vim.api
local M = {}

-- Session state, like the overview's filters.
local state = {
  level = "function",
  hide_stdlib = nil, -- nil: the overview's configured default
}

local view -- the open comparison

M.KEYS = {
  { "<CR>", "jump" },
  { "c", "class/function" },
  { "s", "stdlib" },
  { "q", "close" },
}

local null = util.null

local function hide_stdlib()
  if state.hide_stdlib == nil then
    return config.options.overview.hide_stdlib
  end
  return state.hide_stdlib
end

--- The text cells of a side's glyph, as the server spells them.
function M.cells(glyph)
  return null(glyph) or {}
end

local function radar_chunks(cells, width)
  local chunks
  local text
  if #cells == 0 then
    chunks, text = { { "—", "ThreadRadarText" } }, "—"
  else
    chunks, text = util.cell_chunks(cells), util.cells_text(cells)
  end
  if width then
    table.insert(chunks, { string.rep(" ", math.max(0, width - util.width(text))) })
  end
  return chunks
end

local TREND_HL = { increase = "ThreadRadarIncrease", decrease = "ThreadRadarDecrease", same = "ThreadRadarText" }

--- The server's "+12.4pp" / "-3.0pp" / "0.0pp" for an artifact, and the highlight of its trend.
function M.delta(a)
  return a.crt_delta_text or "?", TREND_HL[a.trend] or "ThreadRadarText"
end

--- Where an artifact is: the new side's file:line, "base → new" when the file changed, the base
--- side's for a removed one.
function M.where(a)
  local fb, fnew = null(a.file_base), null(a.file_new)
  local lb, ln = null(a.line_base), null(a.line_new)
  if fnew and fb and fb ~= fnew then
    local new_text = util.where(fnew, ln)
    if util.dirname(fb) == util.dirname(fnew) then
      new_text = vim.fn.fnamemodify(fnew, ":t") .. ((ln and ln > 0) and (":" .. ln) or "")
    end
    return util.where(fb, lb) .. " → " .. new_text
  end
  if fnew then
    return util.where(fnew, ln)
  end
  return util.where(fb, lb)
end

local function side_text(side, field, fmt)
  if not side or side[field] == nil or side[field] == vim.NIL then
    return "—"
  end
  return fmt(side[field])
end

--- The rows of a `threadRadar/compare` result in the server's order (pure: no server, no
--- window). Returns { columns = header text, rows = { { chunks = {{text, hl}…}, item = {…} } } };
--- the item is what <CR> acts on: the new side's file and line, the base side's for a removed
--- artifact.
function M.rows(result)
  local artifacts = (result and null(result.artifacts)) or {}
  local prepared = {}
  local w = { crt_b = 6, crt_n = 6, delta = 6, sec_b = 4, sec_n = 4, thr_b = 1, thr_n = 1, radar_b = 4, radar_n = 4, name = 8 }
  for _, a in ipairs(artifacts) do
    local b, n = null(a.base), null(a.new)
    local p = {
      a = a,
      b = b,
      n = n,
      crt_b = side_text(b, "crt", util.pct),
      crt_n = side_text(n, "crt", util.pct),
      sec_b = side_text(b, "seconds", function(x)
        return ("%.2f"):format(x)
      end),
      sec_n = side_text(n, "seconds", function(x)
        return ("%.2fs"):format(x)
      end),
      thr_b = side_text(b, "threads", tostring),
      thr_n = side_text(n, "threads", tostring),
      cells_b = M.cells(b and b.glyph),
      cells_n = M.cells(n and n.glyph),
    }
    p.delta, p.delta_hl = M.delta(a)
    p.radar_b = #p.cells_b > 0 and util.cells_text(p.cells_b) or "—"
    p.radar_n = #p.cells_n > 0 and util.cells_text(p.cells_n) or "—"
    for _, k in ipairs({ "crt_b", "crt_n", "delta", "sec_b", "sec_n", "thr_b", "thr_n", "radar_b", "radar_n" }) do
      w[k] = math.max(w[k], util.width(p[k]))
    end
    w.name = math.min(48, math.max(w.name, util.width(a.qualname or "")))
    table.insert(prepared, p)
  end

  local columns = table.concat({
    util.pad("crt base → new", w.crt_b + w.crt_n + 3),
    util.lpad("Δcrt", w.delta),
    util.pad("seconds", w.sec_b + w.sec_n + 3),
    util.pad("threads", w.thr_b + w.thr_n + 3),
    util.pad("radar base → new", w.radar_b + w.radar_n + 3),
    util.pad("", 7),
    "artifact",
  }, "  ")

  local rows = {}
  for _, p in ipairs(prepared) do
    local a = p.a
    local status = a.status or "changed"
    local chunks = {
      { util.lpad(p.crt_b, w.crt_b) .. " → " .. util.lpad(p.crt_n, w.crt_n) .. "  ", "ThreadRadarSection" },
      { util.lpad(p.delta, w.delta), p.delta_hl },
      { "  " .. util.lpad(p.sec_b, w.sec_b) .. " → " .. util.pad(p.sec_n, w.sec_n) .. "  ", "ThreadRadarText" },
      { util.lpad(p.thr_b, w.thr_b) .. " → " .. util.pad(p.thr_n, w.thr_n) .. "  " },
    }
    vim.list_extend(chunks, radar_chunks(p.cells_b, w.radar_b))
    table.insert(chunks, { " → ", "ThreadRadarText" })
    vim.list_extend(chunks, radar_chunks(p.cells_n, w.radar_n))
    table.insert(chunks, { "  " })
    local mark = (status == "added" or status == "removed") and status or ""
    table.insert(chunks, { util.pad(mark, 7) .. "  ", status == "added" and "ThreadRadarIncrease" or (status == "removed" and "ThreadRadarDecrease" or nil) })
    table.insert(chunks, { util.pad(a.qualname or "?", w.name) .. "  " })
    table.insert(chunks, { util.truncate_left(M.where(a), 64), "ThreadRadarPath" })
    local removed = status == "removed" or not p.n
    table.insert(rows, {
      chunks = chunks,
      item = {
        kind = a.kind,
        qualname = a.qualname,
        status = status,
        file_kind = a.file_kind,
        file = removed and null(a.file_base) or null(a.file_new),
        line = removed and null(a.line_base) or null(a.line_new),
        crt_delta = a.crt_delta,
        threads_base = p.b and p.b.threads or nil,
        threads_new = p.n and p.n.threads or nil,
      },
    })
  end
  return { columns = columns, rows = rows }
end

local function run_text(side)
  side = side or {}
  local name = side.path and side.path ~= vim.NIL and vim.fn.fnamemodify(side.path, ":t"):gsub("%.json$", "") or "?"
  return name, ("(%.1fs, %s)"):format(side.duration_s or 0, util.plural(side.thread_count or 0, "thread"))
end

--- The whole float (header, rows, footer) as a ui builder.
function M.build(result, opts)
  opts = opts or {}
  local b = ui.builder()
  local level = result.level or opts.level or "function"
  local base_name, base_fig = run_text(result.base)
  local new_name, new_fig = run_text(result.new)
  b:add({ { "ThreadRadar compare", "ThreadRadarTitle" }, { "  " .. level .. " level", "ThreadRadarText" } })
  b:add({
    { "base ", "ThreadRadarText" },
    { base_name, "ThreadRadarSection" },
    { " " .. base_fig, "ThreadRadarText" },
    { "  →  new ", "ThreadRadarText" },
    { new_name, "ThreadRadarSection" },
    { " " .. new_fig, "ThreadRadarText" },
  }, { kind = "header" })
  local chunks = { { "Program  ", "ThreadRadarSection" } }
  vim.list_extend(chunks, radar_chunks(M.cells(result.base and result.base.program and result.base.program.glyph)))
  table.insert(chunks, { " → ", "ThreadRadarText" })
  vim.list_extend(chunks, radar_chunks(M.cells(result.new and result.new.program and result.new.program.glyph)))
  b:add(chunks)
  local what = level == "class" and "Classes" or (level == "file" and "Files" or "Functions")
  local artifacts = null(result.artifacts) or {}
  b:add({
    {
      ("%s by change of crt: %d of %d · %d removed · %d added · %s · Δ in percentage points"):format(
        what,
        #artifacts,
        result.listed or #artifacts,
        result.only_in_base or 0,
        result.only_in_new or 0,
        opts.hide_stdlib and "stdlib hidden" or "stdlib shown"
      ),
      "ThreadRadarText",
    },
  })
  for _, line in ipairs(M.change_lines(result)) do
    b:add(line, { kind = "change" })
  end
  b:blank()
  local r = M.rows(result)
  b:add({ { r.columns, "ThreadRadarSection" } }, { kind = "columns" })
  if #r.rows == 0 then
    b:add({ { "  nothing to compare", "ThreadRadarText" } })
  end
  for _, row in ipairs(r.rows) do
    row.item.kind = row.item.kind or "artifact"
    row.item.row = true
    b:add(row.chunks, row.item)
  end
  b:blank()
  ui.keys_line(b, M.KEYS)
  return b
end

--- The request for the open view's runs and the session's level and filter. A side written
--- `a.json,b.json` is a run set: each change is then tested against the sets' spread.
function M.params(base, new)
  local p = {
    level = state.level,
    hide_stdlib = hide_stdlib(),
    top = config.options.overview.top,
  }
  local function side(v, one, many)
    if v and v:find(",", 1, true) then
      p[many] = vim.split(v, ",", { plain = true, trimempty = true })
    elseif v then
      p[one] = v
    end
  end
  side(base, "base", "base_runs")
  side(new, "new", "new_runs")
  return p
end

--- The lines on run sets and the changes in words (the server's, ranked by evidence and effect):
--- the n's and the test, then each statement with its evidence and its verdict (none with one run
--- per side), then how many changes the server left out and why.
function M.change_lines(result)
  local out = {}
  local sig = null(result.significance)
  if sig then
    local how = (sig.tested or 0) > 0 and (sig.test .. ", over " .. sig.tested .. " changes; the rows show each set's first run") or sig.note
    table.insert(out, { { ("Run sets: base n = %d, new n = %d; %s"):format(sig.n_base, sig.n_new, how), "ThreadRadarText" } })
  end
  for i, c in ipairs(null(result.changes) or {}) do
    if i > 10 then
      break
    end
    local s = null(c.significant)
    local mark = s == nil and "" or (s and "  (significant)" or "  (within noise)")
    table.insert(out, {
      { "  • " .. c.statement, s and "ThreadRadarSection" or nil },
      { "  [" .. (null(c.evidence_text) or "") .. "]", "ThreadRadarText" },
      { mark, "ThreadRadarText" },
    })
  end
  -- The changes the server left out for resting on too few samples: how many, and why.
  local note = null(result.suppressed_note)
  if note then
    table.insert(out, { { "  (" .. note .. ")", "ThreadRadarText" } })
  end
  return out
end

local function render(v, result)
  v.data = result
  ui.set(v, M.build(result, { level = state.level, hide_stdlib = hide_stdlib() }))
  if not v.positioned then
    v.positioned = true
    local row = ui.find(v, function(item)
      return item.row == true
    end)
    if row then
      api.nvim_win_set_cursor(v.win, { row, 0 })
    end
  end
  if v.on_render then
    v.on_render(v)
  end
end

--- Asks again (after a toggle or a change of runs) and redraws; on an error, `revert` undoes
--- the toggle.
function M.refresh(revert)
  if not ui.is_open(view) then
    return
  end
  local v = view
  lsp.request(v.client, "threadRadar/compare", M.params(v.base, v.new), function(result)
    if view == v and ui.is_open(v) then
      render(v, result)
    end
  end, {
    on_error = function()
      if revert then
        revert()
      end
    end,
  })
end

local function toggle(change)
  local before = vim.deepcopy(state)
  change()
  M.refresh(function()
    state = before
  end)
end

local function jump(item)
  if not item or not item.row or not item.file or item.file == "" then
    return
  end
  local v = view
  local win = v and v.origin_win
  M.close()
  util.open_at(item.file, item.line, nil, win)
end

local function show(client, base, new, result, opts)
  M.close()
  view = ui.open({ name = "compare", filetype = "threadradar" })
  local v = view
  v.client, v.base, v.new, v.on_render = client, base, new, opts.on_render
  ui.map(v, "q", M.close, "close")
  ui.map(v, "<Esc>", M.close, "close")
  ui.map(v, "<CR>", function()
    jump(ui.item(v))
  end, "jump to source")
  ui.map(v, "c", function()
    toggle(function()
      state.level = state.level == "class" and "function" or "class"
    end)
  end, "class or function level")
  ui.map(v, "s", function()
    toggle(function()
      state.hide_stdlib = not hide_stdlib()
    end)
  end, "toggle the standard library")
  render(v, result)
  return v
end

--- Opens the comparison of runs `base` and `new` (names or paths; nil: the server's default,
--- the active run against the one recorded before it).
function M.open(base, new, opts)
  opts = opts or {}
  local client = lsp.require_method("threadRadar/compare", "compare runs", "update it, or run `threadradar compare` in a terminal.")
  if not client then
    return
  end
  lsp.request(client, "threadRadar/compare", M.params(base, new), function(result)
    show(client, base, new, result, opts)
  end)
end

--- :ThreadRadarCompare's argument line: up to two run names or paths (quotes keep blanks).
function M.command(args)
  lsp.two_runs(args, "ThreadRadarCompare takes at most two runs: [base] [new].", function(words)
    M.open(words[1], words[2])
  end)
end

--- Completion: the names of the runs (threadRadar/runs), newest first.
function M.complete(arglead)
  local client = lsp.client_for(0)
  if not client then
    return {}
  end
  local res = lsp.request_sync(client, "threadRadar/runs", util.empty_object(), 1000)
  local out = {}
  for _, r in ipairs(res and res.runs or {}) do
    if r.name and vim.startswith(r.name, arglead or "") then
      table.insert(out, r.name)
    end
  end
  return out
end

--- close() and the open view (tests and integrations).
M.close, M.view = ui.holder(function()
  return view
end, function()
  view = nil
end)

--- Back to the function level and the configured stdlib default (tests).
function M.reset()
  state = { level = "function", hide_stdlib = nil }
end

lsp.on_change(function(client_id, change)
  -- Another run, or other settings (counted states), may change the comparison; the thread
  -- filter does not apply to it.
  if ui.is_open(view) and view.client.id == client_id and lsp.changes_view(change) and change.reason ~= "filter" then
    M.refresh()
  end
end)

return M
