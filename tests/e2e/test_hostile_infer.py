#!/usr/bin/python3
"""Hostile ModelInfer requests against a live braidd: each one once crashed it or was silently
misread. Every test sends the offending bytes over the
real wire, checks the exact status and a message naming what is wrong, and then checks that
the server still serves (a good inference at the end of each test; BraiddTestCase checks
ServerLive after each test and a clean exit with no sanitizer report at the end).

Models (built here with onnx.helper):
    vec    x FP32 [n]    -> y = x + 1, z = x * 2
    mat    x FP32 [n,10] -> y = Relu(x)
    grid   x FP32 [a,b]  -> y = Relu(x)
    ints   x INT32 [n]   -> y = Cast(x, FLOAT)
"""

import os
import re

import grpc
import numpy as np
from onnx import TensorProto, helper

import e2e_models
from braidd_fixture import BraiddTestCase, pb, run_tests, status_of
from tensors import infer_request, response_outputs

INVALID = grpc.StatusCode.INVALID_ARGUMENT
MIB = 1 << 20


def _graph_model(name, nodes, inputs, outputs, inits=()):
    g = helper.make_graph(nodes, name, inputs, outputs, initializer=list(inits))
    return e2e_models._model(g)


def vec_model():
    one = helper.make_tensor("one", TensorProto.FLOAT, [1], [1.0])
    two = helper.make_tensor("two", TensorProto.FLOAT, [1], [2.0])
    return _graph_model("vec",
                        [helper.make_node("Add", ["x", "one"], ["y"]),
                         helper.make_node("Mul", ["x", "two"], ["z"])],
                        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n"])],
                        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["n"]),
                         helper.make_tensor_value_info("z", TensorProto.FLOAT, ["n"])],
                        [one, two])


def relu_model(name, shape):
    return _graph_model(name, [helper.make_node("Relu", ["x"], ["y"])],
                        [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)],
                        [helper.make_tensor_value_info("y", TensorProto.FLOAT, shape)])


def ints_model():
    return _graph_model("ints", [helper.make_node("Cast", ["x"], ["y"], to=TensorProto.FLOAT)],
                        [helper.make_tensor_value_info("x", TensorProto.INT32, ["n"])],
                        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["n"])])


def write_models(repo):
    e2e_models.write_repository_model(repo, "vec", vec_model())
    e2e_models.write_repository_model(repo, "mat", relu_model("mat", ["n", 10]))
    e2e_models.write_repository_model(repo, "grid", relu_model("grid", ["a", "b"]))
    e2e_models.write_repository_model(repo, "ints", ints_model())


def typed(model, shape, field, values, datatype="FP32", name="x"):
    """A request with one input whose typed contents FIELD hold VALUES and whose shape is
    SHAPE (whatever the count)."""
    req = pb.ModelInferRequest(model_name=model)
    t = req.inputs.add(name=name, datatype=datatype, shape=list(shape))
    getattr(t.contents, field).extend(values)
    return req


class Common(BraiddTestCase):

    @classmethod
    def prepare_repository(cls, repo):
        write_models(repo)

    def infer(self, req, timeout=60):
        return status_of(self.stub.ModelInfer, req, timeout=timeout)

    def assert_serving(self):
        x = np.arange(5, dtype=np.float32)
        resp = self.stub.ModelInfer(infer_request("vec", {"x": x}), timeout=30)
        out = response_outputs(resp)
        np.testing.assert_array_equal(out["y"], x + 1)
        np.testing.assert_array_equal(out["z"], x * 2)

    def assert_status(self, req, code, *mentions, rpc=None):
        got, details = status_of(rpc or self.stub.ModelInfer, req, timeout=60)
        self.assertEqual(got, code, "details: %r" % (details,))
        for m in mentions:
            self.assertIn(m, details, "the message should name %r" % m)
        self.assert_serving()
        return details


