"""pytest without gdb: the pyhang package from the checkout and the native
module from the build directory (PYHANG_BUILD_DIR, default build/)."""
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUILD = os.environ.get("PYHANG_BUILD_DIR") or os.path.join(ROOT, "build")
for path in (os.path.join(ROOT, "testdata"), os.path.join(BUILD, "python"), os.path.join(ROOT, "python")):
    if path not in sys.path:
        sys.path.insert(0, path)

from scenario_fixture import scenario  # noqa: E402,F401  (the fixture)
