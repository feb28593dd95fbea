"""scripts/make-portable-bundle.sh: the bundle runs an app through its own Hydra, patched MPICH and
libraries with nothing of this machine's MPI on the path, and the campaign's llamp-env.sh in it
names the bundle, not the machine it was built on."""
import os
import subprocess
import sys
import unittest

from campaign_testlib import BUILD_DIR, SCRIPT, temp_dir

REPO = os.path.dirname(os.path.dirname(os.path.abspath(SCRIPT))) if SCRIPT else ""
BUNDLER = os.path.join(REPO, "scripts", "make-portable-bundle.sh")


def patched_prefix():
    prefix = os.environ.get("LLAMP_PATCHED_MPICH_PREFIX", "")
    if not prefix:
        out = subprocess.run(["bash", os.path.join(REPO, "scripts", "build-patched-mpich.sh"), "--print-prefix"],
                             capture_output=True, text=True)
        prefix = out.stdout.strip() if out.returncode == 0 else ""
    return prefix if prefix and os.path.exists(os.path.join(prefix, "lib", "libmpi.so.12")) else ""


class BundleTest(unittest.TestCase):
    def test_bundle_runs_an_app_on_its_own_stack(self):
        prefix = patched_prefix()
        if not prefix:
            print("SKIP: no patched MPICH + UCX (scripts/build-patched-mpich.sh)")
            sys.exit(77)
        out = os.path.join(temp_dir(self), "bundle")
        subprocess.run(["bash", BUNDLER, out, "--build", BUILD_DIR, "--prefix", prefix], check=True,
                       capture_output=True, text=True)
        clean = {"PATH": "/usr/bin:/bin", "HOME": os.environ.get("HOME", "/tmp")}
        script = ('source "$LLAMP_PATCHED_MPICH_PREFIX/llamp-env.sh" && echo "prefix=$LLAMP_PATCHED_MPICH_PREFIX" && '
                  'ldd "$LLAMP_BUILD_DIR/apps/app_hello" | grep libmpich && '
                  'mpiexec -n 2 "$LLAMP_BUILD_DIR/apps/app_hello"')
        run = subprocess.run([os.path.join(out, "run.sh"), "bash", "-c", script], env=clean, capture_output=True,
                             text=True, timeout=120)
        self.assertEqual(run.returncode, 0, run.stdout + run.stderr)
        self.assertIn(f"prefix={out}/prefix", run.stdout)
        self.assertIn(f"=> {out}/prefix/lib/libmpich.so.12", run.stdout)
        self.assertIn("hello: 2 ranks", run.stdout)
        with open(os.path.join(out, "prefix", "llamp-env.sh")) as f:
            self.assertNotIn(prefix, f.read())


if __name__ == "__main__":
    unittest.main()
