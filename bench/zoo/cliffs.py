#!/usr/bin/python3
"""The cliff map: per zoo model, oneDNN reference kernels and nodes left to ONNX Runtime.

    /usr/bin/python3 bench/zoo/cliffs.py --braid build/cli/braid [--zoo DIR] [--threads N]
                                         [--verbose] NAME [NAME ...]

NAME is a manifest entry (gen_zoo.py's models; gen_zoo_families.py's models and their
variants, e.g. regnety_400mf.b8). For each it runs, at the entry's own inputs (so the plan
is compiled for its shapes),

    ONEDNN_VERBOSE=1 braid bench DIR/<onnx> --input ... --threads N --warmup 1 --iters 1
    ONEDNN_VERBOSE=1 braid bench ...                                 --warmup 1 --iters 2

and counts oneDNN's `exec` lines; the difference between the two is one inference, the rest
is load (weight reorders). Per run and at load it counts the executions, the layout
reorders among them and those whose implementation starts with `ref`, grouped by primitive,
implementation, algorithm, memory formats and shape. The nodes on ONNX Runtime come from
braid bench's `subgraphs:` line (at the entry's shapes); why they are there from `braid
inspect DIR/<onnx>` (planned with every dynamic dim = 1), grouped by op and reason.

Per model it prints the groups, then one machine-readable line

    CLIFF model=NAME exec_per_run=N reorders_per_run=N ref_per_run=N ref_at_load=N
          ref_kernels_dims1=N subgraphs=N ort_subgraphs=N ort_nodes=N ort_nodes_dims1=N
          nodes_dims1=N [error=...]

(ort_nodes=-1: braid bench printed no subgraphs line). ref_per_run counts every oneDNN
execution whose implementation starts with `ref`, the cliff guard's allowlist included
(oneDNN 2.6's RNN is named `ref`); ref_kernels_dims1 is the guard's own count, the reference
kernels it did not accept (braid inspect's "reference kernel(s)", docs/partitioning.md "The
cliff guard"). No timing is read: run it on any machine, at any load; but name the CPU, since
oneDNN picks kernels by ISA.
Exit status: 0 if every model ran, 1 if braid failed on any, 2 on bad arguments; with
--fail-on-ref, 3 when every model ran but one still runs a reference kernel the guard does
not accept (ref_kernels_dims1 > 0).
"""

import argparse
import collections
import json
import os
import re
import subprocess
import sys


def default_dir():
    return os.environ.get("BRAID_ZOO_DIR") or os.path.join(
        os.path.expanduser("~"), ".cache", "braid", "zoo")


def md_formats(mds):
    """'src_f32::blocked:aBcd8b:f0 wei_f32::blocked:abcd:f0' -> 'src:aBcd8b wei:abcd'."""
    out = []
    for md in mds.split():
        parts = md.split(":")
        arg = parts[0].split("_")[0]
        tag = parts[3] if len(parts) > 3 else "?"
        out.append("%s:%s" % (arg, tag))
    return " ".join(out)


def parse_verbose(text):
    """Returns (exec count, reorder count, Counter of ref: groups, Counter of all groups)."""
    n_exec, n_reorder, refs, every = 0, 0, collections.Counter(), collections.Counter()
    for line in text.splitlines():
        f = line.split(",")
        if len(f) < 10 or f[0] not in ("onednn_verbose", "dnnl_verbose") or f[1] != "exec":
            continue
        n_exec += 1
        prim, impl = f[3], f[4]
        if prim == "reorder":
            n_reorder += 1
        alg = next((a for a in f[8].split() if a.startswith("alg:")), "")
        key = "%s %s %s %s [%s]" % (prim, impl, alg, md_formats(f[6]), f[9])
        every[key] += 1
        if impl.startswith("ref"):
            refs[key] += 1
    return n_exec, n_reorder, refs, every


def parse_inspect(text):
    """Returns (nodes on ort, nodes after fusion, Counter of (op, reason) for ort nodes)."""
    m = re.search(r"^\s*ort\s+(\d+) of (\d+) nodes", text, re.M)
    ort, total = (int(m.group(1)), int(m.group(2))) if m else (0, 0)
    why = collections.Counter()
    for line in text.splitlines():
        m = re.match(r"^\s+\S+\s+(\S+)\s+-> ort\s+(.*)$", line)
        if m:
            reason = m.group(2)
            # "dynamic shape: 'x' has shape [?] until run time" -> "dynamic shape"
            why[(m.group(1), reason.split(":")[0] if ":" in reason else reason)] += 1
    return ort, total, why


def parse_subgraphs(text):
    """braid bench's 'subgraphs: N (dnnl 3, ort 5, ...)' -> (ort nodes, ort subgraphs, all
    subgraphs); None if the line is missing."""
    m = re.search(r"^subgraphs: (\d+) \((.*)\)", text, re.M)
    if not m:
        return None
    ort = [int(n) for n in re.findall(r"\bort (\d+)", m.group(2))]
    return sum(ort), len(ort), int(m.group(1))


