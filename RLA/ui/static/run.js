/* Run page: status, error, command, git facts and diff, hyper-parameters (tracked marked), metrics,
   files with sizes, checkpoints, replay snapshots, figures/images/videos, log tail, tags and note. */
"use strict";
(function () {
  var el = RLA.el;

  function section(title, content, id) {
    return el("section", {className: "card", id: id}, el("h2", null, title), content);
  }

  function kv(pairs) {
    return el("table", {className: "kv"}, el("tbody", null, pairs.filter(function (p) { return p[1] !== null && p[1] !== undefined && p[1] !== ""; })
      .map(function (p) { return el("tr", null, el("th", null, p[0]), el("td", null, p[1] instanceof Node ? p[1] : RLA.fmt(p[1]))); })));
  }

  function facts(run) {
    var git = run.git || {};
    var command = Array.isArray(run.command) ? run.command.join(" ") : run.command;
    return kv([["status", RLA.statusBadge(run.status)], ["exit code", run.exit_code], ["error", run.error],
               ["started", run.start_time], ["ended", run.end_time], ["host", run.host ? run.host + " (" + (run.ip || "-") + ")" : null],
               ["pid", run.pid], ["command", command ? el("code", null, command) : null], ["parent", run.parent],
               ["git", git.commit ? (git.commit + " on " + (git.branch || "-") + (git.dirty ? " (dirty)" : "")) : null],
               ["time-step", run.time_step], ["rows", run.rows], ["archived", run.archived ? "yes" : null]]);
  }

  function params(run) {
    var keys = Object.keys(run.hyper_params).sort();
    return el("table", {className: "kv params"}, el("tbody", null, keys.map(function (k) {
      var tracked = run.tracked_keys.indexOf(k) >= 0;
      return el("tr", {className: tracked ? "tracked" : ""}, el("th", null, (tracked ? "\u2605 " : "") + k),
                el("td", null, RLA.fmt(run.hyper_params[k])));
    })), el("caption", null, "from " + run.param_source + "; \u2605 tracked (in the run name)"));
  }

  function metrics(run) {
    var keys = Object.keys(run.metrics);
    if (!keys.length) return el("p", {className: "muted"}, "no metrics logged");
    return el("table", {className: "grid"}, el("thead", null, el("tr", null, ["metric", "last", "min", "max"].map(function (h) { return el("th", null, h); }))),
      el("tbody", null, keys.map(function (k) { var m = run.metrics[k];
        return el("tr", null, el("td", null, k), el("td", {className: "num"}, RLA.fmt(m.last)), el("td", {className: "num"}, RLA.fmt(m.min)), el("td", {className: "num"}, RLA.fmt(m.max))); })));
  }

  function files(run) {
    var box = el("div");
    Object.keys(run.files).forEach(function (kind) {
      var entry = run.files[kind];
      var list = el("ul", {className: "files"}, entry.files.map(function (f) {
        return el("li", null, f.link ? el("span", {className: "mono"}, f.path + " (link, not served)")
                                      : el("a", {href: RLA.fileUrl(f.path), className: "mono", target: "_blank", rel: "noopener"}, f.path),
                  el("span", {className: "size"}, RLA.size(f.size)));
      }));
      var more = entry.total_files > entry.files.length ? el("p", {className: "muted"}, (entry.total_files - entry.files.length) + " more files") : null;
      box.appendChild(el("details", {open: kind !== "code"}, el("summary", null, kind + " \u2014 " + entry.total_files + " files, " + RLA.size(entry.total_bytes)), list, more));
    });
    return box;
  }

  function replay(info) {
    if (!info) return el("p", {className: "muted"}, "no replay snapshots");
    if (info.error) return RLA.errorBox(info.error);
    var lines = ["snapshot " + info.snapshot + " (" + info.kind + ", format v" + info.format_version + ", " + info.world_size +
                 " shard(s), " + (info.payload_bytes / 1e6).toFixed(2) + " MB payload)", "snapshots in store: " + info.snapshots.join(", ")];
    (info.schema || []).forEach(function (f) { lines.push("  field " + f.name + ": " + RLA.fmt(f.dtype) + " " + JSON.stringify(f.shape)); });
    (info.shards || []).forEach(function (r) { lines.push("  rank " + r.rank + ": size=" + r.size + " capacity=" + r.capacity + " cursor=" + r.cursor + " files=" + r.files + " bytes=" + r.bytes); });
    Object.keys(info.episode_report || {}).forEach(function (c) { var e = info.episode_report[c]; lines.push("  episodes " + c + ": " + e.episodes + " (" + e.steps + " steps)"); });
    return el("pre", null, lines.join("\n"));
  }

  function media(run) {
    if (!run.media.length) return el("p", {className: "muted"}, "no figures, images or videos in results/");
    return el("div", {className: "media"}, run.media.map(function (m) {
      var url = RLA.fileUrl(m.path);
      var node = m.kind === "video" ? el("video", {src: url, controls: true, preload: "metadata"}) : el("img", {src: url, alt: m.path, loading: "lazy"});
      return el("figure", null, node, el("figcaption", {className: "mono"}, m.path.split("/").slice(-2).join("/")));
    }));
  }

  function annotations(run, onSaved) {
    var tags = el("div", {className: "tags"}, run.tags.map(function (t) {
      return el("span", {className: "tag"}, t, RLA.info.read_only ? null : el("button", {type: "button", className: "x", title: "remove tag", onclick: function () {
        RLA.api("run/" + encodeURI(run.index) + "/annotations", null, {body: {remove: [t]}}).then(onSaved); }}, "\u00D7"));
    }));
    if (RLA.info.read_only) return el("div", null, tags, el("p", {className: "note-text"}, run.note || ""));
    var tagInput = el("input", {type: "text", placeholder: "new tag", size: 12});
    var note = el("textarea", {rows: 3, value: run.note, placeholder: "note"});
    var status = el("span", {className: "muted"});
    return el("div", null, tags,
      el("div", {className: "row"}, tagInput, el("button", {type: "button", onclick: function () {
        if (!tagInput.value.trim()) return;
        RLA.api("run/" + encodeURI(run.index) + "/annotations", null, {body: {add: [tagInput.value.trim()]}}).then(onSaved)
          .catch(function (e) { status.textContent = e.message; }); }}, "Add tag")),
      note, el("div", {className: "row"}, el("button", {type: "button", onclick: function () {
        RLA.api("run/" + encodeURI(run.index) + "/annotations", null, {body: {note: note.value}})
          .then(function () { status.textContent = "saved"; }).catch(function (e) { status.textContent = e.message; }); }}, "Save note"), status));
  }

  function render(main, index) {
    RLA.api("run/" + encodeURI(index)).then(function (run) {
      RLA.clear(main);
      var firstMetric = Object.keys(run.metrics)[0];
      main.appendChild(el("div", {className: "title"}, el("h1", {className: "mono"}, run.index),
        el("div", {className: "muted mono"}, run.name),
        el("div", {className: "links"}, firstMetric ? el("a", {href: "#/charts?" + RLA.qs({run: run.index, metric: firstMetric})}, "chart " + firstMetric) : null)));
      run.problems.forEach(function (p) { main.appendChild(RLA.errorBox(p)); });
      var grid = el("div", {className: "cards"});
      grid.appendChild(section("Run", facts(run), "facts"));
      grid.appendChild(section("Hyper-parameters", params(run), "params"));
      grid.appendChild(section("Tags and note", annotations(run, function () { render(main, index); }), "annotations"));
      grid.appendChild(section("Last metrics", metrics(run), "metrics"));
      main.appendChild(grid);
      main.appendChild(section("Figures, images and videos", media(run), "media"));
      main.appendChild(section("Git diff (uncommitted changes when the run started)", run.git_diff ? el("pre", {className: "diff"}, run.git_diff) : el("p", {className: "muted"}, "no uncommitted changes recorded"), "git-diff"));
      main.appendChild(section("Checkpoints", run.checkpoints.length ? el("ul", {className: "files"}, run.checkpoints.map(function (f) {
        return el("li", {className: "mono"}, f.path.split("/").slice(-1)[0], el("span", {className: "size"}, RLA.size(f.size))); })) : el("p", {className: "muted"}, "no checkpoints"), "checkpoints"));
      main.appendChild(section("Replay-buffer snapshots", replay(run.replay), "replay"));
      main.appendChild(section("Files", files(run), "files"));
      main.appendChild(section("log.txt (tail)", el("pre", {className: "log"}, run.log_tail || "(empty)"), "log"));
    }).catch(function (err) { RLA.append(RLA.clear(main), RLA.errorBox(err)); });
  }

  RLA.pages.run = function (main, params, index) {
    render(main, index);
    RLA.every(5000, function () {  /* a running run's facts and log tail refresh */
      var badge = main.querySelector("#facts .status");
      if (badge && badge.textContent === "running" && !document.hidden) render(main, index);
    });
  };
})();
