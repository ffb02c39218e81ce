#!/usr/bin/env python3
"""The glyph image in the terminal: Neovim runs with its real TUI on a pseudo-terminal, opens
Worker.run's detail with `image = true`, and this script reads everything Neovim wrote to the
terminal. In terminals that speak the kitty graphics protocol (TERM=xterm-kitty, WezTerm, Ghostty)
it must send one `a=T,f=100,t=f` escape naming a real PNG of the glyph (128 px high, rendered by the
server), placed inside the float, and delete it when the float closes; in any other terminal, no
graphics escape at all.

    TR_BIN=… TR_WS=… TR_EXPECT=… TR_TESTS=… NVIM=nvim PLUGIN=… python3 pty_image.py
"""
import base64
import fcntl
import os
import pty
import re
import select
import struct
import sys
import termios
import time

ROWS, COLS = 50, 160
KITTY_SHOW = re.compile(rb"\x1b_Ga=T,f=100,t=f,i=(\d+),c=(\d+),r=(\d+),C=1,q=2;([A-Za-z0-9+/=]+)\x1b\\")
KITTY_DELETE = b"\x1b_Ga=d,d=I,i=%d,q=2\x1b\\"


def run_nvim(term_env):
    env = {k: v for k, v in os.environ.items() if k not in ("KITTY_WINDOW_ID", "TERM_PROGRAM", "WEZTERM_EXECUTABLE")}
    env.update(term_env)
    argv = [os.environ.get("NVIM", "nvim"), "-u", "NONE", "-i", "NONE", "--cmd", "set rtp+=" + os.environ["PLUGIN"],
            "-c", "luafile " + os.path.join(os.environ["TR_TESTS"], "pty_image.lua")]
    pid, fd = pty.fork()
    if pid == 0:
        os.chdir(os.environ["TR_WS"])
        os.execvpe(argv[0], argv, env)
    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", ROWS, COLS, 0, 0))
    out = bytearray()
    deadline = time.time() + 90
    answered = False
    while time.time() < deadline:
        r, _, _ = select.select([fd], [], [], 0.2)
        if r:
            try:
                chunk = os.read(fd, 65536)
            except OSError:
                break
            if not chunk:
                break
            out += chunk
            # Answer the terminal queries Neovim's TUI may wait for (device attributes).
            if not answered and b"\x1b[c" in out:
                os.write(fd, b"\x1b[?62;c")
                answered = True
        else:
            done, status = os.waitpid(pid, os.WNOHANG)
            if done:
                return bytes(out), os.waitstatus_to_exitcode(status)
    _, status = os.waitpid(pid, 0)
    return bytes(out), os.waitstatus_to_exitcode(status)


def fail(msg, out):
    tail = out[-2000:].decode("utf-8", "replace")
    sys.exit("pty_image: " + msg + "\n--- the terminal's last output ---\n" + tail)


def main():
    passed = 0
    for name, term_env in [("kitty", {"TERM": "xterm-kitty"}), ("WezTerm", {"TERM": "xterm-256color", "TERM_PROGRAM": "WezTerm"}),
                          ("Ghostty", {"TERM": "xterm-256color", "TERM_PROGRAM": "ghostty"})]:
        out, code = run_nvim(term_env)
        if code != 0:
            fail(f"{name}: Neovim exited with {code}", out)
        shows = KITTY_SHOW.findall(out)
        if len(shows) != 1:
            fail(f"{name}: expected one kitty image escape, got {len(shows)}", out)
        image_id, cols, rows, b64 = (x.decode() for x in shows[0])
        path = base64.b64decode(b64).decode()
        with open(path, "rb") as f:
            png = f.read()
        if png[:8] != b"\x89PNG\r\n\x1a\n":
            fail(f"{name}: {path} is not a PNG", out)
        width, height = struct.unpack(">II", png[16:24])
        if height != 128 or width < 128:
            fail(f"{name}: the glyph PNG is {width}x{height}, not 128 px high", out)
        if (int(cols), int(rows)) != (21, 6):
            fail(f"{name}: the image spans {cols}x{rows} cells, not 21x6", out)
        # Placed with the cursor saved and moved into the float, then restored.
        at = out.find(shows[0][3])  # the base64 of the path
        before = out[max(0, at - 80):at]
        if not re.search(rb"\x1b\[s\x1b\[(\d+);(\d+)H\x1b_G", before):
            fail(f"{name}: the image is not placed at a saved-and-moved cursor", out)
        if KITTY_DELETE % int(image_id) not in out[at:]:
            found = re.findall(rb"\x1b_G[^;\x1b]*", out)
            fail(f"{name}: the image is not deleted when the float closes (graphics escapes: {found})", out)
        print(f"ok   pty_image {name}: {path} ({width}x{height}), {cols}x{rows} cells, deleted on close")
        passed += 1
    out, code = run_nvim({"TERM": "xterm-256color"})
    if code != 0:
        fail(f"xterm: Neovim exited with {code}", out)
    if b"\x1b_G" in out:
        fail("xterm: a kitty graphics escape in a terminal that does not speak the protocol", out)
    print("ok   pty_image xterm: no graphics escape, the text glyph only")


if __name__ == "__main__":
    main()
