-- (timeline) :ThreadRadarTimeline on Worker.run: one row per thread with samples, the cells where
-- Worker.run ran highlighted on exactly the threads whose bars `threadradar timeline --json`
-- (the CLI, another path through the analysis) lists for it; `>` `<` pan later and earlier,
-- `+` `-` zoom in and out, `<CR>` on a highlighted cell jumps into the sample; the "Timeline" code
-- lens opens the same float through the server's `threadradar.openTimeline`;
-- `:ThreadRadarTimeline browser` opens the web panel's Timeline tab through `threadradar serve`
-- (the URL a browser would get, fetched for real).
local H = dofile(os.getenv("TR_TESTS") .. "/helpers.lua")
local api = vim.api

local opened = {}

local function range_line(view)
  return H.lines(view.buf)[2]
end

--- Rows of the float with a highlighted cell: { thread name → true }.
local function highlighted_threads(view)
  local ns = require("threadradar.ui").ns
  local out = {}
  local lines = H.lines(view.buf)
  for _, m in ipairs(api.nvim_buf_get_extmarks(view.buf, ns, 0, -1, { details = true })) do
    if m[4].hl_group == "ThreadRadarTimelineHit" then
      local item = view.items[m[2] + 1]
      if item and item.thread then
        out[vim.trim(lines[m[2] + 1]:sub(1, 18))] = m[2] + 1
      end
    end
  end
  return out
end

