"""Wrong variants of the keyed sweep (specviz/analysis/sweep.py pixel_measures, analysis/front.py, app/sweep_tab.py)."""
import statistics
import tempfile
from pathlib import Path

import pytest

from specviz.analysis import front, sweep
from tests.app import test_sweep_keyed as t
from tests.support.mutants import Mutant


def psnr_measured():
    """the PSNR sweep through the tab's handler, on the toy, in a folder of its own (detectors take no fixtures)."""
    with pytest.MonkeyPatch.context() as mp, tempfile.TemporaryDirectory() as d:
        mp.setattr(sweep, "load_model", lambda name: t._model())
        t.test_the_psnr_measure_over_the_images_that_differ(t._model(), Path(d))


def papers_refused():
    with pytest.MonkeyPatch.context() as mp, tempfile.TemporaryDirectory() as d:
        t.test_the_paired_measures_need_keyed_noise_and_are_refused_at_once(mp, Path(d))


VARIANTS = [
    Mutant("sweep: PSNR's error as the spread of the images (no 1/√n)",
           lambda mp: mp.setattr(sweep, "standard_error", lambda v: statistics.stdev(list(v))), (psnr_measured,)),
    Mutant("sweep: the front keeps the lowest PSNR", lambda mp: mp.setattr(front, "HIGHER", frozenset()),
           (t.test_the_front_keeps_the_highest_psnr,)),
    Mutant("sweep: a paired measure runs under the papers' noise", lambda mp: mp.setattr(front, "PAIRED", ()),
           (papers_refused,)),
]
