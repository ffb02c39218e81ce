"""Threads and functions whose names are HTML: the panels must show them as text.

A thread is named `<img src=x onerror=alert(1)>` and the function it spends its time in has the
code name and qualified name `"><script>` (a `def` cannot be named that, so the code object is
renamed with `CodeType.replace`). A class created with `type()` gets the same name.
"""

import threading
import time
import types

HOSTILE_THREAD = "<img src=x onerror=alert(1)>"
HOSTILE_FUNCTION = '"><script>'


def _spin(seconds):
    end = time.monotonic() + seconds
    x = 0
    while time.monotonic() < end:
        for i in range(2000):
            x += i * i
    return x


def _make_hostile():
    # Compiled from a string, so no source file maps the frame to a `def`: the recorded name is
    # the code object's own. The file name is hostile too.
    namespace = {}
    source = "import time\ndef spin(seconds):\n    end = time.monotonic() + seconds\n    x = 0\n    while time.monotonic() < end:\n        for i in range(2000):\n            x += i * i\n    return x\n"
    exec(compile(source, '<"><script>.py>', "exec"), namespace)
    code = namespace["spin"].__code__
    fields = {"co_name": HOSTILE_FUNCTION}
    if hasattr(code, "co_qualname"):
        fields["co_qualname"] = HOSTILE_FUNCTION
    return types.FunctionType(code.replace(**fields), namespace, HOSTILE_FUNCTION)


hostile = _make_hostile()
Hostile = type(HOSTILE_FUNCTION, (), {"spin": staticmethod(hostile)})


def main():
    t = threading.Thread(target=Hostile.spin, args=(1.5,), name=HOSTILE_THREAD)
    u = threading.Thread(target=_spin, args=(0.5,), name="plain")
    t.start()
    u.start()
    t.join()
    u.join()


if __name__ == "__main__":
    main()
