// Per-query explorer of the retrieval report. Reads the JSON in #report-data and renders one page of
// queries at a time (only PAGE rows are in the DOM, whatever the number of queries); a query's
// documents are rendered when it is opened. No libraries, no network.
(function () {
  "use strict";
  var PAGE = 50;
  var data = JSON.parse(document.getElementById("report-data").textContent);
  var $ = function (id) { return document.getElementById(id); };
  var state = { dataset: 0, metric: 0, system: -1, filter: "all", sort: "delta-asc", search: "", page: 0, open: -1 };
  var order = [];
  var lowered = null; // search index of the current dataset, built on first search
  var rank = null; // each query's place in natural id order (naturalRanks), built on first sort

  function el(tag, attrs, children) {
    var node = document.createElement(tag);
    Object.keys(attrs || {}).forEach(function (k) {
      if (k === "text") node.textContent = attrs[k]; else node.setAttribute(k, attrs[k]);
    });
    (children || []).forEach(function (c) { if (c) node.appendChild(typeof c === "string" ? document.createTextNode(c) : c); });
    return node;
  }
  // A name shown beside other text: isolated (U+2068 ... U+2069) when it holds a bidi embedding, override or
  // isolate, whose scope would otherwise run on into the text after it (svg.isolated on the page's static part).
  var SCOPES = /[\u202a-\u202e\u2066-\u2069]/;
  // (as svg.isolated: a PDI per isolate it leaves open; an FSI in front per PDI of its own that closes none of its isolates)
  function iso(s) {
    s = String(s);
    if (!SCOPES.test(s)) return s;
    var opened = 0, stray = 0;
    for (var i = 0; i < s.length; i++) {
      var c = s.charAt(i);
      if (c === "\u2066" || c === "\u2067" || c === "\u2068") opened++;
      else if (c === "\u2069") { if (opened) opened--; else stray++; }
    }
    return "\u2068".repeat(1 + stray) + s + "\u2069".repeat(opened + 1);
  }
  function fmt(v) { return v === undefined || v === null ? "-" : Number(v).toFixed(4); }
  function signed(v) { return (v > 0 ? "+" : v < 0 ? "−" : "±") + Math.abs(v).toFixed(4); }
  function ds() { return data.datasets[state.dataset]; }
  function value(s, q) { return ds().values[s][state.metric][q]; }
  // The difference to the baseline as the results hold it (rounded from the full values: the difference of the
  // rounded values can be off by one in the last digit), shown, filtered and sorted by.
  function delta(q) { return state.system < 0 ? 0 : ds().deltas[state.system][state.metric][q]; }
  // A count (num_ret, num_rel, num_nonrel_judged_ret) or Judged@k (coverage) is no quality measure: its differences are lower or
  // higher, neither worse nor better (uncoloured), as harness compare shows them.
  function isCount() { var d = ds(); return !!(d.counts && d.counts[state.metric]); }
  function directions() {
    var count = isCount(), text = {
      "worse": count ? "lower than baseline" : "worse than baseline",
      "better": count ? "higher than baseline" : "better than baseline",
      "delta-asc": count ? "Δ, lowest first" : "Δ, losses first",
      "delta-desc": count ? "Δ, highest first" : "Δ, gains first"
    };
    [$("x-filter"), $("x-sort")].forEach(function (select) {
      Array.prototype.forEach.call(select.options, function (o) { if (text[o.value]) o.textContent = text[o.value]; });
    });
  }
  function options(select, labels, selected) {
    select.textContent = "";
    labels.forEach(function (label, i) { var o = el("option", { value: String(i), text: label }); if (i === selected) o.selected = true; select.appendChild(o); });
  }

  function setupDataset() {
    var d = ds();
    options($("x-metric"), d.metrics, state.metric = Math.min(state.metric, d.metrics.length - 1));
    var others = [];
    d.systems.forEach(function (name, i) { if (i !== d.baseline) others.push(i); });
    state.system = others.length ? others[0] : -1;
    var select = $("x-system");
    select.textContent = "";
    others.forEach(function (i) { select.appendChild(el("option", { value: String(i), text: iso(d.systems[i]) + " − " + iso(d.systems[d.baseline]) })); });
    select.disabled = others.length === 0;
    lowered = null;
    rank = null;
    state.open = -1;
    $("x-detail").hidden = true;
    directions();
    header();
  }

  function header() {
    var d = ds(), row = el("tr");
    row.appendChild(el("th", { text: "query" }));
    row.appendChild(el("th", { text: "text" }));
    d.systems.forEach(function (name, i) { row.appendChild(el("th", { "class": "num", text: iso(name) + (i === d.baseline ? " (baseline)" : "") })); });
    if (state.system >= 0) row.appendChild(el("th", { "class": "num", text: "Δ" }));
    var thead = $("x-table").tHead; thead.textContent = ""; thead.appendChild(row);
  }

  // Query ids in natural order, as a reader expects "2" before "10" and "PLAIN-9" before "PLAIN-10": compared
  // character by character (code points), except that where both have a run of ASCII digits the runs compare
  // as numbers (of any length: without their leading zeros, the shorter first, then digit by digit); ids equal
  // so ("7", "07") stay in the order of the data (sorted as text: "07" first). As harness check's list of the
  // queries that lost most (harness.compare.check.natural_ranks). Returns each query's place in that order.
  function naturalRanks(ids) {
    var parts = ids.map(function (id) { return String(id).match(/[0-9]+|[\s\S]/gu) || []; });
    function digits(t) { var c = t.charCodeAt(0); return c >= 48 && c <= 57; }
    function compare(i, j) {
      var x = parts[i], y = parts[j], n = Math.min(x.length, y.length);
      for (var k = 0; k < n; k++) {
        var a = x[k], b = y[k], c;
        if (digits(a) && digits(b)) {
          a = a.replace(/^0+/, ""); b = b.replace(/^0+/, "");
          c = a.length !== b.length ? a.length - b.length : a < b ? -1 : a > b ? 1 : 0;
        } else {
          c = a.codePointAt(0) - b.codePointAt(0);
        }
        if (c) return c;
      }
      return x.length - y.length || i - j;
    }
    var sorted = ids.map(function (_, i) { return i; }).sort(compare), out = new Array(ids.length);
    sorted.forEach(function (q, place) { out[q] = place; });
    return out;
  }

  function matches(q) {
    if (!state.search) return true;
    if (!lowered) lowered = ds().queries.map(function (id, i) { return (id + " " + ds().texts[i]).toLowerCase(); });
    return lowered[q].indexOf(state.search) >= 0;
  }

  function recompute() {
    var d = ds(), n = d.queries.length, keep = [];
    for (var q = 0; q < n; q++) {
      var dq = delta(q);
      if (state.filter === "worse" && !(dq < 0)) continue;
      if (state.filter === "better" && !(dq > 0)) continue;
      if (state.filter === "tied" && dq !== 0) continue;
      if (matches(q)) keep.push(q);
    }
    var base = d.baseline;
    if (!rank) rank = naturalRanks(d.queries);
    var id = function (a, b) { return rank[a] - rank[b]; }; // (ties of the other sorts too: in natural id order)
    var by = {
      "delta-asc": function (a, b) { return delta(a) - delta(b) || id(a, b); },
      "delta-desc": function (a, b) { return delta(b) - delta(a) || id(a, b); },
      "base-asc": function (a, b) { return value(base, a) - value(base, b) || id(a, b); },
      "id": id
    }[state.sort];
    keep.sort(by);
    order = keep;
    state.page = Math.min(state.page, Math.max(0, Math.ceil(order.length / PAGE) - 1));
    draw();
  }

  function draw() {
    var d = ds(), body = $("x-table").tBodies[0];
    body.textContent = "";
    var start = state.page * PAGE, stop = Math.min(order.length, start + PAGE);
    for (var i = start; i < stop; i++) {
      var q = order[i], row = el("tr", { "data-query": d.queries[q] });
      row.appendChild(el("td", { "class": "doc-id", text: d.queries[q] }));
      row.appendChild(el("td", { "class": "text", title: d.texts[q], text: d.texts[q] }));
      d.systems.forEach(function (_, s) { row.appendChild(el("td", { "class": "num", text: fmt(value(s, q)) })); });
      if (state.system >= 0) {
        var dq = delta(q);
        row.appendChild(el("td", { "class": "num " + (isCount() ? "" : dq > 0 ? "up" : dq < 0 ? "down" : ""), text: signed(dq) }));
      }
      if (q === state.open) row.className = "open";
      row.tabIndex = 0; // keyboard: Tab to a row, Enter opens it
      row.addEventListener("click", openQuery.bind(null, q));
      row.addEventListener("keydown", function (q, event) { if (event.key === "Enter") openQuery(q); }.bind(null, q));
      body.appendChild(row);
    }
    var pages = Math.max(1, Math.ceil(order.length / PAGE));
    $("x-status").textContent = order.length ? "Showing " + (start + 1) + "–" + stop + " of " + order.length + " queries (" + d.queries.length + " in " + iso(d.label) + ")" : "No query matches.";
    $("x-page").textContent = "page " + (state.page + 1) + " of " + pages;
    $("x-prev").disabled = state.page === 0;
    $("x-next").disabled = state.page >= pages - 1;
  }

  function judgedMap(q) {
    var d = ds(), map = {};
    if (!d.judged) return null;
    var flat = d.judged[q];
    for (var i = 0; i < flat.length; i += 2) map[flat[i]] = flat[i + 1];
    return map;
  }
  // Judged as the evaluator counts it (Judged@k): under trec_eval-10 a negative grade is unjudged.
  function isJudged(grade) { return grade !== undefined && !(ds().negative_unjudged && grade < 0); }
  function gradeBadge(grade) {
    if (grade === undefined) return el("span", { "class": "grade unjudged", title: "not judged", text: "?" });
    if (!isJudged(grade)) return el("span", { "class": "grade unjudged", title: "grade " + grade + ": unjudged under trec_eval-10", text: String(grade) });
    var level = grade <= 0 ? 0 : grade >= 2 ? 2 : 1;
    return el("span", { "class": "grade g" + level, title: "grade " + grade, text: String(grade) });
  }
  function docItem(code, grade) {
    var d = ds(), title = d.titles ? d.titles[code] : "";
    return el("li", { "data-doc": d.docs[code], "class": isJudged(grade) ? "is-judged" : "is-unjudged" },
      [d.judged ? gradeBadge(grade) : null, el("span", { "class": "doc-id", text: iso(d.docs[code]) }), title ? " " + title : ""]);
  }

  function openQuery(q) {
    var d = ds(), box = $("x-detail"), grades = judgedMap(q);
    state.open = q;
    box.textContent = "";
    box.appendChild(el("h3", { text: "Query " + iso(d.queries[q]) }));
    box.appendChild(el("p", { "class": "query-text", text: d.texts[q] || "(no query text in the results)" }));
    var scores = el("table", { "class": "plain" });
    scores.appendChild(el("tr", {}, [el("th", { text: "system" })].concat(d.metrics.map(function (m) { return el("th", { "class": "num", text: m }); }))));
    d.systems.forEach(function (name, s) {
      scores.appendChild(el("tr", {}, [el("td", { text: name })].concat(d.metrics.map(function (_, m) { return el("td", { "class": "num", text: fmt(d.values[s][m][q]) }); }))));
    });
    box.appendChild(scores);
    var lists = el("div", { "class": "lists" });
    if (grades) {
      var judged = el("ul", { "class": "judged" }), flat = d.judged[q], negative = 0;
      for (var i = 0; i < flat.length; i += 2) {
        judged.appendChild(docItem(flat[i], flat[i + 1]));
        if (!isJudged(flat[i + 1])) negative++;
      }
      lists.appendChild(el("div", { "class": "list" }, [el("h4", { text: "Judged documents (" + (flat.length / 2 - negative) +
        (negative ? "; " + negative + " with a negative grade, unjudged under trec_eval-10" : "") + ")" }), judged]));
    } else {
      lists.appendChild(el("div", { "class": "list" }, [el("p", { text: "No judgments available (see the warnings at the top)." })]));
    }
    d.systems.forEach(function (name, s) {
      var top = d.top[s], list;
      if (!top) {
        list = el("p", { text: "No ranking (run.trec) in this result." });
      } else {
        list = el("ol", { "class": "topk" });
        top[q].forEach(function (code) { list.appendChild(docItem(code, grades ? grades[code] : undefined)); });
        if (!top[q].length) list = el("p", { text: "Nothing retrieved." });
      }
      var unjudged = grades && top ? top[q].filter(function (c) { return !isJudged(grades[c]); }).length : 0;
      lists.appendChild(el("div", { "class": "list", "data-system": name }, [
        el("h4", { text: iso(name) + ": top " + d.top_k + (grades && top ? " (" + unjudged + " unjudged)" : "") }), list]));
    });
    box.appendChild(lists);
    box.hidden = false;
    draw();
    box.scrollIntoView({ block: "nearest" });
  }

  function bind(id, key, parse) {
    $(id).addEventListener(id === "x-search" ? "input" : "change", function (event) {
      state[key] = parse(event.target.value);
      state.page = 0;
      if (key === "dataset") setupDataset();
      if (key === "system") header();
      if (key === "metric") directions();
      recompute();
    });
  }

  if (!data.datasets.length) return;
  options($("x-dataset"), data.datasets.map(function (d) { return d.label; }), 0);
  $("x-dataset").disabled = data.datasets.length < 2;
  bind("x-dataset", "dataset", Number);
  bind("x-metric", "metric", Number);
  bind("x-system", "system", Number);
  bind("x-filter", "filter", String);
  bind("x-sort", "sort", String);
  bind("x-search", "search", function (v) { return v.trim().toLowerCase(); });
  $("x-prev").addEventListener("click", function () { state.page -= 1; draw(); });
  $("x-next").addEventListener("click", function () { state.page += 1; draw(); });
  setupDataset();
  recompute();
})();
