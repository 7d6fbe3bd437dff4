"""The lines of the case `import` writes, kept on disk while the dump is read: not an upstream
piece.

A case's header names how many objects it holds and the Workload API version its objects use,
known only once the whole dump is read, and its pending pods go in creation order: so the
objects' lines cannot go to the case file as they are read. They were held as text (620 MB
for a 150,000-pod cluster), and that memory, freed once written, stayed with the process while
it loaded the case again to check it (1.40 GB at its peak, against `run`'s 890 MB). A CaseSpool
keeps them in two unnamed temporary files instead (deleted by the system when closed, even if
the process dies), and copies them into the case after its header.
"""

from __future__ import annotations

import shutil
import tempfile
from typing import BinaryIO, List, Optional, Tuple

_COPY = 8 << 20  # bytes copied at a time


class SpoolError(Exception):
    """An OSError of the temporary files (args: it): the case cannot be written."""


class CaseSpool:
    """The cluster's lines in order, and the pending pods' lines, each at an offset, to be
    written in another order. `folder`: where the temporary files go (None: the system's)."""

    def __init__(self, folder: Optional[str]) -> None:
        self.folder = folder
        self.cluster: Optional[BinaryIO] = None
        self.pods: Optional[BinaryIO] = None
        self.pods_size = 0

    def _file(self) -> BinaryIO:
        return tempfile.TemporaryFile(prefix=".schedharness-import.", dir=self.folder)

    def add_cluster(self, text: str) -> None:
        try:
            if self.cluster is None:
                self.cluster = self._file()
            self.cluster.write(text.encode("utf-8"))
        except OSError as e:
            raise SpoolError(e) from None

    def add_pod(self, text: str) -> Tuple[int, int]:
        """A pending pod's lines; their (offset, length), for write_case."""
        data = text.encode("utf-8")
        try:
            if self.pods is None:
                self.pods = self._file()
            self.pods.write(data)
        except OSError as e:
            raise SpoolError(e) from None
        at = self.pods_size
        self.pods_size += len(data)
        return at, len(data)

    def write_case(self, out: BinaryIO, head: str, pods: List[Tuple[int, int]], tail: str) -> None:
        """The case: `head`, `cluster:` and its lines, `pods:` and the pods' lines in the order
        of `pods` ((offset, length) as add_pod gave them), then `tail`."""
        out.write(head.encode("utf-8"))
        if self.cluster is not None and self.cluster.tell():
            out.write(b"cluster:\n")
            self.cluster.seek(0)
            shutil.copyfileobj(self.cluster, out, _COPY)
        else:
            out.write(b"cluster: []\n")
        out.write(b"pods:\n" if pods else b"pods: []\n")
        if pods:
            f = self.pods
            for offset, length in pods:
                f.seek(offset)
                out.write(f.read(length))
        out.write(tail.encode("utf-8"))

    def close(self) -> None:
        for f in (self.cluster, self.pods):
            if f is not None:
                f.close()
        self.cluster = self.pods = None
