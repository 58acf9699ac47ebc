#!/usr/bin/python3
"""ModelStreamInfer (Triton's bidirectional stream) against a real braidd, over the wire:
every request answered exactly once by id and in arrival order, checked against numpy;
errors as error_message responses that keep the stream open; and the hostile cases —
garbage, oversized messages, a client that never reads, cancellation, deadlines, many
streams at once, SIGTERM with a stream open (docs/protocol.md, "Streaming")."""

import queue
import threading
import time

import grpc
import numpy as np

import e2e_models
from braidd_fixture import Braidd, BraiddTestCase, pb, run_tests, status_of
from tensors import infer_request, response_outputs

# Every batch size planned is formed: the tests here expect exact ladders and batches, which
# measuring each size at load (measure_ladder, on by default) could trim on a busy machine.
FIXED_LADDER = {"measure_ladder": False}

PATH = "/inference.GRPCInferenceService/ModelStreamInfer"
TINY_N = 16
MID_N = 16384           # 64 KiB of FP32 per request and per response


def raw_stream(channel):
    """A ModelStreamInfer caller taking already-serialized requests (bytes), so a test can
    mix in bytes that are no ModelInferRequest."""
    return channel.stream_stream(PATH, request_serializer=lambda b: b,
                                 response_deserializer=pb.ModelStreamInferResponse.FromString)


