#!/usr/bin/env python3
"""Smoke test for braidd's gRPC server: start it on free loopback ports with the demo
repository, then drive every cheap RPC, one ModelInfer against the demo fixtures, typical
bad input, an unknown method, and SIGTERM (exit 0). Bounded in time everywhere.

usage: server_smoke.py BRAIDD PROTO_PY_DIR SOURCE_ROOT
"""
import os
import signal
import subprocess
import sys
import tempfile
import time

import grpc
import numpy as np

braidd, proto_dir, root = sys.argv[1:4]
sys.path.insert(0, proto_dir)
import health_pb2  # noqa: E402
import inference_pb2 as pb  # noqa: E402
import inference_pb2_grpc as pbg  # noqa: E402

SVC = "/inference.GRPCInferenceService/"
failures = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what, flush=True)
    if not cond:
        failures.append(what)


def code_of(fn):
    try:
        fn()
        return grpc.StatusCode.OK, ""
    except grpc.RpcError as e:
        return e.code(), e.details()


tmp = tempfile.mkdtemp(prefix="braidd-smoke-")
port_file = os.path.join(tmp, "ports")
proc = subprocess.Popen([braidd, "--repository", os.path.join(root, "daemon/demo-repository"),
                         "--grpc-address", "127.0.0.1:0", "--http-address", "127.0.0.1:0", "--rest-address", "127.0.0.1:0",
                         "--port-file", port_file, "--drain-timeout-ms", "5000"],
                        stdout=subprocess.PIPE, stderr=sys.stderr, text=True)
