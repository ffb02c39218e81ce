-- :ThreadRadarRuns, :ThreadRadarDeleteRun, :ThreadRadarHottest, :ThreadRadarClearFilter.
local lsp = require("threadradar.lsp")
local util = require("threadradar.util")

local api = vim.api
local M = {}

local function size_text(bytes)
  if not bytes then
    return ""
  end
  if bytes >= 1024 * 1024 then
    return ("%.1f MB"):format(bytes / 1024 / 1024)
  end
  return ("%.0f kB"):format(bytes / 1024)
end

local function time_text(ms)
  if not ms then
    return ""
  end
  return os.date("%Y-%m-%d %H:%M", math.floor(ms / 1000))
end

--- A command for one line: paths as their file names (`python3 buggy.py --workers 4`), at most
--- `max` characters.
local function short(text, max)
  local words = {}
  for w in tostring(text or ""):gmatch("%S+") do
    table.insert(words, w:find("/", 1, true) and w:match("[^/]*$") ~= "" and w:match("[^/]*$") or w)
  end
  text = table.concat(words, " ")
  if vim.fn.strchars(text) <= max then
    return text
  end
  return vim.fn.strcharpart(text, 0, max - 1) .. "…"
end

--- One line of the chooser for a run entry: the test and its outcome (or the program), its
--- duration and threads, label and pin (issue 19), from the run's `history`.
function M.format_run(run, summary)
  local text = ("%s %s  %s  %s"):format(
    run.active and "●" or " ",
    run.name,
    time_text(run.modified_unix_ms),
    size_text(run.size)
  )
  local h = type(run.history) == "table" and run.history or nil
  -- The active run's summary (below) already says its threads, duration and command.
  local summarized = run.active and summary ~= nil
  if h then
    if type(h.test) == "string" then
      text = text .. "  " .. h.test .. ": " .. require("threadradar.record").outcome_words(h.outcome)
    elseif type(h.command) == "string" and h.command ~= "" and not summarized then
      text = text .. "  " .. short(h.command, 60)
    end
    if not summarized and type(h.duration_s) == "number" and type(h.threads) == "number" then
      text = text .. ("  %.1fs, %s"):format(h.duration_s, util.plural(h.threads, "thread"))
    end
    if type(h.label) == "string" then
      text = text .. ' "' .. h.label .. '"'
    end
    if h.pinned == true then
      text = text .. " [pinned]"
    end
  end
  if summarized then
    text = text
      .. ("  — %s, %s, %.1fs: %s"):format(
        util.plural(summary.threads or 0, "thread"),
        util.plural(summary.samples or 0, "sample"),
        summary.duration_s or 0,
        summary.command or ""
      )
  end
  return text
end

local function runs_request(client, cb)
  lsp.request(client, "threadRadar/runs", util.empty_object(), cb)
end

--- Chooses the run with vim.ui.select (the active one marked ●); "follow the newest run" too.
function M.select()
  local client = lsp.require_client()
  if not client then
    return
  end
  runs_request(client, function(res)
    local runs = res.runs or {}
    if #runs == 0 then
      util.warn("there are no runs yet: record one with `threadradar record -- python3 your_program.py`.")
      return
    end
    local items = {}
    for _, r in ipairs(runs) do
      table.insert(items, { run = r })
    end
    table.insert(items, { newest = true })
    vim.ui.select(items, {
      prompt = "ThreadRadar run" .. (res.pinned and " (pinned)" or " (following the newest)") .. ":",
      format_item = function(item)
        if item.newest then
          return "  follow the newest run"
        end
        return M.format_run(item.run, res.summary)
      end,
      kind = "threadradar_run",
    }, function(choice)
      if not choice then
        return
      end
      local function show_run()
        local arg = choice.newest and "newest" or { run = choice.run.path }
        lsp.execute(client, "threadradar.selectRun", arg, function(after)
          local name = after and after.active and vim.fn.fnamemodify(after.active, ":t") or "none"
          util.notify("showing run " .. name .. ".")
          lsp.emit_change(client.id, { reason = "run" })
        end)
      end
      -- Any run with a history (servers since issue 19) can be labelled, pinned and deleted.
      if not choice.newest and type(choice.run.history) == "table" then
        M.actions(client, choice.run, show_run)
      else
        show_run()
      end
    end)
  end)
end

