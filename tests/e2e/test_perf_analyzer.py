#!/usr/bin/python3
"""Triton's own load generator, perf_analyzer (PyPI perf-analyzer 2.60, unchanged; fetched by
scripts/fetch_perf_analyzer.sh), against a live braidd over gRPC: it must read the model's
metadata and config, drive inferences at two concurrencies, and read the server-side
statistics it breaks latency down with (queue, compute input/infer/output). Also the batching
path: a model with config.json max_batch_size, for which perf_analyzer takes the dims from
ModelConfig (without the batch dim) and sends batches of 2. And --streaming, over
ModelStreamInfer.

Skipped (exit 77, saying why) only when perf_analyzer is not in the cache."""

import csv
import io
import os
import subprocess
import sys

import e2e_models
from braidd_fixture import BraiddTestCase, pb, run_tests


def perf_analyzer_path():
    path = os.environ.get("BRAID_PERF_ANALYZER") or os.path.expanduser(
        "~/.cache/braid/perf-analyzer-2.60.0/perf_analyzer")
    return path if os.access(path, os.X_OK) else None


class PerfAnalyzer(BraiddTestCase):

    @classmethod
    def prepare_repository(cls, repo):
        e2e_models.write_repository_model(repo, "batched", e2e_models.batch_add_one())
        e2e_models.write_model_config(repo, "batched", {"max_batch_size": 4})

    def run_pa(self, *args):
        """perf_analyzer over gRPC, bounded windows and time; its CSV report as dict rows."""
        out = os.path.join(self.d.tmp, "pa.csv")
        cmd = [perf_analyzer_path(), "-u", "127.0.0.1:%d" % self.d.grpc_port, "-i", "grpc",
               "--measurement-mode", "count_windows", "--measurement-request-count", "100",
               "--stability-percentage", "999", "--max-trials", "3", "-f", out] + list(args)
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=180)
        text = p.stdout.decode(errors="replace")
        self.assertEqual(p.returncode, 0, "%s\n%s" % (" ".join(cmd), text))
        with open(out) as f:
            rows = list(csv.DictReader(io.StringIO(f.read())))
        return rows, text

    def success_count(self, model):
        r = self.stub.ModelStatistics(pb.ModelStatisticsRequest(name=model), timeout=10)
        return r.model_stats[0].inference_stats.success.count

    def test_demo_model_two_concurrencies(self):
        before = self.success_count("tinycnn")
        rows, text = self.run_pa("-m", "tinycnn", "--shape", "image:1,3,32,32",
                                 "--concurrency-range", "1:2")
        # perf_analyzer orders its CSV rows by throughput, not by concurrency
        self.assertEqual(sorted(int(r["Concurrency"]) for r in rows), [1, 2], text)
        for r in rows:
            self.assertGreater(float(r["Inferences/Second"]), 0, text)
            # the server-side breakdown comes from braidd's statistics
            self.assertGreater(float(r["Server Compute Infer"]), 0, text)
            self.assertGreaterEqual(float(r["Server Queue"]), 0, text)
        self.assertIn("Server:", text)
        self.assertGreaterEqual(self.success_count("tinycnn") - before, 200, text)

    def test_streaming(self):
        # --streaming: every request over one ModelStreamInfer stream per concurrency slot
        before = self.success_count("tinycnn")
        rows, text = self.run_pa("-m", "tinycnn", "--shape", "image:1,3,32,32", "--streaming",
                                 "--concurrency-range", "1:4:3")
        self.assertEqual(sorted(int(r["Concurrency"]) for r in rows), [1, 4], text)
        for r in rows:
            self.assertGreater(float(r["Inferences/Second"]), 0, text)
        self.assertGreaterEqual(self.success_count("tinycnn") - before, 200, text)

    def test_batched_model(self):
        rows, text = self.run_pa("-m", "batched", "-b", "2", "--concurrency-range", "1")
        self.assertEqual(len(rows), 1, text)
        self.assertIn("Batch size: 2", text)
        self.assertGreater(float(rows[0]["Inferences/Second"]), 0, text)


if __name__ == "__main__":
    if not perf_analyzer_path():
        print("SKIPPED: perf_analyzer not found (run scripts/fetch_perf_analyzer.sh, or set "
              "BRAID_PERF_ANALYZER)", file=sys.stderr)
        sys.exit(77)
    run_tests()
