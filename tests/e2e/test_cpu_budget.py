#!/usr/bin/python3
"""braidd's automatic sizing reads the CPUs it may really use: an affinity mask (taskset) and a
cgroup CPU quota (cgroup v1 cpu.cfs_quota_us or v2 cpu.max, as Kubernetes and systemd's
CPUQuota= set them), not the host's core count. Each case starts a real braidd inside the
limit and reads the sizing it logs. The cgroup case needs root and a writable cpu controller
(it creates and removes a child cgroup); it is skipped, saying why, where there is none."""

import os
import shutil
import signal
import subprocess
import tempfile
import time
import unittest

BRAIDD = os.environ.get("BRAIDD")


def run_braidd(prefix=(), preexec=None):
    """Start braidd (wrapped by PREFIX), wait for its port file, stop it; its log text."""
    tmp = tempfile.mkdtemp(prefix="braid-cpu-")
    try:
        ports = os.path.join(tmp, "ports")
        log = open(os.path.join(tmp, "log"), "w+")
        p = subprocess.Popen(list(prefix) + [BRAIDD, "--grpc-address", "127.0.0.1:0",
                                             "--http-address", "", "--rest-address", "",
                                             "--port-file", ports],
                             stdout=log, stderr=subprocess.STDOUT, preexec_fn=preexec)
        t0 = time.monotonic()
        while not os.path.exists(ports) and p.poll() is None and time.monotonic() - t0 < 30:
            time.sleep(0.02)
        p.send_signal(signal.SIGTERM)
        rc = p.wait(timeout=60)
        log.seek(0)
        text = log.read()
        log.close()
        if rc != 0:
            raise AssertionError("braidd exited %d:\n%s" % (rc, text))
        return text
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def cgroup_v1_cpu():
    """The v1 cpu hierarchy's mount point, when this process may create a child there."""
    for d in ("/sys/fs/cgroup/cpu", "/sys/fs/cgroup/cpu,cpuacct"):
        if os.path.isfile(os.path.join(d, "cpu.cfs_quota_us")) and os.access(d, os.W_OK):
            return d
    return None


def cgroup_v2():
    """The unified hierarchy's root, when it is mounted at /sys/fs/cgroup with the cpu
    controller available to a child and writable here."""
    root = "/sys/fs/cgroup"
    try:
        with open(os.path.join(root, "cgroup.controllers")) as f:
            ok = "cpu" in f.read().split()
    except OSError:
        return None
    return root if ok and os.access(root, os.W_OK) else None


class CpuBudget(unittest.TestCase):

    def test_affinity_mask(self):
        if not shutil.which("taskset"):
            self.skipTest("taskset not found")
        text = run_braidd(prefix=("taskset", "-c", "0"))
        self.assertIn("CPU budget 1 core(s)", text)
        self.assertIn("1 in the affinity mask", text)
        self.assertIn("1 worker(s) x 1 thread(s)", text)

    def test_cgroup_quota(self):
        v1, v2 = cgroup_v1_cpu(), cgroup_v2()
        if not v1 and not v2:
            self.skipTest("no writable cgroup cpu controller here (not root, or none mounted)")
        parent = v2 or v1
        cg = os.path.join(parent, "braid-test-%d" % os.getpid())
        os.mkdir(cg)
        try:
            if v2:
                with open(os.path.join(v2, "cgroup.subtree_control"), "w") as f:
                    f.write("+cpu")
                with open(os.path.join(cg, "cpu.max"), "w") as f:
                    f.write("50000 100000")
            else:
                with open(os.path.join(cg, "cpu.cfs_period_us"), "w") as f:
                    f.write("100000")
                with open(os.path.join(cg, "cpu.cfs_quota_us"), "w") as f:
                    f.write("50000")

            def enter():
                with open(os.path.join(cg, "cgroup.procs"), "w") as f:
                    f.write(str(os.getpid()))
            text = run_braidd(preexec=enter)
            self.assertIn("cgroup quota 0.50 CPUs", text)
            self.assertIn("CPU budget 1 core(s)", text)
            self.assertIn("1 worker(s) x 1 thread(s)", text)
        finally:
            for _ in range(50):             # the child's processes are gone: removable
                try:
                    os.rmdir(cg)
                    break
                except OSError:
                    time.sleep(0.1)


if __name__ == "__main__":
    if not BRAIDD:
        raise SystemExit("set BRAIDD")
    unittest.main(verbosity=2)
