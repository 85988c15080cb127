/* Runs page: the where filter (errors at the caret), task/status/date/tag filters, sortable paged
   table, column chooser, live status, tags/notes and the actions behind a confirmation. */
"use strict";
(function () {
  var el = RLA.el;
  var STATUSES = ["running", "finished", "crashed", "killed", "unknown"];
  var state = null;

  function initialState(params) {
    var cols = params.getAll("column");
    return {where: params.get("where") || "", task: params.get("task") || "", status: params.getAll("status"),
            since: params.get("since") || "", until: params.get("until") || "", tag: params.get("tag") || "",
            archived: params.get("archived") || "0", sort: params.get("sort") || "", desc: params.get("desc") === "1",
            limit: Number(params.get("limit") || 50), offset: Number(params.get("offset") || 0),
            columns: cols.length ? cols : ["index", "status", "start_time", "time_step"],
            selected: new Set(), seq: 0, last: null};
  }

  function query() {
    return {where: state.where, task: state.task, status: state.status, since: state.since, until: state.until,
            tag: state.tag, archived: state.archived === "0" ? "" : state.archived};
  }

  function showWhereError(ui, err) {
    RLA.clear(ui.whereError);
    ui.where.classList.toggle("bad", !!err);
    if (!err) return;
    var pos = err.error && typeof err.error.position === "number" ? err.error.position : null;
    if (pos !== null) {
      ui.whereError.appendChild(el("pre", {className: "caret"}, state.where + "\n" + " ".repeat(pos) + "^"));
      if (document.activeElement !== ui.where) ui.where.setSelectionRange(pos, pos);
    }
    ui.whereError.appendChild(el("div", {className: "caret-msg"}, err.error && err.error.problem ? err.error.problem : err.message));
    if (err.error && err.error.fix) ui.whereError.appendChild(el("div", {className: "caret-fix"}, "Fix: " + err.error.fix));
  }

  function requestParams() {
    return Object.assign(query(), {sort: state.sort, desc: state.desc ? "1" : "", limit: state.limit,
                                  offset: state.offset, column: state.columns});
  }

  function load(ui) {
    var seq = ++state.seq;
    RLA.setParams("runs", Object.assign(query(), {sort: state.sort, desc: state.desc, limit: state.limit,
                                                  offset: state.offset, column: state.columns}));
    ui.table.classList.add("loading");
    return RLA.api("runs", requestParams()).then(function (page) {
      if (seq !== state.seq) return;
      state.last = page;
      showWhereError(ui, null);
      renderTable(ui, page);
      renderPager(ui, page);
      renderColumns(ui, page);
      renderCounts(ui, page);
      document.body.dataset.runsDrawn = String(performance.now());  /* for tests and the bench */
    }).catch(function (err) {
      if (seq !== state.seq) return;
      if (err.error && err.error.type === "QueryError") showWhereError(ui, err);
      else RLA.append(RLA.clear(ui.tableBox), RLA.errorBox(err));
    }).finally(function () { ui.table.classList.remove("loading"); });
  }

  function header(ui, column) {
    var mark = state.sort === column ? (state.desc ? " \u25BC" : " \u25B2") : "";
    return el("th", {className: "sortable", dataset: {column: column}, onclick: function () {
      if (state.sort === column) state.desc = !state.desc; else { state.sort = column; state.desc = false; }
      state.offset = 0; load(ui);
    }}, column + mark);
  }

  function cell(column, value) {
    if (column === "index") return el("td", null, RLA.runLink(value));
    if (column === "status") return el("td", {className: "status-cell"}, RLA.statusBadge(value));
    return el("td", {className: typeof value === "number" ? "num" : ""}, RLA.fmt(value));
  }

  function renderTable(ui, page) {
    var all = el("input", {type: "checkbox", title: "select the runs of this page", onchange: function () {
      page.rows.forEach(function (r) { if (all.checked) state.selected.add(r.index); else state.selected.delete(r.index); });
      renderTable(ui, page); updateActions(ui);
    }});
    all.checked = page.rows.length > 0 && page.rows.every(function (r) { return state.selected.has(r.index); });
    var head = el("tr", null, el("th", null, all), page.columns.map(function (c) { return header(ui, c); }),
                  el("th", null, "tags"), el("th", null, "note"));
    var body = el("tbody");
    page.rows.forEach(function (row) {
      var box = el("input", {type: "checkbox", checked: state.selected.has(row.index), onchange: function () {
        if (box.checked) state.selected.add(row.index); else state.selected.delete(row.index);
        updateActions(ui);
      }});
      body.appendChild(el("tr", {dataset: {index: row.index}}, el("td", null, box),
        page.columns.map(function (c) { return cell(c, row[c]); }),
        el("td", null, row.tags.map(function (t) { return el("span", {className: "tag"}, t); })),
        el("td", {className: "note", title: row.note}, row.note)));
    });
    RLA.clear(ui.table);
    ui.table.appendChild(el("thead", null, head));
    ui.table.appendChild(body);
    if (!page.rows.length) body.appendChild(el("tr", null, el("td", {colSpan: page.columns.length + 3, className: "empty"},
                                                          "No run matches these filters.")));
  }

  function renderPager(ui, page) {
    var first = page.total ? page.offset + 1 : 0, last = Math.min(page.offset + page.limit, page.total);
    RLA.clear(ui.pager).appendChild(el("span", {className: "count"}, first + "\u2013" + last + " of " + page.total + " runs"));
    ui.pager.appendChild(el("button", {type: "button", disabled: page.offset <= 0, onclick: function () {
      state.offset = Math.max(0, state.offset - state.limit); load(ui); }}, "\u2039 Prev"));
    ui.pager.appendChild(el("button", {type: "button", disabled: last >= page.total, onclick: function () {
      state.offset += state.limit; load(ui); }}, "Next \u203A"));
    var size = el("select", {onchange: function () { state.limit = Number(size.value); state.offset = 0; load(ui); }},
                  [25, 50, 100, 250, 500].map(function (n) { return el("option", {value: n, selected: n === state.limit}, n + " / page"); }));
    ui.pager.appendChild(size);
  }

  function renderColumns(ui, page) {
    var list = RLA.clear(ui.columnList);
    var groups = [["run", page.available.filter(function (c) { return page.params.indexOf(c) < 0 && c.indexOf("(") < 0; })],
                  ["hyper-parameters", page.params],
                  ["metrics", page.available.filter(function (c) { return c.indexOf("(") > 0; })]];
    groups.forEach(function (g) {
      if (!g[1].length) return;
      list.appendChild(el("div", {className: "col-group"}, g[0]));
      g[1].forEach(function (c) {
        var box = el("input", {type: "checkbox", checked: state.columns.indexOf(c) >= 0, disabled: c === "index",
                              onchange: function () {
          if (box.checked) state.columns.push(c); else state.columns = state.columns.filter(function (x) { return x !== c; });
          load(ui);
        }});
        list.appendChild(el("label", {className: "col-choice"}, box, " " + c));
      });
    });
  }

  function renderCounts(ui, page) {
    RLA.clear(ui.counts);
    Object.keys(page.status_counts).sort().forEach(function (s) {
      ui.counts.appendChild(el("span", null, RLA.statusBadge(s), " " + page.status_counts[s]));
    });
    if (page.skipped) ui.counts.appendChild(el("span", {className: "warn"}, page.skipped + " unreadable runs skipped"));
  }

  function updateActions(ui) {
    ui.selCount.textContent = state.selected.size ? state.selected.size + " selected" : "";
    ui.actionBar.querySelectorAll("button.needs-selection").forEach(function (b) { b.disabled = !state.selected.size; });
  }

  /* Live rows: the same page asked again; redrawn only when its runs or counts changed (a new,
     moved or deleted run; a metric that grew). The server answers from its warm index. */
  function pageKey(page) {
    return JSON.stringify([page.total, page.status_counts, page.columns, page.rows]);
  }

  function pollRows(ui) {
    if (!state.last || document.hidden || ui.table.classList.contains("loading")) return;
    var seq = state.seq;
    RLA.api("runs", requestParams()).then(function (page) {
      if (seq !== state.seq || pageKey(page) === pageKey(state.last)) return;
      state.last = page;
      renderTable(ui, page);
      renderPager(ui, page);
      renderCounts(ui, page);
    }).catch(function () {});
  }

  /* Live status: re-read the visible runs' run.json every few seconds. */
  function pollStatus(ui) {
    if (!state.last || !state.last.rows.length || document.hidden) return;
    var indices = state.last.rows.map(function (r) { return r.index; });
    RLA.api("status", {run: indices}).then(function (resp) {
      ui.table.querySelectorAll("tbody tr[data-index]").forEach(function (tr) {
        var status = resp.status[tr.dataset.index];
        var cellNode = tr.querySelector("td.status-cell");
        if (!cellNode) return;
        var now = status || "gone";
        if (cellNode.textContent !== now) RLA.append(RLA.clear(cellNode), RLA.statusBadge(now));
      });
    }).catch(function () {});
  }

  function act(ui, action) {
    var runs = Array.from(state.selected);
    RLA.api("action", null, {body: {action: action, runs: runs}}).then(function (plan) {
      return RLA.confirm(action[0].toUpperCase() + action.slice(1) + " " + runs.length + " run(s)?", plan.plan,
                         action[0].toUpperCase() + action.slice(1)).then(function (yes) {
        if (!yes) return null;
        return RLA.api("action", null, {body: {action: action, runs: runs, confirm: true}});
      });
    }).then(function (result) {
      if (!result) return;
      state.selected.clear(); updateActions(ui);
      ui.message.textContent = result.runs.map(function (r) { return action + " " + r.index + ": " + r.result; }).join("; ");
      load(ui);
    }).catch(function (err) { ui.message.textContent = err.message; });
  }

  function tagSelected(ui, input) {
    var tag = input.value.trim(), runs = Array.from(state.selected);
    if (!tag || !runs.length) return;
    RLA.confirm("Tag " + runs.length + " run(s) with \u201C" + tag + "\u201D?", runs.join("\n"), "Tag").then(function (yes) {
      if (!yes) return;
      return Promise.all(runs.map(function (i) {
        return RLA.api("run/" + encodeURI(i) + "/annotations", null, {body: {add: [tag]}});
      })).then(function () { input.value = ""; load(ui); });
    }).catch(function (err) { ui.message.textContent = err.message; });
  }

  function actionBar(ui) {
    var bar = ui.actionBar = el("div", {className: "actions", id: "actions"});
    ui.selCount = el("span", {className: "count"});
    bar.appendChild(ui.selCount);
    bar.appendChild(el("button", {type: "button", className: "needs-selection", onclick: function () {
      location.hash = "#/charts?" + RLA.qs({run: Array.from(state.selected)}); }}, "Chart selected"));
    bar.appendChild(el("button", {type: "button", className: "needs-selection", onclick: function () {
      location.hash = "#/compare?" + RLA.qs({run: Array.from(state.selected)}); }}, "Compare"));
    bar.appendChild(el("button", {type: "button", onclick: function () {
      location.hash = "#/charts?" + RLA.qs(query()); }}, "Chart the filter"));
    if (!RLA.info.read_only) {
      var tagInput = el("input", {type: "text", placeholder: "tag", className: "tag-input", size: 10});
      bar.appendChild(tagInput);
      bar.appendChild(el("button", {type: "button", className: "needs-selection", onclick: function () { tagSelected(ui, tagInput); }}, "Add tag"));
      if (state.archived === "1") bar.appendChild(el("button", {type: "button", className: "needs-selection", onclick: function () { act(ui, "restore"); }}, "Restore"));
      else bar.appendChild(el("button", {type: "button", className: "needs-selection", onclick: function () { act(ui, "archive"); }}, "Archive"));
      bar.appendChild(el("button", {type: "button", className: "needs-selection danger", onclick: function () { act(ui, "delete"); }}, "Delete"));
    }
    ui.message = el("span", {className: "message"});
    bar.appendChild(ui.message);
    return bar;
  }

  function taskSelect(ui) {
    var select = el("select", {title: "task", onchange: function () { state.task = select.value; state.offset = 0; load(ui); }},
                    el("option", {value: ""}, "all tasks"));
    RLA.api("tasks", {archived: state.archived === "0" ? "" : state.archived}).then(function (resp) {
      var seen = {};
      Object.keys(resp.tasks).forEach(function (task) {
        var parts = task.split("/");
        for (var i = 1; i <= parts.length; i++) {  /* the tree: every prefix once, indented */
          var prefix = parts.slice(0, i).join("/");
          if (seen[prefix]) continue;
          seen[prefix] = true;
          var label = "\u00A0\u00A0".repeat(i - 1) + parts[i - 1] + (prefix === task ? " (" + resp.tasks[task] + ")" : "");
          select.appendChild(el("option", {value: prefix, selected: prefix === state.task}, label));
        }
      });
    });
    return select;
  }

  function filters(ui) {
    var timer = null;
    ui.where = el("input", {type: "text", id: "where", className: "where mono", value: state.where, spellcheck: false,
      placeholder: "where: lr >= 1e-4 and last('return') > 100", oninput: function () {
        state.where = ui.where.value; state.offset = 0;
        clearTimeout(timer); timer = setTimeout(function () { load(ui); }, 40);  /* stale answers are dropped by seq */
      }});
    ui.whereError = el("div", {className: "where-error", id: "where-error"});
    var statusBoxes = STATUSES.map(function (s) {
      var box = el("input", {type: "checkbox", checked: state.status.indexOf(s) >= 0, onchange: function () {
        state.status = box.checked ? state.status.concat([s]) : state.status.filter(function (x) { return x !== s; });
        state.offset = 0; load(ui);
      }});
      return el("label", {className: "status-filter"}, box, RLA.statusBadge(s));
    });
    function input(key, type, placeholder) {
      var node = el("input", {type: type, value: state[key], placeholder: placeholder, title: key, onchange: function () {
        state[key] = node.value; state.offset = 0; load(ui); }});
      return node;
    }
    var archived = el("select", {title: "archived runs", onchange: function () {
      state.archived = archived.value; state.offset = 0; state.selected.clear(); render(ui.root); }},
      [["0", "active runs"], ["1", "archived runs"], ["all", "active + archived"]].map(function (o) {
        return el("option", {value: o[0], selected: state.archived === o[0]}, o[1]); }));
    ui.columnList = el("div", {className: "column-list"});
    var chooser = el("details", {className: "columns"}, el("summary", null, "Columns"), ui.columnList);
    return el("div", {className: "filters"},
      el("div", {className: "row"}, ui.where),
      ui.whereError,
      el("div", {className: "row"}, taskSelect(ui), archived, statusBoxes,
         el("label", null, "from ", input("since", "date")), el("label", null, "to ", input("until", "date")),
         input("tag", "text", "tag"), chooser));
  }

  function render(main) {
    var ui = {root: main};
    RLA.clear(main);
    main.appendChild(filters(ui));
    ui.counts = el("div", {className: "counts"});
    ui.pager = el("div", {className: "pager"});
    main.appendChild(el("div", {className: "bar"}, ui.counts, ui.pager));
    main.appendChild(actionBar(ui));
    ui.table = el("table", {className: "runs", id: "runs-table"});
    ui.tableBox = el("div", {className: "table-box"}, ui.table);
    main.appendChild(ui.tableBox);
    updateActions(ui);
    load(ui);
    RLA.every(3000, function () { pollStatus(ui); pollRows(ui); });
  }

  RLA.pages.runs = function (main, params) {
    state = initialState(params);
    render(main);
  };
})();
