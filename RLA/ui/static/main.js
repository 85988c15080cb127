/* Start: read the server facts, then route on every hash change. */
"use strict";
(function () {
  RLA.api("info").then(function (info) {
    RLA.info = info;
    document.getElementById("root-info").textContent = info.data_root + (info.read_only ? "  (read-only)" : "");
    window.addEventListener("hashchange", RLA.route);
    RLA.route();
  }).catch(function (err) {
    RLA.append(RLA.clear(document.getElementById("main")), RLA.errorBox(err));
  });
})();
