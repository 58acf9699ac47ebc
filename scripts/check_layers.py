#!/usr/bin/env python3
"""Check that braid's C tree keeps its layers (docs/architecture.md, "Layers").

    scripts/check_layers.py [ROOT]      ROOT: the source tree (default: this checkout)

Reads every .c and .h under the layer folders and fails (exit 1, one line per problem) when:
  - an include is not spelled from the root ("core/error.h", never "../error.h" or "error.h");
  - an include runs upward or sideways: a folder includes only its own floor's folder or the
    floors below it (tests/ may include anything);
  - inside daemon/, a room includes a room (or a header of one) that DAEMON_ROOMS does not
    let it include, or a file of the daemon's root other than its shared headers, or a room
    other than a port's includes a port's wire schema (PORT_SCHEMAS); a folder of daemon/
    that is no room is a problem too;
  - a file outside backends/X includes backends/X, or uses a name backends/X's headers declare
    with the engine's prefix (bd_X_..., X_...), except the engine registry
    (runtime/engines.c), the tests and the benchmarks;
  - files include each other in a loop (module = a .c, its .h and its _internal.h);
  - a header's guard is not BD_<PATH>_H, or two files share a name;
  - a function declared in an _internal.h header starts with bd_ (that prefix marks a
    module's API, declared in its public header; helpers shared by a module's files are
    named after the module without it: plan_build, served_create).
Generated headers (proto/*.pb.h, ...) live in the build tree; they are checked by their path.
"""
import os
import re
import sys

# floor of each top-level folder: a file may include its own folder and lower floors only
FLOORS = {
    "core": 0, "proto": 0,
    "partitioner": 1, "backends": 1, "client": 1,
    "runtime": 2,
    "daemon": 3, "cli": 3, "bench": 3,
    "tests": 4,
}
# The rooms inside daemon/ (docs/architecture.md, "The daemon's rooms") and what each may
# include besides itself and DAEMON_SHARED: "room/" is a whole room, "room/file.h" one header
# of it. The root (main.c and the steps it calls) may include every room; no room includes
# the root except for DAEMON_SHARED. The floors this keeps: http/ and rest/ know nothing of
# gRPC (a port reaches the handlers through dispatch/); infer/, stats/, sched/, registry/,
# security/ and dispatch/ know nothing of the ports (grpc/, rest/, http/); infer/ and
# security/ know nothing of the rest of the daemon.
DAEMON_SHARED = ("daemon/config.h", "daemon/log.h")
DAEMON_ROOMS = {
    "security": [],
    "infer":    [],
    "registry": ["infer/labels.h", "stats/metrics.h", "sched/sched_queue.h"],
    "sched":    ["registry/"],
    "stats":    ["registry/"],
    "http":     ["security/", "stats/", "registry/"],
    # what a port hands the handlers (dispatch/dispatch.h): the method, the request, the
    # answer's callback; it knows no port
    "dispatch": [],
    "grpc":     ["dispatch/", "security/", "stats/", "registry/", "sched/", "infer/"],
    # rest/ hands every operation over through dispatch/ (an inference as the neutral request,
    # infer/infer_request.h) and knows nothing of the gRPC server
    "rest":     ["http/", "dispatch/", "security/", "stats/", "registry/", "infer/"],
}
# The ports' wire schemas (generated into the build tree): only the ports read them, so the
# rooms that know nothing of the ports never see a protobuf message either (infer/ binds the
# neutral request, infer/infer_request.h).
PORT_SCHEMAS = ("proto/inference.pb.h", "proto/health.pb.h")
PORT_ROOMS = ("grpc", "rest")
ENGINE_REGISTRY = "runtime/engines.c"
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
GUARD = re.compile(r"^#ifndef (\w+)\n#define \1\b", re.M)
# comments, string and character literals, and #include lines: not code that names anything
NOT_CODE = re.compile(r'/\*.*?\*/|//[^\n]*|"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'|^\s*#\s*include[^\n]*',
                      re.S | re.M)
