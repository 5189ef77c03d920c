// Sorting and filtering for the site's tables. The pages read fine without it: it only
// turns sortable headers into buttons and shows the filter boxes.
(function () {
  "use strict";

  function cellKey(row, index) {
    var cell = row.cells[index];
    if (!cell) return "";
    var key = cell.getAttribute("data-sort");
    return key !== null ? key : cell.textContent.trim();
  }

  function compare(a, b, numeric) {
    if (numeric) {
      var x = parseFloat(a), y = parseFloat(b);
      // Cells without a number (an unknown cost) sort after every number.
      if (isNaN(x) || isNaN(y)) return (isNaN(x) ? 1 : 0) - (isNaN(y) ? 1 : 0);
      return x - y;
    }
    return a.localeCompare(b, undefined, { numeric: true, sensitivity: "base" });
  }

  function sortBy(table, header, index) {
    var ascending = header.getAttribute("aria-sort") !== "ascending";
    var numeric = header.getAttribute("data-type") === "number";
    Array.prototype.forEach.call(table.tHead.rows[0].cells, function (cell) {
      cell.removeAttribute("aria-sort");
    });
    header.setAttribute("aria-sort", ascending ? "ascending" : "descending");
    Array.prototype.forEach.call(table.tBodies, function (body) {
      var rows = Array.prototype.slice.call(body.rows);
      rows.sort(function (r1, r2) {
        var order = compare(cellKey(r1, index), cellKey(r2, index), numeric);
        return ascending ? order : -order;
      });
      rows.forEach(function (row) { body.appendChild(row); });
    });
  }

  function makeSortable(table) {
    if (!table.tHead || !table.tHead.rows.length) return;
    Array.prototype.forEach.call(table.tHead.rows[0].cells, function (header, index) {
      var button = document.createElement("button");
      button.type = "button";
      button.className = "sort";
      while (header.firstChild) button.appendChild(header.firstChild);
      header.appendChild(button);
      button.addEventListener("click", function () { sortBy(table, header, index); });
    });
  }

  // Each filtered table's tests, by the table's id: a row shows when it passes every one
  // (the text typed in its filter box, the evidence level chosen in its select).
  var tests = {};

  function refilter(table) {
    var checks = tests[table.id] || [];
    var shown = 0;
    Array.prototype.forEach.call(table.tBodies, function (body) {
      Array.prototype.forEach.call(body.rows, function (row) {
        row.hidden = !checks.every(function (check) { return check(row); });
        if (!row.hidden) shown += 1;
      });
    });
    document.querySelectorAll('[data-empty-for="' + table.id + '"]').forEach(function (note) {
      note.hidden = shown > 0;
    });
  }

  function rowTest(control) {
    // A select names an attribute of the rows (`data-filter-by`): a row passes when that
    // attribute holds the chosen word. A search box matches the row's text.
    var by = control.getAttribute("data-filter-by");
    return function (row) {
      var wanted = control.value.trim().toLowerCase();
      if (wanted === "") return true;
      if (by) {
        var words = (row.getAttribute("data-" + by) || "").split(/\s+/);
        return words.indexOf(wanted) !== -1;
      }
      return row.textContent.toLowerCase().indexOf(wanted) !== -1;
    };
  }

  function makeFilter(box) {
    var table = document.getElementById(box.getAttribute("data-filter-for"));
    var control = box.querySelector("input, select");
    if (!table || !control) return;
    (tests[table.id] = tests[table.id] || []).push(rowTest(control));
    box.hidden = false;
    var event = control.tagName === "SELECT" ? "change" : "input";
    control.addEventListener(event, function () { refilter(table); });
    // A browser may bring back what was chosen before, going back to the page.
    refilter(table);
  }

  // runs/detail/?id=<run id>, the address the runs API's clients print, opens the run's
  // own page, runs/<id>.html (a run just pushed shows once the site is rebuilt).
  function forwardRun() {
    var id = new URLSearchParams(window.location.search).get("id");
    if (id === null) return;
    if (/^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/.test(id)) {
      window.location.replace("../" + id + ".html");
    } else {
      document.getElementById("run-detail-missing").hidden = false;
    }
  }

  var detail = document.getElementById("run-detail");
  if (detail) forwardRun();
  document.querySelectorAll("table.sortable").forEach(makeSortable);
  document.querySelectorAll("[data-filter-for]").forEach(makeFilter);
})();
