"""The PEP 517 backend of `pip install .` and `pip wheel .`: maturin's, with the manylinux tag.

maturin's own PEP 517 hook builds with `--compatibility off` (a `linux_x86_64` wheel, which PyPI
refuses and which says nothing about the glibc it needs) unless `MATURIN_PEP517_ARGS` or pip's
`--config-settings build-args=…` name one; `[tool.maturin] compatibility` in pyproject.toml is
read only by `maturin build`. So this passes that setting on to the PEP 517 build, where maturin's
auditwheel step checks the binary against it. Anything the caller sets itself wins.
"""

import os

import maturin
from maturin import (  # noqa: F401  (the hooks pip calls, unchanged)
    build_editable,
    build_sdist,
    get_requires_for_build_sdist,
    get_requires_for_build_wheel,
    prepare_metadata_for_build_wheel,
)


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    chosen = config_settings and ("build-args" in config_settings or "maturin.build-args" in config_settings)
    compatibility = maturin.get_config().get("compatibility")
    if compatibility and not chosen and "MATURIN_PEP517_ARGS" not in os.environ:
        os.environ["MATURIN_PEP517_ARGS"] = f"--compatibility {compatibility}"
    return maturin.build_wheel(wheel_directory, config_settings, metadata_directory)
