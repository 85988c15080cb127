"""A run or task folder whose name is not UTF-8 must not break listing the database for everyone.

Such a folder can arrive by ``cp``/``rsync``/``tar`` from a machine with another locale (pull
itself refuses such names). Python sees its name with lone surrogates (``\\udcff``), which
SQLite and pyarrow cannot encode: today ``list_runs`` (and ``rla list``) fails with a
UnicodeEncodeError for the whole data root. Expected: the run is skipped and reported, the
others are listed.

Fixed by the query rewrite (#23): discovery (RLA/query/tree.py) keeps such names out of the
index, lists their folder on every query and reports each in ``frame.attrs['skipped']``.
"""
from __future__ import annotations

import os
import shutil
import warnings
from pathlib import Path

import pytest

from RLA.query.testing import make_run


@pytest.mark.timeout(120)
@pytest.mark.parametrize("where", ["run", "task"])
def test_an_undecodable_folder_name_is_skipped_and_the_others_listed(tmp_path: Path, where: str) -> None:
    from RLA.query import list_runs

    good = [make_run(tmp_path, task="t", params={"seed": i}) for i in range(2)]
    source = os.fsencode(good[0].log_dir)
    if where == "run":
        target = source + b"_\xff\xfe"
    else:
        target = os.fsencode(tmp_path / "log") + b"/bad\xff/" + os.fsencode(good[0].relative).split(b"/", 1)[1]
    os.makedirs(os.path.dirname(target), exist_ok=True)
    shutil.copytree(source, target)
    old = 1_600_000_000  # old folders: listings are trusted from the index unless refused
    for dirpath, _, filenames in os.walk(os.fsencode(tmp_path), topdown=False):
        for name in filenames:
            os.utime(os.path.join(dirpath, name), (old, old))
        os.utime(dirpath, (old, old))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        frame = list_runs(tmp_path)
        again = list_runs(tmp_path)  # from the stored listings: still reported
    assert sorted(frame["index"]) == sorted(run.index for run in good)
    assert len(frame.attrs["skipped"]) == 1
    assert sorted(again["index"]) == sorted(run.index for run in good) and len(again.attrs["skipped"]) == 1
