#!/usr/bin/python3
"""braid's .proto files against the public definitions they must match number for number.

PUBLIC below is transcribed by hand from the public sources (not generated from braid's
files), so a drifted number or type in proto/*.proto fails here:
  T  triton-inference-server/common protobuf/grpc_service.proto (2023, commit 501aa75)
  C  triton-inference-server/common protobuf/model_config.proto (2023, commit d5ff696)
  K  kserve/open-inference-protocol specification/protocol/open_inference_grpc.proto
  H  grpc/grpc src/proto/grpc/health/v1/health.proto
Every field braid declares must appear in PUBLIC with the same number, type and oneof; a
message marked FULL must declare every public field too. Each field is also encoded with
the real protobuf runtime and its tag read back off the wire."""
import unittest

from google.protobuf import descriptor as d

import health_pb2
import inference_pb2

# message -> (FULL or SUBSET, {field: (number, type[, oneof])})
#   type: scalar name, "repeated X", "map<K,V>", message/enum full name ("enum:" prefix)
FULL, SUBSET = "full", "subset"
SD = "inference.StatisticDuration"
IP = "inference.InferParameter"
PUBLIC = {
    # ---- T / K: health and metadata
    "inference.ServerLiveRequest": (FULL, {}),
    "inference.ServerLiveResponse": (FULL, {"live": (1, "bool")}),
    "inference.ServerReadyRequest": (FULL, {}),
    "inference.ServerReadyResponse": (FULL, {"ready": (1, "bool")}),
    "inference.ModelReadyRequest": (FULL, {"name": (1, "string"), "version": (2, "string")}),
    "inference.ModelReadyResponse": (FULL, {"ready": (1, "bool")}),
    "inference.ServerMetadataRequest": (FULL, {}),
    "inference.ServerMetadataResponse": (FULL, {
        "name": (1, "string"), "version": (2, "string"), "extensions": (3, "repeated string")}),
    "inference.ModelMetadataRequest": (FULL, {"name": (1, "string"), "version": (2, "string")}),
    "inference.ModelMetadataResponse": (FULL, {
        "name": (1, "string"), "versions": (2, "repeated string"), "platform": (3, "string"),
        "inputs": (4, "repeated inference.ModelMetadataResponse.TensorMetadata"),
        "outputs": (5, "repeated inference.ModelMetadataResponse.TensorMetadata")}),
    "inference.ModelMetadataResponse.TensorMetadata": (FULL, {
        "name": (1, "string"), "datatype": (2, "string"), "shape": (3, "repeated int64")}),
    # ---- K (double/uint64 params), T: inference
    "inference.InferParameter": (FULL, {
        "bool_param": (1, "bool", "parameter_choice"),
        "int64_param": (2, "int64", "parameter_choice"),
        "string_param": (3, "string", "parameter_choice"),
        "double_param": (4, "double", "parameter_choice"),
        "uint64_param": (5, "uint64", "parameter_choice")}),
    "inference.InferTensorContents": (FULL, {
        "bool_contents": (1, "repeated bool"), "int_contents": (2, "repeated int32"),
        "int64_contents": (3, "repeated int64"), "uint_contents": (4, "repeated uint32"),
        "uint64_contents": (5, "repeated uint64"), "fp32_contents": (6, "repeated float"),
        "fp64_contents": (7, "repeated double"), "bytes_contents": (8, "repeated bytes")}),
    "inference.ModelInferRequest": (FULL, {
        "model_name": (1, "string"), "model_version": (2, "string"), "id": (3, "string"),
        "parameters": (4, "map<string,%s>" % IP),
        "inputs": (5, "repeated inference.ModelInferRequest.InferInputTensor"),
        "outputs": (6, "repeated inference.ModelInferRequest.InferRequestedOutputTensor"),
        "raw_input_contents": (7, "repeated bytes")}),
    "inference.ModelInferRequest.InferInputTensor": (FULL, {
        "name": (1, "string"), "datatype": (2, "string"), "shape": (3, "repeated int64"),
        "parameters": (4, "map<string,%s>" % IP),
        "contents": (5, "inference.InferTensorContents")}),
    "inference.ModelInferRequest.InferRequestedOutputTensor": (FULL, {
        "name": (1, "string"), "parameters": (2, "map<string,%s>" % IP)}),
    "inference.ModelInferResponse": (FULL, {
        "model_name": (1, "string"), "model_version": (2, "string"), "id": (3, "string"),
        "parameters": (4, "map<string,%s>" % IP),
        "outputs": (5, "repeated inference.ModelInferResponse.InferOutputTensor"),
        "raw_output_contents": (6, "repeated bytes")}),
    "inference.ModelInferResponse.InferOutputTensor": (FULL, {
        "name": (1, "string"), "datatype": (2, "string"), "shape": (3, "repeated int64"),
        "parameters": (4, "map<string,%s>" % IP),
        "contents": (5, "inference.InferTensorContents")}),
    "inference.ModelStreamInferResponse": (FULL, {
        "error_message": (1, "string"), "infer_response": (2, "inference.ModelInferResponse")}),
    # ---- T: configuration
    "inference.ModelConfigRequest": (FULL, {"name": (1, "string"), "version": (2, "string")}),
    "inference.ModelConfigResponse": (FULL, {"config": (1, "inference.ModelConfig")}),
    # ---- T: statistics
    "inference.ModelStatisticsRequest": (FULL, {"name": (1, "string"), "version": (2, "string")}),
    "inference.StatisticDuration": (FULL, {"count": (1, "uint64"), "ns": (2, "uint64")}),
    "inference.InferStatistics": (FULL, {
        "success": (1, SD), "fail": (2, SD), "queue": (3, SD), "compute_input": (4, SD),
        "compute_infer": (5, SD), "compute_output": (6, SD), "cache_hit": (7, SD),
        "cache_miss": (8, SD)}),
    "inference.InferBatchStatistics": (FULL, {
        "batch_size": (1, "uint64"), "compute_input": (2, SD), "compute_infer": (3, SD),
        "compute_output": (4, SD)}),
    "inference.MemoryUsage": (FULL, {
        "type": (1, "string"), "id": (2, "int64"), "byte_size": (3, "uint64")}),
    "inference.ModelStatistics": (FULL, {
        "name": (1, "string"), "version": (2, "string"), "last_inference": (3, "uint64"),
        "inference_count": (4, "uint64"), "execution_count": (5, "uint64"),
        "inference_stats": (6, "inference.InferStatistics"),
        "batch_stats": (7, "repeated inference.InferBatchStatistics"),
        "memory_usage": (8, "repeated inference.MemoryUsage")}),
    "inference.ModelStatisticsResponse": (FULL, {
        "model_stats": (1, "repeated inference.ModelStatistics")}),
    # ---- T: model repository
    "inference.ModelRepositoryParameter": (FULL, {
        "bool_param": (1, "bool", "parameter_choice"),
        "int64_param": (2, "int64", "parameter_choice"),
        "string_param": (3, "string", "parameter_choice"),
        "bytes_param": (4, "bytes", "parameter_choice")}),
    "inference.RepositoryIndexRequest": (FULL, {
        "repository_name": (1, "string"), "ready": (2, "bool")}),
    "inference.RepositoryIndexResponse": (FULL, {
        "models": (1, "repeated inference.RepositoryIndexResponse.ModelIndex")}),
    "inference.RepositoryIndexResponse.ModelIndex": (FULL, {
        "name": (1, "string"), "version": (2, "string"), "state": (3, "string"),
        "reason": (4, "string")}),
    "inference.RepositoryModelLoadRequest": (FULL, {
        "repository_name": (1, "string"), "model_name": (2, "string"),
        "parameters": (3, "map<string,inference.ModelRepositoryParameter>")}),
    "inference.RepositoryModelLoadResponse": (FULL, {}),
    "inference.RepositoryModelUnloadRequest": (FULL, {
        "repository_name": (1, "string"), "model_name": (2, "string"),
        "parameters": (3, "map<string,inference.ModelRepositoryParameter>")}),
    "inference.RepositoryModelUnloadResponse": (FULL, {}),
    # ---- T: system shared memory
    "inference.SystemSharedMemoryStatusRequest": (FULL, {"name": (1, "string")}),
    "inference.SystemSharedMemoryStatusResponse": (FULL, {
        "regions": (1, "map<string,inference.SystemSharedMemoryStatusResponse.RegionStatus>")}),
    "inference.SystemSharedMemoryStatusResponse.RegionStatus": (FULL, {
        "name": (1, "string"), "key": (2, "string"), "offset": (3, "uint64"),
        "byte_size": (4, "uint64")}),
    "inference.SystemSharedMemoryRegisterRequest": (FULL, {
        "name": (1, "string"), "key": (2, "string"), "offset": (3, "uint64"),
        "byte_size": (4, "uint64")}),
    "inference.SystemSharedMemoryRegisterResponse": (FULL, {}),
    "inference.SystemSharedMemoryUnregisterRequest": (FULL, {"name": (1, "string")}),
    "inference.SystemSharedMemoryUnregisterResponse": (FULL, {}),
    # ---- C: model_config.proto (braid serves a subset of ModelConfig)
    "inference.ModelTensorReshape": (FULL, {"shape": (1, "repeated int64")}),
    "inference.ModelInput": (FULL, {
        "name": (1, "string"), "data_type": (2, "enum:inference.DataType"),
        "format": (3, "enum:inference.ModelInput.Format"), "dims": (4, "repeated int64"),
        "reshape": (5, "inference.ModelTensorReshape"), "is_shape_tensor": (6, "bool"),
        "allow_ragged_batch": (7, "bool"), "optional": (8, "bool")}),
    "inference.ModelOutput": (FULL, {
        "name": (1, "string"), "data_type": (2, "enum:inference.DataType"),
        "dims": (3, "repeated int64"), "label_filename": (4, "string"),
        "reshape": (5, "inference.ModelTensorReshape"), "is_shape_tensor": (6, "bool")}),
    "inference.ModelVersionPolicy": (FULL, {
        "latest": (1, "inference.ModelVersionPolicy.Latest", "policy_choice"),
        "all": (2, "inference.ModelVersionPolicy.All", "policy_choice"),
        "specific": (3, "inference.ModelVersionPolicy.Specific", "policy_choice")}),
    "inference.ModelVersionPolicy.Latest": (FULL, {"num_versions": (1, "uint32")}),
    "inference.ModelVersionPolicy.All": (FULL, {}),
    "inference.ModelVersionPolicy.Specific": (FULL, {"versions": (1, "repeated int64")}),
    "inference.ModelInstanceGroup": (SUBSET, {
        "name": (1, "string"), "kind": (4, "enum:inference.ModelInstanceGroup.Kind"),
        "count": (2, "int32"), "rate_limiter": (6, "inference.ModelRateLimiter"),
        "gpus": (3, "repeated int32"),
        "secondary_devices": (8, "repeated inference.ModelInstanceGroup.SecondaryDevice"),
        "profile": (5, "repeated string"), "passive": (7, "bool"), "host_policy": (9, "string")}),
    "inference.ModelQueuePolicy": (FULL, {
        "timeout_action": (1, "enum:inference.ModelQueuePolicy.TimeoutAction"),
        "default_timeout_microseconds": (2, "uint64"), "allow_timeout_override": (3, "bool"),
        "max_queue_size": (4, "uint32")}),
    "inference.ModelDynamicBatching": (SUBSET, {
        "preferred_batch_size": (1, "repeated int32"),
        "max_queue_delay_microseconds": (2, "uint64"), "preserve_ordering": (3, "bool"),
        "priority_levels": (4, "uint64"), "default_priority_level": (5, "uint64"),
        "default_queue_policy": (6, "inference.ModelQueuePolicy"),
        "priority_queue_policy": (7, "map<uint64,inference.ModelQueuePolicy>")}),
    "inference.ModelParameter": (FULL, {"string_value": (1, "string")}),
    "inference.ModelConfig": (SUBSET, {
        "name": (1, "string"), "platform": (2, "string"), "backend": (17, "string"),
        "version_policy": (3, "inference.ModelVersionPolicy"), "max_batch_size": (4, "int32"),
        "input": (5, "repeated inference.ModelInput"),
        "output": (6, "repeated inference.ModelOutput"),
        "batch_input": (20, "repeated inference.BatchInput"),
        "batch_output": (21, "repeated inference.BatchOutput"),
        "optimization": (12, "inference.ModelOptimizationPolicy"),
        "dynamic_batching": (11, "inference.ModelDynamicBatching", "scheduling_choice"),
        "sequence_batching": (13, "inference.ModelSequenceBatching", "scheduling_choice"),
        "ensemble_scheduling": (15, "inference.ModelEnsembling", "scheduling_choice"),
        "instance_group": (7, "repeated inference.ModelInstanceGroup"),
        "default_model_filename": (8, "string"),
        "cc_model_filenames": (9, "map<string,string>"),
        "metric_tags": (10, "map<string,string>"),
        "parameters": (14, "map<string,inference.ModelParameter>"),
        "model_warmup": (16, "repeated inference.ModelWarmup"),
        "model_operations": (18, "inference.ModelOperations"),
        "model_transaction_policy": (19, "inference.ModelTransactionPolicy"),
        "model_repository_agents": (23, "inference.ModelRepositoryAgents"),
        "response_cache": (24, "inference.ModelResponseCache")}),
    # ---- H
    "grpc.health.v1.HealthCheckRequest": (FULL, {"service": (1, "string")}),
    "grpc.health.v1.HealthCheckResponse": (FULL, {
        "status": (1, "enum:grpc.health.v1.HealthCheckResponse.ServingStatus")}),
}

