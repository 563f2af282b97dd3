"""The batch machinery (``ingest.batch``) on its own: it is handed how to prepare a file and
how to store one, and knows nothing of the Ingestor or the stores."""

from __future__ import annotations

from collections.abc import Callable

from ingest.batch import AHEAD_FILES, FileReport, ParseAhead, Prepared, Source


def _recorded(names: list[str]) -> Callable[[Source], Prepared]:
    """A prepare that notes each file's name and settles it at once (no parse)."""

    def prepare(source: Source) -> Prepared:
        names.append(source.name)
        return Prepared(source.name, FileReport(source.name, None, "duplicate"))

    return prepare


def test_files_are_prepared_ahead_of_the_one_taken_within_the_bound() -> None:
    sources = [Source.of_bytes(f"f{i}.txt", b"x") for i in range(AHEAD_FILES + 3)]
    prepared: list[str] = []
    ahead = ParseAhead(_recorded(prepared), sources, cancelled=lambda: False)
    assert ahead.take().display == "f0.txt"
    # The next files are read while the first is stored, no more than AHEAD_FILES at once.
    assert prepared == [s.name for s in sources[: 1 + AHEAD_FILES]]
    assert [ahead.take().display for _ in sources[1:]] == [s.name for s in sources[1:]]


def test_a_cancelled_batch_prepares_nothing_ahead() -> None:
    sources = [Source.of_bytes(f"f{i}.txt", b"x") for i in range(3)]
    prepared: list[str] = []
    ahead = ParseAhead(_recorded(prepared), sources, cancelled=lambda: True)
    assert ahead.take().display == "f0.txt"  # the file asked for, and none after it
    assert prepared == ["f0.txt"]
