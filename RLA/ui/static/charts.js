/* Charts page: grouped curves (center + band over seeds, computed by the server with RLA's plot
   statistics), drawn with uPlot; smoothing, individual runs, log scale, x bound, CSV/PNG, live. */
"use strict";
(function () {
  var el = RLA.el;
  var COLORS = ["#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf", "#bcbd22", "#7f7f7f"];
  var state = null, plots = [];

  function alpha(hex, a) {
    var n = parseInt(hex.slice(1), 16);
    return "rgba(" + (n >> 16) + "," + ((n >> 8) & 255) + "," + (n & 255) + "," + a + ")";
  }

  function initial(params) {
    return {runs: params.getAll("run"), where: params.get("where") || "", task: params.get("task") || "",
            status: params.getAll("status"), metric: params.getAll("metric"), x: params.get("x") || "time-step",
            group: params.getAll("group"), agg: params.get("agg") || "mean", band: params.get("band") || "ci",
            smooth: params.get("smooth") || "1", resample: params.get("resample") || "512",
            x_max: params.get("x_max") || "", vary_len: params.get("vary_len") !== "0",
            individual: params.get("individual") === "1", log: params.get("log") === "1", seq: 0};
  }

  function request() {
    return {run: state.runs, where: state.where, task: state.task, status: state.status, metric: state.metric,
            x: state.x, group: state.group, agg: state.agg, band: state.band, smooth: state.smooth,
            resample: state.resample, x_max: state.x_max, vary_len: state.vary_len ? "1" : "0", individual: state.individual};
  }

  /* Every group on one x axis: the union of the groups' grids (a group is null off its grid). */
  function align(groups, individual) {
    var xs = new Set();
    groups.forEach(function (g) { g.x.forEach(function (v) { xs.add(v); }); });
    var x = Array.from(xs).sort(function (a, b) { return a - b; });
    var pos = new Map(x.map(function (v, i) { return [v, i]; }));
    function spread(g, values) {
      var out = new Array(x.length).fill(null);
      g.x.forEach(function (v, i) { out[pos.get(v)] = values[i]; });
      return out;
    }
    var data = [x], series = [{label: state.x}], bands = [];
    groups.forEach(function (g, gi) {
      var color = COLORS[gi % COLORS.length];
      if (individual && g.individual) g.individual.forEach(function (r) {
        data.push(spread(g, r.y));
        series.push({label: r.index, stroke: alpha(color, 0.35), width: 1, spanGaps: true, points: {show: false}, rlaHidden: true});
      });
      var base = data.length;
      data.push(spread(g, g.center), spread(g, g.low), spread(g, g.high));
      series.push({label: g.legend + " (" + g.n + ")", stroke: color, width: 2, spanGaps: true, points: {show: false}},
                  {label: g.legend + " low", stroke: alpha(color, 0.25), width: 0.5, spanGaps: true, points: {show: false}, rlaHidden: true},
                  {label: g.legend + " high", stroke: alpha(color, 0.25), width: 0.5, spanGaps: true, points: {show: false}, rlaHidden: true});
      bands.push({series: [base + 2, base + 1], fill: alpha(color, 0.18)});
    });
    return {data: data, series: series, bands: bands};
  }

  function draw(box, metric, groups) {
    var width = Math.max(400, box.clientWidth - 20);
    var aligned = align(groups, state.individual);
    var opts = {title: metric, width: width, height: 380, series: aligned.series, bands: aligned.bands,
                scales: {x: {time: false}, y: state.log ? {distr: 3} : {}},
                axes: [{label: state.x}, {label: metric}], legend: {live: true}, cursor: {drag: {x: true, y: false}}};
    var holder = el("div", {className: "chart", dataset: {metric: metric}});
    box.appendChild(holder);
    var plot = new uPlot(opts, aligned.data, holder);
    plot.rlaGroups = groups;
    /* the legend lists the groups only (bands and individual runs are drawn, not listed) */
    var rows = holder.querySelectorAll(".u-legend .u-series");
    aligned.series.forEach(function (s, i) { if (s.rlaHidden && rows[i]) rows[i].style.display = "none"; });
    plots.push(plot);
    var link = el("a", {href: "#", className: "png", onclick: function (ev) { ev.preventDefault(); png(plot, metric, groups); }}, "PNG");
    holder.insertBefore(el("div", {className: "chart-tools"}, link), holder.firstChild);
  }

  /* The chart's canvas with a white background and the legend, as a PNG download. */
  function png(plot, metric, groups) {
    var src = plot.ctx.canvas, scale = window.devicePixelRatio || 1;
    var out = document.createElement("canvas");
    out.width = src.width; out.height = src.height + Math.ceil((groups.length * 18 + 30) * scale);
    var ctx = out.getContext("2d");
    ctx.fillStyle = "#fff"; ctx.fillRect(0, 0, out.width, out.height);
    ctx.drawImage(src, 0, 0);
    ctx.font = (13 * scale) + "px sans-serif";
    ctx.fillStyle = "#000"; ctx.fillText(metric + " vs " + state.x + " \u2014 " + state.agg + ", band " + state.band, 10 * scale, src.height + 16 * scale);
    groups.forEach(function (g, i) {
      var y = src.height + (34 + i * 18) * scale;
      ctx.fillStyle = COLORS[i % COLORS.length]; ctx.fillRect(10 * scale, y - 10 * scale, 14 * scale, 10 * scale);
      ctx.fillStyle = "#000"; ctx.fillText(g.legend + " (" + g.n + " runs)", 30 * scale, y);
    });
    var a = el("a", {href: out.toDataURL("image/png"), download: "rla-" + metric.replace(/[^\w.-]+/g, "_") + ".png"});
    document.body.appendChild(a); a.click(); a.remove();
  }

  function load(ui, quiet) {
    var seq = ++state.seq;
    RLA.setParams("charts", Object.assign(request(), {log: state.log}));
    ui.csv.href = "/api/curves?" + RLA.qs(Object.assign(request(), {format: "csv", individual: false}));
    if (!state.metric.length) { RLA.clear(ui.charts).appendChild(el("p", {className: "muted"}, "Pick a metric.")); return; }
    if (!quiet) ui.status.textContent = "loading\u2026";
    var started = performance.now();
    return RLA.api("curves", request()).then(function (result) {
      if (seq !== state.seq) return;
      plots.forEach(function (p) { p.destroy(); }); plots = [];
      RLA.clear(ui.charts);
      var running = 0, total = 0;
      Object.keys(result.metrics).forEach(function (metric) {
        var groups = result.metrics[metric];
        groups.forEach(function (g) { running += g.running; total += g.n; });
        if (!groups.length) ui.charts.appendChild(el("p", {className: "muted"}, metric + ": no data"));
        else draw(ui.charts, metric, groups);
      });
      result.notes.forEach(function (n) { ui.charts.appendChild(el("p", {className: "muted"}, n)); });
      state.running = running;
      ui.status.textContent = total + " runs" + (running ? ", " + running + " running (live)" : "") +
        " \u2014 drawn in " + Math.round(performance.now() - started) + " ms";
      document.body.dataset.chartsDrawn = String(seq);
    }).catch(function (err) {
      if (seq !== state.seq) return;
      RLA.clear(ui.charts).appendChild(RLA.errorBox(err)); ui.status.textContent = "";
    });
  }

  function choice(label, key, options, ui) {
    var select = el("select", {title: label, onchange: function () { state[key] = select.value; load(ui); }},
      options.map(function (o) { return el("option", {value: o, selected: state[key] === o}, o); }));
    return el("label", null, label + " ", select);
  }

  function flag(label, key, ui, redrawOnly) {
    var box = el("input", {type: "checkbox", checked: state[key], onchange: function () { state[key] = box.checked; load(ui); }});
    return el("label", null, box, " " + label);
  }

  function text(label, key, ui, size) {
    var node = el("input", {type: "text", value: state[key], size: size || 6, onchange: function () { state[key] = node.value.trim(); load(ui); }});
    return el("label", null, label + " ", node);
  }

  function checks(container, names, key, ui) {
    RLA.clear(container);
    names.forEach(function (n) {
      var box = el("input", {type: "checkbox", checked: state[key].indexOf(n) >= 0, onchange: function () {
        state[key] = box.checked ? state[key].concat([n]) : state[key].filter(function (x) { return x !== n; }); load(ui); }});
      container.appendChild(el("label", {className: "pick"}, box, " " + n));
    });
  }

  function controls(ui) {
    ui.metrics = el("div", {className: "picks", id: "metric-picks"});
    ui.groups = el("div", {className: "picks", id: "group-picks"});
    ui.xSelect = el("select", {onchange: function () { state.x = ui.xSelect.value; load(ui); }});
    ui.csv = el("a", {className: "button", download: "rla-curves.csv"}, "CSV");
    ui.status = el("span", {className: "muted", id: "chart-status"});
    var where = el("input", {type: "text", className: "where mono", value: state.where, placeholder: "where (empty: every run, or the ticked runs)",
                             onchange: function () { state.where = where.value; load(ui); }});
    var picked = state.runs.length ? el("div", {className: "muted"}, state.runs.length + " ticked runs ",
      el("button", {type: "button", onclick: function () { state.runs = []; load(ui); picked.remove(); }}, "use the filter instead")) : null;
    return el("div", {className: "filters"}, el("div", {className: "row"}, where), picked,
      el("div", {className: "row"}, el("b", null, "metrics"), ui.metrics),
      el("div", {className: "row"}, el("b", null, "group by"), ui.groups),
      el("div", {className: "row"}, el("label", null, "x ", ui.xSelect), choice("center", "agg", ["mean", "median", "iqm"], ui),
        choice("band", "band", ["ci", "stderr", "std", "none"], ui), text("smoothing", "smooth", ui, 4), text("points", "resample", ui, 5),
        text("x \u2264", "x_max", ui, 8), flag("runs of unequal length", "vary_len", ui), flag("individual runs", "individual", ui),
        flag("log y", "log", ui), ui.csv, ui.status));
  }

  function fillChoices(ui) {
    var scope = {run: state.runs, where: state.where, task: state.task, limit: 0};
    return RLA.api("runs", scope).then(function (page) {
      if (!state.metric.length && page.metrics.length) state.metric = [page.metrics.indexOf("return") >= 0 ? "return" : page.metrics[0]];
      checks(ui.metrics, page.metrics, "metric", ui);
      checks(ui.groups, page.params, "group", ui);
      RLA.clear(ui.xSelect);
      ["time-step", "timestamp"].concat(page.metrics.filter(function (m) { return m !== "time-step" && m !== "timestamp"; }))
        .forEach(function (m) { ui.xSelect.appendChild(el("option", {value: m, selected: m === state.x}, m)); });
    });
  }

  RLA.pages.charts = function (main, params) {
    state = initial(params);
    plots = [];
    var ui = {};
    main.appendChild(controls(ui));
    ui.charts = el("div", {className: "charts", id: "charts"});
    main.appendChild(ui.charts);
    /* metrics named in the URL: the curves are requested first, the choices once they are drawn */
    var failed = function (err) { ui.charts.appendChild(RLA.errorBox(err)); };
    if (state.metric.length) load(ui).then(function () { return fillChoices(ui); }).catch(failed);
    else fillChoices(ui).then(function () { load(ui); }).catch(failed);
    RLA.every(10000, function () { if (state.running && !document.hidden) load(ui, true); });
  };
})();
