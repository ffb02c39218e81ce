-- (issue #33) The server found where `pip install threadradar` put it: beside the project's
-- [tool.threadradar] python, the active venv, vim.g.python3_host_prog, then PATH — in that order,
-- and :checkhealth says which one it uses, then shows `threadradar doctor`'s checks.
local H = dofile(os.getenv("TR_TESTS") .. "/helpers.lua")
local locate = require("threadradar.locate")

H.run("locate", function()
  -- The order, on a made-up file system.
  local files = {
    ["/w/pyproject.toml"] = '[project]\npython = "not/this"\n[tool.threadradar]\ninterval-ms = 2\npython = "envs/a/bin/python"\n',
  }
  local present = {}
  local o = {
    root = "/w",
    read = function(p)
      return files[p]
    end,
    virtual_env = "/ve",
    host_prog = "/host/bin/python3",
    executable = function(p)
      return present[p] == true
    end,
    exepath = function(name)
      return present["/usr/bin/" .. name] and ("/usr/bin/" .. name) or ""
    end,
  }
  present = { ["/w/envs/a/bin/threadradar"] = true, ["/ve/bin/threadradar"] = true, ["/host/bin/threadradar"] = true, ["/usr/bin/threadradar"] = true }
  local found, tried = locate.find("threadradar", o)
  H.eq(found and found.path, "/w/envs/a/bin/threadradar", "[tool.threadradar] python first")
  H.check(found and found.source:find("[tool.threadradar] python in pyproject.toml", 1, true) ~= nil, "its source")
  H.eq(#tried, 1, "stops at the first")
  present["/w/envs/a/bin/threadradar"] = nil
  H.eq(locate.find("threadradar", o).path, "/ve/bin/threadradar", "then the active venv")
  present["/ve/bin/threadradar"] = nil
  H.eq(locate.find("threadradar", o).path, "/host/bin/threadradar", "then python3_host_prog")
  present["/host/bin/threadradar"] = nil
  found, tried = locate.find("threadradar", o)
  H.eq(found, { path = "/usr/bin/threadradar", source = "PATH" }, "then PATH")
  H.eq(#tried, 4, "every place tried")
  present = {}
  H.eq(locate.find("threadradar", o), nil, "nowhere")
  files["/w/threadradar.toml"] = "python = '/abs/py/bin/python'\n"
  H.eq(locate.interpreters(o)[1], { python = "/abs/py/bin/python", source = "[tool.threadradar] python in threadradar.toml" }, "threadradar.toml wins")
  H.eq(locate.configured_python('[tool.threadradar]\npython = "python3.12"\n', true, "/w"), nil, "a bare name is PATH's")

  -- For real: a venv whose bin/ holds the server (as pip installs it), found through $VIRTUAL_ENV
  -- with the default server_path, and named by :checkhealth with the doctor's checks.
  local venv = vim.fn.tempname()
  vim.fn.mkdir(venv .. "/bin", "p")
  vim.loop.fs_symlink(vim.fn.exepath(H.env("TR_BIN")), venv .. "/bin/threadradar")
  vim.env.VIRTUAL_ENV = venv
  H.setup({ server_path = "threadradar" })
  H.eq(require("threadradar.config").binary(), venv .. "/bin/threadradar", "the venv's binary")
  vim.cmd("checkhealth threadradar")
  local text = table.concat(H.lines(0), "\n")
  H.check(text:find("server found: " .. vim.pesc(venv .. "/bin/threadradar") .. " %(.-%), from the environment of the active venv") ~= nil, "health names the venv:\n" .. text)
  H.check(text:find("ThreadRadar: doctor", 1, true) ~= nil, "the doctor's section")
  H.check(text:find("OK:? ptrace: kernel.yama.ptrace_scope") ~= nil or text:find("ptrace: kernel.yama", 1, true) ~= nil, "the ptrace check")
  H.check(text:find("sched: kernel.perf_event_paranoid", 1, true) ~= nil, "the perf events check")
  H.check(text:find("runs: runs are written to", 1, true) ~= nil, "the runs check")
  vim.cmd("bwipeout!")

  -- Nowhere: the advice leads with pip.
  vim.env.VIRTUAL_ENV = nil
  vim.env.PATH = venv .. "/nothing-here"
  H.setup({ server_path = "threadradar" })
  vim.cmd("checkhealth threadradar")
  text = table.concat(H.lines(0), "\n")
  H.check(text:find("ERROR:? server not found") ~= nil, "not found:\n" .. text)
  H.check(text:find("pip install threadradar", 1, true) ~= nil, "pip install in the advice")

  -- The interpreter ▶ Profile and :ThreadRadarRecord use, in the server's order, on real files:
  -- [tool.threadradar] python, .venv, venv, $VIRTUAL_ENV, then the name python3.
  local locate = require("threadradar.locate")
  local proj = vim.fn.tempname() .. "-py"
  vim.fn.mkdir(proj .. "/.venv/bin", "p")
  vim.fn.mkdir(proj .. "/venv/bin", "p")
  for _, p in ipairs({ proj .. "/.venv/bin/python", proj .. "/venv/bin/python", proj .. "/custom" }) do
    vim.fn.writefile({ "#!/bin/sh" }, p)
    vim.fn.setfperm(p, "rwxr-xr-x")
  end
  H.eq(locate.python_here(proj).python, proj .. "/.venv/bin/python", ".venv first")
  vim.fn.delete(proj .. "/.venv", "rf")
  H.eq(locate.python_here(proj).python, proj .. "/venv/bin/python", "then venv")
  vim.fn.writefile({ "[tool.threadradar]", 'python = "./custom"' }, proj .. "/pyproject.toml")
  H.eq(locate.python_here(proj), { python = proj .. "/./custom", source = "[tool.threadradar] python in pyproject.toml" }, "the configured one wins")
  vim.fn.delete(proj .. "/pyproject.toml")
  vim.fn.delete(proj .. "/venv", "rf")
  H.eq(locate.python_here(proj).python, "python3", "else python3 (the recorder resolves a shim)")
  -- :ThreadRadarRecord % runs it.
  H.eq(require("threadradar.record").build_command({ "%", "--n", "3" }, "/p/app.py", proj .. "/custom"), { proj .. "/custom", "/p/app.py", "--n", "3" }, "% with the project's interpreter")
end)
