"""The served app (`python app.py`, a separate process, the shipped scenes model) under hostile clients:
500+ malformed calls over every input, raw JSON NaN/Infinity, malformed trace uploads and path-like files, then
8 concurrent sessions. Every hostile call must get one clear error naming what was wrong, the server must stay up,
and a valid call after each batch must return exactly what it returned before."""
import copy
import json
import math
import os
import socket
import subprocess
import sys
import threading
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import pytest
from gradio_client import Client, handle_file

from specviz.app.handlers import GEN_INPUTS
from specviz.engine.config import RunConfig
from specviz.models.runner import run
from tests.support.apptools import fingerprint, knob_args

ROOT = Path(__file__).resolve().parents[2]
GENERIC = ("Traceback", "Unexpected error", "has raised an exception", "show_error")
VALID = dict(prompt="a red house on the left, a sunset sky over snow", seed=5, window=16, tree_depth=4, tree_topk=4,
             lam=4.0, delta=0.95, tau_pos=0.8, tau_seq=0.9, cascade_budget=1.0)
REF_METHODS = ["ar", "csd"]
# the valid call after each batch (and each session's run): CSD alone, the method the hostile knobs steer (λ, δ,
# window), ~3 s a run here where AR's 256 forwards made ar + csd ~11 s; ar + csd is kept for the reference `ref`
CHECK_METHODS = ["csd"]
# what a clear message must mention, per input (label words or the knob's name)
NAMES = dict(prompt=("prompt", "words"), seed=("seed",), model=("model",), methods=("method",), lam=("λ", "lam"),
             delta=("δ", "delta"), tau_pos=("τ_pos", "tau-pos"), tau_seq=("τ_seq", "tau-seq"),
             temperature=("temperature",), top_k=("top-k",), cfg=("cfg",), window=("window",), tree=("tree",),
             tree_depth=("tree depth", "tree-depth"), tree_topk=("branching", "tree-topk"),
             cascade_budget=("budget",), opacity=("opacity",))
RANGES = dict(seed=(0, None), lam=(0, 10), delta=(0, 1), tau_pos=(0.5, 1), tau_seq=(0.5, 1), temperature=(0, 2),
              top_k=(0, 512), cfg=(1, 10), window=(2, 32), tree_depth=(1, 8), tree_topk=(1, 8),
              cascade_budget=(0, 2), opacity=(0, 1))
INTEGER = ("seed", "top_k", "window", "tree_depth", "tree_topk")


def args(methods=REF_METHODS, **over):
    a = knob_args(methods, **(VALID | over))
    if "opacity" in over:
        a[-1] = over["opacity"]
    return a


