/* Sorting and filtering for the campaign's tables: the summary (and any table inside an element
   of class "improvements-sortable"). A plain script, no module, no request, no library: the site
   works the same from a web server and from file://. Without it the table is still all there, in
   the analysis' ranked order. */
(function () {
  "use strict";

  var DATE = /^\d{4}-\d{2}-\d{2}/;
  var NUMBER = /[+\u2212-]?\d+(?:\.\d+)?/;

  // What a cell sorts by: an ISO date as text, else its first number, else its words.
  function sortKey(cell) {
    var text = (cell ? cell.textContent : "").trim();
    if (DATE.test(text)) return { kind: 1, text: text };
    var m = text.match(NUMBER);
    if (m) return { kind: 0, num: parseFloat(m[0].replace("\u2212", "-")), text: text };
    return { kind: 2, text: text.toLowerCase() };
  }

  function compare(a, b) {
    if (a.kind !== b.kind) return a.kind - b.kind;
    if (a.kind === 0 && a.num !== b.num) return a.num - b.num;
    return a.text < b.text ? -1 : a.text > b.text ? 1 : 0;
  }

  function setup(box) {
    var table = box.querySelector("table");
    if (!table || !table.tHead || !table.tBodies.length || table.getAttribute("data-ready")) return;
    table.setAttribute("data-ready", "1");
    var body = table.tBodies[0];
    var rows = Array.prototype.slice.call(body.rows);
    var heads = Array.prototype.slice.call(table.tHead.rows[0].cells);
    var state = { col: -1, dir: 0 };
    var names = heads.map(function (th) { return th.textContent.trim().toLowerCase(); });
    var tierCol = names.indexOf("tier");
    // Only the first sortable table of a page keeps its state in the address: one ?sort= and ?q=.
    var linked = !document.querySelector("[data-improvements-linked]");
    if (linked) table.setAttribute("data-improvements-linked", "1");

    // The state in the address (?sort=date:desc&q=tier+1), so a sorted, filtered view can be linked.
    function remember() {
      if (!linked || !window.history || !window.history.replaceState) return;
      var params = new URLSearchParams(window.location.search);
      if (state.dir) params.set("sort", names[state.col] + ":" + (state.dir === 1 ? "asc" : "desc"));
      else params.delete("sort");
      if (input.value.trim()) params.set("q", input.value.trim());
      else params.delete("q");
      var query = params.toString();
      try {
        window.history.replaceState(window.history.state, "", window.location.pathname + (query ? "?" + query : "") + window.location.hash);
      } catch (e) { /* file:// in some browsers: the view works, the address does not follow */ }
    }

    function sortBy(col, dir) {
      state = { col: col, dir: dir };
      heads.forEach(function (h) { h.setAttribute("aria-sort", "none"); });
      if (dir) heads[col].setAttribute("aria-sort", dir === 1 ? "ascending" : "descending");
      var order = rows.map(function (row, rank) { return { row: row, rank: rank, key: sortKey(row.cells[col]) }; });
      order.sort(function (a, b) { return (dir ? compare(a.key, b.key) * dir : 0) || a.rank - b.rank; });
      order.forEach(function (o) { body.appendChild(o.row); });
    }

    heads.forEach(function (th, col) {
      var button = document.createElement("button");
      button.type = "button";
      button.className = "improvements-sort";
      button.title = "Sort by this column (again: reverse; a third time: the ranked order)";
      while (th.firstChild) button.appendChild(th.firstChild);
      th.appendChild(button);
      th.setAttribute("aria-sort", "none");
      button.addEventListener("click", function () {
        sortBy(col, state.col === col ? (state.dir === 1 ? -1 : state.dir === -1 ? 0 : 1) : 1);
        remember();
      });
    });

    var bar = document.createElement("div");
    bar.className = "improvements-filter";
    var input = document.createElement("input");
    input.type = "search";
    input.placeholder = "Filter: a status, a tier (tier 1), a decision, a word of a title";
    input.setAttribute("aria-label", "Filter the rows of the table");
    var count = document.createElement("span");
    count.className = "improvements-count";
    count.setAttribute("aria-live", "polite");
    function filter() {
      var query = input.value.toLowerCase();
      // "tier 1" (or "tier:1") asks for the Tier column's number, not for any "1" in the row.
      var tiers = [];
      query = query.replace(/\btier\s*:?\s*(\d+)\b/g, function (_m, n) { tiers.push(n); return " "; });
      var words = query.split(/\s+/).filter(Boolean);
      var shown = 0;
      rows.forEach(function (row) {
        var text = row.textContent.toLowerCase();
        var tier = tierCol >= 0 && row.cells[tierCol] ? (row.cells[tierCol].textContent.match(/\d+/) || [""])[0] : "";
        var hit = words.every(function (w) { return text.indexOf(w) >= 0; }) &&
          tiers.every(function (n) { return tier === n; });
        row.hidden = !hit;
        if (hit) shown += 1;
      });
      count.textContent = shown + " of " + rows.length + " rows";
    }
    input.addEventListener("input", function () { filter(); remember(); });
    bar.appendChild(input);
    bar.appendChild(count);
    box.insertBefore(bar, box.firstChild);

    if (linked) {
      var params = new URLSearchParams(window.location.search);
      var sort = (params.get("sort") || "").split(":");
      var col = names.indexOf(sort[0]);
      if (col >= 0 && (sort[1] === "asc" || sort[1] === "desc")) sortBy(col, sort[1] === "asc" ? 1 : -1);
      if (params.get("q")) input.value = params.get("q");
    }
    filter();
  }

  // A table or chart wider than its box scrolls sideways: a line above it says so, since a
  // phone shows no scroll bar until the reader happens to swipe.
  function cues() {
    var boxes = document.querySelectorAll(".md-typeset .md-typeset__scrollwrap, .md-typeset a.improvements-chart");
    Array.prototype.forEach.call(boxes, function (box) {
      var scroller = box.classList.contains("md-typeset__scrollwrap") ? box.querySelector(".md-typeset__table") || box : box;
      var wide = scroller.scrollWidth > scroller.clientWidth + 1 || box.scrollWidth > box.clientWidth + 1;
      var cue = box.previousElementSibling;
      var has = cue && cue.classList.contains("improvements-scroll-cue");
      box.classList.toggle("improvements-scrolls", wide);
      if (wide && !has) {
        cue = document.createElement("span");
        cue.className = "improvements-scroll-cue";
        cue.textContent = box.tagName === "A" ? "\u2194 The chart scrolls sideways" : "\u2194 The table scrolls sideways";
        box.parentNode.insertBefore(cue, box);
      } else if (!wide && has) {
        cue.parentNode.removeChild(cue);
      }
    });
  }

  // A tap on a chart's point (a phone shows no hover title) writes what its title says under
  // the chart, instead of opening the chart full size.
  function points() {
    var marks = document.querySelectorAll(".md-typeset a.improvements-chart g.point, .md-typeset a.improvements-chart g.capacity");
    Array.prototype.forEach.call(marks, function (g) {
      if (g.getAttribute("data-improvements-tap")) return;
      g.setAttribute("data-improvements-tap", "1");
      g.addEventListener("click", function (event) {
        event.preventDefault();
        var link = g.closest("a.improvements-chart");
        var note = link.nextElementSibling;
        if (!note || !note.classList.contains("improvements-point")) {
          note = document.createElement("p");
          note.className = "improvements-point";
          note.setAttribute("aria-live", "polite");
          link.parentNode.insertBefore(note, link.nextSibling);
        }
        note.textContent = g.querySelector("title").textContent;
      });
    });
  }

  // Below Material's layout break a chart's narrow variant (drawn for a phone's column, its
  // legend wrapped, its text the same size) takes the wide one's place, and the wide one goes
  // back into the template: one of the two is in the page, never both.
  var PHONE = window.matchMedia ? window.matchMedia("(max-width: 44.984375em)") : null;
  function variants() {
    var narrow = !!(PHONE && PHONE.matches);
    var links = document.querySelectorAll(".md-typeset a.improvements-chart");
    Array.prototype.forEach.call(links, function (link) {
      var template = link.querySelector("template.improvements-narrow");
      var shown = link.querySelector(":scope > svg");
      if (!template || !shown) return;
      var isNarrow = link.getAttribute("data-improvements-narrow") === "1";
      if (narrow === isNarrow) return;
      var other = template.content.firstElementChild;
      if (!other) return;
      template.content.appendChild(shown);
      link.insertBefore(other, template);
      link.setAttribute("data-improvements-narrow", narrow ? "1" : "0");
    });
  }

  function all() {
    var boxes = document.querySelectorAll(".improvements-summary, .improvements-sortable");
    Array.prototype.forEach.call(boxes, setup);
    variants();
    cues();
    points();
  }
  window.addEventListener("resize", cues);
  if (PHONE) {
    var swap = function () { variants(); cues(); points(); };
    if (PHONE.addEventListener) PHONE.addEventListener("change", swap);
    else if (PHONE.addListener) PHONE.addListener(swap);
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", all);
  else all();
  // Material's instant navigation swaps pages without a load; its document$ says when.
  if (window.document$ && window.document$.subscribe) window.document$.subscribe(all);
})();
