#!/usr/bin/env python3
"""Keras models made by TensorFlow itself, with random weights, for braid's tests and bench/tf.

    ~/.cache/braid/tf-venv/bin/python tests/runtime/keras/gen_keras.py [--out DIR] [--only M ...]
    gen_keras.py --list

Nothing is downloaded: every model is built with `weights=None` and seeded initializers, and
every BatchNormalization gets seeded random statistics (Keras' initial ones, mean 0 / var 1 /
gamma 1 / beta 0, would make it an identity and test nothing). Per model, in DIR/<model>/:

  model.pb        frozen GraphDef: the model wrapped in a tf.function with an explicit
                  TensorSpec (batch 1, static shapes), variables folded in by
                  convert_variables_to_constants_v2 (control flow lowered to v1 ops), written
                  as the usual recipe writes it: as_graph_def(), no shapes recorded
  model_shapes.pb the same graph with every node's `_output_shapes` attr
                  (as_graph_def(add_shapes=True)), which an importer may use instead of
                  inferring shapes itself
  savedmodel/     tf.saved_model.save of a tf.Module; signature "serving_default" takes the
                  inputs by the names in meta.json ("input", or "ids") and returns a dict
                  keyed by the output names ("output", or boxes/scores/...)
  input_<name>.npy  the seeded input, one per input
  ref_<name>.npy    TensorFlow's output on it, one per output (the frozen function's result)
  meta.json       generator version, inputs and outputs: signature name, GraphDef tensor
                  ("input:0", "Identity:0"), dtype, shape, file; GFLOP of one inference
                  (TensorFlow's profiler on the frozen graph, -1 if it cannot tell); the
                  GraphDef's node count and op types; seconds it took

DIR defaults to $BRAID_KERAS_DIR, else ~/.cache/braid/keras. A model whose meta.json carries
this generator's VERSION is skipped, so reruns are instant; each model is written to a
temporary directory and renamed into place, so an interrupted run leaves nothing half made.
Prints one line per model and the total time.
"""
import argparse
import json
import os
import shutil
import sys
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

# Bump when a model, its weights, its inputs or the file layout change: the cache is rebuilt.
VERSION = 2
SEED = 20261125


def default_dir():
    return os.environ.get("BRAID_KERAS_DIR") or os.path.join(os.path.expanduser("~"), ".cache", "braid", "keras")


# --- models -------------------------------------------------------------------------------
# Each builder returns (module, fn, specs): a tf.Module holding the Keras objects, the
# tf.function computing a dict of named outputs, and its input TensorSpecs (batch 1).

def randomize_batchnorm(model, rng):
    import numpy as np
    for layer in model.layers if hasattr(model, "layers") else []:
        if hasattr(layer, "layers"):
            randomize_batchnorm(layer, rng)
        if type(layer).__name__ != "BatchNormalization":
            continue
        new = []
        for w in layer.weights:
            n, shape = w.path.split("/")[-1], tuple(w.shape)
            if "gamma" in n:
                v = rng.uniform(0.5, 1.5, shape)
            elif "beta" in n:
                v = rng.normal(0.0, 0.1, shape)
            elif "moving_mean" in n:
                v = rng.normal(0.0, 0.1, shape)
            elif "moving_variance" in n:
                v = rng.uniform(0.5, 1.5, shape)
            else:
                raise SystemExit("gen_keras: unexpected BatchNormalization weight %s" % w.path)
            new.append(v.astype(np.float32))
        layer.set_weights(new)


def image_classifier(app):
    def build(rng):
        import keras
        import tensorflow as tf
        model = app(weights=None, input_shape=(224, 224, 3), classes=1000, classifier_activation=None)
        randomize_batchnorm(model, rng)
        mod = tf.Module()
        mod.model = model
        spec = [tf.TensorSpec([1, 224, 224, 3], tf.float32, name="input")]

        @tf.function(input_signature=spec)
        def serve(input):  # noqa: A002 (the signature's input name)
            return {"output": mod.model(input, training=False)}
        return mod, serve, spec
    return build