def rss_kb(pid: int) -> int:
    return int(Path(f"/proc/{pid}/status").read_text().split("VmRSS:")[1].split()[0])


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = dict(os.environ, GRADIO_TEMP_DIR=str(tmp_path_factory.mktemp("gradio")), GRADIO_ANALYTICS_ENABLED="False",
               OMP_NUM_THREADS="1")
    log = tmp_path_factory.mktemp("log") / "server.log"
    with open(log, "w") as out:
        proc = subprocess.Popen([sys.executable, "app.py", "--port", str(port), "--threads", "1"], cwd=ROOT, env=env,
                                stdout=out, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    deadline = time.time() + 180
    while True:
        assert proc.poll() is None, f"the app exited: {log.read_text()[-2000:]}"
        try:
            httpx.get(f"{url}/gradio_api/info", timeout=2).raise_for_status()
            break
        except httpx.HTTPError:
            assert time.time() < deadline, "the app did not come up in 180 s"
            time.sleep(0.5)
    client = Client(url, verbose=False)
    ref = fingerprint(client.predict(*args(), api_name="/generate"))
    check = fingerprint(client.predict(*args(CHECK_METHODS), api_name="/generate"))     # the valid call's answer
    yield url, proc, client, ref, check
    client.close()
    proc.terminate()
    proc.wait(30)


def answer(client, call) -> str | None:
    """The error message of a refused call; None when the call succeeded."""
    api, payload = call
    try:
        client.predict(*payload, api_name=api)
    except Exception as e:                              # noqa: BLE001 - the message is what is judged
        return str(e) or type(e).__name__
    return None


def judge(batch, server_state, names_for=lambda label: NAMES[label.split("=")[0]]) -> list[str]:
    """Run a batch of (label, call); return what went wrong (empty: every call refused clearly). names_for(label):
    the words of which a clear message names at least one (default: the knob's)."""
    url, proc, client, ref, check = server_state
    bad = []
    for label, call in batch:
        msg = answer(client, call)
        if os.environ.get("SPECVIZ_HOSTILE_LOG"):                      # to read every answer: set it to a file
            with open(os.environ["SPECVIZ_HOSTILE_LOG"], "a") as f:
                f.write(f"{label}\n    -> {msg}\n")
        if msg is None:
            bad.append(f"{label}: accepted")
        elif any(g in msg for g in GENERIC) or not any(n.lower() in msg.lower() for n in names_for(label)):
            bad.append(f"{label}: unclear message {msg[:160]!r}")
    assert proc.poll() is None, "the server died"
    if not unchanged(server_state):
        bad.append("the valid call after the batch changed its answer")
    return bad


def unchanged(server_state) -> bool:
    """The valid call (CHECK_METHODS) answers exactly as it did when the server came up."""
    client, check = server_state[2], server_state[4]
    return fingerprint(client.predict(*args(CHECK_METHODS), api_name="/generate")) == check


def numeric_batch(knob: str) -> list:
    lo, hi = RANGES[knob]
    values = [-1e308, 1e308, -(10 ** 20), 10 ** 20, 2 ** 70, lo - 1, "abc", "", "1", "NaN", "Infinity", True, False,
              [], {}, [1], {"value": 1}]
    values += [hi + 1, hi * 10 + 7] if hi is not None else [2 ** 63, 10 ** 30]
    values += [lo + 0.5] if knob in INTEGER else [None]
    return [(f"{knob}={v!r}", ("/generate", args(**{knob: v}))) for v in values]


def judge_all(batches: list, server_state) -> tuple[int, list[str]]:
    """Several batches, each followed by the reference call: (calls made, what went wrong)."""
    return sum(len(b) for b in batches), [line for b in batches for line in judge(b, server_state)]


@pytest.mark.slow
def test_hostile_numbers(server):
    total, bad = judge_all([numeric_batch(knob) for knob in RANGES], server)
    print(f"{total} hostile numeric calls")
    assert total >= 240 and not bad, "\n".join(bad)


@pytest.mark.slow
def test_raw_json_nan_and_infinity(server):
    """gradio_client cannot send NaN; a raw client can (Python's json writes NaN / Infinity literals)."""
    url, proc, client, ref, check = server
    bad = []
    for knob in RANGES:
        for v in (math.nan, math.inf, -math.inf):
            r = httpx.post(f"{url}/gradio_api/call/generate", content=json.dumps({"data": args(**{knob: v})}),
                           headers={"content-type": "application/json"})
            r.raise_for_status()
            events = httpx.get(f"{url}/gradio_api/call/generate/{r.json()['event_id']}", timeout=60).text
            msg = None
            if "event: error" in events:
                msg = json.loads(events.split("event: error", 1)[1].split("data:", 1)[1].strip())["error"]
            if msg is None or not ("finite" in msg or "whole" in msg) or not any(n in msg.lower() for n in NAMES[knob]):
                bad.append(f"{knob}={v}: {str(msg)[:160]!r}")
    assert proc.poll() is None and unchanged(server)
    assert not bad, "\n".join(bad)


TEXT = dict(
    prompt=["", "   ", "\n\t", None, 5, [], {}, ["a red house"], "a" * 100_000, "a red house " * 9000, "x" * 501,
            "🙂" * 600, "zzz qqq", "<script>alert(1)</script>", "\x00" * 10, "../../../etc/passwd"],
    methods=[[], None, "ar", [1], ["bogus"], ["ar", "bogus"], ["../x"], [None], [[]], {"ar": 1}, ["AR"], [""],
             ["ar", "csd"] + ["rm -rf /"]],
    model=["", None, "../../etc/passwd", "/etc/passwd", "~/.ssh/id_rsa", "file:///etc/passwd",
           "http://evil.example/model", "https://huggingface.co/x/y", "deepseek-ai/Janus-Pro-7B", "C:\\Windows",
           "scenes/../scenes", "SCENES", "scenes ", 5, [], {"path": "/etc/passwd"}, "\x00", "assets", "./assets"],
    tree=["", "zz", 5, ["dynamic"], "DYNAMIC", "../", {}, "static; rm -rf /"],
)


def text_batch(knob: str, values: list) -> list:
    batch = []
    for v in values:
        a = args(**{knob: v}) if knob != "methods" else args()
        if knob == "methods":
            a[GEN_INPUTS.index("methods")] = v
        batch.append((f"{knob}={v!r}"[:60], ("/generate", a)))
    return batch


@pytest.mark.slow
def test_hostile_text_and_choices(server):
    total, bad = judge_all([text_batch(knob, values) for knob, values in TEXT.items()], server)
    print(f"{total} hostile text / choice calls")
    assert total >= 50 and not bad, "\n".join(bad)


@pytest.mark.slow
def test_equivalent_spellings_give_the_same_answer(server):
    """Not hostile, just unusual: duplicates, padding and float seeds are normalised, not errors."""
    url, proc, client, ref, check = server
    a = args(seed=5.0, prompt="  " + VALID["prompt"] + "  ")
    a[GEN_INPUTS.index("methods")] = ["csd", "ar", "ar", "csd"]
    assert fingerprint(client.predict(*a, api_name="/generate")) == ref


# ---------------------------------------------------------------------------------------------------- trace uploads
@pytest.fixture(scope="module")
def good_trace():
    cfg = RunConfig(method="csd", **{k: v for k, v in VALID.items()})
    return run(cfg).to_json()


def _event_mutations(good: dict) -> list:
    ints = ("pos", "token", "level", "node", "parent")
    floats = ("p_draft", "p_target", "accept_prob", "exact_prob", "u", "entropy", "entropy_norm", "tv", "tv_cost",
              "moved", "similarity", "tv_residual", "budget_left", "scale")
    lists = ("interchangeable", "convergent", "siblings")
    out = []
    for name, values in ([(f, (-5, 10 ** 9, 1.5, "3", None, True)) for f in ints]
                         + [(f, (math.nan, math.inf, "0.5", None, [], True)) for f in floats]
                         + [("decision", ("hacked", None, 5)), ("point_mass", ("yes", None, 1))]
                         + [(f, ("x", [["a"]], [[1, 2]], [None], {"a": 1})) for f in lists]):
        for v in values:
            t = copy.deepcopy(good)
            t["steps"][1]["events"][0][name] = v
            out.append((f"event.{name}={v!r}", t))
    return out


def _mutations(good: dict) -> list:
    out = []
    for key in ("method", "model", "grid", "config", "tokens", "steps"):
        t = copy.deepcopy(good)
        del t[key]
        out.append((f"no {key}", t))
    top = dict(method=[None, 5, "bogus", "<script>", ""], model=[None, 5, "x" * 1000, ""],
               grid=[None, [], [12], [12, 12, 12], [0, 12], [-1, 12], [10 ** 6, 10 ** 6], ["a", "b"], [12.5, 12],
                     "12x12"],
               config=[None, [], good["config"] | {"lam": -1}, good["config"] | {"method": "ar"},
                       good["config"] | {"prompt": "x" * 600}, good["config"] | {"window": 1.5}, "lam=1"],
               tokens=[None, "abc", [-1], [1.5], [2 ** 40], list(range(1000))],
               steps=[None, [], {}, [None], [[]], good["steps"] * 200, "x"], summary=["x", [1]])
    for key, values in top.items():
        for v in values:
            t = copy.deepcopy(good)
            t[key] = v
            out.append((f"{key}={v!r}"[:60], t))
    for name, values in dict(step=(-1, "0", None, 10 ** 6), seconds=(-1, math.nan, "x"),
                             events=("x", None, [None], [1], [{}]),
                             drafted=([[1, 2]], [[0, 0, 10 ** 6, 0]], "x", [["a", 0, 0, 0]])).items():
        for v in values:
            t = copy.deepcopy(good)
            t["steps"][1][name] = v
            out.append((f"step.{name}={v!r}"[:60], t))
    return out + _event_mutations(good)


@pytest.mark.slow
def test_malformed_trace_uploads(server, good_trace, tmp_path):
    url, proc, client, ref, check = server
    files: list[tuple[str, list]] = []

    def write(name: str, data: bytes | str) -> str:
        p = tmp_path / name
        p.write_bytes(data if isinstance(data, bytes) else data.encode())
        return handle_file(str(p))
    text = json.dumps(good_trace)
    raw = {"empty": b"", "not-json": "not json", "list": "[1, 2]", "null": "null", "string": '"trace"',
           "deep": "[" * 100_000 + "]" * 100_000, "random": os.urandom(2048),
           "huge-number": text.replace('"tv": ', '"tv": 1e400, "x": ', 1), "too-big": text + " " * (17 << 20),
           "gzip": b"\x1f\x8b\x08" + os.urandom(500)}
    for i, (name, data) in enumerate(raw.items()):
        files.append((f"file {name}", [write(f"r{i}.json", data)]))
    for i, (name, t) in enumerate(_mutations(good_trace)):
        files.append((name, [write(f"m{i}.json", json.dumps(t))]))
    ok = write("good.json", json.dumps(good_trace))
    swapped = write("swapped.json", json.dumps(good_trace | {"grid": [24, 6], "method": "gsd",
                                                              "config": good_trace["config"] | {"method": "gsd"}}))
    ar = write("ar.json", json.dumps(good_trace | {"method": "ar", "config": good_trace["config"] | {"method": "ar"}}))
    files += [("two csd", [ok, ok]), ("8 files", [ok] * 8), ("grids differ", [ok, swapped]), ("no files", []),
              ("wrong type", [write("trace.txt", json.dumps(good_trace))]), ("ar trace with csd events", [ar])]
    batch = [(label, ("/open_traces", (payload, 1.0))) for label, payload in files]
    batch += [(f"opacity={v!r}", ("/open_traces", ([ok], v))) for v in ("x", None, -1, 2, [])]
    bad = []
    for start in range(0, len(batch), 60):
        bad += judge(batch[start:start + 60], server,
                     lambda label: ("opacity",) if label.startswith("opacity") else
                     ("trace", "file", "json", "grid", "method", "type", "open"))
    print(f"{len(batch)} hostile trace uploads")
    assert len(batch) >= 150 and not bad, "\n".join(bad)
    opened = client.predict([ok], 1.0, api_name="/open_traces")            # the good one still opens
    assert opened[-1] == ["csd"]


@pytest.mark.slow
def test_path_like_files_are_refused(server):
    """Files the client never uploaded: server paths and URLs are refused, nothing is read from disk."""
    url, proc, client, ref, check = server
    bad = []
    for payload in ([{"path": "/etc/passwd", "meta": {"_type": "gradio.FileData"}}],
                    [{"path": "../../../../etc/passwd", "meta": {"_type": "gradio.FileData"}}],
                    [{"path": str(ROOT / "assets" / "target.safetensors"), "meta": {"_type": "gradio.FileData"}}],
                    [{"path": "x.json", "url": "http://evil.example/x.json", "meta": {"_type": "gradio.FileData"}}],
                    "/etc/passwd", ["/etc/passwd"], [{"path": "/etc/passwd"}], [5], {"a": 1}):
        msg = answer(client, ("/open_traces", (payload, 1.0)))
        if msg is None or any(g in msg for g in GENERIC) or "root:" in msg:
            bad.append(f"{payload!r}: {str(msg)[:160]!r}")
    assert proc.poll() is None and unchanged(server)
    assert not bad, "\n".join(bad)


# ---------------------------------------------------------------------------------------------------- sessions
@pytest.mark.slow
def test_eight_concurrent_sessions_get_their_own_results(server):
    url, proc, client, ref, check = server
    prompts = ["a red house on the left, a sunset sky over snow", "a yellow sun in the centre, a clear day sky",
               "a green tree on the right, an overcast sky over grass", "a purple mountain, a starry night sky"]
    inputs = [args(CHECK_METHODS, seed=100 + i, prompt=prompts[i % 4], lam=[1.0, 4.0][i % 2]) for i in range(8)]
    sequential = [fingerprint(Client(url, verbose=False).predict(*a, api_name="/generate")) for a in inputs]
    assert len(set(sequential)) == 8

    def concurrently() -> list:
        got: dict[int, tuple] = {}

        def session(i: int):
            got[i] = fingerprint(Client(url, verbose=False).predict(*inputs[i], api_name="/generate"))
        threads = [threading.Thread(target=session, args=(i,)) for i in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(300)
        return [got.get(i) for i in range(8)]
    # the first concurrent round also sets up what concurrency costs once (worker threads, their malloc arenas);
    # the second must then give the same answers again and leave the resident memory where it found it
    assert concurrently() == sequential, "a session got another session's result"
    before = rss_kb(proc.pid)
    assert concurrently() == sequential, "a session got another session's result"
    after = rss_kb(proc.pid)
    print(f"server RSS {before / 1024:.0f} MB before, {after / 1024:.0f} MB after 8 concurrent sessions")
    assert after <= 1.2 * before


def distinct(deps: list) -> list:
    """One dependency per (the function Gradio runs, its inputs, its outputs), read from the same app built here
    (app.py's listeners are made in the same order with any catalogue)."""
    import app  # noqa: PLC0415 - this test alone builds the app in-process beside the served one
    fns = app.build_demo().fns
    fns = fns if isinstance(fns, dict) else dict(enumerate(fns))
    assert len(fns) == len(deps), (len(fns), len(deps))
    seen, out = set(), []
    for dep in deps:
        f = fns[dep["id"]]
        assert (len(f.inputs), len(f.outputs)) == (len(dep["inputs"]), len(dep["outputs"])), dep["id"]  # same one
        key = (getattr(f.fn, "__qualname__", repr(f.fn)), tuple(dep["inputs"]), tuple(dep["outputs"]))
        if key not in seen:
            seen.add(key)
            out.append(dep)
    return out


@pytest.mark.slow
def test_every_event_survives_raw_garbage(server):
    """Raw clients can reach the UI's private events too (the browser's queue protocol, by fn_index): each distinct
    handler, fed garbage in every input, answers (an error message or a harmless result) and the server stays up.
    Distinct: one listener per (function, inputs, outputs) — a lane's click is the same handler for each of the
    twelve methods, the ring and the Primer the same function after every click (143 listeners, 8 junk values each,
    took 228 s; the distinct ones are about a third)."""
    url, proc, client, ref, check = server
    config = httpx.get(f"{url}/config").json()
    config["dependencies"] = distinct(config["dependencies"])

    def call(dep, junk) -> str:
        """One raw call; '' if it answered properly, else what was wrong."""
        session = uuid.uuid4().hex[:12]
        body = {"data": [junk] * len(dep["inputs"]), "fn_index": dep["id"], "session_hash": session,
                "event_data": None, "trigger_id": None}
        httpx.post(f"{url}/gradio_api/queue/join", json=body).raise_for_status()
        with httpx.stream("GET", f"{url}/gradio_api/queue/data", params={"session_hash": session},
                          timeout=60) as events:
            done = [json.loads(line[5:]) for line in events.iter_lines() if line.startswith("data:")]
        final = [d for d in done if d.get("msg") == "process_completed"]
        error = final[0].get("output", {}).get("error") if final and not final[0].get("success") else ""
        if not final or error is None or error == "None" or any(g in str(error) for g in GENERIC):
            return f"{dep.get('api_name')} <- {junk!r}: {str(final)[:160]}"
        return ""

    pairs = [(dep, junk) for dep in config["dependencies"]
             for junk in (None, "x", -1, 1e308, [], {"a": 1}, "../../etc/passwd", 10 ** 30)]
    with ThreadPoolExecutor(4) as pool:       # 4 raw clients at once: the server's queue takes them concurrently
        answers = list(pool.map(lambda p: call(*p), pairs))
    bad, calls = [a for a in answers if a], len(answers)
    print(f"{calls} raw calls over {len(config['dependencies'])} events")
    assert proc.poll() is None and unchanged(server)
    assert calls >= 200 and not bad, "\n".join(bad)
