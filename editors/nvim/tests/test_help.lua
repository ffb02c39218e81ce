-- (help) `:help threadradar` works with the README's install method (the plugin directory on
-- 'runtimepath', no :helptags run by the user: the committed doc/tags), and doc/tags is what
-- :helptags makes of doc/threadradar.txt (lazy.nvim regenerates it; run.sh checks the tags are
-- unique). Every mapping and command the plugin defines has its tag.
local H = dofile(os.getenv("TR_TESTS") .. "/helpers.lua")

H.run("help", function()
  local plugin = vim.fn.fnamemodify(H.env("TR_TESTS"), ":h")
  vim.cmd("runtime plugin/threadradar.lua")
  local ok, err = pcall(vim.cmd, "help threadradar")
  H.check(ok, ":help threadradar: " .. tostring(err))
  H.check(vim.api.nvim_buf_get_name(0):find("doc/threadradar.txt", 1, true) ~= nil, "the help file is open: " .. vim.api.nvim_buf_get_name(0))
  for _, tag in ipairs({ "threadradar-mappings", "threadradar-setup", ":ThreadRadarSections", "<Plug>(ThreadRadarHover)", "threadradar-annotations" }) do
    local found = pcall(vim.cmd, "help " .. vim.fn.escape(tag, " "))
    H.check(found, ":help " .. tag)
  end
  vim.cmd("helpclose")
  -- The committed tags are :helptags's.
  local copy = vim.fn.tempname()
  vim.fn.mkdir(copy, "p")
  vim.fn.writefile(vim.fn.readfile(plugin .. "/doc/threadradar.txt", "b"), copy .. "/threadradar.txt", "b")
  vim.cmd("helptags " .. vim.fn.fnameescape(copy))
  H.eq(vim.fn.readfile(plugin .. "/doc/tags"), vim.fn.readfile(copy .. "/tags"), "doc/tags = :helptags doc (run it and commit the result)")
  -- Every user command and <Plug> mapping is documented.
  local tags = table.concat(vim.fn.readfile(copy .. "/tags"), "\n")
  for name in pairs(vim.api.nvim_get_commands({})) do
    if name:match("^ThreadRadar") then
      H.check(tags:find("\n:" .. name .. "\t", 1, true) ~= nil or tags:find("^:" .. name .. "\t") ~= nil, "a tag for :" .. name)
    end
  end
  for _, m in ipairs(vim.api.nvim_get_keymap("n")) do
    if m.lhs:find("^<Plug>%(ThreadRadar") then
      H.check(tags:find(m.lhs .. "\t", 1, true) ~= nil, "a tag for " .. m.lhs)
    end
  end
end)
