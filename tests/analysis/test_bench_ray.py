"""The bench on Ray, local mode on CPU with 2 workers and the tiny LlamaGen: the same rows as one
process for the same prompts and seeds; a worker killed mid-run loses only its image; a re-run after a crash skips
the rows already written."""
import json

import pytest

from specviz.analysis import bench, bench_ray

ray = pytest.importorskip("ray")
pytestmark = pytest.mark.slow

PROMPTS = [("a red house", None), ("a blue sky", None), ("a green tree", None)]
METHODS = ["ar", "sjd:window=4"]


def stable(rows):
    return sorted((bench.key(r), {k: v for k, v in r.items() if k not in bench.VOLATILE}) for r in rows)


@pytest.fixture(scope="module")
def setup(tmp_path_factory):
    import tests.support.llamagen_tiny as lt
    from specviz.models import load_model
    target = lt.converted_pair(tmp_path_factory.mktemp("lg"))[0]
    base = {"model": target}
    todo = bench.jobs(METHODS, PROMPTS, 2)
    local, n = bench.collect(load_model(target, "cpu"), todo, base, progress=False)
    assert n == len(todo) == 12
    yield target, base, todo, local
    ray.shutdown()


def test_ray_gives_the_rows_of_one_process(setup, tmp_path):
    _, base, todo, local = setup
    out = tmp_path / "rows.jsonl"
    rows, n = bench.collect(None, todo, base, out=out, ray="auto", workers=2, progress=False)
    assert n == 12 and stable(rows) == stable(local)
    assert [bench.key(r) for r in rows] == [bench.key(j) for j in todo]          # returned in the jobs' order
    assert bench.collect(None, todo, base, out=out, ray="auto", workers=2, progress=False)[1] == 0   # all done


def test_a_killed_worker_loses_only_its_image_and_a_rerun_skips_done_rows(setup, tmp_path, monkeypatch):
    _, base, todo, local = setup
    real = bench_ray.ray_rows
    killed = []

    def killing(*a, **kw):                                    # kill worker 0 as soon as the first row is in
        for i, row in enumerate(real(*a, **kw)):
            if i == 0:
                ray.kill(ray.get_actor(bench_ray.ACTOR_NAME.format(0)), no_restart=True)
                killed.append(True)
            yield row
    monkeypatch.setattr(bench_ray, "ray_rows", killing)
    out = tmp_path / "rows.jsonl"
    rows, n = bench.collect(None, todo, base, out=out, ray="auto", workers=2, progress=False)
    written = [json.loads(line) for line in out.read_text().splitlines()]
    assert killed and n == 12 and len(written) == 12 and len({bench.key(r) for r in written}) == 12
    assert stable(rows) == stable(local)
    monkeypatch.setattr(bench_ray, "ray_rows", real)

    lines = out.read_text().splitlines()                      # a driver crash: 5 rows kept, the 6th cut short
    out.write_text("\n".join(lines[:5]) + "\n" + lines[5][:40])
    kept = {bench.key(json.loads(x)): json.loads(x)["seconds"] for x in lines[:5]}
    rows, n = bench.collect(None, todo, base, out=out, ray="auto", workers=2, progress=False)
    assert n == 7 and stable(rows) == stable(local)
    assert stable(bench.read_rows(out)) == stable(local)      # the file itself: every row once, the cut line dropped
    assert all(r["seconds"] == kept[bench.key(r)] for r in rows if bench.key(r) in kept)   # not redone
