// ckgate ui: sorts and filters the fleet table of a report file in the
// page, keeping the view in the address (#sort=…&dir=…&q=…&status=…). The
// served pages do the same on the server; both read without this script.
(function () {
  "use strict";
  if (!document.body.dataset.static) return;
  var table = document.getElementById("fleet-table");
  if (!table) return;
  var body = table.tBodies[0];
  function state() {
    var h = location.hash.slice(1);
    if (h.indexOf("=") < 0) return null;
    var p = new URLSearchParams(h);
    return { sort: p.get("sort") || "path", dir: p.get("dir") || "asc", q: p.get("q") || "", status: p.get("status") || "" };
  }
  function apply(s) {
    var rows = Array.prototype.slice.call(body.rows);
    var num = function (v) { return v !== "" && !isNaN(Number(v)); };
    rows.sort(function (a, b) {
      var x = a.getAttribute("data-s-" + s.sort) || "", y = b.getAttribute("data-s-" + s.sort) || "";
      var c = num(x) && num(y) ? Number(x) - Number(y) : (x === "" ? (y === "" ? 0 : -1) : y === "" ? 1 : x.localeCompare(y));
      if (s.dir === "desc") c = -c;
      return c || a.dataset.loc.localeCompare(b.dataset.loc);
    });
    var q = s.q.toLowerCase(), shown = 0;
    rows.forEach(function (r) {
      var ok = (!q || r.textContent.toLowerCase().indexOf(q) >= 0) && (!s.status || r.dataset.status === s.status);
      r.hidden = !ok;
      if (ok) shown++;
      body.appendChild(r);
    });
    table.dataset.sort = s.sort;
    table.dataset.dir = s.dir;
    document.getElementById("q").value = s.q;
    document.getElementById("status").value = s.status;
    document.getElementById("shown").textContent = shown + " shown";
  }
  function go(s) {
    location.hash = new URLSearchParams(s).toString();
  }
  table.tHead.addEventListener("click", function (e) {
    var th = e.target.closest("th[data-key]");
    if (!th) return;
    e.preventDefault();
    var s = state() || { sort: table.dataset.sort, dir: table.dataset.dir, q: "", status: "" };
    s.dir = s.sort === th.dataset.key && s.dir === "asc" ? "desc" : "asc";
    s.sort = th.dataset.key;
    go(s);
  });
  document.querySelector("form.filter").addEventListener("submit", function (e) {
    e.preventDefault();
    var s = state() || { sort: table.dataset.sort, dir: table.dataset.dir };
    s.q = document.getElementById("q").value;
    s.status = document.getElementById("status").value;
    go(s);
  });
  function onHash() { var s = state(); if (s) apply(s); }
  window.addEventListener("hashchange", onHash);
  onHash();
})();
