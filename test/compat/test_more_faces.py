"""The original modules that were missing: each imports and works with the usage the original documents."""
from __future__ import annotations

import importlib
import socket
import socketserver
import threading
from pathlib import Path

import numpy as np
import pytest

from RLA.errors import BackendNotInstalledError, RLAError

MODULES = ["RLA.easy_log.tools", "RLA.easy_log.simple_mat_plot", "RLA.easy_plot.plot_func",
           "RLA.easy_plot.plot_saved_images", "RLA.easy_plot.utils", "RLA.easy_torch.save_tools",
           "RLA.easy_tf.saver_tools", "RLA.easy_tf.tools", "RLA.emb_test", "RLA.auto_ftp", "RLA.email_send"]


@pytest.mark.parametrize("name", MODULES)
def test_module_imports(name: str):
    importlib.import_module(name)


@pytest.mark.parametrize("call", [
    lambda: importlib.import_module("RLA.easy_tf.saver_tools").new_saver(5, ""),
    lambda: importlib.import_module("RLA.easy_tf.saver_tools").load_checkpoint(None, None),
    lambda: importlib.import_module("RLA.easy_tf.tools").run_with_metadata(None, [], {}, "x"),
    lambda: importlib.import_module("RLA.easy_log.tester").exp_manager.add_graph(None),
    lambda: importlib.import_module("RLA.easy_log.tester").exp_manager.add_summary_to_logger(b"", "n"),
    lambda: importlib.import_module("RLA.easy_log.tester").exp_manager.dict_to_table_text_summary({}, "n"),
])
def test_tensorflow_only_functions_say_what_to_use(call):
    with pytest.raises(BackendNotInstalledError) as info:
        call()
    text = str(info.value)
    assert "TensorFlow" in text and "Expected:" in text and "Found:" in text and "Fix:" in text


def test_emb_test_schedules_and_the_fixed_key_map():
    emb = importlib.import_module("RLA.emb_test")
    controller, calls = emb.EmbUnitController(), []
    controller.add_test("once", lambda: calls.append("once"), emb.TestType.SINGLE_TIME)
    controller.add_test("every3", lambda: calls.append("every3"), emb.TestType.FREQUENT, freq=3)
    controller.add_test("keys", lambda k: calls.append(k), emb.TestType.KEY_MAP, keys=["a", "b"])
    for _ in range(6):
        controller.do_test("once")
        controller.do_test("every3")
    for key in ["a", "a", "b", "c", "b"]:
        controller.do_test("keys", key, key)
    assert calls == ["once", "every3", "every3", "a", "b"]  # the original's KEY_MAP never ran
    with pytest.raises(RLAError, match="No embedded test"):
        controller.do_test("missing")


def test_old_delete_tool_takes_log_root_and_sub_proj(legacy_db: Path):
    from RLA.easy_log.log_tools import Filter
    from RLA.easy_log.tools import DeleteLogTool
    tool = DeleteLogTool(str(legacy_db.parent), legacy_db.name, "demo_task", "2022/03/01/21-13*", Filter())
    assert tool.delete_related_log(skip_ask=True) == 10  # 2 runs x 5 types, the original test_delete_reg count
    assert tool.delete_related_log(skip_ask=True) == 0
    assert (legacy_db / ".trash").is_dir()


def test_time_used_wrap_records_and_returns(global_run):
    from RLA.easy_log.tools import time_used_wrap
    assert time_used_wrap("add", lambda a, b: a + b, 2, 3) == 5
    rows = Path(global_run.log_dir, "progress.csv").read_text().splitlines()
    assert "time_used/add" in rows[0]


def test_simple_plots_go_to_results_and_never_overwrite(global_run, recwarn):
    from RLA.easy_log.simple_mat_plot import simple_hist, simple_plot, simple_scatter
    results = Path(global_run.results_dir)
    assert simple_plot("curve", data=[[1, 2, 3], [3, 2, 1]], labels=["up", "down"], xlabel="t") == \
        results / "curve.png"
    assert simple_plot("curve", x=[[0, 1]], y=[[1, 0]]) is None  # exists and cover=False
    assert simple_plot("curve", x=[[0, 1]], y=[[1, 0]], cover=True) == results / "curve.png"
    assert simple_hist("hist", np.arange(10), pretty=True, bins=3) == results / "hist.pdf"
    assert simple_scatter("sc", [np.ones((4, 2)), np.zeros((4, 2))], ["a", "b"]) == results / "sc.png"
    out = Path(global_run.results_dir).parent / "elsewhere.png"
    assert simple_plot("x", data=[[1, 2]], save_path=str(out)) == out and out.stat().st_size > 0
    with pytest.raises(RLAError, match="needs curves"):
        simple_plot("nothing")


