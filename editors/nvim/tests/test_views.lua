-- :ThreadRadarViews: a view saved through the server (`threadRadar/views`, as the Sections panel
-- saves it) is listed through vim.ui.select (stubbed) with its note and the server's status, and
-- choosing it opens the Sections tab on its section through a real `threadradar serve`.
local H = dofile(os.getenv("TR_TESTS") .. "/helpers.lua")

H.run("views", function()
  local opened = {}
  H.setup({
    open_cmd = function(url)
      table.insert(opened, url)
    end,
  })
  H.open_sample()
  local client = require("threadradar.lsp").client_for(0)
  H.check(client ~= nil, "a client for the sample")
  local function call(method, params)
    local r
    if vim.fn.has("nvim-0.11") == 1 then
      r = client:request_sync(method, params, 20000, 0)
    else
      r = client.request_sync(method, params, 20000, 0)
    end
    H.check(r and r.err == nil, method .. " answered: " .. vim.inspect(r and r.err))
    return r and r.result
  end
  local sections = call("threadRadar/sections", vim.empty_dict())
  local s = sections and sections.sections and sections.sections[1]
  H.check(s ~= nil, "the sample's run has critical sections (WorkerManager's `with self._lock:`)")
  if not s then
    return
  end
  local note = "<b>look</b> at this one"
  local saved = call("threadRadar/views", { save = { section = { file = s.file, ["function"] = s["function"], lock = s.lock, line = s.line }, note = note } })
  H.check(saved and type(saved.saved) == "string", "saved: " .. vim.inspect(saved))

  local offered
  local original = vim.ui.select
  vim.ui.select = function(items, opts, on_choice)
    offered = {}
    for _, item in ipairs(items) do
      table.insert(offered, opts.format_item(item))
    end
    on_choice(items[1], 1)
  end
  vim.cmd("ThreadRadarViews")
  H.wait(15000, function()
    return #opened == 1
  end, "the Sections panel's URL")
  vim.ui.select = original
  H.check(offered and #offered == 1, "one saved view offered: " .. vim.inspect(offered))
  local line = offered and offered[1] or ""
  H.check(line:find(note, 1, true) ~= nil and line:find("Saved on this run", 1, true) ~= nil and line:find("●", 1, true) ~= nil, "note and status: " .. line)
  local url = opened[1] or ""
  H.check(url:match("^http://127%.0%.0%.1:%d+/%?view=sections&file=") ~= nil and url:find("&line=" .. s.line, 1, true) ~= nil, "the Sections tab on the section: " .. url)
  -- The served page is the panel (the URL answers).
  local page = vim.fn.system({ "python3", "-c", "import sys,urllib.request;print(urllib.request.urlopen(sys.argv[1]).read().decode())", url })
  H.check(page:find("open-sections", 1, true) ~= nil, "the page has the Sections tab: " .. page:sub(1, 400))

  call("threadRadar/views", { delete = saved.saved })
  local left = call("threadRadar/views", vim.empty_dict())
  H.check(left and #left.views == 0, "deleted")
end)
