"""Byte patterns shared by the Python helpers and test_proto_wire.c (keep them in step)."""
import numpy as np

MIB = 1 << 20


def pattern(n, mul, add):
    """byte i = (i * mul + add) mod 256 -- the C side computes the same."""
    return ((np.arange(n, dtype=np.uint64) * mul + add) & 0xFF).astype(np.uint8).tobytes()


# request inputs (Python -> C)
INPUT_A = ("a", "FP32", [1, MIB // 4], 31, 7)
INPUT_B = ("b", "UINT8", [MIB], 131, 11)
# RepositoryModelLoad upload (file:1/model.onnx), above nanopb's 64 KiB bytes-field limit
LOAD_FILE_BYTES = 200000
# response outputs (C -> Python)
OUTPUT_Y0 = ("y0", "FP32", [1, MIB // 4], 13, 5)
OUTPUT_Y1 = ("y1", "INT32", [2, MIB // 8], 101, 3)
