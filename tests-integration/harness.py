"""What the integration tests share: paths, a raw JSON-RPC stdio client, the CLIs, the verifier.

Everything here drives real processes: the launcher (``launcher.py``, the
server built through ``build_server`` with a fake provider), the installed
console scripts and the copied single-file verifier. Nothing imports the
packages' sources; ``conftest.py`` proves the installed wheels are used.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import signal
import subprocess
import sys
import sysconfig
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
LAUNCHER = HERE / "launcher.py"
SCRIPTS = Path(sysconfig.get_paths()["scripts"])
REPO_ROOT = Path(os.environ.get("NOTANDA_REPO_ROOT", HERE.parent))
DIST_DIR = Path(os.environ.get("NOTANDA_DIST_DIR", REPO_ROOT / "dist"))
#: A small real page (5 works, 26 KB) for the many-search tests.
SMALL_FIXTURE = "works_list_2025-05_sample-5_chinese-korean-titles.json"
#: A realistic search page (5 works with abstracts, 105 KB).
REALISTIC_FIXTURE = "works_list_2025-10_filter-authorships-author-id_per-page-5.json"
MODERN = "2026-07-28"
LEGACY = "2025-11-25"
CLIENT_INFO = {"name": "notanda-integration", "version": "1.0"}
_ID = re.compile(r"[0-9a-f]{32}")
_MODERN_META = {
    "io.modelcontextprotocol/protocolVersion": MODERN,
    "io.modelcontextprotocol/clientInfo": CLIENT_INFO,
    "io.modelcontextprotocol/clientCapabilities": {},
}


def script(name: str) -> str:
    """The installed console script *name* in this environment's scripts folder."""
    path = SCRIPTS / name
    if not path.exists():
        raise FileNotFoundError(f"console script {name} is not installed in {SCRIPTS}")
    return str(path)


def launcher_argv(root: Path | str, *options: str) -> list[str]:
    """The command line of a launcher process serving *root*."""
    return [sys.executable, str(LAUNCHER), "--evidence-dir", str(root), *options]


def record_ids(root: Path) -> list[str]:
    """The names of the record folders under *root*, sorted."""
    return sorted(p.name for p in root.iterdir() if _ID.fullmatch(p.name))


def sha256_file(path: Path) -> str:
    """The SHA-256 of a file's bytes."""
    return hashlib.sha256(path.read_bytes()).hexdigest()


def tree_digest(root: Path) -> dict[str, str]:
    """Every regular file under *root* with its SHA-256 (relative POSIX paths)."""
    return {
        p.relative_to(root).as_posix(): sha256_file(p)
        for p in sorted(root.rglob("*"))
        if p.is_file() and not p.is_symlink()
    }


def seal_search_record(root: Path, query: str) -> str:
    """A sealed, logged search record written through the installed notanda-evidence."""
    from notanda_evidence import EvidenceLog, EvidenceStore

    writer = EvidenceStore(root).create()
    evidence_id = writer.evidence_id
    writer.write_request(
        {
            "evidence_id": evidence_id,
            "requested_at": "2026-12-01T10:00:00.000Z",
            "schema_version": 1,
            "supplied": {"query": query},
            "tool": "search_literature",
        }
    )
    writer.write_provider({"attempts": [], "capture": "not_attempted", "provider": "openalex"})
    writer.write_response({"evidence_id": evidence_id, "results": [], "status": "ok"})
    EvidenceLog(root).append(evidence_id, writer.seal().receipt)
    return evidence_id


# ------------------------------------------------------------------ CLIs


def run(
    argv: Sequence[str], *, timeout: float = 60, **kwargs: Any
) -> subprocess.CompletedProcess[str]:
    """Run a command to completion, capturing text output."""
    return subprocess.run(
        list(argv), capture_output=True, text=True, timeout=timeout, check=False, **kwargs
    )


def verify_json(*paths: Path | str, receipts: Path | None = None, full: bool = False) -> Any:
    """``notanda-evidence verify --json``: (exit code, report)."""
    argv = [script("notanda-evidence"), "verify", "--json", *map(str, paths)]
    if receipts is not None:
        argv += ["--receipts", str(receipts)]
    if full:
        argv.append("--full")
    done = run(argv)
    if done.returncode == 2:
        raise AssertionError(f"verify usage error: {done.stderr}")
    return done.returncode, json.loads(done.stdout)