def transformer_encoder(rng):
    """One post-norm encoder block: MultiHeadAttention, residual, LayerNormalization, a GELU
    (erf) feed-forward, residual, LayerNormalization. Input: embeddings [1, 64, 128]."""
    import keras
    import tensorflow as tf
    seq, d, heads, ff = 64, 128, 4, 512
    x = keras.Input((seq, d), batch_size=1)
    a = keras.layers.MultiHeadAttention(num_heads=heads, key_dim=d // heads)(x, x)
    h = keras.layers.LayerNormalization(epsilon=1e-6)(x + a)
    f = keras.layers.Dense(ff, activation="gelu")(h)
    f = keras.layers.Dense(d)(f)
    y = keras.layers.LayerNormalization(epsilon=1e-6)(h + f)
    mod = tf.Module()
    mod.model = keras.Model(x, y)
    spec = [tf.TensorSpec([1, seq, d], tf.float32, name="input")]

    @tf.function(input_signature=spec)
    def serve(input):  # noqa: A002
        return {"output": mod.model(input, training=False)}
    return mod, serve, spec


def text_rnn(cell, unroll):
    """Token ids [1, 32] (int32) -> Embedding(1000, 64) -> GRU/LSTM(64) -> Dense(5) logits.
    unroll=False leaves Keras' tf.while_loop (lowered to Switch/Merge/Enter/... when frozen);
    unroll=True writes the 32 steps out as plain ops."""
    def build(rng):
        import keras
        ids = keras.Input((32,), batch_size=1, dtype="int32")
        e = keras.layers.Embedding(1000, 64)(ids)
        r = cell(64, unroll=unroll)(e)
        return serving_ids(ids, keras.layers.Dense(5)(r))
    return build


def serving_ids(ids, y):
    """(module, serve, spec) for a Keras model from token ids [1, 32] (int32) to Y."""
    import keras
    import tensorflow as tf
    mod = tf.Module()
    mod.model = keras.Model(ids, y)
    spec = [tf.TensorSpec([1, 32], tf.int32, name="ids")]

    @tf.function(input_signature=spec)
    def serve(ids):
        return {"output": mod.model(ids, training=False)}
    return mod, serve, spec


def rnn_variant(layer, sequences, reset_after=True):
    """Token ids [1, 32] -> Embedding(1000, 64) -> LAYER ("GRU" or "LSTM", 48 units) with a
    random (non-zero) bias -> Dense(5): braid computes Keras' loop with one GRU or LSTM when the
    cell is one it knows (tf_rnn_lift.c). sequences=True also returns every step (then
    averaged) and starts from initial states computed from the input; a GRU with
    reset_after=False is a cell braid does not lift, so TensorFlow runs its loop."""
    def build(rng):
        import keras
        ids = keras.Input((32,), batch_size=1, dtype="int32")
        e = keras.layers.Embedding(1000, 64)(ids)
        bias = keras.initializers.RandomNormal(stddev=0.5, seed=7)
        if layer == "GRU":
            rnn = keras.layers.GRU(48, return_sequences=sequences, reset_after=reset_after,
                                   bias_initializer=bias)
        else:
            rnn = keras.layers.LSTM(48, return_sequences=sequences, bias_initializer=bias)
        if sequences:
            mean = keras.layers.GlobalAveragePooling1D()(e)
            states = [keras.layers.Dense(48, activation="tanh")(mean)
                      for _ in range(1 if layer == "GRU" else 2)]
            r = keras.layers.GlobalAveragePooling1D()(rnn(e, initial_state=states))
        else:
            r = rnn(e)
        return serving_ids(ids, keras.layers.Dense(5)(r))
    return build


def detection_head(rng):
    """A small conv backbone, then the post-processing of a detector written with TF ops:
    tf.image.resize (bilinear), strided slices picking box and score channels, a sigmoid,
    tf.where as a select and as "indices of the true elements" (a run-time-sized output),
    tf.gather of the kept boxes and scores. Input: image [1, 64, 64, 3]."""
    import keras
    import tensorflow as tf
    x = keras.Input((64, 64, 3), batch_size=1)
    h = keras.layers.Conv2D(16, 3, strides=2, padding="same", activation="relu")(x)
    h = keras.layers.BatchNormalization()(h)
    h = keras.layers.Conv2D(32, 3, strides=2, padding="same", activation="relu")(h)
    h = keras.layers.Conv2D(8, 1)(h)                                   # [1, 16, 16, 8]
    backbone = keras.Model(x, h)
    randomize_batchnorm(backbone, rng)
    mod = tf.Module()
    mod.backbone = backbone
    spec = [tf.TensorSpec([1, 64, 64, 3], tf.float32, name="input")]

    @tf.function(input_signature=spec)
    def serve(input):  # noqa: A002
        f = mod.backbone(input, training=False)
        f = tf.image.resize(f, [32, 32], method="bilinear")            # ResizeBilinear
        boxes = f[:, ::2, ::2, 0:4]                                    # [1, 16, 16, 4]
        logits = f[:, 1::2, 1::2, 4]                                   # [1, 16, 16]
        scores = tf.sigmoid(logits)
        masked = tf.where(scores > 0.5, scores, -scores)               # SelectV2
        flat_scores = tf.reshape(scores, [-1])
        flat_boxes = tf.reshape(boxes, [-1, 4])
        keep = tf.where(flat_scores > 0.5)[:, 0]                        # Where: [n, 1] -> [n]
        return {"boxes": tf.gather(flat_boxes, keep), "scores": tf.gather(flat_scores, keep),
                "indices": keep, "masked": masked}
    return mod, serve, spec


def small_cnn(rng):
    """The control: a plain Keras CNN (Conv2D, DepthwiseConv2D, pooling, Dense, softmax)
    of ops braid translated before these models existed, so the test pipeline itself (files,
    names, the comparison) is proven end to end on a model braid runs. Input [1, 32, 32, 3]."""
    import keras
    import tensorflow as tf
    x = keras.Input((32, 32, 3), batch_size=1)
    h = keras.layers.Conv2D(16, 3, padding="same", activation="relu")(x)
    h = keras.layers.DepthwiseConv2D(3, strides=2, padding="same", activation="relu6")(h)
    h = keras.layers.MaxPooling2D(2)(h)
    h = keras.layers.Conv2D(32, 1, activation="sigmoid")(h)
    h = keras.layers.GlobalAveragePooling2D()(h)
    y = keras.layers.Dense(10, activation="softmax")(h)
    mod = tf.Module()
    mod.model = keras.Model(x, y)
    spec = [tf.TensorSpec([1, 32, 32, 3], tf.float32, name="input")]

    @tf.function(input_signature=spec)
    def serve(input):  # noqa: A002
        return {"output": mod.model(input, training=False)}
    return mod, serve, spec


def _apps():
    import keras
    return keras.applications


MODELS = {
    "mobilenet_v2": lambda rng: image_classifier(_apps().MobileNetV2)(rng),
    "resnet50": lambda rng: image_classifier(_apps().ResNet50)(rng),
    "efficientnet_b0": lambda rng: image_classifier(_apps().EfficientNetB0)(rng),
    "transformer_encoder": transformer_encoder,
    "gru_text": lambda rng: text_rnn(__import__("keras").layers.GRU, False)(rng),
    "lstm_text_unrolled": lambda rng: text_rnn(__import__("keras").layers.LSTM, True)(rng),
    "lstm_text": lambda rng: text_rnn(__import__("keras").layers.LSTM, False)(rng),
    "lstm_sequences": rnn_variant("LSTM", True),
    "gru_sequences": rnn_variant("GRU", True),
    "gru_reset_before": rnn_variant("GRU", False, reset_after=False),
    "detection_head": detection_head,
    "small_cnn": small_cnn,
}


# --- freezing, saving, references -----------------------------------------------------------

def make_input(spec, rng):
    import numpy as np
    shape = [int(d) for d in spec.shape]
    if spec.dtype.is_integer:
        return rng.integers(0, 1000, size=shape).astype(spec.dtype.as_numpy_dtype)
    return rng.standard_normal(shape).astype(np.float32)


def gflop_of(graph_def):
    import tensorflow as tf
    try:
        g = tf.Graph()
        with g.as_default():
            tf.graph_util.import_graph_def(graph_def, name="")
            opts = tf.compat.v1.profiler.ProfileOptionBuilder.float_operation()
            opts["output"] = "none"
            prof = tf.compat.v1.profiler.profile(g, options=opts)
        # 0: the profiler could not see inside a loop body (gru_text): unknown, not free
        return round(prof.total_float_ops / 1e9, 6) if prof.total_float_ops else -1
    except Exception:  # the profiler is best effort: its GFLOP only annotate the benchmark
        return -1


def generate(name, out_dir):
    import numpy as np
    import keras
    import tensorflow as tf
    from tensorflow.python.framework.convert_to_constants import convert_variables_to_constants_v2

    tf.get_logger().setLevel("ERROR")
    t0 = time.time()
    keras.utils.set_random_seed(SEED)
    rng = np.random.default_rng(SEED)
    mod, serve, specs = MODELS[name](rng)
    cf = serve.get_concrete_function()
    frozen = convert_variables_to_constants_v2(cf)
    graph_def = frozen.graph.as_graph_def()

    tmp = out_dir + ".tmp.%d" % os.getpid()
    shutil.rmtree(tmp, ignore_errors=True)
    os.makedirs(tmp)
    with open(os.path.join(tmp, "model.pb"), "wb") as f:
        f.write(graph_def.SerializeToString())
    with open(os.path.join(tmp, "model_shapes.pb"), "wb") as f:
        f.write(frozen.graph.as_graph_def(add_shapes=True).SerializeToString())
    tf.saved_model.save(mod, os.path.join(tmp, "savedmodel"), signatures={"serving_default": cf})

    feeds = {s.name: make_input(s, np.random.default_rng([SEED, i])) for i, s in enumerate(specs)}
    inputs = []
    for s, t in zip(specs, frozen.inputs):
        np.save(os.path.join(tmp, "input_%s.npy" % s.name), feeds[s.name])
        inputs.append({"name": s.name, "tensor": t.name, "dtype": s.dtype.name,
                       "shape": [int(d) for d in s.shape], "file": "input_%s.npy" % s.name})

    # The reference: the frozen function itself (the graph braid runs), checked against the
    # live Keras objects so a freezing mistake cannot become the reference.
    result = frozen(*[tf.constant(feeds[s.name]) for s in specs])
    live = serve(*[tf.constant(feeds[s.name]) for s in specs])
    keys = list(tf.nest.flatten(cf.structured_outputs, expand_composites=False))
    names = sorted(cf.structured_outputs.keys())  # flatten orders a dict by its sorted keys
    assert len(names) == len(keys) == len(result) == len(frozen.outputs)
    outputs = []
    for oname, val, tensor in zip(names, result, frozen.outputs):
        ref = val.numpy()
        want = live[oname].numpy()
        if ref.shape != want.shape or not np.allclose(ref, want, rtol=1e-5, atol=1e-5):
            raise SystemExit("gen_keras: %s: frozen output '%s' differs from the live model's" % (name, oname))
        np.save(os.path.join(tmp, "ref_%s.npy" % oname), ref)
        outputs.append({"name": oname, "tensor": tensor.name, "dtype": str(ref.dtype),
                        "shape": list(ref.shape), "file": "ref_%s.npy" % oname})
    if name == "detection_head":  # a score near the threshold would make the kept set fragile
        all_scores = np.abs(np.load(os.path.join(tmp, "ref_masked.npy")))
        kept = np.load(os.path.join(tmp, "ref_scores.npy")).size
        if not 0 < kept < all_scores.size or np.min(np.abs(all_scores - 0.5)) < 1e-4:
            raise SystemExit("gen_keras: detection_head: %d of %d scores kept, closest %.1e from the "
                             "threshold: change SEED" % (kept, all_scores.size, np.min(np.abs(all_scores - 0.5))))

    ops = sorted({n.op for n in graph_def.node} |
                 {n.op for fn in graph_def.library.function for n in fn.node_def})
    meta = {"generator_version": VERSION, "model": name, "tensorflow": tf.__version__,
            "keras": keras.__version__, "seed": SEED, "signature": "serving_default",
            "inputs": inputs, "outputs": outputs, "gflop": gflop_of(graph_def),
            "nodes": len(graph_def.node), "ops": ops, "seconds": round(time.time() - t0, 1)}
    with open(os.path.join(tmp, "meta.json"), "w") as f:
        json.dump(meta, f, indent=1)
    shutil.rmtree(out_dir, ignore_errors=True)
    os.rename(tmp, out_dir)
    return meta


def up_to_date(out_dir):
    try:
        with open(os.path.join(out_dir, "meta.json")) as f:
            return json.load(f).get("generator_version") == VERSION
    except (OSError, ValueError):
        return False


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default=default_dir())
    ap.add_argument("--only", nargs="+", metavar="MODEL", choices=sorted(MODELS))
    ap.add_argument("--list", action="store_true", help="print the model names and exit")
    a = ap.parse_args()
    if a.list:
        print("\n".join(MODELS))
        return
    os.makedirs(a.out, exist_ok=True)
    t0 = time.time()
    for name in a.only or MODELS:
        d = os.path.join(a.out, name)
        if up_to_date(d):
            print("%-20s up to date (%s)" % (name, d), flush=True)
            continue
        m = generate(name, d)
        print("%-20s generated in %5.1f s: %d nodes, %s GFLOP, outputs %s" % (
            name, m["seconds"], m["nodes"], m["gflop"],
            ", ".join("%s %s" % (o["name"], o["shape"]) for o in m["outputs"])), flush=True)
    print("gen_keras: %.1f s in all, into %s" % (time.time() - t0, a.out), flush=True)


if __name__ == "__main__":
    sys.exit(main())
