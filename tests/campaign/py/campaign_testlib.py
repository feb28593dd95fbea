"""Shared helpers of the campaign tests: where the script, the build and the test app are (ctest
passes them in the environment) and how to call llamp-campaign."""
import os
import subprocess
import sys
import tempfile

SCRIPT = os.environ.get("LLAMP_CAMPAIGN_SCRIPT", "")
BUILD_DIR = os.environ.get("LLAMP_BUILD_DIR", "")
TEST_APP = os.environ.get("LLAMP_TEST_APP", "")
MPIEXEC = os.environ.get("LLAMP_TEST_MPIEXEC", "mpiexec.mpich")

sys.path.insert(0, os.path.dirname(SCRIPT) if SCRIPT else "")


def campaign(*args, timeout=600, check=True):
    """Runs scripts/llamp-campaign; returns the CompletedProcess (text output)."""
    cmd = ["/usr/bin/python3", SCRIPT, *args]
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    if check and out.returncode != 0:
        raise AssertionError(f"{' '.join(cmd)} exited {out.returncode}\nstdout:\n{out.stdout}\nstderr:\n{out.stderr}")
    return out


def hand_made_params(directory):
    """A parameter file for tests that must not spend time measuring."""
    path = os.path.join(directory, "params.json")
    with open(path, "w") as f:
        f.write('{"format": "llamp-loggp", "version": 1, "L_ns": 200, "o_ns": 100, "g_ns": 0, '
                '"G_ns_per_byte": 0.1, "S_bytes": 8192}\n')
    return path


def temp_dir(test):
    d = tempfile.mkdtemp(prefix="llamp-campaign-test-")
    test.addCleanup(lambda: subprocess.run(["rm", "-rf", d]))
    return d
