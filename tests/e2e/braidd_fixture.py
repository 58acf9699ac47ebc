"""Start and stop a real braidd for the end-to-end tests.

    with Braidd(args=["--allow-uploads"]) as d:       # temp copy of daemon/demo-repository
        stub = d.stub()                               # inference.GRPCInferenceService
        ...
        assert d.stop() == 0                          # SIGTERM, bounded wait

Each braidd listens on free loopback ports (--grpc-address/--http-address 127.0.0.1:0) and
tells them through --port-file ("grpc_port http_port\n"); its stdout+stderr go to a file that
run_tests() prints when a test fails. A braidd built with a sanitizer fails the test when its
log holds a sanitizer report (check_log()).

Which braidd: `--braidd PATH` on the test's command line, else $BRAID_E2E_BRAIDD (for CI
running the suite against a sanitizer build), else $BRAIDD (set by tests/e2e/meson.build).
Python stubs: $BRAID_PROTO_PY (the proto_py target's directory); without it they are
generated from proto/*.proto into a temporary directory with protoc + grpc_python_plugin.
BRAID_E2E_KEEP=1 keeps each braidd's temporary repository and log after the run.
"""

import atexit
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import unittest
import urllib.error
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE_ROOT = os.environ.get("BRAID_SOURCE_ROOT") or os.path.abspath(os.path.join(HERE, "..", ".."))
DEMO_REPOSITORY = os.path.join(SOURCE_ROOT, "daemon", "demo-repository")
MAX_MESSAGE = 256 * 1024 * 1024
SANITIZER_MARKERS = ("ERROR: AddressSanitizer", "ERROR: LeakSanitizer", "runtime error:",
                     "WARNING: ThreadSanitizer", "ERROR: UndefinedBehaviorSanitizer")

_BRAIDD_ARG = None
_servers = []          # every Braidd started, for the log dump at the end
_stub_dir = None


def braidd_path():
    path = _BRAIDD_ARG or os.environ.get("BRAID_E2E_BRAIDD") or os.environ.get("BRAIDD")
    if not path:
        raise unittest.SkipTest("no braidd: pass --braidd PATH or set BRAIDD")
    if not os.access(path, os.X_OK):
        raise RuntimeError("braidd '%s' is not an executable file" % path)
    return path


def _generate_stubs():
    global _stub_dir
    out = tempfile.mkdtemp(prefix="braid-e2e-stubs-")
    _stub_dir = out
    proto = os.path.join(SOURCE_ROOT, "proto")
    subprocess.run(["protoc", "-I", proto, "--python_out=" + out, "--grpc_out=" + out,
                    "--plugin=protoc-gen-grpc=/usr/bin/grpc_python_plugin",
                    os.path.join(proto, "inference.proto"), os.path.join(proto, "health.proto")],
                   check=True)
    return out


def _load_stubs():
    d = os.environ.get("BRAID_PROTO_PY")
    if not d or not os.path.isfile(os.path.join(d, "inference_pb2_grpc.py")):
        d = _generate_stubs()
    sys.path.insert(0, d)


_load_stubs()
import grpc                     # noqa: E402  (after the stubs' directory is on the path)
import health_pb2               # noqa: E402
import health_pb2_grpc          # noqa: E402
if "tritonclient.grpc" in sys.modules:
    # A test driving braidd with NVIDIA's tritonclient (test_tritonclient.py) imported it
    # first: its generated inference.proto messages are registered under the same names as
    # braid's (protobuf refuses a second copy), so the fixture uses tritonclient's.
    from tritonclient.grpc import service_pb2 as pb                      # noqa: E402
    from tritonclient.grpc import service_pb2_grpc as inference_pb2_grpc  # noqa: E402
else:
    import inference_pb2 as pb      # noqa: E402
    import inference_pb2_grpc       # noqa: E402


def _cleanup_stubs():
    if _stub_dir:
        shutil.rmtree(_stub_dir, ignore_errors=True)


