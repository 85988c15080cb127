"""The runs a ``where`` selects, decided in SQL where SQL is exact, without decoding the others.

:func:`matching_keys` reads the rows SQLite says may match (:mod:`RLA.query.sqlwhere`'s *may*
condition) with the *must* condition beside each: a row that must match is selected as it is;
only the others (values SQL cannot hold exactly, parts of the expression it cannot compile) are
decoded and decided by Python's evaluator, the reference. For a ``where`` SQL compiles whole,
no record is decoded at all, which lets ``rla list --where ... --format csv`` write its rows
straight from the index (:mod:`RLA.query.csv_stream`) like a plain listing.
"""

from __future__ import annotations

from typing import Any, List, Optional

from RLA.query.expr import Query


def matching_keys(catalog: Any, task: Optional[str], archived: Optional[bool], query: Query) -> List[str]:
    """The keys of the stored runs of the scope that ``query`` selects, in key order (call after
    ``catalog.refresh``; damaged runs are not stored, so never selected)."""
    from RLA.query.selection import RunRow
    from RLA.query.sqlwhere import compile_query
    from RLA.query.stored import decode
    from RLA.query.tree import layout_of

    (may, may_args), (must, must_args) = compile_query(query)
    scope, scope_args = catalog.scope_sql(task, [False, True] if archived is None else [archived])
    rows = catalog.conn.execute(
        f"SELECT key, {must} FROM runs WHERE {scope} AND {may} ORDER BY key",
        tuple(must_args) + scope_args + tuple(may_args),
    ).fetchall()
    keys = []
    for key, sure in rows:
        if not sure:  # Python decides: decode this row only
            (text,) = catalog.conn.execute("SELECT record FROM runs WHERE key = ?", (key,)).fetchone()
            record = decode(text)
            if record is None:
                from RLA.query.records import read_record

                record = read_record(layout_of(catalog.data_root, key), full_info=False)
            if not query.matches(RunRow(layout_of(catalog.data_root, key), record).view()):
                continue
        keys.append(key)
    return keys
