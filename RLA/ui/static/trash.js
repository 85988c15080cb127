/* Trash page: the runs `rla delete` (or the Delete button) moved to .trash/, and the Restore button
   that puts them back where they were (the API's undelete action), behind a confirmation. */
"use strict";
(function () {
  var el = RLA.el;

  function restore(ui, runs) {
    RLA.api("action", null, {body: {action: "undelete", runs: runs}}).then(function (plan) {
      return RLA.confirm("Restore " + runs.length + " run(s) from the trash?", plan.plan, "Restore").then(function (yes) {
        if (!yes) return null;
        return RLA.api("action", null, {body: {action: "undelete", runs: runs, confirm: true}});
      });
    }).then(function (result) {
      if (!result) return;
      ui.selected.clear();
      ui.message.textContent = result.runs.map(function (r) { return "restored " + r.index + ": " + r.result; }).join("; ");
      load(ui);
    }).catch(function (err) { ui.message.textContent = err.message; });
  }

  function render(ui, items) {
    var body = el("tbody");
    items.forEach(function (item) {
      var box = el("input", {type: "checkbox", checked: ui.selected.has(item.index), onchange: function () {
        if (box.checked) ui.selected.add(item.index); else ui.selected.delete(item.index);
        ui.button.disabled = !ui.selected.size;
      }});
      body.appendChild(el("tr", {dataset: {index: item.index}}, el("td", null, box), el("td", {className: "mono"}, item.index),
        el("td", null, item.deleted_at || item.stamp), el("td", null, item.archived ? "archived" : "active"),
        el("td", null, item.data_types.join(", "))));
    });
    if (!items.length) body.appendChild(el("tr", null, el("td", {colSpan: 5, className: "empty"}, "The trash is empty.")));
    var head = el("tr", null, el("th", null, ""), el("th", null, "run"), el("th", null, "deleted at"),
                  el("th", null, "was"), el("th", null, "data types"));
    RLA.clear(ui.table).appendChild(el("thead", null, head));
    ui.table.appendChild(body);
    ui.button.disabled = !ui.selected.size;
  }

  function load(ui) {
    return RLA.api("trash").then(function (resp) { render(ui, resp.runs); })
      .catch(function (err) { RLA.append(RLA.clear(ui.table), RLA.errorBox(err)); });
  }

  RLA.pages.trash = function (main) {
    var ui = {selected: new Set()};
    ui.message = el("span", {className: "message"});
    ui.button = el("button", {type: "button", id: "restore-trash", disabled: true, onclick: function () {
      restore(ui, Array.from(ui.selected)); }}, "Restore selected");
    ui.table = el("table", {className: "runs", id: "trash-table"});
    var bar = el("div", {className: "actions", id: "trash-actions"},
                 RLA.info.read_only ? el("span", {className: "muted"}, "read-only: restore with `rla trash restore`") : ui.button,
                 ui.message);
    main.appendChild(el("p", {className: "muted"}, "Deleted runs wait in .trash/ until `rla trash empty`; " +
                                                   "Restore puts them back where they were."));
    main.appendChild(bar);
    main.appendChild(el("div", {className: "table-box"}, ui.table));
    load(ui);
  };
})();
