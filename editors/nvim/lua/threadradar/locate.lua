-- Finding the `threadradar` binary when server_path is a bare name (the default): a
-- `pip install threadradar` puts it beside the project's Python interpreter, which is looked at
-- before PATH (issue #33). The order: [tool.threadradar] python of the project (threadradar.toml,
-- else pyproject.toml), the active venv ($VIRTUAL_ENV), Neovim's own python3 provider
-- (vim.g.python3_host_prog), then PATH. `find` is pure: the caller passes what it looks at.
local M = {}

M.INSTALL = "install it into the project's Python environment: `pip install threadradar` (from a ThreadRadar checkout: `pip install .`), or `cargo install --path .` in the ThreadRadar repository, or point setup{ server_path = \"/path/to/threadradar\" } at the binary"

local function dirname(p)
  return (p:gsub("/+[^/]*$", ""))
end

--- `python` of [tool.threadradar] (pyproject.toml) or of the top level (threadradar.toml) as a
--- path (a bare name is left to PATH), absolute from `root`; nil without one.
function M.configured_python(text, is_pyproject, root)
  local in_table = not is_pyproject
  for line in (text .. "\n"):gmatch("([^\n]*)\n") do
    line = line:gsub("^%s+", ""):gsub("%s+$", "")
    local header = line:match("^%[([^%]]*)%]")
    if header then
      in_table = is_pyproject and vim.trim(header) == "tool.threadradar"
    elseif in_table then
      local value = line:match('^python%s*=%s*"([^"]*)"') or line:match("^python%s*=%s*'([^']*)'")
      if value then
        if value == "" or not value:find("/", 1, true) then
          return nil
        end
        return value:sub(1, 1) == "/" and value or (root .. "/" .. value)
      end
    end
  end
  return nil
end

--- The interpreters to look beside, in order: { python = path, source = words }.
--- `o`: { root, read = fn(path) -> text|nil, virtual_env, host_prog }.
function M.interpreters(o)
  local out = {}
  if o.root then
    for _, name in ipairs({ "threadradar.toml", "pyproject.toml" }) do
      local text = o.read(o.root .. "/" .. name)
      local py = text and M.configured_python(text, name == "pyproject.toml", o.root)
      if py then
        table.insert(out, { python = py, source = "[tool.threadradar] python in " .. name })
        break
      end
    end
  end
  if o.virtual_env and o.virtual_env ~= "" then
    table.insert(out, { python = o.virtual_env .. "/bin/python", source = "the active venv ($VIRTUAL_ENV)" })
  end
  if type(o.host_prog) == "string" and o.host_prog ~= "" then
    table.insert(out, { python = o.host_prog, source = "vim.g.python3_host_prog" })
  end
  return out
end

--- The binary `name` resolves to: beside each interpreter, else on PATH. Returns
--- { path = …, source = … } or nil, and the places tried (for the health check).
--- `o` as for `interpreters`, plus executable = fn(path) -> bool, exepath = fn(name) -> path|"".
function M.find(name, o)
  local tried = {}
  for _, i in ipairs(M.interpreters(o)) do
    local p = dirname(i.python) .. "/" .. name
    table.insert(tried, p .. " (" .. i.source .. ")")
    if o.executable(p) then
      return { path = p, source = "the environment of " .. i.source .. " (" .. i.python .. ")" }, tried
    end
  end
  table.insert(tried, name .. " on PATH")
  local p = o.exepath(name)
  if p ~= nil and p ~= "" then
    return { path = p, source = "PATH" }, tried
  end
  return nil, tried
end

--- The interpreter that records a project's programs (pure), in the order the server picks the
--- one of ▶ Profile (lsp-server/src/project.rs): [tool.threadradar] python (threadradar.toml,
--- else pyproject.toml), the project's .venv/bin/python or venv/bin/python, $VIRTUAL_ENV/bin/python,
--- then python3 on PATH. `o`: { root, read, virtual_env, executable, exepath }. Returns
--- { python = path|"python3", path = where python3 is (PATH only), source = words }.
function M.project_python(o)
  if o.root then
    for _, name in ipairs({ "threadradar.toml", "pyproject.toml" }) do
      local text = o.read(o.root .. "/" .. name)
      local py = text and M.configured_python(text, name == "pyproject.toml", o.root)
      if py then
        return { python = py, source = "[tool.threadradar] python in " .. name }
      end
    end
    for _, rel in ipairs({ ".venv/bin/python", "venv/bin/python" }) do
      if o.executable(o.root .. "/" .. rel) then
        return { python = o.root .. "/" .. rel, source = "the project's " .. rel }
      end
    end
  end
  if o.virtual_env and o.virtual_env ~= "" and o.executable(o.virtual_env .. "/bin/python") then
    return { python = o.virtual_env .. "/bin/python", source = "the active venv ($VIRTUAL_ENV)" }
  end
  -- The name, not its path: the recorder finds the interpreter behind a wrapper (a pyenv shim).
  local p = o.exepath("python3")
  return { python = "python3", path = (p ~= nil and p ~= "") and p or nil, source = "python3 on PATH" }
end

local function here(root)
  return {
    root = root or require("threadradar.lsp").find_root(vim.fn.getcwd()),
    read = function(p)
      if vim.fn.filereadable(p) == 1 then
        return table.concat(vim.fn.readfile(p), "\n")
      end
      return nil
    end,
    virtual_env = os.getenv("VIRTUAL_ENV"),
    host_prog = vim.g.python3_host_prog,
    executable = function(p)
      return vim.fn.executable(p) == 1
    end,
    exepath = vim.fn.exepath,
  }
end

--- project_python on this Neovim, for the project at `root` (the working directory's by default).
function M.python_here(root)
  return M.project_python(here(root))
end

--- `find` on this Neovim: the project of the current directory, its files, the environment.
function M.find_here(name)
  return M.find(name, here())
end

return M
