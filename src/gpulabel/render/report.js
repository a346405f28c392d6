(function () {
"use strict";
const DATA = JSON.parse(document.getElementById("gpulabel-data").textContent);
// a fleet page (report over several clusters): every cluster's report, one drawn at a time (#cluster=NAME)
const FLEET = DATA.clusters || null;
const hashCluster = () => new URLSearchParams(location.hash.replace(/^#/, "")).get("cluster");
const CLUSTER = FLEET ? (FLEET.find((c) => c.name === hashCluster()) || FLEET[0]) : null;
const D = CLUSTER ? CLUSTER.doc : DATA;
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
const lower = nodes.map((r) => r.name.toLowerCase());
const problem = nodes.map((r) => r.audit !== "" || r.hazards > 0 || [...r.cells].some((c) => PROBLEM.includes(c)));
const model = (i) => (nodes[i].model < 0 ? "" : D.models[nodes[i].model]);
// A big fleet opens on the nodes with problems: thousands of healthy rows would bury them.
const MANY = 300;
const DEFAULT_SHOW = nodes.length > MANY ? "problems" : "all";
let view = {filter: "", gpu: "", show: DEFAULT_SHOW, sort: "", desc: false, limit: STEP};

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
  view.show = p.get("show") || DEFAULT_SHOW;
  view.sort = p.get("sort") || "";
  view.desc = p.get("desc") === "1";
  view.limit = p.get("all") === "1" ? Infinity : STEP;
  $("filter").value = view.filter;
  $("gpu").value = view.gpu;
  $("show").value = view.show;
}

function writeHash() {
  const p = new URLSearchParams();
  if (CLUSTER) p.set("cluster", CLUSTER.name);
  if (view.filter) p.set("filter", view.filter);
  if (view.gpu) p.set("gpu", view.gpu);
  if (view.show !== DEFAULT_SHOW) p.set("show", view.show);
  if (view.sort) p.set("sort", view.sort);
  if (view.desc) p.set("desc", "1");
  if (view.limit === Infinity) p.set("all", "1");
  const hash = p.toString();
  history.replaceState(null, "", hash ? "#" + hash : location.pathname + location.search);
}

function nodeShown(i) {
  if (!nameOk(i) || !modelOk(i)) return false;
  const s = view.show;
  if (s === "gpu") return nodes[i].gpu === 1;
  if (s === "problems") return problem[i];
  if (s.startsWith("state:")) return nodes[i].cells.includes(s.slice(6));
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
const modelOk = (i) => !view.gpu || (view.gpu === "-" ? nodes[i].model < 0 : model(i) === view.gpu);
const nameOk = (i) => !view.filter || lower[i].includes(view.filter.toLowerCase());

function defaultTitle(code, col) {
  if (code === "r") return "running and ready";
  if (code === "i") return "node isolated (nvidia.com/gpu.deploy.operands=false): nothing expected";
  if (col.disabled) return "not expected: " + col.operand + " is disabled cluster-wide";
  return "not expected: nvidia.com/gpu.deploy." + col.operand + " is absent";
}

const gridCols = [
  {id: "name", label: "node", key: (i) => nodes[i].name, cell: text((i) => nodes[i].name, "node")},
  {id: "gpu", label: "GPU model", key: (i) => model(i), cell: text(model)},
  {id: "count", label: "GPUs", key: (i) => (isCount(nodes[i].gpus) ? Number(nodes[i].gpus) : nodes[i].gpus === "" ? -1 : -2),
   cell: (td, i) => {
     td.textContent = nodes[i].gpus;
     if (nodes[i].gpus !== "" && !isCount(nodes[i].gpus)) td.className = "bad-text";
   }},
  {id: "status", label: "status", key: (i) => nodes[i].status, cell: text((i) => nodes[i].status)},
];
D.columns.forEach((col, c) => gridCols.push({
  id: "op:" + col.operand, label: col.operand, title: col.disabled ? "disabled cluster-wide" : "",
  key: (i) => ORDER.indexOf(nodes[i].cells[c]),
  cell: (td, i) => {
    const code = nodes[i].cells[c], causes = nodes[i].causes;
    td.className = "op s-" + code;
    td.textContent = LABEL[code];
    td.title = (causes && causes[c]) || defaultTitle(code, col);
  },
}));
gridCols.push(
  {id: "labels", label: "labels (audit)", title: "audit findings on this node",
   key: (i) => (nodes[i].audit === "" ? "~" : nodes[i].audit),
   cell: (td, i) => {
     td.textContent = nodes[i].audit || (nodes[i].gpu ? "ok" : "\u2013");
     td.className = nodes[i].audit ? "narrow bad-text" : "s--";
     if (!nodes[i].audit && !nodes[i].gpu) td.title = "not a GPU node (no nvidia.com/gpu.present=true): not audited";
   }},
  {id: "hazards", label: "hazards", title: "running pods whose required node selection no longer matches this node",
   key: (i) => -nodes[i].hazards,
   cell: (td, i) => { td.textContent = nodes[i].hazards || ""; if (nodes[i].hazards) td.className = "bad-text"; }},
  {id: "taints", label: "taints", key: (i) => nodes[i].taints, cell: text((i) => nodes[i].taints, "narrow")},
);

const grid = new Table($("grid"), gridCols, (k, desc) => { view.sort = gridCols[k].id; view.desc = desc; update(); });
grid.rowClass = (i) => "node-row";
const auditRows = D.audit, hazardRows = D.hazards;
const auditTable = new Table($("audit-table"), [
  {label: "node", key: (r) => nodes[r.node].name, cell: text((r) => nodes[r.node].name)},
  {label: "GPU model", key: (r) => model(r.node), cell: text((r) => model(r.node))},
  {label: "key", key: (r) => r.key, cell: text((r) => r.key)},
  {label: "reason", key: (r) => r.reason, cell: text((r) => r.reason, "bad-text")},
  {label: "value", key: (r) => r.value === null ? "" : r.value, cell: text((r) => r.value === null ? "(absent)" : r.value)},
  {label: "detail", key: (r) => r.detail, cell: text((r) => r.detail, "wrap")},
]);
const hazardTable = new Table($("hazards-table"), [
  {label: "pod", key: (r) => r.pod, cell: text((r) => r.pod)},
  {label: "node", key: (r) => nodes[r.node].name, cell: text((r) => nodes[r.node].name)},
  {label: "GPU model", key: (r) => model(r.node), cell: text((r) => model(r.node))},
  {label: "reason", key: (r) => r.reason, cell: text((r) => r.reason, "bad-text")},
  {label: "detail", key: (r) => r.detail, cell: text((r) => r.detail, "wrap")},
]);

const stackRows = D.gpustack;
const stackTable = new Table($("gpustack-table"), [
  {label: "node", key: (r) => nodes[r.node].name, cell: text((r) => nodes[r.node].name)},
  {label: "GPU model", key: (r) => model(r.node), cell: text((r) => model(r.node))},
  {label: "check", key: (r) => r.check, cell: text((r) => r.check)},
  {label: "key", key: (r) => r.key, cell: text((r) => r.key)},
  {label: "reason", key: (r) => r.reason, cell: text((r) => r.reason, "bad-text")},
  {label: "value", key: (r) => r.value === null || r.value === undefined ? "" : r.value,
   cell: text((r) => r.value === null || r.value === undefined ? "" : r.value)},
  {label: "detail", key: (r) => r.detail, cell: text((r) => r.detail, "wrap")},
]);

function drawGpus() {
  const cols = [["product", "product"], ["driver", "driver"], ["MIG", "mig"], ["sharing", "sharing"],
    ["nodes", "nodes"], ["GPUs", "gpus"], ["MIG devices", "mig_devices"], ["allocatable devices", "allocatable"],
    ["requested", "requested"], ["free", "free"], ["usable", "usable"], ["unhealthy", "unhealthy"],
    ["unschedulable", "unschedulable"]];
  const t = new Table($("gpus-table"), cols.map(([label, f]) => (
    {label: label, key: (r) => r[f], cell: text((r) => (typeof r[f] === "number" ? r[f].toLocaleString("en-US") : r[f]))}
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
  const a = auditRows.filter((r) => nodeOk(r.node));
  auditTable.render(a); heading("audit", a.length, auditRows.length);
  const h = hazardRows.filter((r) => nodeOk(r.node));
  hazardTable.render(h); heading("hazards", h.length, hazardRows.length);
  const g = stackRows.filter((r) => nodeOk(r.node));
  stackTable.render(g); heading("gpustack", g.length, stackRows.length);
}

function setup() {
  const gpu = $("gpu");
  D.models.forEach((m) => { const o = el("option", m); o.value = m; gpu.appendChild(o); });
  const none = el("option", "(no gpu.product label)"); none.value = "-"; gpu.appendChild(none);
  const show = $("show");
  const counts = {};
  nodes.forEach((r) => { for (const c of r.cells) counts[c] = (counts[c] || 0) + 1; });
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
  window.addEventListener("hashchange", () => {
    if (CLUSTER && hashCluster() && hashCluster() !== CLUSTER.name) { location.reload(); return; }
    readHash(); update();
  });
  if (CLUSTER) {
    for (const part of document.querySelectorAll("[data-cluster]")) part.hidden = part.dataset.cluster !== CLUSTER.name;
  }
  const start = performance.now();
  update();
  // How long the first draw took, and the time since navigation began: for the browser tests and benchmarks.
  document.documentElement.dataset.drawMs = String(Math.round(performance.now() - start));
  document.documentElement.dataset.readyMs = String(Math.round(performance.now()));
  // How many pixels of the operands table the window cannot show without scrolling sideways (0: every column).
  const box = $("grid").parentElement;
  document.documentElement.dataset.gridOverflowPx = String(Math.max(0, box.scrollWidth - box.clientWidth));
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
      {label: "why not", key: (g) => g.reason, cell: text((g) => g.reason, "bad-text")},
      {label: "nodes", key: (g) => g.nodes, cell: text((g) => g.nodes.toLocaleString("en-US"))},
      {label: "detail", key: (g) => g.detail, cell: text((g) => g.detail, "wrap")},
      {label: "for example", key: (g) => g.sample[0], cell: (td, g) => {
        td.className = "wrap";
        td.textContent = g.sample.join(", ") + (g.nodes > g.sample.length ? ", \u2026" : "");
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
    {label: "DaemonSet", key: (r) => r.daemonset, cell: text((r) => r.daemonset)},
    {label: "operand", key: (r) => r.operand, cell: text((r) => r.operand)},
    {label: "labelled nodes", key: (r) => r.labelled_nodes, cell: text((r) => r.labelled_nodes)},
    {label: "desiredNumberScheduled", key: (r) => (r.desired_number_scheduled === null ? -1 : r.desired_number_scheduled),
     cell: text((r) => (r.desired_number_scheduled === null ? "?" : r.desired_number_scheduled))},
    {label: "labelled but excluded by taints", key: (r) => -r.excluded.length, cell: (td, r) => {
      const ex = r.excluded;
      td.className = "wrap" + (ex.length ? " bad-text" : "");
      const more = ex.length > 10 ? "; \u2026" : "";
      td.textContent = ex.length ? ex.length + ": " + ex.slice(0, 10).join("; ") + more : "none";
    }},
  ]).render(D.daemonsets);
  heading("daemonsets", D.daemonsets.length, D.daemonsets.length);
}

setup();
})();
