#!/usr/bin/env node
// The zoo's TF.js peer: one TF.js graph model timed by TensorFlow.js itself, in node.
//
//   node bench/zoo/tfjs_bench.js --model NAME [--tfjs DIR] [--backend auto|wasm|cpu]
//                                [--threads T] [--runs N] [--warmup W] [--warmup-ms MS]
//                                [--write OUTDIR --name ZOO_NAME]
//
// DIR is what scripts/fetch_tfjs.sh prints (default $BRAID_TFJS_DIR, else
// ~/.cache/braid/tfjs): DIR/models/NAME/model.json + its shards, and DIR/node_modules with
// @tensorflow/tfjs and @tensorflow/tfjs-backend-wasm. The model is loaded with
// tf.loadGraphModel from memory (model.json and the shards read with fs), fed the seeded
// input of tests/runtime/tfjs/gen_tfjs_refs.js (mulberry32, uniform [0, 1), seed 20240521 +
// input index; the same bytes braid's TF.js tests use), run untimed at least WARMUP times and
// for at least MS milliseconds (default 2000: V8 compiles tfjs's graph executor and kernels'
// JavaScript in tiers over the first hundred or so runs of a model, which a few warm-up runs
// do not cover), then timed RUNS times. One timed run is model.execute() plus reading every
// output back (dataSync), what an application does per inference; the input tensor is made
// once, outside the timing.
//
// Backend (--backend auto, the default: wasm, else cpu with a note on stderr):
//   wasm  @tensorflow/tfjs-backend-wasm (XNNPACK compiled to WebAssembly, SIMD when node has
//         it, which node 20 does). 1 thread: the package's plain SIMD build, as any node user
//         gets it. T > 1 threads: tfjs disables its threaded build in node (it wants a Blob
//         URL for its pthread workers, which node's worker_threads cannot load; tfjs issue
//         3830), so this script puts the worker and main scripts in temporary files and
//         hands node their paths, and sets WASM_HAS_MULTITHREAD_SUPPORT. tfjs also caps its
//         pool at navigator.hardwareConcurrency / 2 (it assumes 2 hyperthreads per core):
//         during initialisation this script reports 2T logical cores, so the pool gets T
//         threads. The line below says how many threads XNNPACK really got (threads=);
//         if the threaded build cannot start, the script exits with status 3.
//   cpu   the pure-JavaScript backend (one thread, no SIMD): the fallback.
//
// Output, last line, machine-readable:
//   TFJS name=<NAME> backend=wasm|cpu simd=0|1 threads=<XNNPACK's> requested=<T> runs=N
//        warmup=<untimed runs done> median_ms=.. p90_ms=.. min_ms=.. load_ms=<load + first run>
//        peer_rel=<max rel error vs the reference, with --write; else -> tfjs=<version>
//
// --write OUTDIR --name ZOO_NAME (before timing): writes OUTDIR/in<k>.npy (the inputs),
// OUTDIR/ref<j>.npy (the reference braid is checked against: the outputs of tfjs's 'cpu'
// backend, as in tests/runtime/tfjs, whichever backend is timed; the timed backend's own
// distance from it is printed, and is peer_rel= on the TFJS line) and
// OUTDIR/manifest.json in gen_zoo.py's schema ({"models": {ZOO_NAME: {"model": <model.json>,
// "inputs": [{name, file, shape}], "outputs": [{name, file, shape}], "gflop": G, ...}}}), which
// bench/zoo/check.py reads. Output names are braid's: the signature's tensor names without
// ":0". GFLOP counts 2 per multiply-add of every convolution and matrix product, from the
// kernels tf.profile records for one run (input and output shapes), like gen_zoo.py's count.
//
// Exit status: 0 done; 1 error; 2 bad usage; 3 the threaded wasm build could not start.
'use strict';

const fs = require('fs');
const os = require('os');
const path = require('path');
const { createRequire } = require('module');

const SEED = 20240521;   // tests/runtime/tfjs/gen_tfjs_refs.js's

function usage(msg) {
  if (msg) console.error(`tfjs_bench: ${msg}`);
  console.error('usage: node tfjs_bench.js --model NAME [--tfjs DIR] [--backend auto|wasm|cpu] ' +
                '[--threads T] [--runs N] [--warmup W] [--warmup-ms MS] [--write OUTDIR --name ZOO_NAME]');
  process.exit(2);
}

