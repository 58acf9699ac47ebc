#!/usr/bin/env python3
"""Generate the bundled demo model (a tiny CNN classifier) and its reference I/O.

Writes daemon/demo-repository/tinycnn/1/model.onnx plus tests/fixtures/demo/{input,output}.npy.
The files are small and committed; rerun this script only to change the demo.
Run with Debian's interpreter: /usr/bin/python3 tests/runtime/models/gen_demo.py
"""
import json
import os

import numpy as np
import torch

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))


class TinyCNN(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = torch.nn.Conv2d(3, 8, 3, padding=1)
        self.bn1 = torch.nn.BatchNorm2d(8)
        self.conv2 = torch.nn.Conv2d(8, 16, 3, padding=1, stride=2)
        self.fc = torch.nn.Linear(16, 10)

    def forward(self, image):
        x = torch.relu(self.bn1(self.conv1(image)))
        x = torch.nn.functional.max_pool2d(x, 2)
        x = torch.relu(self.conv2(x))
        x = torch.nn.functional.adaptive_avg_pool2d(x, 1).flatten(1)
        return torch.softmax(self.fc(x), dim=1)


def write_rest_request(image, path):
    """The README's curl example body: IMAGE as a KServe v2 REST infer request (JSON tensor
    data, each value the shortest text that reads back as the same float32)."""
    body = {"inputs": [{"name": "image", "datatype": "FP32", "shape": list(image.shape),
                        "data": [float(str(np.float32(v))) for v in image.ravel()]}]}
    with open(path, "w") as f:
        json.dump(body, f, separators=(",", ":"))
        f.write("\n")


def main():
    torch.manual_seed(20261122)
    model = TinyCNN().eval()
    with torch.no_grad():   # non-trivial batch-norm statistics
        model.bn1.running_mean.uniform_(-0.5, 0.5)
        model.bn1.running_var.uniform_(0.5, 2.0)
    image = torch.rand(1, 3, 32, 32)
    with torch.no_grad():
        probs = model(image)
    out = os.path.join(ROOT, "daemon", "demo-repository", "tinycnn", "1", "model.onnx")
    torch.onnx.export(model, (image,), out, opset_version=13, input_names=["image"],
                      output_names=["probabilities"], dynamic_axes={"image": {0: "batch"},
                                                                     "probabilities": {0: "batch"}})
    fixtures = os.path.join(ROOT, "tests", "fixtures", "demo")
    os.makedirs(fixtures, exist_ok=True)
    np.save(os.path.join(fixtures, "image.npy"), image.numpy())
    np.save(os.path.join(fixtures, "probabilities.npy"), probs.numpy())
    write_rest_request(image.numpy(), os.path.join(fixtures, "infer_request.json"))
    print(f"wrote {out} ({os.path.getsize(out)} bytes) and {fixtures}/*.npy")


if __name__ == "__main__":
    main()
