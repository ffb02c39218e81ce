-- (8) :ThreadRadarCompare: the rows as a pure function, then the real comparison of the buggy
-- run ("new", 6 workers) with the run of fixed.py: WorkerManager.__init__ went from N threads
-- (the buggy run's report) to 1, and <CR> opens fixed.py at its def.
local H = dofile(os.getenv("TR_TESTS") .. "/helpers.lua")
local api = vim.api

local function text_of(chunks)
  local parts = {}
  for _, c in ipairs(chunks) do
    table.insert(parts, c[1])
  end
  return table.concat(parts)
end

local function hl_of(chunks, pattern)
  for _, c in ipairs(chunks) do
    if c[1]:find(pattern, 1, true) then
      return c[2]
    end
  end
end

local function artifact(report, qualname)
  for _, a in ipairs(report.artifacts) do
    if a.qualname == qualname then
      return a
    end
  end
end

local function rows_of(view)
  local out = {}
  for row, item in pairs(view.items) do
    if item.row then
      out[#out + 1] = { row = row, item = item }
    end
  end
  table.sort(out, function(a, b)
    return a.row < b.row
  end)
  return out
end

local function find_row(view, qualname)
  for _, r in ipairs(rows_of(view)) do
    if r.item.qualname == qualname then
      return r.row, r.item
    end
  end
end

H.run("compare", function()
  -- The rows (pure): the server's order, "added"/"removed", Δ highlights, jump targets.
  local compare = require("threadradar.compare")
  H.setup()
  local side = function(crt, threads, seconds)
    return { crt = crt, seconds = seconds, threads = threads, glyph = { { colour = "low", threads = threads, avg = "low", sum = "high", text = "▂█×" .. threads } } }
  end
  local fake = {
    level = "function",
    artifacts = {
      { kind = "function", qualname = "A.f", file_base = "/p/old.py", file_new = "/p/new.py", line_base = 10, line_new = 12, file_kind = "user", base = side(0.5, 10, 1.0), new = side(0.25, 1, 0.1), crt_delta = -0.25, crt_delta_text = "-25.0pp", trend = "decrease", threads_delta = -9, status = "changed" },
      { kind = "function", qualname = "g", file_base = vim.NIL, file_new = "/p/new.py", line_base = vim.NIL, line_new = 30, file_kind = "user", base = vim.NIL, new = side(0.124, 1, 0.05), crt_delta = 0.124, crt_delta_text = "+12.4pp", trend = "increase", threads_delta = 1, status = "added" },
      { kind = "function", qualname = "h", file_base = "/p/old.py", line_base = 40, file_kind = "user", base = side(0.01, 2, 0.01), crt_delta = -0.01, crt_delta_text = "-1.0pp", trend = "decrease", threads_delta = -2, status = "removed" },
      { kind = "function", qualname = "same", file_base = "/q/a.py", file_new = "/q/a.py", line_base = 5, line_new = 5, file_kind = "user", base = side(0.1, 3, 0.2), new = side(0.1002, 3, 0.1), crt_delta = 0.0002, crt_delta_text = "0.0pp", trend = "same", threads_delta = 0, status = "changed" },
    },
  }
  local r = compare.rows(fake)
  H.eq(#r.rows, 4, "one row per artifact")
  local names = {}
  for _, row in ipairs(r.rows) do
    table.insert(names, row.item.qualname)
  end
  H.eq(names, { "A.f", "g", "h", "same" }, "the server's order")
  local t1, t2, t3, t4 = text_of(r.rows[1].chunks), text_of(r.rows[2].chunks), text_of(r.rows[3].chunks), text_of(r.rows[4].chunks)
  H.check(t1:find("50.0% →  25.0%", 1, true) ~= nil, "crt base → new: " .. t1)
  H.check(t1:find("-25.0pp", 1, true) ~= nil and hl_of(r.rows[1].chunks, "-25.0pp") == "ThreadRadarDecrease", "a decrease: " .. t1)
  H.check(t1:find("10 → 1 ", 1, true) ~= nil, "threads base → new: " .. t1)
  H.check(t1:find("▂█×10 → ▂█×1", 1, true) ~= nil, "radar base → new: " .. t1)
  H.check(t1:find("/p/old.py:10 → new.py:12", 1, true) ~= nil, "the file moved: " .. t1)
  H.check(t2:find("+12.4pp", 1, true) ~= nil and hl_of(r.rows[2].chunks, "+12.4pp") == "ThreadRadarIncrease", "an increase: " .. t2)
  H.check(t2:find("added", 1, true) ~= nil and t2:find("— → ", 1, true) ~= nil, "added, absent base: " .. t2)
  H.check(t3:find("removed", 1, true) ~= nil and t3:find(" → —", 1, true) ~= nil, "removed, absent new: " .. t3)
  H.check(t4:find("0.0pp", 1, true) ~= nil and hl_of(r.rows[4].chunks, "0.0pp") == "ThreadRadarText", "no visible change: " .. t4)
  H.eq({ r.rows[1].item.file, r.rows[1].item.line }, { "/p/new.py", 12 }, "<CR> target: the new side")
  H.eq({ r.rows[3].item.file, r.rows[3].item.line }, { "/p/old.py", 40 }, "<CR> target of a removed one: the base side")
  H.check(r.columns:find("crt base → new", 1, true) == 1 and r.columns:find("threads", 1, true) ~= nil, "column heads: " .. r.columns)
  -- Columns line up: "→" of the crt at the same display column in every row.
  local col = vim.fn.strdisplaywidth(t1:sub(1, t1:find("→", 1, true) - 1))
  for _, t in ipairs({ t2, t3, t4 }) do
    H.eq(vim.fn.strdisplaywidth(t:sub(1, t:find("→", 1, true) - 1)), col, "aligned crt column")
  end
  H.eq(#compare.rows({ artifacts = {} }).rows, 0, "no artifacts, no rows")

  -- The real comparison.
  H.open_sample()
  local source_win = api.nvim_get_current_win()
  local buggy = vim.fn.fnamemodify(H.env("TR_RUN_NEW"), ":t")
  local fixed = vim.fn.fnamemodify(H.env("TR_RUN_FIXED"), ":t")
  local names_ = compare.complete("")
  H.check(vim.tbl_contains(names_, buggy) and vim.tbl_contains(names_, fixed), "completion has the runs: " .. vim.inspect(names_))
  H.eq(compare.complete("20200101T00005"), { fixed }, "completion by prefix")
  H.eq(vim.fn.getcompletion("ThreadRadarCompare " .. buggy .. " 20200101T00005", "cmdline"), { fixed }, "<Tab> completes the second run")
  local init_buggy = artifact(H.expect("new-function"), "WorkerManager.__init__")
  local init_fixed = artifact(H.expect("fixed-function"), "WorkerManager.__init__")
  H.check(init_buggy ~= nil and init_fixed ~= nil, "both reports have WorkerManager.__init__")
  H.check(init_buggy.threads > 1, "the buggy run built the manager in several threads")
  compare.reset()
  -- Quoted names: the server splits the argument line (threadRadar/splitCommand).
  vim.cmd("ThreadRadarCompare '" .. buggy .. "' \"" .. fixed .. "\"")
  H.wait(10000, function()
    return compare.view() ~= nil
  end, "the comparison float")
  local view = compare.view()
  H.check(view and api.nvim_win_get_config(view.win).relative ~= "", "a floating window")
  local text = table.concat(H.lines(view.buf), "\n")
  H.check(text:find("base " .. buggy:gsub("%.json$", "") .. " (", 1, true) ~= nil, "the base run in the header:\n" .. text)
  H.check(text:find("new " .. fixed:gsub("%.json$", "") .. " (", 1, true) ~= nil, "the new run in the header")
  local row, item = find_row(view, "WorkerManager.__init__")
  H.check(row ~= nil, "WorkerManager.__init__ is listed")
  local line = H.lines(view.buf)[row] or ""
  H.check(line:find(("%d → 1 "):format(init_buggy.threads), 1, true) ~= nil, ("threads %d → 1: %s"):format(init_buggy.threads, line))
  local crt_part = line:match("^%s*(%S+) →%s*(%S+)")
  H.eq({ line:match("^%s*(%S+) →%s*(%S+)") }, { H.pct(init_buggy.crt), H.pct(init_fixed.crt) }, "crt base → new = the two reports' (" .. tostring(crt_part) .. ")")
  H.eq(item and item.file, H.env("TR_WS") .. "/bug1_worker_manager/fixed.py", "its new file")
  -- The changes: the server's data (figure, before → after, evidence) in its words and order,
  -- each with its evidence; what it left out for too few samples, said as it says it.
  local changes = view.data.changes
  H.check(#changes > 0, "the server found changes")
  for i, ch in ipairs(changes) do
    if i > 10 then
      break
    end
    H.check(type(ch.figure) == "string" and type(ch.before) == "number" and type(ch.after) == "number", "a typed change: " .. vim.inspect(ch))
    local shown = "• " .. ch.statement .. "  [" .. ch.evidence_text .. "]"
    H.check(text:find(shown, 1, true) ~= nil, "change " .. i .. " with its evidence: " .. shown .. "\n" .. text)
  end
  local note = view.data.suppressed_note
  if note ~= vim.NIL and note ~= nil then
    H.check(text:find(note, 1, true) ~= nil, "the suppressed changes are said: " .. note)
  end

  -- `s`: the standard library hidden (as `compare --no-stdlib`); again: shown.
  local before = #rows_of(view)
  local stdlib = 0
  for _, r_ in ipairs(rows_of(view)) do
    if r_.item.file_kind == "stdlib" then
      stdlib = stdlib + 1
    end
  end
  H.check(stdlib > 0, "stdlib rows listed by default")
  local renders = 0
  view.on_render = function()
    renders = renders + 1
  end
  H.feed("s")
  H.wait(10000, function()
    return renders == 1
  end, "the comparison without the standard library")
  for _, r_ in ipairs(rows_of(view)) do
    H.check(r_.item.file_kind ~= "stdlib", "no stdlib row: " .. r_.item.qualname)
  end
  H.check(#rows_of(view) < before, "fewer rows")
  H.check(table.concat(H.lines(view.buf), "\n"):find("stdlib hidden", 1, true) ~= nil, "the filter is shown")
  -- `c`: classes; WorkerManager from N threads to 1.
  H.feed("c")
  H.wait(10000, function()
    return renders == 2
  end, "the class level")
  local kinds = {}
  for _, r_ in ipairs(rows_of(view)) do
    kinds[r_.item.kind] = true
  end
  H.eq(kinds, { class = true }, "only classes")
  H.check(find_row(view, "WorkerManager") ~= nil, "WorkerManager is listed")
  H.feed("c")
  H.wait(10000, function()
    return renders == 3
  end, "the function level again")
  H.feed("s")
  H.wait(10000, function()
    return renders == 4
  end, "the standard library again")
  H.eq(#rows_of(view), before, "the same rows again")

  -- <CR> on WorkerManager.__init__: fixed.py at its def, in the source window.
  row = find_row(view, "WorkerManager.__init__")
  api.nvim_win_set_cursor(view.win, { row, 0 })
  H.feed("<CR>")
  H.wait(5000, function()
    return api.nvim_buf_get_name(0) == H.env("TR_WS") .. "/bug1_worker_manager/fixed.py"
  end, "fixed.py opened")
  H.eq(api.nvim_win_get_cursor(0)[1], init_fixed.line, "the line of __init__ in fixed.py")
  H.check((H.lines(0)[init_fixed.line] or ""):find("def __init__", 1, true) ~= nil, "the cursor is on the def")
  H.eq(api.nvim_get_current_win(), source_win, "the jump happens in the source window")
  H.check(compare.view() == nil, "the float is closed")

  -- No argument: the active (newest) run against the one recorded before it.
  vim.cmd("ThreadRadarCompare")
  H.wait(10000, function()
    return compare.view() ~= nil
  end, "the default comparison")
  text = table.concat(H.lines(compare.view().buf), "\n")
  H.check(text:find("base " .. fixed:gsub("%.json$", ""), 1, true) ~= nil and text:find("new " .. buggy:gsub("%.json$", ""), 1, true) ~= nil, "newest against the one before:\n" .. text:sub(1, 300))
  compare.close()

  -- An unknown run: one notification, no float, no error.
  local notes = H.capture_notifications()
  vim.cmd("ThreadRadarCompare nosuchrun.json")
  H.wait(5000, function()
    return #notes > 0
  end, "the notification for an unknown run")
  vim.wait(200, function()
    return false
  end)
  H.eq(#notes, 1, "one notification")
  H.check(compare.view() == nil, "no float")
  H.eq(vim.v.errmsg, "", "no error message")
  -- Three runs: the usage, once; an unclosed quote: the server's sentence, once.
  vim.cmd("ThreadRadarCompare a b c")
  vim.cmd("ThreadRadarCompare 'a b")
  H.wait(5000, function()
    return #notes >= 3
  end, "two more notifications")
  vim.wait(200, function()
    return false
  end)
  H.eq(#notes, 3, "one notification each")
  -- The server answers the two splits in either order.
  local said = notes[2].msg .. "\n" .. notes[3].msg
  H.check(said:find("at most two runs", 1, true) ~= nil, said)
  H.check(said:find("a quote is not closed", 1, true) ~= nil, said)
  H.check(compare.view() == nil, "no float")
end)
