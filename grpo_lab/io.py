"""Files of a run: atomic writes, run names, config fingerprints and a directory lock.

One place for each, used by ``grpo-lab compare``, ``grpo-lab inspect`` and the GSM8K path
(notebook 06). Nothing here imports torch.

- :func:`write_text_atomic` / :func:`write_json_atomic`: write to a temporary file in the same
  directory, then rename, so a reader sees the old file or the whole new one, never half.
- :func:`run_name`: ``"<estimator>-seed<k>"``, the name of one run's files.
- :func:`fingerprint` / :func:`differing_keys`: a short hash of the settings that determine a
  result, stored in every results file so that a resume can refuse a changed config.
- :class:`DirLock`: ``<dir>/.lock`` holding the owner's pid, so two writers never share a directory
  (:class:`LockInUse` when another process holds it).
- :func:`results_home`: where notebook 06 saves GSM8K runs and notebook 07 finds them (Google Drive
  when it is mounted on Colab, so that results survive a disconnect).
"""

from __future__ import annotations

import errno
import hashlib
import json
import os
import stat
import time
import threading
from pathlib import Path


DRIVE = Path("/content/drive/MyDrive")  # where Colab mounts Google Drive


def results_home(kind: str = "gsm8k") -> Path:
    """The directory for a kind of course results, the same for every notebook:

    ``$GRPO_LAB_RESULTS`` if set; else ``/content/drive/MyDrive/grpo-lab/<kind>`` when Google Drive is
    mounted (Colab: results and checkpoints survive a disconnect); else ``results/<kind>``.
    """
    env = os.environ.get("GRPO_LAB_RESULTS")
    if env:
        return Path(env)
    if DRIVE.is_dir():
        return DRIVE / "grpo-lab" / kind
    return Path("results") / kind


def new_run_dir(root, prefix: str = "") -> Path:
    """A new directory ``root/<prefix><timestamp>[-i]``, created here: ``mkdir`` either makes it or fails,
    so two commands started in the same second never get the same directory."""
    import time

    root = Path(root)
    root.mkdir(parents=True, exist_ok=True)
    stamp = prefix + time.strftime("%Y%m%d-%H%M%S")
    for i in range(10_000):
        path = root / (stamp if i == 0 else f"{stamp}-{i}")
        try:
            path.mkdir()
            return path
        except FileExistsError:
            continue
    raise RuntimeError(f"could not make a new run directory in {root}")  # pragma: no cover


def run_name(estimator: str, seed: int) -> str:
    """The file stem of one (estimator, seed) run: ``"grpo-seed0"``."""
    return f"{estimator}-seed{int(seed)}"


def result_path(out, estimator: str, seed: int) -> Path:
    """Where one run's result lives in a results directory ``out``: ``out/results/grpo-seed0.json``."""
    return Path(out) / "results" / f"{run_name(estimator, seed)}.json"


def metrics_path(out, estimator: str, seed: int) -> Path:
    """Where one run's per-step log lives in a results directory ``out``: ``out/metrics/grpo-seed0.jsonl``."""
    return Path(out) / "metrics" / f"{run_name(estimator, seed)}.jsonl"


def write_text_atomic(path, text: str) -> Path:
    """Write ``text`` to ``path`` through a same-directory temporary file and a rename: a reader sees the old
    file or the new one, never a part. The temporary file is unique per call (``mkstemp``), so threads and
    processes writing the same path at once never share or remove each other's; the last rename wins.

    The file gets the mode a plain ``open(path, "w")`` would give it: a new file the umask's (``0o666 & ~umask``:
    a lab sharing a results directory can read it), a replaced file its old mode (mkstemp's own 0600 would leave
    every result readable by its owner alone)."""
    import tempfile

    path = Path(path)
    try:
        mode = path.stat().st_mode & 0o7777
    except FileNotFoundError:
        mode = 0o666 & ~_umask()
    fd, name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    tmp = Path(name)
    try:
        with os.fdopen(fd, "w") as f:
            f.write(text)
            os.fchmod(f.fileno(), mode)
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)
    return path


