import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "testdata"))

import harness  # noqa: E402
from scenario_fixture import scenario  # noqa: E402,F401  (the fixture)
from service_fixtures import postgres, redis_server  # noqa: E402,F401  (the services' fixtures)

def pytest_report_header(config):
    return "pyhang build dir: %s; interpreters: %s" % (
        harness.build_dir(), ", ".join(n for n, _ in harness.interpreters()))
