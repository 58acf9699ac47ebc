#!/usr/bin/python3
"""Dynamic batching (config.json "dynamic_batching", Triton's semantics) against a real braidd:
concurrent clients with different inputs and batch sizes each get exactly their own rows
(compared with numpy), the statistics count plan runs apart from inferences, a model whose
output has no batch dim is not batched, and the queue policy (timeout, max_queue_size),
deadlines and priority levels act while requests wait. Timing bounds are generous: the
machine is shared."""

import json
import threading
import time
import urllib.error
import urllib.request

import grpc
import numpy as np

import e2e_models
from braidd_fixture import BraiddTestCase, pb, run_tests, status_of
from tensors import infer_request, response_outputs

# Every batch size planned is formed: the tests here expect exact ladders and batches, which
# measuring each size at load (measure_ladder, on by default) could trim on a busy machine.
FIXED_LADDER = {"measure_ladder": False}
FLAT_N = 1 << 20                        # "flat": 4 MiB rows


def run_clients(client, n):
    """CLIENT(0) .. CLIENT(N-1) on threads at once; each joined within 120 s."""
    threads = [threading.Thread(target=client, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)


def model_status(d, name):
    doc = json.loads(d.http_get("/v2/status")[1])
    return [m for m in doc["models"] if m["name"] == name][0]


def stats(stub, name):
    r = stub.ModelStatistics(pb.ModelStatisticsRequest(name=name), timeout=10)
    return r.model_stats[0]


class Batching(BraiddTestCase):
    braidd_args = ("--workers", "2")

    @classmethod
    def prepare_repository(cls, repo):
        e2e_models.write_repository_model(repo, "mlp", e2e_models.batch_mlp())
        e2e_models.write_model_config(repo, "mlp", {
            "max_batch_size": 16,
            "dynamic_batching": {**FIXED_LADDER, "preferred_batch_size": [4, 8],
                                 "max_queue_delay_microseconds": 20000}})
        # the same model under Triton's strict rule with a long delay, for the tests that need
        # requests gathered whatever the timing: a batch goes when its rows reach a preferred
        # size (or after 0.5 s), so 16 clients started together always share runs
        e2e_models.write_repository_model(repo, "mlp_gather", e2e_models.batch_mlp())
        e2e_models.write_model_config(repo, "mlp_gather", {
            "max_batch_size": 16,
            "dynamic_batching": {**FIXED_LADDER, "preferred_batch_size": [8, 16],
                                 "max_queue_delay_microseconds": 500000, "wait_when_idle": True}})
        e2e_models.write_repository_model(repo, "softmax0", e2e_models.batch_softmax0())
        e2e_models.write_model_config(repo, "softmax0", {
            "max_batch_size": 8, "dynamic_batching": {**FIXED_LADDER,
                                     "max_queue_delay_microseconds": 20000}})
        # dim 0 limited to 2 by input_shapes: a gathered batch of 4 cannot be planned
        e2e_models.write_repository_model(repo, "narrow", e2e_models.batch_mlp())
        e2e_models.write_model_config(repo, "narrow", {
            "max_batch_size": 4,
            "input_shapes": {"x": {"min": [1, 8], "max": [2, 8]}},
            "dynamic_batching": {**FIXED_LADDER, "max_queue_delay_microseconds": 20000}})
        # a delay far longer than a run: a lone request must not wait it (work-conserving),
        # unless wait_when_idle asks for Triton's strict rule
        e2e_models.write_repository_model(repo, "idle", e2e_models.batch_mlp())
        e2e_models.write_model_config(repo, "idle", {
            "max_batch_size": 8, "dynamic_batching": {**FIXED_LADDER,
                                     "max_queue_delay_microseconds": 2000000}})
        e2e_models.write_repository_model(repo, "strict", e2e_models.batch_mlp())
        e2e_models.write_model_config(repo, "strict", {
            "max_batch_size": 8, "dynamic_batching": {**FIXED_LADDER,
                                     "max_queue_delay_microseconds": 300000,
                                     "wait_when_idle": True}})
        # a plan cache of 3 plans holds the ladder's 1, 2 and 4 only
        e2e_models.write_repository_model(repo, "capped", e2e_models.batch_mlp())
        e2e_models.write_model_config(repo, "capped", {
            "max_batch_size": 16, "plan_cache_max_plans": 3,
            "dynamic_batching": {**FIXED_LADDER, "max_queue_delay_microseconds": 20000}})
        # measured at load (measure_ladder's default): a tiny model, where a batch costs little
        # more than one row, keeps its sizes; x + 1 over 4 MiB rows costs the same per row at
        # any batch (memory-bound), so batching it would only add waiting: its sizes go
        e2e_models.write_repository_model(repo, "measured", e2e_models.batch_mlp())
        e2e_models.write_model_config(repo, "measured", {
            "max_batch_size": 8, "dynamic_batching": {"max_queue_delay_microseconds": 20000}})
        e2e_models.write_repository_model(repo, "flat", e2e_models.batch_add_one("N", FLAT_N))
        e2e_models.write_model_config(repo, "flat", {
            "max_batch_size": 8, "dynamic_batching": {"max_queue_delay_microseconds": 20000}})
        e2e_models.write_repository_model(repo, "gram", e2e_models.batch_gram())
        e2e_models.write_model_config(repo, "gram", {
            "max_batch_size": 8, "dynamic_batching": {**FIXED_LADDER,
                                     "max_queue_delay_microseconds": 20000}})

    def test_model_config_reports_dynamic_batching(self):
        c = self.stub.ModelConfig(pb.ModelConfigRequest(name="mlp"), timeout=10).config
        self.assertEqual(c.WhichOneof("scheduling_choice"), "dynamic_batching")
        db = c.dynamic_batching
        self.assertEqual(list(db.preferred_batch_size), [4, 8])
        self.assertEqual(db.max_queue_delay_microseconds, 20000)
        self.assertEqual(db.default_queue_policy.timeout_action, 0)        # REJECT
        url = "http://127.0.0.1:%d/v2/models/mlp/config" % self.d.rest_port
        with urllib.request.urlopen(url, timeout=10) as r:
            j = json.loads(r.read())
        self.assertEqual(j["dynamic_batching"]["preferred_batch_size"], [4, 8])
        self.assertEqual(j["dynamic_batching"]["max_queue_delay_microseconds"], 20000)
        self.assertEqual(j["dynamic_batching"]["default_queue_policy"]["timeout_action"], "REJECT")
        c = self.stub.ModelConfig(pb.ModelConfigRequest(name="tinycnn"), timeout=10).config
        self.assertIsNone(c.WhichOneof("scheduling_choice"))

    def test_concurrent_clients_get_their_own_rows(self):
        before = stats(self.stub, "mlp_gather")
        clients, per_client = 16, 8
        errors, rows_sent = [], [0] * clients
        start = threading.Barrier(clients)

        def client(i):
            rng = np.random.default_rng(100 + i)
            stub = self.d.stub(self.d.new_channel())
            start.wait()
            for _ in range(per_client):
                n = int(rng.integers(1, 5))
                x = rng.standard_normal((n, 8)).astype(np.float32)
                s = rng.integers(-1000, 1000, (n, 3)).astype(np.int32)
                outs = ["t", "h"] if rng.integers(0, 2) else None
                try:
                    got = response_outputs(stub.ModelInfer(
                        infer_request("mlp_gather", {"x": x, "s": s}, outputs=outs), timeout=60))
                    h, t = e2e_models.batch_mlp_reference(x, s)
                    np.testing.assert_allclose(got["h"], h, rtol=1e-5, atol=1e-5)
                    np.testing.assert_array_equal(got["t"], t)
                    rows_sent[i] += n
                except Exception as e:          # noqa: BLE001 (reported below)
                    errors.append(repr(e))

        run_clients(client, clients)
        self.assertEqual(errors, [])
        after = stats(self.stub, "mlp_gather")
        requests = clients * per_client
        self.assertEqual(after.inference_stats.success.count - before.inference_stats.success.count,
                         requests)
        self.assertEqual(after.inference_count - before.inference_count, sum(rows_sent))
        runs = after.execution_count - before.execution_count
        self.assertLess(runs, requests, "no request was batched with another")
        # batch_stats: one entry per batch size formed, their runs summing to the plan runs
        sizes = {b.batch_size: b.compute_infer.count for b in after.batch_stats}
        old = {b.batch_size: b.compute_infer.count for b in before.batch_stats}
        self.assertEqual(sum(sizes.values()) - sum(old.values()), runs)
        self.assertEqual(sum(k * (c - old.get(k, 0)) for k, c in sizes.items()), sum(rows_sent))
        self.assertTrue(all(1 <= k <= 16 for k in sizes), sizes)
        self.assertTrue(any(k > 4 for k in sizes), sizes)      # more rows than one request has
        url = "http://127.0.0.1:%d/v2/models/mlp_gather/stats" % self.d.rest_port
        with urllib.request.urlopen(url, timeout=10) as r:
            j = json.loads(r.read())["model_stats"][0]
        self.assertEqual({b["batch_size"]: b["compute_infer"]["count"] for b in j["batch_stats"]},
                         sizes)
        self.assertEqual(j["execution_count"], after.execution_count)
        # Triton's metrics count the same way: plan runs apart from inferences
        _, body, _ = self.d.http_get("/metrics")
        metrics = dict(line.rsplit(" ", 1) for line in body.decode().splitlines()
                       if line.startswith("nv_inference_") and 'model="mlp_gather"' in line)
        self.assertEqual(int(float(metrics['nv_inference_exec_count{model="mlp_gather",version="1"}'])),
                         after.execution_count)
        self.assertEqual(int(float(metrics['nv_inference_count{model="mlp_gather",version="1"}'])),
                         after.inference_count)

    def run_mlp_clients(self, model, clients, rounds, rows, seed):
        """CLIENTS threads at once, each sending ROUNDS requests of ROWS rows to MODEL (a
        batch_mlp) and checking both outputs against the reference: the errors they met."""
        errors = []

        def client(i):
            rng = np.random.default_rng(seed + i)
            stub = self.d.stub(self.d.new_channel())
            for _ in range(rounds):
                x = rng.standard_normal((rows, 8)).astype(np.float32)
                s = rng.integers(-9, 9, (rows, 3)).astype(np.int32)
                try:
                    got = response_outputs(stub.ModelInfer(
                        infer_request(model, {"x": x, "s": s}), timeout=60))
                    h, t = e2e_models.batch_mlp_reference(x, s)
                    np.testing.assert_allclose(got["h"], h, rtol=1e-5, atol=1e-5)
                    np.testing.assert_array_equal(got["t"], t)
                except Exception as e:          # noqa: BLE001 (returned to the test)
                    errors.append(repr(e))

        run_clients(client, clients)
        return errors

    def test_batch_sizes_are_planned_at_load(self):
        # the ladder: powers of two below 16, the preferred 4 and 8, and 16 itself
        self.assertIn("model=mlp version=1 dynamic_batching: batch sizes 1 2 4 8 16 planned",
                      self.d.log_text())
        self.assertEqual(model_status(self.d, "mlp")["batch_ladder"], [1, 2, 4, 8, 16])
        self.assertEqual(model_status(self.d, "gram")["batch_ladder"], [])   # not batched
        self.assertEqual(model_status(self.d, "mlp_gather")["batch_ladder"], [1, 2, 4, 8, 16])
        # the ladder's five plans lay the weights out once: the later ones read the first's
        cache = model_status(self.d, "mlp")["plan_cache"]
        self.assertGreater(cache["weights_bytes"], 0, cache)
        self.assertGreater(cache["weights_shared"], 0, cache)
        self.assertGreater(cache["weights_shared_bytes"], 0, cache)
        before_stats = stats(self.stub, "mlp_gather")
        before = model_status(self.d, "mlp_gather")["plan_cache"]
        self.assertEqual(self.run_mlp_clients("mlp_gather", clients=16, rounds=8, rows=1, seed=300), [])
        after = model_status(self.d, "mlp_gather")["plan_cache"]
        # every batch formed had a ladder size: no plan was compiled on the request path
        self.assertEqual(after["compiles"], before["compiles"])
        sizes = {b.batch_size: b.compute_infer.count for b in stats(self.stub, "mlp_gather").batch_stats}
        old = {b.batch_size: b.compute_infer.count for b in before_stats.batch_stats}
        formed = {k for k, c in sizes.items() if c > old.get(k, 0)}
        self.assertTrue(formed <= {1, 2, 4, 8, 16}, formed)
        self.assertTrue(any(k > 1 for k in formed), formed)

    def test_ladder_keeps_only_sizes_that_pay(self):
        log = self.d.log_text()
        measured = model_status(self.d, "measured")["batch_ladder"]
        # batching a tiny model pays: a batch costs little more than one row, so sizes beyond 1
        # are kept (which ones is the load-time measurement's call). Not under ASan: its
        # instrumentation makes every row cost far more than the run around it, and on an AVX2
        # CPU the measurement then found [1, 8] in one run and [1] in the next, truthfully
        self.assertEqual(measured[0], 1, log[-3000:])
        with open("/proc/%d/maps" % self.d.proc.pid) as f:
            sanitized = "libasan" in f.read()
        if not sanitized:
            self.assertGreater(len(measured), 1, log[-3000:])
        flat = model_status(self.d, "flat")["batch_ladder"]
        print("\nladders measured at load: tiny mlp %s, 4 MiB rows %s" % (measured, flat))
        self.assertEqual(flat[0], 1)
        self.assertLess(len(flat), 4, log[-3000:])              # of 1 2 4 8, some were dropped
        self.assertIn("model=flat version=1 dynamic_batching: batch sizes ", log)
        self.assertIn("are not formed: not 10% faster per row than a smaller batch", log)
        # requests of any size still run (a dropped size is only not formed from several)
        x = (np.arange(3 * FLAT_N) / FLAT_N).astype(np.float32).reshape(3, FLAT_N)
        got = response_outputs(self.stub.ModelInfer(infer_request("flat", {"x": x}), timeout=60))
        np.testing.assert_array_equal(got["y"], x + np.float32(1))

    def test_ladder_stays_within_the_plan_cache(self):
        self.assertIn("model=capped version=1 dynamic_batching: batch sizes 8 16 are not formed: "
                      "plan_cache_max_plans (3)", self.d.log_text())
        status = model_status(self.d, "capped")
        self.assertEqual(status["batch_ladder"], [1, 2, 4])
        self.assertEqual(status["plan_cache"]["evictions"], 0)
        x = np.ones((3, 8), np.float32)
        s = np.ones((3, 3), np.int32)
        got = response_outputs(self.stub.ModelInfer(infer_request("capped", {"x": x, "s": s}),
                                                    timeout=30))
        np.testing.assert_allclose(got["h"], e2e_models.batch_mlp_reference(x, s)[0], rtol=1e-5,
                                   atol=1e-5)

    def test_lone_request_does_not_wait_when_the_model_is_idle(self):
        x = np.ones((1, 8), np.float32)
        s = np.ones((1, 3), np.int32)
        for model, delay_s in (("idle", 2.0), ("strict", 0.3)):
            self.stub.ModelInfer(infer_request(model, {"x": x, "s": s}), timeout=30)
            times = []
            for _ in range(3):
                t0 = time.monotonic()
                self.stub.ModelInfer(infer_request(model, {"x": x, "s": s}), timeout=30)
                times.append(time.monotonic() - t0)
            if model == "idle":     # nothing of the model runs: the request goes at once
                self.assertLess(min(times), delay_s / 4, times)
            else:                   # wait_when_idle: Triton's rule, it waits for company
                self.assertGreaterEqual(min(times), delay_s * 0.9, times)

    def test_batch_refused_by_input_shapes_runs_one_by_one(self):
        self.assertEqual(self.run_mlp_clients("narrow", clients=6, rounds=3, rows=2, seed=50), [])

    def assert_each_request_runs_alone(self, model, seed, reference, atol):
        """8 clients x 4 requests of 1-3 random rows on MODEL: every answer is REFERENCE(x), and
        the model ran once per request (it is never batched)."""
        before = stats(self.stub, model)
        errors = []

        def client(i):
            rng = np.random.default_rng(seed + i)
            stub = self.d.stub(self.d.new_channel())
            for _ in range(4):
                x = rng.standard_normal((int(rng.integers(1, 4)), 4)).astype(np.float32)
                try:
                    got = response_outputs(stub.ModelInfer(infer_request(model, {"x": x}),
                                                           timeout=60))
                    np.testing.assert_allclose(got["y"], reference(x), rtol=1e-5, atol=atol)
                except Exception as e:          # noqa: BLE001
                    errors.append(repr(e))

        run_clients(client, 8)
        self.assertEqual(errors, [])
        after = stats(self.stub, model)
        self.assertEqual(after.execution_count - before.execution_count, 32)

    def test_model_mixing_rows_is_not_batched(self):
        self.assertIn("model=softmax0 version=1 dynamic_batching is off", self.d.log_text())
        self.assertIn("mixes the rows", self.d.log_text())
        self.assert_each_request_runs_alone(
            "softmax0", 70, lambda x: np.exp(x - x.max(axis=0)) / np.exp(x - x.max(axis=0)).sum(axis=0),
            atol=1e-6)

    def test_request_parameters_are_checked(self):
        x = np.ones((2, 8), np.float32)
        s = np.ones((2, 3), np.int32)
        req = infer_request("mlp", {"x": x, "s": s})
        req.parameters["priority"].string_param = "high"
        code, details = status_of(self.stub.ModelInfer, req, timeout=30)
        self.assertEqual(code, grpc.StatusCode.INVALID_ARGUMENT)
        self.assertIn("priority", details)
        req = infer_request("mlp", {"x": x, "s": s})
        req.parameters["priority"].int64_param = 5      # no levels: ignored
        self.assertEqual(status_of(self.stub.ModelInfer, req, timeout=30)[0], grpc.StatusCode.OK)
        url = "http://127.0.0.1:%d/v2/models/mlp/infer" % self.d.rest_port
        body = {"inputs": [{"name": "x", "datatype": "FP32", "shape": [2, 8], "data": x.ravel().tolist()},
                           {"name": "s", "datatype": "INT32", "shape": [2, 3], "data": s.ravel().tolist()}]}
        for priority, want in ((1, 200), (-1, 400), ("1", 400)):
            body["parameters"] = {"priority": priority}
            r = urllib.request.Request(url, data=json.dumps(body).encode(), method="POST",
                                       headers={"Content-Type": "application/json"})
            try:
                with urllib.request.urlopen(r, timeout=30) as resp:
                    status = resp.status
                    out = json.loads(resp.read())
            except urllib.error.HTTPError as e:
                status = e.code
            self.assertEqual(status, want, priority)
            if want == 200:
                h, _ = e2e_models.batch_mlp_reference(x, s)
                got = {o["name"]: o["data"] for o in out["outputs"]}
                np.testing.assert_allclose(got["h"], h.ravel(), rtol=1e-5, atol=1e-5)

    def test_output_without_batch_dim_is_not_batched(self):
        self.assertIn("dynamic_batching is off", self.d.log_text())
        self.assert_each_request_runs_alone("gram", 7, lambda x: x.T @ x, atol=1e-5)

class LadderWithinRunMemory(BraiddTestCase):
    """max_run_memory_bytes small enough that the largest batches cannot be planned: the ladder
    ends below them, the load goes on, and requests are answered."""
    braidd_args = ("--workers", "1", "--max-run-memory-bytes", str(64 << 10))

    @classmethod
    def prepare_repository(cls, repo):
        e2e_models.write_repository_model(repo, "wide", e2e_models.batch_mlp())
        e2e_models.write_model_config(repo, "wide", {
            "max_batch_size": 4096, "dynamic_batching": {**FIXED_LADDER,
                                        "max_queue_delay_microseconds": 1000}})

    def test_sizes_over_the_run_memory_are_dropped(self):
        log = self.d.log_text()
        self.assertIn("model=wide version=1 dynamic_batching: batch sizes ", log)
        self.assertIn("are not formed: planning", log)
        self.assertIn("max_run_memory_bytes", log)
        ladder = model_status(self.d, "wide")["batch_ladder"]
        self.assertGreaterEqual(len(ladder), 2)
        self.assertEqual(ladder, [1 << i for i in range(len(ladder))])    # a prefix, 4096 gone
        x = np.ones((2, 8), np.float32)
        s = np.ones((2, 3), np.int32)
        got = response_outputs(self.stub.ModelInfer(infer_request("wide", {"x": x, "s": s}),
                                                    timeout=30))
        np.testing.assert_allclose(got["h"], e2e_models.batch_mlp_reference(x, s)[0], rtol=1e-5,
                                   atol=1e-5)


SLOW_ROWS = 64


def slow_request(model, params=None, seed=0):
    x = np.random.default_rng(seed).standard_normal((SLOW_ROWS, 1024)).astype(np.float32)
    req = infer_request(model, {"x": x})
    for k, v in (params or {}).items():
        req.parameters[k].int64_param = v
    return req


class QueuePolicy(BraiddTestCase):
    """One worker, and runs of tens of milliseconds: requests really wait."""
    braidd_args = ("--workers", "1")

    @classmethod
    def prepare_repository(cls, repo):
        slow = e2e_models.slow_matmul(rows="N", n=1024, depth=24)
        policy = {"max_batch_size": SLOW_ROWS, "dynamic_batching": {**FIXED_LADDER, 
            "priority_levels": 2, "default_priority_level": 2,
            "default_queue_policy": {"allow_timeout_override": True}}}
        e2e_models.write_repository_model(repo, "slow", slow)
        e2e_models.write_model_config(repo, "slow", policy)
        e2e_models.write_repository_model(repo, "small_queue", slow)
        e2e_models.write_model_config(repo, "small_queue", {
            "max_batch_size": SLOW_ROWS,
            "dynamic_batching": {**FIXED_LADDER, "default_queue_policy": {"max_queue_size": 2}}})

    def setUp(self):
        self.run_s = 1.0
        for _ in range(2):                      # the fastest of two runs, warm
            t0 = time.monotonic()
            self.stub.ModelInfer(slow_request("slow"), timeout=60)
            self.run_s = max(min(self.run_s, time.monotonic() - t0), 0.005)

    def block(self, seconds):
        """Queue runs of 'slow' that keep the one worker busy for at least about SECONDS
        (twice the runs that would take, as runs may be faster than measured)."""
        n = max(3, min(60, int(2 * seconds / self.run_s) + 1))
        return [self.stub.ModelInfer.future(slow_request("slow", seed=i), timeout=120)
                for i in range(n)]

    def wait_all(self, futures):
        for f in futures:
            f.result()

    def test_queue_policy_timeout_answers_while_waiting(self):
        blockers = self.block(2.0)
        t0 = time.monotonic()
        code, details = status_of(self.stub.ModelInfer,
                                  slow_request("slow", {"timeout": 100000}), timeout=60)
        elapsed = time.monotonic() - t0
        self.assertEqual(code, grpc.StatusCode.UNAVAILABLE, details)
        self.assertIn("timeout", details)
        self.assertGreaterEqual(elapsed, 0.09)
        self.assertLess(elapsed, 1.0, "answered after the queue ahead of it, not at its timeout")
        self.assertFalse(all(f.done() for f in blockers))
        self.wait_all(blockers)

    def test_deadline_leaves_the_queue_on_time(self):
        blockers = self.block(2.0)
        before = stats(self.stub, "slow").inference_stats
        code, _ = status_of(self.stub.ModelInfer, slow_request("slow"), timeout=0.1)
        self.assertEqual(code, grpc.StatusCode.DEADLINE_EXCEEDED)
        time.sleep(0.4)                         # the server's side: dropped, not run later
        now = stats(self.stub, "slow").inference_stats
        self.assertEqual(now.fail.count - before.fail.count, 1)
        self.assertFalse(all(f.done() for f in blockers))
        self.wait_all(blockers)

    def test_cancelled_request_leaves_the_queue(self):
        blockers = self.block(2.0)
        before = stats(self.stub, "slow").inference_stats
        f = self.stub.ModelInfer.future(slow_request("slow"), timeout=60)
        time.sleep(0.1)
        self.assertTrue(f.cancel())
        time.sleep(0.4)                         # dropped from the queue, not run later
        now = stats(self.stub, "slow").inference_stats
        self.assertEqual(now.fail.count - before.fail.count, 1)
        self.assertFalse(all(b.done() for b in blockers))
        self.wait_all(blockers)

    def test_max_queue_size(self):
        blockers = self.block(1.5)
        futures = [self.stub.ModelInfer.future(slow_request("small_queue", seed=i), timeout=120)
                   for i in range(5)]
        codes = []
        for f in futures:
            try:
                f.result()
                codes.append(grpc.StatusCode.OK)
            except grpc.RpcError as e:
                codes.append(e.code())
                self.assertIn("maximum queue size", e.details())
        self.assertEqual(codes.count(grpc.StatusCode.UNAVAILABLE), 3, codes)
        self.wait_all(blockers)

    def test_higher_priority_runs_first(self):
        blockers = self.block(0.5)
        done, lock = [], threading.Lock()

        def mark(name):
            def cb(_):
                with lock:
                    done.append(name)
            return cb

        futures = []
        for i in range(3):
            f = self.stub.ModelInfer.future(slow_request("slow", {"priority": 2}, seed=i), timeout=120)
            f.add_done_callback(mark("low%d" % i))
            futures.append(f)
        time.sleep(0.05)
        high = self.stub.ModelInfer.future(slow_request("slow", {"priority": 1}), timeout=120)
        high.add_done_callback(mark("high"))
        futures.append(high)
        for f in futures:
            f.result()
        self.wait_all(blockers)
        self.assertLess(done.index("high"), min(done.index("low%d" % i) for i in range(3)), done)


if __name__ == "__main__":
    run_tests()
