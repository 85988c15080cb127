"""The dashboard in a real headless Chromium (Debian's chromium + chromedriver, through Selenium).

A real ``rla ui`` child process serves the demo database on a free 127.0.0.1 port; every
wait is bounded (WAIT seconds).
"""
from __future__ import annotations

import json
import subprocess
import sys
import time

import pytest
from demo_data import IMG, IMG_METRIC, SCRIPT

pytest.importorskip("selenium", reason="browser tests need selenium (test extra)")
from selenium.common.exceptions import StaleElementReferenceException
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

WAIT = 20


def wait(driver, predicate, message):
    # The table re-renders while we poll (live status refresh): an element read from the old
    # rendering is stale, which only means "poll again".
    return WebDriverWait(driver, WAIT, poll_frequency=0.1,
                         ignored_exceptions=(StaleElementReferenceException,)).until(lambda d: predicate(d), message)


def rows(driver):
    return driver.find_elements(By.CSS_SELECTOR, "#runs-table tbody tr[data-index]")


def open_runs(driver, server, query=""):
    driver.get(server + "#/runs" + query)
    wait(driver, lambda d: len(rows(d)) > 0, "the runs table never showed rows")


def test_runs_page_typing_a_filter_changes_the_rows(driver, server):
    open_runs(driver, server)
    assert len(rows(driver)) == 13
    box = driver.find_element(By.ID, "where")
    box.send_keys("lr == 1e-4")
    wait(driver, lambda d: len(rows(d)) == 3, "the filter did not narrow the table to 3 runs")
    box.send_keys(" and seed > 0")
    wait(driver, lambda d: len(rows(d)) == 2, "the second condition did not apply")


def test_bad_filter_shows_the_message_at_the_caret(driver, server):
    open_runs(driver, server)
    driver.find_element(By.ID, "where").send_keys("seed > 0 and lrr > 1")
    caret = wait(driver, lambda d: d.find_elements(By.CSS_SELECTOR, "#where-error pre.caret"), "no caret message")
    text, marker = caret[0].text.split("\n")
    assert text == "seed > 0 and lrr > 1" and marker == " " * 13 + "^"
    assert "lrr" in driver.find_element(By.ID, "where-error").text
    driver.find_element(By.ID, "where").clear()
    driver.find_element(By.ID, "where").send_keys("seed > 1")
    wait(driver, lambda d: not d.find_elements(By.CSS_SELECTOR, "#where-error pre.caret"), "the error stayed")


def test_run_page_shows_facts_diff_files_and_image(driver, server, demo):
    driver.get(server + "#/run/" + demo["first"])
    wait(driver, lambda d: d.find_elements(By.ID, "git-diff"), "the run page did not load")
    page = driver.find_element(By.TAG_NAME, "main").text
    for text in ("finished", "+LR = 0.001", "checkpoint-000050.pt", "2.0 KB", "[059] step 59000", "★ lr"):
        assert text in page, text
    wait(driver, lambda d: d.execute_script("var i = document.querySelector('#media img');"
                                            "return i && i.complete && i.naturalWidth > 0;"), "image not loaded")


def _ink(driver) -> int:
    """Non-white, non-transparent pixels of the first chart canvas."""
    return driver.execute_script(
        "var c = document.querySelector('.chart canvas'); if (!c) return -1;"
        "var d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data, n = 0;"
        "for (var i = 0; i < d.length; i += 4) if (d[i+3] > 0 && (d[i] < 240 || d[i+1] < 240 || d[i+2] < 240)) n++;"
        "return n;")


def test_chart_canvas_is_drawn(driver, server):
    driver.get(server + "#/charts?metric=return&group=lr&band=ci&task=dqn%2FCartPole&where=seed%20%3C%203")
    wait(driver, lambda d: _ink(d) > 2000, "the chart canvas stayed blank")
    legend = driver.find_element(By.CSS_SELECTOR, ".u-legend").text
    assert "lr=0.0001 (3)" in legend and "lr=0.001 (3)" in legend
    assert " low" not in legend  # bands are drawn, not listed


def test_compare_page_lists_differences(driver, server, demo):
    driver.get(server + f"#/compare?run={demo['first']}&run={demo['second']}")
    table = wait(driver, lambda d: d.find_elements(By.ID, "compare-table"), "no compare table")[0]
    assert "seed" in table.text and "algo" not in table.text
    assert "+SEED = 1" in driver.find_element(By.TAG_NAME, "main").text


def test_status_changes_on_the_page_when_the_process_ends(driver, server, demo, tmp_path):
    from RLA.fs import read_json
    from RLA.ui.lookup import resolve_run

    info_path = resolve_run(demo["root"], demo["running"]).run_info_file
    stop = tmp_path / "stop"
    child = subprocess.Popen([sys.executable, "-c", (
        "import json, os, sys, time\n"
        "from RLA.fs import atomic_write_json, read_json\n"
        f"path, stop = {str(info_path)!r}, {str(stop)!r}\n"
        "info = read_json(path); info['pid'] = os.getpid(); atomic_write_json(path, info)\n"
        "deadline = time.monotonic() + 60\n"
        "while not os.path.exists(stop) and time.monotonic() < deadline: time.sleep(0.05)\n"
        "info['status'] = 'finished'; info['end_time'] = info['heartbeat']; atomic_write_json(path, info)\n")])
    try:
        deadline = time.monotonic() + WAIT
        while read_json(info_path).get("pid") != child.pid and time.monotonic() < deadline:
            time.sleep(0.05)
        open_runs(driver, server, "?where=seed%20%3D%3D%207")
        def badge(d):
            return d.find_element(By.CSS_SELECTOR, "#runs-table tbody td.status-cell").text

        wait(driver, lambda d: badge(d) == "running", "the live run is not shown running")
        stop.touch()
        child.wait(timeout=WAIT)
        wait(driver, lambda d: badge(d) == "finished", "the status did not change without a reload")
    finally:
        if child.poll() is None:
            child.kill()
            child.wait(timeout=10)


