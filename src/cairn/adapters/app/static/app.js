// Progressive enhancement only: every page works without this file.
// "/" focuses the search box; "j"/"k" move between the memories of a list.
(function () {
  "use strict";
  function typing(el) {
    return el && (el.tagName === "INPUT" || el.tagName === "TEXTAREA" || el.tagName === "SELECT" || el.isContentEditable);
  }
  document.addEventListener("keydown", function (event) {
    if (event.ctrlKey || event.metaKey || event.altKey || typing(document.activeElement)) {
      return;
    }
    if (event.key === "/") {
      var search = document.getElementById("q");
      if (search) { event.preventDefault(); search.focus(); search.select(); }
      return;
    }
    if (event.key === "j" || event.key === "k") {
      var rows = Array.prototype.slice.call(document.querySelectorAll("ol.memories a.row"));
      if (!rows.length) { return; }
      var at = rows.indexOf(document.activeElement);
      var next = event.key === "j" ? Math.min(at + 1, rows.length - 1) : Math.max(at - 1, 0);
      rows[next].focus();
      event.preventDefault();
    }
  });
})();
