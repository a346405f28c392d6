"""The inline CSS and JavaScript of ``gpulabel report --html``.

The script reads the page's JSON block and builds every table with
``textContent`` (never ``innerHTML``), so data is never parsed as markup. It
sorts and filters in memory; the filter, model, selection and sort live in the
URL fragment (``#filter=lab-node-3&gpu=NVIDIA-A10&show=problems&sort=name``),
so a view can be shared as a link and tests can drive it without a browser driver.
"""

from __future__ import annotations

__all__ = ["CSS", "JS"]

CSS = """
:root{--fg:#1f2328;--muted:#656d76;--line:#d0d7de;--head:#f6f8fa}
*{box-sizing:border-box}
body{margin:0;color:var(--fg);
 font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif}
header{padding:16px 24px 8px;border-bottom:1px solid var(--line);background:#fff}
h1{font-size:20px;margin:0 0 2px}
h2{font-size:17px;margin:24px 0 8px}
h2 small{font-weight:normal;color:var(--muted);font-size:13px;margin-left:8px}
h3{font-size:14px;margin:0 0 4px;word-break:break-all}
.meta{color:var(--muted);margin:0 0 10px;word-break:break-all}
main{padding:0 24px 40px}
.summary{display:flex;flex-wrap:wrap;gap:10px;margin-bottom:10px}
.card{display:flex;flex-direction:column;min-width:170px;padding:8px 12px;border:1px solid var(--line);
 border-left-width:5px;border-radius:6px;text-decoration:none;color:inherit}
.card b{font-size:13px;text-transform:uppercase;letter-spacing:.04em;color:var(--muted)}
.card span{font-size:16px;font-weight:600}
.card small{color:var(--muted)}
.card.ok{border-left-color:#2da44e}.card.bad{border-left-color:#cf222e}
.controls{display:flex;flex-wrap:wrap;gap:16px;align-items:center;position:sticky;top:0}
.controls label{display:flex;gap:6px;align-items:center;font-weight:600}
.controls input,.controls select{font:inherit;padding:3px 6px;border:1px solid var(--line);border-radius:4px}
.controls input{width:220px}
.count{color:var(--muted)}
.scroll{max-height:72vh;overflow:auto;border:1px solid var(--line);border-radius:6px}
table{border-collapse:collapse;font-size:13px}
th,td{padding:3px 8px;border-bottom:1px solid var(--line);text-align:left;vertical-align:top}
th{background:var(--head);cursor:pointer;user-select:none;white-space:nowrap;position:sticky;top:0;z-index:1}
th.asc::after{content:" \\25B2";font-size:10px}th.desc::after{content:" \\25BC";font-size:10px}
td.wrap{max-width:640px;word-break:break-word}
.grid td{white-space:nowrap}
.grid td.narrow{white-space:normal;min-width:250px;max-width:340px}
.grid td.node{font-weight:600;position:sticky;left:0;background:#fff}
.grid td.op{text-align:center;min-width:86px;font-size:12px}
.s-r{background:#dafbe1;color:#116329}.s-n{background:#fff8c5;color:#7d4e00}
.s-m{background:#ffebe9;color:#a40e26;font-weight:600}.s-o{background:#ffe2cc;color:#953800;font-weight:600}
.s-u{background:#ddf4ff;color:#0a3069}.s-p{background:#fbefff;color:#6e40c9}.s-i{background:#eaeef2;color:#424a53;font-style:italic}
.s--{color:#8c959f}
.bad-text{color:#a40e26}
.legend{display:flex;flex-wrap:wrap;gap:8px;margin:0 0 8px}
.legend span{padding:1px 8px;border-radius:10px;font-size:12px;border:1px solid var(--line)}
.pod{border:1px solid var(--line);border-radius:6px;padding:10px 12px;margin:0 0 12px}
.pod p{margin:2px 0 8px;color:var(--muted);word-break:break-word}
.pod summary{cursor:pointer}.pod summary h3{display:inline}
.more{color:var(--muted)}
.more button{font:inherit;margin-left:8px}
.empty{color:var(--muted);font-style:italic}
.warn{color:#a40e26}
"""