function parseArgs(argv) {
  const a = { tfjs: process.env.BRAID_TFJS_DIR || path.join(os.homedir(), '.cache', 'braid', 'tfjs'),
              backend: 'auto', threads: 1, runs: 20, warmup: 3, warmupMs: 2000, model: null,
              write: null, name: null };
  for (let i = 0; i < argv.length; i++) {
    const k = argv[i], v = argv[i + 1];
    const num = (min) => {
      const n = Number(v);
      if (!Number.isInteger(n) || n < min) usage(`${k}: expected an integer >= ${min}, got '${v}'`);
      i++;
      return n;
    };
    const str = () => { if (v === undefined) usage(`${k} needs a value`); i++; return v; };
    switch (k) {
      case '--tfjs': a.tfjs = str(); break;
      case '--model': a.model = str(); break;
      case '--backend': a.backend = str(); break;
      case '--threads': a.threads = num(1); break;
      case '--runs': a.runs = num(0); break;
      case '--warmup': a.warmup = num(0); break;
      case '--warmup-ms': a.warmupMs = num(0); break;
      case '--write': a.write = str(); break;
      case '--name': a.name = str(); break;
      case '-h': case '--help': usage();
      default: usage(`unknown argument '${k}'`);
    }
  }
  if (!a.model) usage('--model is required');
  if (!['auto', 'wasm', 'cpu'].includes(a.backend)) usage(`--backend: auto, wasm or cpu, not '${a.backend}'`);
  if (a.write && !a.name) usage('--write needs --name');
  return a;
}

