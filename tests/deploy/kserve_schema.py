#!/usr/bin/env python3
"""A JSON Schema (draft 2020-12) of KServe's custom resources, made from KServe's own Python
SDK (PyPI `kserve`, pinned by scripts/fetch_k8s_schemas.sh).

KServe publishes its CRDs' schemas only in its repository, which no package registry carries.
Its SDK, generated from the same Go types by OpenAPI Generator, does: every model class holds
`openapi_types` (attribute -> type) and `attribute_map` (attribute -> JSON name) as dict
literals, and each required attribute's setter raises "must not be `None`". This script reads
those from the wheel with `ast` (nothing is imported or run) and writes one schema whose $defs
are the SDK's classes, strict like Kubernetes' own `-strict` schemas (no unknown fields); the
Kubernetes types they embed (V1Container, V1Probe, ...) point into the Kubernetes schemas that
kubernetes-validate ships, so a container inside a ServingRuntime is checked as strictly as one
inside a Deployment.

    kserve_schema.py KSERVE_WHEEL K8S_DEFINITIONS_JSON OUT_JSON
"""

import ast
import json
import re
import sys
import zipfile

K8S_DEFS_URI = "https://kubernetes.io/api/_definitions.json"
# kind -> (apiVersion, SDK class): the resources deploy/kserve uses, and their cluster twins
KINDS = {
    "InferenceService": ("serving.kserve.io/v1beta1", "V1beta1InferenceService"),
    "ServingRuntime": ("serving.kserve.io/v1alpha1", "V1alpha1ServingRuntime"),
    "ClusterServingRuntime": ("serving.kserve.io/v1alpha1", "V1alpha1ClusterServingRuntime"),
}
PRIMITIVES = {
    "str": {"type": "string"}, "int": {"type": "integer"}, "float": {"type": "number"},
    "bool": {"type": "boolean"}, "object": {}, "datetime": {"type": "string"},
    "date": {"type": "string"},
}
# SDK names of Kubernetes types whose schema name differs from the class name minus "V1"
K8S_ALIASES = {
    "ResourceQuantity": "io.k8s.apimachinery.pkg.api.resource.Quantity",
    "V1Time": "io.k8s.apimachinery.pkg.apis.meta.v1.Time",
    "KnativeURL": None, "KnativeCondition": None, "KnativeVolatileTime": None,
}


def dict_literal(cls, name):
    for node in cls.body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name
                                                for t in node.targets):
            return ast.literal_eval(node.value)
    raise ValueError("class %s has no %s" % (cls.name, name))


def required_attributes(cls):
    """Attributes whose setter refuses None (OpenAPI Generator's client-side validation)."""
    out = set()
    for node in cls.body:
        if not isinstance(node, ast.FunctionDef):
            continue
        setter = any(isinstance(d, ast.Attribute) and d.attr == "setter" for d in node.decorator_list)
        if setter and "must not be `None`" in ast.get_source_segment(SOURCE[cls.name], node):
            out.add(node.name)
    return out


SOURCE = {}
UNCHECKED = set()


def read_sdk(wheel):
    """{class name: (openapi_types, attribute_map, required attrs)} of kserve/models/*.py."""
    classes = {}
    with zipfile.ZipFile(wheel) as z:
        for name in z.namelist():
            if not re.match(r"kserve/models/[a-z0-9_]+\.py$", name) or name.endswith("__init__.py"):
                continue
            text = z.read(name).decode()
            for node in ast.parse(text).body:
                if isinstance(node, ast.ClassDef) and any(
                        isinstance(n, ast.Assign) and any(getattr(t, "id", "") == "openapi_types"
                                                          for t in n.targets) for n in node.body):
                    SOURCE[node.name] = text
                    classes[node.name] = (dict_literal(node, "openapi_types"),
                                          dict_literal(node, "attribute_map"),
                                          required_attributes(node))
    if not classes:
        raise SystemExit("%s: no model classes under kserve/models/" % wheel)
    return classes


