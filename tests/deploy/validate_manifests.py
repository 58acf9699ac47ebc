#!/usr/bin/env python3
"""deploy/ as Kubernetes and KServe will meet it, offline.

1. Every manifest validates against a real schema, strictly (an unknown or misspelt field
   fails): Kubernetes' own kinds with kubernetes-validate's JSON schemas of Kubernetes 1.27
   and 1.37; KServe's InferenceService and ServingRuntime with the schema
   tests/deploy/kserve_schema.py made from KServe's Python SDK (both cached by
   scripts/fetch_k8s_schemas.sh). Planted mistakes prove each validator can fail.
2. The manifests agree with braidd and with each other: probe paths are braidd's health
   paths, ports match the addresses braidd is given, Services and the autoscaler point at
   what exists, the adapter's rules read families braidd exports, the ServingRuntime carries
   KServe's Triton arguments unchanged.
3. braidd starts with the Deployment's and the ServingRuntime's arguments as written (image
   paths mapped to temporary files, ports to free ones, 0.0.0.0 to loopback), turns ready, and
   exits 0 on SIGTERM.
4. The Dockerfile parses with Docker's own parser (PyPI dockerfile: BuildKit's, in Go), uses
   only Dockerfile instructions, its RUN lines parse as shell, and its stages fit the tree:
   what it copies and runs exists and is not excluded by .dockerignore, its build target is
   braidd, the runtime package list covers every library braidd loads.

    validate_manifests.py SOURCE_ROOT BRAIDD
Runs itself with scripts/fetch_k8s_schemas.sh's python (~/.cache/braid/k8s-venv); exit 77
(skipped) when that is not installed.
"""

import copy
import json
import os
import re
import shutil
import signal
import socket
import ssl
import subprocess
import sys
import tempfile
import time
import unittest
import urllib.error
import urllib.request

try:
    import dockerfile
    import jsonschema
    import kubernetes_validate
    import referencing
    import yaml
except ImportError as e:
    VENV = os.path.expanduser("~/.cache/braid/k8s-venv")
    if os.path.exists(os.path.join(VENV, "bin", "python")) and \
            os.path.realpath(sys.prefix) != os.path.realpath(VENV):
        os.execv(os.path.join(VENV, "bin", "python"), [os.path.join(VENV, "bin", "python")] + sys.argv)
    print("SKIP: %s: run scripts/fetch_k8s_schemas.sh (scripts/setup.sh does)" % e)
    sys.exit(77)

SOURCE_ROOT = BRAIDD = None
K8S_VERSIONS = ("1.27.0", "1.37.0")
KSERVE_KINDS = ("InferenceService", "ServingRuntime", "ClusterServingRuntime")
HEALTH_PATHS = {"/v2/health/live", "/v2/health/ready"}
# kserve-tritonserver's container arguments (KServe's config/runtimes/kserve-tritonserver.yaml),
# after the program name
KSERVE_TRITON_ARGS = ["--model-store=/mnt/models", "--grpc-port=9000", "--http-port=8080",
                      "--allow-grpc=true", "--allow-http=true"]


def kserve_schema_path():
    venv = os.path.dirname(os.path.dirname(sys.executable))
    hits = sorted(f for f in os.listdir(venv) if re.match(r"kserve-.*\.schema\.json$", f))
    if not hits:
        print("SKIP: no kserve-*.schema.json in %s: run scripts/fetch_k8s_schemas.sh" % venv)
        sys.exit(77)
    return os.path.join(venv, hits[-1])


def k8s_definitions(version):
    root = os.path.join(os.path.dirname(kubernetes_validate.__file__), "kubernetes-json-schema")
    with open(os.path.join(root, "v%s-local-strict" % version, "_definitions.json")) as f:
        return json.load(f)


def load_docs(*parts):
    with open(os.path.join(SOURCE_ROOT, "deploy", *parts)) as f:
        return [d for d in yaml.safe_load_all(f) if d]