PUBLIC_ENUMS = {
    "inference.DataType": {
        "TYPE_INVALID": 0, "TYPE_BOOL": 1, "TYPE_UINT8": 2, "TYPE_UINT16": 3, "TYPE_UINT32": 4,
        "TYPE_UINT64": 5, "TYPE_INT8": 6, "TYPE_INT16": 7, "TYPE_INT32": 8, "TYPE_INT64": 9,
        "TYPE_FP16": 10, "TYPE_FP32": 11, "TYPE_FP64": 12, "TYPE_STRING": 13, "TYPE_BF16": 14},
    "inference.ModelInput.Format": {"FORMAT_NONE": 0, "FORMAT_NHWC": 1, "FORMAT_NCHW": 2},
    "inference.ModelInstanceGroup.Kind": {
        "KIND_AUTO": 0, "KIND_GPU": 1, "KIND_CPU": 2, "KIND_MODEL": 3},
    "inference.ModelQueuePolicy.TimeoutAction": {"REJECT": 0, "DELAY": 1},
    "grpc.health.v1.HealthCheckResponse.ServingStatus": {
        "UNKNOWN": 0, "SERVING": 1, "NOT_SERVING": 2, "SERVICE_UNKNOWN": 3},
}

# service -> {rpc: (request, response, client streams, server streams)}
PUBLIC_SERVICES = {
    "inference.GRPCInferenceService": {
        "ServerLive": ("ServerLiveRequest", "ServerLiveResponse", False, False),
        "ServerReady": ("ServerReadyRequest", "ServerReadyResponse", False, False),
        "ModelReady": ("ModelReadyRequest", "ModelReadyResponse", False, False),
        "ServerMetadata": ("ServerMetadataRequest", "ServerMetadataResponse", False, False),
        "ModelMetadata": ("ModelMetadataRequest", "ModelMetadataResponse", False, False),
        "ModelInfer": ("ModelInferRequest", "ModelInferResponse", False, False),
        "ModelStreamInfer": ("ModelInferRequest", "ModelStreamInferResponse", True, True),
        "ModelConfig": ("ModelConfigRequest", "ModelConfigResponse", False, False),
        "ModelStatistics": ("ModelStatisticsRequest", "ModelStatisticsResponse", False, False),
        "RepositoryIndex": ("RepositoryIndexRequest", "RepositoryIndexResponse", False, False),
        "RepositoryModelLoad": ("RepositoryModelLoadRequest", "RepositoryModelLoadResponse",
                                False, False),
        "RepositoryModelUnload": ("RepositoryModelUnloadRequest",
                                  "RepositoryModelUnloadResponse", False, False),
        "SystemSharedMemoryStatus": ("SystemSharedMemoryStatusRequest",
                                     "SystemSharedMemoryStatusResponse", False, False),
        "SystemSharedMemoryRegister": ("SystemSharedMemoryRegisterRequest",
                                       "SystemSharedMemoryRegisterResponse", False, False),
        "SystemSharedMemoryUnregister": ("SystemSharedMemoryUnregisterRequest",
                                         "SystemSharedMemoryUnregisterResponse", False, False),
    },
    "grpc.health.v1.Health": {
        "Check": ("HealthCheckRequest", "HealthCheckResponse", False, False),
        "Watch": ("HealthCheckRequest", "HealthCheckResponse", False, True),
    },
}

