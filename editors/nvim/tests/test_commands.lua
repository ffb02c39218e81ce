-- :ThreadRadarHottest, :ThreadRadarOpen (a real `threadradar serve`), code lenses and their
-- commands, K hover, :ThreadRadarToggle, and the kitty image helpers.
local H = dofile(os.getenv("TR_TESTS") .. "/helpers.lua")
local api = vim.api

H.run("commands", function()
  local opened = {}
  local native = vim.lsp.inlay_hint ~= nil -- Neovim >= 0.10
  -- annotations = "all": the figures, Timeline, wait and section lenses (the default "hints" has none).
  H.setup({
    annotations = "all",
    native_inlay_hints = native,
    open_cmd = function(url)
      table.insert(opened, url)
    end,
  })
  H.open_sample()
  if native then
    H.wait(10000, function()
      return #vim.lsp.inlay_hint.get({ bufnr = 0 }) > 0
    end, "native inlay hints")
  end
  local report = H.expect("new-function")
  local src = api.nvim_get_current_buf()

  -- :ThreadRadarHottest: a function of the user's code (not <module>) with the highest crt of
  -- the report (ties: any of them).
  local top_crt
  local hottest = {}
  for _, a in ipairs(report.artifacts) do
    if a.file_kind == "user" and a.qualname ~= "<module>" then
      top_crt = top_crt or a.crt
      if a.crt == top_crt then
        hottest[a.file .. ":" .. a.line] = a.qualname
      end
    end
  end
  api.nvim_win_set_cursor(0, { 1, 0 })
  vim.cmd("ThreadRadarHottest")
  H.wait(10000, function()
    return hottest[api.nvim_buf_get_name(0) .. ":" .. api.nvim_win_get_cursor(0)[1]] ~= nil
  end, "the jump to the hottest function, one of " .. vim.inspect(hottest))
  vim.cmd("buffer " .. src)

  -- :ThreadRadarOpen: `threadradar serve` on the active run; the URL answers.
  vim.cmd("ThreadRadarOpen")
  H.wait(10000, function()
    return #opened == 1
  end, "the panel URL")
  local url = opened[1] or ""
  H.check(url:match("^http://127%.0%.0%.1:%d+/$") ~= nil, "a local URL: " .. url)
  local page = vim.fn.system({ "python3", "-c", "import sys,urllib.request;print(urllib.request.urlopen(sys.argv[1]).read().decode()[:20000])", url })
  H.check(vim.v.shell_error == 0 and page:find("ThreadRadar", 1, true) ~= nil, "the panels page is served")
  local running = require("threadradar.open").running()
  H.eq(running[H.env("TR_RUN_NEW")], url, "the panel server of the active run")
  vim.cmd("ThreadRadarOpen")
  H.wait(5000, function()
    return #opened == 2
  end, "the URL again")
  H.eq(opened[2], url, "the running server is reused")

  -- Code lenses: drawn by Neovim; running the one of Worker.run opens its detail float.
  local run
  for _, a in ipairs(report.artifacts) do
    if a.qualname == "Worker.run" then
      run = a
    end
  end
  local lens
  H.wait(10000, function()
    for _, l in ipairs(vim.lsp.codelens.get(src)) do
      if l.range.start.line == run.line - 1 and l.command and l.command.command == "threadradar.openDetail" then
        lens = l
      end
    end
    return lens ~= nil
  end, "the code lens of Worker.run")
  -- Beside it, the "Timeline" lens (test_timeline runs it); both share the virtual line.
  local titles = {}
  for _, l in ipairs(vim.lsp.codelens.get(src)) do
    if l.range.start.line == run.line - 1 then
      table.insert(titles, l.command.title)
    end
  end
  H.check(lens and lens.command.title:find(H.pct(run.crt):gsub("%%", " %%"), 1, true) ~= nil, "the lens shows the crt: " .. (lens and lens.command.title or ""))
  -- On its own line above the declaration, indented like it; not appended to the radar's virtual
  -- text at the end of the line, and not drawn a second time by Neovim's own lens display.
  local lens_ns = require("threadradar.lens").ns
  local above
  H.wait(5000, function()
    above = api.nvim_buf_get_extmarks(src, lens_ns, { run.line - 1, 0 }, { run.line - 1, -1 }, { details = true })[1]
    return above ~= nil
  end, "the lens's virtual line")
  local d = above[4]
  local header = api.nvim_buf_get_lines(src, run.line - 1, run.line, false)[1]
  H.eq(d.virt_lines_above, true, "the lens is a virtual line above the declaration")
  H.eq(d.virt_lines[1][1][1], header:match("^%s*") .. table.concat(titles, " | "), "the virtual line: the declaration's indentation and the lens titles")
  H.eq(titles[1], lens.command.title, "the figures' lens comes first")
  for name, ns_id in pairs(api.nvim_get_namespaces()) do
    for _, m in ipairs(api.nvim_buf_get_extmarks(src, ns_id, { run.line - 1, 0 }, { run.line - 1, -1 }, { details = true })) do
      local eol = {}
      for _, chunk in ipairs(m[4].virt_text or {}) do
        table.insert(eol, chunk[1])
      end
      local text = table.concat(eol)
      H.check(not text:find(lens.command.title, 1, true), ("no lens title in the end-of-line text of namespace %s: %q"):format(name, text))
    end
  end
  api.nvim_win_set_cursor(0, { run.line, 0 })
  -- Two lenses on the line: Neovim asks which one; the first (the figures') opens the detail.
  api.nvim_feedkeys("1\r", "t", false)
  vim.lsp.codelens.run()
  local detail = require("threadradar.detail")
  H.wait(10000, function()
    local v = detail.view()
    return v and v.data and v.key:find("Worker.run", 1, true) ~= nil
  end, "the detail float from the code lens")
  detail.close()

  -- K: Neovim's own vim.lsp.buf.hover() (the plugin maps no key), with the server's hover. K is
  -- that from Neovim 0.10 on; 0.7's K is 'keywordprg': the hover is called as K calls it.
  local wins = #api.nvim_list_wins()
  if vim.fn.has("nvim-0.10") == 1 then
    H.feed("K")
  else
    vim.lsp.buf.hover()
  end
  H.wait(10000, function()
    return #api.nvim_list_wins() > wins
  end, "the hover float")
  local hover_text = ""
  for _, w in ipairs(api.nvim_list_wins()) do
    if api.nvim_win_get_config(w).relative ~= "" then
      hover_text = hover_text .. table.concat(api.nvim_buf_get_lines(api.nvim_win_get_buf(w), 0, -1, false), "\n")
    end
  end
  H.check(hover_text:find("Worker.run", 1, true) ~= nil and hover_text:find(H.pct(run.crt), 1, true) ~= nil, "the hover: " .. hover_text)
  -- The server writes program names as code spans, never with backslash escapes (K shows them).
  H.check(not hover_text:find("\\[%p]"), "no backslash escapes in K's hover: " .. hover_text)
  H.check(hover_text:find("`Worker.run`", 1, true) ~= nil, "the name as a code span: " .. hover_text)
  for _, w in ipairs(api.nvim_list_wins()) do
    if api.nvim_win_get_config(w).relative ~= "" then
      api.nvim_win_close(w, true)
    end
  end

  -- <Plug>(ThreadRadarHover): the same hover drawn cleanly: its tables as aligned columns (no
  -- pipes, no `|---|` row) and no backslash escapes, which Neovim's float shows as written.
  vim.keymap.set("n", "<F7>", "<Plug>(ThreadRadarHover)")
  wins = #api.nvim_list_wins()
  H.feed("<F7>")
  H.wait(10000, function()
    return #api.nvim_list_wins() > wins
  end, "the clean hover float")
  local clean = ""
  for _, w in ipairs(api.nvim_list_wins()) do
    if api.nvim_win_get_config(w).relative ~= "" then
      clean = clean .. table.concat(api.nvim_buf_get_lines(api.nvim_win_get_buf(w), 0, -1, false), "\n")
    end
  end
  H.log("the clean hover:\n" .. clean)
  H.check(clean:find("Worker.run", 1, true) ~= nil and clean:find(H.pct(run.crt), 1, true) ~= nil, "the clean hover: " .. clean)
  H.check(not clean:find("|---", 1, true) and not clean:find("\n|", 1, true), "no Markdown table syntax: " .. clean)
  H.check(not clean:find("\\[%p]"), "no backslash escapes: " .. clean)
  H.check(clean:find("cluster%s+threads") ~= nil, "the clusters table as columns: " .. clean)
  for _, w in ipairs(api.nvim_list_wins()) do
    if api.nvim_win_get_config(w).relative ~= "" then
      api.nvim_win_close(w, true)
    end
  end

  -- :ThreadRadarToggle off and on.
  vim.cmd("ThreadRadarToggle")
  H.eq(H.count(H.marks(src)), 0, "no marks when toggled off")
  vim.cmd("ThreadRadarToggle")
  H.wait(5000, function()
    return H.count(H.marks(src)) > 0
  end, "the marks back")

  -- Kitty images: the escape sequences and a real PNG from `threadradar radar`.
  local image = require("threadradar.image")
  H.eq(image.base64("/tmp/a.png"), "L3RtcC9hLnBuZw==", "base64")
  H.eq(image.base64("ab"), "YWI=", "base64 padding")
  H.eq(image.display_sequence("/x", 7, 21, 6), "\27_Ga=T,f=100,t=f,i=7,c=21,r=6,C=1,q=2;L3g=\27\\", "kitty display")
  H.check(not image.supported(), "images are off by default")
  local png
  image.png(H.env("TR_RUN_NEW"), run.qualname, 64, "light", function(path)
    png = path
  end)
  H.wait(10000, function()
    return png ~= nil
  end, "the glyph PNG")
  if png then
    local f = io.open(png, "rb")
    local magic = f and f:read(8)
    if f then
      f:close()
    end
    H.eq(magic, "\137PNG\r\n\26\n", "a PNG file")
  end
end)