IDENT = re.compile(r"\b[A-Za-z_]\w*\b")


def sources(root):
    for top in sorted(FLOORS):
        for dirpath, dirnames, filenames in os.walk(os.path.join(root, top)):
            dirnames[:] = sorted(d for d in dirnames if d not in ("corpus", "fixtures"))
            for name in sorted(filenames):
                if name.endswith((".c", ".h")):
                    yield os.path.relpath(os.path.join(dirpath, name), root)


def engine_of(path):
    parts = path.split("/")
    return parts[1] if parts[0] == "backends" and len(parts) > 2 else None


def module(path):
    """A .c, its .h and its private _internal.h are one module."""
    base = os.path.splitext(path)[0]
    return base[: -len("_internal")] if base.endswith("_internal") else base


def internal_functions(text):
    """Names of the functions TEXT (a header) declares or defines at file scope."""
    text = re.sub(r"/\*.*?\*/|//[^\n]*", " ", text, flags=re.S)
    text = re.sub(r'"(?:\\.|[^"\\\n])*"', '""', text)
    text = re.sub(r"^\s*#(?:[^\n]*\\\n)*[^\n]*", " ", text, flags=re.M)
    names, stmt, depth = [], [], 0
    for c in text:
        if depth:
            depth += {"{": 1, "}": -1}.get(c, 0)
            continue
        if c in ";{":
            s = "".join(stmt).strip()
            stmt = []
            depth = 1 if c == "{" else 0
            m = re.match(r"[^()]*?\b([A-Za-z_]\w*)\s*\(", s)
            if m and not s.startswith("typedef"):
                names.append(m.group(1))
            elif c == "{" and "(" not in s:
                depth, stmt = 0, []     # struct/enum/union body: its members are not functions
        else:
            stmt.append(c)
    return names


