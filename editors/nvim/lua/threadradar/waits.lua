-- :ThreadRadarWaits [browser] [object]: who waited for whom (docs/waits.md), from the server's
-- `threadRadar/waits` — the web panel's Waits tab as text. The evidence the run holds (sampling
-- period, kernel-exact and inferred edges, the notes), then the objects table: per waited-on
-- object its label and type, waits, total and p95 wait, waiters, futile wake-ups, the top wakers
-- with their shares and how its edges were found (kernel / inferred, by which rule). `e` lists an
-- object's wake edges under it (time, waker → wakee, evidence); <CR> jumps to where the object was
-- waited on, or on an edge to the waker's line; `b` opens the Waits tab in the browser on the
-- object. The figures are the server's (the edges per evidence: its `counts`); the float only
-- works out the wakers' shares of their edges, as `threadradar waits` prints them.
local lsp = require("threadradar.lsp")
local ui = require("threadradar.ui")
local util = require("threadradar.util")

local api = vim.api
local M = {}

local view

local null = util.null

--- Wakers named per object row, the most frequent first (the CLI's four).
M.TOP_WAKERS = 4
--- Edges listed per object when it is expanded, and per <CR> on "… more".
M.EDGES_PAGE = 30
--- Display cells of the object and type columns, and of a thread name in an edge row.
M.OBJECT_WIDTH = 40
M.TYPE_WIDTH = 34
M.NAME_WIDTH = 22

M.KEYS = {
  { "<CR>", "jump" },
  { "e", "edges" },
  { "b", "browser" },
  { "q", "close" },
}

--- A name from the profiled program on one line: control characters (newlines, tabs, escapes)
--- become "?"; everything else is shown as it is.
function M.clean(s)
  if s == nil or s == vim.NIL then
    return ""
  end
  return (tostring(s):gsub("[%z\1-\31\127]", "?"))
end

--- `s` cut to `w` display cells ("…" at the end), never inside a character.
function M.clip(s, w)
  s = M.clean(s)
  if util.width(s) <= w then
    return s
  end
  local out, n = {}, 0
  local chars = vim.fn.split(s, "\\zs")
  for _, c in ipairs(chars) do
    local cw = util.width(c)
    if n + cw > w - 1 then
      break
    end
    table.insert(out, c)
    n = n + cw
  end
  return table.concat(out) .. "…"
end

function M.fmt_s(s)
  s = s or 0
  if math.abs(s) < 1 then
    return ("%.1f ms"):format(s * 1000)
  end
  return ("%.3f s"):format(s)
end

--- The wakers of an object, the most frequent first (then by name), with their share of its
--- edges: { {name, count, share}… }, their total. As `threadradar waits` lists them.
function M.wakers(o)
  local list, total = {}, 0
  for name, n in pairs(o.wakers or {}) do
    table.insert(list, { name = name, count = n })
    total = total + n
  end
  table.sort(list, function(a, b)
    if a.count ~= b.count then
      return a.count > b.count
    end
    return a.name < b.name
  end)
  for _, w in ipairs(list) do
    w.share = total > 0 and w.count / total or 0
  end
  return list, total
end

--- The server's edge counts (`counts.edges`, or `counts.objects[index + 1]` for the object
--- `index`, 0-based): { all, kernel, inferred, inferred_by = { {evidence, count}, … } }.
function M.evidence(result, index)
  local counts = result.counts or {}
  local c
  if index == nil then
    c = counts.edges
  else
    c = (counts.objects or {})[index + 1]
  end
  return c or { all = 0, kernel = 0, inferred = 0, inferred_by = {} }
end

local function rules_text(c)
  local parts = {}
  for _, r in ipairs(c.inferred_by or {}) do
    table.insert(parts, r.count .. " " .. M.clean(r.evidence))
  end
  return table.concat(parts, ", ")
end

--- The evidence column of an object: kernel, inferred, both or none.
local function evidence_word(c)
  if c.all == 0 then
    return "no edge"
  elseif (c.recorded or 0) == c.all then
    return "task state"
  elseif c.inferred == 0 then
    return "kernel"
  elseif c.kernel == 0 then
    return "inferred"
  end
  return "kernel+inferred"
end

--- Where an object was waited on: its own location when the view has one, else the waiting frame
--- of its first wait that has one. nil when no line of the program's code was sampled.
function M.object_frame(view_, index)
  local o = view_.objects[index + 1]
  local f = o and null(o.frame)
  if f then
    return f
  end
  for _, w in ipairs(view_.intervals or {}) do
    if w.object == index and null(w.frame) then
      return w.frame
    end
  end
  return nil
end

