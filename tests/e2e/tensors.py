"""numpy <-> Open Inference Protocol tensors for the end-to-end tests."""

import numpy as np

from braidd_fixture import pb

DTYPES = {
    "BOOL": np.bool_, "UINT8": np.uint8, "UINT16": np.uint16, "UINT32": np.uint32,
    "UINT64": np.uint64, "INT8": np.int8, "INT16": np.int16, "INT32": np.int32,
    "INT64": np.int64, "FP16": np.float16, "FP32": np.float32, "FP64": np.float64,
}
NAME_OF = {np.dtype(v): k for k, v in DTYPES.items()}

# typed 'contents' field per datatype
CONTENTS_FIELD = {
    "BOOL": "bool_contents", "INT8": "int_contents", "INT16": "int_contents",
    "INT32": "int_contents", "INT64": "int64_contents", "UINT8": "uint_contents",
    "UINT16": "uint_contents", "UINT32": "uint_contents", "UINT64": "uint64_contents",
    "FP32": "fp32_contents", "FP64": "fp64_contents",
}


def infer_request(model, inputs, raw=True, outputs=None, version="", request_id=""):
    """A ModelInferRequest for INPUTS ({name: ndarray}, in order); RAW: raw_input_contents,
    else typed contents. OUTPUTS: requested output names (None: all)."""
    req = pb.ModelInferRequest(model_name=model, model_version=version, id=request_id)
    for name, arr in inputs.items():
        arr = np.ascontiguousarray(arr)
        dt = NAME_OF[arr.dtype]
        t = req.inputs.add(name=name, datatype=dt, shape=list(arr.shape))
        if raw:
            req.raw_input_contents.append(arr.tobytes())
        else:
            getattr(t.contents, CONTENTS_FIELD[dt]).extend(arr.ravel().tolist())
    for name in outputs or ():
        req.outputs.add(name=name)
    return req


def response_outputs(resp):
    """{name: ndarray} of a ModelInferResponse (raw_output_contents, or typed contents)."""
    out = {}
    for i, t in enumerate(resp.outputs):
        dt = np.dtype(DTYPES[t.datatype])
        if i < len(resp.raw_output_contents):
            arr = np.frombuffer(resp.raw_output_contents[i], dtype=dt)
        else:
            arr = np.array(getattr(t.contents, CONTENTS_FIELD[t.datatype]), dtype=dt)
        out[t.name] = arr.reshape(list(t.shape))
    return out


def bytes_elements(raw):
    """The strings of a raw BYTES tensor: each a 4-byte little-endian length, then the bytes."""
    out, at = [], 0
    while at < len(raw):
        n = int.from_bytes(raw[at:at + 4], "little")
        out.append(raw[at + 4:at + 4 + n])
        at += 4 + n
    return out
