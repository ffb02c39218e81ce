-- (notify) With Neovim's own vim.notify, a long or multi-line message is cut to one line that
-- fits the message line (a longer one would wait for Enter: the hit-enter prompt) and kept whole
-- in :ThreadRadarRecordLog; a short one is shown as it is.
local H = dofile(os.getenv("TR_TESTS") .. "/helpers.lua")

H.run("notify", function()
  local util = require("threadradar.util")
  local long = "the server said: " .. string.rep("a long sentence about a recording, ", 12) .. "end."
  util.notify(long)
  util.notify("first line\nsecond line")
  util.notify("short")
  local shown = vim.split(vim.trim(vim.fn.execute("messages")), "\n", { plain = true })
  H.log(table.concat(shown, "\n"))
  local last3 = { shown[#shown - 2], shown[#shown - 1], shown[#shown] }
  for _, line in ipairs(last3) do
    H.check(vim.fn.strdisplaywidth(line) < vim.o.columns, "one screen line: " .. line)
  end
  H.check(last3[1]:find("… (:ThreadRadarRecordLog)", 1, true) ~= nil, "the long one is cut and says where it is: " .. last3[1])
  H.eq(last3[2], "ThreadRadar: first line second line", "two lines as one")
  H.eq(last3[3], "ThreadRadar: short", "a short one as it is")
  local log = table.concat(require("threadradar.record").log_lines(), "\n")
  H.check(log:find("ThreadRadar: " .. long, 1, true) ~= nil, "the record log has it whole")
end)