def find_cycles(edges):
    """Strongly connected components with more than one module (Tarjan, iterative)."""
    index, low, on_stack, stack, cycles, counter = {}, {}, set(), [], [], [0]
    for start in sorted(edges):
        if start in index:
            continue
        work = [(start, iter(sorted(edges.get(start, ()))))]
        index[start] = low[start] = counter[0]
        counter[0] += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter[0]
                    counter[0] += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(edges.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                comp = []
                while True:
                    m = stack.pop()
                    on_stack.discard(m)
                    comp.append(m)
                    if m == node:
                        break
                if len(comp) > 1:
                    cycles.append(sorted(comp))
    return cycles


def code_names(text):
    return set(IDENT.findall(NOT_CODE.sub(" ", text)))


def engine_names(root, files):
    """Per engine X: the names its headers declare with X's prefix (bd_X_..., X_...)."""
    names = {}
    for path in files:
        engine = engine_of(path)
        if engine and path.endswith(".h"):
            with open(os.path.join(root, path), encoding="utf-8", errors="replace") as f:
                found = code_names(f.read())
            prefixes = (f"bd_{engine}_", f"{engine}_")
            names.setdefault(engine, set()).update(n for n in found if n.startswith(prefixes))
    return names


def daemon_room(path):
    """The room of a file inside daemon/ ("" for the daemon's root), None outside daemon/."""
    parts = path.split("/")
    if parts[0] != "daemon":
        return None
    return parts[1] if len(parts) > 2 else ""


def daemon_problem(path, inc):
    """Why PATH may not include INC inside daemon/ (None: it may)."""
    room, target = daemon_room(path), daemon_room(inc)
    if room and room in DAEMON_ROOMS and room not in PORT_ROOMS and inc in PORT_SCHEMAS:
        return (f'{path}: include "{inc}": {room}/ knows nothing of the ports, their wire '
                f'schemas included (only {", ".join(r + "/" for r in PORT_ROOMS)} read them)')
    if room is None or target is None or room == "" or room == target or room not in DAEMON_ROOMS:
        return None
    if target == "":
        if inc in DAEMON_SHARED:
            return None
        return (f'{path}: include "{inc}": of the daemon\'s root a room includes only '
                f'{", ".join(DAEMON_SHARED)}')
    allowed = DAEMON_ROOMS[room]
    if target + "/" in allowed or inc[len("daemon/"):] in allowed:
        return None
    return (f'{path}: include "{inc}": {room}/ may not include {target}/ (daemon/{room}/ may '
            f'include {", ".join(allowed) or "no other room"})')


def check(root):
    problems = []
    files = list(sources(root))
    declared = engine_names(root, files)
    edges = {}
    seen_names = {}
    for path in files:
        seen_names.setdefault(os.path.basename(path), []).append(path)
        top = path.split("/")[0]
        room = daemon_room(path)
        if room and room not in DAEMON_ROOMS:
            problems.append(f"{path}: daemon/{room}/ is no room of daemon/ (name it in "
                            f"DAEMON_ROOMS with what it may include)")
        with open(os.path.join(root, path), encoding="utf-8", errors="replace") as f:
            text = f.read()
        for inc in INCLUDE.findall(text):
            target_top = inc.split("/")[0]
            if "/" not in inc or target_top not in FLOORS or ".." in inc.split("/"):
                problems.append(f'{path}: include "{inc}": spell it from the root '
                                f'("core/error.h")')
                continue
            if not os.path.isfile(os.path.join(root, inc)) and not inc.endswith(".pb.h"):
                problems.append(f'{path}: include "{inc}": no such file')
                continue
            if target_top != top and FLOORS[target_top] >= FLOORS[top]:
                problems.append(f'{path}: include "{inc}" runs up or sideways '
                                f"({top}/ is floor {FLOORS[top]}, {target_top}/ is floor "
                                f"{FLOORS[target_top]})")
            why = daemon_problem(path, inc)
            if why:
                problems.append(why)
            engine = engine_of(inc)
            if (engine and engine != engine_of(path) and path != ENGINE_REGISTRY
                    and top not in ("tests", "bench")):
                problems.append(f'{path}: include "{inc}" names the {engine} engine outside '
                                f"backends/{engine}/ (reach engines through core/backend.h)")
            if module(inc) != module(path):
                edges.setdefault(module(path), set()).add(module(inc))
        if top not in ("tests", "bench") and path != ENGINE_REGISTRY:
            used = code_names(text)
            for engine, names in sorted(declared.items()):
                if engine != engine_of(path):
                    for name in sorted(used & names):
                        problems.append(f"{path}: {name} names the {engine} engine outside "
                                        f"backends/{engine}/ (reach engines through "
                                        f"core/backend.h)")
        if path.endswith(".h"):
            want = "BD_" + re.sub(r"[^A-Za-z0-9]", "_", path[:-2]).upper() + "_H"
            m = GUARD.search(text)
            if not m or m.group(1) != want:
                problems.append(f"{path}: include guard should be {want}")
        if path.endswith("_internal.h"):
            for name in internal_functions(text):
                if name.startswith("bd_"):
                    problems.append(f"{path}: {name} is internal: name it after the module "
                                    f"without bd_ (bd_ marks a module's public API)")
    for cycle in find_cycles(edges):
        problems.append("include loop: " + " <-> ".join(cycle))
    for name, paths in sorted(seen_names.items()):
        if len(paths) > 1:
            problems.append(f"two files named {name}: " + ", ".join(paths))
    return problems


def main(argv):
    if len(argv) > 1 and argv[1] in ("-h", "--help"):
        print(__doc__.strip())
        return 0
    root = argv[1] if len(argv) > 1 else os.path.join(os.path.dirname(__file__), "..")
    problems = check(root)
    for p in problems:
        print(p)
    if problems:
        print(f"check_layers: {len(problems)} problem(s)", file=sys.stderr)
        return 1
    print(f"check_layers: {len(list(sources(root)))} files keep their layers")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