class SizeOverflow(Common):
    """Shapes whose byte count wraps, or whose typed values overrun the buffer."""

    def test_fp32_contents_shape_wraps_buffer_size(self):
        # numel * 4 = 2^64 - 4: the buffer used to round to 64 bytes, then 4 MiB was copied.
        req = typed("vec", [4611686018427387903], "fp32_contents", [1.0] * MIB)
        self.assert_status(req, INVALID, "'x'")

    def test_fp32_contents_2d_shape_wraps_buffer_size(self):
        req = typed("mat", [(2 ** 62 - 4) // 10, 10], "fp32_contents", [1.0] * MIB)
        self.assert_status(req, INVALID, "'x'")

    def test_int_contents_shape_wraps_temp_buffer(self):
        # numel * 8 wrapped the uint64 temporary of the varint path to 8 bytes.
        req = typed("ints", [2 ** 61 + 1], "int_contents", list(range(1000)), datatype="INT32")
        self.assert_status(req, INVALID, "'x'")

    def test_typed_count_checked_before_allocating(self):
        # A huge but non-wrapping shape with a few values: refused for the count, not OOM.
        for shape in ([2 ** 40], [2 ** 31 - 1], [2 ** 30]):
            req = typed("vec", shape, "fp32_contents", [1.0] * 16)
            details = self.assert_status(req, INVALID, "'x'")
            self.assertNotIn("memory", details)

    def test_raw_shape_wraps_byte_count(self):
        req = infer_request("vec", {"x": np.zeros(4, np.float32)})
        del req.inputs[0].shape[:]
        req.inputs[0].shape.append(4611686018427387903)
        self.assert_status(req, INVALID, "'x'")
        del req.inputs[0].shape[:]
        req.inputs[0].shape.append(2 ** 63 - 1)
        self.assert_status(req, INVALID, "'x'")

    def test_empty_tensor_with_huge_dims(self):
        # numel 0, but a dim product no later stage could compute
        for shape in ([0, 2 ** 62], [2 ** 40, 0], [0, 2 ** 31]):
            req = pb.ModelInferRequest(model_name="grid")
            req.inputs.add(name="x", datatype="FP32", shape=shape)
            req.raw_input_contents.append(b"")
            self.assert_status(req, INVALID, "'x'", "too large")

    def test_empty_tensor_is_fine(self):
        req = pb.ModelInferRequest(model_name="grid")
        req.inputs.add(name="x", datatype="FP32", shape=[0, 3])
        req.raw_input_contents.append(b"")
        code, resp = self.infer(req)
        self.assertEqual(code, grpc.StatusCode.OK, resp)
        self.assertEqual(list(resp.outputs[0].shape), [0, 3])
        req = typed("grid", [4, 0], "fp32_contents", [])
        code, resp = self.infer(req)
        self.assertEqual(code, grpc.StatusCode.OK, resp)

    def test_typed_and_raw_good_requests_still_work(self):
        x = np.linspace(-1, 1, 30, dtype=np.float32).reshape(3, 10)
        for raw in (True, False):
            resp = self.stub.ModelInfer(infer_request("mat", {"x": x}, raw=raw), timeout=30)
            np.testing.assert_array_equal(response_outputs(resp)["y"], np.maximum(x, 0))
        xi = np.array([-3, 0, 7, 2 ** 31 - 1], np.int32)
        resp = self.stub.ModelInfer(infer_request("ints", {"x": xi}, raw=False), timeout=30)
        np.testing.assert_array_equal(response_outputs(resp)["y"], xi.astype(np.float32))


class Outputs(Common):
    """Requested outputs: duplicates and counts."""

    def test_twenty_thousand_duplicate_outputs(self):
        # 20,000 x a 4 MiB output: an 84 GB reply was allocated before any limit (SIGABRT).
        req = infer_request("vec", {"x": np.ones(MIB, np.float32)}, outputs=["y"] * 20000)
        self.assert_status(req, INVALID, "1024")

    def test_duplicate_output_named(self):
        x = np.ones(MIB, np.float32)
        self.assert_status(infer_request("vec", {"x": x}, outputs=["y", "y"]), INVALID, "'y'", "twice")
        self.assert_status(infer_request("vec", {"x": x}, outputs=["z", "y", "z"]), INVALID, "'z'")

    def test_distinct_outputs_in_request_order(self):
        x = np.arange(4, dtype=np.float32)
        resp = self.stub.ModelInfer(infer_request("vec", {"x": x}, outputs=["z", "y"]), timeout=30)
        self.assertEqual([o.name for o in resp.outputs], ["z", "y"])

    def test_repeated_field_limits(self):
        x = np.ones(4, np.float32)
        many_inputs = infer_request("vec", {"x": x})
        for i in range(1100):
            many_inputs.inputs.add(name="x%d" % i, datatype="FP32", shape=[0])
        self.assert_status(many_inputs, INVALID, "1024")
        long_shape = infer_request("vec", {"x": x})
        long_shape.inputs[0].shape.extend([1] * 2000)
        self.assert_status(long_shape, INVALID, "1024")
        params = infer_request("vec", {"x": x})
        for i in range(1500):
            params.parameters["p%d" % i].int64_param = i
        self.assert_status(params, INVALID, "1024")
        nested = infer_request("vec", {"x": x})
        for i in range(1500):
            nested.inputs[0].parameters["q%d" % i].bool_param = True
        self.assert_status(nested, INVALID, "1024")
        # within the limits: fine
        ok = infer_request("vec", {"x": x})
        for i in range(100):
            ok.parameters["p%d" % i].string_param = "v"
        code, _ = self.infer(ok)
        self.assertEqual(code, grpc.StatusCode.OK)

    def test_rank_over_eight(self):
        req = infer_request("vec", {"x": np.ones(1, np.float32)})
        req.inputs[0].shape.extend([1] * 9)
        self.assert_status(req, INVALID, "'x'", "rank")


class Strings(Common):
    """Strings with a NUL byte were cut there by the decoder (so 'vec\\0junk' meant 'vec')."""

    def test_nul_in_every_infer_string(self):
        x = np.arange(3, dtype=np.float32)

        def req():
            return infer_request("vec", {"x": x}, outputs=["y"])

        cases = []
        r = req(); r.model_name = "vec\0junk"; cases.append(r)
        r = req(); r.model_version = "1\0"; cases.append(r)
        r = req(); r.id = "id\0tail"; cases.append(r)
        r = req(); r.inputs[0].name = "x\0y"; cases.append(r)
        r = req(); r.inputs[0].datatype = "FP32\0INT8"; cases.append(r)
        r = req(); r.outputs[0].name = "y\0"; cases.append(r)
        r = req(); r.parameters["key\0"].bool_param = True; cases.append(r)
        r = req(); r.parameters["k"].string_param = "v\0"; cases.append(r)
        r = req(); r.inputs[0].parameters["k\0"].int64_param = 1; cases.append(r)
        r = req(); r.outputs[0].parameters["k\0"].int64_param = 1; cases.append(r)
        for r in cases:
            self.assert_status(r, INVALID, "NUL")

    def test_nul_in_other_rpcs(self):
        s = self.stub
        self.assert_status(pb.ModelReadyRequest(name="vec\0x"), INVALID, "NUL", rpc=s.ModelReady)
        self.assert_status(pb.ModelMetadataRequest(name="vec", version="1\0"), INVALID, "NUL",
                           rpc=s.ModelMetadata)
        self.assert_status(pb.ModelConfigRequest(name="vec\0"), INVALID, "NUL", rpc=s.ModelConfig)
        self.assert_status(pb.ModelStatisticsRequest(name="vec\0"), INVALID, "NUL",
                           rpc=s.ModelStatistics)
        self.assert_status(pb.RepositoryIndexRequest(repository_name="\0"), INVALID, "NUL",
                           rpc=s.RepositoryIndex)
        self.assert_status(pb.RepositoryModelUnloadRequest(model_name="vec\0../x"), INVALID, "NUL",
                           rpc=s.RepositoryModelUnload)
        load = pb.RepositoryModelLoadRequest(model_name="vec")
        load.parameters["config\0"].string_param = "{}"
        self.assert_status(load, INVALID, "NUL", rpc=s.RepositoryModelLoad)
        # the model is untouched
        self.assertTrue(s.ModelReady(pb.ModelReadyRequest(name="vec"), timeout=10).ready)


class TypedContents(Common):
    """Typed contents in a field other than the datatype's were silently ignored."""

    def test_wrong_field_named(self):
        self.assert_status(typed("vec", [3], "int_contents", [1, 2, 3]), INVALID, "'x'",
                           "fp32_contents", "int_contents")
        self.assert_status(typed("vec", [0], "int64_contents", [7]), INVALID, "fp32_contents")
        self.assert_status(typed("ints", [2], "fp32_contents", [1.0, 2.0], datatype="INT32"),
                           INVALID, "int_contents")

    def test_two_fields_set(self):
        req = typed("vec", [3], "fp32_contents", [1.0, 2.0, 3.0])
        req.inputs[0].contents.int64_contents.extend([1, 2, 3])
        self.assert_status(req, INVALID, "'x'", "fp32_contents", "int64_contents")
        req = typed("vec", [1], "fp32_contents", [1.0])
        req.inputs[0].contents.bytes_contents.append(b"abc")
        self.assert_status(req, INVALID, "bytes_contents")

    def test_out_of_range_and_malformed_varints(self):
        self.assert_status(typed("ints", [2], "int64_contents", [1, 2], datatype="INT32"), INVALID,
                           "int_contents")
        # A varint of 11 bytes in int_contents (protobuf never writes one): hand-encoded.
        contents = b"\x12\x0b" + b"\xff" * 10 + b"\x01"           # int_contents, packed
        tensor = b"\x0a\x01x" + b"\x12\x05INT32" + b"\x1a\x01\x01" + \
            b"\x2a" + bytes([len(contents)]) + contents          # name, datatype, shape [1]
        raw = b"\x0a\x04ints" + b"\x2a" + bytes([len(tensor)]) + tensor
        call = self.d.channel.unary_unary("/inference.GRPCInferenceService/ModelInfer")
        code, details = status_of(call, raw, timeout=10)
        self.assertEqual(code, INVALID, details)
        self.assertIn("'x'", details)
        self.assert_serving()


class ResponseLimit(Common):
    """The response is sized, and refused over the send limit, before it is allocated."""

    braidd_args = ("--max-message-bytes", str(MIB))

    def test_planned_outputs_over_the_limit(self):
        # y and z are 2 x 600 KB: the plan tells before the run
        x = np.ones(150000, np.float32)
        details = self.assert_status(infer_request("vec", {"x": x}), INVALID, "max_message_bytes",
                                     "at least", str(MIB))
        self.assertIn(str(2 * x.nbytes), details)
        # one of them fits
        resp = self.stub.ModelInfer(infer_request("vec", {"x": x}, outputs=["y"]), timeout=30)
        self.assertEqual(len(resp.raw_output_contents[0]), x.nbytes)

    def test_encoded_response_over_the_limit(self):
        # tensor bytes exactly 8 under the limit: only the encoded size (headers) exceeds it
        n = (MIB - 8) // 8
        x = np.ones(n, np.float32)
        details = self.assert_status(infer_request("vec", {"x": x}), INVALID, "max_message_bytes")
        self.assertNotIn("at least", details)

    def test_encoded_response_just_under_the_limit(self):
        # ~64 bytes of headers left: under the limit once sized exactly (braidd first tries a
        # cheap bound, which is over here), so it is answered
        x = np.ones((MIB - 64) // 4, np.float32)
        resp = self.stub.ModelInfer(infer_request("vec", {"x": x}, outputs=["y"]), timeout=30)
        self.assertEqual(len(resp.raw_output_contents[0]), x.nbytes)
        self.assertLessEqual(resp.ByteSize(), MIB)

    def assert_serving(self):
        super().assert_serving()
        st = self.stub.ModelStatistics(pb.ModelStatisticsRequest(name="vec"), timeout=10)
        self.assertTrue(st.model_stats)


class ReplyGuard(Common):
    """Every RPC's reply is sized before it is allocated: over the send limit it is refused
    (RESOURCE_EXHAUSTED, as gRPC itself would) instead of built. RepositoryIndex lists one
    entry per model directory, so empty directories make its reply as large as wanted."""

    braidd_args = ("--max-message-bytes", "4096")
    wait_for_ready = False
    n_dirs = 300                    # ~80 KB: the path that sizes the reply first
    reply_range = (16384, 1 << 20)

    @classmethod
    def prepare_repository(cls, repo):
        super().prepare_repository(repo)
        for i in range(cls.n_dirs):
            os.makedirs(os.path.join(repo, "empty_model_directory_%04d" % i, "1"))

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.d.wait_model("vec")

    def test_oversized_reply_refused(self):
        details = self.assert_status(pb.RepositoryIndexRequest(), grpc.StatusCode.RESOURCE_EXHAUSTED,
                                     "max_message_bytes", "4096", rpc=self.stub.RepositoryIndex)
        size = int(re.search(r"the response is (\d+) bytes", details).group(1))
        self.assertTrue(self.reply_range[0] < size < self.reply_range[1], size)


class ReplyGuardSmall(ReplyGuard):
    n_dirs = 20                     # ~5 KB: over the limit, under the 16 KiB first try
    reply_range = (4096, 16384)


if __name__ == "__main__":
    run_tests()