H.run("timeline", function()
  -- annotations = "all": the Timeline lens (the default "hints" has none).
  H.setup({
    annotations = "all",
    open_cmd = function(url)
      table.insert(opened, url)
    end,
  })
  H.open_sample()
  local src = api.nvim_get_current_buf()
  local report = H.expect("new-function")
  local run
  for _, a in ipairs(report.artifacts) do
    if a.qualname == "Worker.run" then
      run = a
    end
  end
  -- The truth: the threads with a Worker.run bar, from the CLI's bars.
  local bars = vim.fn.json_decode(vim.fn.system({ H.env("TR_BIN"), "timeline", H.env("TR_RUN_NEW"), "--json" }))
  local want, with_samples = {}, 0
  for _, t in ipairs(bars.threads) do
    if #t.bars > 0 then
      with_samples = with_samples + 1
    end
    for _, b in ipairs(t.bars) do
      if b["function"] == "Worker.run" then
        want[t.name] = true
      end
    end
  end
  H.check(H.count(want) >= 2, "the run has Worker.run bars on several threads")

  api.nvim_win_set_cursor(0, { run.line + 2, 0 })
  local timeline = require("threadradar.timeline")
  vim.cmd("ThreadRadarTimeline")
  local view
  H.wait(10000, function()
    view = timeline.view()
    return view and view.layout
  end, "the timeline float")
  local lines = H.lines(view.buf)
  H.check(lines[1]:find("Worker.run highlighted", 1, true) ~= nil, "the title names the artifact: " .. lines[1])
  local rows = 0
  for _, item in pairs(view.items) do
    if item.thread then
      rows = rows + 1
    end
  end
  H.eq(rows, with_samples, "one row per thread with samples")
  local hit = highlighted_threads(view)
  for name in pairs(want) do
    H.check(hit[name] ~= nil, "Worker.run is highlighted on " .. name)
  end
  for name in pairs(hit) do
    H.check(want[name] ~= nil, "nothing highlighted on " .. name .. ", which never ran Worker.run")
  end
  H.check(table.concat(lines, "\n"):find("sampled: ", 1, true) ~= nil, "the float says how it was obtained")

  -- Zoom in, then pan: the range shown changes (and stays inside the run).
  local before = range_line(view)
  H.feed("+")
  H.wait(5000, function()
    return range_line(view) ~= before
  end, "zoom in")
  local zoomed = range_line(view)
  local z = { from = view.layout.from_s, to = view.layout.to_s }
  H.check(z.to - z.from < view.layout.run_to_s - view.layout.run_from_s, "'+' narrowed the range")
  H.feed(">")
  H.wait(5000, function()
    return range_line(view) ~= zoomed
  end, "pan right")
  local panned = range_line(view)
  local p = { from = view.layout.from_s, to = view.layout.to_s }
  H.check(p.from > z.from, ("'>' moved the range later: %.4f → %.4f s"):format(z.from, p.from))
  -- And back: `<` pans left (earlier), `-` zooms out (a wider range).
  H.feed("<")
  H.wait(5000, function()
    return range_line(view) ~= panned
  end, "pan left")
  local back = range_line(view)
  local b = { from = view.layout.from_s, to = view.layout.to_s }
  H.check(b.from < p.from and b.to < p.to, ("'<' moved the range earlier: %.4f–%.4f → %.4f–%.4f s"):format(p.from, p.to, b.from, b.to))
  H.feed("-")
  H.wait(5000, function()
    return range_line(view) ~= back
  end, "zoom out")
  local w = { from = view.layout.from_s, to = view.layout.to_s }
  H.check(w.to - w.from > b.to - b.from, ("'-' widened the range: %.4f → %.4f s"):format(b.to - b.from, w.to - w.from))
  H.feed("0")
  H.wait(5000, function()
    return range_line(view) == before
  end, "back to the whole run")

  -- <CR> on a highlighted cell of a worker: into the sample, on a line inside Worker.run or below.
  local name, row = next(hit)
  local line = H.lines(view.buf)[row]
  local ns = require("threadradar.ui").ns
  local col
  for _, m in ipairs(api.nvim_buf_get_extmarks(view.buf, ns, { row - 1, 0 }, { row - 1, -1 }, { details = true })) do
    if m[4].hl_group == "ThreadRadarTimelineHit" then
      col = m[3]
      break
    end
  end
  H.check(col ~= nil and #line > col, "a highlighted cell on " .. tostring(name))
  api.nvim_win_set_cursor(view.win, { row, col })
  H.feed("<CR>")
  H.wait(5000, function()
    return timeline.view() == nil
  end, "the float closes on <CR>")
  H.eq(api.nvim_buf_get_name(0), H.sample_file(), "<CR> opens the sample")
  local at = api.nvim_win_get_cursor(0)[1]
  -- Worker.run's body: from its def to the next line indented no deeper than the def.
  local text = H.lines(0)
  local indent = #text[run.line]:match("^%s*")
  local last = run.line
  for i = run.line + 1, #text do
    if text[i]:match("%S") then
      if #text[i]:match("^%s*") <= indent then
        break
      end
      last = i
    end
  end
  H.check(at > run.line and at <= last, ("the cursor on a line of Worker.run's body (line %d, body %d–%d)"):format(at, run.line + 1, last))

  -- The "Timeline" lens runs threadradar.openTimeline on the server, which opens the float.
  api.nvim_set_current_buf(src)
  local lens
  H.wait(10000, function()
    for _, l in ipairs(vim.lsp.codelens.get(src)) do
      if l.range.start.line == run.line - 1 and l.command and l.command.command == "threadradar.openTimeline" then
        lens = l
      end
    end
    return lens ~= nil
  end, "the Timeline lens of Worker.run")
  H.eq(lens.command.title, "Timeline", "the lens title")
  vim.lsp.buf_request(src, "workspace/executeCommand", { command = lens.command.command, arguments = lens.command.arguments }, function() end)
  H.wait(10000, function()
    view = timeline.view()
    return view and view.layout and view.layout.focus ~= nil
  end, "the timeline float from the lens")
  H.check(H.lines(view.buf)[1]:find("Worker.run", 1, true) ~= nil, "focused on Worker.run")
  timeline.close()

  -- :ThreadRadarTimeline browser: `threadradar serve`, its Timeline tab on Worker.run.
  vim.cmd("ThreadRadarTimeline browser")
  H.wait(15000, function()
    return #opened == 1
  end, "the browser URL")
  local url = opened[1]
  H.check(url:match("^http://127%.0%.0%.1:%d+/%?view=timeline&artifact=function%%3A") ~= nil, "the URL opens the Timeline tab on the artifact: " .. url)
  local page = vim.fn.system({ "curl", "-sf", url })
  H.eq(vim.v.shell_error, 0, "the served page answers")
  H.check(page:find("id=\"timeline\"", 1, true) ~= nil, "it is the panel page")
end)