def test_archive_asks_for_confirmation_then_moves_the_run(driver, server, demo):
    from RLA.ui.lookup import resolve_run

    open_runs(driver, server, "?where=lr%20%3D%3D%201e-4")
    target = rows(driver)[0].get_attribute("data-index")
    rows(driver)[0].find_element(By.CSS_SELECTOR, "input[type=checkbox]").click()
    driver.find_element(By.XPATH, "//div[@id='actions']/button[text()='Archive']").click()
    dialog = wait(driver, lambda d: d.find_element(By.ID, "confirm-dialog") if d.execute_script(
        "return document.getElementById('confirm-dialog').open") else None, "no confirmation dialog")
    assert target in dialog.text and "archive" in dialog.text.lower()
    driver.find_element(By.ID, "confirm-cancel").click()
    time.sleep(0.3)
    assert resolve_run(demo["root"], target).archived is False  # cancel changed nothing
    driver.find_element(By.XPATH, "//div[@id='actions']/button[text()='Archive']").click()
    wait(driver, lambda d: d.execute_script("return document.getElementById('confirm-dialog').open"), "no dialog")
    driver.find_element(By.ID, "confirm-ok").click()
    wait(driver, lambda d: target not in [r.get_attribute("data-index") for r in rows(d)] and len(rows(d)) == 2,
         "the archived run stayed in the table")
    assert resolve_run(demo["root"], target).archived is True


def _dialog_open(driver):
    return driver.execute_script("return document.getElementById('confirm-dialog').open")


def test_restore_from_the_trash_asks_for_confirmation_then_puts_the_run_back(driver, server, demo):
    from RLA.ops import plan_delete
    from RLA.ui.lookup import resolve_run

    target = demo["second"]
    plan_delete(demo["root"], [resolve_run(demo["root"], target)]).apply()
    driver.get(server + "#/trash")
    def trashed(d):
        return [r.get_attribute("data-index") for r in d.find_elements(By.CSS_SELECTOR, "#trash-table tr[data-index]")]

    wait(driver, lambda d: trashed(d) == [target], "the deleted run is not listed in the trash")
    driver.find_element(By.CSS_SELECTOR, "#trash-table tr[data-index] input[type=checkbox]").click()
    driver.find_element(By.ID, "restore-trash").click()
    wait(driver, _dialog_open, "no confirmation dialog")
    assert target in driver.find_element(By.ID, "confirm-dialog").text
    driver.find_element(By.ID, "confirm-cancel").click()
    time.sleep(0.3)
    assert not resolve_run_or_none(demo["root"], target)  # cancel changed nothing
    driver.find_element(By.ID, "restore-trash").click()
    wait(driver, _dialog_open, "no dialog the second time")
    driver.find_element(By.ID, "confirm-ok").click()
    wait(driver, lambda d: trashed(d) == [], "the restored run stayed in the trash list")
    assert resolve_run(demo["root"], target).log_dir.is_dir()
    open_runs(driver, server, "?where=seed%20%3D%3D%201%20and%20lr%20%3D%3D%201e-3")
    assert [r.get_attribute("data-index") for r in rows(driver)] == [target]


def resolve_run_or_none(root, index):
    from RLA.errors import RunNotFoundError
    from RLA.ui.lookup import resolve_run

    try:
        return resolve_run(root, index)
    except RunNotFoundError:
        return None


def test_a_new_run_appears_on_the_runs_page_without_a_reload(driver, server, demo):
    from RLA.query.testing import make_run

    driver.get(server + "#/runs?where=seed%20%3D%3D%2011")
    wait(driver, lambda d: d.find_elements(By.CSS_SELECTOR, "#runs-table td.empty"), "the empty table never showed")
    new = make_run(demo["root"], task="dqn/CartPole", params={"algo": "dqn", "lr": 1e-4, "seed": 11},
                   curves={"return": [1.0, 2.0]})
    wait(driver, lambda d: [r.get_attribute("data-index") for r in rows(d)] == [new.index],
         "the new run did not appear without a reload")


def test_xss_payloads_stay_text_on_every_page(driver, server, demo):
    columns = "&column=index&column=algo&column=env&column=" + "last(" + IMG_METRIC + ")"
    open_runs(driver, server, "?where=seed%20%3D%3D%209" + columns.replace("<", "%3C").replace(">", "%3E"))
    main = driver.find_element(By.TAG_NAME, "main").text
    assert SCRIPT in main and IMG in main
    driver.get(server + "#/run/" + demo["hostile"])
    wait(driver, lambda d: d.find_elements(By.ID, "params"), "hostile run page did not load")
    assert SCRIPT in driver.find_element(By.ID, "params").text
    assert driver.execute_script("return document.querySelector('#annotations textarea').value") == SCRIPT + IMG
    driver.get(server + "#/runs?task=" + json.dumps(IMG)[1:-1].replace('\\"', "%22").replace("<", "%3C").replace(">", "%3E"))
    wait(driver, lambda d: IMG in d.find_element(By.TAG_NAME, "main").text, "hostile task not listed")
    driver.get(server + "#/charts?where=seed%20%3D%3D%209&metric=" + IMG_METRIC.replace("<", "%3C").replace(">", "%3E"))
    wait(driver, lambda d: IMG_METRIC in d.find_element(By.ID, "metric-picks").text, "hostile metric not listed")
    time.sleep(0.5)
    assert driver.execute_script("return window.__xss") is None
    assert not driver.find_elements(By.CSS_SELECTOR, "main img[src='x'], main script")
