-- (waits) :ThreadRadarWaits on the bundled Bug 2 recording
-- (analysis/tests/fixtures/timeline/bug2_producer_consumer.json, with its paths moved to a copy
-- of samples/python/bug2_producer_consumer/buggy.py in a project of its own): the evidence notes,
-- one row per object of `threadradar waits --json` (the CLI, another path through the analysis)
-- with its waits, total and p95 wait, waiters, futile wake-ups and evidence, the condition's
-- wakers with their shares; `e` lists its wake edges in time order; <CR> on an edge opens the
-- waker's line, <CR> on the object its waiting line; `b` and `:ThreadRadarWaits browser [object]`
-- open the Waits tab through a real `threadradar serve` (the URL captured through open_cmd and
-- fetched); a filter argument keeps the matching objects; a thread named with a newline and a
-- tab keeps the layout (one line per row, shown as text).
local H = dofile(os.getenv("TR_TESTS") .. "/helpers.lua")
local api = vim.api

local COND = "threading.Condition in Storage"

--- Replaces every `old` in `s` by `new`, literally.
local function replace(s, old, new)
  local out, i = {}, 1
  while true do
    local a, b = s:find(old, i, true)
    if not a then
      break
    end
    table.insert(out, s:sub(i, a - 1))
    table.insert(out, new)
    i = b + 1
  end
  table.insert(out, s:sub(i))
  return table.concat(out)
end

--- A project with the Bug 2 fixture as its only run, its paths moved to the project.
local function project()
  local repo = vim.fn.fnamemodify(H.env("TR_TESTS"), ":h:h:h")
  local dir = vim.fn.tempname() .. "-bug2"
  vim.fn.mkdir(dir .. "/.threadradar/runs", "p")
  vim.fn.writefile(vim.fn.readfile(repo .. "/samples/python/bug2_producer_consumer/buggy.py", "b"), dir .. "/buggy.py", "b")
  local text = table.concat(vim.fn.readfile(repo .. "/analysis/tests/fixtures/timeline/bug2_producer_consumer.json", "b"), "\n")
  local recorded = text:match('"(/[^"]*/)samples/python/bug2_producer_consumer/buggy%.py"')
  H.check(recorded ~= nil, "the fixture names the recorded buggy.py")
  text = replace(text, recorded .. "samples/python/bug2_producer_consumer/", dir .. "/")
  text = replace(text, '"cwd":"' .. recorded:sub(1, -2) .. '"', '"cwd":"' .. dir .. '"')
  local run = dir .. "/.threadradar/runs/20200101T000000Z-bug2.json"
  vim.fn.writefile(vim.split(text, "\n", { plain = true }), run, "b")
  return dir, run
end

--- The float's rows: { row = {line, item} } for items of `kind`.
local function rows(view, kind)
  local out = {}
  local lines = H.lines(view.buf)
  for row, item in pairs(view.items) do
    if item.kind == kind then
      table.insert(out, { row = row, text = lines[row], item = item })
    end
  end
  table.sort(out, function(a, b)
    return a.row < b.row
  end)
  return out
end

local function open_float(cmd)
  local waits = require("threadradar.waits")
  vim.cmd(cmd or "ThreadRadarWaits")
  local view
  H.wait(15000, function()
    view = waits.view()
    return view and view.result
  end, "the waits float")
  return view
end