SCALARS = {
    d.FieldDescriptor.TYPE_BOOL: "bool", d.FieldDescriptor.TYPE_INT32: "int32",
    d.FieldDescriptor.TYPE_INT64: "int64", d.FieldDescriptor.TYPE_UINT32: "uint32",
    d.FieldDescriptor.TYPE_UINT64: "uint64", d.FieldDescriptor.TYPE_FLOAT: "float",
    d.FieldDescriptor.TYPE_DOUBLE: "double", d.FieldDescriptor.TYPE_STRING: "string",
    d.FieldDescriptor.TYPE_BYTES: "bytes",
}
WIRE_VARINT, WIRE_64, WIRE_LEN, WIRE_32 = 0, 1, 2, 5


def type_of(f):
    """The field's type in PUBLIC's notation, read from the compiled descriptor."""
    if f.type == d.FieldDescriptor.TYPE_MESSAGE and f.message_type.GetOptions().map_entry:
        k, v = f.message_type.fields_by_name["key"], f.message_type.fields_by_name["value"]
        return "map<%s,%s>" % (type_of(k), type_of(v))
    if f.type == d.FieldDescriptor.TYPE_MESSAGE:
        t = f.message_type.full_name
    elif f.type == d.FieldDescriptor.TYPE_ENUM:
        t = "enum:" + f.enum_type.full_name
    else:
        t = SCALARS[f.type]
    return "repeated " + t if f.label == d.FieldDescriptor.LABEL_REPEATED else t