--- The edges of object `index`, in time order: { {edge, k (0-based index in view.edges)}… }.
function M.edges_of(view_, index)
  local out = {}
  for k, e in ipairs(view_.edges or {}) do
    if e.object_index == index then
      table.insert(out, { edge = e, k = k - 1 })
    end
  end
  table.sort(out, function(a, b)
    if a.edge.time_s ~= b.edge.time_s then
      return a.edge.time_s < b.edge.time_s
    end
    return a.k < b.k
  end)
  return out
end

local function frame_text(f)
  if not f then
    return ""
  end
  return M.clean(f["function"]) .. "  " .. M.clean(util.where(f.file, f.line))
end

local function count_keys(t)
  local n = 0
  for _ in pairs(t or {}) do
    n = n + 1
  end
  return n
end

--- An edge row's cells as text: time, waker → wakee, evidence, marks, the waker's line.
local function edge_cells(e)
  local ev = (e.evidence == "kernel" and "kernel")
    or (e.evidence == "lock-event" and "exact (lock event)")
    or (e.evidence == "task-state" and "recorded (task state)")
    or ("inferred (" .. M.clean(e.evidence) .. ")")
  local marks = {}
  if e.futile then
    table.insert(marks, "futile")
  end
  if e.kind == "lock-handoff" then
    table.insert(marks, "lock hand-off")
  end
  local wf = null(e.waker_frame)
  return {
    time = M.fmt_s(e.time_s),
    pair = M.clip(e.waker, M.NAME_WIDTH) .. " → " .. M.clip(e.wakee, M.NAME_WIDTH),
    evidence = ("%s %.2f"):format(ev, e.confidence or 0),
    marks = table.concat(marks, ", "),
    where = wf and frame_text(wf) or "unknown (no sample of the waker near the wake-up)",
    known = wf ~= nil,
  }
end

