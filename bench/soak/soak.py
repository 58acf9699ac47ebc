#!/usr/bin/python3
"""braidd soak: traffic under constant model churn, then SIGTERM in the middle of it.

    bench/soak/run.sh --seconds 600            (the documented run; see README.md)
    /usr/bin/python3 bench/soak/soak.py --braidd build/daemon/braidd --seconds 20

One braidd on loopback free ports, a temporary repository with three models:

    hot     the demo CNN, hot-reloaded every --reload-period s (uploads alternating between
            two variants whose outputs differ by 1.0, so every response tells which version
            computed it and is checked against it)
    cycle   a tiny model loaded and unloaded in a loop
    stable  a tiny model nobody touches
    slow    a chain of MatMuls, tens of ms a request (so SIGTERM finds requests queued and
            running, not only on the wire)

--clients clients (16) infer continuously: three in four on hot, the rest in turn on cycle,
stable and slow. Checks, each a line of the report and a nonzero exit status on failure:

  * failed requests by status: only documented statuses (docs/protocol.md): none at all on
    hot and stable; NOT_FOUND ("unloaded") or UNAVAILABLE ("loading") on cycle; nothing else
  * wrong answers: every hot/stable response is checked against its reference
  * RSS: after the warm-up vs at the end, growth < --max-rss-growth (5 %)
  * latency p50/p99 on hot per minute (reported)
  * SIGTERM while every client is mid-traffic: every request sent before the signal (50 ms
    margin, far more than a loopback hop) completes OK; ServerReady and GET /v2/health/ready
    both say not ready right after; braidd exits 0 within the exit timeout + 10 s

Every loop is bounded in count and time; nothing leaves loopback."""

import argparse
import json
import os
import signal
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "tests", "e2e"))
os.environ.setdefault("BRAID_SOURCE_ROOT", ROOT)

import numpy as np  # noqa: E402

import e2e_models  # noqa: E402
from braidd_fixture import Braidd, pb, status_of  # noqa: E402
import grpc  # noqa: E402
from tensors import infer_request, response_outputs  # noqa: E402

CLOSE_MARGIN_S = 10.0          # braidd's hard stop: exit timeout + this (docs/operations.md)
MAX_REQUESTS_PER_CLIENT = 50_000_000


