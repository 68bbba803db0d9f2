"""Builds the fedstat Python module for `pip install .` (pyproject.toml) by running CMake on the
repository's fedstat_python target, and installs the extension it produces.

Only what the module needs is built (the SDK, the host's estimators and the module: not the
server, tools or tests), Release, in build/pip-<interpreter tag>/ of the checkout (or
$FEDSTAT_PIP_BUILD_DIR): a second `pip install .` rebuilds only what changed, and the compiler
flags and relative paths are those of the host-release preset, so a ccache that saw that build
(CMAKE_CXX_COMPILER_LAUNCHER=ccache in the environment) serves this one. The interpreter running
pip is the one the module is built for (-DPython_EXECUTABLE). The version is the CMake project's,
read from CMakeLists.txt: the single source, also compiled into fedstat.__version__.
"""
import os
import pathlib
import re
import shutil
import subprocess
import sys
import sysconfig

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = pathlib.Path(__file__).resolve().parent


def project_version():
    text = (ROOT / "CMakeLists.txt").read_text()
    match = re.search(r"project\(\s*fedstat\s+VERSION\s+([0-9]+\.[0-9]+\.[0-9]+)", text)
    if not match:
        sys.exit("setup.py: no 'project(fedstat VERSION x.y.z' in CMakeLists.txt")
    return match.group(1)


class CMakeBuild(build_ext):
    def build_extension(self, ext):
        if not (ROOT / ".deps").is_dir() and "FEDSTAT_SOURCES_DIR" not in os.environ:
            sys.exit("fedstat: .deps/ (the mbedTLS and nanopb sources) is missing: run "
                     "`bash scripts/setup.sh host` (or scripts/fetch-sources.sh) first")
        if shutil.which("cmake") is None:
            sys.exit("fedstat: cmake is missing: apt-get install cmake (scripts/setup.sh host)")
        tag = sysconfig.get_config_var("SOABI") or "python"
        build_dir = pathlib.Path(os.environ.get("FEDSTAT_PIP_BUILD_DIR",
                                                ROOT / "build" / f"pip-{tag}"))
        configure = ["cmake", "-S", str(ROOT), "-B", str(build_dir),
                     "-DCMAKE_BUILD_TYPE=Release", "-DFEDSTAT_BUILD_PYTHON=ON",
                     "-DFEDSTAT_BUILD_TESTS=OFF", "-DFEDSTAT_BUILD_EXAMPLES=OFF",
                     f"-DPython_EXECUTABLE={sys.executable}"]
        if "FEDSTAT_SOURCES_DIR" in os.environ:
            configure.append(f"-DFEDSTAT_SOURCES_DIR={os.environ['FEDSTAT_SOURCES_DIR']}")
        jobs = os.environ.get("CMAKE_BUILD_PARALLEL_LEVEL") or str(os.cpu_count() or 1)
        subprocess.run(configure, check=True)
        subprocess.run(["cmake", "--build", str(build_dir), "--target", "fedstat_python",
                        "-j", jobs], check=True)
        built = sorted((build_dir / "python").glob("fedstat*.so"))
        if len(built) != 1:
            sys.exit(f"fedstat: expected one fedstat*.so in {build_dir / 'python'}, found {built}")
        target = pathlib.Path(self.get_ext_fullpath(ext.name))
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(built[0], target)


setup(version=project_version(),
      ext_modules=[Extension("fedstat", sources=[])],
      cmdclass={"build_ext": CMakeBuild},
      zip_safe=False)
