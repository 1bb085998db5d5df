"""Run by ``nox -s stdlib`` in a venv that holds only the notanda-evidence wheel.

Checks that nothing else was installed, then runs the installed verifier over
every golden vector in five ways and requires identical verdicts, equal to
the expected ones:

* ``python -I -m notanda_evidence verify``
* ``python -O -m notanda_evidence verify`` and with ``PYTHONOPTIMIZE=2``
  (assert statements would vanish here; verdicts must not change)
* ``PYTHONPATH=<site-packages> python -S -m notanda_evidence verify``
* ``python -I -S verify_file.py`` on a copy of the single file

and then the same copy under every ``--single-file-python`` given (3.9 to
3.13 in ``nox -s stdlib``), which must give the same report; each
``--too-old-python`` (3.8) must exit 2 with one line naming the version needed.
Under each of those Pythons the copy must also print the same bytes: its text
and JSON reports on the vectors, and ``str()``, f-string and ``format()`` of
every code (each must be the code's value).
Last, the installed wheel alone audits a collection stamped by the test TSA
(``tests-support/tsa_authority.py``, OpenSSL's own): ``audit --tsa-ca`` must
accept every token, and reject one moved to another size.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import json
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from pathlib import Path

from vector_cases import materialize_case

#: Tools a virtual environment may be seeded with; anything else is a dependency.
SEED_TOOLS = {"pip", "setuptools", "wheel"}


def fail(message: str) -> None:
    print(f"stdlib check FAILED: {message}", file=sys.stderr)
    sys.exit(1)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--vectors", type=Path, required=True)
    parser.add_argument("--single-file-python", action="append", default=[], metavar="PYTHON")
    parser.add_argument("--too-old-python", action="append", default=[], metavar="PYTHON")
    args = parser.parse_args()

    installed = {d.metadata["Name"].lower() for d in importlib.metadata.distributions()}
    if installed - SEED_TOOLS != {"notanda-evidence"}:
        fail(f"the venv holds more than the evidence wheel: {sorted(installed)}")
    import notanda_evidence

    site_packages = sysconfig.get_paths()["purelib"]
    if not Path(notanda_evidence.__file__).resolve().is_relative_to(Path(site_packages).resolve()):
        fail(f"notanda_evidence imported from {notanda_evidence.__file__}, not site-packages")

    expected = json.loads((args.vectors / "expected.json").read_text(encoding="utf-8"))
    with tempfile.TemporaryDirectory(prefix="stdlib-check-") as tmp:
        work = Path(tmp)
        roots = []
        receipts = {}
        for case, entry in sorted(expected["cases"].items()):
            target = work / "cases" / case
            materialize_case(args.vectors / "cases" / case, entry["empty_dirs"], target)
            roots.append(str(target))
            receipts.update(
                {i: r["receipt"] for i, r in entry["records"].items() if "receipt" in r}
            )
        receipts_file = work / "receipts.txt"
        receipts_file.write_text(
            "".join(f"{i} {r}\n" for i, r in receipts.items()), encoding="utf-8"
        )
        single = work / "copied" / "verify_file.py"
        single.parent.mkdir()
        shutil.copyfile(Path(notanda_evidence.__file__).with_name("verify_file.py"), single)

        python = sys.executable
        base_env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
        for old in args.too_old_python:
            check_too_old(old, single, work, base_env)
        ways = {
            "-I -m": ([python, "-I", "-m", "notanda_evidence", "verify"], base_env),
            "-O -m": ([python, "-O", "-m", "notanda_evidence", "verify"], base_env),
            "PYTHONOPTIMIZE=2": (
                [python, "-m", "notanda_evidence", "verify"],
                {**base_env, "PYTHONOPTIMIZE": "2"},
            ),
            "-S with PYTHONPATH": (
                [python, "-S", "-m", "notanda_evidence", "verify"],
                {**base_env, "PYTHONPATH": site_packages},
            ),
            "-I -S verify_file.py": ([python, "-I", "-S", str(single)], base_env),
        }
        for other in args.single_file_python:
            name = f"-I -S verify_file.py under Python {version_of(other)}"
            ways[name] = ([other, "-I", "-S", str(single)], base_env)
        for full in (False, True):
            pass_name = "full" if full else "default"
            want = {
                evidence_id: record[pass_name]["outcome"]
                for entry in expected["cases"].values()
                for evidence_id, record in entry["records"].items()
            }
            reports = {}
            for name, (command, env) in ways.items():
                argv = [*command, *roots, "--json", "--receipts", str(receipts_file)]
                if full:
                    argv.append("--full")
                done = subprocess.run(
                    argv, capture_output=True, text=True, env=env, cwd=work, check=False
                )
                if done.returncode != 1:
                    fail(f"{name} ({pass_name}): exit {done.returncode}, expected 1\n{done.stderr}")
                records = json.loads(done.stdout)["records"]
                got = {r["evidence_id"]: r["outcome"] for r in records}
                if got != want:
                    wrong = sorted(k for k in want if got.get(k) != want[k])
                    fail(f"{name} ({pass_name}): unexpected verdicts for {wrong}")
                reports[name] = records
            first = next(iter(reports.values()))
            for name, records in reports.items():
                if records != first:
                    fail(f"{name} ({pass_name}) disagrees with the other ways")
            print(f"{pass_name} pass: {len(want)} records, same verdicts under {', '.join(ways)}")
        single_ways = {n: w for n, w in ways.items() if str(single) in w[0]}
        check_printed_codes(
            single_ways, single, roots=roots, receipts_file=receipts_file, work=work, env=base_env
        )
        check_stamped_audit(python, work / "stamped", base_env)
    print("stdlib check passed: only notanda-evidence installed; verdicts identical")


#: Prints every code of the copied file three ways: ``str()``, an f-string and
#: ``format()`` with a width, one code a line. ``enum.Enum``'s own ``str()``
#: and ``format()`` of a ``str`` mixin changed between Python 3.8 and 3.12; the
#: file's codes must print their value on every one of them.
_PRINT_CODES = (
    "import sys; sys.path.insert(0, sys.argv[1]); import verify_file as v\n"
    "for kind in (v.Code, v.Severity, v.Outcome):\n"
    "    for code in kind:\n"
    "        print(kind.__name__, str(code), f'{code}', format(code, '>40'), '%s' % code)\n"
)


def check_printed_codes(
    ways: dict[str, tuple[list[str], dict[str, str]]],
    single: Path,
    *,
    roots: list[str],
    receipts_file: Path,
    work: Path,
    env: dict[str, str],
) -> None:
    """The copied file prints the same bytes under every Python: codes, text and JSON reports."""
    outputs: dict[str, list[bytes]] = {}
    for name, (command, _) in ways.items():
        printed = subprocess.run(
            [command[0], "-I", "-S", "-c", _PRINT_CODES, str(single.parent)],
            capture_output=True,
            env=env,
            cwd=work,
            check=False,
        )
        if printed.returncode != 0:
            fail(f"{name}: printing the codes failed\n{printed.stderr.decode(errors='replace')}")
        values = [line.split()[1:] for line in printed.stdout.decode().splitlines()]
        if any(len(set(forms)) != 1 for forms in values):
            fail(f"{name}: a code's str(), f-string, format() or %s is not its value")
        outputs[name] = [printed.stdout]
        for extra in ([], ["--json"], ["--full"], ["--full", "--json"]):
            argv = [*command, *roots, "--receipts", str(receipts_file), *extra]
            done = subprocess.run(argv, capture_output=True, env=env, cwd=work, check=False)
            outputs[name].append(done.stdout)
    first_name, first = next(iter(outputs.items()))
    for name, output in outputs.items():
        if output != first:
            fail(f"{name} prints other bytes than {first_name} (codes or reports)")
    print(f"codes, text and JSON reports byte-identical under {', '.join(outputs)}")


def check_stamped_audit(python: str, work: Path, env: dict[str, str]) -> None:
    """The wheel alone audits a stamped collection: every token verified, a swapped one caught."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "tests-support"))
    from notanda_evidence._timestamps import TIMESTAMPS_DIR
    from stamped import stamped_collection
    from tsa_authority import create_authorities

    tsa = create_authorities(work / "tsa")
    root = stamped_collection(work / "root", tsa, (1, 3), 3)

    def audit_json() -> tuple[int, dict[str, object]]:
        command = [python, "-I", "-m", "notanda_evidence", "audit", str(root), "--json"]
        done = subprocess.run(
            [*command, "--tsa-ca", str(tsa.ca_pem)],
            capture_output=True,
            text=True,
            env=env,
            cwd=work,
            check=False,
        )
        return done.returncode, json.loads(done.stdout or "{}")

    code, report = audit_json()
    tokens = report.get("timestamps", {}).get("tokens", [])  # type: ignore[attr-defined]
    if code != 0 or [t["signature"] for t in tokens] != ["verified", "verified"]:
        fail(f"the wheel alone did not verify a stamped collection: exit {code}, {tokens}")
    first, last = root / TIMESTAMPS_DIR / "1.tsr", root / TIMESTAMPS_DIR / "3.tsr"
    first_bytes = first.read_bytes()
    first.write_bytes(last.read_bytes())
    last.write_bytes(first_bytes)
    code, _ = audit_json()
    if code != 1:
        fail(f"the wheel alone accepted tokens swapped between two sizes: exit {code}")
    print("stamped collection: 2 tokens verified by openssl, a swap between sizes caught")


def version_of(python: str) -> str:
    """The ``X.Y`` version of the interpreter *python*."""
    done = subprocess.run(
        [python, "-I", "-S", "-c", "import sys; print('%d.%d' % sys.version_info[:2])"],
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        fail(f"{python} does not run: {done.stderr.strip()}")
    return done.stdout.strip()


def check_too_old(python: str, single: Path, work: Path, env: dict[str, str]) -> None:
    """The copy must refuse *python* with exit 2 and one line, before any newer syntax fails."""
    version = version_of(python)
    done = subprocess.run(
        [python, "-I", "-S", str(single), str(work)],
        capture_output=True,
        text=True,
        env=env,
        cwd=work,
        check=False,
    )
    want = f"verify_file.py needs Python 3.9 or later; this is Python {version}\n"
    if (done.returncode, done.stdout, done.stderr) != (2, "", want):
        fail(f"under Python {version}: exit {done.returncode}, stderr {done.stderr!r}")
    print(f"Python {version}: exit 2 with one line naming the version needed")


if __name__ == "__main__":
    main()