def rss_kib(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def percentile(values, q):
    if not values:
        return float("nan")
    v = sorted(values)
    return v[min(len(v) - 1, int(round(q / 100.0 * (len(v) - 1))))]


def load_request(name, files=None):
    req = pb.RepositoryModelLoadRequest(model_name=name)
    for path, data in (files or {}).items():
        req.parameters["file:" + path].bytes_param = data
    return req


class Soak:
    def __init__(self, args):
        self.args = args
        self.lock = threading.Lock()
        self.stop_traffic = threading.Event()   # clients stop (after SIGTERM they see it)
        self.stop_churn = threading.Event()
        self.sigterm_at = None
        self.t0 = None
        # per request: (model, start, end, code name, details)
        self.records = []
        self.wrong = []
        self.churn_errors = []
        self.reloads = 0
        self.cycles = 0

    # ---- traffic -----------------------------------------------------------------------------

    def client(self, i, d, image, probs, tiny_x, slow_req):
        channel = d.new_channel()
        stub = d.stub(channel)
        mine = []
        try:
            for k in range(MAX_REQUESTS_PER_CLIENT):
                if self.stop_traffic.is_set():
                    break
                if i % 4 != 3:
                    model, req = "hot", infer_request("hot", {"image": image})
                else:
                    model = ("cycle", "stable", "slow")[k % 3]
                    req = slow_req if model == "slow" else infer_request(model, {"x": tiny_x})
                t = time.monotonic()
                code, resp = status_of(stub.ModelInfer, req, timeout=60)
                end = time.monotonic()
                details = ""
                if code == grpc.StatusCode.OK:
                    out = response_outputs(resp)
                    if model == "slow":
                        pass           # its numbers are the e2e suite's business
                    elif model == "hot":
                        got = out["probabilities"]
                        offset = 1.0 if int(resp.model_version) % 2 == 0 else 0.0
                        if not np.allclose(got, probs + offset, atol=1e-4):
                            self.wrong.append((model, resp.model_version))
                    else:
                        if not np.allclose(out["y"], tiny_x + np.arange(1, 17, dtype=np.float32)):
                            self.wrong.append((model, resp.model_version))
                else:
                    details = resp
                mine.append((model, t, end, code.name, details))
                if self.sigterm_at is not None and code != grpc.StatusCode.OK:
                    break          # shutting down: this client has seen the end
        finally:
            channel.close()
            with self.lock:
                self.records.extend(mine)

    # ---- churn -------------------------------------------------------------------------------

    def reloader(self, d, variants):
        stub = d.stub()
        for k in range(10_000_000):
            if self.stop_churn.wait(self.args.reload_period):
                break
            version = self.reloads + 2                 # 1 is the repository's own
            files = {"%d/model.onnx" % version: variants[version % 2]}
            code, details = status_of(stub.RepositoryModelLoad, load_request("hot", files), timeout=120)
            if self.stop_churn.is_set():
                break
            if code != grpc.StatusCode.OK:
                self.churn_errors.append(("reload hot", code.name, details))
            else:
                self.reloads += 1

    def cycler(self, d):
        stub = d.stub()
        for k in range(10_000_000):
            if self.stop_churn.wait(self.args.cycle_period):
                break
            code, details = status_of(stub.RepositoryModelLoad, load_request("cycle"), timeout=120)
            if self.stop_churn.is_set():
                break
            if code != grpc.StatusCode.OK:
                self.churn_errors.append(("load cycle", code.name, details))
            code, details = status_of(stub.RepositoryModelUnload,
                                      pb.RepositoryModelUnloadRequest(model_name="cycle"), timeout=120)
            if code != grpc.StatusCode.OK and not self.stop_churn.is_set():
                self.churn_errors.append(("unload cycle", code.name, details))
            self.cycles += 1

    # ---- the run -----------------------------------------------------------------------------

    def run(self):
        a = self.args
        image = e2e_models.demo_fixture("image")
        probs = e2e_models.demo_fixture("probabilities")
        tiny_x = np.linspace(-1, 1, 16, dtype=np.float32).reshape(1, 16)
        # by version parity: even versions add 1.0 to the output, odd ones 0.0
        variants = {0: e2e_models.demo_variant(1.0), 1: e2e_models.demo_variant(0.0)}
        d = Braidd(args=["--allow-uploads", "--exit-timeout-secs", str(a.exit_timeout)] + a.braidd_arg,
                   copy_demo=False, start_timeout=120)
        e2e_models.write_repository_model(d.repo, "hot", variants[1], version=1)
        e2e_models.write_repository_model(d.repo, "cycle", e2e_models.tiny_add())
        e2e_models.write_repository_model(d.repo, "stable", e2e_models.tiny_add())
        # tens of ms a request: at SIGTERM some are queued or running, not only on the wire
        e2e_models.write_repository_model(d.repo, "slow", e2e_models.slow_matmul(rows=32, depth=8))
        d.start()
        d.wait_ready(120)
        self.t0 = time.monotonic()
        print("soak: braidd pid %d, grpc %d, http %d, %d clients, %.0f s (+ SIGTERM), log %s"
              % (d.proc.pid, d.grpc_port, d.http_port, a.clients, a.seconds, d.log_path), flush=True)

        slow_req = infer_request("slow", {"x": np.ones((32, 1024), np.float32)})
        clients = [threading.Thread(target=self.client, args=(i, d, image, probs, tiny_x, slow_req))
                   for i in range(a.clients)]
        churn = [threading.Thread(target=self.reloader, args=(d, variants)),
                 threading.Thread(target=self.cycler, args=(d,))]
        for t in clients + churn:
            t.start()

        warmup = min(max(5.0, a.seconds * 0.1), 60.0)
        rss_warm = None
        rss_samples = []
        end_at = self.t0 + a.seconds
        for _ in range(int(a.seconds * 10) + 100):
            now = time.monotonic()
            if now >= end_at:
                break
            if d.proc.poll() is not None:
                break
            if rss_warm is None and now - self.t0 >= warmup:
                rss_warm = rss_kib(d.proc.pid)
            rss_samples.append((now - self.t0, rss_kib(d.proc.pid)))
            time.sleep(min(1.0, max(0.0, end_at - now)))
        alive = d.proc.poll() is None
        rss_end = rss_kib(d.proc.pid) if alive else 0

        # Churn stops first (its calls would otherwise be refused by the shutdown, which is not
        # what is measured), then SIGTERM lands in the middle of the clients' traffic.
        self.stop_churn.set()
        for t in churn:
            t.join(180)
        probe_channel = d.new_channel()
        probe_stub = d.stub(probe_channel)
        self.sigterm_at = time.monotonic()
        d.send_signal(signal.SIGTERM)
        grpc_ready = http_status = None
        for _ in range(2000):                       # until the signal is handled, bounded
            code, r = status_of(probe_stub.ServerReady, pb.ServerReadyRequest(), timeout=5)
            if code != grpc.StatusCode.OK:
                break
            grpc_ready = r.ready
            if not r.ready:
                http_status = d.http_get("/v2/health/ready", timeout=5)[0] if d.proc.poll() is None else None
                break
            time.sleep(0.002)
        probe_channel.close()
        try:
            d.proc.wait(a.exit_timeout + CLOSE_MARGIN_S)
            exit_code = d.proc.returncode
        except Exception:
            d.kill()
            exit_code = "did not exit within %.0f s" % (a.exit_timeout + CLOSE_MARGIN_S)
        exit_s = time.monotonic() - self.sigterm_at
        self.stop_traffic.set()
        for t in clients:
            t.join(120)
        stuck = sum(1 for t in clients + churn if t.is_alive())
        return self.report(d, alive, rss_warm, rss_end, rss_samples, grpc_ready, http_status,
                           exit_code, exit_s, stuck)

    # ---- the report --------------------------------------------------------------------------

    def report(self, d, alive, rss_warm, rss_end, rss_samples, grpc_ready, http_status, exit_code,
               exit_s, stuck):
        a = self.args
        t_sig = self.sigterm_at
        recs = self.records
        before = [r for r in recs if r[2] <= t_sig]
        failures = {}
        undocumented = []
        for r in before:
            if r[3] == "OK":
                continue
            failures.setdefault((r[0], r[3]), 0)
            failures[(r[0], r[3])] += 1
            allowed = r[0] == "cycle" and r[3] in ("NOT_FOUND", "UNAVAILABLE")
            if not allowed:
                undocumented.append(r)
        # SIGTERM: accepted = sent 50 ms before the signal; those must complete OK.
        lost = [r for r in recs if r[1] < t_sig - 0.05 < t_sig < r[2] and r[3] != "OK"
                and r[0] != "cycle"]
        lost += [r for r in recs if r[1] < t_sig - 0.05 and r[2] > t_sig and r[0] == "cycle"
                 and r[3] not in ("OK", "NOT_FOUND", "UNAVAILABLE")]
        in_flight = [r for r in recs if r[1] < t_sig < r[2]]
        after = [r for r in recs if r[1] >= t_sig - 0.05]
        after_bad = [r for r in after if r[3] not in ("OK", "UNAVAILABLE", "NOT_FOUND")]

        checks = []

        def check(ok, what):
            checks.append((ok, what))
            print("%s  %s" % ("PASS" if ok else "FAIL", what), flush=True)

        hot = [r for r in before if r[0] == "hot" and r[3] == "OK"]
        print("\n== soak report (%.0f s, %d clients)" % (a.seconds, a.clients))
        print("requests before SIGTERM: %d (hot %d OK), %d hot reloads, %d load/unload cycles"
              % (len(before), len(hot), self.reloads, self.cycles))
        print("failed requests by (model, status): %s" % (
            ", ".join("%s %s: %d" % (m, s, n) for (m, s), n in sorted(failures.items())) or "none"))
        print("latency on hot, per minute (ms):")
        minutes = {}
        for r in hot:
            minutes.setdefault(int((r[2] - self.t0) // 60), []).append((r[2] - r[1]) * 1000)
        for m in sorted(minutes):
            v = minutes[m]
            print("  minute %2d: n=%6d  p50 %7.2f  p99 %7.2f" % (m, len(v), percentile(v, 50), percentile(v, 99)))
        growth = (rss_end - rss_warm) / rss_warm * 100 if rss_warm else float("nan")
        print("RSS: warm-up %.1f MiB, end %.1f MiB (%+.1f %%), peak %.1f MiB"
              % ((rss_warm or 0) / 1024, rss_end / 1024, growth,
                 max((s for _, s in rss_samples), default=0) / 1024))
        print("SIGTERM: %d requests in flight, %d completed OK; exit %s after %.2f s"
              % (len(in_flight), sum(1 for r in in_flight if r[3] == "OK"), exit_code, exit_s))
        print()
        check(alive, "braidd alive for the whole run")
        check(not undocumented, "only documented statuses (%d others%s)" % (
            len(undocumented), (": " + repr(undocumented[:3])) if undocumented else ""))
        check(not self.wrong, "every answer right (%d wrong%s)" % (len(self.wrong), (": " + repr(self.wrong[:3])) if self.wrong else ""))
        check(not self.churn_errors, "every reload/load/unload OK (%d failed%s)" % (
            len(self.churn_errors), (": " + repr(self.churn_errors[:3])) if self.churn_errors else ""))
        check(self.reloads > 0 and self.cycles > 0, "churn happened (%d reloads, %d cycles)" % (self.reloads, self.cycles))
        if sanitized(os.environ["BRAIDD"]):
            print("SKIP  RSS growth (a sanitizer build; its leak report at exit is checked instead)")
        else:
            # A small braidd's RSS moves in steps of a few MiB as allocator arenas and gRPC's
            # buffers settle (the 20 s run in CI once went 34.8 -> 36.8 MiB, +5.6 %); a leak
            # grows with the traffic, so growth under the slack passes whatever the percentage.
            grown_mib = (rss_end - rss_warm) / 1024 if rss_warm else float("nan")
            check(rss_warm is not None and (growth < a.max_rss_growth or grown_mib < a.rss_slack_mib),
                  "RSS growth after warm-up %.1f %% < %.1f %% or %.1f MiB < %.1f MiB"
                  % (growth, a.max_rss_growth, grown_mib, a.rss_slack_mib))
        check(not lost, "SIGTERM: every accepted request completed (%d lost%s)" % (
            len(lost), (": " + repr(lost[:3])) if lost else ""))
        check(not after_bad, "SIGTERM: later requests refused with UNAVAILABLE only (%d others)" % len(after_bad))
        check(grpc_ready is False and http_status == 503,
              "SIGTERM: readiness false at once (ServerReady %s, /v2/health/ready %s)" % (grpc_ready, http_status))
        check(exit_code == 0 and exit_s < a.exit_timeout + CLOSE_MARGIN_S,
              "SIGTERM: exit 0 within the exit timeout + %.0f s (%s after %.2f s)" % (CLOSE_MARGIN_S, exit_code, exit_s))
        check(stuck == 0, "every client and churn thread finished (%d stuck)" % stuck)
        sanitizer = ""
        try:
            d.check_log()
        except AssertionError as e:
            sanitizer = str(e)[:2000]
        check(not sanitizer, "no sanitizer report in braidd's log")
        if a.json:
            with open(a.json, "w") as f:
                json.dump({"seconds": a.seconds, "clients": a.clients, "requests": len(before),
                           "reloads": self.reloads, "cycles": self.cycles,
                           "failures": {"%s %s" % k: v for k, v in failures.items()},
                           "rss_warm_kib": rss_warm, "rss_end_kib": rss_end, "rss_growth_pct": growth,
                           "latency_ms": {str(m): {"n": len(v), "p50": percentile(v, 50),
                                                   "p99": percentile(v, 99)} for m, v in minutes.items()},
                           "sigterm": {"in_flight": len(in_flight), "lost": len(lost), "exit": exit_code,
                                       "exit_s": exit_s},
                           "checks": [[ok, what] for ok, what in checks]}, f, indent=1)
        failed = [w for ok, w in checks if not ok]
        if failed:
            print("\n%s\n%d check(s) failed" % (d.log_tail(60), len(failed)))
        if not os.environ.get("BRAID_E2E_KEEP"):
            d.cleanup()
        return 0 if not failed else 1


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--braidd", default=os.environ.get("BRAID_E2E_BRAIDD") or os.environ.get("BRAIDD")
                   or os.path.join(ROOT, "build", "daemon", "braidd"))
    p.add_argument("--seconds", type=float, default=600.0, help="traffic time before SIGTERM [600]")
    p.add_argument("--clients", type=int, default=16, help="concurrent inference clients [16]")
    p.add_argument("--reload-period", type=float, default=1.0, help="s between hot reloads [1]")
    p.add_argument("--cycle-period", type=float, default=0.5, help="s between load/unload cycles [0.5]")
    p.add_argument("--exit-timeout", type=int, default=30, help="braidd --exit-timeout-secs [30]")
    p.add_argument("--max-rss-growth", type=float, default=5.0, help="allowed RSS growth, %% [5]")
    p.add_argument("--rss-slack-mib", type=float, default=4.0,
                   help="RSS growth allowed whatever the percentage, MiB [4]")
    p.add_argument("--json", help="also write the results as JSON here")
    p.add_argument("--braidd-arg", action="append", default=[], help="extra braidd argument (repeatable)")
    a = p.parse_args()
    if not (1.0 <= a.seconds <= 86400 and 1 <= a.clients <= 256):
        p.error("--seconds in [1, 86400], --clients in [1, 256]")
    os.environ["BRAIDD"] = os.environ["BRAID_E2E_BRAIDD"] = os.path.abspath(a.braidd)
    return Soak(a).run()


def sanitized(path):
    """A braidd built with ASan: its quarantine holds freed memory on purpose, so RSS growth
    says nothing about leaks there (LeakSanitizer's report at exit does)."""
    with open(path, "rb") as f:
        return b"__asan_init" in f.read()        # the runtime's entry, linked in or imported


if __name__ == "__main__":
    sys.exit(main())
