"""Fixtures that load the sample scripts as modules.

The sample folders are not packages and their files share names (``buggy.py``,
``fixed.py``), so each script is loaded from its path under a unique module name.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

SAMPLES = Path(__file__).resolve().parents[1]


def load_sample(relative_path: str, module_name: str) -> ModuleType:
    """Import ``samples/python/<relative_path>`` as ``module_name`` (once per session)."""
    if module_name in sys.modules:
        return sys.modules[module_name]
    spec = importlib.util.spec_from_file_location(module_name, SAMPLES / relative_path)
    assert spec is not None and spec.loader is not None, relative_path
    module = importlib.util.module_from_spec(spec)
    # Registered before it runs: dataclasses look their module up in sys.modules.
    sys.modules[module_name] = module
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="session")
def bug1_buggy() -> ModuleType:
    return load_sample("bug1_worker_manager/buggy.py", "bug1_buggy")


@pytest.fixture(scope="session")
def bug1_fixed() -> ModuleType:
    return load_sample("bug1_worker_manager/fixed.py", "bug1_fixed")
