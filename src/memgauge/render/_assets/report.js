/* memgauge report: draws the charts from the embedded data and makes tables sortable.
   No network, no storage; everything it needs is in this file. */
(function () {
  "use strict";
  var errorBox = document.getElementById("memgauge-error");
  function fail(message) {
    errorBox.hidden = false;
    errorBox.textContent = "This report could not be drawn completely: " + message;
    document.body.dataset.failed = "true";
  }
  window.addEventListener("error", function (e) { fail(e.message); });

  var UNITS = ["B", "KiB", "MiB", "GiB", "TiB"];
  function fmtBytes(n) {
    var sign = n < 0 ? "-" : "", v = Math.abs(n), i = 0;
    while (v >= 1024 && i < UNITS.length - 1) { v /= 1024; i++; }
    if (i === 0) return sign + Math.round(v) + " B";
    return sign + (v < 100 ? v.toFixed(1) : v.toFixed(0)) + " " + UNITS[i];
  }
  function fmtSeconds(s) {
    if (s === 0) return "0 s";
    if (s < 0) return "-" + fmtSeconds(-s);
    if (s < 1e-3) return (s * 1e6).toFixed(0) + " µs";
    if (s < 1) return (s * 1e3).toFixed(0) + " ms";
    if (s < 60) return s.toFixed(2) + " s";
    if (s < 3599.5) { var w = Math.round(s); return Math.floor(w / 60) + " min " + (w % 60) + " s"; }
    var m = Math.round(s / 60); return Math.floor(m / 60) + " h " + (m % 60) + " min";
  }
  var PALETTE = ["#7c3aed", "#2563eb", "#059669", "#d97706", "#dc2626", "#0891b2", "#9333ea", "#65a30d",
                 "#be185d", "#4b5563"];
  var SHADES = ["rgba(37,99,235,0.08)", "rgba(217,119,6,0.10)", "rgba(5,150,105,0.09)", "rgba(190,24,93,0.08)"];

  // charts over time share their x axis: same y-axis width, so their seconds line up
  function fixedWidth(scale) { scale.width = 84; }
  // ticks at round binary sizes (50 MiB, not 47.7 MiB)
  function byteStep(max) {
    var unit = 1, raw = max / 5;
    while (raw >= 1024 * unit && unit < Math.pow(1024, 4)) unit *= 1024;
    var steps = [1, 2, 5, 10, 20, 25, 50, 100, 200, 250, 500, 1000];
    for (var i = 0; i < steps.length; i++) if (steps[i] * unit >= raw) return steps[i] * unit;
    return 1024 * unit;
  }
  function byteAxis(title, max) {
    return { beginAtZero: true, title: { display: !!title, text: title }, afterFit: fixedWidth,
             ticks: { stepSize: max > 0 ? byteStep(max) : undefined, callback: function (v) { return fmtBytes(v); } } };
  }
  function timeAxis(max) {
    return { type: "linear", min: 0, max: max, title: { display: true, text: "seconds" },
             ticks: { callback: function (v) { return fmtSeconds(v); } } };
  }
  var common = {
    animation: false, responsive: true, maintainAspectRatio: false, parsing: false, normalized: true,
    interaction: { mode: "nearest", axis: "x", intersect: false },
    elements: { point: { radius: 0 }, line: { borderWidth: 1.5, tension: 0 } }
  };
  function merge(a, b) { var o = {}, k; for (k in a) o[k] = a[k]; for (k in b) o[k] = b[k]; return o; }

  // phases as shaded bands, with their names, behind the datasets
  var phaseBands = {
    id: "phaseBands",
    beforeDatasetsDraw: function (chart, args, opts) {
      var spans = opts.spans || [];
      if (!spans.length) return;
      var x = chart.scales.x, area = chart.chartArea, ctx = chart.ctx, colors = {}, next = 0;
      ctx.save();
      ctx.font = "11px system-ui, sans-serif";
      ctx.textBaseline = "top";
      spans.forEach(function (s) {
        if (!(s.name in colors)) colors[s.name] = SHADES[next++ % SHADES.length];
        var x0 = Math.max(area.left, x.getPixelForValue(s.start));
        var x1 = Math.min(area.right, x.getPixelForValue(s.end));
        if (x1 <= x0) return;
        ctx.fillStyle = colors[s.name];
        ctx.fillRect(x0, area.top, x1 - x0, area.bottom - area.top);
        if (x1 - x0 > ctx.measureText(s.name).width + 6) {
          ctx.fillStyle = "#5b6673";
          ctx.fillText(s.name, x0 + 3, area.top + 3);
        }
      });
      ctx.restore();
    }
  };

  function memoryChart(d, wall) {
    var el = document.getElementById("chart-memory");
    if (!el || !d.t.length) return;
    var datasets = d.series.map(function (s, i) {
      var pts = new Array(s.values.length);
      for (var j = 0; j < s.values.length; j++) pts[j] = { x: d.t[s.start + j], y: s.values[j] };
      var main = s.start === 0 && (s.label.indexOf("cgroup") === 0 || s.label.indexOf("sum of processes") === 0);
      return { label: s.label, data: pts, borderColor: PALETTE[i % PALETTE.length],
               backgroundColor: main ? "rgba(124,58,237,0.10)" : "transparent", fill: main && i === 0,
               borderWidth: main ? 2 : 1.2 };
    });
    var top = 0;
    d.series.forEach(function (s) { for (var j = 0; j < s.values.length; j++) if (s.values[j] > top) top = s.values[j]; });
    if (d.peak) {
      datasets.push({ label: "peak " + fmtBytes(d.peak.bytes) + " at " + fmtSeconds(d.peak.t), type: "scatter",
                      data: [{ x: d.peak.t, y: d.peak.bytes }], pointStyle: "triangle", pointRadius: 7,
                      borderColor: "#b91c1c", backgroundColor: "#b91c1c" });
    }
    new Chart(el, {
      type: "line",
      data: { datasets: datasets },
      options: merge(common, {
        scales: { x: timeAxis(Math.max(wall, d.t[d.t.length - 1] || 0)), y: byteAxis("resident", top) },
        plugins: {
          phaseBands: { spans: d.phases },
          legend: { position: "bottom", labels: { boxWidth: 12 } },
          tooltip: { callbacks: {
            title: function (items) { return items.length ? fmtSeconds(items[0].parsed.x) : ""; },
            label: function (item) { return item.dataset.label + ": " + fmtBytes(item.parsed.y); } } }
        }
      }),
      plugins: [phaseBands]
    });
  }

  function cpuChart(d, spans, wall) {
    var el = document.getElementById("chart-cpu");
    if (!el || !d.cores.length) return;
    var pts = d.cores.map(function (c, i) { return { x: d.t[i], y: c }; });
    new Chart(el, {
      type: "line",
      data: { datasets: [{ label: "CPU (cores busy, whole tree)", data: pts, borderColor: "#2563eb",
                           backgroundColor: "rgba(37,99,235,0.12)", fill: true, stepped: "after" }] },
      options: merge(common, {
        scales: { x: timeAxis(Math.max(wall, d.t[d.t.length - 1] || 0)),
                  y: { beginAtZero: true, title: { display: true, text: "cores" }, afterFit: fixedWidth } },
        plugins: { phaseBands: { spans: spans }, legend: { position: "bottom", labels: { boxWidth: 12 } },
                   tooltip: { callbacks: {
                     title: function (items) { return items.length ? fmtSeconds(items[0].parsed.x) : ""; },
                     label: function (item) { return item.parsed.y.toFixed(2) + " cores"; } } } }
      }),
      plugins: [phaseBands]
    });
  }

  function barChart(id, labels, datasets, valueFmt, horizontal) {
    var el = document.getElementById(id);
    if (!el || !labels.length) return;
    var top = 0;
    datasets.forEach(function (d) { d.data.forEach(function (v) { if (v > top) top = v; }); });
    var axis = valueFmt === fmtBytes ? byteAxis("", top)
             : { beginAtZero: true, ticks: { callback: function (v) { return valueFmt(v); } } };
    delete axis.afterFit;
    new Chart(el, {
      type: "bar",
      data: { labels: labels, datasets: datasets },
      options: {
        animation: false, responsive: true, maintainAspectRatio: false, indexAxis: horizontal ? "y" : "x",
        scales: horizontal ? { x: axis } : { y: axis },
        plugins: { legend: { display: datasets.length > 1, position: "bottom" },
                   tooltip: { callbacks: { label: function (item) {
                     return item.dataset.label + ": " + valueFmt(horizontal ? item.parsed.x : item.parsed.y);
                   } } } }
      }
    });
  }

  function profileCharts(data) {
    memoryChart(data.memory, data.wall);
    cpuChart(data.cpu, data.memory.phases, data.wall);
    var ph = data.phases;
    var wall = data.wall || 1;
    barChart("chart-phases", ph.labels,
             [{ label: "share of wall time", data: ph.seconds.map(function (s) { return s / wall; }),
                backgroundColor: "#7c3aed" }],
             function (v) { return (v * 100).toFixed(0) + "%"; }, true);
    barChart("chart-imports", data.imports.labels,
             [{ label: "own memory", data: data.imports.bytes, backgroundColor: "#2563eb" }], fmtBytes, true);
  }

  function comparisonCharts(data) {
    var names = data.names;
    function grouped(id, groups, fmt) {
      barChart(id, groups.labels, names.map(function (n, i) {
        return { label: n, data: groups.values.map(function (row) { return row[i]; }),
                 backgroundColor: PALETTE[i % PALETTE.length] };
      }), fmt, false);
    }
    if (data.peaks) grouped("chart-compare-peaks", data.peaks, fmtBytes);
    if (data.times) grouped("chart-compare-times", data.times, fmtSeconds);
    if (data.phasePeaks) grouped("chart-compare-phases", data.phasePeaks, fmtBytes);
    if (data.phaseTimes) grouped("chart-compare-phase-times", data.phaseTimes, fmtSeconds);
  }

  function sortable() {
    document.querySelectorAll("table.sortable").forEach(function (table) {
      table.querySelectorAll("th").forEach(function (th, col) {
        th.addEventListener("click", function () {
          var body = table.tBodies[0], rows = Array.prototype.slice.call(body.rows);
          var desc = !th.classList.contains("sorted-desc");
          var numeric = th.classList.contains("num");
          rows.sort(function (a, b) {
            var x = a.cells[col].dataset.v, y = b.cells[col].dataset.v;
            // cells without a value ("—") last either way; two of them are equal, or the sort
            // is left with an inconsistent comparator and may scramble the rest
            if (x === undefined || y === undefined) return (x === undefined) - (y === undefined);
            var c = numeric ? parseFloat(x) - parseFloat(y) : x.localeCompare(y);
            return desc ? -c : c;
          });
          table.querySelectorAll("th").forEach(function (h) { h.classList.remove("sorted-asc", "sorted-desc"); });
          th.classList.add(desc ? "sorted-desc" : "sorted-asc");
          rows.forEach(function (r) { body.appendChild(r); });
        });
      });
    });
  }

  try {
    if (typeof Chart === "undefined") throw new Error("the charting library did not load");
    var data = JSON.parse(document.getElementById("memgauge-data").textContent);
    if (data.kind === "comparison") comparisonCharts(data); else profileCharts(data);
    sortable();
    document.body.dataset.rendered = "true";
    window.memgaugeRenderMs = performance.now();
  } catch (e) {
    fail(e && e.message ? e.message : String(e));
  }
})();
