"""The pytest fixtures of the services' tests (gdbext/tests: test_services.py, test_connection_pools.py):
a real PostgreSQL and a real redis-server (servers.py), one of each per test module that asks, stopped by
pid when it ends; imported by gdbext/tests/conftest.py, so pytest finds them."""
import pytest

import servers


@pytest.fixture(scope="module")
def postgres():
    with servers.postgres() as pg:
        yield pg


@pytest.fixture(scope="module")
def redis_server():
    with servers.redis() as r:
        yield r
