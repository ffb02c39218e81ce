-- The plugin's views fed the server's own answers: the JSON that tests/protocol.rs snapshots for
-- every method (tests/fixtures/protocol/*.json, real runs of the Bug 1 sample, paths as @ROOT@),
-- read at run time. A protocol change that breaks what Neovim shows fails here. The VS Code
-- extension's tests read the same files (editors/vscode/test/unit/fixtures.test.ts).
local H = dofile(os.getenv("TR_TESTS") .. "/helpers.lua")
local api = vim.api

local repo = vim.fn.fnamemodify(H.env("TR_TESTS"), ":p:h:h:h:h")
local dir = repo .. "/tests/fixtures/protocol"

local function fixture(name)
  local text = table.concat(vim.fn.readfile(dir .. "/" .. name), "\n")
  return vim.fn.json_decode((text:gsub("@ROOT@", repo)))
end

local function find(lines, needle)
  for i, l in ipairs(lines) do
    if l:find(needle, 1, true) then
      return i
    end
  end
end

H.run("fixtures", function()
  H.check(vim.fn.isdirectory(dir) == 1, "the fixtures are at " .. dir)
  H.setup()

  -- documentArtifacts → virtual text: one mark per artifact, on the server's line of the real
  -- file, with the server's label.
  do
    local vt = require("threadradar.virtual_text")
    local data = fixture("document-artifacts.json")
    local buf = api.nvim_create_buf(false, true)
    api.nvim_buf_set_lines(buf, 0, -1, false, vim.fn.readfile(repo .. "/samples/python/bug1_worker_manager/fixed.py"))
    vt.render(buf, data)
    local marks = H.marks(buf)
    H.check(#data.artifacts > 3, "the fixture has artifacts")
    for _, a in ipairs(data.artifacts) do
      local mark = marks[a.line]
      H.check(mark ~= nil, ("a mark on line %d (%s)"):format(a.line, a.qualname))
      if mark then
        H.check(mark:find(a.text, 1, true) ~= nil, ("line %d shows the server's radar %q: %q"):format(a.line, a.text, mark))
      end
      local header = api.nvim_buf_get_lines(buf, a.line, a.line + 1, false)[1] or ""
      local name = a.qualname:match("([^.]+)$")
      H.check(header:match("^%s*def%s+" .. name .. "%f[^%w_]") or header:match("^%s*class%s+" .. name .. "%f[^%w_]"), ("line %d of fixed.py declares %s: %q"):format(a.line, a.qualname, header))
    end
    api.nvim_buf_delete(buf, { force = true })
  end

  -- compare → the comparison float: a row per artifact, the changes in words, no verdict
  -- without run sets.
  do
    local compare = require("threadradar.compare")
    local result = fixture("compare.json")
    local lines = compare.build(result).lines
    H.check(find(lines, "ThreadRadar compare") == 1, "the compare title")
    for _, a in ipairs(result.artifacts) do
      H.check(find(lines, a.qualname) ~= nil, "a row for " .. a.qualname)
    end
    local changes = compare.change_lines(result)
    local shown = math.min(10, #result.changes)
    -- One line per change (at most 10), then the server's note on the changes left out.
    local left_out = result.suppressed_note ~= nil and result.suppressed_note ~= vim.NIL
    H.eq(#changes, shown + (left_out and 1 or 0), "one line per change (at most 10), and the note on those left out")
    for i = 1, shown do
      local c, want = changes[i], result.changes[i]
      H.eq(c[1][1], "  • " .. want.statement, "the server's words")
      H.eq(c[2][1], "  [" .. (want.evidence_text ~= vim.NIL and want.evidence_text or "") .. "]", "how the change was obtained, in the server's words")
      H.eq(c[3][1], "", "no verdict with one run per side")
    end
    if left_out then
      H.eq(changes[shown + 1][1][1], "  (" .. result.suppressed_note .. ")", "the changes left out, said once")
    end
    H.check(find(lines, "WorkerManager.__init__") ~= nil, "Bug 1's constructor is listed")

    local sets = fixture("compare-sets.json")
    local sl = compare.change_lines(sets)
    local head = ("Run sets: base n = %d, new n = %d; "):format(sets.significance.n_base, sets.significance.n_new)
    H.eq(sl[1][1][1]:sub(1, #head), head, "the sets' n's")
    for i, c in ipairs(sets.changes) do
      if i > 10 then
        break
      end
      local want = c.significant == vim.NIL and "" or (c.significant and "  (significant)" or "  (within noise)")
      H.eq(sl[i + 1][3][1], want, "the verdict of " .. c.statement)
    end
    for _, c in ipairs(compare.change_lines(fixture("compare-sets-same-runs.json"))) do
      H.check(c[3] == nil or c[3][1] ~= "  (significant)", "the same runs on both sides: nothing significant")
    end
    local cls = compare.build(fixture("compare-class.json")).lines
    H.check(find(cls, "class level") ~= nil and find(cls, "WorkerManager") ~= nil, "the class level")
  end

  -- traceCompare → the trace compare float: the matched share and every thread pair.
  do
    local tc = require("threadradar.tracecompare")
    for _, name in ipairs({ "trace-compare.json", "trace-compare-sets.json" }) do
      local result = fixture(name)
      local lines = tc.build(result).lines
      H.check(find(lines, ("%.1f%% of the stack time matched"):format(result.matched_share * 100)) ~= nil, name .. ": the matched share")
      for _, lane in ipairs(result.lanes) do
        H.check(find(lines, lane.a.name .. " [") ~= nil, name .. ": the pair of " .. lane.a.name)
      end
      for _, c in ipairs(result.changes) do
        H.check(find(lines, c.statement) ~= nil, name .. ": " .. c.statement)
      end
    end
  end

  -- runs → the run picker's lines.
  do
    local runs = require("threadradar.runs")
    local result = fixture("runs.json")
    for _, r in ipairs(result.runs) do
      local text = runs.format_run(r, result.summary)
      H.check(text:find(r.name, 1, true) ~= nil, "the run's name: " .. text)
      H.eq(text:sub(1, #"●") == "●", r.active == true, "the active mark of " .. r.name)
      if r.active then
        H.check(text:find(result.summary.command, 1, true) ~= nil, "the active run's command")
      end
    end
  end

  -- views → the saved views' lines (the fixture's list may be empty: its shape still holds).
  do
    local views = require("threadradar.views")
    local result = fixture("views.json")
    H.check(type(result.views) == "table", "views.json lists views")
    for _, v in ipairs(result.views) do
      H.check(views.format_view(v):find(v.note or "(no note)", 1, true) ~= nil, "a view's note")
    end
  end

  -- detail → the glyph and histogram lines of the detail float.
  do
    local detail = require("threadradar.detail")
    local ui = require("threadradar.ui")
    for _, name in ipairs({ "detail-init.json", "detail-program.json" }) do
      local d = fixture(name)
      local b = ui.builder()
      detail.glyph_lines(b, d.artifact)
      detail.histogram_lines(b, d)
      H.check(#b.lines > 2, name .. ": glyph and histogram lines")
      if #d.histogram_bins == 0 then
        H.check(find(b.lines, "(no selected thread)") ~= nil, name .. ": no bins, said so")
      else
        local top = 0
        for _, t in ipairs(d.threads) do
          if not t.excluded and t.crt ~= vim.NIL then
            top = math.max(top, t.crt)
          end
        end
        H.check(find(b.lines, require("threadradar.util").pct(top)) ~= nil, name .. ": the axis ends at the top thread's share")
      end
    end
  end
end)