H.run("waits", function()
  local opened = {}
  H.setup({
    open_cmd = function(url)
      table.insert(opened, url)
    end,
  })
  local dir, run = project()
  local file = dir .. "/buggy.py"
  -- The truth: the CLI's answer on the same run.
  local truth = vim.fn.json_decode(vim.fn.system({ H.env("TR_BIN"), "waits", run, "--json" }))
  H.eq(vim.v.shell_error, 0, "threadradar waits --json")
  local ci
  for i, o in ipairs(truth.objects) do
    if o.object == COND then
      ci = i
    end
  end
  H.check(ci ~= nil, "the CLI lists " .. COND)
  local cond = truth.objects[ci]

  vim.cmd("edit " .. vim.fn.fnameescape(file))
  local lsp = require("threadradar.lsp")
  H.wait(15000, function()
    local c = lsp.client_for(0)
    return c and lsp.supports(c, "threadRadar/waits")
  end, "the server for the Bug 2 project")

  local waits = require("threadradar.waits")
  local view = open_float()
  local lines = H.lines(view.buf)
  local all = table.concat(lines, "\n")
  H.log("the float:\n" .. all)
  H.check(lines[1]:find("ThreadRadar waits", 1, true) ~= nil, "title: " .. lines[1])
  H.check(all:find(("sampled every %s"):format(waits.fmt_s(truth.period_s)), 1, true) ~= nil, "the sampling period")
  local kernel = 0
  for _, e in ipairs(truth.edges) do
    if e.evidence == "kernel" then
      kernel = kernel + 1
    end
  end
  H.check(all:find(("edges: %d kernel-exact, %d inferred"):format(kernel, #truth.edges - kernel), 1, true) ~= nil, "the edges by evidence")
  -- The counts are the server's (`counts`), per rule in its order; the float counts nothing.
  local counted = view.result.counts.edges
  H.eq({ counted.all, counted.kernel }, { #truth.edges, kernel }, "the server counted the edges the CLI lists")
  local rules = {}
  for _, r in ipairs(counted.inferred_by) do
    table.insert(rules, r.count .. " " .. r.evidence)
  end
  local line = ("edges: %d kernel-exact, %d inferred"):format(counted.kernel, counted.inferred) .. (counted.inferred > 0 and (" (" .. table.concat(rules, ", ") .. ")") or "")
  H.check(vim.tbl_contains(lines, line), "the server's counts as they are: " .. line)
  H.eq(waits.evidence(view.result, nil), counted, "the float's counts are the answer's")
  for i = 1, #truth.objects do
    H.eq(waits.evidence(view.result, i - 1), view.result.counts.objects[i], "object " .. i .. ": the server's counts")
  end
  for _, n in ipairs(truth.evidence.notes) do
    H.check(all:find("note: " .. n, 1, true) ~= nil, "the note: " .. n)
  end

  -- One row per object, in the CLI's order, with its figures.
  local objs = rows(view, "object")
  local by_row = {}
  for _, r in ipairs(objs) do
    by_row[r.item.object] = by_row[r.item.object] or r
  end
  H.eq(H.count(by_row), #truth.objects, "one object row per object")
  for i, o in ipairs(truth.objects) do
    local r = by_row[i - 1]
    H.check(r ~= nil and r.item.label == o.object and r.text:find(o.object, 1, true) ~= nil, "the row of " .. o.object)
  end
  local row = by_row[ci - 1]
  local cells = vim.split(vim.trim(row.text:sub(#COND + 5)), "%s%s+")
  local waiters = H.count(cond.waiters)
  H.log("condition row cells: " .. vim.inspect(cells))
  H.check(cells[1] == "threading.Condition (wait site)", "type: " .. tostring(cells[1]))
  H.eq({ cells[2], cells[3], cells[4], cells[5], cells[6], cells[7] }, {
    tostring(cond.waits),
    waits.fmt_s(cond.wait_s),
    waits.fmt_s(cond.p95_s),
    tostring(waiters),
    tostring(cond.futile_wakeups),
    truth.evidence.kernel and "kernel" or "inferred",
  }, "the condition's waits, total, p95, waiters, futile wake-ups, evidence")
  -- Its wakers with their shares (the CLI's: the four most frequent, share of the edges).
  local wline = lines[row.row + 1]
  H.check(view.items[row.row + 1].object == ci - 1, "the wakers line belongs to the object")
  local total, names = 0, {}
  for name, n in pairs(cond.wakers) do
    total = total + n
    table.insert(names, name)
  end
  H.check(#names >= 2, "several wakers of the condition")
  table.sort(names, function(a, b)
    if cond.wakers[a] ~= cond.wakers[b] then
      return cond.wakers[a] > cond.wakers[b]
    end
    return a < b
  end)
  for k = 1, math.min(4, #names) do
    local want = ("%s %.0f%%"):format(names[k], cond.wakers[names[k]] * 100 / total)
    H.check(wline:find(want, 1, true) ~= nil, ("waker %q in %q"):format(want, wline))
  end
  H.check(wline:find("inferred: ", 1, true) ~= nil or wline:find(" kernel", 1, true) ~= nil, "how its edges were found: " .. wline)
  local f = cond.frame
  local wl = lines[row.row + 2]
  H.check(wl:find("first waited at " .. f["function"] .. "  ", 1, true) ~= nil and wl:find("buggy.py:" .. f.line .. " ", 1, true) ~= nil, "where it was waited on: " .. wl)

  -- `e`: its edges, in time order, each with waker → wakee and evidence.
  local cond_edges = {}
  for k, e in ipairs(truth.edges) do
    if e.object == COND then
      table.insert(cond_edges, { e = e, k = k })
    end
  end
  table.sort(cond_edges, function(a, b)
    if a.e.time_s ~= b.e.time_s then
      return a.e.time_s < b.e.time_s
    end
    return a.k < b.k
  end)
  for k, c in ipairs(cond_edges) do
    cond_edges[k] = c.e
  end
  api.nvim_win_set_cursor(view.win, { row.row, 0 })
  H.feed("e")
  local edges = rows(view, "edge")
  H.eq(#edges, math.min(#cond_edges, waits.EDGES_PAGE), "`e` lists the condition's edges")
  H.check(H.lines(view.buf)[row.row]:sub(1, #"▾") == "▾", "the row is marked expanded")
  for k, r in ipairs(edges) do
    local e = cond_edges[k]
    H.check(r.item.object == ci - 1, "the edge belongs to the condition")
    H.check(r.text:find(e.waker .. " → " .. e.wakee, 1, true) ~= nil and r.text:find(waits.fmt_s(e.time_s), 1, true) ~= nil, ("edge %d: %s → %s at %s in %q"):format(k, e.waker, e.wakee, waits.fmt_s(e.time_s), r.text))
    H.check(r.text:find(e.evidence, 1, true) ~= nil, "its evidence: " .. r.text)
  end
  if H.check(#cond_edges > waits.EDGES_PAGE, "more edges than one page") then
    -- <CR> on "… more": the next page.
    local more = rows(view, "more")
    H.eq(#more, 1, "a row for more edges")
    api.nvim_win_set_cursor(view.win, { more[1].row, 0 })
    H.feed("<CR>")
    edges = rows(view, "edge")
    H.eq(#edges, math.min(#cond_edges, 2 * waits.EDGES_PAGE), "<CR> on it lists more")
    H.eq(#rows(view, "more"), #cond_edges > 2 * waits.EDGES_PAGE and 1 or 0, "and says whether any are left")
    H.check(edges[#edges].text:find(cond_edges[#edges].waker .. " → " .. cond_edges[#edges].wakee, 1, true) ~= nil, "the last edge listed: " .. edges[#edges].text)
  end

  -- `e` again (on an edge's row too) hides them, and shows them again.
  api.nvim_win_set_cursor(view.win, { edges[1].row, 0 })
  H.feed("e")
  H.eq(#rows(view, "edge"), 0, "`e` hides the edges")
  H.eq(waits.view().items[api.nvim_win_get_cursor(view.win)[1]].kind, "object", "the cursor back on the object's row")
  H.feed("e")
  edges = rows(view, "edge")
  H.eq(#edges, math.min(#cond_edges, waits.EDGES_PAGE), "`e` lists them again")

  -- <CR> on an edge with a waker's line: the float closes and the waker's line is shown.
  local target
  for k, r in ipairs(edges) do
    if type(cond_edges[k].waker_frame) == "table" then
      target = { row = r.row, frame = cond_edges[k].waker_frame }
      break
    end
  end
  H.check(target ~= nil, "an edge with its waker's line")
  api.nvim_win_set_cursor(view.win, { target.row, 0 })
  H.feed("<CR>")
  H.wait(5000, function()
    return waits.view() == nil
  end, "the float closes on <CR>")
  H.eq(api.nvim_buf_get_name(0), file, "<CR> on an edge opens buggy.py")
  H.eq(api.nvim_win_get_cursor(0)[1], target.frame.line, "at the waker's line")

  -- <CR> on the object: where it was waited on.
  view = open_float()
  row = rows(view, "object")
  for _, r in ipairs(row) do
    if r.item.label == COND then
      api.nvim_win_set_cursor(view.win, { r.row, 0 })
      break
    end
  end
  H.feed("<CR>")
  H.wait(5000, function()
    return waits.view() == nil
  end, "the float closes on <CR>")
  H.eq({ api.nvim_buf_get_name(0), api.nvim_win_get_cursor(0)[1] }, { file, f.line }, "<CR> on the object opens its waiting line")

  -- `b`: the Waits tab on the object in the browser.
  view = open_float()
  for _, r in ipairs(rows(view, "object")) do
    if r.item.label == COND then
      api.nvim_win_set_cursor(view.win, { r.row, 0 })
      break
    end
  end
  H.feed("b")
  H.wait(15000, function()
    return #opened == 1
  end, "the browser URL from `b`")
  local url = opened[1] or ""
  H.check(url:match("^http://127%.0%.0%.1:%d+/%?view=waits&object=threading%.Condition%%20in%%20Storage$") ~= nil, "`b` opens the Waits tab on the object: " .. url)
  local page = vim.fn.system({ "curl", "-sf", url })
  H.eq(vim.v.shell_error, 0, "the served page answers")
  H.check(page:find("id=\"waits\"", 1, true) ~= nil, "it is the panel page")
  waits.close()

  vim.cmd("ThreadRadarWaits browser")
  H.wait(15000, function()
    return #opened == 2
  end, "the browser URL of :ThreadRadarWaits browser")
  H.check((opened[2] or ""):match("^http://127%.0%.0%.1:%d+/%?view=waits$") ~= nil, "the Waits tab: " .. tostring(opened[2]))
  vim.cmd("ThreadRadarWaits browser Storage")
  H.wait(15000, function()
    return #opened == 3
  end, "the browser URL of :ThreadRadarWaits browser Storage")
  H.check((opened[3] or ""):match("%?view=waits&object=Storage$") ~= nil, "the Waits tab on the objects matching Storage: " .. tostring(opened[3]))

  -- A filter: only the objects whose label, type or name contains it (the server's `object`).
  view = open_float("ThreadRadarWaits Storage")
  local only = rows(view, "object")
  local labels = {}
  for _, r in ipairs(only) do
    labels[r.item.label] = true
  end
  H.eq(labels, { [COND] = true }, "the filter keeps the condition only")
  H.check(H.lines(view.buf)[1]:find("matching “Storage”", 1, true) ~= nil, "the title says so")
  H.feed("q")
  H.check(waits.view() == nil, "`q` closes the float")

  -- Hostile thread names: a newline and a tab keep every row on its line, the rest as text.
  local evil = "evil\nname\t<b>%s"
  -- (A fresh copy: vim.deepcopy of 0.7 refuses JSON's nulls.)
  local result = { view = vim.fn.json_decode(vim.fn.system({ H.env("TR_BIN"), "waits", run, "--json" })), bundles = vim.NIL }
  local o = result.view.objects[ci]
  o.wakers[evil] = 99
  for _, e in ipairs(result.view.edges) do
    if e.object_index == ci - 1 then
      e.waker = evil
    end
  end
  local b = waits.build(result, { expanded = { [ci - 1] = 5 } })
  local shown = 0
  for _, l in ipairs(b.lines) do
    H.check(not l:find("[\n\r\t]"), "no control character in a line: " .. vim.inspect(l))
    if l:find("evil?name?<b>%s", 1, true) then
      shown = shown + 1
    end
  end
  H.check(shown >= 2, "the hostile name is shown as text (wakers and edges): " .. shown)
  local scratch = require("threadradar.ui").open({ name = "hostile" })
  local ok, err = pcall(require("threadradar.ui").set, scratch, b)
  H.check(ok, "the float takes the lines: " .. tostring(err))
  require("threadradar.ui").close(scratch)
end, 90000)
