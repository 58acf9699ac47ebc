// Runs GraphDef fixtures as TF.js graph models for tfjs_crosscheck.py.
//   node tfjs_run.js TFJS_CACHE JOBS.json   -> prints {name: {outputs: [{shape, data}]} | {error}}
'use strict';
const fs = require('fs');
const path = require('path');

async function main() {
  console.warn = () => {};                  // tfjs's tfjs-node advertisement
  const tf = require(path.join(process.argv[2], 'node_modules', '@tensorflow', 'tfjs'));
  await tf.setBackend('cpu');
  const jobs = JSON.parse(fs.readFileSync(process.argv[3], 'utf8'));
  const out = {};
  for (const j of jobs) {
    try {
      const w = Buffer.from(j.weights, 'base64');
      const model = await tf.loadGraphModel(tf.io.fromMemory({
        modelTopology: j.topology, weightSpecs: j.specs,
        weightData: w.buffer.slice(w.byteOffset, w.byteOffset + w.byteLength) }));
      const feeds = {};
      for (const [k, v] of Object.entries(j.feeds)) feeds[k] = tf.tensor(v.data, v.shape, 'float32');
      let res = await model.executeAsync(feeds, j.outputs);
      if (!Array.isArray(res)) res = [res];
      out[j.name] = { outputs: await Promise.all(res.map(async (t) => ({ shape: t.shape, data: Array.from(await t.data()) }))) };
    } catch (e) {
      out[j.name] = { error: String(e.message || e) };
    }
  }
  process.stdout.write(JSON.stringify(out));
}
main();