def k8s_ref(name, k8s_defs):
    if name in K8S_ALIASES:
        target = K8S_ALIASES[name]
        return {"$ref": K8S_DEFS_URI + "#/$defs/" + target} if target else {}
    # "K8sIoApiAppsV1DeploymentStrategy": a type of another API group, spelled out
    m = re.match(r"K8sIoApi([A-Z][a-z]+)(V\d+(?:(?:alpha|beta)\d+)?)([A-Z]\w*)$", name)
    if m:
        key = "io.k8s.api.%s.%s.%s" % (m.group(1).lower(), m.group(2).lower(), m.group(3))
        return {"$ref": K8S_DEFS_URI + "#/$defs/" + key} if key in k8s_defs else None
    m = re.match(r"(V\d+(?:(?:alpha|beta)\d+)?)([A-Z]\w*)$", name)
    if not m:
        return None
    version, short = m.group(1).lower(), m.group(2)
    hits = [k for k in k8s_defs if k.endswith("." + version + "." + short)]
    # the core group first, then apimachinery's meta types, then any other group
    for prefix in ("io.k8s.api.core.", "io.k8s.apimachinery.pkg.apis.meta.", "io.k8s."):
        for k in sorted(hits):
            if k.startswith(prefix):
                return {"$ref": K8S_DEFS_URI + "#/$defs/" + k}
    return None


def type_schema(t, classes, k8s_defs, missing):
    t = t.strip()
    if t in PRIMITIVES:
        return dict(PRIMITIVES[t])
    m = re.match(r"list\[(.*)\]$", t)
    if m:
        return {"type": "array", "items": type_schema(m.group(1), classes, k8s_defs, missing)}
    m = re.match(r"dict\(str, (.*)\)$", t)
    if m:
        return {"type": "object",
                "additionalProperties": type_schema(m.group(1), classes, k8s_defs, missing)}
    if t in classes:
        return {"$ref": "#/$defs/" + t}
    if re.match(r"V\d+(alpha|beta)\d+[A-Z]", t) or t.startswith(("Knative", "GithubCom")):
        # a KServe (or Knative, KEDA) type the SDK names but does not ship: left open
        UNCHECKED.add(t)
        return {}
    ref = k8s_ref(t, k8s_defs)
    if ref is None:
        missing.add(t)
        return {}
    return ref


def build(wheel, definitions_path):
    classes = read_sdk(wheel)
    with open(definitions_path) as f:
        k8s_defs = json.load(f)["$defs"]
    missing = set()
    defs = {}
    for name, (types, names, required) in sorted(classes.items()):
        props = {names[a]: type_schema(t, classes, k8s_defs, missing) for a, t in types.items()}
        schema = {"type": "object", "properties": props, "additionalProperties": False}
        req = sorted(names[a] for a in required if a in names)
        if req:
            schema["required"] = req
        defs[name] = schema
    if missing:
        raise SystemExit("kserve_schema.py: SDK types with no schema: %s" % ", ".join(sorted(missing)))
    kinds = {}
    for kind, (api_version, cls) in KINDS.items():
        if cls not in defs:
            raise SystemExit("kserve_schema.py: the SDK has no %s (for %s)" % (cls, kind))
        kinds[kind] = {"allOf": [{"$ref": "#/$defs/" + cls},
                                 {"required": ["apiVersion", "kind", "metadata", "spec"],
                                  "properties": {"apiVersion": {"const": api_version},
                                                 "kind": {"const": kind}}}]}
    return {"$schema": "https://json-schema.org/draft/2020-12/schema",
            "$id": "https://braid.invalid/kserve.schema.json",
            "description": "KServe resources, from the kserve SDK wheel %s" % wheel.rsplit("/", 1)[-1],
            "unchecked": sorted(UNCHECKED), "kinds": kinds, "$defs": defs}


def main():
    if len(sys.argv) != 4:
        raise SystemExit(__doc__)
    schema = build(sys.argv[1], sys.argv[2])
    tmp = sys.argv[3] + ".tmp"
    with open(tmp, "w") as f:
        json.dump(schema, f, indent=1, sort_keys=True)
    import os
    os.replace(tmp, sys.argv[3])
    print("%s: %d classes, kinds %s; left open (named by the SDK, not shipped): %s"
          % (sys.argv[3], len(schema["$defs"]), ", ".join(schema["kinds"]),
             ", ".join(schema["unchecked"]) or "none"))


if __name__ == "__main__":
    main()
