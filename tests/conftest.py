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
