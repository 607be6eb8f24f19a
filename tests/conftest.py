import os
import sys
from pathlib import Path

import pytest
import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
torch.set_num_threads(int(os.environ.get("SPECVIZ_TEST_THREADS", "1")))


@pytest.fixture(autouse=True)
def _gradio_tmp(tmp_path, monkeypatch):
    monkeypatch.setenv("GRADIO_TEMP_DIR", str(tmp_path / "gradio"))


@pytest.fixture(scope="module")
def race_toy():
    """(model, tree-drafter factory) of a 4x4 toy with 8 codes: the race, view and drawing tests' model."""
    from tests.support.toy import toy
    return toy(codes=8, grid=4)


def pytest_collection_modifyitems(config, items):
    """Every test in tests/browser/ is a browser test (`-m "not browser"` leaves them out), by where it lives."""
    for item in items:
        if "browser" in item.path.parent.name:
            item.add_marker(pytest.mark.browser)
