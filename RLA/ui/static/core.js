/* RLA dashboard core: DOM building (text only, never innerHTML), API calls, confirmation, routing. */
"use strict";
var RLA = window.RLA = {pages: {}, info: null, timers: []};

/* el("td", {className: "x", onclick: fn}, "text", child...): strings become text nodes. */
RLA.el = function (tag, props) {
  var node = document.createElement(tag);
  var attrs = props || {};
  Object.keys(attrs).forEach(function (key) {
    var value = attrs[key];
    if (value === undefined || value === null) return;
    if (key.indexOf("on") === 0) node.addEventListener(key.slice(2), value);
    else if (key === "dataset") Object.keys(value).forEach(function (k) { node.dataset[k] = value[k]; });
    else if (key in node && key !== "list") node[key] = value;
    else node.setAttribute(key, value);
  });
  for (var i = 2; i < arguments.length; i++) RLA.append(node, arguments[i]);
  return node;
};

RLA.append = function (node, child) {
  if (child === undefined || child === null || child === false) return;
  if (Array.isArray(child)) { child.forEach(function (c) { RLA.append(node, c); }); return; }
  node.appendChild(child instanceof Node ? child : document.createTextNode(String(child)));
};

RLA.clear = function (node) { while (node.firstChild) node.removeChild(node.firstChild); return node; };

RLA.fmt = function (value) {
  if (value === null || value === undefined) return "";
  if (typeof value === "number") {
    if (Number.isInteger(value)) return String(value);
    var a = Math.abs(value);
    /* 5e-4, 1.25e-5, 3.142e+6: at most 4 significant digits, no trailing zeros */
    return (a !== 0 && (a < 1e-3 || a >= 1e6)) ? value.toExponential(3).replace(/\.?0+e/, "e") : String(Number(value.toPrecision(5)));
  }
  if (Array.isArray(value) || typeof value === "object") return JSON.stringify(value);
  return String(value);
};

RLA.size = function (bytes) {
  var units = ["B", "KB", "MB", "GB", "TB"], i = 0;
  while (bytes >= 1024 && i < units.length - 1) { bytes /= 1024; i++; }
  return (i ? bytes.toFixed(1) : bytes) + " " + units[i];
};

/* Query string from {key: value | [values]}; empty values are left out. */
RLA.qs = function (params) {
  var parts = [];
  Object.keys(params || {}).forEach(function (key) {
    [].concat(params[key]).forEach(function (v) {
      if (v === undefined || v === null || v === "" || v === false) return;
      parts.push(encodeURIComponent(key) + "=" + encodeURIComponent(v === true ? "1" : v));
    });
  });
  return parts.join("&");
};

RLA.ApiError = function (status, body) {
  var err = (body && body.error) || {message: "HTTP " + status};
  this.status = status; this.error = err; this.message = err.message;
};

RLA.api = function (path, params, options) {
  var url = "/api/" + path + (params ? "?" + RLA.qs(params) : "");
  var init = {credentials: "same-origin", headers: {"Accept": "application/json"}};
  if (options && options.body !== undefined) {
    init.method = "POST";
    init.headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(options.body);
  }
  return fetch(url, init).then(function (resp) {
    return resp.json().catch(function () { return null; }).then(function (body) {
      if (!resp.ok) throw new RLA.ApiError(resp.status, body);
      return body;
    });
  });
};

RLA.fileUrl = function (path) { return "/api/file?" + RLA.qs({path: path}); };

/* A modal confirmation: resolves true only when the user presses Confirm. */
RLA.confirm = function (title, text, okLabel) {
  var dialog = document.getElementById("confirm-dialog");
  document.getElementById("confirm-title").textContent = title;
  document.getElementById("confirm-text").textContent = text;
  var ok = document.getElementById("confirm-ok"), cancel = document.getElementById("confirm-cancel");
  ok.textContent = okLabel || "Confirm";
  return new Promise(function (resolve) {
    function done(value) {
      ok.removeEventListener("click", yes); cancel.removeEventListener("click", no);
      dialog.removeEventListener("cancel", no);
      if (dialog.open) dialog.close();
      resolve(value);
    }
    function yes() { done(true); }
    function no() { done(false); }
    ok.addEventListener("click", yes); cancel.addEventListener("click", no);
    dialog.addEventListener("cancel", no);
    dialog.showModal();
  });
};

RLA.errorBox = function (err) {
  return RLA.el("div", {className: "error"}, err && err.message ? err.message : String(err));
};

RLA.statusBadge = function (status) {
  return RLA.el("span", {className: "status status-" + String(status || "unknown")}, status || "unknown");
};

RLA.runLink = function (index) { return RLA.el("a", {href: "#/run/" + encodeURI(index), className: "mono"}, index); };

/* Timers of the current page (cleared on navigation). */
RLA.every = function (ms, fn) { RLA.timers.push(setInterval(fn, ms)); };

RLA.route = function () {
  RLA.timers.forEach(clearInterval); RLA.timers = [];
  var hash = location.hash.replace(/^#\/?/, "");
  var q = hash.indexOf("?");
  var path = q < 0 ? hash : hash.slice(0, q);
  var params = new URLSearchParams(q < 0 ? "" : hash.slice(q + 1));
  var name = path.split("/")[0] || "runs";
  var rest = decodeURI(path.slice(name.length + 1));
  document.querySelectorAll("nav a").forEach(function (a) { a.classList.toggle("active", a.dataset.page === name); });
  var main = RLA.clear(document.getElementById("main"));
  var page = RLA.pages[name] || RLA.pages.runs;
  document.body.dataset.page = name;
  page(main, params, rest);
};

/* Replace the hash query of the current page without re-rendering it. */
RLA.setParams = function (page, params) {
  var text = RLA.qs(params);
  history.replaceState(null, "", "#/" + page + (text ? "?" + text : ""));
};
