#!/usr/bin/env node
// Reference outputs for braid's TF.js real-model tests, made by TensorFlow.js itself.
//
//   node gen_tfjs_refs.js CACHE_DIR [MODEL ...]
//
// CACHE_DIR is what scripts/fetch_tfjs.sh prints: CACHE_DIR/models/<name>/model.json (+ its
// shards) and CACHE_DIR/node_modules/@tensorflow/tfjs. For each model (default: every
// directory under CACHE_DIR/models) the graph model is loaded with tf.loadGraphModel from
// memory (model.json + the shards read with fs: the pure-JS 'cpu' backend has no file
// loader in node), run once on seeded inputs, and written to CACHE_DIR/refs/<name>/:
//
//   input_<i>.npy, output_<j>.npy    float32/int32 .npy (version 1.0, C order)
//   refs.json                        { model, seed, inputs: [{name, file, shape, dtype}],
//                                      outputs: [{name, key, file, shape, dtype}] }
//
// Inputs are uniform in [0, 1) from mulberry32 seeded by SEED + input index (images are fed
// normalized by the models' users, so this keeps activations in their usual range); -1 dims
// are the signature's or 1. Outputs are the signature outputs when model.json has a signature, else the nodes
// nobody consumes, sorted by name. A model already done for the same generator and model
// bytes is skipped (refs.json carries a stamp), so reruns are instant.
'use strict';

const fs = require('fs');
const path = require('path');
const crypto = require('crypto');

const SEED = 20240521;

function usage() {
  console.error('usage: node gen_tfjs_refs.js CACHE_DIR [MODEL ...]');
  process.exit(2);
}

