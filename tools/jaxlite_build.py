"""jaxlite's build backend: setuptools', plus `jaxlite-as-jax.pth` in every wheel.

`JAXLITE_AS_JAX=1 python prog.py` runs a program that imports `jax` on jaxlite
(`jaxlite.jax_alias`). What runs at interpreter start is a `.pth` file at the top of
site-packages: `site` executes a line of it that starts with `import`. The line reads
the variable and does nothing else when it is unset, empty or "0" (a dictionary
lookup per start); otherwise it imports jaxlite and calls `install_from_env()`, which
parses the value ("1", "true", ... or "false", "no", ...).

setuptools cannot ship such a file by configuration: it installs files inside
packages (package data) or under the installation prefix (data files), never at the
top of site-packages, and its editable wheels (`pip install -e .`) hold only a path
entry. So the two PEP 517 hooks that build wheels, `build_wheel` and
`build_editable`, call setuptools' and then add the file to the finished wheel,
recorded in its RECORD like every other file (pip uninstall removes it). The other
hooks are setuptools' own. pyproject.toml names this module with
`backend-path = ["tools"]`; MANIFEST.in puts it in the sdist.
"""

from __future__ import annotations

import base64
import hashlib
import os
import zipfile

from setuptools import build_meta as _setuptools
from setuptools.build_meta import *  # noqa: F403 (the hooks not overridden here)

PTH_NAME = "jaxlite-as-jax.pth"
# One line: `site` executes lines that start with "import". The name sorts after
# `__editable__.jaxlite-*.pth`, which puts an editable checkout on sys.path first.
PTH_LINE = (
    'import os; os.environ.get("JAXLITE_AS_JAX", "") not in ("", "0") and '
    '__import__("jaxlite.jax_alias").jax_alias.install_from_env()\n'
)


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    name = _setuptools.build_wheel(wheel_directory, config_settings, metadata_directory)
    add_pth(os.path.join(wheel_directory, name))
    return name


def build_editable(wheel_directory, config_settings=None, metadata_directory=None):
    name = _setuptools.build_editable(
        wheel_directory, config_settings, metadata_directory
    )
    add_pth(os.path.join(wheel_directory, name))
    return name


def add_pth(wheel_path):
    """Rewrite the wheel at `wheel_path` with `PTH_NAME` at its root and its line
    (hash and size) in the RECORD."""
    data = PTH_LINE.encode()
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=")
    record_line = f"{PTH_NAME},sha256={digest.decode()},{len(data)}\n".encode()
    rewritten = wheel_path + ".tmp"
    with (
        zipfile.ZipFile(wheel_path) as source,
        zipfile.ZipFile(rewritten, "w", zipfile.ZIP_DEFLATED) as target,
    ):
        infos = source.infolist()
        if any(info.filename == PTH_NAME for info in infos):
            raise RuntimeError(f"{wheel_path} already holds {PTH_NAME}")
        pth = zipfile.ZipInfo(PTH_NAME, date_time=infos[0].date_time)
        pth.external_attr = 0o644 << 16
        pth.compress_type = zipfile.ZIP_DEFLATED
        target.writestr(pth, data)
        for info in infos:
            content = source.read(info)
            if info.filename.endswith(".dist-info/RECORD"):
                content = content.rstrip(b"\n") + b"\n" + record_line
            target.writestr(info, content)
    os.replace(rewritten, wheel_path)