def bench(args, model, entry, iters):
    """ONEDNN_VERBOSE=1 braid bench, 1 warm-up and ITERS runs: (returncode, output)."""
    cmd = [args.braid, "bench", model, "--threads", str(args.threads), "--warmup", "1",
           "--iters", str(iters)]
    for t in entry["inputs"]:
        cmd += ["--input", "%s=%s" % (t["name"], os.path.join(args.zoo, t["file"]))]
    env = dict(os.environ, ONEDNN_VERBOSE="1")
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                       env=env, timeout=args.timeout)
    return p.returncode, p.stdout


def cliffs(args, name, entry):
    model = os.path.join(args.zoo, entry.get("model") or entry["onnx"])
    rc1, out1 = bench(args, model, entry, 1)        # load + 2 runs
    rc2, out2 = ((rc1, out1) if rc1 else bench(args, model, entry, 2))   # load + 3 runs
    error = ""
    if rc1 or rc2:
        lines = [ln for ln in (out2 if rc2 else out1).splitlines()
                 if ln.strip() and "_verbose," not in ln]
        error = lines[-1] if lines else "exit status %d" % (rc1 or rc2)
    e1, r1, refs1, all1 = parse_verbose(out1)
    e2, r2, refs2, all2 = parse_verbose(out2)
    run_exec, run_reorders, run_refs = e2 - e1, r2 - r1, refs2 - refs1
    load_refs = collections.Counter({k: v - 2 * run_refs[k] for k, v in refs1.items()
                                     if v - 2 * run_refs[k] > 0})
    placed = parse_subgraphs(out2 if not rc2 else out1)
    q = subprocess.run([args.braid, "inspect", model], stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, text=True, timeout=args.timeout)
    ort1, total, why = parse_inspect(q.stdout)
    m = re.search(r"(\d+) reference kernel\(s\)", q.stdout)
    guard_refs = int(m.group(1)) if m else -1
    if q.returncode != 0 and not error:
        error = "inspect: " + (q.stdout.strip().splitlines() or ["exit status %d" % q.returncode])[-1]
    for k, v in run_refs.most_common():
        print("  ref/run  %4d  %s" % (v, k))
    for k, v in load_refs.most_common():
        print("  ref/load %4d  %s" % (v, k))
    for (op, reason), v in sorted(why.items(), key=lambda kv: -kv[1]):
        print("  ort(dims=1) %4d  %-18s %s" % (v, op, reason))
    if args.verbose:
        for k, v in sorted((all2 - all1).items()):
            print("  run %4d  %s" % (v, k))
        print(q.stdout)
    ort, ort_sg, sg = placed if placed else (-1, -1, -1)
    print("CLIFF model=%s exec_per_run=%d reorders_per_run=%d ref_per_run=%d ref_at_load=%d "
          "ref_kernels_dims1=%d subgraphs=%d ort_subgraphs=%d ort_nodes=%d ort_nodes_dims1=%d "
          "nodes_dims1=%d%s" % (
              name, run_exec, run_reorders, sum(run_refs.values()), sum(load_refs.values()),
              guard_refs, sg, ort_sg, ort, ort1, total,
              (" error=" + error.replace("\n", " ")) if error else ""), flush=True)
    if error:
        return 1
    return 3 if args.fail_on_ref and guard_refs != 0 else 0


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--braid", required=True, help="the braid CLI (build/cli/braid)")
    ap.add_argument("--zoo", default=default_dir(), help="zoo directory (default: %(default)s)")
    ap.add_argument("--threads", type=int, default=1, help="braid's threads (default: 1)")
    ap.add_argument("--timeout", type=int, default=600, help="seconds per braid call")
    ap.add_argument("--verbose", action="store_true", help="also print every primitive of a run (grouped) and braid inspect's report")
    ap.add_argument("--fail-on-ref", action="store_true",
                    help="exit 3 when a model still runs a reference kernel the cliff guard does not accept")
    ap.add_argument("models", nargs="+", metavar="NAME")
    args = ap.parse_args(argv)
    try:
        with open(os.path.join(args.zoo, "manifest.json")) as f:
            manifest = json.load(f)["models"]
    except (OSError, ValueError, KeyError) as e:
        print("cliffs: cannot read %s/manifest.json (%s)" % (args.zoo, e), file=sys.stderr)
        return 2
    missing = [n for n in args.models if n not in manifest]
    if missing:
        print("cliffs: not in the manifest: %s" % " ".join(missing), file=sys.stderr)
        return 2
    status = 0
    for name in args.models:
        print("cliffs %s" % name, flush=True)
        rc = cliffs(args, name, manifest[name])
        status = 1 if 1 in (rc, status) else max(status, rc)
    return status


if __name__ == "__main__":
    sys.exit(main())