def all_manifests():
    out = []
    for sub in ("kubernetes", "kserve"):
        d = os.path.join(SOURCE_ROOT, "deploy", sub)
        for name in sorted(os.listdir(d)):
            if name.endswith(".yaml"):
                out += [(os.path.join(sub, name), doc) for doc in load_docs(sub, name)]
    return out


class KServeValidator:
    def __init__(self):
        with open(kserve_schema_path()) as f:
            self.schema = json.load(f)
        defs = k8s_definitions(K8S_VERSIONS[-1])
        self.registry = referencing.Registry().with_resources([
            (defs["$id"], referencing.Resource.from_contents(defs)),
            (self.schema["$id"], referencing.Resource.from_contents(self.schema)),
        ])

    def validate(self, doc):
        kind = doc.get("kind")
        if kind not in self.schema["kinds"]:
            raise jsonschema.ValidationError("no KServe schema for kind %r" % kind)
        sub = dict(self.schema["kinds"][kind], **{"$schema": self.schema["$schema"]})
        sub["allOf"] = [{"$ref": self.schema["$id"] + r["$ref"]} if "$ref" in r else r
                        for r in sub["allOf"]]
        jsonschema.Draft202012Validator(sub, registry=self.registry).validate(doc)


def validate(doc, kserve):
    """Raise on the first schema violation of DOC."""
    if doc.get("kind") in KSERVE_KINDS:
        kserve.validate(doc)
    else:
        for v in K8S_VERSIONS:
            kubernetes_validate.validate(doc, v, strict=True)


def find(docs, kind, name=None):
    hits = [d for _, d in docs if d["kind"] == kind and (name is None or d["metadata"]["name"] == name)]
    assert len(hits) == 1, (kind, name, len(hits))
    return hits[0]


