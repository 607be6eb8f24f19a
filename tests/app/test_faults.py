"""Faults and cancellation against the running app (in-process server, tiny injected models): a failing model load,
an out-of-memory in the middle of a run, a cancelled run and broken trace files each end in one clear message, free
the run's memory, and leave the app giving exactly the results it gave before."""
import gc
import json
import time
import weakref

import pytest
import torch
from gradio_client import Client, handle_file
from gradio_client.utils import Status

import app
from specviz.app import race as race_mod
from specviz.app.catalogue import Catalogue
from specviz.app.handlers import GEN_INPUTS
from specviz.engine.config import RunConfig
from specviz.engine.decode import decode, drain
from tests.support.apptools import (
    Slow,
    fingerprint,
    knob_args,
    module_gradio_tmp,  # noqa: F401 (fixture)
)
from tests.support.toy import toy

LIVE = weakref.WeakSet()                    # every decoding lane the app creates; empty once a run is over


class Faulty(Slow):
    """A Slow model whose forward raises `error` once `fail_at` more forwards have run (None: never)."""
    fail_at = None
    error: Exception = torch.OutOfMemoryError("CUDA out of memory. Tried to allocate 20.00 GiB")

    def forward(self, *a, **k):
        if self.fail_at is not None:
            self.fail_at -= 1
            if self.fail_at < 0:
                self.fail_at = None
                raise type(self.error)(*self.error.args)       # a fresh exception, as a real fault
        return super().forward(*a, **k)


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    model, factory = toy(codes=8, grid=4)
    faulty = Faulty(model)

    def load(name):
        if name == "broken":
            raise OSError("model.safetensors: unexpected end of file")
        return faulty, factory
    backend = Catalogue(load, ("tiny", "broken"), ("tiny",))        # a trace names its model "tiny"
    with pytest.MonkeyPatch.context() as mp:
        init = race_mod._Lane.__init__

        def tracked(self, *a, **k):
            init(self, *a, **k)
            LIVE.add(self)
        mp.setattr(race_mod._Lane, "__init__", tracked)
        demo = app.build_demo(backend, fps=1000, export_root=str(tmp_path_factory.mktemp("exports")))
        _, url, _ = demo.launch(prevent_thread_lock=True, quiet=True)
        client = Client(url, verbose=False)
        ref = fingerprint(client.predict(*ARGS, api_name="/generate"))
        yield client, faulty, factory, ref
        client.close()
        demo.close()


ARGS = knob_args(["ar", "csd", "cascade"], seed=4, model="tiny")


def released(timeout=5.0) -> bool:
    """No decoding lane (model state, caches, partial traces) outlives its run."""
    end = time.time() + timeout
    while time.time() < end:
        gc.collect()
        if not list(LIVE):
            return True
        time.sleep(0.05)
    return False


@pytest.mark.slow
def test_failing_model_load_is_one_message_and_the_app_goes_on(served):
    client, _, _, ref = served
    with pytest.raises(Exception, match="could not load model 'broken'.*unexpected end of file") as info:
        client.predict(*knob_args(["ar"], model="broken"), api_name="/generate")
    assert "Traceback" not in str(info.value) and "still usable" in str(info.value)
    assert fingerprint(client.predict(*ARGS, api_name="/generate")) == ref


@pytest.mark.parametrize("error", [torch.OutOfMemoryError("CUDA out of memory. Tried to allocate 20.00 GiB"),
                                   MemoryError(), RuntimeError("DefaultCPUAllocator: can't allocate memory")])
@pytest.mark.slow
def test_out_of_memory_mid_run_frees_the_run_and_the_app_goes_on(served, error):
    client, faulty, _, ref = served
    faulty.error, faulty.fail_at = error, 5
    with pytest.raises(Exception, match="Out of memory during this run") as info:
        client.predict(*ARGS, api_name="/generate")
    assert "Traceback" not in str(info.value)
    assert faulty.fail_at is None, "the fault never fired"
    assert released(), "the failed run still holds its lanes"
    assert fingerprint(client.predict(*ARGS, api_name="/generate")) == ref


@pytest.mark.slow
def test_cancelled_run_frees_its_memory_and_the_next_run_is_unchanged(served):
    client, faulty, _, ref = served
    faulty.delay = 0.2                                           # 16 ticks: the run lasts >= 3 s
    try:
        job = client.submit(*ARGS, api_name="/generate")
        for _ in job:                                            # the first streamed update (it may come before
            break                                                # the race has built its lanes)
        deadline = time.time() + 3
        while not list(LIVE) and time.time() < deadline:
            time.sleep(0.01)
        assert list(LIVE), "lanes are not tracked"
        assert job.cancel()
        at_cancel = faulty.forwards
        time.sleep(0.5)
        assert faulty.forwards - at_cancel <= 3, "the run kept going after cancel"   # <= one tick of 3 lanes
        assert job.status().code == Status.CANCELLED
        assert released(), "the cancelled run still holds its lanes"
    finally:
        faulty.delay = 0.0
    assert fingerprint(client.predict(*ARGS, api_name="/generate")) == ref


@pytest.mark.slow
def test_broken_trace_files_are_one_message_and_good_ones_open(served, tmp_path):
    client, faulty, factory, ref = served
    bad = tmp_path / "broken.json"
    bad.write_text('{"method": "csd", "steps": [')
    with pytest.raises(Exception, match="broken.json: not a specviz trace") as info:
        client.predict([handle_file(str(bad))], 1.0, api_name="/open_traces")
    assert "Traceback" not in str(info.value)
    knobs = {k: v for k, v in zip(GEN_INPUTS, ARGS, strict=False) if k != "methods"}
    paths = []
    for m in ("ar", "csd", "cascade"):                      # the same runs, written by the engine, then opened
        p = tmp_path / f"{m}.json"
        p.write_text(json.dumps(drain(decode(faulty.inner, RunConfig(method=m, **knobs), factory)).trace.to_json()))
        paths.append(handle_file(str(p)))
    opened = client.predict(paths, 1.0, api_name="/open_traces")
    assert fingerprint(opened) == ref
    assert opened[-1] == ["ar", "csd", "cascade"]                      # the race row shows the opened methods
    assert fingerprint(client.predict(*ARGS, api_name="/generate")) == ref
