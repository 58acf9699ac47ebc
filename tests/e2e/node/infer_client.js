// braidd's second-language client: Node.js with @grpc/grpc-js, the stubs built at run time
// from braid's own proto/inference.proto by @grpc/proto-loader (no generated code), as a
// JavaScript user of the Open Inference Protocol would write it.
//
//   node infer_client.js JOB.json      (NODE_PATH names the node_modules of
//                                       scripts/fetch_node_client.sh)
//
// JOB: {"address", "proto", "model", "input": {"name", "shape", "raw"}} where "raw" is a file
// of the input's little-endian FP32 bytes. Prints one JSON document of what each call
// answered; tests/e2e/test_node_client.py checks it against the model's reference.
'use strict';

const fs = require('fs');
const grpc = require('@grpc/grpc-js');
const protoLoader = require('@grpc/proto-loader');

const job = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'));
const definition = protoLoader.loadSync(job.proto, {
  keepCase: true, longs: String, enums: String, defaults: true, oneofs: true,
});
const inference = grpc.loadPackageDefinition(definition).inference;
const client = new inference.GRPCInferenceService(job.address, grpc.credentials.createInsecure());

function call(method, request, timeoutMs = 30000) {
  return new Promise((resolve) => {
    const deadline = new Date(Date.now() + timeoutMs);
    client[method](request, { deadline }, (err, reply) => {
      resolve(err ? { error: { code: err.code, details: err.details } } : { reply });
    });
  });
}

// The output tensors of a ModelInferResponse: raw bytes (base64) by name.
function outputs(r) {
  if (r.error) return r;
  const out = {};
  r.reply.outputs.forEach((o, i) => {
    out[o.name] = { datatype: o.datatype, shape: o.shape.map(Number),
                    raw: r.reply.raw_output_contents[i].toString('base64') };
  });
  return { id: r.reply.id, model_name: r.reply.model_name, outputs: out };
}

async function main() {
  const raw = fs.readFileSync(job.input.raw);
  const tensor = { name: job.input.name, datatype: 'FP32', shape: job.input.shape };
  const floats = Array.from(new Float32Array(raw.buffer, raw.byteOffset, raw.length / 4));
  const result = {};

  result.live = (await call('ServerLive', {})).reply;
  result.ready = (await call('ServerReady', {})).reply;
  result.server_metadata = (await call('ServerMetadata', {})).reply;
  result.model_metadata = (await call('ModelMetadata', { name: job.model })).reply;
  result.model_ready = (await call('ModelReady', { name: job.model })).reply;

  // binary tensors (raw_input_contents), as tritonclient sends them
  result.raw_infer = outputs(await call('ModelInfer', {
    model_name: job.model, id: 'node-raw', inputs: [tensor], raw_input_contents: [raw],
  }));
  // typed contents (fp32_contents): the answer still comes back as raw bytes
  result.typed_infer = outputs(await call('ModelInfer', {
    model_name: job.model, id: 'node-typed',
    inputs: [Object.assign({ contents: { fp32_contents: floats } }, tensor)],
  }));
  // 16 calls at once on one channel (HTTP/2 streams side by side)
  const many = await Promise.all(Array.from({ length: 16 }, (_, i) => call('ModelInfer', {
    model_name: job.model, id: 'node-' + i, inputs: [tensor], raw_input_contents: [raw],
  })));
  result.concurrent = many.map(outputs);
  // errors come back as gRPC status codes with braidd's message
  result.unknown_model = await call('ModelInfer', {
    model_name: 'no_such_model', inputs: [tensor], raw_input_contents: [raw],
  });
  result.bad_shape = await call('ModelInfer', {
    model_name: job.model, inputs: [Object.assign({}, tensor, { shape: [1, 3, 32] })],
    raw_input_contents: [raw],
  });

  // ModelStreamInfer: a bidirectional stream; 8 requests (the 4th for an unknown model),
  // each answered once, in order, an error as error_message with its id
  result.stream = await new Promise((resolve) => {
    const got = [];
    const stream = client.ModelStreamInfer({ deadline: new Date(Date.now() + 30000) });
    stream.on('data', (r) => got.push(r.error_message
      ? { id: r.infer_response ? r.infer_response.id : '', error: r.error_message }
      : outputs({ reply: r.infer_response })));
    stream.on('error', (e) => resolve({ responses: got, error: { code: e.code, details: e.details } }));
    stream.on('end', () => resolve({ responses: got }));
    for (let i = 0; i < 8; i++) {
      stream.write({ model_name: i === 3 ? 'no_such_model' : job.model, id: 'node-stream-' + i,
                     inputs: [tensor], raw_input_contents: [raw] });
    }
    stream.end();
  });

  client.close();
  process.stdout.write(JSON.stringify(result) + '\n');
}

main().catch((e) => { console.error(e); process.exit(1); });