def verdicts(root: Path, receipts: Mapping[str, str] | None = None) -> dict[str, str]:
    """The verifier's outcome for every record under *root* (receipts checked when given)."""
    receipts_file = None
    if receipts:
        receipts_file = root.parent / f"{root.name}.receipts"
        receipts_file.write_text("".join(f"{k} {v}\n" for k, v in receipts.items()))
    try:
        _, report = verify_json(root, receipts=receipts_file, full=True)
    finally:
        if receipts_file is not None:
            receipts_file.unlink()
    return {r["evidence_id"]: r["outcome"] for r in report["records"]}


def audit_json(root: Path, *extra: str) -> tuple[int, Any]:
    """``notanda-evidence audit --json``: (exit code, report)."""
    done = run([script("notanda-evidence"), "audit", str(root), "--json", *extra])
    if done.returncode == 2:
        raise AssertionError(f"audit usage error: {done.stderr}")
    return done.returncode, json.loads(done.stdout)


# ------------------------------------------------------- raw JSON-RPC client


class ServerGone(Exception):
    """The server process closed stdout before answering."""


class RawSession:
    """A line-level JSON-RPC client for one server process over real pipes.

    Unlike the SDK client it gives the process id (for ``/proc``), can send
    any bytes (a lone-surrogate escape), survives the server being killed,
    and records every stdout line that is not JSON-RPC.
    """

    def __init__(
        self,
        argv: Sequence[str],
        *,
        era: str = "legacy",
        env: Mapping[str, str] | None = None,
        stderr_path: Path | None = None,
    ) -> None:
        self.era = era
        self.argv = list(argv)
        self._stderr_file = open(stderr_path, "wb") if stderr_path else None  # noqa: SIM115
        self.proc = subprocess.Popen(
            self.argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._stderr_file if self._stderr_file else subprocess.PIPE,
            env=None if env is None else dict(env),
            bufsize=0,
        )
        self.stdout_lines: list[bytes] = []
        self.garbage: list[bytes] = []
        self.stderr_chunks: list[bytes] = []
        self._answers: dict[Any, dict[str, Any]] = {}
        self._cond = threading.Condition()
        self._eof = False
        self._next_id = 1
        self._send_lock = threading.Lock()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
        if self._stderr_file is None:
            self._err_reader = threading.Thread(target=self._read_err, daemon=True)
            self._err_reader.start()

    # -- plumbing

    @property
    def pid(self) -> int:
        """The server's process id."""
        return self.proc.pid

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.stdout_lines.append(line)
            if not line.endswith(b"\n"):
                self.garbage.append(line)  # torn by a kill: never an answer
                continue
            try:
                message = json.loads(line)
            except ValueError:
                self.garbage.append(line)
                continue
            if not isinstance(message, dict) or message.get("jsonrpc") != "2.0":
                self.garbage.append(line)
                continue
            if "id" in message and ("result" in message or "error" in message):
                with self._cond:
                    self._answers[message["id"]] = message
                    self._cond.notify_all()
        with self._cond:
            self._eof = True
            self._cond.notify_all()

    def _read_err(self) -> None:
        assert self.proc.stderr is not None
        for chunk in iter(lambda: self.proc.stderr.read(65536), b""):  # type: ignore[union-attr]
            self.stderr_chunks.append(chunk)

    @property
    def stderr(self) -> bytes:
        """Everything the server wrote to stderr so far (or its file, if redirected)."""
        if self._stderr_file is not None:
            if not self._stderr_file.closed:
                self._stderr_file.flush()
            return Path(self._stderr_file.name).read_bytes()
        return b"".join(self.stderr_chunks)

    def send_raw(self, data: bytes) -> None:
        """Write raw bytes to the server's stdin."""
        assert self.proc.stdin is not None
        with self._send_lock:
            self.proc.stdin.write(data)
            self.proc.stdin.flush()

    def new_id(self) -> int:
        """A fresh request id."""
        with self._send_lock:
            value = self._next_id
            self._next_id += 1
        return value

    def send(
        self, method: str, params: dict[str, Any] | None = None, *, notify: bool = False
    ) -> int | None:
        """Send a request (or a notification); return its id."""
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        params = dict(params or {})
        if self.era == MODERN and not notify:
            params["_meta"] = {**params.get("_meta", {}), **_MODERN_META}
        if params:
            message["params"] = params
        request_id = None
        if not notify:
            request_id = self.new_id()
            message["id"] = request_id
        self.send_raw((json.dumps(message) + "\n").encode("utf-8"))
        return request_id

    def wait(self, request_id: Any, timeout: float = 60) -> dict[str, Any]:
        """Wait for the answer to *request_id*.

        Raises:
            ServerGone: stdout closed first.
            TimeoutError: no answer in time.
        """
        deadline = time.monotonic() + timeout
        with self._cond:
            while request_id not in self._answers:
                if self._eof:
                    raise ServerGone(f"no answer to {request_id}: the server closed stdout")
                left = deadline - time.monotonic()
                if left <= 0:
                    raise TimeoutError(f"no answer to request {request_id} in {timeout} s")
                self._cond.wait(left)
            return self._answers.pop(request_id)

    def answered(self, request_id: Any) -> bool:
        """Whether an answer to *request_id* has arrived (without consuming it)."""
        with self._cond:
            return request_id in self._answers

    def request(
        self, method: str, params: dict[str, Any] | None = None, timeout: float = 60
    ) -> dict[str, Any]:
        """Send a request and wait for its answer."""
        request_id = self.send(method, params)
        return self.wait(request_id, timeout)

    # -- MCP

    def start(self, timeout: float = 60) -> RawSession:
        """Initialize (handshake era) or do nothing (2026-07-28: every request is enveloped)."""
        if self.era == "legacy":
            answer = self.request(
                "initialize",
                {"protocolVersion": LEGACY, "capabilities": {}, "clientInfo": CLIENT_INFO},
                timeout=timeout,
            )
            if "result" not in answer:
                raise AssertionError(f"initialize failed: {answer}")
            self.send("notifications/initialized", notify=True)
        return self

    def call(self, name: str, arguments: Any, timeout: float = 60) -> dict[str, Any]:
        """``tools/call``; the raw JSON-RPC answer."""
        return self.request("tools/call", {"name": name, "arguments": arguments}, timeout)

    def send_call(self, name: str, arguments: Any) -> int:
        """Send ``tools/call`` without waiting; return the request id."""
        request_id = self.send("tools/call", {"name": name, "arguments": arguments})
        assert request_id is not None
        return request_id

    def tool(self, name: str, arguments: Any, timeout: float = 60) -> tuple[dict[str, Any], bool]:
        """``tools/call`` returning (structuredContent, isError); fails on a JSON-RPC error."""
        answer = self.call(name, arguments, timeout)
        return tool_result(answer)

    def search(
        self, query: str = "Does X improve Y?", limit: int = 5, **kw: Any
    ) -> tuple[dict[str, Any], bool]:
        """A search; (structuredContent, isError)."""
        return self.tool("search_literature", {"query": query, "limit": limit, **kw})

    def get(self, evidence_id: Any, receipt: Any = None) -> tuple[dict[str, Any], bool]:
        """A retrieval; (structuredContent, isError)."""
        arguments: dict[str, Any] = {"evidence_id": evidence_id}
        if receipt is not None:
            arguments["receipt"] = receipt
        return self.tool("get_evidence", arguments)

    # -- ending

    def close(self, timeout: float = 15) -> int:
        """Close stdin and wait for the process to exit; return its exit code."""
        with suppress(BrokenPipeError, OSError):
            assert self.proc.stdin is not None
            self.proc.stdin.close()
        try:
            code = self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(5)
            raise AssertionError(f"server did not exit within {timeout} s of stdin EOF") from None
        self._reader.join(5)
        if self._stderr_file is not None:
            self._stderr_file.close()
        return code

    def kill(self) -> None:
        """SIGKILL the server and reap it."""
        with suppress(ProcessLookupError):
            os.kill(self.proc.pid, signal.SIGKILL)
        self.proc.wait(10)
        self._reader.join(5)
        with suppress(OSError):
            assert self.proc.stdin is not None
            self.proc.stdin.close()

    def wait_exit(self, timeout: float = 30) -> int:
        """Wait for the process to exit on its own; return its exit code."""
        code = self.proc.wait(timeout)
        self._reader.join(5)
        return code

    def _release(self) -> None:
        """Close our ends of the pipes once the readers are done (no ResourceWarning)."""
        self._reader.join(5)
        if self._stderr_file is None:
            self._err_reader.join(5)
        for stream in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
            if stream is not None:
                with suppress(OSError):
                    stream.close()
        if self._stderr_file is not None and not self._stderr_file.closed:
            self._stderr_file.close()

    def __enter__(self) -> RawSession:
        return self

    def __exit__(self, *exc: object) -> None:
        if self.proc.poll() is None:
            self.kill()
        self._release()


