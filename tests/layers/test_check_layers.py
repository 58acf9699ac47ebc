#!/usr/bin/env python3
"""scripts/check_layers.py passes on the real tree and fails on each planted violation.

Copies the tree's C files into a temporary directory, plants one violation at a time
(an upward include, a sideways one, an engine named outside its folder by an include or by
one of its functions, an include loop, a bd_ function in an _internal.h header, a relative
spelling, a wrong guard, a duplicate name; inside daemon/, a room including a room its floor
does not allow or the daemon's root, a room that is no port including a port's wire schema,
and a folder that is no room) and checks that the checker exits 1 and names the problem, and
that it exits 0 on the untouched copy."""
import os
import shutil
import subprocess
import sys
import tempfile

ROOT = os.environ.get("BRAID_SOURCE_ROOT") or os.path.join(os.path.dirname(__file__), "..", "..")
CHECK = os.path.join(ROOT, "scripts", "check_layers.py")
TOPS = ("core", "proto", "partitioner", "backends", "client", "runtime", "daemon", "cli",
        "bench", "tests")


def copy_tree(dst):
    for top in TOPS:
        for dirpath, _, names in os.walk(os.path.join(ROOT, top)):
            for n in names:
                if n.endswith((".c", ".h")):
                    src = os.path.join(dirpath, n)
                    rel = os.path.relpath(src, ROOT)
                    os.makedirs(os.path.join(dst, os.path.dirname(rel)), exist_ok=True)
                    shutil.copy(src, os.path.join(dst, rel))


def run(root):
    p = subprocess.run([sys.executable, CHECK, root], capture_output=True, text=True, timeout=60)
    return p.returncode, p.stdout + p.stderr


def append(root, rel, text):
    with open(os.path.join(root, rel), "a") as f:
        f.write(text)


def write(root, rel, text):
    os.makedirs(os.path.dirname(os.path.join(root, rel)), exist_ok=True)
    with open(os.path.join(root, rel), "w") as f:
        f.write(text)


# (name, how to plant it, text the report must contain)
PLANTS = [
    ("upward include", lambda r: append(r, "core/error.c", '#include "runtime/model.h"\n'),
     'core/error.c: include "runtime/model.h" runs up or sideways'),
    ("sideways include", lambda r: append(r, "partitioner/passes/partition.c",
                                          '#include "backends/dnnl/dnnl_backend.h"\n'),
     "runs up or sideways"),
    ("engine named outside its folder",
     lambda r: append(r, "runtime/plan.c", '#include "backends/ort/ort_backend.h"\n'),
     "names the ort engine outside backends/ort/"),
    ("engine function named outside its folder",
     lambda r: append(r, "daemon/stats/status_json.c", "const char *bd_ort_version(void);\n"
                      "const char *engine_version(void) { return bd_ort_version(); }\n"),
     "daemon/stats/status_json.c: bd_ort_version names the ort engine outside backends/ort/"),
    ("include loop",
     lambda r: (write(r, "core/loop_a.h", '#ifndef BD_CORE_LOOP_A_H\n#define BD_CORE_LOOP_A_H\n'
                      '#include "core/loop_b.h"\n#endif\n'),
                write(r, "core/loop_b.h", '#ifndef BD_CORE_LOOP_B_H\n#define BD_CORE_LOOP_B_H\n'
                      '#include "core/loop_a.h"\n#endif\n')),
     "include loop: core/loop_a <-> core/loop_b"),
    ("loop between the TensorFlow translator and its op mappers",
     lambda r: append(r, "partitioner/tf/tf_ops.c", '#include "partitioner/tf/tf_translate.h"\n'),
     "include loop: partitioner/tf/tf_ops <-> partitioner/tf/tf_translate"),
    ("public prefix on an internal function",
     lambda r: append(r, "runtime/plan_internal.h",
                      "static inline int bd_plan_peek(const void *p)\n"
                      "{\n    return p != 0;\n}\n"),
     "runtime/plan_internal.h: bd_plan_peek is internal"),
    ("relative spelling", lambda r: append(r, "core/arena.c", '#include "error.h"\n'),
     'include "error.h": spell it from the root'),
    ("wrong guard",
     lambda r: write(r, "core/guarded.h", "#ifndef GUARDED_H\n#define GUARDED_H\n#endif\n"),
     "core/guarded.h: include guard should be BD_CORE_GUARDED_H"),
    ("duplicate name", lambda r: write(r, "daemon/arena.c", "int x;\n"),
     "two files named arena.c"),
    # the floors inside daemon/ (DAEMON_ROOMS)
    ("HTTP server that knows gRPC",
     lambda r: append(r, "daemon/http/http_server.c", '#include "daemon/grpc/server.h"\n'),
     'daemon/http/http_server.c: include "daemon/grpc/server.h": http/ may not include grpc/'),
    ("request binding that knows a port",
     lambda r: append(r, "daemon/infer/infer_bind.c", '#include "daemon/rest/rest_infer.h"\n'),
     'daemon/infer/infer_bind.c: include "daemon/rest/rest_infer.h": infer/ may not include rest/'),
    ("request binding that knows the gRPC messages",
     lambda r: append(r, "daemon/infer/infer_bind.c", '#include "proto/inference.pb.h"\n'),
     'daemon/infer/infer_bind.c: include "proto/inference.pb.h": infer/ knows nothing of the '
     "ports"),
    ("REST port that knows the gRPC server",
     lambda r: append(r, "daemon/rest/rest_server.c", '#include "daemon/grpc/server.h"\n'),
     'daemon/rest/rest_server.c: include "daemon/grpc/server.h": rest/ may not include grpc/'),
    ("dispatch that knows a port",
     lambda r: append(r, "daemon/dispatch/dispatch.c", '#include "daemon/grpc/server.h"\n'),
     'daemon/dispatch/dispatch.c: include "daemon/grpc/server.h": dispatch/ may not include '
     "grpc/"),
    ("renderer that knows the gRPC port",
     lambda r: append(r, "daemon/stats/status_json.c", '#include "daemon/grpc/status_map.h"\n'),
     "stats/ may not include grpc/"),
    ("registry that knows more of the scheduler than its queue",
     lambda r: append(r, "daemon/registry/registry.c", '#include "daemon/sched/scheduler.h"\n'),
     'daemon/registry/registry.c: include "daemon/sched/scheduler.h": registry/ may not '
     "include sched/"),
    ("room that includes the daemon's assembly",
     lambda r: append(r, "daemon/sched/scheduler.c", '#include "daemon/security.h"\n'),
     'daemon/sched/scheduler.c: include "daemon/security.h": of the daemon\'s root a room '
     "includes only"),
    ("folder of daemon/ that is no room", lambda r: write(r, "daemon/attic/old.c", "int x;\n"),
     "daemon/attic/old.c: daemon/attic/ is no room of daemon/"),
]


def main():
    failures = 0
    with tempfile.TemporaryDirectory() as clean:
        copy_tree(clean)
        rc, out = run(clean)
        if rc != 0:
            print(f"FAIL: the real tree does not pass:\n{out}")
            return 1
        print("ok: the real tree passes")
        for name, plant, expect in PLANTS:
            with tempfile.TemporaryDirectory() as tmp:
                shutil.copytree(clean, tmp, dirs_exist_ok=True)
                plant(tmp)
                rc, out = run(tmp)
                if rc == 1 and expect in out:
                    print(f"ok: planted {name} is reported")
                else:
                    failures += 1
                    print(f"FAIL: planted {name}: exit {rc}, expected '{expect}' in:\n{out}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