def all_messages():
    out = {}

    def walk(m):
        if m.GetOptions().map_entry:
            return
        out[m.full_name] = m
        for n in m.nested_types:
            walk(n)
    for fd in (inference_pb2.DESCRIPTOR, health_pb2.DESCRIPTOR):
        for m in fd.message_types_by_name.values():
            walk(m)
    return out


def all_enums():
    out = {}
    for fd in (inference_pb2.DESCRIPTOR, health_pb2.DESCRIPTOR):
        for e in fd.enum_types_by_name.values():
            out[e.full_name] = e
    for m in all_messages().values():
        for e in m.enum_types:
            out[e.full_name] = e
    return out


def message_class(full_name):
    """inference.ModelInferRequest.InferInputTensor -> inference_pb2.ModelInferRequest.InferInputTensor"""
    module = health_pb2 if full_name.startswith("grpc.health.v1.") else inference_pb2
    package = "grpc.health.v1." if module is health_pb2 else "inference."
    obj = module
    for part in full_name[len(package):].split("."):
        obj = getattr(obj, part)
    return obj


def read_varint(buf, i):
    shift = value = 0
    while True:
        b = buf[i]
        value |= (b & 0x7F) << shift
        i += 1
        if b < 0x80:
            return value, i
        shift += 7


def set_one(msg, f):
    """Give field F of MSG a non-default value so it is serialized."""
    if f.type == d.FieldDescriptor.TYPE_MESSAGE and f.message_type.GetOptions().map_entry:
        mapping = getattr(msg, f.name)
        key = "k" if f.message_type.fields_by_name["key"].type == d.FieldDescriptor.TYPE_STRING else 1
        value = f.message_type.fields_by_name["value"]
        if value.type == d.FieldDescriptor.TYPE_MESSAGE:
            mapping[key].SetInParent()
        else:
            mapping[key] = "v"
        return
    sample = {
        d.FieldDescriptor.TYPE_BOOL: True, d.FieldDescriptor.TYPE_INT32: -3,
        d.FieldDescriptor.TYPE_INT64: -3, d.FieldDescriptor.TYPE_UINT32: 3,
        d.FieldDescriptor.TYPE_UINT64: 3, d.FieldDescriptor.TYPE_FLOAT: 1.5,
        d.FieldDescriptor.TYPE_DOUBLE: 1.5, d.FieldDescriptor.TYPE_STRING: "x",
        d.FieldDescriptor.TYPE_BYTES: b"x", d.FieldDescriptor.TYPE_ENUM: 1,
    }
    if f.label == d.FieldDescriptor.LABEL_REPEATED:
        if f.type == d.FieldDescriptor.TYPE_MESSAGE:
            getattr(msg, f.name).add()
        else:
            getattr(msg, f.name).append(sample[f.type])
    elif f.type == d.FieldDescriptor.TYPE_MESSAGE:
        getattr(msg, f.name).SetInParent()
    else:
        setattr(msg, f.name, sample[f.type])


