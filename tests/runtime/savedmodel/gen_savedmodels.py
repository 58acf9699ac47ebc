#!/usr/bin/env python3
"""Small TensorFlow SavedModels for braid's SavedModel tests, with TensorFlow's own outputs.

    ~/.cache/braid/tf-venv/bin/python gen_savedmodels.py OUT_DIR

writes, for each model NAME below, OUT_DIR/NAME/ (a SavedModel: saved_model.pb + variables/)
and OUT_DIR/NAME.ref/ (in_<key>.npy for each input, out_<key>.npy for each output of the
signature the test serves, computed by TensorFlow on the reloaded SavedModel, and
signature.txt naming that signature). Weights are random with a fixed seed; nothing is
downloaded. OUT_DIR/done marks a complete run.

  dense_conv  Keras (model.export): Conv2D + BatchNorm + ReLU, DepthwiseConv2D, pooling, Dense,
              softmax; TF2 functions with resource variables (serving_default)
  two_io      tf.Module, two inputs and two outputs, MatMul + tanh / concat + reduce
  nondefault  tf.Module with two signatures; the test serves "scores", not serving_default
  embed       Embedding lookup (ResourceGather on a variable) + mean + Dense
  tf1         a TF1 graph (VariableV2, Identity reads) saved with SavedModelBuilder
  novars      a function with no variables (constants only): loads without TensorFlow

and broken copies of two_io for the hostile-input tests (no references):
  bad_missing_tensor  the signature's output "total" names tensor "nope:0"
  bad_unknown_op      an unused node's op is "NoSuchOp" (braid drops it; TensorFlow refuses)
  bad_variables       variables/variables.index is garbage (TensorFlow cannot restore)
  bad_recursive       the signature's function calls itself
  bad_fanout          40 functions, each calling the next twice (2^40 calls once inlined)
"""
import os
import shutil
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

RNG = np.random.default_rng(11)


def rand(*shape, scale=1.0):
    return (RNG.standard_normal(shape) * scale).astype(np.float32)


def write_refs(out, name, signature, inputs):
    path = os.path.join(out, name)
    ref = os.path.join(out, name + ".ref")
    os.makedirs(ref, exist_ok=True)
    loaded = tf.saved_model.load(path)
    fn = loaded.signatures[signature]
    res = fn(**{k: tf.constant(v) for k, v in inputs.items()})
    for k, v in inputs.items():
        np.save(os.path.join(ref, "in_%s.npy" % k), v)
    for k, v in res.items():
        np.save(os.path.join(ref, "out_%s.npy" % k), v.numpy())
    with open(os.path.join(ref, "signature.txt"), "w") as f:
        f.write(signature + "\n")


def dense_conv(out):
    import keras
    keras.utils.set_random_seed(5)
    m = keras.Sequential([
        keras.Input((16, 16, 3), name="image"),
        keras.layers.Conv2D(8, 3, padding="same"),
        keras.layers.BatchNormalization(),
        keras.layers.ReLU(),
        keras.layers.DepthwiseConv2D(3, padding="same", activation="relu6"),
        keras.layers.MaxPooling2D(2),
        keras.layers.Conv2D(16, 1, activation="relu"),
        keras.layers.GlobalAveragePooling2D(),
        keras.layers.Dense(10),
        keras.layers.Softmax(),
    ])
    # random, non-trivial batch-norm statistics
    bn = m.layers[1]
    bn.moving_mean.assign(rand(8, scale=0.1))
    bn.moving_variance.assign(np.abs(rand(8)) + 0.5)
    m.export(os.path.join(out, "dense_conv"), verbose=False)
    write_refs(out, "dense_conv", "serving_default", {"image": rand(2, 16, 16, 3)})


class TwoIO(tf.Module):
    def __init__(self):
        self.w = tf.Variable(rand(6, 5))
        self.b = tf.Variable(rand(5))
        self.v = tf.Variable(rand(3, 5))

    @tf.function(input_signature=[tf.TensorSpec([None, 6], tf.float32, name="a"),
                                  tf.TensorSpec([None, 3], tf.float32, name="b")])
    def serve(self, a, b):
        h = tf.tanh(tf.matmul(a, self.w) + self.b)
        g = tf.matmul(b, self.v)
        return {"hidden": h * g, "total": tf.reduce_sum(tf.concat([h, g], axis=1), axis=1, keepdims=True)}


