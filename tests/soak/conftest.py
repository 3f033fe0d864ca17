import os
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent


def pytest_collection_modifyitems(config, items):
    # this hook sees the whole session's items: skip only the soak's own
    if os.environ.get("HAPENNY_SOAK"):
        return
    skip = pytest.mark.skip(reason="the soak runs for about 20 minutes: make soak")
    for item in items:
        if HERE in Path(str(item.fspath)).resolve().parents:
            item.add_marker(skip)
