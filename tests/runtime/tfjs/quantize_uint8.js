#!/usr/bin/env node
// Makes a uint8-quantized copy of a TF.js graph model, the way the TF.js converter's
// --quantize_uint8 does it: each float32 weight becomes bytes q with
//   value = q * scale + min,   scale = (max - min) / 255   (min = max: scale 1, q 0)
// and its manifest entry gains { quantization: { dtype: "uint8", min, scale,
// original_dtype: "float32" } }. int32 weights are kept. No human-models graph that braid
// maps entirely to oneDNN ships uint8 weights, so the tfjs suite quantizes one itself
// ("<model>-uint8"); TensorFlow.js and braid then both dequantize the same bytes.
//
//   node quantize_uint8.js SRC_DIR DST_DIR
'use strict';
const fs = require('fs');
const path = require('path');

function main() {
  const [src, dst] = process.argv.slice(2);
  if (!src || !dst) { console.error('usage: node quantize_uint8.js SRC_DIR DST_DIR'); process.exit(2); }
  const model = JSON.parse(fs.readFileSync(path.join(src, 'model.json'), 'utf8'));
  const specs = [];
  const parts = [];
  for (const g of model.weightsManifest) {
    const data = Buffer.concat(g.paths.map((p) => fs.readFileSync(path.join(src, p))));
    let off = 0;
    for (const w of g.weights) {
      const n = w.shape.reduce((a, b) => a * b, 1);
      const q = w.quantization;
      const bytesPer = q ? (q.dtype === 'float16' || q.dtype === 'uint16' ? 2 : 1) : 4;
      const raw = data.subarray(off, off + n * bytesPer);
      off += n * bytesPer;
      if (w.dtype !== 'float32' || q) {               // int32, or already quantized: as is
        specs.push(w);
        parts.push(Buffer.from(raw));
        continue;
      }
      const f = new Float32Array(raw.buffer.slice(raw.byteOffset, raw.byteOffset + raw.byteLength));
      let min = Infinity, max = -Infinity;
      for (const v of f) { if (v < min) min = v; if (v > max) max = v; }
      if (n === 0) { min = 0; max = 0; }
      const scale = max > min ? (max - min) / 255 : 1;
      const out = Buffer.alloc(n);
      for (let k = 0; k < n; k++) out[k] = Math.max(0, Math.min(255, Math.round((f[k] - min) / scale)));
      specs.push({ name: w.name, shape: w.shape, dtype: 'float32',
                   quantization: { dtype: 'uint8', min, scale, original_dtype: 'float32' } });
      parts.push(out);
    }
  }
  fs.mkdirSync(dst, { recursive: true });
  const shard = 'group1-shard1of1.bin';
  fs.writeFileSync(path.join(dst, shard), Buffer.concat(parts));
  model.weightsManifest = [{ paths: [shard], weights: specs }];
  fs.writeFileSync(path.join(dst, 'model.json'), JSON.stringify(model));
}

main();