def expected_wire_type(f):
    if f.label == d.FieldDescriptor.LABEL_REPEATED or f.type in (
            d.FieldDescriptor.TYPE_STRING, d.FieldDescriptor.TYPE_BYTES,
            d.FieldDescriptor.TYPE_MESSAGE):
        return WIRE_LEN                      # proto3 packs repeated scalars
    if f.type == d.FieldDescriptor.TYPE_DOUBLE:
        return WIRE_64
    if f.type == d.FieldDescriptor.TYPE_FLOAT:
        return WIRE_32
    return WIRE_VARINT


class PublicNumbers(unittest.TestCase):

    def test_every_declared_field_matches_the_public_definition(self):
        for name, m in all_messages().items():
            with self.subTest(message=name):
                self.assertIn(name, PUBLIC, "%s is not a public message" % name)
                public = PUBLIC[name][1]
                for f in m.fields:
                    self.assertIn(f.name, public, "%s.%s is not a public field" % (name, f.name))
                    want = public[f.name]
                    self.assertEqual(f.number, want[0], "%s.%s number" % (name, f.name))
                    self.assertEqual(type_of(f), want[1], "%s.%s type" % (name, f.name))
                    oneof = f.containing_oneof.name if f.containing_oneof else None
                    self.assertEqual(oneof, want[2] if len(want) > 2 else None,
                                     "%s.%s oneof" % (name, f.name))

    def test_full_messages_declare_every_public_field(self):
        declared = all_messages()
        for name, (kind, public) in PUBLIC.items():
            if kind != FULL:
                continue
            with self.subTest(message=name):
                self.assertIn(name, declared, "public message %s is not declared" % name)
                self.assertEqual(sorted(f.name for f in declared[name].fields), sorted(public))

    def test_public_table_has_unique_numbers(self):
        for name, (kind, public) in PUBLIC.items():
            numbers = [v[0] for v in public.values()]
            self.assertEqual(len(numbers), len(set(numbers)), "%s table repeats a number" % name)

    def test_enum_values_match(self):
        enums = all_enums()
        self.assertEqual(sorted(enums), sorted(PUBLIC_ENUMS))
        for name, values in PUBLIC_ENUMS.items():
            with self.subTest(enum=name):
                self.assertEqual({v.name: v.number for v in enums[name].values}, values)

    def test_services_match(self):
        services = {}
        for fd in (inference_pb2.DESCRIPTOR, health_pb2.DESCRIPTOR):
            services.update({s.full_name: s for s in fd.services_by_name.values()})
        self.assertEqual(sorted(services), sorted(PUBLIC_SERVICES))
        for name, rpcs in PUBLIC_SERVICES.items():
            svc = services[name]
            self.assertEqual(sorted(m.name for m in svc.methods), sorted(rpcs))
            for m in svc.methods:
                req, resp, cs, ss = rpcs[m.name]
                self.assertEqual(m.input_type.name, req, m.full_name)
                self.assertEqual(m.output_type.name, resp, m.full_name)
                self.assertEqual((m.client_streaming, m.server_streaming), (cs, ss), m.full_name)

    def test_method_paths_are_the_public_ones(self):
        import inference_pb2_grpc  # noqa: F401  (needs python3-grpcio)
        import health_pb2_grpc  # noqa: F401
        svc = inference_pb2.DESCRIPTOR.services_by_name["GRPCInferenceService"]
        self.assertEqual("/%s/%s" % (svc.full_name, "ModelInfer"),
                         "/inference.GRPCInferenceService/ModelInfer")
        self.assertEqual(health_pb2.DESCRIPTOR.services_by_name["Health"].full_name,
                         "grpc.health.v1.Health")

    def test_each_field_goes_on_the_wire_with_its_public_number(self):
        for name, m in all_messages().items():
            cls = message_class(name)
            for f in m.fields:
                with self.subTest(field="%s.%s" % (name, f.name)):
                    msg = cls()
                    set_one(msg, f)
                    wire = msg.SerializeToString()
                    tag, _ = read_varint(wire, 0)
                    self.assertEqual(tag >> 3, PUBLIC[name][1][f.name][0])
                    self.assertEqual(tag & 7, expected_wire_type(f))
                    self.assertEqual(cls.FromString(wire), msg)


if __name__ == "__main__":
    unittest.main(verbosity=1)
