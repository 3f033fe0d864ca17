import os

import pytest


def pytest_collection_modifyitems(config, items):
    if os.environ.get("HAPENNY_SOAK"):
        return
    skip = pytest.mark.skip(reason="the soak runs for about 15 minutes: make soak")
    for item in items:
        item.add_marker(skip)
