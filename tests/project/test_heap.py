"""core/heap: the served app fixes glibc's mmap threshold before torch and gradio are imported, so freed big buffers
never move into the heap (the served app's memory stays flat: scripts/soak.py, docs/serving.md)."""
import ast
import subprocess
import sys
from pathlib import Path

import pytest

from specviz.core import heap

ROOT = Path(__file__).resolve().parents[2]

# malloc 1 MiB, free it, malloc 1 MiB again, and report whether the second one got its own mapping: glibc's
# default raises its threshold to 1 MiB at the free, so the second block comes from the heap (0); fixed, it is mapped
PROBE = """
import ctypes, sys
from specviz.core import heap
libc = heap.LIBC
libc.malloc.restype = ctypes.c_void_p
libc.free.argtypes = [ctypes.c_void_p]
{setup}
a = libc.malloc(1 << 20); libc.free(a)
before = heap.mapped_blocks()
b = libc.malloc(1 << 20)
print(heap.mapped_blocks() - before)
"""


def probe(setup: str) -> int:
    out = subprocess.run([sys.executable, "-c", PROBE.format(setup=setup)], cwd=ROOT, capture_output=True, text=True,
                         check=True).stdout
    return int(out.split()[-1])


@pytest.mark.skipif(heap.mapped_blocks() is None, reason="needs glibc 2.33+ (mallinfo2)")
def test_the_fixed_threshold_keeps_a_big_block_mapped_after_a_free():
    assert probe("") == 0                                   # glibc's default: the threshold rose at the free
    assert probe("assert heap.map_big_blocks()") == 1


@pytest.mark.skipif(heap.mapped_blocks() is None, reason="needs glibc 2.33+ (mallinfo2)")
def test_the_served_app_sets_it_before_torch_and_gradio():
    code = ("import runpy, sys\nsys.argv = ['app.py', '--help']\n"
            "try:\n    runpy.run_path('app.py', run_name='__main__')\nexcept SystemExit:\n    pass\n")
    assert probe(code) == 1                                 # `python app.py` applied the policy
    tree = ast.parse((ROOT / "app.py").read_text())
    first_import = next(i for i, n in enumerate(tree.body) if isinstance(n, ast.Import | ast.ImportFrom)
                        and any(a.name.split(".")[0] in ("torch", "gradio") for a in n.names)
                        or isinstance(n, ast.ImportFrom) and (n.module or "").split(".")[0] in ("torch", "gradio"))
    guard = next(i for i, n in enumerate(tree.body) if "map_big_blocks" in ast.unparse(n))
    assert guard < first_import, "the heap policy must be set before torch or gradio is imported"
    assert probe("import app") == 0                         # importing app (tests, tools) leaves the process's own