--- What to do with a run (issue 19): show it, label it, pin or unpin it, delete it, or (the
--- newest run of a test with an earlier run) compare it with the run before it of the same test.
function M.actions(client, run, show_run)
  local h = run.history or {}
  local items = { "Show this run", "Label…", h.pinned == true and "Unpin" or "Pin (never pruned)", "Delete" }
  if type(h.previous) == "string" then
    table.insert(items, "Compare with previous run of this test")
  end
  vim.ui.select(items, { prompt = "ThreadRadar run " .. run.name .. ":", kind = "threadradar_run_action" }, function(action)
    if not action then
      return
    end
    local function done(what)
      util.notify(what)
      lsp.emit_change(client.id, { reason = "runs" })
    end
    if action == "Show this run" then
      show_run()
    elseif action == "Label…" then
      vim.ui.input({ prompt = "Label (empty: none): ", default = type(h.label) == "string" and h.label or "" }, function(label)
        if label == nil then
          return
        end
        lsp.request(client, "threadRadar/runs", { label = { run = run.path, label = label } }, function()
          done(label == "" and ("removed the label of " .. run.name .. ".") or ("labelled " .. run.name .. " " .. label .. "."))
        end)
      end)
    elseif action == "Delete" then
      lsp.execute(client, "threadradar.deleteRun", { run = run.path }, function()
        done("deleted " .. run.name .. ".")
      end)
    elseif action:match("^Compare") then
      require("threadradar.compare").open(h.previous, run.path)
    else
      local pinned = h.pinned ~= true
      lsp.request(client, "threadRadar/runs", { pin = { run = run.path, pinned = pinned } }, function()
        done((pinned and "pinned " or "unpinned ") .. run.name .. ".")
      end)
    end
  end)
end

--- Deletes a run file after choosing it and confirming.
function M.delete()
  local client = lsp.require_method("threadradar.deleteRun", "delete runs", "update it.")
  if not client then
    return
  end
  runs_request(client, function(res)
    local runs = res.runs or {}
    if #runs == 0 then
      util.warn("there are no runs to delete.")
      return
    end
    vim.ui.select(runs, {
      prompt = "Delete which ThreadRadar run?",
      format_item = function(r)
        return M.format_run(r, res.summary)
      end,
      kind = "threadradar_run",
    }, function(run)
      if not run then
        return
      end
      vim.ui.input({ prompt = ("Delete %s? [y/N] "):format(run.name) }, function(answer)
        if not answer or not answer:match("^[yY]") then
          return
        end
        lsp.execute(client, "threadradar.deleteRun", { run = run.path }, function()
          util.notify("deleted " .. run.name .. ".")
          lsp.emit_change(client.id, { reason = "run" })
        end)
      end)
    end)
  end)
end

local function jump(loc)
  -- Neovim >= 0.8 may already be there through window/showDocument.
  local uri = loc.uri
  local line = loc.range and loc.range.start.line + 1 or 1
  if vim.uri_from_bufnr(0) == uri and api.nvim_win_get_cursor(0)[1] == line then
    return
  end
  util.jump_to_location(loc)
end

--- Goes to the hottest function (or class) of the user's code.
function M.hottest(kind)
  if kind ~= "function" and kind ~= "class" then
    util.warn("ThreadRadarHottest takes `function` or `class`.")
    return
  end
  local client = lsp.require_client()
  if not client then
    return
  end
  if lsp.supports(client, "threadradar.goToHottest") then
    lsp.execute(client, "threadradar.goToHottest", { kind = kind }, function(res)
      if res and res.uri then
        jump(res)
        util.notify(("hottest %s: %s (%s)."):format(kind, res.qualname or "?", util.pct(res.crt)))
      end
    end)
    return
  end
  -- Older servers: the overview's top entry of the user's code, then goTo for its current line.
  local params = { hide_stdlib = true, hide_third_party = true, include = {}, exclude = {}, top = 50, glyph_size = 1 }
  lsp.request(client, "threadRadar/overview", params, function(ov)
    local top
    for _, e in ipairs((kind == "class" and ov.classes or ov.functions) or {}) do
      if e.file_kind == "user" and e.name ~= "<module>" then
        top = e
        break
      end
    end
    if not top then
      util.warn("nothing of your code was profiled in this run.")
      return
    end
    lsp.execute(client, "threadradar.goTo", { artifact = top.key }, function(loc)
      if loc then
        jump(loc)
        util.notify(("hottest %s: %s (%s)."):format(kind, top.qualname, util.pct(top.crt)))
      end
    end)
  end)
end

function M.clear_filter()
  local client = lsp.require_client()
  if not client then
    return
  end
  lsp.execute(client, "threadradar.clearThreadFilter", nil, function()
    util.notify("thread filter cleared.")
    lsp.emit_change(client.id, { reason = "filter" })
  end)
end

return M
