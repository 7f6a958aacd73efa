// Live updates of the console's Fax page: the fragment at data-live is
// fetched again (every second while a fax or an event is in flight, every
// five seconds otherwise) and swapped in when it changed. Same origin only.
(function () {
  "use strict";
  var live = document.getElementById("live");
  if (!live) {
    return;
  }
  var url = live.getAttribute("data-live");
  var last = live.innerHTML;
  function schedule() {
    var inflight = live.querySelector("[data-inflight='1']") !== null;
    window.setTimeout(poll, inflight ? 1000 : 5000);
  }
  function poll() {
    if (document.hidden) {
      schedule();
      return;
    }
    fetch(url, { credentials: "same-origin", headers: { "X-Console-Live": "1" } })
      .then(function (resp) {
        if (resp.status === 401) {
          window.location.assign("/console/login");
          return null;
        }
        return resp.ok ? resp.text() : null;
      })
      .then(function (html) {
        if (html !== null && html !== last) {
          // Keep the <details> a reader opened.
          var open = {};
          live.querySelectorAll("details[open]").forEach(function (d) {
            var row = d.closest("[id]");
            if (row) {
              open[row.id] = true;
            }
          });
          live.innerHTML = html;
          last = html;
          Object.keys(open).forEach(function (id) {
            var el = document.getElementById(id);
            if (el) {
              el.querySelectorAll("details").forEach(function (d) { d.open = true; });
            }
          });
        }
      })
      .catch(function () { /* the server restarting: try again later */ })
      .then(schedule);
  }
  schedule();
})();
