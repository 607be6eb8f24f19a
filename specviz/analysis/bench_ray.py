"""The bench on a Ray cluster (`specviz bench --ray ADDRESS|auto`): one actor per GPU (with no GPU in the cluster,
one per CPU, or `--workers N`), each loading the model once; the driver hands every idle actor the next image, so a
shard is one image at a time and a crashed or pre-empted actor loses only the image it was drawing: that job goes
back on the queue and a fresh actor takes the dead one's place (at most RESTARTS times per slot). The rows stream
back to bench.collect, which appends each to the JSONL file as it arrives."""
from __future__ import annotations

from typing import Iterator

RESTARTS = 3
ACTOR_NAME = "specviz-bench-{}"


def _actor_class(ray):
    @ray.remote
    class BenchWorker:
        def __init__(self, base: dict, threads: int, run_job):
            import torch  # the actor's own process: its thread count and device are set here

            from specviz.models import load_model  # loaded once per actor, in the actor's process
            if not torch.cuda.is_available():
                torch.set_num_threads(threads)
            self.base, self.run_job = base, run_job
            self.model = load_model(base.get("model", "scenes"))

        def run(self, job: dict) -> dict:
            return self.run_job(self.model, job, self.base)

    return BenchWorker


def ray_rows(address: str, base: dict, todo: list[dict], workers: int | None, run_job) -> Iterator[dict]:
    """Rows of `todo` (in finishing order) from actors on the cluster at `address` ('auto': the local one, started
    if needed); each actor draws a job with `run_job(model, job, base)` (bench.run_job, handed in: no import cycle)."""
    import ray  # optional dependency (requirements-ray.txt): only a --ray run needs it

    if not todo:
        return
    ray.init(address=None if address == "auto" else address, ignore_reinit_error=True, include_dashboard=False,
             log_to_driver=False)
    gpus = int(ray.cluster_resources().get("GPU", 0))
    n = min(len(todo), workers or gpus or int(ray.cluster_resources().get("CPU", 1)))
    per = {"num_gpus": 1, "num_cpus": 1} if gpus else {"num_cpus": 1}
    worker = _actor_class(ray)

    restarts = dict.fromkeys(range(n), 0)

    def start(i):                                      # a replacement gets a new name: the dead one's may linger
        name = ACTOR_NAME.format(i) + (f"-r{restarts[i]}" if restarts[i] else "")
        return worker.options(name=name, **per).remote(base, 1, run_job)

    actors = {i: start(i) for i in range(n)}
    queue = list(reversed(todo))
    running = {}                                       # object ref -> (slot, job)
    for i in actors:
        if queue:
            job = queue.pop()
            running[actors[i].run.remote(job)] = (i, job)
    try:
        while running:
            ready, _ = ray.wait(list(running), num_returns=1)
            slot, job = running.pop(ready[0])
            try:
                row = ray.get(ready[0])
            except ray.exceptions.RayActorError:
                if restarts[slot] >= RESTARTS:
                    raise
                restarts[slot] += 1
                queue.append(job)                      # only this image is lost; it runs again
                actors[slot] = start(slot)
            else:
                yield row
            if queue:
                job = queue.pop()
                running[actors[slot].run.remote(job)] = (slot, job)
    finally:
        for a in actors.values():
            ray.kill(a)