atexit.register(_cleanup_stubs)


def _cleanup_servers():
    """Whoever uses Braidd without run_tests(): no braidd and no temporary repository is left
    behind ($BRAID_E2E_KEEP=1 keeps the directories, with their logs, for a post-mortem)."""
    for s in _servers:
        if os.environ.get("BRAID_E2E_KEEP"):
            s.kill()
        else:
            s.cleanup()


atexit.register(_cleanup_servers)


class BraiddError(AssertionError):
    pass


class Braidd:
    """One braidd process with its own temporary repository and log."""

    def __init__(self, args=(), repository=None, copy_demo=True, start_timeout=60.0, env=None):
        self.args = list(args)
        self.tmp = tempfile.mkdtemp(prefix="braid-e2e-")
        self.repo = os.path.join(self.tmp, "repo")
        if repository is not None:
            shutil.copytree(repository, self.repo, symlinks=True)
        elif copy_demo:
            shutil.copytree(DEMO_REPOSITORY, self.repo, symlinks=True)
        else:
            os.makedirs(self.repo)
        self.port_file = os.path.join(self.tmp, "ports")
        self.log_path = os.path.join(self.tmp, "braidd.log")
        self.start_timeout = start_timeout
        self.extra_env = env or {}
        self.proc = None
        self.grpc_port = self.http_port = None
        self.channel = None
        self.returncode = None
        self.label = " ".join(self.args) or "(defaults)"
        _servers.append(self)

    # ---- process ----------------------------------------------------------------------

    def start(self):
        env = dict(os.environ)
        env.setdefault("OMP_WAIT_POLICY", "passive")
        # A sanitizer build: report everything, keep running after a report so the test
        # sees it in the log, and check leaks at exit.
        env.setdefault("ASAN_OPTIONS", "detect_leaks=1:halt_on_error=0:abort_on_error=0")
        env.setdefault("UBSAN_OPTIONS", "print_stacktrace=1:halt_on_error=0")
        env.update(self.extra_env)
        cmd = [braidd_path(), "--repository", self.repo,
               "--grpc-address", "127.0.0.1:0", "--http-address", "127.0.0.1:0", "--rest-address", "127.0.0.1:0",
               "--port-file", self.port_file] + self.args
        self.cmd = cmd
        with open(self.log_path, "wb") as log:
            self.proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=log,
                                         stderr=subprocess.STDOUT, env=env)
        deadline = time.monotonic() + self.start_timeout
        while True:
            ports = self._read_ports()
            if ports:
                self.grpc_port, self.http_port = ports
                break
            if self.proc.poll() is not None:
                self.returncode = self.proc.returncode
                raise BraiddError("braidd exited with %d before writing its port file\n%s"
                                  % (self.returncode, self.log_tail()))
            if time.monotonic() > deadline:
                self.kill()
                raise BraiddError("braidd wrote no port file within %.0f s\n%s"
                                  % (self.start_timeout, self.log_tail()))
            time.sleep(0.02)
        self.channel = self.new_channel()
        return self

    def _read_ports(self):
        try:
            with open(self.port_file) as f:
                text = f.read()
        except OSError:
            return None
        if not text.endswith("\n"):
            return None          # still being written
        parts = text.split()
        if len(parts) != 3:
            raise BraiddError("port file holds %r, expected 'grpc_port http_port rest_port\\n'" % text)
        self.rest_port = int(parts[2])
        return int(parts[0]), int(parts[1])

    def new_channel(self):
        return grpc.insecure_channel(
            "127.0.0.1:%d" % self.grpc_port,
            options=[("grpc.max_receive_message_length", MAX_MESSAGE),
                     ("grpc.max_send_message_length", MAX_MESSAGE),
                     ("grpc.enable_retries", 0)])

    def stub(self, channel=None):
        return inference_pb2_grpc.GRPCInferenceServiceStub(channel or self.channel)

    def health_stub(self, channel=None):
        return health_pb2_grpc.HealthStub(channel or self.channel)

    def wait_ready(self, timeout=60.0):
        """Until ServerReady says true (every model asked to load has loaded)."""
        stub = self.stub()
        deadline = time.monotonic() + timeout
        last = None
        while time.monotonic() < deadline:
            try:
                if stub.ServerReady(pb.ServerReadyRequest(), timeout=5).ready:
                    return
            except grpc.RpcError as e:
                last = e
            self.assert_running()
            time.sleep(0.05)
        raise BraiddError("braidd not ready within %.0f s (last error: %s)\n%s"
                          % (timeout, last, self.log_tail()))

    def wait_model(self, name, timeout=60.0):
        """Until ModelReady(NAME) says true."""
        stub = self.stub()
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                if stub.ModelReady(pb.ModelReadyRequest(name=name), timeout=5).ready:
                    return
            except grpc.RpcError:
                pass
            self.assert_running()
            time.sleep(0.05)
        raise BraiddError("model '%s' not ready within %.0f s\n%s" % (name, timeout, self.log_tail()))

    def wait_state(self, name, state, timeout=60.0):
        """Until RepositoryIndex lists NAME in STATE; returns its entry."""
        stub = self.stub()
        deadline = time.monotonic() + timeout
        seen = None
        while time.monotonic() < deadline:
            try:
                for m in stub.RepositoryIndex(pb.RepositoryIndexRequest(), timeout=5).models:
                    if m.name == name:
                        seen = m
                        if m.state == state:
                            return m
            except grpc.RpcError:
                pass
            self.assert_running()
            time.sleep(0.05)
        raise BraiddError("model '%s' not %s within %.0f s (last seen: %s)\n%s"
                          % (name, state, timeout, seen, self.log_tail()))

    def assert_running(self):
        if self.proc.poll() is not None:
            self.returncode = self.proc.returncode
            raise BraiddError("braidd died with exit code %d\n%s" % (self.returncode, self.log_tail()))

    def send_signal(self, sig):
        self.proc.send_signal(sig)

    def stop(self, sig=signal.SIGTERM, timeout=60.0):
        """Send SIG and wait up to TIMEOUT s; returns the exit code (a negative number: killed
        by that signal). Kills the process and raises if it does not exit in time."""
        if self.proc is None:
            return None
        if self.proc.poll() is None:
            if self.channel is not None:
                self.channel.close()
                self.channel = None
            self.proc.send_signal(sig)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.kill()
                raise BraiddError("braidd did not exit within %.0f s of signal %d\n%s"
                                  % (timeout, sig, self.log_tail()))
        self.returncode = self.proc.returncode
        return self.returncode

    def kill(self):
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(30)
        self.returncode = self.proc.returncode if self.proc else None

    def assert_gone(self):
        """The process is reaped and its gRPC port no longer accepts connections."""
        if self.proc.poll() is None:
            raise BraiddError("braidd (pid %d) is still running" % self.proc.pid)
        try:
            os.kill(self.proc.pid, 0)
            raise BraiddError("pid %d still exists after braidd exited" % self.proc.pid)
        except ProcessLookupError:
            pass
        import socket
        with socket.socket() as s:
            s.settimeout(2)
            if s.connect_ex(("127.0.0.1", self.grpc_port)) == 0:
                raise BraiddError("gRPC port %d still accepts connections after braidd exited"
                                  % self.grpc_port)

    def stop_clean(self, timeout=60.0):
        """SIGTERM, then assert: exit code 0, no process left, no sanitizer report."""
        code = self.stop(timeout=timeout)
        if code != 0:
            raise BraiddError("braidd exited with %s after SIGTERM, expected 0\n%s"
                              % (code, self.log_tail()))
        self.assert_gone()
        self.check_log()

    # ---- log ----------------------------------------------------------------------------

    def log_text(self):
        try:
            with open(self.log_path, "rb") as f:
                return f.read().decode("utf-8", "replace")
        except OSError:
            return ""

    def log_tail(self, lines=80):
        text = self.log_text().splitlines()
        return "---- braidd log (%s, last %d of %d lines) ----\n%s\n---- end ----" % (
            self.log_path, min(lines, len(text)), len(text), "\n".join(text[-lines:]))

    def check_log(self):
        text = self.log_text()
        for marker in SANITIZER_MARKERS:
            if marker in text:
                at = text.index(marker)
                raise BraiddError("sanitizer report in braidd's log (%s):\n%s"
                                  % (marker, text[max(0, at - 2000):at + 8000]))

    # ---- HTTP status port ------------------------------------------------------------

    def http_get(self, path, timeout=10.0):
        """(status, body bytes, headers) of GET PATH on the status port; no exception on 4xx/5xx."""
        url = "http://127.0.0.1:%d%s" % (self.http_port, path)
        try:
            with urllib.request.urlopen(url, timeout=timeout) as r:
                return r.status, r.read(), r.headers
        except urllib.error.HTTPError as e:
            return e.code, e.read(), e.headers

    # ---- context manager -------------------------------------------------------------

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.kill()
        return False

    def cleanup(self):
        self.kill()
        shutil.rmtree(self.tmp, ignore_errors=True)


