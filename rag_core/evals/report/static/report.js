// The rag-core report page: reads the JSON the report embeds (rag_core/evals/report/view.py) and
// draws it with plain DOM calls. Text from the data is only ever set as text (never as HTML), and
// the page fetches nothing. Views are addressed by the URL's #fragment, so the back button works
// and a link to one case can be shared with the file.
"use strict";
(function () {
  const DATA = JSON.parse(document.getElementById("rag-core-data").textContent);
  const PAGE_SIZE = 50;
  const COMPARED = DATA.base !== null;
  // the run compared with, in words ("the previous run"): BASE is the command line's name for it
  const BASE = COMPARED ? DATA.base.label : "";
  // what each view keeps while the user moves between views
  const state = {
    cases: { filter: "all", search: "", sort: null, dir: 1, page: 0 },
    queries: new Map(),  // "suite/retriever" -> { search, sort, dir, page }
  };
  // a value of the data looked up by a name from the data (a case id, a query id, a metric): only
  // the object's own keys, so an id such as "toString" or "constructor" finds its own entry or
  // none, never a method every object inherits
  const own = (map, key) => (map && Object.prototype.hasOwnProperty.call(map, key) ? map[key] : undefined);

  // ------------------------------------------------------------------ DOM helpers
  function el(tag, attrs, ...children) {
    const node = document.createElement(tag);
    for (const [key, value] of Object.entries(attrs || {})) {
      if (value === null || value === undefined || value === false) continue;
      if (key === "text") node.textContent = value;
      else if (key === "class") node.className = value;
      else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
      else node.setAttribute(key, value === true ? "" : value);
    }
    for (const child of children.flat(Infinity)) {
      if (child === null || child === undefined || child === false) continue;
      node.append(child instanceof Node ? child : document.createTextNode(String(child)));
    }
    return node;
  }
  const fmt = (x, digits) => (x === null || x === undefined ? "–" : Number(x).toFixed(digits === undefined ? 4 : digits));
  const signed = (x, digits) => (x > 0 ? "+" : x < 0 ? "−" : "±") + Math.abs(x).toFixed(digits === undefined ? 4 : digits);
  const badge = (text, kind) => el("span", { class: "badge s-" + (kind || text), text: text });
  const link = (hash, text, attrs) => el("a", Object.assign({ href: "#" + hash, text: text }, attrs || {}));
  const hashOf = (...parts) => parts.map(encodeURIComponent).join("/");
  function deltaSpan(now, before, digits, higherIsBetter) {
    if (before === null || before === undefined) return null;
    const d = now - before;
    if (Math.abs(d) < 1e-12) return el("span", { class: "muted", text: " (±0)" });
    const better = higherIsBetter === false ? d < 0 : d > 0;
    return el("span", { class: better ? "up" : "down", text: " (" + signed(d, digits) + ")" });
  }

  // ------------------------------------------------------------------ header and summary
  function header() {
    const run = DATA.run;
    document.getElementById("title").textContent = "rag-core run " + run.id;
    const meta = document.getElementById("meta");
    const git = run.git ? run.git.commit.slice(0, 10) + (run.git.dirty ? " (dirty)" : "")
      : "none recorded (not run in a git repository, or without git)";
    const options = run.options;
    const mode = options.live ? "live" + (options.repeat > 1 ? " ×" + options.repeat : "")
      : options.record_mode !== "none" ? "recording (" + options.record_mode + (options.emulator ? ", emulator" : "") + ")"
      : "replay";
    meta.append(
      el("span", { text: "started " + run.started }), el("span", { text: "commit " + git }),
      el("span", { text: "mode " + mode + (options.update_goldens ? ", --update-goldens" : "") }),
      el("span", { text: "exit status " + run.exit_status }),
    );
    if (COMPARED) {
      const base = DATA.base;
      meta.append(el("span", { id: "compared", text: "compared with " + base.id + (base.git ? " (" + base.git.commit.slice(0, 10) + ")" : "") }));
    }
    for (const note of run.notes) meta.append(el("div", { class: "note", text: note }));
  }

  function summary() {
    const now = DATA.summary.now, before = DATA.summary.before;
    const box = document.getElementById("summary");
    function card(label, key, kind, digits, higherIsBetter) {
      const value = now[key];
      const shown = digits === undefined ? Number(value).toLocaleString("en") : fmt(value, digits);
      const delta = before ? deltaSpan(value, before[key], digits === undefined ? 0 : digits, higherIsBetter) : null;
      return el("div", { class: "card " + (kind || ""), "data-card": key },
        el("div", { class: "n", text: shown }), el("div", { class: "label" }, label, delta));
    }
    // a run's time moves with the machine's load: within the noise band (view.py, compare.py) its
    // change is shown, uncoloured, as noise; beyond it, slower in red and faster in green
    function timeCard() {
      const value = now.seconds;
      const changed = before && DATA.summary.timing !== "noise" ? deltaSpan(value, before.seconds, 1, false) : null;
      const noise = before && DATA.summary.timing === "noise"
        ? el("span", { class: "muted", title: "within the noise band of a run's time", text: " (" + signed(value - before.seconds, 1) + ", noise)" })
        : null;
      return el("div", { class: "card", "data-card": "seconds" },
        el("div", { class: "n", text: fmt(value, 1) }), el("div", { class: "label" }, "seconds", changed, noise));
    }
    box.append(
      card("cases", "cases"),
      card("passed", "passed", now.failed === 0 && now.cases > 0 ? "good" : ""),
      card("failed", "failed", now.failed ? "bad" : "", undefined, false),
      card("new goldens", "new"), card("updated goldens", "updated"), card("skipped", "skipped"),
    );
    if (COMPARED) {
      const changes = DATA.summary.changes || {};
      const changed = DATA.cases.length - (changes.same || 0);
      box.append(el("div", { class: "card " + (changes.regressed ? "bad" : ""), "data-card": "changed" },
        el("div", { class: "n", text: String(changed) }),
        el("div", { class: "label", text: "changed since " + BASE + (changes.regressed ? " (" + changes.regressed + " regressed)" : "") })));
    }
    if (now.gates_passed + now.gates_failed > 0) {
      box.append(el("div", { class: "card " + (now.gates_failed ? "bad" : "good"), "data-card": "gates" },
        el("div", { class: "n", text: now.gates_passed + " / " + (now.gates_passed + now.gates_failed) }),
        el("div", { class: "label", text: "retrieval gates passed" })));
    }
    box.append(card("tokens", "tokens", "", undefined, false), timeCard());
  }

  // ------------------------------------------------------------------ tables: sort and pages
  function sortRows(rows, key, dir) {
    if (!key) return rows;
    const value = typeof key === "function" ? key : (row) => row[key];
    return rows.slice().sort((a, b) => {
      const x = value(a), y = value(b);
      if (x === y) return 0;
      if (x === null || x === undefined) return 1;  // missing values last, either way
      if (y === null || y === undefined) return -1;
      return (x < y ? -1 : 1) * dir;
    });
  }

  function headerRow(columns, view, redraw) {
    return el("tr", {}, columns.map((column) => {
      const sorted = view.sort === column.key;
      return el("th", {
        class: (column.num ? "num " : "") + (column.key ? "sortable" : ""), scope: "col",
        "aria-sort": sorted ? (view.dir > 0 ? "ascending" : "descending") : null,
        onclick: column.key ? () => {
          view.dir = sorted ? -view.dir : (column.descending ? -1 : 1);
          view.sort = column.key; view.page = 0; redraw();
        } : null,
      }, column.label);
    }));
  }

  function pager(view, total, redraw) {
    const pages = Math.max(1, Math.ceil(total / PAGE_SIZE));
    view.page = Math.min(view.page, pages - 1);
    const first = total ? view.page * PAGE_SIZE + 1 : 0, last = Math.min(total, (view.page + 1) * PAGE_SIZE);
    return el("div", { class: "pager" },
      el("button", { type: "button", disabled: view.page === 0, onclick: () => { view.page -= 1; redraw(); } }, "‹ previous"),
      el("span", { class: "range", text: first + "–" + last + " of " + total + " (page " + (view.page + 1) + " of " + pages + ")" }),
      el("button", { type: "button", disabled: view.page >= pages - 1, onclick: () => { view.page += 1; redraw(); } }, "next ›"));
  }

  // ------------------------------------------------------------------ cases
  const FILTERS = [
    ["all", "All", () => true],
    ["failed", "Failed", (c) => c.status === "failed"],
    ["changed", "Changed since " + BASE, (c) => c.change !== null && c.change !== "same"],
    ["new", "New", (c) => c.status === "new" || c.change === "added"],
    ["skipped", "Skipped", (c) => c.status === "skipped"],
  ].filter(([name]) => COMPARED || name !== "changed");

  function casesView(main) {
    const view = state.cases;
    const holder = el("div", { id: "cases-table" });
    const search = el("input", { type: "search", placeholder: "search case ids, checks and fields", value: view.search,
      "aria-label": "search cases", oninput: (event) => { view.search = event.target.value; view.page = 0; draw(); } });
    const buttons = FILTERS.map(([name, label, test]) => el("button", {
      type: "button", "data-filter": name, "aria-pressed": String(view.filter === name),
      onclick: () => { view.filter = name; view.page = 0; buttons.forEach((b) => b.setAttribute("aria-pressed", String(b.dataset.filter === name))); draw(); },
    }, label + " (" + DATA.cases.filter(test).length + ")"));
    main.append(el("div", { class: "toolbar" }, buttons, search), holder);

    const columns = [
      { label: "case", key: "id" }, { label: "status", key: "status" },
      ...(COMPARED ? [{ label: "in " + BASE, key: "before" }, { label: "change", key: "change", value: (c) => ORDER[c.change] }] : []),
      { label: "failed checks", key: "failures", num: true, descending: true },
      { label: "tokens", key: "tokens", num: true, descending: true },
      { label: "seconds", key: "seconds", num: true, descending: true },
    ];
    function draw() {
      const test = FILTERS.find(([name]) => name === view.filter)[2];
      const words = view.search.toLowerCase().split(/\s+/).filter(Boolean);
      let rows = DATA.cases.filter((c) => test(c) && words.every((w) =>
        c.id.toLowerCase().includes(w) || c.checks.some((check) => check.toLowerCase().includes(w))));
      const column = columns.find((col) => col.key === view.sort);
      rows = sortRows(rows, column ? column.value || column.key : null, view.dir);
      const shown = rows.slice(view.page * PAGE_SIZE, (view.page + 1) * PAGE_SIZE);
      const body = el("tbody", {}, shown.map((c) => el("tr", {
        class: "clickable case-row", "data-case": c.id, onclick: () => { location.hash = hashOf("case", c.id); },
      },
        el("td", {}, link(hashOf("case", c.id), c.id)), el("td", {}, badge(c.status)),
        COMPARED ? el("td", {}, c.before ? badge(c.before) : el("span", { class: "muted", text: "–" })) : null,
        COMPARED ? el("td", {}, c.change && c.change !== "same" ? badge(c.change) : el("span", { class: "muted", text: "same" })) : null,
        el("td", { class: "num", title: c.checks.join("\n") }, String(c.failures)),
        el("td", { class: "num" }, String(c.tokens)), el("td", { class: "num" }, fmt(c.seconds, 2)))));
      holder.replaceChildren(
        rows.length ? el("table", { id: "cases" }, el("thead", {}, headerRow(columns, view, draw)), body)
          : el("div", { class: "empty", text: "No case matches." }),
        pager(view, rows.length, draw));
    }
    draw();
  }
  const ORDER = { regressed: 0, changed: 1, added: 2, fixed: 3, removed: 4, same: 5 };

  // ------------------------------------------------------------------ one case
  function commonEnds(a, b) {
    let start = 0;
    while (start < a.length && start < b.length && a[start] === b[start]) start++;
    let end = 0;
    while (end < a.length - start && end < b.length - start && a[a.length - 1 - end] === b[b.length - 1 - end]) end++;
    return [start, end];
  }
  function marked(text, start, end) {  // the changed middle of a line in a <mark>
    return [text.slice(0, start), el("mark", { text: text.slice(start, text.length - end) }), text.slice(text.length - end)];
  }

  // a fold of unchanged lines opens in place (its row holds them); a fold of lines past the
  // comparison's bound holds none, and says so
  function foldRow(label, hidden) {
    if (!hidden) return el("tr", { class: "fold" }, el("td", { colspan: "2", text: label }));
    const row = el("tr", { class: "fold" }, el("td", { colspan: "2" }, el("button", {
      type: "button", class: "unfold", title: "show these lines",
      onclick: () => row.replaceWith(...hidden.map((line) => el("tr", { class: "same unfolded" },
        el("td", { class: "l", text: line }), el("td", { class: "r", text: line })))),
    }, "⋯ " + label + " (show) ⋯")));
    return row;
  }

  function sideBySide(failure) {
    const label = (failure.where ? failure.where + ":" : "") + failure.field;
    const body = el("tbody", {}, failure.rows.map(([tag, left, right, hidden]) => {
      if (tag === "…") return foldRow(left, hidden);
      if (tag === "~") {
        const [start, end] = commonEnds(left, right);
        return el("tr", { class: "chg" }, el("td", { class: "l" }, marked(left, start, end)), el("td", { class: "r" }, marked(right, start, end)));
      }
      const kind = tag === "-" ? "del" : tag === "+" ? "add" : "same";
      return el("tr", { class: kind }, el("td", { class: "l", text: left === null ? "" : left }), el("td", { class: "r", text: right === null ? "" : right }));
    }));
    return el("table", { class: "sbs" },
      el("thead", {}, el("tr", {}, el("th", { text: "golden — " + label }), el("th", { text: "observed" }))), body);
  }

  function diffBlock(text) {
    return el("pre", { class: "diff" }, text.replace(/\n$/, "").split("\n").map((line) => {
      const kind = line.startsWith("+++") || line.startsWith("---") ? "file" : line.startsWith("@@") ? "hunk"
        : line.startsWith("+") ? "add" : line.startsWith("-") ? "del" : "ctx";
      return el("span", { class: kind, text: line || " " });
    }));
  }

  function failureCard(failure, number) {
    const title = failure.check + " · " + (failure.where ? failure.where + ":" : "") + failure.field;
    const notes = [];
    for (const [name, size] of Object.entries(failure.truncated || {})) {
      notes.push(name === "detail"
        ? "values and diff left out: the record had spent its budget on earlier failures"
        : name + " cut to its first 64 KB (" + size.toLocaleString() + " bytes in all)");
    }
    for (const name of failure.withheld || []) notes.push(name + " withheld: it looks like a credential");
    return el("div", { class: "failure", "data-failure": String(number) },
      el("div", { class: "head" }, el("strong", { text: title }), " ", badge(failure.source, "skipped")),
      el("div", { class: "body" },
        failure.message ? el("div", { class: "message", text: failure.message }) : null,
        failure.fix ? el("div", { class: "fix mono", text: failure.fix }) : null,
        notes.map((note) => el("div", { class: "note", text: note })),
        failure.rows ? sideBySide(failure) : null,
        // the side by side shows the change already: its unified diff (what the terminal shows) opens on a click
        failure.diff ? el("details", { open: !failure.rows }, el("summary", { text: "unified diff" }), diffBlock(failure.diff)) : null,
        failure.also ? sameChange(failure, number) : null));
  }

  // one change in several checks: shown once, where it first shows up; the other places it shows
  // up in are named, and each opens in place
  function sameChange(failure, number) {
    return el("div", { class: "same-change" },
      el("div", { class: "note", text: "the same change shows up in " + failure.also }),
      (failure.same || []).map((other, n) => el("details", { class: "same" },
        el("summary", { text: (other.where ? other.where + ":" : "") + other.field }), failureCard(other, number + "." + n))));
  }

  // a --live case: the aggregate, then each run (--repeat N) with its verdict, time, tokens,
  // retries and failures; records made before runs were kept have the aggregate only
  function liveBlock(live) {
    const head = el("p", { class: "live-summary", text: "live: " + live.passes + " of " + live.runs + " runs passed (" +
      Math.round(live.pass_rate * 100) + "%, minimum " + Math.round(live.min_pass_rate * 100) + "%), p50 " +
      fmt(live.p50, 2) + " s, p95 " + fmt(live.p95, 2) + " s, " + live.tokens + " tokens per run" +
      (live.tokens_total ? ", " + live.tokens_total + " in all" : "") +
      (live.cost_usd != null ? ", $" + live.cost_usd.toFixed(4) + " at list prices" : "") +
      (live.unpriced ? " (not priced: " + live.unpriced.join(", ") + ")" : "") });
    const repeats = live.repeats || [];
    if (!repeats.length) return head;
    const failing = repeats.filter((r) => r.failures.length);
    return el("div", { class: "live" }, head,
      repeats.length < live.runs ? el("p", { class: "note", text: "the first " + repeats.length + " of " + live.runs + " runs are kept" }) : null,
      el("table", { id: "repeats" },
        el("thead", {}, el("tr", {}, el("th", { text: "run" }), el("th", { text: "result" }), el("th", { class: "num", text: "seconds" }),
          el("th", { class: "num", text: "tokens" }), el("th", { class: "num", text: "retries" }), el("th", { text: "failed checks" }))),
        el("tbody", {}, repeats.map((r, n) => el("tr", { class: "repeat-row", "data-repeat": String(r.repeat) },
          el("td", { text: "run " + (n + 1) }), el("td", {}, badge(r.passed ? "passed" : "failed")),
          el("td", { class: "num", text: fmt(r.seconds, 2) }), el("td", { class: "num", text: String(r.tokens) }),
          el("td", { class: "num", text: String(r.retries) }),
          el("td", { text: r.failures.map((f) => (f.field && f.field !== f.check ? f.check + " " + f.field : f.check)).join(", ") || "–" }))))),
      failing.map((r) => el("details", { class: "repeat", "data-repeat": String(r.repeat), open: failing.length <= 3 },
        el("summary", { text: "run " + (repeats.indexOf(r) + 1) + ": " + r.failures.length + " failed check(s)" }),
        r.failures.map(failureCard))));
  }

  function detailBody(detail) {
    return el("div", { class: "detail" },
      detail.live ? liveBlock(detail.live) : null,
      detail.stale ? el("p", { class: "note", text: "its cassette no longer matches what the agent sends" }) : null,
      detail.reason ? el("pre", { class: "reason", text: detail.reason }) : null,
      detail.failures.map(failureCard),
      detail.fixes && detail.fixes.length ? el("div", {}, el("h3", { text: "To fix" }), detail.fixes.map((fix) => el("div", { class: "fix mono", text: fix }))) : null);
  }

  function caseView(main, id) {
    const row = DATA.cases.find((c) => c.id === id);
    if (!row) { main.append(el("p", { class: "empty", text: "No case " + id + " in this run." })); return; }
    const detail = own(DATA.details, id) || { reason: "", fixes: [], failures: [] };
    main.append(
      el("p", {}, link("cases", "‹ all cases")),
      el("h2", { id: "case-title" }, id + " ", badge(row.status), COMPARED && row.change && row.change !== "same" ? [" ", badge(row.change)] : null),
      el("p", { class: "muted", text: row.tokens + " tokens, " + fmt(row.seconds, 2) + " s" + (COMPARED ? "; in " + BASE + ": " + (row.before || "absent") : "") }),
      detailBody(detail));
    if (!detail.failures.length && !detail.reason && row.status !== "gone") main.append(el("p", { class: "muted", text: "Every check of this case passed." }));
    if (detail.before) {
      main.append(el("details", { class: "before" }, el("summary", { text: "how it failed in " + BASE + " (" + DATA.base.id + ")" }), detailBody(detail.before)));
    }
  }

  // ------------------------------------------------------------------ retrieval
  function retrievalView(main) {
    if (!DATA.retrieval.length) { main.append(el("p", { class: "empty", text: "No retrieval suite ran in this run." })); return; }
    for (const suite of DATA.retrieval) {
      main.append(el("h2", { text: "suite " + suite.suite }));
      const head = el("tr", {}, el("th", { text: "retriever" }), el("th", { text: "gate" }),
        suite.metrics.map((m) => el("th", { class: "num", text: m })), el("th", { class: "num", text: "index s" }),
        el("th", { class: "num", text: "query ms p50" }), COMPARED ? el("th", { class: "num", text: "queries worse" }) : null);
      const rows = suite.retrievers.map((r) => el("tr", { class: "clickable retriever-row", "data-retriever": r.name,
        onclick: () => { location.hash = hashOf("retrieval", suite.suite, r.name); } },
        el("td", {}, link(hashOf("retrieval", suite.suite, r.name), r.name)),
        el("td", {}, badge(r.gate), r.delta && r.delta.gate_before !== r.gate ? el("span", { class: "muted", text: " was " + r.delta.gate_before }) : null),
        suite.metrics.map((m) => {
          const value = own(r.metrics, m);
          const change = r.delta && own(r.delta.metrics, m);
          const best = value !== undefined && Math.abs(value - own(suite.best, m)) < 1e-12;
          return el("td", { class: "num", "data-metric": m },
            el("span", { class: "value" + (best ? " best" : ""), title: best ? "best of the suite" : null, text: fmt(value) }),
            change ? deltaSpan(value, change.before) : null,
            change && change.p !== null ? el("div", { class: "muted", text: "p = " + fmt(change.p, 3) }) : null);
        }),
        el("td", { class: "num", text: fmt(r.index_seconds, 2) }), el("td", { class: "num", text: fmt(r.query_ms_p50, 2) }),
        COMPARED ? el("td", { class: "num", text: r.delta ? String(r.delta.worse) : "new" }) : null));
      main.append(el("table", { class: "metrics", "data-suite": suite.suite }, el("thead", {}, head), el("tbody", {}, rows)));
      for (const r of suite.retrievers) {
        for (const failure of r.gate_failures) main.append(el("div", { class: "note down", text: r.name + ": " + failure }));
      }
      main.append(el("div", { class: "charts", "data-suite": suite.suite }, recallChart(suite),
        suite.retrievers.map((r) => changeChart(suite, r))));
    }
  }

  const PALETTE = ["#0969da", "#cf222e", "#1a7f37", "#8250df", "#bf8700", "#e16f24", "#57606a", "#bf3989"];

  function svg(tag, attrs, ...children) {
    const node = document.createElementNS("http://www.w3.org/2000/svg", tag);
    for (const [key, value] of Object.entries(attrs || {})) {
      if (key === "text") node.textContent = value; else node.setAttribute(key, value);
    }
    for (const child of children.flat(Infinity)) if (child) node.append(child);
    return node;
  }

  // a line per series over points 0..n-1, values in [low, high]; each point's title is its hover text
  function lineChart(title, lines, count, low, high, pointTitle, pointLink, currentIndex) {
    const width = 460, height = 180, left = 38, right = 10, top = 10, bottom = 22;
    const x = (i) => left + (count > 1 ? i * (width - left - right) / (count - 1) : (width - left - right) / 2);
    const y = (v) => top + (high === low ? 0.5 : (high - v) / (high - low)) * (height - top - bottom);
    const grid = [low, (low + high) / 2, high].map((v) => [
      svg("line", { class: "axis", x1: left, x2: width - right, y1: y(v), y2: y(v) }),
      svg("text", { x: 2, y: y(v) + 3, text: fmt(v, 2) })]);
    const drawn = lines.map((line, n) => {
      const colour = PALETTE[n % PALETTE.length];
      const known = line.values.map((v, i) => [i, v]).filter(([, v]) => v !== null && v !== undefined);
      return [
        svg("polyline", { fill: "none", stroke: colour, "stroke-width": 2, points: known.map(([i, v]) => x(i) + "," + y(v)).join(" ") }),
        known.map(([i, v]) => {
          const dot = svg("circle", { cx: x(i), cy: y(v), r: 4, fill: colour, class: i === currentIndex ? "current" : "" },
            svg("title", { text: pointTitle(line, i, v) }));
          const href = pointLink ? pointLink(i) : null;
          return href ? svg("a", { href: href, class: "run-link" }, dot) : dot;
        })];
    });
    return el("div", { class: "chart" }, el("div", { class: "label", text: title }),
      svg("svg", { width: width, height: height, viewBox: "0 0 " + width + " " + height, role: "img", "aria-label": title }, grid, drawn),
      lines.length > 1 ? el("div", { class: "legend" }, lines.map((line, n) =>
        el("span", {}, el("i", { style: "background:" + PALETTE[n % PALETTE.length] }), line.name))) : null);
  }

  function recallChart(suite) {
    const curves = suite.retrievers.filter((r) => r.recall_curve.length);
    if (!curves.length) return null;
    const depth = Math.max(...curves.map((r) => r.recall_curve.length));
    return lineChart("recall@k, k = 1.." + depth, curves.map((r) => ({ name: r.name, values: r.recall_curve })),
      depth, 0, 1, (line, i, v) => line.name + ": recall@" + (i + 1) + " = " + fmt(v), null, -1);
  }

  // one tooltip for the page: a chart's bar shows its query here while the pointer is on it
  const tip = el("div", { class: "tip", id: "tip", role: "tooltip" });
  function showTip(event, ...lines) {
    tip.replaceChildren(...lines);
    tip.classList.add("shown");
    const room = window.innerWidth - tip.offsetWidth - 8;
    tip.style.left = Math.max(4, Math.min(event.clientX + 14, room)) + "px";
    tip.style.top = (event.clientY + 14) + "px";
  }
  function hideTip() { tip.classList.remove("shown"); }

  // each judged query's change in the primary metric since the run compared with, worst first: a bar per query, down
  // for worse, up for better; hovering shows the query, clicking opens it. A full-height hit area
  // per query keeps a bar of a tiny change (or of 300 queries in 412 pixels) easy to point at
  function changeChart(suite, r) {
    if (!COMPARED || !r.delta) return null;
    const primary = suite.metrics[0];
    const changes = Object.entries(r.queries).filter(([, q]) => q.before !== undefined && own(q.metrics, primary) !== undefined)
      .map(([id, q]) => ({ id: id, now: own(q.metrics, primary), before: q.before, delta: own(q.metrics, primary) - q.before }))
      .sort((a, b) => a.delta - b.delta || (a.id < b.id ? -1 : 1));
    if (!changes.some((c) => Math.abs(c.delta) > 1e-12)) return null;  // nothing moved: the table's 0 says it
    const width = 460, height = 180, left = 38, right = 10, top = 10, bottom = 12;
    const reach = Math.max(0.05, ...changes.map((c) => Math.abs(c.delta)));
    const y = (v) => top + (reach - v) / (2 * reach) * (height - top - bottom);
    const step = (width - left - right) / changes.length;
    const grid = [-reach, 0, reach].map((v) => [
      svg("line", { class: "axis", x1: left, x2: width - right, y1: y(v), y2: y(v) }),
      svg("text", { x: 2, y: y(v) + 3, text: (v > 0 ? "+" : "") + fmt(v, 2) })]);
    const bars = changes.map((c, n) => {
      const kind = c.delta < -1e-12 ? "worse" : c.delta > 1e-12 ? "better" : "same";
      const x = left + n * step;
      const text = (own(suite.queries, c.id) || {}).text || "(no text recorded)";
      const bar = svg("g", { class: "qbar " + kind, "data-query": c.id, tabindex: "0",
        "aria-label": c.id + ": " + text + ", " + primary + " " + fmt(c.before) + " to " + fmt(c.now) },
        svg("rect", { class: "hit", x: x, y: top, width: Math.max(step, 1), height: height - top - bottom }),
        svg("rect", { class: "value", x: x + (step > 3 ? step * 0.1 : 0), width: Math.max(step > 3 ? step * 0.8 : step, 1),
          y: Math.min(y(c.delta), y(0)), height: Math.max(Math.abs(y(c.delta) - y(0)), kind === "same" ? 1 : 2) }));
      const show = (event) => showTip(event, el("strong", { text: "query " + c.id }), el("div", { class: "tip-text", text: text }),
        el("div", { class: "mono", text: primary + " " + fmt(c.before) + " → " + fmt(c.now) + " (" + signed(c.delta) + ")" }));
      bar.addEventListener("mouseenter", show);
      bar.addEventListener("mousemove", show);
      bar.addEventListener("mouseleave", hideTip);
      bar.addEventListener("click", () => { hideTip(); location.hash = hashOf("query", suite.suite, r.name, c.id); });
      return bar;
    });
    const worse = changes.filter((c) => c.delta < -1e-12).length, better = changes.filter((c) => c.delta > 1e-12).length;
    const title = r.name + ": " + primary + " per query since " + BASE + " (" + worse + " worse, " + better + " better)";
    return el("div", { class: "chart change-chart", "data-retriever": r.name }, el("div", { class: "label", text: title }),
      svg("svg", { width: width, height: height, viewBox: "0 0 " + width + " " + height, role: "img", "aria-label": title }, grid, bars));
  }

  function retrieverView(main, suiteName, name) {
    const suite = DATA.retrieval.find((s) => s.suite === suiteName);
    const r = suite && suite.retrievers.find((x) => x.name === name);
    if (!r) { main.append(el("p", { class: "empty", text: "No retriever " + suiteName + "/" + name + " in this run." })); return; }
    const key = suiteName + "/" + name;
    const primary = suite.metrics[0];
    if (!state.queries.has(key)) state.queries.set(key, { search: "", page: 0, sort: COMPARED && r.delta ? "delta" : primary, dir: 1 });
    const view = state.queries.get(key);
    main.append(el("p", {}, link("retrieval", "‹ all suites")),
      el("h2", { id: "retriever-title", text: key }),
      el("p", { class: "muted", text: COMPARED && r.delta ? "queries sorted by their change in " + primary + " since " + BASE + ", worst first; " + r.delta.worse + " got worse"
        : "queries sorted by " + primary + ", lowest first" }));
    const rows = Object.entries(r.queries).map(([id, q]) => ({
      id: id, text: (own(suite.queries, id) || {}).text || "", metrics: q.metrics,
      before: q.before === undefined ? null : q.before,
      delta: q.before === undefined || own(q.metrics, primary) === undefined ? null : own(q.metrics, primary) - q.before,
    }));
    const holder = el("div", { id: "queries-table" });
    main.append(el("div", { class: "toolbar" }, el("input", { type: "search", placeholder: "search query ids and texts",
      value: view.search, "aria-label": "search queries",
      oninput: (event) => { view.search = event.target.value; view.page = 0; draw(); } })), holder);
    const columns = [{ label: "query", key: "id" }, { label: "text", key: "text" },
      ...suite.metrics.map((m) => ({ label: m, key: m, num: true })),
      ...(COMPARED && r.delta ? [{ label: primary + " in " + BASE, key: "before", num: true }, { label: "change", key: "delta", num: true }] : [])];
    function draw() {
      const words = view.search.toLowerCase().split(/\s+/).filter(Boolean);
      let shownRows = rows.filter((q) => words.every((w) => q.id.toLowerCase().includes(w) || q.text.toLowerCase().includes(w)));
      const metric = suite.metrics.includes(view.sort);
      shownRows = sortRows(shownRows, metric ? (q) => own(q.metrics, view.sort) : view.sort, view.dir);
      const page = shownRows.slice(view.page * PAGE_SIZE, (view.page + 1) * PAGE_SIZE);
      const body = el("tbody", {}, page.map((q) => el("tr", { class: "clickable query-row", "data-query": q.id,
        onclick: () => { location.hash = hashOf("query", suiteName, name, q.id); } },
        el("td", {}, link(hashOf("query", suiteName, name, q.id), q.id)), el("td", { text: q.text }),
        suite.metrics.map((m) => el("td", { class: "num", text: fmt(own(q.metrics, m)) })),
        COMPARED && r.delta ? [el("td", { class: "num", text: fmt(q.before) }),
          el("td", { class: "num " + (q.delta < 0 ? "down" : q.delta > 0 ? "up" : "muted"), text: q.delta === null ? "–" : signed(q.delta) })] : null)));
      holder.replaceChildren(el("table", { id: "queries" }, el("thead", {}, headerRow(columns, view, draw)), body),
        pager(view, shownRows.length, draw));
    }
    draw();
  }

  function queryView(main, suiteName, name, id) {
    const suite = DATA.retrieval.find((s) => s.suite === suiteName);
    const r = suite && suite.retrievers.find((x) => x.name === name);
    const q = r && own(r.queries, id);
    if (!q) { main.append(el("p", { class: "empty", text: "No query " + id + " for " + suiteName + "/" + name + "." })); return; }
    const info = own(suite.queries, id) || { text: "", judged: {} };
    const primary = suite.metrics[0];
    main.append(el("p", {}, link(hashOf("retrieval", suiteName, name), "‹ " + suiteName + "/" + name)),
      el("h2", { id: "query-title", text: "query " + id }),
      el("blockquote", { class: "query-text", text: info.text || "(no text recorded)" }),
      el("p", {}, suite.metrics.map((m) => el("span", { class: "mono" }, m + " " + fmt(own(q.metrics, m)) + "  ")),
        q.before !== undefined ? el("span", { class: "mono" }, "(" + primary + " in " + BASE + " " + fmt(q.before) + ")") : null));
    const judged = Object.entries(info.judged);
    main.append(el("h3", { text: "judged documents (" + judged.length + ")" }),
      el("table", { class: "judged" }, el("thead", {}, el("tr", {}, el("th", { text: "document" }), el("th", { class: "num", text: "grade" }), el("th", { text: "returned at" }))),
        el("tbody", {}, judged.map(([doc, grade]) => {
          const rank = q.top.indexOf(doc);
          return el("tr", {}, el("td", { class: "mono", text: doc }), el("td", { class: "num", text: String(grade) }),
            el("td", { class: rank >= 0 ? "up" : "muted", text: rank >= 0 ? "#" + (rank + 1) : "not in the top " + q.top.length }));
        }))));
    main.append(el("h3", { text: "top " + q.top.length + " returned" }),
      el("ol", { class: "ranking" }, q.top.map((doc) => {
        const grade = own(info.judged, doc);
        const hit = grade !== undefined && grade > 0;
        return el("li", { class: hit ? "hit" : "miss" }, el("span", { class: "mono", text: doc }),
          hit ? " ✓ relevant (grade " + grade + ")" : grade === 0 ? " judged not relevant" : " not judged");
      })));
  }

  // ------------------------------------------------------------------ history
  function historyView(main) {
    const h = DATA.history;
    const points = h.points;
    const current = points.findIndex((p) => p.current);
    // a point opens its run's report (rag-core view serves them; rag-core report --history-pages writes them)
    const linked = points.some((p) => p.page);
    // only full replays measure one pass rate over time (runs/history.py): the others are listed, not drawn
    const replays = points.filter((p) => p.comparable).length;
    main.append(el("p", { class: "muted", id: "history-about", text: points.length + " run(s): the charts go from the oldest " +
      "on the left to the newest on the right, the table lists the newest first. The pass rate is drawn for full replays " +
      "only (" + replays + " of " + points.length + "): a recording, a live run, an --update-goldens run, a run of a " +
      "selection (--case, -k, a test's id) or one cut short counts other cases. Hover a point for its run" +
      (linked ? ", click it to open that run's report." : points.length > 1 ? " (rag-core report --history-pages links each to its run's report)." : ".") }));
    const titleOf = (line, i, v) => points[i].id + (points[i].commit ? " @ " + points[i].commit.slice(0, 10) : "") + ": " + line.name + " = " + fmt(v, 3);
    const pageOf = (i) => points[i].page;
    const passRates = points.map((p) => (p.comparable ? p.pass_rate : null));
    const charts = [lineChart("pass rate (full replays)", [{ name: "pass rate", values: passRates }], points.length, 0, 1, titleOf, pageOf, current)];
    for (const name of h.series) {
      const values = points.map((p) => (own(p.metrics, name) === undefined ? null : own(p.metrics, name)));
      const known = values.filter((v) => v !== null);
      const low = Math.max(0, Math.min(...known) - 0.05), high = Math.min(1, Math.max(...known) + 0.05);
      charts.push(lineChart(name, [{ name: name, values: values }], points.length, low, high, titleOf, pageOf, current));
    }
    main.append(el("div", { class: "charts", id: "history-charts" }, charts));
    main.append(el("table", { id: "history" }, el("thead", {}, el("tr", {}, el("th", { text: "run" }), el("th", { text: "started" }),
      el("th", { text: "commit" }), el("th", { text: "kind" }), el("th", { class: "num", text: "cases" }), el("th", { class: "num", text: "failed" }),
      el("th", { class: "num", text: "pass rate" }), h.series.map((s) => el("th", { class: "num", text: s })))),
    el("tbody", {}, points.slice().reverse().map((p) => el("tr", { class: p.current ? "current" : "" },
      el("td", { class: "mono" }, p.page ? el("a", { href: p.page, class: "run-link", text: p.id }) : p.id,
        p.current ? el("span", { class: "muted", text: " (this run)" }) : null),
      el("td", { text: p.started }), el("td", { class: "mono", text: p.commit ? p.commit.slice(0, 10) + (p.dirty ? " (dirty)" : "") : "–" }),
      el("td", { class: "kind" + (p.comparable ? "" : " muted"), text: p.kind_words }),
      el("td", { class: "num", text: String(p.cases) }), el("td", { class: "num", text: String(p.failed) }),
      el("td", { class: "num" + (p.comparable ? "" : " muted"), title: p.comparable ? null : "not drawn: not a full replay",
        text: p.pass_rate === null ? "–" : Math.round(p.pass_rate * 1000) / 10 + "%" }),
      h.series.map((s) => el("td", { class: "num", text: fmt(own(p.metrics, s)) })))))));
  }

  // ------------------------------------------------------------------ routing
  function route() {
    const parts = location.hash.replace(/^#/, "").split("/").map(decodeURIComponent);
    const main = document.getElementById("view");
    main.replaceChildren();
    hideTip();
    const tab = parts[0] === "case" || parts[0] === "" ? "cases" : parts[0] === "query" ? "retrieval" : parts[0];
    for (const name of ["cases", "retrieval", "history"]) {
      document.getElementById("tab-" + name).classList.toggle("active", name === tab);
    }
    if (parts[0] === "case") caseView(main, parts.slice(1).join("/"));
    else if (parts[0] === "retrieval" && parts.length >= 3) retrieverView(main, parts[1], parts.slice(2).join("/"));
    else if (parts[0] === "retrieval") retrievalView(main);
    else if (parts[0] === "query") queryView(main, parts[1], parts[2], parts.slice(3).join("/"));
    else if (parts[0] === "history") historyView(main);
    else casesView(main);
    window.scrollTo(0, 0);
  }

  header();
  summary();
  // a project without retrieval suites has no Retrieval view to offer
  if (!DATA.retrieval.length) document.getElementById("tab-retrieval").hidden = true;
  document.body.append(tip);
  window.addEventListener("hashchange", route);
  route();
})();