_UMASK_LOCK = threading.Lock()


def _umask() -> int:
    """This process's umask (read by setting it and putting it back: POSIX has no other way; under a lock so that
    threads writing at once never see the temporary value)."""
    with _UMASK_LOCK:
        mask = os.umask(0o022)
        os.umask(mask)
    return mask


def finite_json(obj):
    """``obj`` with every non-finite float (NaN, ±inf; numpy's too) replaced by ``None``, recursively: grpo-lab
    writes strict JSON, which has no NaN, and a reader takes ``null`` as "not measured" (a NaN gradient norm in a
    log row, say). Numpy scalars become Python numbers."""
    import math

    if isinstance(obj, dict):
        return {k: finite_json(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [finite_json(v) for v in obj]
    if hasattr(obj, "item") and getattr(obj, "shape", None) == ():  # a numpy or torch scalar
        obj = obj.item()
    if isinstance(obj, float) and not math.isfinite(obj):
        return None
    return obj


def write_json_atomic(path, obj) -> Path:
    """:func:`write_text_atomic` of strict JSON: non-finite numbers are written as ``null`` (:func:`finite_json`)."""
    return write_text_atomic(path, json.dumps(finite_json(obj), indent=1, allow_nan=False))


def read_json(path, what: str = "file"):
    """``json.loads`` of ``path``; a damaged or unreadable file is a ``ValueError`` naming it."""
    path = Path(path)
    try:
        return json.loads(path.read_text())
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise ValueError(f"{what} {path} is damaged: not valid JSON ({e})") from None


def read_jsonl(path, error: type[Exception] = ValueError, hint: str = "") -> list[tuple[int, dict]]:
    """``(line number, object)`` for every non-blank line of a JSONL file: the one reader of metrics logs (compare's
    report, a run's resume, ``inspect``). Text that is not UTF-8, or a line that is not a JSON object, raises
    ``error`` naming the file and the line, followed by ``hint``."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8-sig")  # a BOM is not part of the first line
    except UnicodeDecodeError as e:
        raise error(f"{path} is not UTF-8 text (byte {e.start}: {e.reason}){hint}") from None
    rows = []
    for i, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as e:
            raise error(f"{path}, line {i}: not JSON ({e.msg}){hint}") from None
        if not isinstance(row, dict):
            raise error(f"{path}, line {i}: not a JSON object{hint}")
        rows.append((i, row))
    return rows


def display_path(path) -> str:
    """A path as printed in notebooks and reports: relative to the working directory when inside it, under
    ``~`` when in the home directory, ``<temporary directory>/<name>`` when in the system's temporary directory;
    so that committed outputs never show the absolute paths of the machine that made them."""
    import tempfile

    path = Path(path).resolve()
    for base, shown in ((Path.cwd().resolve(), None), (Path(tempfile.gettempdir()).resolve(), "<temporary directory>"),
                        (Path.home().resolve(), "~")):
        try:
            rel = path.relative_to(base)
        except ValueError:
            continue
        return str(rel) if shown is None else f"{shown}/{rel}"
    return str(path)


def strip_out_option(command: str | None) -> str | None:
    """A ``grpo-lab`` command line without ``--out DIR`` / ``--no-progress`` (where the run was written is not
    part of how to reproduce it), for data shipped in the package."""
    import re

    if command is None:
        return None
    return re.sub(r"\s+--no-progress\b|\s+--out(?:=|\s+)\S+", "", command)


def fingerprint(settings: dict) -> str:
    """A 16-hex-digit SHA-256 of ``settings`` (canonical JSON: sorted keys)."""
    blob = json.dumps(settings, sort_keys=True, default=str).encode()
    return hashlib.sha256(blob).hexdigest()[:16]


def differing_keys(a: dict, b: dict) -> list[str]:
    """``"key: a-value != b-value"`` for every key whose values differ (or that one side lacks)."""
    missing = object()
    out = []
    for k in sorted(set(a) | set(b)):
        va, vb = a.get(k, missing), b.get(k, missing)
        if va != vb:
            out.append(f"{k}: {'(absent)' if va is missing else va!r} != {'(absent)' if vb is missing else vb!r}")
    return out


# Trainer settings recorded in every result (grpo_lab.runner.trainer_settings), but never a reason to refuse
# a run: fields that only the Trainer's own evaluation loop reads
# (grpo-lab evaluates with its own sampler and never calls Trainer.evaluate) or that free memory without changing
# any arithmetic. Unsloth's GRPOTrainer sets bf16_full_eval=True in its __init__, after the settings a comparison
# records were built: on an H200 (2026-11-26, issue 60) that refused lesson 06's first run after it had trained.
EVAL_ONLY_SETTINGS = ("bf16_full_eval", "fp16_full_eval", "per_device_eval_batch_size", "torch_empty_cache_steps")


def settings_differ(recorded: dict, now: dict) -> list[str]:
    """``differing_keys`` over two runs' trainer settings, less :data:`EVAL_ONLY_SETTINGS` (which cannot change
    what a run computes): the one comparison of trainer settings (comparisons, resumes, reports)."""
    def keep(d):
        return {k: v for k, v in d.items() if k not in EVAL_ONLY_SETTINGS}

    return differing_keys(keep(recorded), keep(now))


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # exists, owned by someone else
        return True
    return True


class LockInUse(RuntimeError):
    """:class:`DirLock`'s refusal when another process holds the directory: the one error worth waiting on or
    skipping (a symbolic link, a folder where the lock file goes, or this process's own nested lock raise a plain
    ``RuntimeError``, which no wait mends)."""


class DirLock:
    """Exclusive ownership of a directory while a process writes into it.

    ``with DirLock(dir):`` holds an exclusive ``flock`` on ``dir/.lock`` and writes this pid into it. The
    kernel releases the lock when its process ends, however it ends (SIGKILL, a crash), so a lock is never
    stale and a reused pid never blocks; a second process gets :class:`LockInUse` naming the owner's pid, and a
    second ``DirLock`` on the same directory in this process a plain ``RuntimeError``. After taking the lock, the
    file is checked to still be the one at ``dir/.lock`` (a releasing owner unlinks it), so two processes never
    both hold it. Where ``fcntl`` is missing (Windows), an ``O_EXCL`` file with the pid is the lock, and a lock
    whose pid is dead is taken over.
    """

    _held: set = set()  # directories locked by this process (a nested lock is refused, never released early)

    def __init__(self, directory):
        self.path = Path(directory) / ".lock"
        self.fd = None

    def _in_use(self, pid) -> LockInUse:
        return LockInUse(f"{self.path.parent} is in use by process {pid or '(unknown)'} (lock file {self.path}); "
                         "wait for it to finish, or stop it first")

    def _mkdir(self) -> None:
        """The lock's folder, made again where another process removes it meanwhile: ``mkdir(parents=True)`` makes
        ``locks/`` and then ``locks/<run>``, and a study run's finished owner may remove the empty ``locks/``
        between the two (issue 83: 39 of 8,570 racing attempts raised FileNotFoundError)."""
        for _ in range(100):
            try:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                return
            except FileNotFoundError:
                continue
        self.path.parent.mkdir(parents=True, exist_ok=True)  # pragma: no cover - a hundred races in a row

    def __enter__(self):
        self._mkdir()
        key = str(self.path.resolve())
        if key in DirLock._held:
            raise RuntimeError(f"{self.path.parent} is already locked by this process (pid {os.getpid()}); "
                               "a comparison cannot run inside another on the same directory")
        try:
            import fcntl
        except ImportError:  # pragma: no cover - not POSIX
            return self._enter_without_flock(key)
        for _ in range(100):
            try:  # never through a symbolic link: it would write the pid into whatever the link names
                fd = os.open(self.path, os.O_CREAT | os.O_RDWR | getattr(os, "O_NOFOLLOW", 0), 0o644)
            except FileNotFoundError:  # another process removed the empty folder between mkdir and open (a
                self._mkdir()  # study's per-run lock folders): again
                continue
            except OSError as e:
                if self.path.is_symlink() or e.errno == errno.ELOOP:
                    raise RuntimeError(f"{self.path} is a symbolic link; refusing to lock through it (remove it: "
                                       "grpo-lab writes its own lock file there)") from None
                if self.path.is_dir():
                    raise RuntimeError(f"{self.path} is not a regular file; remove it (grpo-lab's lock file goes "
                                       "there)") from None
                raise
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                os.close(fd)
                raise RuntimeError(f"{self.path} is not a regular file; remove it (grpo-lab's lock file goes there)")
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                try:  # the owner writes its pid just after taking the lock: a racing caller may read the file
                    pid = ""  # before that, so it waits a moment for the pid (issue 38: 1 of 299 racing callers
                    for _ in range(50):  # was told "process (unknown)")
                        pid = os.pread(fd, 32, 0).decode(errors="replace").strip()
                        if pid:
                            break
                        time.sleep(0.01)
                finally:
                    os.close(fd)
                raise self._in_use(pid) from None
            try:
                same = os.fstat(fd).st_ino == os.stat(self.path).st_ino
            except FileNotFoundError:
                same = False
            if not same:  # the previous owner unlinked it between our open and our lock: try the new file
                os.close(fd)
                continue
            os.ftruncate(fd, 0)
            os.write(fd, str(os.getpid()).encode())
            self.fd = fd
            DirLock._held.add(key)
            return self
        raise RuntimeError(f"could not take the lock {self.path}")  # pragma: no cover

    def _enter_without_flock(self, key):  # pragma: no cover - not POSIX
        for _ in range(2):
            try:
                fd = os.open(self.path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
            except FileExistsError:
                try:
                    pid = int(self.path.read_text().strip() or "0")
                except (OSError, ValueError):
                    pid = 0
                if pid and _alive(pid):
                    raise self._in_use(pid) from None
                self.path.unlink(missing_ok=True)
                continue
            with os.fdopen(fd, "w") as f:
                f.write(str(os.getpid()))
            DirLock._held.add(key)
            return self
        raise RuntimeError(f"could not take the lock {self.path}")

    def __exit__(self, *exc):
        DirLock._held.discard(str(self.path.resolve()))
        try:
            self.path.unlink()  # while still holding it: a process that opened it now sees another inode
        except OSError:
            pass
        if self.fd is not None:
            os.close(self.fd)  # releases the flock
            self.fd = None
        return False


def eval_dtype_of(res: dict, start: bool = False) -> str | None:
    """The dtype a result's evaluation was sampled in (``start=True``: ``res`` is a start's evaluation): what
    ``runner.evaluate`` records (issue 61), else, for a run from before, the rollouts' dtype it then sampled in
    (``generation_dtype``, else the weights'). None for a simulation."""
    ev = res if start else (res.get("eval") or {})
    rec = ev.get("sampling")
    if isinstance(rec, dict) and rec.get("dtype"):
        return str(rec["dtype"])
    if start:
        gen = ev.get("generation") if isinstance(ev.get("generation"), dict) else {}
        return gen.get("dtype") or ev.get("dtype")
    cfg = res.get("config") or {}
    if cfg.get("policy") == "tabular":
        return None
    return cfg.get("generation_dtype") or res.get("dtype")


def check_eval_dtypes(named: dict, what: str = "this comparison") -> None:
    """Refuse (``ValueError``) evaluations sampled in more than one dtype among ``named`` (``{name: dtype}``),
    naming the runs of each: a pass@1 read in bfloat16 beside one read in float32 compares the rounding too."""
    by: dict = {}
    for name, dtype in named.items():
        if dtype is not None:
            by.setdefault(dtype, []).append(name)
    if len(by) > 1:
        parts = "; ".join(f"{d}: {', '.join(sorted(n)[:6])}{' …' if len(n) > 6 else ''}" for d, n in sorted(by.items()))
        raise ValueError(f"{what} mixes evaluation dtypes ({parts}); a difference between them would include the "
                         "rounding. Evaluate them in one dtype (eval_dtype) before comparing")