// mulberry32, as in gen_tfjs_refs.js: the same inputs on every machine.
function mulberry32(s) {
  return function () {
    s |= 0; s = (s + 0x6D2B79F5) | 0;
    let t = Math.imul(s ^ (s >>> 15), 1 | s);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function npyBytes(typed, shape) {
  const descr = typed instanceof Float32Array ? '<f4' : typed instanceof Int32Array ? '<i4' : null;
  if (!descr) throw new Error(`npy: unsupported array type ${typed.constructor.name}`);
  const shp = shape.length === 0 ? '()' : shape.length === 1 ? `(${shape[0]},)` : `(${shape.join(', ')})`;
  let header = `{'descr': '${descr}', 'fortran_order': False, 'shape': ${shp}, }`;
  header += ' '.repeat((64 - ((10 + header.length + 1) % 64)) % 64) + '\n';
  const head = Buffer.alloc(10);
  head.write('\x93NUMPY', 0, 'latin1');
  head[6] = 1; head[7] = 0;
  head.writeUInt16LE(header.length, 8);
  return Buffer.concat([head, Buffer.from(header, 'latin1'),
                        Buffer.from(typed.buffer, typed.byteOffset, typed.byteLength)]);
}

function writeAtomic(file, bytes) {
  const tmp = `${file}.tmp.${process.pid}`;
  fs.writeFileSync(tmp, bytes);
  fs.renameSync(tmp, file);
}

function loadArtifacts(dir) {
  const json = JSON.parse(fs.readFileSync(path.join(dir, 'model.json'), 'utf8'));
  const specs = [], buffers = [];
  for (const group of json.weightsManifest) {
    specs.push(...group.weights);
    for (const p of group.paths) buffers.push(fs.readFileSync(path.join(dir, p)));
  }
  const all = Buffer.concat(buffers);
  return { json, artifacts: { modelTopology: json.modelTopology, weightSpecs: specs,
    weightData: all.buffer.slice(all.byteOffset, all.byteOffset + all.byteLength),
    format: json.format, generatedBy: json.generatedBy, convertedBy: json.convertedBy,
    signature: json.signature, userDefinedMetadata: json.userDefinedMetadata } };
}

function signature(json) {
  return json.signature || (json.userDefinedMetadata && json.userDefinedMetadata.signature) || {};
}

// Signature outputs sorted by tensor name (gen_tfjs_refs.js's order), else unconsumed nodes.
function outputNames(json) {
  const sig = signature(json);
  if (sig.outputs && Object.keys(sig.outputs).length) {
    return Object.values(sig.outputs).map((o) => o.name).sort();
  }
  const used = new Set();
  for (const n of json.modelTopology.node) for (const i of n.input || []) used.add(i.replace(/^\^/, '').split(':')[0]);
  return json.modelTopology.node.filter((n) => n.op !== 'Const' && n.op !== 'NoOp' && !used.has(n.name))
    .map((n) => `${n.name}:0`).sort();
}

// Placeholders with their shapes: -1 dims from the signature, else 1 (gen_tfjs_refs.js's rule).
function placeholders(json) {
  const sigInputs = signature(json).inputs || {};
  return json.modelTopology.node.filter((n) => n.op === 'Placeholder').map((n) => {
    const dims = (n.attr.shape && n.attr.shape.shape && n.attr.shape.shape.dim) || [];
    const signed = Object.values(sigInputs).find((s) => s.name.split(':')[0] === n.name);
    const sdims = (signed && signed.tensorShape && signed.tensorShape.dim) || [];
    const shape = dims.map((d, k) => {
      const v = Number(d.size);
      const sv = sdims.length === dims.length ? Number(sdims[k].size) : -1;
      return v >= 0 ? v : sv >= 0 ? sv : 1;
    });
    return { name: n.name, shape, dtype: (n.attr.dtype && n.attr.dtype.type) || 'DT_FLOAT' };
  });
}

function makeInputs(json) {
  return placeholders(json).map((p, i) => {
    const rand = mulberry32(SEED + i);
    const count = p.shape.reduce((x, y) => x * y, 1);
    let data;
    if (p.dtype === 'DT_FLOAT') { data = new Float32Array(count); for (let k = 0; k < count; k++) data[k] = rand(); }
    else if (p.dtype === 'DT_INT32') { data = new Int32Array(count); for (let k = 0; k < count; k++) data[k] = Math.floor(rand() * 256); }
    else throw new Error(`input '${p.name}': dtype ${p.dtype} not handled`);
    return { ...p, data };
  });
}

// tfjs-backend-wasm's threaded build in node (see the header). Returns an undo function.
function threadedWasmShim(wasmBundle, threads) {
  const RealBlob = globalThis.Blob, realCreate = URL.createObjectURL, realCpus = os.cpus;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'braid-tfjs-wasm.'));
  const bundle = fs.readFileSync(wasmBundle, 'utf8');
  // The threaded factory is shipped to the workers as source text (factory.toString()), so
  // the bundle's module-level names it uses must be defined in front of it.
  const reqs = [...bundle.matchAll(/^var (require\$\$\d+) = require\('([^']+)'\);$/mg)]
    .map((m) => `var ${m[1]} = require(${JSON.stringify(m[2])});`).join('');
  const mainPrelude = `${reqs}var commonjsGlobal = globalThis; var __dirname = ${JSON.stringify(path.dirname(wasmBundle))};\n`;
  const workerPrelude = 'URL.createObjectURL = (b) => (b && b.__path) ? b.__path : null; URL.revokeObjectURL = () => {};';
  let k = 0;
  globalThis.Blob = class {
    constructor(parts) {
      let src = parts.join('');
      if (src.startsWith('var WasmBackendModuleThreadedSimd')) src = mainPrelude + src;
      else if (src.includes('nodeWorkerThreads')) src = src.replace('"use strict";', `"use strict";${workerPrelude}`);
      this.__path = path.join(dir, `blob${k++}.js`);
      fs.writeFileSync(this.__path, src);
    }
  };
  URL.createObjectURL = (b) => ((b && b.__path) ? b.__path : realCreate(b));
  const cpus = realCpus();
  os.cpus = () => Array.from({ length: Math.max(cpus.length, 2 * threads) }, (_, i) => cpus[i % cpus.length]);
  return () => {
    globalThis.Blob = RealBlob; URL.createObjectURL = realCreate; os.cpus = realCpus;
    // The workers read their scripts at start-up, which initialisation waited for.
    fs.rmSync(dir, { recursive: true, force: true });
  };
}

async function setUpBackend(req, tf, a) {
  let want = a.backend;
  if (want === 'auto' || want === 'wasm') {
    let wasm = null;
    try { wasm = req('@tensorflow/tfjs-backend-wasm'); } catch (e) {
      if (want === 'wasm') throw new Error(`@tensorflow/tfjs-backend-wasm not found in ${a.tfjs} (run scripts/fetch_tfjs.sh)`);
      console.error('tfjs_bench: note: @tensorflow/tfjs-backend-wasm not installed; timing the plain cpu backend');
    }
    if (wasm) {
      const bundle = req.resolve('@tensorflow/tfjs-backend-wasm');
      wasm.setWasmPaths(path.join(path.dirname(bundle), path.sep));
      wasm.setThreadsCount(a.threads);
      let undo = () => {};
      if (a.threads > 1) {
        tf.env().set('WASM_HAS_MULTITHREAD_SUPPORT', true);
        undo = threadedWasmShim(bundle, a.threads);
      }
      let ok = false;
      try { ok = await tf.setBackend('wasm'); } catch (e) { ok = false; }
      undo();
      if (!ok) {
        if (a.threads > 1) {
          console.error(`tfjs_bench: the threaded wasm build did not start in node; run with --threads 1`);
          process.exit(3);
        }
        if (want === 'wasm') throw new Error('the wasm backend did not initialise');
        console.error('tfjs_bench: note: the wasm backend did not initialise; timing the plain cpu backend');
      } else {
        await tf.ready();
        return { backend: 'wasm', simd: (await tf.env().getAsync('WASM_HAS_SIMD_SUPPORT')) ? 1 : 0,
                 threads: wasm.getThreadsCount() };
      }
    }
  }
  await tf.setBackend('cpu');
  await tf.ready();
  return { backend: 'cpu', simd: 0, threads: 1 };
}

// 2 per multiply-add of every convolution and matrix product in one run (from tf.profile).
function gflopOf(profile) {
  let flops = 0;
  const size = (s) => (s || []).reduce((x, y) => x * y, 1);
  for (const k of profile.kernels) {
    const out = k.outputShapes && k.outputShapes[0];
    const ins = k.inputShapes || [];
    if (!out) continue;
    if (/^(Fused)?Conv2D$/.test(k.name) && ins[1] && ins[1].length === 4) {
      const [kh, kw, cin] = ins[1];
      flops += 2 * size(out) * kh * kw * cin;          // filter [kh, kw, cin, cout]
    } else if (/^(Fused)?DepthwiseConv2D(Native)?$/.test(k.name) && ins[1] && ins[1].length === 4) {
      const [kh, kw] = ins[1];
      flops += 2 * size(out) * kh * kw;                // one input channel per output channel
    } else if (/^(_Fused)?(Batch)?MatMul$/.test(k.name) && ins[0]) {
      const n = out[out.length - 1];
      flops += 2 * size(ins[0]) * n;                   // batch·M·K multiply-adds per column
    }
  }
  return flops / 1e9;
}

function stats(times) {
  const s = [...times].sort((x, y) => x - y);
  const q = (p) => s[Math.min(s.length - 1, Math.max(0, Math.ceil(p * s.length) - 1))];
  const median = s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
  return { median, p90: q(0.9), min: s[0] };
}

// The model on the current backend: load it, make the feeds, and a function running it once.
async function open(tf, artifacts, inputs, outs) {
  const model = await tf.loadGraphModel(tf.io.fromMemory(artifacts));
  const feeds = {};
  for (const p of inputs) feeds[p.name] = tf.tensor(p.data, p.shape, p.dtype === 'DT_FLOAT' ? 'float32' : 'int32');
  const once = () => {
    let r = model.execute(feeds, outs);
    if (!Array.isArray(r)) r = [r];
    const data = r.map((t) => ({ data: t.dataSync(), shape: t.shape, dtype: t.dtype }));
    tf.dispose(r);
    return data;
  };
  const close = () => { tf.dispose(Object.values(feeds)); model.dispose(); };
  return { model, feeds, once, close };
}

// max|got - ref| / max|ref| (check.py's measure), worst output, or null when none differ.
function worstRel(got, ref, names) {
  let worst = null;
  got.forEach((g, j) => {
    let d = 0, m = 0;
    for (let k = 0; k < g.data.length; k++) {
      d = Math.max(d, Math.abs(g.data[k] - ref[j].data[k]));
      m = Math.max(m, Math.abs(ref[j].data[k]));
    }
    const rel = m > 0 ? d / m : d;
    if (!worst || rel > worst.rel) worst = { rel, name: names[j] };
  });
  return worst;
}

async function main() {
  const a = parseArgs(process.argv.slice(2));
  const cache = path.resolve(a.tfjs);
  const modelDir = path.join(cache, 'models', a.model);
  if (!fs.existsSync(path.join(modelDir, 'model.json'))) {
    console.error(`tfjs_bench: ${modelDir}/model.json not found (run scripts/fetch_tfjs.sh)`);
    process.exit(1);
  }
  const req = createRequire(path.join(cache, 'package.json'));
  console.warn = () => {};   // tfjs advertises tfjs-node on console.warn
  const tf = req('@tensorflow/tfjs');
  const { json, artifacts } = loadArtifacts(modelDir);
  const inputs = makeInputs(json);
  const outs = outputNames(json);
  const braidNames = outs.map((o) => o.replace(/:0$/, ''));

  // The reference: TensorFlow.js's plain JavaScript backend, whatever backend is timed (as
  // tests/runtime/tfjs does: it computes each op directly in float32, where XNNPACK's kernels
  // approximate sigmoid and the like), so braid is checked against the most exact tfjs output.
  let ref = null;
  if (a.write) {
    await tf.setBackend('cpu');
    await tf.ready();
    const r = await open(tf, artifacts, inputs, outs);
    ref = r.once();
    const profile = await tf.profile(() => { const o = r.model.execute(r.feeds, outs); tf.dispose(o); });
    const gflop = gflopOf(profile);
    r.close();
    fs.mkdirSync(a.write, { recursive: true });
    const inRecs = inputs.map((p, i) => {
      const file = `in${i}.npy`;
      writeAtomic(path.join(a.write, file), npyBytes(p.data, p.shape));
      return { name: p.name, file, shape: p.shape, dtype: p.dtype === 'DT_FLOAT' ? 'float32' : 'int32' };
    });
    const outRecs = ref.map((o, j) => {
      const file = `ref${j}.npy`;
      const typed = o.dtype === 'float32' ? Float32Array.from(o.data) : Int32Array.from(o.data);
      writeAtomic(path.join(a.write, file), npyBytes(typed, o.shape));
      return { name: braidNames[j], file, shape: o.shape, dtype: o.dtype };
    });
    const manifest = { models: { [a.name]: {
      model: path.join(modelDir, 'model.json'), tfjs_model: a.model, inputs: inRecs, outputs: outRecs,
      gflop: Number(gflop.toFixed(4)), reference: `tfjs ${tf.version.tfjs} cpu backend`, seed: SEED } } };
    writeAtomic(path.join(a.write, 'manifest.json'), JSON.stringify(manifest, null, 1) + '\n');
    console.log(`${a.name}: ${a.model}, ${inRecs.length} input(s), ${outRecs.length} output(s), ` +
                `${gflop.toFixed(3)} GFLOP; reference (tfjs cpu backend) -> ${a.write}`);
  }

  const be = await setUpBackend(req, tf, a);
  const t0 = performance.now();
  const run = await open(tf, artifacts, inputs, outs);
  const first = run.once();
  const loadMs = performance.now() - t0;
  let peerRel = '-';
  if (ref) {
    // How far the timed backend itself is from the reference braid is checked against.
    const w = worstRel(first, ref, braidNames);
    if (w) {
      peerRel = w.rel === 0 ? '0' : w.rel < 1e-3 ? w.rel.toExponential(2) : w.rel.toPrecision(3);
      console.log(`${a.name}: tfjs ${be.backend} vs the reference: max rel ${peerRel} (output ${w.name})`);
    }
  }

  let warm = 0;
  if (a.runs > 0) {
    const w0 = performance.now();
    while (warm < a.warmup || performance.now() - w0 < a.warmupMs) { run.once(); warm++; }
  }
  const times = [];
  for (let i = 0; i < a.runs; i++) {
    const s = performance.now();
    run.once();
    times.push(performance.now() - s);
  }
  const st = a.runs ? stats(times) : { median: NaN, p90: NaN, min: NaN };
  const f = (v) => (Number.isFinite(v) ? v.toFixed(3) : '-');
  console.log(`TFJS name=${a.name || a.model} backend=${be.backend} simd=${be.simd} threads=${be.threads} ` +
              `requested=${a.threads} runs=${a.runs} warmup=${warm} median_ms=${f(st.median)} ` +
              `p90_ms=${f(st.p90)} min_ms=${f(st.min)} load_ms=${loadMs.toFixed(1)} peer_rel=${peerRel} ` +
              `tfjs=${tf.version.tfjs}`);
  // The wasm backend's pthread workers would keep node alive.
  process.exit(0);
}

main().catch((e) => { console.error(`tfjs_bench: ${e && e.stack ? e.stack : e}`); process.exit(1); });
