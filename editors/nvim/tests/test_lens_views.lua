-- (lens views) On a real recording of a program whose consumer waits in `q.get()` and whose
-- threads contend for a `with lock:` section:
-- - every lens is drawn once: after running one with vim.lsp.codelens.run() (the documented
--   way; the Timeline lens goes to the server, and Neovim then asks every server for lenses
--   again) and after vim.lsp.codelens.refresh(), Neovim's own lens display has drawn nothing and
--   each of the plugin's lens lines is there once;
-- - `K` is left alone (no mapping of the plugin's; Neovim's own stays), and every action has its
--   <Plug>(ThreadRadar…) mapping; keymaps = { hover = "K" } opts in;
-- - a section lens opens :ThreadRadarSections on its section, a wait lens :ThreadRadarWaits on
--   its object, whose row has the figures the lens has (one computation);
-- - the sections float lists what `threadradar sections --json` (the CLI) lists.
local H = dofile(os.getenv("TR_TESTS") .. "/helpers.lua")
local api = vim.api

local PROGRAM = {
  "import queue",
  "import threading",
  "import time",
  "",
  "q = queue.Queue()",
  "lock = threading.Lock()",
  "total = 0",
  "",
  "",
  "def spin(seconds):",
  "    end = time.perf_counter() + seconds",
  "    while time.perf_counter() < end:",
  "        pass",
  "",
  "",
  "def consume():",
  "    global total",
  "    for _ in range(20):",
  "        item = q.get()",
  "        with lock:",
  "            spin(0.01)",
  "            total += item",
  "",
  "",
  "def work():",
  "    for _ in range(12):",
  "        with lock:",
  "            spin(0.02)",
  "        time.sleep(0.005)",
  "",
  "",
  "threads = [threading.Thread(target=consume, name='consumer')]",
  "threads += [threading.Thread(target=work, name=f'worker-{i}') for i in range(2)]",
  "for t in threads:",
  "    t.start()",
  "for i in range(20):",
  "    time.sleep(0.02)",
  "    q.put(i)",
  "for t in threads:",
  "    t.join()",
}

--- A project with one real recording of PROGRAM. Returns the directory and the run file.
local function project()
  local dir = vim.fn.tempname() .. "-lenses"
  vim.fn.mkdir(dir .. "/.threadradar/runs", "p")
  vim.fn.writefile(PROGRAM, dir .. "/contend.py")
  local run = dir .. "/.threadradar/runs/20200101T000000Z-contend.json"
  local python = vim.trim(vim.fn.system({ "python3", "-c", "import sys; print(sys.executable)" }))
  local out = vim.fn.system({ H.env("TR_BIN"), "record", "-o", run, "--no-progress", "--", python, dir .. "/contend.py" })
  H.eq(vim.v.shell_error, 0, "record: " .. out)
  return dir, run
end

--- Runs the lens of row `row0` whose title matches `pattern` (vim.ui.select answers for us
--- when the line has several).
local function run_lens(row0, pattern)
  api.nvim_win_set_cursor(0, { row0 + 1, 0 })
  local original = vim.ui.select
  local offered = {}
  vim.ui.select = function(items, opts, on_choice)
    for _, it in ipairs(items) do
      local title = opts.format_item(it)
      table.insert(offered, title)
      if title:find(pattern) then
        return on_choice(it)
      end
    end
    on_choice(nil)
  end
  vim.lsp.codelens.run()
  vim.ui.select = original
  return offered
end

--- The row (0-based) and title of the first lens whose title matches `pattern`.
local function find_lens(pattern)
  local rows = {}
  for row in pairs(H.lens_lines(0)) do
    table.insert(rows, row)
  end
  table.sort(rows)
  for _, row in ipairs(rows) do
    for part in (H.lens_lines(0)[row] .. " | "):gmatch("(.-) | ") do
      if part:find(pattern) then
        return row, part
      end
    end
  end
  return nil
end

