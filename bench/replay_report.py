"""What the replay benchmark reports from its merged rows: the issue's goals, the readable
summary tables (the README shows these; bench/RESULTS.md adds every column) and the notes
whose numbers are computed from this run."""
from __future__ import annotations

from typing import Any, Dict, List, Optional

Rows = Dict[Any, Dict[str, Any]]
B2, B1 = "B2 pixel TED", "B1 state"
TORCHRL, TORCHRL_FLAT = "TorchRL (uniform)", "TorchRL (uniform, FlatStorageCheckpointer)"
RLA_DEDUP = "RLA (uniform, TED dedup)"


def goals(by: Rows, kills: List[Dict[str, Any]]) -> Dict[str, Any]:
    """The issue's goals, each judged like for like: the disk-limit ones on B2, the TorchRL ones
    on B2 and B1 (uniform sampling on both sides; with dedup, against TorchRL's own dedup
    checkpointer), B4's append and B5's kills. Loads are judged both ways they are measured."""
    out: Dict[str, Any] = {}
    b2 = by[(B2, "RLA (uniform)")]
    out["B2 save >= 0.8x the better write limit"] = b2["save/best_write"] >= 0.8
    out["B2 load >= 0.7x the better read limit, in the saving process"] = \
        b2["load/best_read"] >= 0.7
    out["B2 load >= 0.7x the better read limit, in a fresh process"] = \
        b2.get("fresh_load/best_read", 0) >= 0.7
    for workload in (B2, B1):
        r = by.get((workload, "RLA (uniform)"), {})
        name = workload.split()[0]
        out[f"{name} save >= 1.5x TorchRL"] = r.get("save_vs_torchrl", 0) >= 1.5
        out[f"{name} load >= 1.5x TorchRL, in the saving process"] = \
            r.get("load_vs_torchrl", 0) >= 1.5
        out[f"{name} load >= 1.5x TorchRL, in a fresh process"] = \
            r.get("fresh_load_vs_torchrl", 0) >= 1.5
    ded = by.get((B2, RLA_DEDUP), {})
    for what, key in (("save", "save"), ("load, in the saving process", "load"),
                      ("load, in a fresh process", "fresh_load")):
        out[f"B2 with each system's TED dedup: {what} >= 1.5x TorchRL "
            f"(FlatStorageCheckpointer)"] = ded.get(f"{key}_vs_torchrl_flat", 0) >= 1.5
    inc = by.get(("B4 1% append", "RLA incremental"))
    out["B4 1% append writes <= 3% of a full snapshot"] = bool(inc and inc["written/full"] <= 0.03)
    rla_kills = [k for k in kills if k["system"] == "RLA"]
    if rla_kills:
        k = rla_kills[0]
        out[f"B5 0 mixed or unreadable RLA snapshots in {k['trials']} SIGKILLs"] = \
            k["mixed"] == 0 and k["unreadable"] == 0
    return out


def _s(row: Dict[str, Any], key: str) -> str:
    """``seconds (MB/s)`` of a timed column, or an empty cell."""
    if key + "_s" not in row:
        return ""
    return f"{row[key + '_s']:.3f} ({row[key + '_MB/s']})"


def _ratio(row: Dict[str, Any], key: str) -> str:
    """``median (min-max over the runs)`` of a ratio, or an empty cell."""
    if key not in row:
        return ""
    runs = row.get("runs", {}).get(key)
    if runs and len(runs) > 1:
        return f"{row[key]:.2f}x ({min(runs):.2f}-{max(runs):.2f})"
    return f"{row[key]:.2f}x"


def summary(rows: List[Dict[str, Any]], kills: List[Dict[str, Any]]) -> List[Dict[str, Any]]:
    """The readable tables: limits, save/load with ratios, sizes, kills."""
    limits = [{"limit (same bytes as B2)": r["system"], "MB/s": r["MB/s"],
               "min-max": f"{r['min']}-{r['max']}"} for r in rows if r["workload"] == "disk"]
    timed = []
    for r in rows:
        if "save_s" not in r or "load_s" not in r:
            continue
        suffix = "_flat" if "dedup" in r["system"] else ""
        timed.append({
            "workload": r["workload"], "system": r["system"],
            "MB (on disk)": f"{r['logical_MB']:g} ({r['disk_MB']:g})",
            "save s (MB/s)": _s(r, "save"),
            "load s (MB/s), saving process": _s(r, "load"),
            "load s (MB/s), fresh process": _s(r, "fresh_load"),
            "save / load / fresh load, x the device limit":
                " / ".join(f"{r[k]:.2f}" for k in ("save/best_write", "load/best_read",
                                                    "fresh_load/best_read") if k in r),
            "vs TorchRL: save": _ratio(r, f"save_vs_torchrl{suffix}"),
            "load": _ratio(r, f"load_vs_torchrl{suffix}"),
            "fresh load": _ratio(r, f"fresh_load_vs_torchrl{suffix}"),
            "peak extra MB save / load": f"{r['peak_extra_MB_save']:g} / "
                                         f"{r['peak_extra_MB_load']:g}",
            "exact": "yes" if r.get("exact") else "NO"})
    sizes = []
    for r in rows:
        if r["workload"].startswith("B4"):
            sizes.append({"workload": r["workload"], "system": r["system"],
                          "result": f"writes {r['written_MB']:g} MB = {r['written/full']:.1%} of "
                                    f"a {r['full_MB']:g} MB full snapshot, in {r['save_s']:.3f} s"})
        elif r["workload"].startswith("B3"):
            sizes.append({"workload": r["workload"], "system": r["system"],
                          "result": f"{r['disk_MB']:g} MB on disk for {r['valid_MB']:g} MB of "
                                    f"items in a {r['capacity_MB']:g} MB buffer"})
    kill_rows = [{"system": k["system"], "SIGKILLs": k["trials"],
                  "old snapshot": k["old"], "new snapshot": k["new"],
                  "mixed (torn, loads silently)": k["mixed"],
                  "unreadable (both lost)": k["unreadable"]} for k in kills]
    tables = [{"title": "Disk and memory limits, measured in the same runs", "rows": limits},
              {"title": "Durable save and cold load (medians; ratios: median and range over "
                        "the runs; a dedup row is compared with TorchRL's dedup checkpointer)",
               "rows": timed},
              {"title": "Sizes", "rows": sizes}]
    if kills:
        tables.append({"title": f"B5: a save of {kills[0]['logical_MB']:g} MB SIGKILLed at a "
                                f"random moment (U(0, 1.2 x its save time)), then loaded",
                       "rows": kill_rows})
    return tables


def cap_note(by: Rows) -> Optional[str]:
    """How far TorchRL itself runs from the device on B2: the ceiling of any lead over it
    without writing or reading fewer bytes. Computed from this run's numbers."""
    rla, peer = by.get((B2, "RLA (uniform)")), by.get((B2, TORCHRL))
    if not (rla and peer):
        return None
    parts = []
    for what, key in (("save", "save/best_write"), ("load in the saving process",
                                                    "load/best_read")):
        parts.append(f"{what}: TorchRL at {peer[key]:.2f}x the device limit, RLA at "
                     f"{rla[key]:.2f}x; a 1.5x lead needs RLA at {1.5 * peer[key]:.2f}x")
    return ("B2 without dedup moves the same bytes on both sides, so the device bounds the "
            "ratio: " + "; ".join(parts) + ". With each system's TED dedup both move half "
            "the bytes, and the dedup rows compare those like for like.")