def flag_value(args, flag):
    """The last value of --FLAG=V or --FLAG V in ARGS, else None."""
    val = None
    for i, a in enumerate(args):
        if a.startswith(flag + "="):
            val = a.split("=", 1)[1]
        elif a == flag and i + 1 < len(args):
            val = args[i + 1]
    return val


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Manifests(unittest.TestCase):

    @classmethod
    def setUpClass(cls):
        cls.docs = all_manifests()
        cls.kserve = KServeValidator()

    # ---- 1. schemas ---------------------------------------------------------------------

    def test_every_manifest_validates_strictly(self):
        kinds = set()
        for path, doc in self.docs:
            with self.subTest(path=path, kind=doc.get("kind"), name=doc["metadata"]["name"]):
                validate(doc, self.kserve)
                kinds.add(doc["kind"])
        self.assertLessEqual({"Deployment", "Service", "PersistentVolumeClaim",
                              "HorizontalPodAutoscaler", "ServingRuntime", "InferenceService"},
                             kinds)

    def test_planted_mistakes_are_caught(self):
        dep = find(self.docs, "Deployment", "braidd")
        rt = find(self.docs, "ServingRuntime", "braid")
        isvc = find(self.docs, "InferenceService", "braid-grpc")
        hpa = find(self.docs, "HorizontalPodAutoscaler", "braidd")

        def planted(doc, change):
            bad = copy.deepcopy(doc)
            change(bad)
            return bad

        c = lambda d: d["spec"]["template"]["spec"]["containers"][0]   # noqa: E731
        mistakes = {
            "probe field misspelt": planted(dep, lambda d: c(d)["readinessProbe"].update(
                httpget=c(d)["readinessProbe"].pop("httpGet"))),
            "port as a word": planted(dep, lambda d: c(d)["ports"][0].update(containerPort="grpc")),
            "unknown Deployment spec field": planted(dep, lambda d: d["spec"].update(replica=2)),
            "HPA target without a type": planted(hpa, lambda d: d["spec"]["metrics"][0]["pods"]
                                                 ["target"].pop("type")),
            "runtime args as one string": planted(rt, lambda d: d["spec"]["containers"][0].update(
                args=" ".join(d["spec"]["containers"][0]["args"]))),
            "runtime container field misspelt": planted(rt, lambda d: d["spec"]["containers"][0]
                                                        .update(imagePullPolicyy="Always")),
            "runtime without containers": planted(rt, lambda d: d["spec"].pop("containers")),
            "model without modelFormat": planted(isvc, lambda d: d["spec"]["predictor"]["model"]
                                                 .pop("modelFormat")),
            "unknown predictor field": planted(isvc, lambda d: d["spec"]["predictor"].update(
                minReplica=1)),
            "probe inside the model misspelt": planted(isvc, lambda d: d["spec"]["predictor"]
                                                       ["model"]["readinessProbe"].update(grcp={})),
            "wrong apiVersion": planted(isvc, lambda d: d.update(apiVersion="serving.kserve.io/v1")),
        }
        for what, bad in mistakes.items():
            with self.subTest(mistake=what):
                with self.assertRaises((jsonschema.ValidationError,
                                        kubernetes_validate.ValidationError)):
                    validate(bad, self.kserve)

    # ---- 2. consistency ------------------------------------------------------------------

    def test_deployment_probes_and_ports_match_braidd(self):
        dep = find(self.docs, "Deployment", "braidd")
        pod = dep["spec"]["template"]["spec"]
        ctr = pod["containers"][0]
        ports = {p["name"]: p["containerPort"] for p in ctr["ports"]}
        with open(os.path.join(SOURCE_ROOT, "deploy", "braidd-container.json")) as f:
            image_cfg = json.load(f)
        self.assertEqual(flag_value(ctr["args"], "--config"), "/etc/braid/braidd.json")
        self.assertEqual(ports["grpc"], int(image_cfg["grpc_address"].rsplit(":", 1)[1]))
        self.assertEqual(ports["http"], int(image_cfg["http_address"].rsplit(":", 1)[1]))
        self.assertEqual(ports["rest"], int(image_cfg["rest_address"].rsplit(":", 1)[1]))
        tls = flag_value(ctr["args"], "--tls-cert-file") is not None
        for probe in ("startupProbe", "livenessProbe", "readinessProbe"):
            get = ctr[probe]["httpGet"]
            self.assertIn(get["path"], HEALTH_PATHS, probe)
            self.assertEqual(ports[get["port"]], ports["http"], probe)
            self.assertEqual(get.get("scheme", "HTTP"), "HTTPS" if tls else "HTTP", probe)
        self.assertEqual(ctr["livenessProbe"]["httpGet"]["path"], "/v2/health/live")
        self.assertEqual(ctr["readinessProbe"]["httpGet"]["path"], "/v2/health/ready")
        # braidd drains for exit_timeout_secs (30 by default) and exits at most 10 s later
        self.assertGreaterEqual(pod["terminationGracePeriodSeconds"], 30 + 10)
        # every mounted volume exists; the repository is mounted where --repository points
        volumes = {v["name"] for v in pod["volumes"]}
        mounts = {m["mountPath"]: m["name"] for m in ctr["volumeMounts"]}
        self.assertLessEqual(set(mounts.values()), volumes)
        self.assertIn(flag_value(ctr["args"], "--repository"), mounts)
        for f in ("--tls-cert-file", "--tls-key-file", "--auth-token-file"):
            path = flag_value(ctr["args"], f)
            if path:
                self.assertTrue(any(path.startswith(m + "/") for m in mounts), f)

    def test_services_and_autoscaler_point_at_the_deployment(self):
        dep = find(self.docs, "Deployment", "braidd")
        labels = dep["spec"]["template"]["metadata"]["labels"]
        port_names = {p["name"] for p in dep["spec"]["template"]["spec"]["containers"][0]["ports"]}
        for _, svc in [(p, d) for p, d in self.docs if d["kind"] == "Service"]:
            self.assertLessEqual(svc["spec"]["selector"].items(), labels.items(), svc["metadata"]["name"])
            for p in svc["spec"]["ports"]:
                self.assertIn(p["targetPort"], port_names)
        pdb = find(self.docs, "PodDisruptionBudget", "braidd")
        self.assertLessEqual(pdb["spec"]["selector"]["matchLabels"].items(), labels.items())
        hpa = find(self.docs, "HorizontalPodAutoscaler", "braidd")
        self.assertEqual(hpa["spec"]["scaleTargetRef"],
                         {"apiVersion": "apps/v1", "kind": "Deployment", "name": "braidd"})
        self.assertGreaterEqual(hpa["spec"]["minReplicas"], 2)
        # the adapter serves under the names the HPA asks for, from families braidd exports
        adapter = yaml.safe_load(find(self.docs, "ConfigMap", "prometheus-adapter-braidd")
                                 ["data"]["config.yaml"])
        served = {r["name"]["as"] for r in adapter["rules"]}
        asked = {m["pods"]["metric"]["name"] for m in hpa["spec"]["metrics"]}
        self.assertEqual(asked, served)
        exported = triton_families()
        for r in adapter["rules"]:
            for name in re.findall(r"\b(nv_[a-z_]+)\{", r["seriesQuery"] + r["metricsQuery"]):
                self.assertIn(name, exported, r["name"]["as"])

    def test_servingruntime_carries_kserves_triton_arguments(self):
        rt = find(self.docs, "ServingRuntime", "braid")
        ctr = rt["spec"]["containers"][0]
        args = ctr["args"]
        n = len(KSERVE_TRITON_ARGS)
        self.assertTrue(any(args[i:i + n] == KSERVE_TRITON_ARGS for i in range(len(args))),
                        "kserve-tritonserver's arguments, unchanged and in order: %s" % args)
        self.assertEqual(ctr["name"], "kserve-container")
        self.assertEqual(set(rt["spec"]["protocolVersions"]), {"v2", "grpc-v2"})
        http_port = flag_value(args, "--http-port")
        grpc_port = int(flag_value(args, "--grpc-port"))
        # Triton's --http-port is the REST port; metrics stay on the image's metrics port
        with open(os.path.join(SOURCE_ROOT, "deploy", "braidd-container.json")) as f:
            metrics_port = json.load(f)["http_address"].rsplit(":", 1)[1]
        self.assertNotIn("--metrics-port", " ".join(args))
        self.assertEqual(rt["spec"]["annotations"]["prometheus.kserve.io/port"], metrics_port)
        self.assertEqual(rt["spec"]["annotations"]["prometheus.kserve.io/path"], "/metrics")
        by_protocol = {}
        for _, d in self.docs:
            if d["kind"] == "InferenceService":
                model = d["spec"]["predictor"]["model"]
                self.assertEqual(model["runtime"], rt["metadata"]["name"])
                self.assertIn(model["modelFormat"]["name"],
                              {f["name"] for f in rt["spec"]["supportedModelFormats"]})
                by_protocol[model["protocolVersion"]] = model
        self.assertEqual(set(by_protocol), {"v2", "grpc-v2"})
        g = by_protocol["grpc-v2"]
        self.assertEqual(g["ports"][0]["containerPort"], grpc_port)
        self.assertEqual(g["ports"][0]["name"], "h2c")                   # Knative's HTTP/2 name
        self.assertEqual(g["readinessProbe"]["grpc"]["port"], grpc_port)
        r = by_protocol["v2"]
        self.assertEqual(r["readinessProbe"]["httpGet"]["port"], int(http_port))
        self.assertIn(r["readinessProbe"]["httpGet"]["path"], HEALTH_PATHS)

    # ---- 3. braidd takes the arguments as written -------------------------------------------

    def test_braidd_starts_with_the_servingruntimes_arguments(self):
        rt = find(self.docs, "ServingRuntime", "braid")
        with Pod() as pod:
            args = pod.map_args(rt["spec"]["containers"][0]["args"], {"/mnt/models": pod.repo})
            pod.start(args, rest_flag="--http-port", grpc_flag="--grpc-port")
            # KServe's v2 REST predictor: probes and inference on --http-port
            self.assertEqual(pod.get("/v2/health/ready", pod.rest_port)[0], 200)
            status, body = pod.post("/v2/models/tinycnn/infer", json.dumps({"inputs": [{
                "name": "image", "datatype": "FP32", "shape": [1, 3, 32, 32],
                "data": [0.5] * (3 * 32 * 32)}]}), pod.rest_port)
            self.assertEqual(status, 200, body)
            out = json.loads(body)["outputs"][0]
            self.assertEqual((out["name"], out["shape"]), ("probabilities", [1, 10]))
            self.assertAlmostEqual(sum(out["data"]), 1.0, places=4)   # a softmax
            # the metrics port the annotation names
            status, body = pod.get("/metrics")
            self.assertEqual(status, 200)
            for family in ("nv_inference_queue_duration_us", "nv_inference_pending_request_count"):
                self.assertIn("# TYPE %s " % family, body)
            self.assertEqual(pod.stop(), 0, pod.log())

    def test_braidd_starts_with_the_deployments_arguments(self):
        dep = find(self.docs, "Deployment", "braidd")
        ctr = dep["spec"]["template"]["spec"]["containers"][0]
        with Pod() as pod:
            secrets = pod.make_secrets()
            args = pod.map_args(ctr["args"], {"/models": pod.repo, "/secrets": secrets})
            pod.start(args, rest_flag=None, grpc_flag=None, tls=True)
            self.assertEqual(pod.get("/v2/health/live")[0], 200)
            self.assertEqual(pod.get("/v2/health/ready", pod.rest_port)[0], 200)   # HTTPS too
            self.assertEqual(pod.get("/v2/health/ready")[0], 200)
            self.assertEqual(pod.get("/metrics")[0], 401)            # tokens are on
            self.assertEqual(pod.get("/metrics", token=pod.token)[0], 200)
            self.assertEqual(pod.stop(), 0, pod.log())

    # ---- 4. the Dockerfile -------------------------------------------------------------------

    def test_dockerfile_fits_the_tree(self):
        path = os.path.join(SOURCE_ROOT, "deploy", "Dockerfile")
        cmds = dockerfile.parse_file(path)            # raises on what docker build refuses
        known = {"FROM", "RUN", "CMD", "LABEL", "EXPOSE", "ENV", "ADD", "COPY", "ENTRYPOINT",
                 "VOLUME", "USER", "WORKDIR", "ARG", "ONBUILD", "STOPSIGNAL", "HEALTHCHECK", "SHELL"}
        self.assertEqual([c.cmd for c in cmds if c.cmd not in known], [])
        stages = [c.value for c in cmds if c.cmd == "FROM"]
        self.assertEqual(stages, [("debian:bookworm", "AS", "build"),
                                  ("debian:bookworm-slim", "AS", "runtime")])
        at = [i for i, c in enumerate(cmds) if c.cmd == "FROM"][1]
        build, runtime = cmds[:at], cmds[at:]
        for c in cmds:
            if c.cmd == "RUN":
                sh = subprocess.run(["sh", "-n", "-c", c.value[0]], capture_output=True, text=True)
                self.assertEqual(sh.returncode, 0, "%s: %s" % (c.original, sh.stderr))
        # the build stage: the project's own setup, tests off, braidd only
        run = " && ".join(c.value[0] for c in build if c.cmd == "RUN")
        self.assertIn("scripts/setup.sh --build-only", run)
        with open(os.path.join(SOURCE_ROOT, "scripts", "setup.sh")) as f:
            self.assertIn('"--build-only"', f.read())
        self.assertIn("-Dtests=false", run)
        self.assertIn("ninja -C build daemon/braidd", run)
        # every file of the tree it names exists and reaches the build context
        ignored = dockerignore()
        for rel in re.findall(r"\b((?:scripts|deploy)/[\w./-]+)", run) + \
                [c.value[0] for c in build if c.cmd == "COPY" and not c.flags and c.value[0] != "."]:
            self.assertTrue(os.path.exists(os.path.join(SOURCE_ROOT, rel)), rel)
            self.assertFalse(any(rel == p or rel.startswith(p + "/") for p in ignored), rel)
        # the runtime stage: no toolchain, the files it copies are what it runs
        self.assertFalse([c for c in runtime if c.cmd == "RUN" and "setup.sh" in c.value[0]])
        copies = [c.value[1] for c in runtime if c.cmd == "COPY" and "--from=build" in c.flags]
        entry = [c.value for c in runtime if c.cmd == "ENTRYPOINT"][-1]
        cmd = [c.value for c in runtime if c.cmd == "CMD"][-1]
        self.assertTrue([c for c in runtime if c.cmd == "ENTRYPOINT"][-1].json, "exec form")
        self.assertIn(entry[0], copies)
        self.assertIn(flag_value(list(cmd), "--config"), copies)
        self.assertEqual([c.value for c in runtime if c.cmd == "USER"], [("10001:10001",)])
        # the manifests run the image's user and its config
        dep = find(self.docs, "Deployment", "braidd")
        self.assertEqual(dep["spec"]["template"]["spec"]["securityContext"]["runAsUser"], 10001)
        # the build stage's runtime package list, on the braidd built here: every library
        # ldd names belongs to a listed package (the script fails otherwise)
        out = subprocess.run([os.path.join(SOURCE_ROOT, "deploy", "runtime-packages.sh"), BRAIDD],
                             check=True, capture_output=True, text=True).stdout.split()
        for pkg in ("libc6", "libgrpc29", "libdnnl2", "libuv1", "libssl3", "libgomp1"):
            self.assertIn(pkg, out)
        self.assertFalse([p for p in out if p.endswith("-dev")], out)


