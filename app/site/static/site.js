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

  function makeFilter(box) {
    var table = document.getElementById(box.getAttribute("data-filter-for"));
    var input = box.querySelector("input");
    if (!table || !input) return;
    box.hidden = false;
    input.addEventListener("input", function () {
      var query = input.value.trim().toLowerCase();
      Array.prototype.forEach.call(table.tBodies, function (body) {
        Array.prototype.forEach.call(body.rows, function (row) {
          row.hidden = query !== "" && row.textContent.toLowerCase().indexOf(query) === -1;
        });
      });
    });
  }

  document.querySelectorAll("table.sortable").forEach(makeSortable);
  document.querySelectorAll("[data-filter-for]").forEach(makeFilter);
})();