// mulberry32: a tiny, well-known 32-bit PRNG, so the inputs are the same on every machine.
function mulberry32(a) {
  return function () {
    a |= 0; a = (a + 0x6D2B79F5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

// .npy version 1.0: magic, header length, a dict padded with spaces to a 64-byte boundary.
function npyBytes(typed, shape) {
  const descr = typed instanceof Float32Array ? '<f4'
    : typed instanceof Int32Array ? '<i4'
    : typed instanceof Uint8Array ? '|u1' : null;
  if (!descr) throw new Error(`npy: unsupported array type ${typed.constructor.name}`);
  const shp = shape.length === 0 ? '()' : shape.length === 1 ? `(${shape[0]},)` : `(${shape.join(', ')})`;
  let header = `{'descr': '${descr}', 'fortran_order': False, 'shape': ${shp}, }`;
  const total = 10 + header.length + 1;
  header += ' '.repeat((64 - (total % 64)) % 64) + '\n';
  const head = Buffer.alloc(10);
  head.write('\x93NUMPY', 0, 'latin1');
  head[6] = 1; head[7] = 0;
  head.writeUInt16LE(header.length, 8);
  const body = Buffer.from(typed.buffer, typed.byteOffset, typed.byteLength);
  return Buffer.concat([head, Buffer.from(header, 'latin1'), body]);
}

function writeAtomic(file, bytes) {
  const tmp = `${file}.tmp.${process.pid}`;
  fs.writeFileSync(tmp, bytes);
  fs.renameSync(tmp, file);
}

function loadArtifacts(dir) {
  const json = JSON.parse(fs.readFileSync(path.join(dir, 'model.json'), 'utf8'));
  const specs = [];
  const buffers = [];
  for (const group of json.weightsManifest) {
    specs.push(...group.weights);
    for (const p of group.paths) buffers.push(fs.readFileSync(path.join(dir, p)));
  }
  const all = Buffer.concat(buffers);
  const weightData = all.buffer.slice(all.byteOffset, all.byteOffset + all.byteLength);
  return { json, artifacts: { modelTopology: json.modelTopology, weightSpecs: specs, weightData,
                              format: json.format, generatedBy: json.generatedBy,
                              convertedBy: json.convertedBy, signature: json.signature,
                              userDefinedMetadata: json.userDefinedMetadata } };
}

// Signature outputs (tensor names "node:i") or, without a signature, the unconsumed nodes.
function outputNames(json) {
  const sig = json.signature || (json.userDefinedMetadata && json.userDefinedMetadata.signature);
  if (sig && sig.outputs && Object.keys(sig.outputs).length) {
    return Object.entries(sig.outputs).map(([key, o]) => ({ key, name: o.name }))
      .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  }
  const nodes = json.modelTopology.node;
  const used = new Set();
  for (const n of nodes) for (const i of n.input || []) used.add(i.replace(/^\^/, '').split(':')[0]);
  return nodes.filter((n) => n.op !== 'Const' && n.op !== 'NoOp' && !used.has(n.name))
    .map((n) => ({ key: n.name, name: `${n.name}:0` }))
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

// Inputs that the rules below would make degenerate: rvm (Robust Video Matting) takes any
// image size, and at 1x1 its downsampling resizes to 0x0, which TensorFlow refuses (tfjs
// returns empty tensors). A real frame size and the ratio its authors suggest for it.
const OVERRIDES = {
  rvm: { src: { shape: [1, 128, 128, 3] }, downsample_ratio: { value: 0.5 } },
};

// Dims left -1 by the placeholder are taken from the signature's input shape (handtrack says
// [1, -1, -1, 3] but signs 320x320), else 1 (the batch).
function placeholders(json) {
  const sig = json.signature || (json.userDefinedMetadata && json.userDefinedMetadata.signature);
  const sigInputs = (sig && sig.inputs) || {};
  return json.modelTopology.node.filter((n) => n.op === 'Placeholder').map((n) => {
    const dims = (n.attr.shape && n.attr.shape.shape && n.attr.shape.shape.dim) || [];
    const signed = Object.values(sigInputs).find((s) => s.name.split(':')[0] === n.name);
    const sdims = (signed && signed.tensorShape && signed.tensorShape.dim) || [];
    const shape = dims.map((d, k) => {
      const v = Number(d.size);
      const sv = sdims.length === dims.length ? Number(sdims[k].size) : -1;
      return v >= 0 ? v : sv >= 0 ? sv : 1;
    });
    const dtype = (n.attr.dtype && n.attr.dtype.type) || 'DT_FLOAT';
    return { name: n.name, shape, dtype };
  });
}

function withOverrides(name, inputs) {
  const o = OVERRIDES[name] || {};
  return inputs.map((p) => Object.assign({}, p, o[p.name] || {}));
}

async function one(tf, cache, name, generatorHash) {
  const dir = path.join(cache, 'models', name);
  const out = path.join(cache, 'refs', name);
  const modelHash = crypto.createHash('sha256');
  for (const f of fs.readdirSync(dir).sort()) modelHash.update(f).update(fs.readFileSync(path.join(dir, f)));
  const stamp = `${generatorHash}:${modelHash.digest('hex').slice(0, 16)}`;
  try {
    const prev = JSON.parse(fs.readFileSync(path.join(out, 'refs.json'), 'utf8'));
    if (prev.stamp === stamp) { console.log(`${name}: up to date`); return; }
  } catch (e) { /* no previous references */ }

  const { json, artifacts } = loadArtifacts(dir);
  const model = await tf.loadGraphModel(tf.io.fromMemory(artifacts));
  const ins = withOverrides(name, placeholders(json));
  const feeds = {};
  const inRecs = [];
  fs.mkdirSync(out, { recursive: true });
  ins.forEach((p, i) => {
    const rand = mulberry32(SEED + i);
    const count = p.shape.reduce((a, b) => a * b, 1);
    let data;
    if (p.value !== undefined) { data = p.dtype === 'DT_FLOAT' ? new Float32Array(count) : new Int32Array(count); data.fill(p.value); }
    else if (p.dtype === 'DT_FLOAT') { data = new Float32Array(count); for (let k = 0; k < count; k++) data[k] = rand(); }
    else if (p.dtype === 'DT_INT32') { data = new Int32Array(count); for (let k = 0; k < count; k++) data[k] = Math.floor(rand() * 256); }
    else if (p.dtype === 'DT_UINT8') { data = new Uint8Array(count); for (let k = 0; k < count; k++) data[k] = Math.floor(rand() * 256); }
    else throw new Error(`${name}: input '${p.name}': dtype ${p.dtype} not handled by the generator`);
    const file = `input_${i}.npy`;
    writeAtomic(path.join(out, file), npyBytes(data, p.shape));
    const tfDtype = p.dtype === 'DT_FLOAT' ? 'float32' : 'int32';
    feeds[p.name] = tf.tensor(p.dtype === 'DT_UINT8' ? Int32Array.from(data) : data, p.shape, tfDtype);
    inRecs.push({ name: p.name, file, shape: p.shape, dtype: p.dtype });
  });

  const outs = outputNames(json);
  const t0 = Date.now();
  // executeAsync handles control flow too; the models without it give the same result.
  let results = await model.executeAsync(feeds, outs.map((o) => o.name));
  if (!Array.isArray(results)) results = [results];
  const ms = Date.now() - t0;
  const outRecs = [];
  for (let j = 0; j < outs.length; j++) {
    const t = results[j];
    const data = await t.data();
    const typed = t.dtype === 'float32' ? Float32Array.from(data) : Int32Array.from(data);
    const file = `output_${j}.npy`;
    writeAtomic(path.join(out, file), npyBytes(typed, t.shape));
    outRecs.push({ name: outs[j].name, key: outs[j].key, file, shape: t.shape, dtype: t.dtype });
  }
  tf.dispose(results);
  tf.dispose(Object.values(feeds));
  model.dispose();
  const refs = { model: name, stamp, seed: SEED, tfjs: tf.version.tfjs, backend: tf.getBackend(),
                 inputs: inRecs, outputs: outRecs };
  writeAtomic(path.join(out, 'refs.json'), JSON.stringify(refs, null, 1) + '\n');
  console.log(`${name}: ${outRecs.length} output(s) in ${ms} ms -> ${out}`);
}

async function main() {
  const args = process.argv.slice(2);
  if (args.length < 1) usage();
  const cache = path.resolve(args[0]);
  const tfjsDir = path.join(cache, 'node_modules', '@tensorflow', 'tfjs');
  if (!fs.existsSync(tfjsDir)) {
    console.error(`gen_tfjs_refs: ${tfjsDir} not found (run scripts/fetch_tfjs.sh)`);
    process.exit(3);
  }
  // tfjs advertises tfjs-node and execute() on console.warn: not useful in a test log.
  console.warn = () => {};
  const tf = require(tfjsDir);
  await tf.setBackend('cpu');
  await tf.ready();
  const generatorHash = crypto.createHash('sha256').update(fs.readFileSync(__filename))
    .update(tf.version.tfjs).digest('hex').slice(0, 16);
  let names = args.slice(1);
  if (names.length === 0) {
    names = fs.readdirSync(path.join(cache, 'models'))
      .filter((d) => fs.existsSync(path.join(cache, 'models', d, 'model.json'))).sort();
  }
  let failed = 0;
  for (const n of names) {
    try { await one(tf, cache, n, generatorHash); } catch (e) {
      console.error(`gen_tfjs_refs: ${n}: ${e.message}`);
      failed++;
    }
  }
  process.exit(failed ? 1 : 0);
}

main();
