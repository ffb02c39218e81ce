-- ThreadRadar user commands. Nothing starts before require("threadradar").setup{} (or
-- vim.g.threadradar_auto_setup = true); the modules load on first use.
if vim.g.loaded_threadradar then
  return
end
vim.g.loaded_threadradar = 1

if vim.fn.has("nvim-0.7") == 0 then
  vim.api.nvim_echo({ { "ThreadRadar needs Neovim 0.7 or newer.", "WarningMsg" } }, true, {})
  return
end

local function command(name, action, opts)
  opts = opts or {}
  vim.api.nvim_create_user_command(name, function(args)
    require("threadradar").command(action, args)
  end, opts)
end

command("ThreadRadarOverview", "overview", { bang = true, desc = "ThreadRadar: overview (! = current file only)" })
command("ThreadRadarDetail", "detail", { nargs = "?", desc = "ThreadRadar: detail of the function under the cursor" })
command("ThreadRadarTimeline", "timeline", {
  nargs = "?",
  complete = function()
    return { "browser" }
  end,
  desc = "ThreadRadar: text timeline of every thread (browser = the web panel)",
})
command("ThreadRadarWaits", "waits", {
  nargs = "*",
  complete = function(arglead)
    return vim.tbl_filter(function(w)
      return w:sub(1, #arglead) == arglead
    end, { "browser" })
  end,
  desc = "ThreadRadar: who waited for whom ([browser] [object])",
})
command("ThreadRadarSections", "sections", {
  nargs = "?",
  complete = function()
    return { "browser" }
  end,
  desc = "ThreadRadar: critical sections and their executions ([browser] [filter])",
})
command("ThreadRadarRuns", "runs", { desc = "ThreadRadar: choose the run" })
command("ThreadRadarDeleteRun", "delete_run", { desc = "ThreadRadar: delete a run file" })
command("ThreadRadarOpen", "open", { desc = "ThreadRadar: the web panels in the browser" })
command("ThreadRadarViews", "views", { desc = "ThreadRadar: saved views of critical sections (opens the Sections panel)" })
command("ThreadRadarHottest", "hottest", {
  nargs = "?",
  complete = function()
    return { "function", "class" }
  end,
  desc = "ThreadRadar: go to the hottest function (or class)",
})
command("ThreadRadarRecord", "record", {
  nargs = "*",
  -- :5ThreadRadarRecord records the program 5 times as one run set.
  count = 0,
  -- A Lua completion: with -complete=file Neovim would expand `%` itself.
  complete = function(arglead, cmdline, cursorpos)
    local before = cmdline:sub(1, cursorpos):gsub("^%s*%S+%s*", "")
    if not before:find("%s") then
      local list = vim.fn.getcompletion(arglead, "shellcmd")
      if ("%"):sub(1, #arglead) == arglead then
        table.insert(list, 1, "%")
      end
      return list
    end
    return vim.fn.getcompletion(arglead, "file")
  end,
  desc = "ThreadRadar: record a run (% = the project's Python on the current file; a count N records a run set of N runs)",
})
command("ThreadRadarStop", "stop", { desc = "ThreadRadar: stop the recording (the run is kept)" })
command("ThreadRadarRecordLog", "record_log", { desc = "ThreadRadar: the recordings' output" })
-- Both comparisons take two runs and complete them the same way.
local function complete_runs(arglead)
  if not require("threadradar").is_setup() then
    return {}
  end
  return require("threadradar.compare").complete(arglead)
end
command("ThreadRadarCompare", "compare", {
  nargs = "*",
  complete = complete_runs,
  desc = "ThreadRadar: compare two runs ([base] [new])",
})
command("ThreadRadarTraceCompare", "trace_compare", {
  nargs = "*",
  complete = complete_runs,
  desc = "ThreadRadar: two runs matched as traces ([a] [b])",
})
command("ThreadRadarClearFilter", "clear_filter", { desc = "ThreadRadar: remove the thread filter" })
command("ThreadRadarRefresh", "refresh", { desc = "ThreadRadar: ask the server again" })
command("ThreadRadarToggle", "toggle", { desc = "ThreadRadar: virtual text on/off" })

-- <Plug> mappings for every action (:help threadradar-mappings); no key is mapped by default.
local function plug(name, rhs, desc)
  vim.keymap.set("n", "<Plug>(ThreadRadar" .. name .. ")", rhs, { silent = true, desc = "ThreadRadar: " .. desc })
end
local function run(action, args)
  return function()
    require("threadradar").command(action, args or {})
  end
end
plug("Hover", function()
  if require("threadradar").is_setup() then
    require("threadradar.lsp").hover()
  else
    vim.lsp.buf.hover()
  end
end, "hover (the server's, drawn cleanly)")
plug("CodeLens", function()
  vim.lsp.codelens.run()
end, "run the code lens of the line")
plug("Overview", run("overview"), "overview")
plug("Detail", run("detail"), "detail of the function under the cursor")
plug("Timeline", run("timeline"), "text timeline")
plug("Waits", run("waits"), "who waited for whom")
plug("Sections", run("sections"), "critical sections")
plug("Runs", run("runs"), "choose the run")
plug("Hottest", run("hottest"), "go to the hottest function")
plug("Record", run("record"), "record a run")
plug("Stop", run("stop"), "stop the recording")
plug("RecordLog", run("record_log"), "the recordings' output")
plug("Compare", run("compare"), "compare two runs")
plug("TraceCompare", run("trace_compare"), "two runs as traces")
plug("Open", run("open"), "the web panels in the browser")
plug("ClearFilter", run("clear_filter"), "remove the thread filter")
plug("Refresh", run("refresh"), "ask the server again")
plug("Toggle", run("toggle"), "virtual text on/off")

if vim.g.threadradar_auto_setup then
  require("threadradar").setup(vim.g.threadradar_setup or {})
end
