"""The scaffold's files written all or nothing: every new file first to a temporary file beside its
target, then the temporary files moved into place (each with a link that fails rather than replace
a file that appeared meanwhile), and an existing ``pyproject.toml`` or ``pytest.ini`` that gains a
section replaced last, in one rename. On any failure what this run made (temporary files, placed
files, folders it created) is removed, and ``ScaffoldError`` says so."""

from __future__ import annotations

import errno
import os
import tempfile
from pathlib import Path

from rag_core.evals.scaffold.errors import ScaffoldError


class _Appeared(FileExistsError):
    """A file appeared at a target between the plan and the write: it is kept, and nothing is written."""


class Transaction:
    """Write every file to a temporary file beside its target first, then move them all into
    place; on any failure remove what this run made (temporary files, placed files, folders)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.folders: list[Path] = []  # folders this run created, outermost first
        self.temporaries: list[Path] = []
        self.placed: list[Path] = []

    def commit(self, files: dict[str, str], changed: dict[str, tuple[str, str]]) -> None:
        current = self.root
        try:
            staged = []
            for relative, text in files.items():
                current = self.root / relative
                self._folders_for(current.parent)
                staged.append((self._stage(current, text), current))
            current = self.root / "cassettes"
            self._folders_for(current)  # recordings land here
            replacements = []
            for relative, (original, new) in changed.items():
                current = self.root / relative
                if current.read_text(encoding="utf-8") != original:
                    raise _Appeared(errno.EEXIST, "it changed while rag-core init ran (left as it is)", str(current))
                replacements.append((self._stage(current, new), current))
            for temporary, target in staged:
                current = target
                self._place(temporary, target)
            for temporary, target in replacements:  # last: the one step that changes an existing file
                current = target
                os.replace(temporary, target)
                self.temporaries.remove(temporary)
        except BaseException as exc:
            left = self._undo()
            if not isinstance(exc, OSError):
                raise
            cause = exc.strerror or str(exc)
            outcome = "nothing was written" if not left else "could not remove " + ", ".join(map(str, left))
            raise ScaffoldError(f"cannot write {current}: {cause}; {outcome}") from None

    def _folders_for(self, folder: Path) -> None:
        missing = []
        while not folder.is_dir():
            missing.append(folder)
            folder = folder.parent
        for path in reversed(missing):
            try:
                os.mkdir(path)
            except FileExistsError:
                if path.is_dir():  # made meanwhile by someone else: not ours to remove
                    continue
                raise NotADirectoryError(errno.ENOTDIR, f"{path} is a file, not a folder", str(path)) from None
            self.folders.append(path)

    def _stage(self, target: Path, text: str) -> Path:
        from rag_core._files import _mode_for

        handle, name = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
        temporary = Path(name)
        self.temporaries.append(temporary)
        with os.fdopen(handle, "wb") as out:
            if hasattr(os, "fchmod"):  # the mode a plain open() would give, not mkstemp's 0600
                os.fchmod(out.fileno(), _mode_for(target))
            out.write(text.encode("utf-8"))
            out.flush()
            os.fsync(out.fileno())
        return temporary

    def _place(self, temporary: Path, target: Path) -> None:
        """Move ``temporary`` to ``target`` unless something is there by now (never replaced)."""
        try:
            os.link(temporary, target)  # fails if the target appeared meanwhile
        except FileExistsError:
            raise _Appeared(errno.EEXIST, "it appeared while rag-core init ran (left as it is)", str(target)) from None
        except OSError:  # a file system without hard links: check, then rename (a narrow race)
            if target.exists() or target.is_symlink():
                raise _Appeared(errno.EEXIST, "it appeared while rag-core init ran (left as it is)", str(target)) from None
            os.replace(temporary, target)
            self.temporaries.remove(temporary)
            self.placed.append(target)
            return
        self.placed.append(target)
        temporary.unlink()
        self.temporaries.remove(temporary)

    def _undo(self) -> list[Path]:
        """Remove what this run made; the paths that could not be removed."""
        left = []
        for path in [*self.temporaries, *self.placed]:
            try:
                path.unlink(missing_ok=True)
            except OSError:
                left.append(path)
        for folder in reversed(self.folders):
            try:
                folder.rmdir()
            except FileNotFoundError:
                pass
            except OSError as exc:
                if exc.errno not in (errno.ENOTEMPTY, errno.EEXIST):  # not empty: it holds someone else's file now
                    left.append(folder)
        return left
