"""The venv of NVIDIA's tritonclient (scripts/fetch_tritonclient.sh): a test run by Debian's
python3 calls in_client_venv() before importing tritonclient, and is re-executed in that venv,
or skipped (exit 77, saying why) when there is none. Imports nothing of braid's: the gRPC test
must import tritonclient.grpc before braidd_fixture (see there)."""
import os
import sys

VENV_PY = os.environ.get("BRAID_CLIENTS_PYTHON") or os.path.expanduser(
    "~/.cache/braid/clients-venv/bin/python")


def in_client_venv():
    try:
        import tritonclient  # noqa: F401
        return
    except ImportError:
        pass
    if os.environ.get("BRAID_TRITONCLIENT_REEXEC") or not os.access(VENV_PY, os.X_OK):
        print("SKIPPED: tritonclient not installed (run scripts/fetch_tritonclient.sh, or set "
              "BRAID_CLIENTS_PYTHON)", file=sys.stderr)
        sys.exit(77)
    os.environ["BRAID_TRITONCLIENT_REEXEC"] = "1"
    os.execv(VENV_PY, [VENV_PY] + sys.argv)