def two_io(out):
    m = TwoIO()
    tf.saved_model.save(m, os.path.join(out, "two_io"), signatures={"serving_default": m.serve})
    write_refs(out, "two_io", "serving_default", {"a": rand(4, 6), "b": rand(4, 3)})


class TwoSignatures(tf.Module):
    def __init__(self):
        self.w = tf.Variable(rand(4, 3))

    @tf.function(input_signature=[tf.TensorSpec([None, 4], tf.float32, name="x")])
    def default(self, x):
        return {"y": tf.matmul(x, self.w)}

    @tf.function(input_signature=[tf.TensorSpec([None, 4], tf.float32, name="features")])
    def scores(self, features):
        return {"probabilities": tf.nn.softmax(tf.matmul(features, self.w) * 2.0),
                "best": tf.reduce_max(tf.matmul(features, self.w), axis=1)}


def nondefault(out):
    m = TwoSignatures()
    tf.saved_model.save(m, os.path.join(out, "nondefault"),
                        signatures={"serving_default": m.default, "scores": m.scores})
    write_refs(out, "nondefault", "scores", {"features": rand(3, 4)})


class Embed(tf.Module):
    def __init__(self):
        self.table = tf.Variable(rand(50, 8))
        self.w = tf.Variable(rand(8, 2))

    @tf.function(input_signature=[tf.TensorSpec([None, 7], tf.int32, name="ids")])
    def serve(self, ids):
        e = tf.gather(self.table, ids)                  # ResourceGather
        return {"logits": tf.matmul(tf.reduce_mean(e, axis=1), self.w)}


def embed(out):
    m = Embed()
    tf.saved_model.save(m, os.path.join(out, "embed"), signatures={"serving_default": m.serve})
    write_refs(out, "embed", "serving_default", {"ids": RNG.integers(0, 50, (3, 7)).astype(np.int32)})


def tf1(out):
    path = os.path.join(out, "tf1")
    g = tf.Graph()
    with g.as_default():
        tf.compat.v1.disable_resource_variables()
        x = tf.compat.v1.placeholder(tf.float32, [None, 5], name="input")
        w = tf.compat.v1.get_variable("w", initializer=rand(5, 4), use_resource=False)
        b = tf.compat.v1.get_variable("b", initializer=rand(4), use_resource=False)
        y = tf.nn.sigmoid(tf.matmul(x, w) + b, name="output")
        with tf.compat.v1.Session(graph=g) as s:
            s.run(tf.compat.v1.global_variables_initializer())
            builder = tf.compat.v1.saved_model.Builder(path)
            sig = tf.compat.v1.saved_model.predict_signature_def({"x": x}, {"y": y})
            builder.add_meta_graph_and_variables(s, ["serve"], signature_def_map={"serving_default": sig})
            builder.save()
        tf.compat.v1.enable_resource_variables()
    write_refs(out, "tf1", "serving_default", {"x": rand(3, 5)})


class NoVars(tf.Module):
    @tf.function(input_signature=[tf.TensorSpec([None, 3], tf.float32, name="x")])
    def serve(self, x):
        return {"y": tf.nn.relu(x * 2.0 - 1.0),
                "z": tf.matmul(x, tf.constant([[1.0, -2.0], [0.5, 3.0], [-1.0, 0.25]]))}


def novars(out):
    m = NoVars()
    tf.saved_model.save(m, os.path.join(out, "novars"), signatures={"serving_default": m.serve})
    write_refs(out, "novars", "serving_default", {"x": rand(2, 3)})