class BraiddTestCase(unittest.TestCase):
    """One braidd per test class, started in setUpClass and stopped cleanly (SIGTERM, exit 0,
    no leftover process, no sanitizer report) in tearDownClass."""

    braidd_args = ()
    # After start: wait for ServerReady, or (when some model is meant to fail its load, so the
    # server never becomes ready) for RepositoryIndex to show these (model, state) pairs.
    wait_for_ready = True
    wait_states = ()

    @classmethod
    def prepare_repository(cls, repo):
        """Add models to the temporary repository before braidd starts."""

    @classmethod
    def setUpClass(cls):
        cls.d = Braidd(args=cls.braidd_args)
        cls.prepare_repository(cls.d.repo)
        cls.d.start()
        if cls.wait_for_ready:
            cls.d.wait_ready()
        for name, state in cls.wait_states:
            cls.d.wait_state(name, state)
        cls.stub = cls.d.stub()

    @classmethod
    def tearDownClass(cls):
        cls.d.stop_clean()

    def tearDown(self):
        # Every test leaves the server alive and serving (the "keeps serving" half of each
        # bad-input row).
        self.d.assert_running()
        self.stub.ServerLive(pb.ServerLiveRequest(), timeout=10)


def load_request(name, files=None, config=None):
    """A RepositoryModelLoadRequest for NAME: FILES {"1/model.onnx": bytes} as uploads,
    CONFIG (a dict) as the `config` parameter."""
    req = pb.RepositoryModelLoadRequest(model_name=name)
    for path, data in (files or {}).items():
        req.parameters["file:" + path].bytes_param = data
    if config is not None:
        req.parameters["config"].string_param = json.dumps(config)
    return req


def status_of(fn, *args, **kwargs):
    """Call FN; return (grpc.StatusCode, details or response)."""
    try:
        return grpc.StatusCode.OK, fn(*args, **kwargs)
    except grpc.RpcError as e:
        return e.code(), e.details() or ""


def run_tests():
    """unittest.main() with --braidd PATH, and braidd's log printed for a failing run."""
    global _BRAIDD_ARG
    argv = list(sys.argv)
    if "--braidd" in argv:
        i = argv.index("--braidd")
        _BRAIDD_ARG = os.path.abspath(argv[i + 1])
        del argv[i:i + 2]
    prog = unittest.main(argv=argv, exit=False, verbosity=2)
    ok = prog.result.wasSuccessful()
    for s in _servers:
        if not ok and os.path.exists(s.log_path):
            print("\n==== braidd [%s] ====\n%s" % (s.label, s.log_tail(200)), file=sys.stderr)
        if not os.environ.get("BRAID_E2E_KEEP"):
            s.cleanup()
    sys.exit(0 if ok else 1)
