-- In-situ radars: at the end of each profiled declaration line, the text glyph in cluster colours
-- and the figures, as extmarks in the namespace "threadradar". The data comes from
-- `threadRadar/documentArtifacts` (declarations at their current lines).
local config = require("threadradar.config")
local lsp = require("threadradar.lsp")
local util = require("threadradar.util")

local api = vim.api
local M = {}

M.ns = api.nvim_create_namespace("threadradar")

--- Lines longer than this many cells do not push the column of the others' radars.
M.ALIGN_MAX = 100

local group = api.nvim_create_augroup("ThreadRadarVirtualText", { clear = true })
local state = {} -- bufnr → { client_id, data, seq, debounced, cancel }

local function label_chunks(a, mode)
  local chunks = { { " " } }
  vim.list_extend(chunks, util.cell_chunks(a.cells))
  if mode == "glyph" then
    return chunks
  end
  local figures
  if mode == "crt" then
    figures = util.pct(a.crt)
  else
    figures = a.label
    if figures and a.text and a.text ~= "" then
      -- The label ends with the text glyph, already shown in colour in front.
      local suffix = " · " .. a.text
      if figures:sub(-#suffix) == suffix then
        figures = figures:sub(1, -#suffix - 1)
      end
    end
    if not figures or figures == "" then
      figures = ("%s %s · %d thr/%s"):format(
        util.pct(a.crt),
        util.secs(a.seconds),
        a.threads or 0,
        util.plural(a.thread_types or 0, "type")
      )
    end
  end
  table.insert(chunks, { "  " .. figures, "ThreadRadarText" })
  return chunks
end

--- Draws the artifacts of a documentArtifacts result into the buffer.
function M.render(bufnr, data)
  if not api.nvim_buf_is_valid(bufnr) then
    return
  end
  api.nvim_buf_clear_namespace(bufnr, M.ns, 0, -1)
  local vt = config.virtual_text()
  if not vt or not data then
    return
  end
  local count = api.nvim_buf_line_count(bufnr)
  -- At the end of the line the radars start in one column, as in the README: two cells after the
  -- longest annotated line (up to ALIGN_MAX; a longer line keeps its radar one cell after it).
  local column = 0
  if vt.position == "eol" then
    for _, a in ipairs(data.artifacts or {}) do
      if type(a.line) == "number" and a.line >= 0 and a.line < count then
        local w = vim.fn.strdisplaywidth(api.nvim_buf_get_lines(bufnr, a.line, a.line + 1, false)[1] or "")
        if w <= M.ALIGN_MAX then
          column = math.max(column, w + 2)
        end
      end
    end
  end
  for _, a in ipairs(data.artifacts or {}) do
    if type(a.line) == "number" and a.line >= 0 and a.line < count then
      local chunks = label_chunks(a, vt.label)
      if column > 0 then
        -- Neovim puts eol virtual text one cell after the line: the rest of the way in spaces.
        local w = vim.fn.strdisplaywidth(api.nvim_buf_get_lines(bufnr, a.line, a.line + 1, false)[1] or "")
        chunks[1] = { string.rep(" ", math.max(1, column - w - 1)) }
      end
      if vt.position == "above" then
        -- The radar on a virtual line of its own above the declaration, indented like it (below
        -- the code lens's line when both are on).
        local text = api.nvim_buf_get_lines(bufnr, a.line, a.line + 1, false)[1] or ""
        chunks[1] = { string.rep(" ", vim.fn.strdisplaywidth(text:match("^%s*"))) }
        pcall(api.nvim_buf_set_extmark, bufnr, M.ns, a.line, 0, {
          virt_lines = { chunks },
          virt_lines_above = true,
          priority = 120,
        })
      else
        pcall(api.nvim_buf_set_extmark, bufnr, M.ns, a.line, 0, {
          virt_text = chunks,
          virt_text_pos = vt.position,
          hl_mode = "combine",
          priority = 120,
        })
      end
    end
  end
end

-- For servers without `threadRadar/documentArtifacts`: the inlay hints give the lines and the
-- labels, the file's overview gives the clusters.
local function fetch_from_hints(client, bufnr, cb)
  local uri = vim.uri_from_bufnr(bufnr)
  local n = api.nvim_buf_line_count(bufnr)
  local params = {
    textDocument = { uri = uri },
    range = { start = { line = 0, character = 0 }, ["end"] = { line = n, character = 0 } },
  }
  local function fail(err)
    util.notify_once("hints:" .. util.error_text(err), util.error_text(err), vim.log.levels.WARN)
    cb(nil)
  end
  lsp.request(client, "textDocument/inlayHint", params, function(hints)
    hints = hints or {}
    if #hints == 0 then
      return cb({ artifacts = {} })
    end
    local file = api.nvim_buf_get_name(bufnr)
    local req = { only_file = file, top = 100000, glyph_size = 1 }
    lsp.request(client, "threadRadar/overview", req, function(ov)
      local by_key = {}
      for _, e in ipairs(ov.functions or {}) do
        by_key[e.key] = e
      end
      for _, e in ipairs(ov.classes or {}) do
        by_key[e.key] = e
      end
      local artifacts = {}
      for _, h in ipairs(hints) do
        local key = h.data and h.data.artifact
        local e = key and by_key[key] or {}
        local label = h.label
        if type(label) == "table" then
          local parts = {}
          for _, p in ipairs(label) do
            table.insert(parts, p.value or "")
          end
          label = table.concat(parts)
        end
        local cells = {}
        for _, c in ipairs(e.clusters or {}) do
          table.insert(cells, util.cell_of_cluster(c))
        end
        table.insert(artifacts, {
          key = key,
          kind = e.kind,
          name = e.name,
          qualname = e.qualname,
          line = h.position.line,
          recorded_line = e.line,
          crt = e.crt,
          self_crt = e.self_crt,
          seconds = e.seconds,
          samples = e.samples,
          threads = e.threads,
          thread_types = e.thread_types,
          cells = cells,
          text = util.cells_text(cells),
          label = label,
        })
      end
      table.sort(artifacts, function(a, b)
        return a.line < b.line
      end)
      cb({ artifacts = artifacts, exclude_threads = ov.run and ov.run.excluded_threads or {} })
    end, { silent = true, bufnr = bufnr, on_error = fail })
  end, { silent = true, bufnr = bufnr, on_error = fail })
end

--- Asks the server for the profiled declarations of a buffer; cb(data or nil).
function M.fetch(bufnr, cb, opts)
  opts = opts or {}
  local client = lsp.client_of_buffer(bufnr)
  if not client then
    return cb(nil)
  end
  if not lsp.supports(client, "threadRadar/documentArtifacts") then
    return fetch_from_hints(client, bufnr, cb)
  end
  local params = { uri = vim.uri_from_bufnr(bufnr) }
  if opts.glyph then
    params.glyph = opts.glyph
  end
  lsp.request(client, "threadRadar/documentArtifacts", params, cb, {
    silent = true,
    bufnr = bufnr,
    on_error = function(err)
      util.notify_once("artifacts:" .. util.error_text(err), util.error_text(err), vim.log.levels.WARN)
      cb(nil)
    end,
  })
end

--- Asks again and redraws; older answers that arrive late are dropped.
function M.refresh(bufnr)
  local st = state[bufnr]
  if not st or not api.nvim_buf_is_valid(bufnr) then
    return
  end
  if not config.virtual_text() then
    st.seq = st.seq + 1
    api.nvim_buf_clear_namespace(bufnr, M.ns, 0, -1)
    return
  end
  st.seq = st.seq + 1
  local seq = st.seq
  M.fetch(bufnr, function(data)
    if state[bufnr] ~= st or st.seq ~= seq or not data then
      return
    end
    st.data = data
    M.render(bufnr, data)
  end)
end

--- A refresh after `ms` (coalesces bursts of changes).
function M.schedule(bufnr, ms)
  local st = state[bufnr]
  if st then
    st.debounced(ms)
  end
end

function M.attach(client_id, bufnr)
  local st = state[bufnr]
  if st then
    st.client_id = client_id
    M.refresh(bufnr)
    return
  end
  st = { client_id = client_id, seq = 0 }
  local timer_ms = config.options.debounce_ms
  local pending
  st.debounced = function(ms)
    if pending then
      pending:stop()
      if not pending:is_closing() then
        pending:close()
      end
    end
    pending = vim.loop.new_timer()
    local t = pending
    t:start(ms or timer_ms, 0, function()
      t:stop()
      if not t:is_closing() then
        t:close()
      end
      if pending == t then
        pending = nil
      end
      vim.schedule(function()
        M.refresh(bufnr)
      end)
    end)
  end
  st.cancel = function()
    if pending then
      pending:stop()
      if not pending:is_closing() then
        pending:close()
      end
      pending = nil
    end
  end
  state[bufnr] = st
  api.nvim_create_autocmd({ "BufEnter", "InsertLeave" }, {
    group = group,
    buffer = bufnr,
    callback = function()
      lsp.set_last_client(st.client_id)
      M.refresh(bufnr)
    end,
  })
  api.nvim_create_autocmd("TextChanged", {
    group = group,
    buffer = bufnr,
    callback = function()
      st.debounced()
    end,
  })
  api.nvim_create_autocmd({ "BufUnload", "BufWipeout" }, {
    group = group,
    buffer = bufnr,
    callback = function()
      M.detach(bufnr)
      lsp.detach_buffer(bufnr)
    end,
  })
  M.refresh(bufnr)
end

function M.detach(bufnr)
  local st = state[bufnr]
  if not st then
    return
  end
  st.cancel()
  state[bufnr] = nil
  if api.nvim_buf_is_valid(bufnr) then
    api.nvim_buf_clear_namespace(bufnr, M.ns, 0, -1)
    pcall(api.nvim_clear_autocmds, { group = group, buffer = bufnr })
  end
end

--- The last documentArtifacts result of a buffer (nil before the first answer).
function M.data(bufnr)
  return state[bufnr] and state[bufnr].data
end

lsp.on_change(function(client_id, change)
  if not lsp.changes_view(change) then
    return -- only the list of runs changed, or a recording started: nothing shown changed
  end
  for _, bufnr in ipairs(lsp.buffers(client_id)) do
    M.schedule(bufnr, 20)
  end
end)

return M