def test_plot_res_func_v1(legacy_db: Path):
    from RLA.easy_plot.plot_func import plot_res_func
    g2lf, score_results = plot_res_func(str(legacy_db / "log" / "demo_task"), ["/2022/03/01/21-13*"],
                                        ["learning_rate"], ["y_out"], save_name="v1.png", resample=0,
                                        smooth_step=0, x_bound=25, verbose=False)
    assert set(g2lf) == {"y_out"}
    assert score_results["learning_rate=0.001-range"] == [40.0, 40.0]
    assert (legacy_db / "results" / "easy_plot" / "demo_task" / "v1.png").is_file()
    with pytest.raises(RLAError, match="not a task's log folder"):
        plot_res_func(str(legacy_db), ["*"], [], ["y_out"])


def test_plot_saved_images_and_results_loader(legacy_db: Path, tmp_path: Path):
    import matplotlib.pyplot as plt

    from RLA.easy_plot.plot_saved_images import plot_saved_images
    from RLA.easy_plot.utils import results_loader
    png = tmp_path / "img.png"
    plt.imsave(png, np.zeros((4, 4, 3)))
    found_dir = next((legacy_db / "results" / "demo_task" / "2022/03/01").glob("21-13-03*"))
    (found_dir / "9-react_func.png").write_bytes(png.read_bytes())
    groups = plot_saved_images(str(legacy_db), "demo_task", ["2022/03/01/21-13-03*"], ["*react_func.png"],
                               show=False)
    (res,) = groups["2022/03/01/21-13-03*"]
    assert [Path(p).name for p in res.img_path_dict["*react_func.png"]] == ["9-react_func.png"]
    assert res.hyper_param["learning_rate"] == 0.001
    kept, by_reg = results_loader(str(legacy_db), "demo_task", ["2022/03/01/*"], {"learning_rate": ["0.0001"]},
                                  lambda hit: importlib.import_module("RLA.easy_plot.result_cls").Result(
                                      dirname=hit.dirname), False, "log")
    # the legacy run matches; the run without learning_rate is kept with a warning, as in the original
    assert sorted(r.hyper_param.get("env_id", "-") for r in kept) == ["-", "Test-v1"]
    assert by_reg["2022/03/01/*"] == kept


def test_torch_save_tools(global_run):
    import torch

    from RLA.easy_torch.save_tools import load_checkpoint, save_model_dict
    global_run.set_timestep(4)
    path = save_model_dict({"w": torch.ones(2)})
    assert path.name == "checkpoint-4.pt"
    assert torch.equal(load_checkpoint(global_run)["w"], torch.ones(2))
    past = global_run.load_tester(global_run.layout.record_date, "demo_task", global_run.data_root)
    assert torch.equal(load_checkpoint(past)["w"], torch.ones(2))


def test_torch_save_tools_reads_the_originals_checkpoint_pt(global_run):
    import torch

    from RLA.easy_torch.save_tools import load_checkpoint
    torch.save({"w": torch.zeros(3)}, Path(global_run.checkpoint_dir) / "checkpoint.pt")
    assert torch.equal(load_checkpoint(global_run)["w"], torch.zeros(3))


def test_pretty_plot_wrapper_polixir_keywords(global_run, tmp_path: Path):
    import matplotlib.pyplot as plt

    from RLA import MatplotlibRecorder
    other = tmp_path / "other"
    path = MatplotlibRecorder.pretty_plot_wrapper("f", lambda: plt.plot([1, 2], label="l"), pretty_plot=True,
                                                  close_all_fig=False, results_dir=str(other), dpi=20)
    assert path == other / "0-f.png" and plt.get_fignums()  # kept open
    assert plt.gcf().axes[0].xaxis.label.get_fontsize() == 18
    import matplotlib.image as mpimg
    assert mpimg.imread(path).shape[1] < 200  # dpi=20 reached savefig
    MatplotlibRecorder.pretty_plot_wrapper("g", lambda: plt.plot([1]))
    assert not plt.get_fignums() and (Path(global_run.results_dir) / "0-g.png").is_file()
    assert MatplotlibRecorder.save("h", fig=plt.figure(), results_dir=str(other)) == other / "0-h.png"
    plt.close("all")