JS = r"""
(function () {
"use strict";
const D = JSON.parse(document.getElementById("gpulabel-data").textContent);
const $ = (id) => document.getElementById(id);
const NAMES = D.states;
const ORDER = "mnoupir-";
const PROBLEM = "mnou";
const LABEL = {
  m: "missing", n: "not ready", o: "out of order", u: "unexpected", p: "paused", i: "isolated", r: "running",
  "-": "\u2013",
};
const STEP = 5000;
const collator = new Intl.Collator(undefined, {numeric: true, sensitivity: "base"});
const cmp = (a, b) => (typeof a === "number" && typeof b === "number") ? a - b : collator.compare(String(a), String(b));
const nodes = D.nodes;
const lower = nodes.map((r) => r[0].toLowerCase());
const problem = nodes.map((r) => r[5] !== "" || r[6] > 0 || [...r[7]].some((c) => PROBLEM.includes(c)));
const model = (i) => (nodes[i][1] < 0 ? "" : D.models[nodes[i][1]]);
let view = {filter: "", gpu: "", show: "all", sort: "", desc: false, limit: STEP};

function el(tag, text, cls) {
  const e = document.createElement(tag);
  if (text !== undefined && text !== null) e.textContent = String(text);
  if (cls) e.className = cls;
  return e;
}

function readHash() {
  const p = new URLSearchParams(location.hash.replace(/^#/, ""));
  view.filter = p.get("filter") || "";
  view.gpu = p.get("gpu") || "";
  view.show = p.get("show") || "all";
  view.sort = p.get("sort") || "";
  view.desc = p.get("desc") === "1";
  view.limit = p.get("all") === "1" ? Infinity : STEP;
  $("filter").value = view.filter;
  $("gpu").value = view.gpu;
  $("show").value = view.show;
}

function writeHash() {
  const p = new URLSearchParams();
  if (view.filter) p.set("filter", view.filter);
  if (view.gpu) p.set("gpu", view.gpu);
  if (view.show !== "all") p.set("show", view.show);
  if (view.sort) p.set("sort", view.sort);
  if (view.desc) p.set("desc", "1");
  if (view.limit === Infinity) p.set("all", "1");
  const hash = p.toString();
  history.replaceState(null, "", hash ? "#" + hash : location.pathname + location.search);
}

function nodeShown(i) {
  if (!nameOk(i) || !modelOk(i)) return false;
  const s = view.show;
  if (s === "gpu") return nodes[i][8] === 1;
  if (s === "problems") return problem[i];
  if (s.startsWith("state:")) return nodes[i][7].includes(s.slice(6));
  return true;
}

// A sortable table: columns are {label, key(row) -> sort value, cell(td, row)}.
function Table(table, columns, onSort) {
  this.table = table; this.columns = columns; this.onSort = onSort; this.sort = -1; this.desc = false;
}
Table.prototype.render = function (rows, limit) {
  const t = this.table, cols = this.columns;
  t.textContent = "";
  const head = el("thead"), tr = el("tr");
  cols.forEach((c, k) => {
    const th = el("th", c.label, k === this.sort ? (this.desc ? "desc" : "asc") : "");
    if (c.title) th.title = c.title;
    th.addEventListener("click", () => {
      this.desc = this.sort === k ? !this.desc : false;
      this.sort = k;
      if (this.onSort) this.onSort(k, this.desc); else this.render(rows, limit);
    });
    tr.appendChild(th);
  });
  head.appendChild(tr); t.appendChild(head);
  let shown = rows;
  if (this.sort >= 0) {
    const key = cols[this.sort].key, sign = this.desc ? -1 : 1;
    const keyed = rows.map((r, n) => [key(r), n, r]);
    keyed.sort((a, b) => sign * cmp(a[0], b[0]) || a[1] - b[1]);
    shown = keyed.map((x) => x[2]);
  }
  const body = el("tbody"), frag = document.createDocumentFragment();
  const n = Math.min(shown.length, limit === undefined ? Infinity : limit);
  for (let i = 0; i < n; i++) {
    const row = el("tr");
    cols.forEach((c) => { const td = el("td"); c.cell(td, shown[i]); row.appendChild(td); });
    if (this.rowClass) row.className = this.rowClass(shown[i]);
    frag.appendChild(row);
  }
  body.appendChild(frag); t.appendChild(body);
  if (!rows.length) {
    const r = el("tr"), td = el("td", "none", "empty");
    td.colSpan = cols.length; r.appendChild(td); body.appendChild(r);
  }
  return n;
};

const text = (get, cls) => (td, r) => {
  const v = get(r);
  td.textContent = v === null || v === undefined ? "" : String(v);
  if (cls) td.className = cls;
};
const isCount = (v) => /^[0-9]+$/.test(v);
const modelOk = (i) => !view.gpu || (view.gpu === "-" ? nodes[i][1] < 0 : model(i) === view.gpu);
const nameOk = (i) => !view.filter || lower[i].includes(view.filter.toLowerCase());

function defaultTitle(code, col) {
  if (code === "r") return "running and ready";
  if (code === "i") return "node isolated (nvidia.com/gpu.deploy.operands=false): nothing expected";
  if (col.disabled) return "not expected: " + col.operand + " is disabled cluster-wide";
  return "not expected: nvidia.com/gpu.deploy." + col.operand + " is absent";
}

const gridCols = [
  {id: "name", label: "node", key: (i) => nodes[i][0], cell: text((i) => nodes[i][0], "node")},
  {id: "gpu", label: "GPU model", key: (i) => model(i), cell: text(model)},
  {id: "count", label: "GPUs", key: (i) => (isCount(nodes[i][2]) ? Number(nodes[i][2]) : nodes[i][2] === "" ? -1 : -2),
   cell: (td, i) => {
     td.textContent = nodes[i][2];
     if (nodes[i][2] !== "" && !isCount(nodes[i][2])) td.className = "bad-text";
   }},
  {id: "status", label: "status", key: (i) => nodes[i][3], cell: text((i) => nodes[i][3])},
];
D.columns.forEach((col, c) => gridCols.push({
  id: "op:" + col.operand, label: col.operand, title: col.disabled ? "disabled cluster-wide" : "",
  key: (i) => ORDER.indexOf(nodes[i][7][c]),
  cell: (td, i) => {
    const code = nodes[i][7][c], causes = nodes[i][9];
    td.className = "op s-" + code;
    td.textContent = LABEL[code];
    td.title = (causes && causes[c]) || defaultTitle(code, col);
  },
}));
gridCols.push(
  {id: "labels", label: "labels (audit)", title: "audit findings on this node",
   key: (i) => (nodes[i][5] === "" ? "~" : nodes[i][5]),
   cell: (td, i) => {
     td.textContent = nodes[i][5] || (nodes[i][8] ? "ok" : "\u2013");
     td.className = nodes[i][5] ? "narrow bad-text" : "s--";
     if (!nodes[i][5] && !nodes[i][8]) td.title = "not a GPU node (no nvidia.com/gpu.present=true): not audited";
   }},
  {id: "hazards", label: "hazards", title: "running pods whose required node selection no longer matches this node",
   key: (i) => -nodes[i][6],
   cell: (td, i) => { td.textContent = nodes[i][6] || ""; if (nodes[i][6]) td.className = "bad-text"; }},
  {id: "taints", label: "taints", key: (i) => nodes[i][4], cell: text((i) => nodes[i][4], "narrow")},
);

const grid = new Table($("grid"), gridCols, (k, desc) => { view.sort = gridCols[k].id; view.desc = desc; update(); });
grid.rowClass = (i) => "node-row";
const auditRows = D.audit, hazardRows = D.hazards;
const auditTable = new Table($("audit-table"), [
  {label: "node", key: (r) => nodes[r[0]][0], cell: text((r) => nodes[r[0]][0])},
  {label: "GPU model", key: (r) => model(r[0]), cell: text((r) => model(r[0]))},
  {label: "key", key: (r) => r[1], cell: text((r) => r[1])},
  {label: "reason", key: (r) => r[2], cell: text((r) => r[2], "bad-text")},
  {label: "value", key: (r) => r[4] === null ? "" : r[4], cell: text((r) => r[4] === null ? "(absent)" : r[4])},
  {label: "detail", key: (r) => r[3], cell: text((r) => r[3], "wrap")},
]);
const hazardTable = new Table($("hazards-table"), [
  {label: "pod", key: (r) => r[0], cell: text((r) => r[0])},
  {label: "node", key: (r) => nodes[r[1]][0], cell: text((r) => nodes[r[1]][0])},
  {label: "GPU model", key: (r) => model(r[1]), cell: text((r) => model(r[1]))},
  {label: "reason", key: (r) => r[2], cell: text((r) => r[2], "bad-text")},
  {label: "detail", key: (r) => r[3], cell: text((r) => r[3], "wrap")},
]);

const stackRows = D.gpustack;
const stackTable = new Table($("gpustack-table"), [
  {label: "node", key: (r) => nodes[r[0]][0], cell: text((r) => nodes[r[0]][0])},
  {label: "GPU model", key: (r) => model(r[0]), cell: text((r) => model(r[0]))},
  {label: "check", key: (r) => r[1], cell: text((r) => r[1])},
  {label: "key", key: (r) => r[2], cell: text((r) => r[2])},
  {label: "reason", key: (r) => r[3], cell: text((r) => r[3], "bad-text")},
  {label: "value", key: (r) => r[5] === null || r[5] === undefined ? "" : r[5],
   cell: text((r) => r[5] === null || r[5] === undefined ? "" : r[5])},
  {label: "detail", key: (r) => r[4], cell: text((r) => r[4], "wrap")},
]);

function drawGpus() {
  const cols = ["product", "driver", "MIG", "sharing", "nodes", "GPUs (labels)", "allocatable", "requested", "free"];
  const t = new Table($("gpus-table"), cols.map((label, k) => (
    {label: label, key: (r) => r[k], cell: text((r) => (typeof r[k] === "number" ? r[k].toLocaleString("en-US") : r[k]),
     k === 8 ? "" : undefined)}
  )));
  t.sort = 4; t.desc = true;
  t.render(D.gpus);
  heading("gpus", D.gpus.length, D.gpus.length);
}

function heading(section, shown, total) {
  const h = document.querySelector("#" + section + " h2");
  let small = h.querySelector("small");
  if (!small) { small = el("small"); h.appendChild(small); }
  small.textContent = shown === total ? String(total) : shown + " of " + total + " (filtered)";
}

function update() {
  writeHash();
  const rows = [];
  for (let i = 0; i < nodes.length; i++) if (nodeShown(i)) rows.push(i);
  const k = gridCols.findIndex((c) => c.id === view.sort);
  grid.sort = k; grid.desc = view.desc;
  const drawn = grid.render(rows, view.limit);
  const fmt = (n) => n.toLocaleString("en-US");
  $("count").textContent = fmt(rows.length) + " of " + fmt(nodes.length) + " nodes";
  $("count").dataset.shown = String(rows.length);
  const more = $("grid-more");
  more.textContent = "";
  if (drawn < rows.length) {
    more.textContent = "Showing the first " + drawn.toLocaleString("en-US") + " rows; filter or sort to see others.";
    const b = el("button", "show all " + rows.length.toLocaleString("en-US"));
    b.type = "button";
    b.addEventListener("click", () => { view.limit = Infinity; update(); });
    more.appendChild(b);
  }
  const nodeOk = (i) => nameOk(i) && modelOk(i);
  const a = auditRows.filter((r) => nodeOk(r[0]));
  auditTable.render(a); heading("audit", a.length, auditRows.length);
  const h = hazardRows.filter((r) => nodeOk(r[1]));
  hazardTable.render(h); heading("hazards", h.length, hazardRows.length);
  const g = stackRows.filter((r) => nodeOk(r[0]));
  stackTable.render(g); heading("gpustack", g.length, stackRows.length);
}

function setup() {
  const gpu = $("gpu");
  D.models.forEach((m) => { const o = el("option", m); o.value = m; gpu.appendChild(o); });
  const none = el("option", "(no gpu.product label)"); none.value = "-"; gpu.appendChild(none);
  const show = $("show");
  const counts = {};
  nodes.forEach((r) => { for (const c of r[7]) counts[c] = (counts[c] || 0) + 1; });
  [["all", "all nodes"], ["gpu", "GPU nodes"], ["problems", "nodes with problems"]].forEach(([v, t]) => {
    const o = el("option", t); o.value = v; show.appendChild(o);
  });
  const legend = $("legend");
  for (const c of ORDER) {
    if (PROBLEM.includes(c) || c === "i" || c === "p") {
      const o = el("option", "nodes with " + NAMES[c] + " operands"); o.value = "state:" + c; show.appendChild(o);
    }
    const s = el("span", NAMES[c] + " " + (counts[c] || 0).toLocaleString("en-US"), "s-" + c);
    s.title = c === "-" ? "no operand expected on the node, none running" : NAMES[c];
    legend.appendChild(s);
  }
  drawGpus();
  drawPending();
  drawDaemonsets();
  readHash();
  let timer = 0;
  $("filter").addEventListener("input", () => {
    clearTimeout(timer);
    timer = setTimeout(() => { view.filter = $("filter").value.trim(); update(); }, 120);
  });
  gpu.addEventListener("change", () => { view.gpu = gpu.value; update(); });
  show.addEventListener("change", () => { view.show = show.value; update(); });
  $("controls").addEventListener("submit", (e) => e.preventDefault());
  window.addEventListener("hashchange", () => { readHash(); update(); });
  const start = performance.now();
  update();
  // How long the first draw took, and the time since navigation began: for the browser tests and benchmarks.
  document.documentElement.dataset.drawMs = String(Math.round(performance.now() - start));
  document.documentElement.dataset.readyMs = String(Math.round(performance.now()));
}

function drawPending() {
  const box = $("pending-list");
  const total = D.pending.reduce((n, p) => n + p.pods.length, 0);
  heading("pending", total, total);
  if (!D.pending.length) { box.appendChild(el("p", "No Pending pods.", "empty")); return; }
  D.pending.forEach((p) => {
    const art = el("article", null, "pod");
    if (p.pods.length === 1) art.appendChild(el("h3", p.pods[0]));
    else {
      const d = el("details"), sum = el("summary");
      const first = p.pods.slice(0, 3).join(", ");
      sum.appendChild(el("h3", p.pods.length + " pods with the same verdicts: " + first + ", \u2026"));
      d.appendChild(sum); d.appendChild(el("p", p.pods.join(", "), "pods")); art.appendChild(d);
    }
    art.appendChild(el("p", "scheduler: " + (p.message || "(no message yet)")));
    if (p.predicted !== null && p.predicted !== p.message) {
      art.appendChild(el("p", "gpulabel predicts: " + p.predicted));
    }
    const t = el("table");
    art.appendChild(t);
    const table = new Table(t, [
      {label: "why not", key: (g) => g[0], cell: text((g) => g[0], "bad-text")},
      {label: "nodes", key: (g) => g[2], cell: text((g) => g[2].toLocaleString("en-US"))},
      {label: "detail", key: (g) => g[1], cell: text((g) => g[1], "wrap")},
      {label: "for example", key: (g) => g[3][0], cell: (td, g) => {
        td.className = "wrap";
        td.textContent = g[3].join(", ") + (g[2] > g[3].length ? ", \u2026" : "");
      }},
    ]);
    table.sort = 1;  // most nodes first
    table.desc = true;
    table.render(p.groups);
    box.appendChild(art);
  });
}

function drawDaemonsets() {
  new Table($("daemonsets-table"), [
    {label: "DaemonSet", key: (r) => r[0], cell: text((r) => r[0])},
    {label: "operand", key: (r) => r[1], cell: text((r) => r[1])},
    {label: "labelled nodes", key: (r) => r[2], cell: text((r) => r[2])},
    {label: "desiredNumberScheduled", key: (r) => (r[3] === null ? -1 : r[3]),
     cell: text((r) => (r[3] === null ? "?" : r[3]))},
    {label: "labelled but excluded by taints", key: (r) => -r[4].length, cell: (td, r) => {
      td.className = "wrap" + (r[4].length ? " bad-text" : "");
      const more = r[4].length > 10 ? "; \u2026" : "";
      td.textContent = r[4].length ? r[4].length + ": " + r[4].slice(0, 10).join("; ") + more : "none";
    }},
  ]).render(D.daemonsets);
  heading("daemonsets", D.daemonsets.length, D.daemonsets.length);
}

setup();
})();
"""