--- The whole float as a ui builder (pure: no server, no window). `state`: { filter = text or nil,
--- expanded = { [object index] = edges shown } }.
function M.build(result, state)
  state = state or {}
  local expanded = state.expanded or {}
  local v = result.view
  local b = ui.builder()
  local title = { { "ThreadRadar waits", "ThreadRadarTitle" }, { "  who waited for whom", "ThreadRadarText" } }
  if state.filter and state.filter ~= "" then
    table.insert(title, { "  · objects matching “" .. M.clean(state.filter) .. "”", "ThreadRadarText" })
  end
  b:add(title, { kind = "header" })
  -- How it was obtained, as the panel says it.
  local all = M.evidence(result, nil)
  b:add({ { ("sampled every %s: a wait's start and end are known to within one period"):format(M.fmt_s(v.period_s)), "ThreadRadarText" } })
  local edges = ("edges: %d kernel-exact, %s%d inferred"):format(
    all.kernel,
    (all.recorded or 0) > 0 and (all.recorded .. " recorded (asyncio tasks' awaits), ") or "",
    all.inferred
  )
  if all.inferred > 0 then
    edges = edges .. " (" .. rules_text(all) .. ")"
  end
  b:add({ { edges, "ThreadRadarText" } })
  local ev = v.evidence or {}
  b:add({
    {
      (ev.kernel and "scheduler wake-ups recorded (record --sched) and used" or "no scheduler wake-ups: every edge is inferred from samples")
        .. " · "
        .. (ev.targets and "what each wait waited on was recorded" or "objects are wait sites (what each wait waited on was not recorded)"),
      "ThreadRadarText",
    },
  })
  for _, n in ipairs(ev.notes or {}) do
    b:add({ { "note: " .. M.clean(n), "ThreadRadarText" } }, { kind = "note" })
  end
  b:blank()
  local objects = v.objects or {}
  if #objects == 0 then
    b:add({ { (state.filter and state.filter ~= "") and "no waited-on object matches" or "no thread waited in this run", "ThreadRadarText" } })
  else
    local ow, tw = 6, 4
    local labels, types = {}, {}
    for i, o in ipairs(objects) do
      labels[i] = M.clip(o.object, M.OBJECT_WIDTH)
      local t = M.clean(o.type)
      if null(o.name) and not tostring(o.object):find(tostring(o.name), 1, true) then
        t = t .. " " .. M.clean(o.name)
      end
      t = t .. (o.identity == "wait-site" and " (wait site)" or "")
      types[i] = M.clip(t, M.TYPE_WIDTH)
      ow = math.max(ow, util.width(labels[i]))
      tw = math.max(tw, util.width(types[i]))
    end
    local function row(cells)
      return "  "
        .. util.pad(cells[1], ow)
        .. "  "
        .. util.pad(cells[2], tw)
        .. util.lpad(cells[3], 7)
        .. util.lpad(cells[4], 10)
        .. util.lpad(cells[5], 10)
        .. util.lpad(cells[6], 9)
        .. util.lpad(cells[7], 8)
        .. "  "
        .. cells[8]
    end
    b:add({ { row({ "object", "type", "waits", "total", "p95", "waiters", "futile", "evidence" }), "ThreadRadarSection" } }, { kind = "columns" })
    for i, o in ipairs(objects) do
      local index = i - 1
      local c = M.evidence(result, index)
      local f = M.object_frame(v, index)
      local item = { kind = "object", object = index, label = o.object, file = f and f.file, line = f and f.line }
      local shown = expanded[index]
      local text = row({
        labels[i],
        types[i],
        tostring(o.waits or 0),
        M.fmt_s(o.wait_s),
        M.fmt_s(o.p95_s),
        tostring(count_keys(o.waiters)),
        tostring(o.futile_wakeups or 0),
        evidence_word(c),
      })
      b:add({ { shown and "▾" or "▸", "ThreadRadarKey" }, { text:sub(2) } }, item)
      -- The wakers with their shares, and how the edges were found.
      local wakers, total = M.wakers(o)
      local chunks = { { "    woken by ", "ThreadRadarText" } }
      if #wakers == 0 then
        table.insert(chunks, { "no waker found (no evidence for one)", "ThreadRadarText" })
      end
      for k, w in ipairs(wakers) do
        if k > M.TOP_WAKERS then
          table.insert(chunks, { (" · … %d more"):format(#wakers - M.TOP_WAKERS), "ThreadRadarText" })
          break
        end
        if k > 1 then
          table.insert(chunks, { " · ", "ThreadRadarText" })
        end
        table.insert(chunks, { M.clip(w.name, M.NAME_WIDTH) .. " " })
        table.insert(chunks, { ("%.0f%%"):format(w.share * 100), "ThreadRadarSection" })
      end
      local how = ""
      if total > 0 or c.all > 0 then
        how = "  (" .. util.plural(c.all, "edge")
        if c.kernel > 0 then
          how = how .. ", " .. c.kernel .. " kernel"
        end
        if (c.recorded or 0) > 0 then
          how = how .. ", " .. c.recorded .. " task state"
        end
        if c.inferred > 0 then
          how = how .. ", inferred: " .. rules_text(c)
        end
        how = how .. ")"
      end
      if (o.lock_handoffs or 0) > 0 then
        how = how .. "  + " .. util.plural(o.lock_handoffs, "lock hand-off")
      end
      table.insert(chunks, { how, "ThreadRadarText" })
      b:add(chunks, item)
      -- Where it was waited on, and its waiting radar (the server's cells).
      local where = { { "    first waited at ", "ThreadRadarText" } }
      if f then
        table.insert(where, { frame_text(f), "ThreadRadarPath" })
      else
        table.insert(where, { "no line of the program's code sampled", "ThreadRadarText" })
      end
      if #(o.radar or {}) > 0 then
        table.insert(where, { "  · waiting radar ", "ThreadRadarText" })
        for _, ch in ipairs(util.cell_chunks(o.radar)) do
          table.insert(where, ch)
        end
      end
      b:add(where, item)
      if shown then
        local list = M.edges_of(v, index)
        if #list == 0 then
          b:add({ { "      no wake edge with evidence ends a wait on it", "ThreadRadarText" } }, item)
        else
          local cells, w = {}, { time = 4, pair = 13, evidence = 8, marks = 0 }
          for k = 1, math.min(shown, #list) do
            cells[k] = edge_cells(list[k].edge)
            for col in pairs(w) do
              w[col] = math.max(w[col], util.width(cells[k][col]))
            end
          end
          local marks_w = w.marks > 0 and w.marks + 2 or 0
          b:add({
            {
              "      " .. util.lpad("time", w.time) .. "  " .. util.pad("waker → wakee", w.pair) .. "  " .. util.pad("evidence", w.evidence) .. "  " .. util.pad("", marks_w) .. "waker's line",
              "ThreadRadarText",
            },
          }, item)
          for k, c in ipairs(cells) do
            local e = list[k].edge
            local wf = null(e.waker_frame)
            b:add({
              { "      " .. util.lpad(c.time, w.time) .. "  " },
              { util.pad(c.pair, w.pair) },
              { "  " .. util.pad(c.evidence, w.evidence), e.evidence == "kernel" and "ThreadRadarSection" or "ThreadRadarText" },
              { "  " .. util.pad(c.marks, marks_w), "ThreadRadarIncrease" },
              { c.where, c.known and "ThreadRadarPath" or "ThreadRadarText" },
            }, {
              kind = "edge",
              object = index,
              label = o.object,
              edge = list[k].k,
              file = wf and wf.file,
              line = wf and wf.line,
            })
          end
          if #list > shown then
            b:add({ { ("      … %d more edges: <CR> lists %d more"):format(#list - shown, math.min(M.EDGES_PAGE, #list - shown)), "ThreadRadarText" } }, { kind = "more", object = index, label = o.object })
          end
        end
      end
    end
  end
  b:blank()
  ui.keys_line(b, M.KEYS)
  return b
end

local function render()
  if not ui.is_open(view) or not view.result then
    return
  end
  ui.set(view, M.build(view.result, { filter = view.filter, expanded = view.expanded }))
end

function M.load()
  if not ui.is_open(view) then
    return
  end
  local params = { object = view.filter or vim.NIL }
  lsp.request(view.client, "threadRadar/waits", params, function(res)
    if not ui.is_open(view) or type(res) ~= "table" or type(res.view) ~= "table" then
      return
    end
    local first = view.result == nil
    view.result = res
    render()
    if first then
      -- The cursor on the first object.
      local row = ui.find(view, function(item)
        return item.kind == "object"
      end)
      if row then
        api.nvim_win_set_cursor(view.win, { row, 0 })
      end
    end
  end)
end

local function toggle(item)
  if not item or item.object == nil then
    return
  end
  if view.expanded[item.object] then
    view.expanded[item.object] = nil
  else
    view.expanded[item.object] = M.EDGES_PAGE
  end
  render()
  -- Keep the cursor on the object's row.
  local row = ui.find(view, function(it)
    return it.kind == "object" and it.object == item.object
  end)
  if row then
    api.nvim_win_set_cursor(view.win, { row, 0 })
  end
end

local function jump_to(file, line, what)
  if not file or file == "" then
    util.notify(what)
    return
  end
  if vim.fn.filereadable(file) == 0 then
    -- `<frozen …>`, a file since moved: say so and keep the float.
    util.warn(M.clean(file) .. " is not a file on disk.")
    return
  end
  local origin = view.origin_win
  M.close()
  util.open_at(file, line, nil, origin)
end

local function enter()
  local item = ui.item(view)
  if not item then
    return
  end
  if item.kind == "more" then
    view.expanded[item.object] = (view.expanded[item.object] or 0) + M.EDGES_PAGE
    return render()
  elseif item.kind == "edge" then
    return jump_to(item.file, item.line, "the waker's line is unknown: no sample of it near the wake-up.")
  elseif item.kind == "object" then
    return jump_to(item.file, item.line, "no line of the program's own code was sampled waiting on " .. M.clean(item.label) .. ".")
  end
end

local function show(client, filter)
  if ui.is_open(view) then
    ui.close(view)
  end
  view = ui.open({
    name = "waits",
    filetype = "threadradar",
    on_close = function()
      view = nil
    end,
  })
  view.client = client
  view.filter = filter
  view.expanded = {}
  local v = view
  ui.map(v, "q", M.close, "close")
  ui.map(v, "<Esc>", M.close, "close")
  ui.map(v, "<CR>", enter, "jump to source / more edges")
  ui.map(v, "e", function()
    toggle(ui.item(v))
  end, "list the object's wake edges")
  ui.map(v, "b", function()
    local item = ui.item(v)
    M.browser(v.client, item and item.label or nil)
  end, "the Waits tab in the browser")
  M.load()
end

--- The web panel's Waits tab through `threadradar serve`, on `object` (its label, or text its
--- label, type or name contains) when given.
function M.browser(client, object)
  local open = require("threadradar.open")
  local query = "?view=waits"
  if object and object ~= "" then
    query = query .. "&object=" .. open.url_encode(object)
  end
  open.panel(client, "waits", query)
end

--- Opens the float (opts.object: only objects whose label, type or name contains it), or with
--- opts.browser the web panel on opts.object.
function M.open(opts)
  opts = opts or {}
  local client = lsp.require_method("threadRadar/waits", "show who waited for whom", "update it, or run `threadradar waits RUN` in a terminal.")
  if not client then
    return
  end
  if opts.browser then
    return M.browser(client, opts.object)
  end
  show(client, opts.object)
end

--- :ThreadRadarWaits's argument line: `browser` and/or an object (the rest of the line).
function M.command(args)
  args = vim.trim(args or "")
  local browser = false
  local first, rest = args:match("^(%S+)%s*(.*)$")
  if first == "browser" then
    browser, args = true, rest
  end
  local object = args ~= "" and args or nil
  if browser and not object and ui.is_open(view) and api.nvim_get_current_win() == view.win then
    -- Typed in the float: the object under the cursor.
    local item = ui.item(view)
    object = item and item.label or nil
  end
  M.open({ browser = browser, object = object })
end

--- close() and the open view (tests and integrations).
M.close, M.view = ui.holder(function()
  return view
end, function()
  view = nil
end)

lsp.on_change(function(client_id, change)
  -- Another run or other settings change the view; the thread filter does not apply to it.
  if ui.is_open(view) and view.client.id == client_id and lsp.changes_view(change) and change.reason ~= "filter" then
    if change.reason == "run" then
      view.expanded = {}
    end
    M.load()
  end
end)

return M
