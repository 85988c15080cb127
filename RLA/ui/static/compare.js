/* Compare page: two or more runs side by side: the hyper-parameters that differ, last metrics,
   the diff of their code snapshots and their curves overlaid. */
"use strict";
(function () {
  var el = RLA.el;

  function table(result) {
    var head = el("tr", null, el("th", null, ""), result.runs.map(function (r) { return el("th", null, RLA.runLink(r)); }));
    var rows = [];
    Object.keys(result.params).forEach(function (k) {
      rows.push(el("tr", null, el("th", null, k), result.params[k].map(function (v) { return el("td", null, RLA.fmt(v)); })));
    });
    if (!rows.length) rows.push(el("tr", null, el("td", {colSpan: result.runs.length + 1, className: "muted"}, "the hyper-parameters are identical")));
    Object.keys(result.metrics).forEach(function (m) {
      rows.push(el("tr", {className: "metric-row"}, el("th", null, "last(" + m + ")"),
                   result.metrics[m].map(function (v) { return el("td", {className: "num"}, RLA.fmt(v)); })));
    });
    return el("table", {className: "grid compare", id: "compare-table"}, el("thead", null, head), el("tbody", null, rows));
  }

  function diffView(text) {
    if (!text) return el("p", {className: "muted"}, "the code snapshots are identical");
    return el("pre", {className: "diff"}, text.split("\n").map(function (line) {
      var cls = line.indexOf("+++") === 0 || line.indexOf("---") === 0 ? "file" : line[0] === "+" ? "add" : line[0] === "-" ? "del" : line.indexOf("@@") === 0 ? "hunk" : "";
      return el("span", {className: cls}, line + "\n");
    }));
  }

  RLA.pages.compare = function (main, params) {
    var runs = params.getAll("run");
    if (runs.length < 2) {
      main.appendChild(el("p", {className: "muted"}, "Tick two or more runs on the runs page, then press Compare."));
      return;
    }
    RLA.api("compare", {run: runs}).then(function (result) {
      main.appendChild(el("h1", null, "Compare " + runs.length + " runs"));
      main.appendChild(el("section", {className: "card"}, el("h2", null, "Hyper-parameters that differ"), table(result)));
      var metrics = Object.keys(result.metrics);
      if (metrics.length) main.appendChild(el("section", {className: "card"}, el("h2", null, "Curves"),
        el("a", {href: "#/charts?" + RLA.qs({run: runs, metric: metrics.indexOf("return") >= 0 ? "return" : metrics[0], individual: "1", band: "none"})},
           "open the overlaid curves on the charts page"), el("div", {id: "compare-chart"})));
      main.appendChild(el("section", {className: "card"}, el("h2", null, "Code snapshot diff"), diffView(result.code_diff)));
      if (metrics.length) overlay(main.querySelector("#compare-chart"), runs, metrics.indexOf("return") >= 0 ? "return" : metrics[0]);
    }).catch(function (err) { main.appendChild(RLA.errorBox(err)); });
  };

  /* Each run's own smoothed curve, overlaid (one group per run). */
  function overlay(box, runs, metric) {
    RLA.api("curves", {run: runs, metric: metric, individual: "1", band: "none", vary_len: "1"}).then(function (result) {
      var groups = result.metrics[metric] || [];
      var curves = [];
      groups.forEach(function (g) { (g.individual || []).forEach(function (r) { curves.push({x: g.x, y: r.y, label: r.index}); }); });
      var xs = Array.from(new Set([].concat.apply([], curves.map(function (c) { return c.x; })))).sort(function (a, b) { return a - b; });
      var pos = new Map(xs.map(function (v, i) { return [v, i]; }));
      var data = [xs], series = [{label: result.x}];
      var colors = ["#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b"];
      curves.forEach(function (c, i) {
        var out = new Array(xs.length).fill(null);
        c.x.forEach(function (v, j) { out[pos.get(v)] = c.y[j]; });
        data.push(out);
        series.push({label: c.label, stroke: colors[i % colors.length], width: 2, spanGaps: true, points: {show: false}});
      });
      new uPlot({title: metric, width: Math.max(400, box.clientWidth - 10), height: 300, series: series,
                 scales: {x: {time: false}}, axes: [{label: result.x}, {label: metric}]}, data, box);
    }).catch(function (err) { box.appendChild(RLA.errorBox(err)); });
  }
})();