H.run("lens views", function()
  -- annotations = "all": the section, wait and Timeline lenses (the default "hints" has none).
  H.setup({ annotations = "all", open_cmd = function() end })
  local dir, run = project()
  vim.cmd("cd " .. vim.fn.fnameescape(dir))
  vim.cmd("edit " .. vim.fn.fnameescape(dir .. "/contend.py"))
  local buf = api.nvim_get_current_buf()
  H.wait(20000, function()
    return find_lens("^critical section") and find_lens(": waited ") and find_lens("^Timeline$")
  end, "section, wait and timeline lenses in contend.py")
  H.log("lenses:\n" .. vim.inspect(H.lens_lines(0)))

  -- K left alone: no buffer mapping of the plugin's (Neovim 0.10+ maps K to its own hover).
  local k = vim.fn.maparg("K", "n", false, true)
  H.check(not (k.desc or ""):find("ThreadRadar", 1, true) and not (k.rhs or ""):find("ThreadRadar", 1, true), "K is not the plugin's: " .. vim.inspect(k))
  for _, name in ipairs({ "Hover", "CodeLens", "Overview", "Detail", "Timeline", "Waits", "Sections", "Runs", "Hottest", "Record", "Stop", "RecordLog", "Compare", "TraceCompare", "Open", "ClearFilter", "Refresh", "Toggle" }) do
    H.check(vim.fn.maparg("<Plug>(ThreadRadar" .. name .. ")", "n") ~= "", "<Plug>(ThreadRadar" .. name .. ") is mapped")
  end

  -- The Timeline lens runs on the server; Neovim then refreshes every lens (codelens.lua).
  local before = H.lens_lines(0)
  local row = find_lens("^Timeline$")
  run_lens(row, "^Timeline$")
  local timeline = require("threadradar.timeline")
  H.wait(15000, function()
    return timeline.view() and timeline.view().layout
  end, "the timeline float from the Timeline lens")
  timeline.close()
  vim.lsp.codelens.refresh({ bufnr = buf })
  -- Both refreshes answered: the lens request after them has come back too.
  local lsp = require("threadradar.lsp")
  local answered = false
  lsp.request(lsp.client_of_buffer(buf), "textDocument/codeLens", { textDocument = { uri = vim.uri_from_bufnr(buf) } }, function()
    answered = true
  end)
  H.wait(15000, function()
    return answered
  end, "a code lens answer after the refreshes")
  vim.wait(200, function()
    return false
  end)
  H.eq(H.builtin_lens_marks(buf), {}, "Neovim's own lens display drew none of ours")
  H.eq(H.lens_lines(buf), before, "each lens line once, as before")

  -- A section lens opens the sections float on its section.
  local srow, stitle = find_lens("^critical section")
  run_lens(srow, "^critical section")
  local sections = require("threadradar.sections")
  local sv
  H.wait(15000, function()
    sv = sections.view()
    return sv and sv.result
  end, "the sections float from the section lens")
  local item = require("threadradar.ui").item(sv)
  H.check(item and item.kind == "section" and item.line == srow + 1 and item.focus, "the cursor is on the lens's section: " .. vim.inspect(item and item.section))
  local text = table.concat(H.lines(sv.buf), "\n")
  H.log("the sections float:\n" .. text)
  H.check(text:find("▶ ", 1, true) ~= nil, "the lens's section is marked")
  -- The figures are the CLI's.
  -- (stdout only: system() would mix in the notes the CLI writes on stderr, e.g. a file a frame
  -- names that cannot be read.)
  local truth = vim.fn.json_decode(vim.fn.system({ "sh", "-c", '"$0" sections "$1" --json 2>/dev/null', H.env("TR_BIN"), run }))
  H.eq(vim.v.shell_error, 0, "threadradar sections --json")
  H.eq(#sv.result.sections, #truth.sections, "as many sections as the CLI")
  for _, s in ipairs(truth.sections) do
    H.check(text:find(s.lock, 1, true) ~= nil, "the float names " .. s.lock)
    if s.execution_count > 0 then
      H.check(text:find(("%d executions? · median %s"):format(s.execution_count, sections.fmt_s(s.median_s):gsub("%p", "%%%0"))) ~= nil, "executions and median of " .. s.lock)
    end
    if s.short.count_at_least > 0 then
      H.check(text:find(("at least %d more were shorter than one period"):format(s.short.count_at_least), 1, true) ~= nil, "what the samples could not see, for " .. s.lock)
    end
  end
  H.check(stitle:find("executions", 1, true) ~= nil and not stitle:find(" runs", 1, true), "the lens counts executions: " .. stitle)
  sections.close()

  -- A wait lens opens the waits float on its object, with the lens's figures.
  local wrow, wtitle = find_lens(": waited ")
  local object = wtitle:match("^(.-): waited ")
  local waits_here = tonumber((wtitle:match(" · ([%d ]+) waits? · "):gsub(" ", "")))
  run_lens(wrow, ": waited ")
  local waits = require("threadradar.waits")
  local wv
  H.wait(15000, function()
    wv = waits.view()
    return wv and wv.result
  end, "the waits float from the wait lens")
  H.eq(wv.filter, object, "the waits float shows the lens's object")
  local v = wv.result.view
  local row_of
  for i, o in ipairs(v.objects) do
    if o.object == object then
      row_of = i - 1
    end
  end
  H.check(row_of ~= nil, "the float lists " .. object)
  local lines_of = {}
  for _, iv in ipairs(v.intervals) do
    if iv.object == row_of then
      lines_of[iv.frame ~= vim.NIL and iv.frame and iv.frame.line or 0] = true
    end
  end
  if H.count(lines_of) == 1 and lines_of[wrow + 1] then
    -- Waited on at this line only: the lens and the float's row are one computation.
    H.eq(waits_here, v.objects[row_of + 1].waits, "the lens's waits = the float's row (" .. wtitle .. ")")
  end
  for _, o in ipairs(v.objects) do
    if o.object == object then
      H.check(o.type ~= "GIL", "a wait lens is never the GIL's")
    end
  end
  waits.close()

  -- Opting in to a key.
  require("threadradar").setup({ server_path = H.env("TR_BIN"), open_cmd = function() end, keymaps = { hover = "K" } })
  vim.fn.writefile({ "x = 1" }, dir .. "/other.py")
  vim.cmd("edit " .. vim.fn.fnameescape(dir .. "/other.py"))
  H.wait(10000, function()
    return (vim.fn.maparg("K", "n", false, true).rhs or ""):find("<Plug>(ThreadRadarHover)", 1, true) ~= nil
  end, "keymaps = { hover = \"K\" } maps K to <Plug>(ThreadRadarHover)")
end, 90000)