def vm_rss_kib(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise AssertionError("no VmRSS in /proc/%d/status" % pid)


def tiny_request(i, model="tiny"):
    x = np.full((1, TINY_N), float(i), np.float32)
    ref = x + np.arange(1, TINY_N + 1, dtype=np.float32).reshape(1, TINY_N)
    return infer_request(model, {"x": x}, request_id="t%d" % i), {"y": ref}


def blocking_requests(q):
    """Requests from queue Q until None: the stream stays open (not half-closed) meanwhile."""
    while True:
        item = q.get()
        if item is None:
            return
        yield item


class Stream(BraiddTestCase):

    @classmethod
    def prepare_repository(cls, repo):
        e2e_models.write_repository_model(repo, "tiny", e2e_models.tiny_add(TINY_N))
        e2e_models.write_repository_model(repo, "stats_tiny", e2e_models.tiny_add(TINY_N))
        e2e_models.write_repository_model(repo, "two_outputs", e2e_models.two_outputs())
        e2e_models.write_repository_model(repo, "mid", e2e_models.big_add_one(MID_N))
        e2e_models.write_repository_model(repo, "slow", e2e_models.slow_matmul(rows=64, depth=8))
        e2e_models.write_repository_model(repo, "dyn", e2e_models.batch_add_one())
        # Triton's strict rule with a long delay: a batch goes when 8 rows are queued, so one
        # stream's requests are gathered whatever the timing (a sanitizer build once answered
        # each of the 64 before the next arrived, and work-conserving batching ran them alone)
        e2e_models.write_model_config(repo, "dyn", {
            "max_batch_size": 8, "dynamic_batching": {**FIXED_LADDER, "preferred_batch_size": [8],
                                     "max_queue_delay_microseconds": 500000, "wait_when_idle": True}})

    def setUp(self):
        self.image = e2e_models.demo_fixture("image")
        self.probs = e2e_models.demo_fixture("probabilities")

    # ---- one stream, every kind of request ------------------------------------------------

    def mixed_requests(self, n):
        """N serialized requests with ids across the models, every 7th a bad one; returns
        [(bytes, id, reference dict or the expected error substring)]."""
        out = []
        for i in range(n):
            rid = "r%d" % i
            kind = i % 7
            if kind == 0:
                req, ref = infer_request("tinycnn", {"image": self.image}, request_id=rid), \
                    {"probabilities": self.probs}
            elif kind in (1, 2):
                x = np.full((1, 4), i, np.float32)
                req, ref = infer_request("two_outputs", {"x": x}, request_id=rid), \
                    {"plus_one": x + 1, "times_two": x * 2}
            elif kind in (3, 4):
                req, ref = tiny_request(i)
                req.id = rid
            elif kind == 5:       # unknown model
                req, ref = infer_request("no_such_model", {"x": np.zeros((1, 4), np.float32)},
                                         request_id=rid), "no_such_model"
            else:                 # a shape the model does not take
                req, ref = infer_request("tiny", {"x": np.zeros((1, TINY_N + 1), np.float32)},
                                         request_id=rid), "shape"
            out.append((req.SerializeToString(), rid, ref))
        # bytes that are no ModelInferRequest: answered, without an id (none can be read),
        # and one whose id comes first: echoed although the rest is garbage
        out.append((b"\xff\xff\xff\xff\xff\xff", "", "malformed"))
        out.append((pb.ModelInferRequest(id="garbage-after-id").SerializeToString() + b"\x0a\xff",
                    "garbage-after-id", "malformed"))
        return out

    def check_responses(self, sent, responses):
        self.assertEqual(len(responses), len(sent))
        for (_, rid, ref), r in zip(sent, responses):        # arrival order
            self.assertEqual(r.infer_response.id, rid, (rid, r.error_message))
            if isinstance(ref, str):
                self.assertTrue(r.error_message, rid)
                self.assertIn(ref, r.error_message, rid)
                continue
            self.assertEqual(r.error_message, "", rid)
            got = response_outputs(r.infer_response)
            self.assertEqual(sorted(got), sorted(ref), rid)
            for name, want in ref.items():
                np.testing.assert_allclose(got[name], want, rtol=1e-5, atol=1e-5, err_msg=rid)

    def test_mixed_models_and_errors_by_id(self):
        sent = self.mixed_requests(300)
        call = raw_stream(self.d.channel)(iter([s[0] for s in sent]), timeout=120)
        responses = list(call)              # the stream ends with OK after the half-close
        self.assertEqual(call.code(), grpc.StatusCode.OK)
        self.check_responses(sent, responses)

    def test_typed_stub_and_empty_stream(self):
        reqs = [tiny_request(i)[0] for i in range(5)]
        got = list(self.stub.ModelStreamInfer(iter(reqs), timeout=30))
        self.assertEqual([r.infer_response.id for r in got], ["t%d" % i for i in range(5)])
        self.assertEqual(list(self.stub.ModelStreamInfer(iter([]), timeout=30)), [])

    def test_statistics_count_each_streamed_request(self):
        def metric(family):
            status, body, _ = self.d.http_get("/metrics")
            self.assertEqual(status, 200)
            text = body.decode() if isinstance(body, bytes) else body
            for line in text.splitlines():
                if line.startswith(family + "{") and 'model="stats_tiny"' in line:
                    return float(line.rsplit(None, 1)[1])
            return 0.0

        def count():
            st = self.stub.ModelStatistics(pb.ModelStatisticsRequest(name="stats_tiny"), timeout=10)
            return (st.model_stats[0].inference_stats.success.count,
                    st.model_stats[0].inference_count, metric("nv_inference_request_success"),
                    st.model_stats[0].inference_stats.fail.count)
        before = count()
        reqs = [tiny_request(i, "stats_tiny")[0] for i in range(25)]
        bad = tiny_request(0, "stats_tiny")[0]
        bad.inputs[0].shape[1] = TINY_N + 1          # a failure counted as one too
        got = list(self.stub.ModelStreamInfer(iter(reqs + [bad]), timeout=30))
        self.assertTrue(all(not r.error_message for r in got[:25]))
        self.assertTrue(got[25].error_message)
        after = count()
        self.assertEqual(tuple(a - b for a, b in zip(after, before)), (25, 25, 25, 1))

    def test_one_stream_feeds_the_dynamic_batcher(self):
        # up to 64 requests of one stream are in flight at once, so they can be batched
        xs = [np.full((1, 4), i, np.float32) for i in range(64)]
        reqs = [infer_request("dyn", {"x": x}, request_id="d%d" % i) for i, x in enumerate(xs)]
        got = list(self.stub.ModelStreamInfer(iter(reqs), timeout=60))
        self.assertEqual([r.infer_response.id for r in got], ["d%d" % i for i in range(64)])
        for r, x in zip(got, xs):
            self.assertEqual(r.error_message, "")
            np.testing.assert_array_equal(response_outputs(r.infer_response)["y"], x + 1)
        st = self.stub.ModelStatistics(pb.ModelStatisticsRequest(name="dyn"), timeout=10)
        sizes = {b.batch_size: b.compute_infer.count for b in st.model_stats[0].batch_stats}
        self.assertEqual(sum(k * v for k, v in sizes.items()), 64, sizes)
        self.assertGreater(max(sizes), 1, sizes)

    # ---- hostile --------------------------------------------------------------------------

    def test_garbage_only_stream(self):
        msgs = [b"\x08", b"\x12\x05ab", b"\x00" * 64, b"\x0a\x80\x80\x80\x80\x10", b""]
        got = list(raw_stream(self.d.channel)(iter(msgs), timeout=30))
        self.assertEqual(len(got), len(msgs))
        # the empty message is a valid (empty) request: its error is the unknown model ""
        for r in got:
            self.assertTrue(r.error_message)

    def test_oversized_message_ends_only_that_stream(self):
        # over braidd's max_message_bytes (the class's braidd: 256 MiB default is too big to
        # send here, so a braidd with a 1 MiB limit)
        with Braidd(args=["--max-message-bytes", "1048576"]) as d:
            d.wait_ready()
            big = pb.ModelInferRequest(model_name="tinycnn", id="big",
                                       raw_input_contents=[b"\0" * (2 << 20)]).SerializeToString()
            call = raw_stream(d.channel)(iter([infer_request("tinycnn", {"image": self.image},
                                                             request_id="before").SerializeToString(),
                                               big]), timeout=30)
            got = []
            with self.assertRaises(grpc.RpcError) as e:
                for r in call:
                    got.append(r)
            self.assertEqual(e.exception.code(), grpc.StatusCode.RESOURCE_EXHAUSTED)
            self.assertLessEqual(len(got), 1)
            # the server goes on serving streams
            again = list(d.stub().ModelStreamInfer(iter([infer_request(
                "tinycnn", {"image": self.image}, request_id="after")]), timeout=30))
            self.assertEqual([r.infer_response.id for r in again], ["after"])
            self.assertEqual(d.stop(), 0)
            d.check_log()

    def test_client_that_never_reads_is_bounded(self):
        """10,000 requests of 64 KiB sent without reading a response: braidd stops reading
        (at most 64 requests in flight), so neither its memory nor the sender runs away; then
        every response arrives, in order."""
        n = 10000
        x = np.arange(MID_N, dtype=np.float32).reshape(1, MID_N)
        body = infer_request("mid", {"x": x}).SerializeToString()
        sent = [0]

        def gen():
            for i in range(n):
                sent[0] += 1
                yield body + pb.ModelInferRequest(id="m%d" % i).SerializeToString()

        rss0 = vm_rss_kib(self.d.proc.pid)
        call = raw_stream(self.d.channel)(gen(), timeout=300)
        peak = rss0
        for _ in range(30):
            time.sleep(0.1)
            peak = max(peak, vm_rss_kib(self.d.proc.pid))
        stalled_at = sent[0]
        peak_stalled = peak
        # 10,000 x 64 KiB is 640 MiB: with backpressure the sender is held back by HTTP/2
        # flow control after braidd's 64 in flight plus the transport's windows
        self.assertLess(stalled_at, n // 2, "the sender was never held back")
        got = 0
        for r in call:
            if got % 97 == 0:
                self.assertEqual(r.error_message, "")
                np.testing.assert_array_equal(response_outputs(r.infer_response)["y"], x + 1)
            self.assertEqual(r.infer_response.id, "m%d" % got)
            got += 1
            if got % 500 == 0:
                peak = max(peak, vm_rss_kib(self.d.proc.pid))
        self.assertEqual(got, n)
        self.assertEqual(call.code(), grpc.StatusCode.OK)
        # Bounded while the client does not read (what would grow with the 10,000); the
        # reading phase only churns (an ASan build's quarantine keeps up to 256 MiB of freed
        # memory there, so its peak is printed, not checked).
        grew = (peak_stalled - rss0) / 1024.0
        print("never-reading client: sender held at %d requests; braidd RSS %.0f MiB, +%.0f MiB "
              "while not read, peak %.0f MiB while read" % (stalled_at, rss0 / 1024.0, grew,
                                                          peak / 1024.0))
        self.assertLess(grew, 128, "braidd's RSS grew by %.0f MiB" % grew)

    def test_cancel_mid_stream(self):
        x = np.ones((64, 1024), np.float32)
        q = queue.Queue()
        call = self.stub.ModelStreamInfer(blocking_requests(q), timeout=60)
        for i in range(30):
            q.put(infer_request("slow", {"x": x}, request_id="s%d" % i))
        first = next(call)
        self.assertEqual(first.infer_response.id, "s0")
        call.cancel()
        q.put(None)
        with self.assertRaises(grpc.RpcError) as e:
            for _ in call:
                pass
        self.assertEqual(e.exception.code(), grpc.StatusCode.CANCELLED)
        # the cancelled requests still queued were dropped: braidd is soon idle and serving
        got = list(self.stub.ModelStreamInfer(iter([tiny_request(1)[0]]), timeout=60))
        self.assertEqual([r.infer_response.id for r in got], ["t1"])

    def test_deadline_of_an_idle_stream(self):
        q = queue.Queue()
        call = self.stub.ModelStreamInfer(blocking_requests(q), timeout=1.0)
        q.put(tiny_request(3)[0])
        first = next(call)
        self.assertEqual(first.infer_response.id, "t3")
        t0 = time.monotonic()
        with self.assertRaises(grpc.RpcError) as e:
            next(call)                      # no half-close: the deadline ends it
        self.assertEqual(e.exception.code(), grpc.StatusCode.DEADLINE_EXCEEDED)
        self.assertLess(time.monotonic() - t0, 10)
        q.put(None)

    def test_many_concurrent_streams(self):
        # 32 streams x 40 requests may be in flight at once, far over the model's queue_limit
        # (64): requests that find its queue full are answered "queue full" (RESOURCE_EXHAUSTED
        # for a unary call) in their stream, like 1280 concurrent unary calls would be; every
        # other answer must be exact
        errors = []
        full = [0]

        def one(k):
            try:
                reqs, refs = [], []
                for i in range(40):
                    r, ref = tiny_request(k * 1000 + i)
                    reqs.append(r)
                    refs.append(ref)
                got = list(self.stub.ModelStreamInfer(iter(reqs), timeout=120))
                if [r.infer_response.id for r in got] != [r.id for r in reqs]:
                    errors.append("stream %d: ids %s" % (k, [r.infer_response.id for r in got][:5]))
                for r, ref in zip(got, refs):
                    if "queue full" in r.error_message:
                        full[0] += 1
                        continue
                    if r.error_message:
                        errors.append("stream %d: %s: %s" % (k, r.infer_response.id, r.error_message))
                        continue
                    np.testing.assert_allclose(response_outputs(r.infer_response)["y"], ref["y"])
            except Exception as e:          # noqa: BLE001  (reported below)
                errors.append("stream %d: %r" % (k, e))

        threads = [threading.Thread(target=one, args=(k,)) for k in range(32)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(180)
        self.assertEqual(errors, [])
        self.assertLess(full[0], 32 * 40)

    def test_chaos_cancel_deadline_partial_reads(self):
        """16 threads x 15 streams each: random request counts over fast and slow models,
        garbage, cancellation at a random point, tight deadlines, clients that stop reading;
        braidd stays up, and a clean stream afterwards is exact. (The ASan run checks that
        nothing leaks or is used after free on the way.)"""
        import random
        x_slow = np.ones((64, 1024), np.float32)
        slow = infer_request("slow", {"x": x_slow}).SerializeToString()
        fast = [tiny_request(i)[0].SerializeToString() for i in range(8)]
        errors = []

        def one(seed):
            rnd = random.Random(seed)
            ch = self.d.new_channel()
            try:
                for _ in range(15):
                    n = rnd.randint(1, 40)
                    msgs = [rnd.choice(fast) if rnd.random() < 0.8 else
                            (slow if rnd.random() < 0.5 else b"\xff\x01") for _ in range(n)]
                    call = raw_stream(ch)(iter(msgs), timeout=rnd.choice([0.05, 0.3, 30]))
                    read = rnd.randint(0, n)
                    try:
                        for k, _ in enumerate(call):
                            if k + 1 >= read:
                                break
                    except grpc.RpcError as e:
                        if e.code() not in (grpc.StatusCode.DEADLINE_EXCEEDED,
                                            grpc.StatusCode.CANCELLED):
                            errors.append("seed %d: %s %s" % (seed, e.code(), e.details()))
                    if rnd.random() < 0.7:
                        call.cancel()
            except Exception as e:          # noqa: BLE001  (reported below)
                errors.append("seed %d: %r" % (seed, e))
            finally:
                ch.close()

        threads = [threading.Thread(target=one, args=(k,)) for k in range(16)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(240)
        self.assertEqual(errors, [])
        self.d.assert_running()
        reqs = [tiny_request(i)[0] for i in range(20)]
        got = list(self.stub.ModelStreamInfer(iter(reqs), timeout=60))
        self.assertEqual([r.infer_response.id for r in got], [r.id for r in reqs])
        self.assertTrue(all(not r.error_message for r in got))


class StreamDuringShutdown(BraiddTestCase):
    """SIGTERM with a stream open: its requests in flight are answered, then it ends with
    UNAVAILABLE, and braidd exits in bounded time (the drain does not wait for the client)."""

    @classmethod
    def prepare_repository(cls, repo):
        e2e_models.write_repository_model(repo, "tiny", e2e_models.tiny_add(TINY_N))

    @classmethod
    def tearDownClass(cls):
        pass                                # the test stops braidd itself

    def tearDown(self):
        pass

    def test_sigterm_with_open_stream(self):
        q = queue.Queue()
        idle = self.stub.ModelStreamInfer(blocking_requests(q), timeout=120)
        q.put(tiny_request(1)[0])
        self.assertEqual(next(idle).infer_response.id, "t1")
        t0 = time.monotonic()
        self.d.send_signal(__import__("signal").SIGTERM)
        with self.assertRaises(grpc.RpcError) as e:
            next(idle)
        self.assertEqual(e.exception.code(), grpc.StatusCode.UNAVAILABLE, e.exception.details())
        self.assertIn("shutting down", e.exception.details())
        self.assertLess(time.monotonic() - t0, 5)
        # a new stream is refused with the same clear answer while the port lingers
        code, _ = status_of(lambda: list(self.stub.ModelStreamInfer(iter([tiny_request(2)[0]]),
                                                                    timeout=10)))
        self.assertIn(code, (grpc.StatusCode.UNAVAILABLE,))
        q.put(None)
        self.assertEqual(self.d.stop(timeout=30), 0)
        self.assertLess(time.monotonic() - t0, 15)
        self.d.check_log()



class StreamNotReadDuringShutdown(BraiddTestCase):
    """SIGTERM while a stream's client has half-closed but reads nothing: braidd cannot send
    the responses, so the stream is cancelled at the end of the grace period and braidd
    still exits, cleanly and in bounded time."""

    @classmethod
    def prepare_repository(cls, repo):
        e2e_models.write_repository_model(repo, "mid", e2e_models.big_add_one(MID_N))

    @classmethod
    def tearDownClass(cls):
        pass

    def tearDown(self):
        pass

    def test_sigterm_with_a_stream_nobody_reads(self):
        x = np.zeros((1, MID_N), np.float32)
        body = infer_request("mid", {"x": x}).SerializeToString()
        ch = self.d.new_channel()           # stays open across stop() (which closes d.channel)
        call = raw_stream(ch)(iter([body] * 500), timeout=120)
        time.sleep(1.0)                     # braidd is now blocked on writing
        t0 = time.monotonic()
        self.assertEqual(self.d.stop(timeout=30), 0)
        took = time.monotonic() - t0
        print("SIGTERM with an unread stream: braidd exited after %.1f s" % took)
        self.assertLess(took, 15)           # linger 2 s + grace 5 s + margin
        self.d.check_log()
        with self.assertRaises(grpc.RpcError):
            for _ in call:
                pass
        ch.close()


if __name__ == "__main__":
    run_tests()