def tool_result(answer: dict[str, Any]) -> tuple[dict[str, Any], bool]:
    """(structuredContent, isError) of a ``tools/call`` answer; checks the text mirror too."""
    if "result" not in answer:
        raise AssertionError(f"JSON-RPC error instead of a tool result: {answer}")
    result = answer["result"]
    content = result["structuredContent"]
    text, *links = result["content"]
    if json.loads(text["text"]) != content:
        raise AssertionError("the text content differs from structuredContent")
    # A successful search links to its record beside the text (retrievals do not).
    linked = not result.get("isError") and "log_index" in content
    expected = [f"notanda://evidence/{content['evidence_id']}"] if linked else []
    if [link.get("uri") for link in links if link.get("type") == "resource_link"] != expected:
        raise AssertionError(f"resource links {links!r} are not {expected!r}")
    if len(links) != len(expected):
        raise AssertionError(f"unexpected content items {links!r}")
    return set_aside_remedy(content), bool(result.get("isError"))


def set_aside_remedy(content: dict[str, Any]) -> dict[str, Any]:
    """Check the fields added when answering; return *content* without ``remedy``.

    ``head`` is ``log_head`` as ``SIZE:ROOT``; ``remedy`` is the one line of the
    answer's code (checked here once, so the tests compare the rest as stored).
    """
    from notanda_mcp._service import remedy_for

    if "log_head" in content:
        head = f"{content['log_head']['size']}:{content['log_head']['root']}"
        if content.get("head") != head:
            raise AssertionError(f"head {content.get('head')!r} is not log_head as {head}")
    rest = {k: v for k, v in content.items() if k != "remedy"}
    if content.get("remedy") != remedy_for(rest):
        raise AssertionError(f"remedy {content.get('remedy')!r} is not its code's")
    return rest