def test_auto_ftp_over_one_session(tmp_path: Path):
    from pyftpdlib.authorizers import DummyAuthorizer
    from pyftpdlib.handlers import FTPHandler as Handler
    from pyftpdlib.servers import FTPServer

    from RLA.auto_ftp import FTPHandler, ftp_factory
    home = tmp_path / "home"
    home.mkdir()
    auth = DummyAuthorizer()
    auth.add_user("u", "pw-secret", str(home), perm="elradfmwMT")
    Handler.authorizer = auth
    server = FTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, kwargs={"timeout": 0.05}, daemon=True)
    thread.start()
    try:
        local = tmp_path / "local"
        local.mkdir()
        (local / "progress.csv").write_text("a,b\n1,2\n")
        (tmp_path / "ignore").write_text("# comment\n*.tmp\n")
        with ftp_factory("ftp", "127.0.0.1", "u", "pw-secret", server.socket.getsockname()[1],
                         ignore=str(tmp_path / "ignore")) as handler:
            assert isinstance(handler, FTPHandler)
            assert handler.ignore_match(["a.tmp", "b.csv"]) == ["b.csv"]
            handler.upload_file("/log/t/run", str(local), "progress.csv")
            files = []
            handler.all_file_search("/log", files, len("/log"))
            assert files == ["/t/run/progress.csv"]
            target = tmp_path / "down" / "p.csv"
            assert handler.download_file("/log/t/run/progress.csv", str(target)) is True
            assert handler.download_file("/log/t/run/progress.csv", str(target)) is False  # same size
            assert target.read_text() == "a,b\n1,2\n"
        with pytest.raises(RLAError, match="Unknown file transfer protocol"):
            ftp_factory("scp", "127.0.0.1", "u", "p")
    finally:
        server.close_all()
        thread.join(timeout=10)


class _SMTP(socketserver.StreamRequestHandler):
    """Just enough SMTP to receive one message (127.0.0.1 only)."""

    received: list = []

    def handle(self) -> None:
        self.wfile.write(b"220 test\r\n")
        while True:
            line = self.rfile.readline()
            if not line:
                return
            verb = line[:4].upper()
            if verb == b"DATA":
                self.wfile.write(b"354 go\r\n")
                body = b"".join(iter(self.rfile.readline, b".\r\n"))
                type(self).received.append(body.decode())
                self.wfile.write(b"250 ok\r\n")
            elif verb == b"QUIT":
                self.wfile.write(b"221 bye\r\n")
                return
            elif verb == b"EHLO":
                self.wfile.write(b"250-test\r\n250 AUTH PLAIN\r\n")
            elif verb == b"AUTH":
                self.wfile.write(b"235 ok\r\n")
            else:
                self.wfile.write(b"250 ok\r\n")


def test_email_send_error(tmp_path: Path):
    from RLA.email_send import EmailError, send_error
    _SMTP.received = []
    server = socketserver.TCPServer(("127.0.0.1", 0), _SMTP)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        host = f"127.0.0.1:{server.server_address[1]}"
        send_error("crash", ["line 1", "line 2"], {"from": "me@x", "smtpserver": host},
                   {"source_email": "me@x", "source_passward": "pw", "targer_email": "you@y"}, timeout=10)
        (mail,) = _SMTP.received
        assert "title crash" in mail and "line 1" in mail and "To: you@y" in mail
        with pytest.raises(EmailError, match="misses the key 'targer_email'"):
            send_error("s", [], {"from": "a", "smtpserver": host}, {"source_email": "a", "source_passward": ""})
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)
    free = socket.socket()
    free.bind(("127.0.0.1", 0))
    port = free.getsockname()[1]
    free.close()
    with pytest.raises(EmailError, match="Could not send"):
        send_error("s", "x", {"from": "a", "smtpserver": f"127.0.0.1:{port}"},
                   {"source_email": "a", "source_passward": "pw-xyz", "targer_email": "b"}, timeout=5)
