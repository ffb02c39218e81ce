-- (1) Virtual text: extmarks in the namespace "threadradar" on exactly the profiled declaration
-- lines of buggy.py, with the figures and the cluster colours of the report; they follow edits.
local H = dofile(os.getenv("TR_TESTS") .. "/helpers.lua")
local api = vim.api

H.run("extmarks", function()
  H.setup()
  H.open_sample()
  local file = H.sample_file()
  local expected = H.expected_declarations("new", file)
  local marks = H.marks(0)
  local want_rows, got_rows = {}, {}
  for line in pairs(expected) do
    table.insert(want_rows, line - 1)
  end
  for row in pairs(marks) do
    table.insert(got_rows, row)
  end
  table.sort(want_rows)
  table.sort(got_rows)
  H.check(#want_rows >= 5, "the report lists the sample's declarations")
  H.eq(got_rows, want_rows, "rows of the extmarks = profiled declaration lines")

  -- The radars start in one column, as the README shows them: line width + the eol gap (one
  -- cell) + the leading blanks of the virtual text.
  local lines = H.lines(0)
  local starts = {}
  for _, m in ipairs(api.nvim_buf_get_extmarks(0, H.ns, 0, -1, { details = true })) do
    local lead = (m[4].virt_text[1] or { "" })[1]
    if lead:match("^ +$") and vim.fn.strdisplaywidth(lines[m[2] + 1]) <= 100 then
      starts[vim.fn.strdisplaywidth(lines[m[2] + 1]) + 1 + #lead] = true
    end
  end
  H.eq(H.count(starts), 1, "every radar starts in the same column: " .. vim.inspect(starts))

  -- Each mark: the text glyph and the crt of its artifact; only def/class lines.
  for line, a in pairs(expected) do
    local text = marks[line - 1] or ""
    H.check(text:find(H.pct(a.crt), 1, true) ~= nil, ("line %d shows crt %s: %q"):format(line, H.pct(a.crt), text))
    H.check(lines[line]:match("^%s*def ") or lines[line]:match("^%s*class "), ("line %d is a def/class line"):format(line))
  end

  -- Cell colours: one highlighted chunk per cluster in ThreadRadarLow/Mid/High.
  local ns = H.ns
  local run_line
  for line, a in pairs(expected) do
    if a.qualname == "Worker.run" then
      run_line = line
    end
  end
  local ext = api.nvim_buf_get_extmarks(0, ns, { run_line - 1, 0 }, { run_line - 1, -1 }, { details = true })[1]
  local colours = {}
  for _, chunk in ipairs(ext[4].virt_text) do
    if chunk[2] and chunk[2]:match("^ThreadRadar[LMH]") then
      table.insert(colours, chunk[2])
    end
  end
  local want = {}
  local names = { low = "ThreadRadarLow", middle = "ThreadRadarMid", high = "ThreadRadarHigh" }
  local colour_of = #expected[run_line].glyph == 1 and { "low" }
    or (#expected[run_line].glyph == 2 and { "low", "high" } or { "low", "middle", "high" })
  for _, c in ipairs(colour_of) do
    table.insert(want, names[c])
  end
  H.eq(colours, want, "Worker.run's cells in cluster colours")
  H.check(vim.fn.hlexists("ThreadRadarLow") == 1 and vim.fn.hlexists("ThreadRadarHigh") == 1, "highlight groups exist")

  -- Three lines inserted at the top: after the refresh the marks move with the code.
  -- (Extmarks move with the text by themselves: clear them, so only a redraw from the server's
  -- answer for the edited text can bring them back.)
  api.nvim_buf_set_lines(0, 0, 0, false, { "# one", "# two", "# three" })
  api.nvim_buf_clear_namespace(0, ns, 0, -1)
  vim.cmd("doautocmd TextChanged")
  H.wait(5000, function()
    local m = H.marks(0)
    return m[run_line - 1 + 3] ~= nil and m[run_line - 1] == nil
  end, "the marks to follow the inserted lines")
  local moved = {}
  for row in pairs(H.marks(0)) do
    table.insert(moved, row - 3)
  end
  table.sort(moved)
  H.eq(moved, want_rows, "rows after the edit = declaration lines + 3")

  -- A server without threadRadar/documentArtifacts (older builds): the same marks from the
  -- inlay hints and the file's overview.
  local lsp = require("threadradar.lsp")
  local vt = require("threadradar.virtual_text")
  local supports = lsp.supports
  local current = H.marks(0)
  lsp.supports = function(client, method)
    if method == "threadRadar/documentArtifacts" then
      return false
    end
    return supports(client, method)
  end
  api.nvim_buf_clear_namespace(0, ns, 0, -1)
  vt.refresh(api.nvim_get_current_buf())
  H.wait(5000, function()
    return H.count(H.marks(0)) > 0
  end, "the marks from the inlay hints")
  lsp.supports = supports
  H.eq(H.marks(0), current, "marks from the inlay hints = marks from documentArtifacts")

  -- virtual_text.position = "above": the radar and figures on a virtual line of their own above
  -- each declaration, indented like it, nothing at the end of the line.
  local config = require("threadradar.config")
  config.options.virtual_text = { position = "above" }
  api.nvim_buf_clear_namespace(0, ns, 0, -1)
  vt.refresh(api.nvim_get_current_buf())
  local above
  H.wait(5000, function()
    above = api.nvim_buf_get_extmarks(0, ns, { run_line - 1 + 3, 0 }, { run_line - 1 + 3, -1 }, { details = true })[1]
    return above ~= nil
  end, "the radar above Worker.run")
  local d = above[4]
  H.eq(d.virt_lines_above, true, "the radar is a virtual line above")
  H.eq(d.virt_text, nil, "nothing at the end of the line")
  local text = ""
  for _, chunk in ipairs(d.virt_lines[1]) do
    text = text .. chunk[1]
  end
  local header = api.nvim_buf_get_lines(0, run_line - 1 + 3, run_line + 3, false)[1]
  H.check(text:sub(1, #header:match("^%s*")) == header:match("^%s*"), "indented like the declaration: " .. text)
  H.check(text:find(H.pct(expected[run_line].crt), 1, true) ~= nil, "the crt in the radar line: " .. text)
  config.options.virtual_text = true
end)
