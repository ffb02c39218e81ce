-- :ThreadRadarViews: the Sections panel's saved views (a critical section, optionally one of its
-- executions, and a note; docs/sections.md "Saved views") from the server's `threadRadar/views`,
-- each with the server's sentence on whether the active run has its section. Choosing one opens
-- the Sections tab on that section in the browser through `threadradar serve`. Saving is done in
-- the panel.
local lsp = require("threadradar.lsp")
local util = require("threadradar.util")

local M = {}

--- One line of the list for a listed view (pure: used by the tests).
function M.format_view(v)
  local s = v.section or {}
  local what = ("%s in %s (%s:%s)"):format(s.lock or "?", s["function"] or "?", vim.fn.fnamemodify(s.file or "", ":t"), s.line or "?")
  if type(v.execution) == "table" then
    what = what .. (", execution #%d"):format((v.execution.index or 0) + 1)
  end
  if type(v.thread) == "string" then
    what = what .. ", thread " .. v.thread
  end
  local note = (type(v.note) == "string" and v.note ~= "") and v.note or "(no note)"
  local line = ("%s %s — %s — %s"):format(util.null(v.section_index) == nil and "✗" or "●", note, what, v.status or "")
  return (line:gsub("[\r\n]+", " "))
end

--- The Sections tab on `section` ({file, function, lock, line} of the active run).
function M.browser(client, section)
  local open = require("threadradar.open")
  local e = open.url_encode
  open.panel(
    client,
    "sections",
    ("?view=sections&file=%s&function=%s&lock=%s&line=%s"):format(
      e(section.file),
      e(section["function"]),
      e(section.lock),
      e(section.line)
    )
  )
end

function M.open()
  local client = lsp.require_client()
  if not client then
    return
  end
  lsp.request(client, "threadRadar/views", util.empty_object(), function(res)
    local views = (res and res.views) or {}
    if #views == 0 then
      util.notify("no saved views yet: save one in the Sections panel (:ThreadRadarOpen, tab Sections); they are kept in " .. tostring(res and res.file or ".threadradar/views.json") .. ".")
      return
    end
    vim.ui.select(views, { prompt = "ThreadRadar saved views (" .. (res.run or "") .. "):", format_item = M.format_view, kind = "threadradar_view" }, function(v)
      if not v then
        return
      end
      local index = util.null(v.section_index)
      if index == nil then
        util.warn(v.status)
        return
      end
      -- The section as this run has it (its line may have moved since the view was saved).
      lsp.request(client, "threadRadar/sections", util.empty_object(), function(sections)
        local s = sections and sections.sections and sections.sections[index + 1]
        if not s then
          util.warn("the section of this view is no longer in the active run.")
          return
        end
        M.browser(client, { file = s.file, ["function"] = s["function"], lock = s.lock, line = s.line })
      end)
    end)
  end)
end

return M
