#!/usr/bin/python3
"""systemd/braidd.service passes `systemd-analyze verify` without a single line of output,
alone and with the uploads drop-in; it keeps the directives docs/operations.md promises;
and its offline security exposure stays low.

`systemd-analyze verify` exits 0 on unknown keys and unparsable values (it only prints a
warning), so any output at all fails the test. A negative control proves the check can fail.

usage: verify_unit.py SOURCE_ROOT BRAIDD_BINARY
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

EXPOSURE_MAX = 2.0

REQUIRED = {
    "Type": "notify", "NotifyAccess": "main", "WatchdogSec": "30",
    "ExecReload": "/bin/kill -HUP $MAINPID", "Restart": "on-failure",
    "User": "braid", "Environment": "OMP_WAIT_POLICY=passive",
    "NoNewPrivileges": "yes", "ProtectSystem": "strict", "ProtectHome": "yes",
    "PrivateTmp": "yes", "PrivateDevices": "yes", "ProtectKernelTunables": "yes",
    "ProtectKernelModules": "yes", "ProtectKernelLogs": "yes", "ProtectControlGroups": "yes",
    "ProtectClock": "yes", "ProtectHostname": "yes",
    "RestrictAddressFamilies": "AF_INET AF_INET6 AF_UNIX", "RestrictNamespaces": "yes",
    "LockPersonality": "yes", "MemoryDenyWriteExecute": "no",
    "SystemCallArchitectures": "native", "CapabilityBoundingSet": "",
    "ReadOnlyPaths": "/var/lib/braid/models",
    # resource limits (docs/security.md, "systemd")
    "TasksMax": "512", "LimitNOFILE": "16384", "MemoryMax": "8G",
}

failures = []


def fail(msg):
    failures.append(msg)
    print("FAIL:", msg)


def directives(text):
    out = {}
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith(("#", "[")) or "=" not in line:
            continue
        k, v = line.split("=", 1)
        out.setdefault(k, []).append(v)
    return out


def verify(unit_path):
    """Output of systemd-analyze verify (stdout + stderr), and its exit code."""
    p = subprocess.run(["systemd-analyze", "verify", unit_path], capture_output=True,
                       text=True, timeout=60)
    return (p.stdout + p.stderr).strip(), p.returncode


def read(path):
    with open(path) as f:
        return f.read()


def main():
    root, braidd = sys.argv[1], os.path.abspath(sys.argv[2])
    if shutil.which("systemd-analyze") is None:
        print("systemd-analyze not found: run scripts/setup.sh (package systemd)")
        return 1
    src = os.path.join(root, "systemd", "braidd.service")
    text = read(src)

    d = directives(text)
    for k, v in REQUIRED.items():
        if v not in d.get(k, []):
            fail(f"braidd.service: expected {k}={v}, found {d.get(k)}")
    exec_start = d.get("ExecStart", [""])[0]
    if not exec_start.startswith("/usr/local/bin/braidd --config /etc/braid/braidd.json"):
        fail(f"ExecStart is {exec_start!r}")
    stop = int(d.get("TimeoutStopSec", ["0"])[0])
    cfg = json.loads(read(os.path.join(root, "systemd", "braidd.json")))
    # braidd's own hard stop is exit_timeout_secs + 10 s (docs/operations.md, SIGTERM): the
    # unit must leave it that long, or systemd SIGKILLs a shutdown braidd would have ended.
    if "drain_timeout_ms" in cfg:
        fail("braidd.json: drain_timeout_ms is deprecated, use exit_timeout_secs")
    if stop <= cfg["exit_timeout_secs"] + 10:
        fail(f"TimeoutStopSec={stop} s must exceed exit_timeout_secs={cfg['exit_timeout_secs']} + 10 s")
    if cfg.get("allow_uploads") is not False:
        fail("braidd.json: the example keeps uploads off (the unit mounts the repository read-only)")

    with tempfile.TemporaryDirectory() as tmp:
        unit = os.path.join(tmp, "braidd.service")
        # the unit names the installed binary; verify checks it exists, so point it at the
        # one just built
        with open(unit, "w") as f:
            f.write(text.replace("/usr/local/bin/braidd", braidd))

        out, rc = verify(unit)
        print(f"verify braidd.service: rc={rc} output={out!r}")
        if rc != 0 or out:
            fail(f"systemd-analyze verify braidd.service printed:\n{out}")

        dropin_dir = os.path.join(tmp, "braidd.service.d")
        os.mkdir(dropin_dir)
        shutil.copy(os.path.join(root, "systemd", "braidd-uploads.conf"),
                    os.path.join(dropin_dir, "uploads.conf"))
        out, rc = verify(unit)
        print(f"verify with uploads drop-in: rc={rc} output={out!r}")
        if rc != 0 or out:
            fail(f"systemd-analyze verify with braidd-uploads.conf printed:\n{out}")
        dd = directives(read(os.path.join(dropin_dir, "uploads.conf")))
        if dd.get("ReadOnlyPaths") != [""] or dd.get("ReadWritePaths") != ["/var/lib/braid/models"]:
            fail(f"braidd-uploads.conf must reset ReadOnlyPaths= and set ReadWritePaths: {dd}")

        p = subprocess.run(["systemd-analyze", "security", "--offline=yes", unit],
                           capture_output=True, text=True, timeout=60)
        m = re.search(r"Overall exposure level for braidd.service: ([0-9.]+)", p.stdout + p.stderr)
        if not m:
            fail(f"systemd-analyze security gave no exposure level:\n{p.stdout}{p.stderr}")
        else:
            print(f"security exposure: {m.group(1)} (limit {EXPOSURE_MAX})")
            if float(m.group(1)) > EXPOSURE_MAX:
                fail(f"exposure {m.group(1)} > {EXPOSURE_MAX}: hardening was weakened")
        os.remove(os.path.join(dropin_dir, "uploads.conf"))

        # negative control: the same check must catch a typo and a bad value
        bad = os.path.join(tmp, "bad.service")
        with open(bad, "w") as f:
            f.write(read(unit).replace("ProtectSystem=strict", "ProtectSystem=bogus")
                              .replace("LockPersonality=yes", "LockPersonalty=yes"))
        out, rc = verify(bad)
        if "bogus" not in out or "LockPersonalty" not in out:
            fail(f"negative control: verify did not report the planted errors: {out!r}")

    print(f"{len(failures)} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