def hostile(out):
    from tensorflow.core.protobuf import saved_model_pb2
    src = os.path.join(out, "two_io")

    def variant(name, edit):
        dst = os.path.join(out, name)
        shutil.copytree(src, dst)
        sm = saved_model_pb2.SavedModel()
        with open(os.path.join(dst, "saved_model.pb"), "rb") as f:
            sm.ParseFromString(f.read())
        edit(sm.meta_graphs[0])
        with open(os.path.join(dst, "saved_model.pb"), "wb") as f:
            f.write(sm.SerializeToString())
        return dst

    variant("bad_missing_tensor", lambda mg: mg.signature_def["serving_default"].outputs["total"]
            .__setattr__("name", "nope:0"))

    def unknown_op(mg):
        n = next(n for n in mg.graph_def.node if n.name == "saver_filename")
        n.op = "NoSuchOp"
    variant("bad_unknown_op", unknown_op)
    d = variant("bad_variables", lambda mg: None)
    with open(os.path.join(d, "variables", "variables.index"), "wb") as f:
        f.write(b"\x00garbage, not a tensor bundle index" * 8)

    def recursive(mg):
        wrapper = next(f for f in mg.graph_def.library.function
                       if f.signature.name.startswith("__inference_signature_wrapper"))
        call = next(n for n in wrapper.node_def if n.op == "StatefulPartitionedCall")
        call.attr["f"].func.name = wrapper.signature.name
    variant("bad_recursive", recursive)
    fanout(out)


def fanout(out):
    from tensorflow.core.protobuf import saved_model_pb2
    from tensorflow.core.framework import attr_value_pb2, types_pb2
    from tensorflow.python.framework import op_def_registry
    depth = 40
    sm = saved_model_pb2.SavedModel()
    sm.saved_model_schema_version = 1
    mg = sm.meta_graphs.add()
    mg.meta_info_def.tags.append("serve")
    for op in ("Placeholder", "PartitionedCall", "AddV2", "Identity"):
        mg.meta_info_def.stripped_op_list.op.add().CopyFrom(op_def_registry.get(op))
    flt = attr_value_pb2.AttrValue(type=types_pb2.DT_FLOAT)
    for k in range(depth + 1):
        f = mg.graph_def.library.function.add()
        f.signature.name = "f%d" % k
        f.signature.input_arg.add(name="x", type=types_pb2.DT_FLOAT)
        f.signature.output_arg.add(name="y", type=types_pb2.DT_FLOAT)
        if k == depth:
            n = f.node_def.add(name="id", op="Identity", input=["x"])
            n.attr["T"].CopyFrom(flt)
            f.ret["y"] = "id:output:0"
            continue
        for name in ("a", "b"):
            n = f.node_def.add(name=name, op="PartitionedCall", input=["x"])
            n.attr["f"].func.name = "f%d" % (k + 1)
            n.attr["Tin"].list.type.append(types_pb2.DT_FLOAT)
            n.attr["Tout"].list.type.append(types_pb2.DT_FLOAT)
        n = f.node_def.add(name="s", op="AddV2", input=["a:output:0", "b:output:0"])
        n.attr["T"].CopyFrom(flt)
        f.ret["y"] = "s:z:0"
    x = mg.graph_def.node.add(name="x", op="Placeholder")
    x.attr["dtype"].CopyFrom(flt)
    c = mg.graph_def.node.add(name="call", op="PartitionedCall", input=["x"])
    c.attr["f"].func.name = "f0"
    c.attr["Tin"].list.type.append(types_pb2.DT_FLOAT)
    c.attr["Tout"].list.type.append(types_pb2.DT_FLOAT)
    sig = mg.signature_def["serving_default"]
    sig.inputs["x"].name = "x:0"
    sig.inputs["x"].dtype = types_pb2.DT_FLOAT
    sig.outputs["y"].name = "call:0"
    sig.outputs["y"].dtype = types_pb2.DT_FLOAT
    d = os.path.join(out, "bad_fanout")
    os.makedirs(d)
    with open(os.path.join(d, "saved_model.pb"), "wb") as f:
        f.write(sm.SerializeToString())


MODELS = [dense_conv, two_io, nondefault, embed, tf1, novars, hostile]


def main():
    out = sys.argv[1]
    if os.path.exists(os.path.join(out, "done")):
        return
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(out)
    for make in MODELS:
        make(out)
    open(os.path.join(out, "done"), "w").close()


if __name__ == "__main__":
    main()