def dockerignore():
    with open(os.path.join(SOURCE_ROOT, ".dockerignore")) as f:
        return [l.strip().strip("/") for l in f if l.strip() and not l.startswith("#")]


def triton_families():
    with open(os.path.join(SOURCE_ROOT, "daemon", "stats", "prometheus_triton.c")) as f:
        return set(re.findall(r'"(nv_[a-z_]+)"', f.read()))


class Pod:
    """A temporary stand-in for the container: the demo repository, the image's config with
    loopback hosts, and braidd started with a manifest's arguments."""

    def __init__(self):
        self.tmp = tempfile.mkdtemp(prefix="braid-deploy-")
        self.repo = os.path.join(self.tmp, "models")
        shutil.copytree(os.path.join(SOURCE_ROOT, "daemon", "demo-repository"), self.repo)
        with open(os.path.join(SOURCE_ROOT, "deploy", "braidd-container.json")) as f:
            cfg = json.load(f)
        self.grpc_port, self.http_port, self.rest_port = free_port(), free_port(), free_port()
        # the image's addresses, with loopback for 0.0.0.0 and free ports
        cfg["grpc_address"] = "127.0.0.1:%d" % self.grpc_port
        cfg["http_address"] = "127.0.0.1:%d" % self.http_port
        cfg["rest_address"] = "127.0.0.1:%d" % self.rest_port
        self.config = os.path.join(self.tmp, "braidd.json")
        with open(self.config, "w") as f:
            json.dump(cfg, f)
        self.proc = None
        self.tls = False
        self.token = None

    def make_secrets(self):
        """Secrets as the Deployment mounts them: /secrets/tls/tls.{crt,key}, /secrets/tokens/tokens."""
        root = os.path.join(self.tmp, "secrets")
        os.makedirs(os.path.join(root, "tls"))
        os.makedirs(os.path.join(root, "tokens"))
        subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
                        "-subj", "/CN=braidd", "-addext", "subjectAltName=IP:127.0.0.1",
                        "-keyout", os.path.join(root, "tls", "tls.key"),
                        "-out", os.path.join(root, "tls", "tls.crt")],
                       check=True, capture_output=True)
        self.token = os.urandom(16).hex()
        path = os.path.join(root, "tokens", "tokens")
        with open(os.open(path, os.O_WRONLY | os.O_CREAT, 0o600), "w") as f:
            f.write("inference %s\nadmin %s\n" % (self.token, os.urandom(16).hex()))
        return root

    def map_args(self, args, paths):
        """ARGS with the image's paths replaced: /etc/braid/braidd.json and PATHS {image: here}."""
        out = []
        for a in args:
            a = a.replace("/etc/braid/braidd.json", self.config)
            for image, here in paths.items():
                a = re.sub(r"(^|=)%s(?=/|$)" % re.escape(image), lambda m: m.group(1) + here, a)
            out.append(a)
        return out

    def start(self, args, rest_flag, grpc_flag, tls=False):
        # ports the manifest fixes (KServe's 9000/8080) become free ones, in place
        fixed = {rest_flag: self.rest_port, grpc_flag: self.grpc_port}
        args = [("%s=%d" % (a.split("=")[0], fixed[a.split("=")[0]]))
                if "=" in a and a.split("=")[0] in fixed else a for a in args]
        self.tls = tls
        self.port_file = os.path.join(self.tmp, "ports")
        self.log_path = os.path.join(self.tmp, "braidd.log")
        env = dict(os.environ, OMP_WAIT_POLICY="passive")
        # a sanitizer build reports everything and keeps running; stop() reads the log
        env.setdefault("ASAN_OPTIONS", "detect_leaks=1:halt_on_error=0:abort_on_error=0")
        env.setdefault("UBSAN_OPTIONS", "print_stacktrace=1:halt_on_error=0")
        with open(self.log_path, "wb") as log:
            self.proc = subprocess.Popen([BRAIDD] + args + ["--port-file", self.port_file],
                                         stdin=subprocess.DEVNULL, stdout=log,
                                         stderr=subprocess.STDOUT, env=env)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise AssertionError("braidd exited with %d:\n%s" % (self.proc.returncode, self.log()))
            try:
                with open(self.port_file) as f:
                    text = f.read()
                if text.endswith("\n"):
                    got = tuple(int(x) for x in text.split())
                    assert got == (self.grpc_port, self.http_port, self.rest_port), (got, self.log())
                    break
            except OSError:
                pass
            time.sleep(0.05)
        while time.monotonic() < deadline and self.get("/v2/health/ready")[0] != 200:
            time.sleep(0.1)

    def get(self, path, port=None, token=None):
        return self.request(path, port, token)

    def post(self, path, body, port=None):
        return self.request(path, port, None, body.encode())

    def request(self, path, port, token, body=None):
        url = "%s://127.0.0.1:%d%s" % ("https" if self.tls else "http", port or self.http_port, path)
        req = urllib.request.Request(url, data=body)
        if token:
            req.add_header("Authorization", "Bearer " + token)
        ctx = ssl._create_unverified_context() if self.tls else None   # as kubelet's probes
        try:
            with urllib.request.urlopen(req, timeout=10, context=ctx) as r:
                return r.status, r.read().decode()
        except urllib.error.HTTPError as e:
            return e.code, e.read().decode()
        except OSError:
            return 0, ""

    def stop(self):
        """SIGTERM; braidd's exit status, or -1 when its log holds a sanitizer report."""
        self.proc.send_signal(signal.SIGTERM)
        try:
            code = self.proc.wait(60)
        finally:
            self.proc = None
        markers = ("ERROR: AddressSanitizer", "ERROR: LeakSanitizer", "runtime error:")
        return -1 if any(m in self.log() for m in markers) else code

    def log(self):
        try:
            with open(self.log_path, errors="replace") as f:
                return f.read()
        except OSError:
            return ""

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        if self.proc:
            self.proc.kill()
            self.proc.wait()
        shutil.rmtree(self.tmp, ignore_errors=True)
        return False


if __name__ == "__main__":
    if len(sys.argv) < 3:
        raise SystemExit(__doc__)
    SOURCE_ROOT, BRAIDD = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    unittest.main(argv=[sys.argv[0]] + sys.argv[3:], verbosity=2)
