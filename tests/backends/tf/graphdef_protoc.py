#!/usr/bin/python3
"""Cross-check the fallback GraphDef with Google's protobuf implementation (protoc), not only
with nanopb: run test_tf_unit with BRAID_TF_DUMP so it writes the fixture's GraphDef, decode
it with `protoc --decode=tensorflow.GraphDef` against proto/tf_graph.proto (whose
field numbers are TensorFlow's), and check the text.

usage: graphdef_protoc.py TEST_TF_UNIT PROTO_DIR"""
import os
import re
import subprocess
import sys
import tempfile


def main():
    exe, proto_dir = sys.argv[1], sys.argv[2]
    with tempfile.TemporaryDirectory() as tmp:
        dump = os.path.join(tmp, "fallback.pb")
        env = dict(os.environ, BRAID_TF_DUMP=dump)
        subprocess.run([exe], env=env, check=True, stdout=subprocess.DEVNULL)
        with open(dump, "rb") as f:
            text = subprocess.run(
                ["protoc", "-I", proto_dir, "--decode=tensorflow.GraphDef", "tf_graph.proto"],
                stdin=f, check=True, capture_output=True, text=True).stdout
    print(text)
    nodes = re.findall(r'^node \{\n(.*?)^\}', text, re.S | re.M)
    assert len(nodes) == 6, f"expected 6 nodes, got {len(nodes)}"
    by_name = {re.search(r'^  name: "([^"]*)"', n, re.M).group(1): n for n in nodes}
    assert set(by_name) == {"braid_feed/x", "braid_feed/mid", "braid_const/c", "neg", "add", "idn"}, by_name.keys()
    assert 'op: "Placeholder"' in by_name["braid_feed/x"]
    assert by_name["braid_feed/x"].count("size: -1") == 2
    c = by_name["braid_const/c"]
    assert 'op: "Const"' in c and "dtype: DT_FLOAT" in c
    # 10, 20, 30 as little-endian float32
    assert 'tensor_content: "\\000\\000 A\\000\\000\\240A\\000\\000\\360A"' in c, c
    neg = by_name["neg"]
    assert 'input: "braid_feed/x"' in neg and "device" not in neg and "_class" not in neg
    assert 'key: "T"' in neg
    add = by_name["add"]
    assert re.findall(r'input: "([^"]*)"', add) == ["neg", "braid_const/c", "^neg"], add
    assert re.search(r'versions \{\n  producer: 1205', text)
    print("protoc decodes the fallback GraphDef as expected")


if __name__ == "__main__":
    main()
