-- (timeline kinds) A real recording of a program with one thread blocked in `queue.Queue.get()`
-- and one in `threading.Condition.wait()`: the text timeline draws the queue's waits as `q` and
-- the condition's as `c` (a queue waits inside Condition.wait, which once made every queue wait
-- a `c`). Its footer says how the figures were obtained once. `:ThreadRadarTimeline nope` (no
-- such artifact) is one sentence and no float.
local H = dofile(os.getenv("TR_TESTS") .. "/helpers.lua")
local api = vim.api

local PROGRAM = {
  "import queue",
  "import threading",
  "import time",
  "",
  "q = queue.Queue()",
  "cv = threading.Condition()",
  "",
  "",
  "def consume():",
  "    for _ in range(3):",
  "        q.get()",
  "",
  "",
  "def wait_on_condition():",
  "    with cv:",
  "        cv.wait(timeout=1.2)",
  "",
  "",
  "consumer = threading.Thread(target=consume, name='queue-consumer')",
  "waiter = threading.Thread(target=wait_on_condition, name='cond-waiter')",
  "consumer.start()",
  "waiter.start()",
  "for i in range(3):",
  "    time.sleep(0.4)",
  "    q.put(i)",
  "consumer.join()",
  "waiter.join()",
}

--- The cells of a thread's lane in the timeline float (after its 18-byte label).
local function lane(view, name)
  for _, line in ipairs(H.lines(view.buf)) do
    if vim.trim(line:sub(1, 18)) == name then
      return line:sub(19)
    end
  end
  return nil
end

H.run("timeline kinds", function()
  local dir = vim.fn.tempname() .. "-kinds"
  vim.fn.mkdir(dir .. "/.threadradar/runs", "p")
  local script = dir .. "/kinds.py"
  vim.fn.writefile(PROGRAM, script)
  local python = vim.trim(vim.fn.system({ "python3", "-c", "import sys; print(sys.executable)" }))
  local out = vim.fn.system({ H.env("TR_BIN"), "record", "-o", dir .. "/.threadradar/runs/20200101T000000Z-kinds.json", "--no-progress", "--", python, script })
  H.eq(vim.v.shell_error, 0, "record: " .. out)

  H.setup({})
  local notes = H.capture_notifications()
  vim.cmd("cd " .. vim.fn.fnameescape(dir))
  vim.cmd("edit " .. vim.fn.fnameescape(script))
  local lsp = require("threadradar.lsp")
  H.wait(15000, function()
    return lsp.client_for(0) ~= nil and lsp.state(lsp.client_for(0).id).run ~= nil
  end, "the server with the kinds run")
  local source_win = api.nvim_get_current_win()

  -- No such artifact: one sentence, and the cursor stays in the source window.
  local timeline = require("threadradar.timeline")
  vim.cmd("ThreadRadarTimeline nope")
  H.wait(10000, function()
    return #notes > 0
  end, "the error of :ThreadRadarTimeline nope")
  vim.wait(300, function()
    return false
  end)
  H.eq(#notes, 1, "one notification")
  H.check(notes[1] and not notes[1].msg:find("\n", 1, true), "one line: " .. vim.inspect(notes[1]))
  H.eq(timeline.view(), nil, "no timeline float")
  H.eq(api.nvim_get_current_win(), source_win, "the source window keeps the cursor")
  H.eq(api.nvim_win_get_config(0).relative, "", "no float is focused")

  api.nvim_win_set_cursor(0, { 1, 0 })
  vim.cmd("ThreadRadarTimeline")
  local view
  H.wait(15000, function()
    view = timeline.view()
    return view and view.layout
  end, "the timeline float")
  local text = table.concat(H.lines(view.buf), "\n")
  H.log("the float:\n" .. text)
  local q, c = lane(view, "queue-consumer"), lane(view, "cond-waiter")
  H.check(q ~= nil and c ~= nil, "a lane for each thread")
  if q and c then
    H.check(q:find("q", 1, true) ~= nil, "the queue's waits are q: " .. q)
    H.check(not q:find("c", 1, true), "no queue wait drawn as a condition: " .. q)
    H.check(c:find("c", 1, true) ~= nil, "the condition's waits are c: " .. c)
    H.check(not c:find("q", 1, true), "no condition wait drawn as a queue: " .. c)
  end
  H.check(not text:find("sampled: sampled:", 1, true), "the footer says 'sampled:' once")
  H.check(text:find(view.layout.obtained, 1, true) ~= nil, "the footer says how the figures were obtained")
  timeline.close()
end, 90000)
