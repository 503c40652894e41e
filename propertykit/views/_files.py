"""Files the views write (reports, workbooks): whole or not at all, made as any file is.

A file is written beside its target under a temporary name and renamed into place once complete,
so a reader never meets half a report and a failed write leaves the old file as it was. The
temporary name is drawn at random rather than made by ``tempfile.mkstemp``, whose files are
owner-only: a report or a workbook is made to be shared, so it takes the user's umask.
"""

from __future__ import annotations

import os
import secrets
from collections.abc import Callable
from pathlib import Path


def write_atomically(target: Path, write: Callable[[Path], object]) -> Path:
    """Call ``write`` with a temporary path beside ``target``, then rename it into place.

    Examples
    --------
    >>> import tempfile
    >>> folder = Path(tempfile.mkdtemp())
    >>> write_atomically(folder / "a.txt", lambda out: out.write_text("whole")).read_text()
    'whole'
    >>> sorted(path.name for path in folder.iterdir())  # no temporary file left behind
    ['a.txt']
    """
    temporary = target.parent / f".{target.name}.{secrets.token_hex(6)}.tmp"
    try:
        write(temporary)
        os.replace(temporary, target)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise
    return target