@contextmanager
def session(root: Path, *options: str, era: str = "legacy", **kw: Any) -> Iterator[RawSession]:
    """A started launcher session on *root*, closed (stdin EOF) at the end."""
    with RawSession(launcher_argv(root, *options), era=era, **kw) as raw:
        raw.start()
        yield raw
        if raw.proc.poll() is None:
            code = raw.close()
            if code != 0:
                raise AssertionError(f"server exited {code}; stderr: {raw.stderr[-2000:]!r}")
        if raw.garbage:
            raise AssertionError(f"non-protocol lines on stdout: {raw.garbage[:3]!r}")


# ------------------------------------------------------------ SDK client


def sdk_client(root: Path, era: str, errlog: Any, *options: str) -> Any:
    """An ``mcp.Client`` on a launcher process over real stdio, in *era* (``legacy`` or 2026-07-28).

    The SDK passes only a few variables to the server; NOTANDA_REPO_ROOT is added.
    """
    from mcp import Client, StdioServerParameters
    from mcp.client.stdio import stdio_client
    from mcp_types import Implementation

    params = StdioServerParameters(
        command=sys.executable,
        args=[str(LAUNCHER), "--evidence-dir", str(root), *options],
        env={"NOTANDA_REPO_ROOT": str(REPO_ROOT)},
    )
    return Client(
        stdio_client(params, errlog=errlog),
        mode=era,
        client_info=Implementation(name=CLIENT_INFO["name"], version=CLIENT_INFO["version"]),
        read_timeout_seconds=60,
    )


# --------------------------------------------------------------- /proc


def rss_kib(pid: int) -> int:
    """VmRSS of *pid* in KiB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise AssertionError("no VmRSS line")


def open_fds(pid: int) -> int:
    """How many file descriptors *pid* holds open."""
    return len(os.listdir(f"/proc/{pid}/fd"))


def wheel_file_names(dist_dir: Path) -> set[str]:
    """Every file name the three wheels in *dist_dir* ship."""
    import zipfile

    names: set[str] = set()
    for wheel in sorted(dist_dir.glob("notanda_*.whl")):
        with zipfile.ZipFile(wheel) as archive:
            names |= {info.filename for info in archive.infolist() if not info.is_dir()}
    return names


def wheel_code_digest(dist_dir: Path) -> str:
    """SHA-256 over the sorted ``path sha256`` lines of the three wheels, RECORD left out."""
    import zipfile

    wheels = sorted(dist_dir.glob("notanda_*.whl"))
    names = sorted(p.name.split("-")[0] for p in wheels)
    if names != ["notanda_evidence", "notanda_mcp", "notanda_openalex"]:
        raise AssertionError(f"expected the three wheels in {dist_dir}, found {names}")
    lines = []
    for wheel in wheels:
        with zipfile.ZipFile(wheel) as archive:
            for info in archive.infolist():
                if info.is_dir():
                    continue
                name = info.filename
                parts = name.split("/")
                if len(parts) == 2 and parts[0].endswith(".dist-info") and parts[1] == "RECORD":
                    continue
                lines.append(f"{name} {hashlib.sha256(archive.read(info)).hexdigest()}")
    return hashlib.sha256(("\n".join(sorted(lines)) + "\n").encode("utf-8")).hexdigest()