try:
    for _ in range(200):                      # up to 20 s for the ports
        if os.path.exists(port_file) or proc.poll() is not None:
            break
        time.sleep(0.1)
    check(os.path.exists(port_file), "braidd writes its port file")
    grpc_port, http_port, rest_port = map(int, open(port_file).read().split())
    line = proc.stdout.readline().strip()
    check(line == f"braidd listening on grpc 127.0.0.1:{grpc_port}, http 127.0.0.1:{http_port}, "
          f"rest 127.0.0.1:{rest_port}",
          f"listening line: {line!r}")

    ch = grpc.insecure_channel(f"127.0.0.1:{grpc_port}")
    stub = pbg.GRPCInferenceServiceStub(ch)
    check(stub.ServerLive(pb.ServerLiveRequest(), timeout=10).live, "ServerLive")
    ready = False
    for _ in range(300):                      # the demo model loads at start (<= 30 s)
        ready = stub.ServerReady(pb.ServerReadyRequest(), timeout=10).ready
        if ready:
            break
        time.sleep(0.1)
    check(ready, "ServerReady after the initial load")
    check(stub.ModelReady(pb.ModelReadyRequest(name="tinycnn"), timeout=10).ready, "ModelReady tinycnn")

    md = stub.ServerMetadata(pb.ServerMetadataRequest(), timeout=10)
    check(md.name == "braid" and "model_repository" in md.extensions, f"ServerMetadata {md.name} {list(md.extensions)}")

    mm = stub.ModelMetadata(pb.ModelMetadataRequest(name="tinycnn"), timeout=10)
    check(mm.platform == "onnx" and len(mm.inputs) == 1 and len(mm.outputs) >= 1,
          f"ModelMetadata: {mm.inputs[0].name} {mm.inputs[0].datatype} {list(mm.inputs[0].shape)}")
    cfg = stub.ModelConfig(pb.ModelConfigRequest(name="tinycnn"), timeout=10).config
    check(cfg.name == "tinycnn" and cfg.input[0].data_type == pb.TYPE_FP32, "ModelConfig")

    image = np.load(os.path.join(root, "tests/fixtures/demo/image.npy"))
    want = np.load(os.path.join(root, "tests/fixtures/demo/probabilities.npy"))
    inp = mm.inputs[0]
    req = pb.ModelInferRequest(model_name="tinycnn", id="req-1")
    t = req.inputs.add(name=inp.name, datatype="FP32", shape=list(image.shape))
    req.raw_input_contents.append(np.ascontiguousarray(image, dtype=np.float32).tobytes())
    rsp = stub.ModelInfer(req, timeout=30)
    out = np.frombuffer(rsp.raw_output_contents[0], dtype=np.float32).reshape(tuple(rsp.outputs[0].shape))
    err = float(np.max(np.abs(out - want)))
    check(rsp.id == "req-1" and rsp.model_name == "tinycnn", "ModelInfer echoes id and model")
    check(err < 1e-4, f"ModelInfer output matches the fixture (max abs err {err:.2e})")

    # typed contents instead of raw bytes
    req2 = pb.ModelInferRequest(model_name="tinycnn")
    t2 = req2.inputs.add(name=inp.name, datatype="FP32", shape=list(image.shape))
    t2.contents.fp32_contents.extend(image.astype(np.float32).ravel().tolist())
    rsp2 = stub.ModelInfer(req2, timeout=30)
    out2 = np.frombuffer(rsp2.raw_output_contents[0], dtype=np.float32).reshape(out.shape)
    check(float(np.max(np.abs(out2 - want))) < 1e-4, "ModelInfer with typed fp32_contents")

    # bad input -> status codes (docs/protocol.md)
    bad = pb.ModelInferRequest(model_name="nope")
    c, _ = code_of(lambda: stub.ModelInfer(bad, timeout=10))
    check(c == grpc.StatusCode.NOT_FOUND, f"unknown model -> {c}")
    bad = pb.ModelInferRequest(model_name="tinycnn")
    bad.inputs.add(name=inp.name, datatype="FP32", shape=list(image.shape))
    bad.raw_input_contents.append(b"\0" * 12)
    c, d = code_of(lambda: stub.ModelInfer(bad, timeout=10))
    check(c == grpc.StatusCode.INVALID_ARGUMENT and inp.name in d, f"short raw bytes -> {c}: {d}")
    bad = pb.ModelInferRequest(model_name="tinycnn")
    bad.inputs.add(name=inp.name, datatype="INT64", shape=list(image.shape))
    bad.raw_input_contents.append(b"\0" * (image.size * 8))
    c, d = code_of(lambda: stub.ModelInfer(bad, timeout=10))
    check(c == grpc.StatusCode.INVALID_ARGUMENT, f"wrong datatype -> {c}: {d}")
    req3 = pb.ModelInferRequest(model_name="tinycnn")
    req3.CopyFrom(req)
    req3.outputs.add(name="no_such_output")
    c, d = code_of(lambda: stub.ModelInfer(req3, timeout=10))
    check(c == grpc.StatusCode.INVALID_ARGUMENT, f"unknown requested output -> {c}: {d}")
    malformed = ch.unary_unary(SVC + "ModelInfer", request_serializer=lambda b: b,
                               response_deserializer=lambda b: b)
    c, d = code_of(lambda: malformed(b"\x0a\xff\xff", timeout=10))
    check(c == grpc.StatusCode.INVALID_ARGUMENT, f"malformed protobuf -> {c}: {d}")
    unknown = ch.unary_unary("/inference.GRPCInferenceService/NoSuchRpc",
                             request_serializer=lambda b: b, response_deserializer=lambda b: b)
    c, d = code_of(lambda: unknown(b"", timeout=10))
    check(c == grpc.StatusCode.UNIMPLEMENTED, f"unknown method -> {c}")

    hc = ch.unary_unary("/grpc.health.v1.Health/Check",
                        request_serializer=health_pb2.HealthCheckRequest.SerializeToString,
                        response_deserializer=health_pb2.HealthCheckResponse.FromString)
    check(hc(health_pb2.HealthCheckRequest(), timeout=10).status == health_pb2.HealthCheckResponse.SERVING,
          "grpc.health.v1.Health/Check SERVING")

    st = stub.ModelStatistics(pb.ModelStatisticsRequest(name="tinycnn"), timeout=10)
    s0 = st.model_stats[0]
    check(s0.inference_count >= 2 and s0.inference_stats.success.count >= 2
          and s0.inference_stats.fail.count >= 3, f"ModelStatistics: {s0.inference_count} inferences, "
          f"{s0.inference_stats.fail.count} failures")
    idx = stub.RepositoryIndex(pb.RepositoryIndexRequest(), timeout=10)
    check([(m.name, m.state) for m in idx.models] == [("tinycnn", "READY")], "RepositoryIndex")
    ch.close()
finally:
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
    try:
        rc = proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        proc.kill()
        rc = "killed after 30 s"
    check(rc == 0, f"SIGTERM -> exit {rc}")

print(f"{len(failures)} failure(s)")
sys.exit(1 if failures else 0)
