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
    if (data.torch) torchChart(data.torch);
    if (data.training) trainingCharts(data.training);
  }

  // training: each step's rate (warm-up and the FLOP-counted step greyed), and its wait for data
  // stacked under the rest of its time
  function trainingCharts(d) {
    var rate = document.getElementById("chart-training-rate");
    if (rate && d.labels.length) {
      new Chart(rate, {
        type: "line",
        data: { labels: d.labels, datasets: [{ label: "steps/s", data: d.rate, borderColor: PALETTE[0],
          pointBackgroundColor: d.warmup.map(function (w) { return w ? "#9ca3af" : PALETTE[0]; }) }] },
        options: { animation: false, responsive: true, maintainAspectRatio: false,
          scales: { x: { title: { display: true, text: "step" } },
                    y: { beginAtZero: true, title: { display: true, text: "steps/s" } } },
          plugins: { legend: { display: false } } }
      });
    }
    if (d.cpu && d.cpu.labels.length) {
      barChart("chart-training-cpu", d.cpu.labels,
               [{ label: "CPU share of its lifetime", data: d.cpu.share, backgroundColor: PALETTE[2] }],
               function (v) { return (v * 100).toFixed(0) + "%"; }, true);
    }
    // CPU over time: each process of the loop (named by role) and the machine's cores busy
    var cpuTime = document.getElementById("chart-training-cpu-time");
    if (cpuTime && d.cpu_time && d.cpu_time.t.length) {
      var ct = d.cpu_time;
      var sets = ct.lines.map(function (line, i) {
        return { label: line.label, borderColor: PALETTE[i % PALETTE.length], stepped: "before",
                 data: line.cores.map(function (v, j) { return { x: ct.t[j], y: v }; }) };
      });
      if (ct.machine.length) {
        sets.push({ label: "machine (" + ct.cores + " cores, every program)", borderColor: "#9ca3af",
                    borderDash: [4, 3], stepped: "before",
                    data: ct.machine.map(function (v, j) { return { x: ct.t[j], y: v }; }) });
      }
      new Chart(cpuTime, {
        type: "line", data: { datasets: sets },
        options: merge(common, {
          scales: { x: timeAxis(ct.t[ct.t.length - 1]),
                    y: { beginAtZero: true, title: { display: true, text: "cores busy" } } },
          plugins: { legend: { position: "bottom", labels: { boxWidth: 12 } },
                     tooltip: { callbacks: {
                       title: function (items) { return items.length ? fmtSeconds(items[0].parsed.x) : ""; },
                       label: function (item) { return item.dataset.label + ": " + item.parsed.y.toFixed(2) + " cores"; } } } }
        })
      });
    }
    var wait = document.getElementById("chart-training-wait");
    if (wait && d.labels.length) {
      new Chart(wait, {
        type: "bar",
        data: { labels: d.labels, datasets: [
          { label: "waiting for data", data: d.wait, backgroundColor: PALETTE[4] },
          { label: "the rest of the step", data: d.compute, backgroundColor: PALETTE[1] }] },
        options: { animation: false, responsive: true, maintainAspectRatio: false,
          scales: { x: { stacked: true, title: { display: true, text: "step" } },
                    y: { stacked: true, title: { display: true, text: "seconds" },
                         ticks: { callback: function (v) { return fmtSeconds(v); } } } },
          plugins: { legend: { position: "bottom" }, tooltip: { mode: "index", intersect: false,
            callbacks: { label: function (item) { return item.dataset.label + ": " + fmtSeconds(item.parsed.y); } } } } }
      });
    }
  }

  // torch: each step's peak, stacked by role (the roles in the order a storage is counted under)
  function torchChart(d) {
    var el = document.getElementById("chart-torch-steps");
    if (!el || !d.labels.length) return;
    var top = 0;
    d.labels.forEach(function (_, j) {
      var sum = 0;
      d.values.forEach(function (row) { sum += row[j]; });
      if (sum > top) top = sum;
    });
    var datasets = d.roles.map(function (role, i) {
      return { label: role, data: d.values[i], backgroundColor: PALETTE[i % PALETTE.length] };
    });
    var y = byteAxis("peak of the step", top);
    y.stacked = true;
    new Chart(el, {
      type: "bar",
      data: { labels: d.labels, datasets: datasets },
      options: {
        animation: false, responsive: true, maintainAspectRatio: false,
        scales: { x: { stacked: true, title: { display: true, text: "step" } }, y: y },
        plugins: { legend: { position: "bottom" },
                   tooltip: { mode: "index", intersect: false, callbacks: {
                     title: function (items) { return items.length ? "step " + items[0].label : ""; },
                     label: function (item) { return item.dataset.label + ": " + fmtBytes(item.parsed.y); } } } }
      }
    });
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
    if (data.torchRoles) grouped("chart-compare-torch", data.torchRoles, fmtBytes);
  }

  // -- memgauge sweep: growth against size, phase shares, worker scaling --------------------------

  function fmtNumber(v) {
    var a = Math.abs(v);
    if (a >= 1e15 || (a > 0 && a < 1e-3)) return v.toExponential(2);
    return v.toLocaleString("en-US", { maximumSignificantDigits: 4 });
  }
  function unitFmt(unit) {
    if (unit === "bytes") return fmtBytes;
    if (unit === "seconds") return fmtSeconds;
    if (unit === "rate") return function (v) { return fmtNumber(v) + "/s"; };
    return fmtNumber;
  }
  // a log axis ticks every 1..9 of a decade: label only the 1, 2 and 5, or the labels overlap
  function logTicks(fmt) {
    return function (v) {
      if (!(v > 0)) return "";
      var m = v / Math.pow(10, Math.floor(Math.log10(v) + 1e-9));
      return (Math.abs(m - 1) < 1e-6 || Math.abs(m - 2) < 1e-6 || Math.abs(m - 5) < 1e-6) ? fmt(v) : "";
    };
  }
  // bytes on a log axis: ticks at powers of two (32 MiB, 64 MiB, ...), not at 95.4 MiB and 191 MiB
  function binaryTicks(axis) {
    if (!(axis.min > 0) || !(axis.max > axis.min)) return;
    var lo = Math.ceil(Math.log2(axis.min)), hi = Math.floor(Math.log2(axis.max));
    var step = Math.max(1, Math.ceil((hi - lo + 1) / 8)), ticks = [];
    for (var e = lo; e <= hi; e += step) ticks.push({ value: Math.pow(2, e) });
    if (ticks.length >= 2) axis.ticks = ticks;
  }
  function sweepAxis(log, fmt, title, top) {
    var axis = { type: log ? "logarithmic" : "linear", beginAtZero: !log, title: { display: true, text: title },
                 ticks: { callback: log && fmt !== fmtBytes ? logTicks(fmt) : function (v) { return fmt(v); } } };
    if (log && fmt === fmtBytes) axis.afterBuildTicks = binaryTicks;
    // round binary steps (64 MiB, not 47.7 MiB), as on the run report's memory axis
    if (!log && fmt === fmtBytes && top > 0) axis.ticks.stepSize = byteStep(top);
    return axis;
  }
  function xy(pairs) { return pairs.map(function (p) { return { x: p[0], y: p[1] }; }); }
  // a growth chart has four datasets per series: the legend names the series once (memgaugeKey)
  function legendFilter(item, data) {
    var d = data.datasets[item.datasetIndex];
    return d.memgaugeKey === undefined || d.memgaugeKey;
  }
  function sweepOptions(c, x, y, label) {
    return {
      animation: false, responsive: true, maintainAspectRatio: false,
      // room for a marker drawn at the axes' very end (the prediction usually is)
      layout: { padding: { top: 10, right: 14 } },
      scales: { x: x, y: y },
      plugins: { legend: { position: "bottom", labels: { boxWidth: 12, filter: legendFilter } },
                 tooltip: { callbacks: { label: label } } }
    };
  }

  function growthChart(c) {
    var el = document.getElementById(c.id);
    if (!el) return;
    var fmt = unitFmt(c.unit), datasets = [], top = 0;
    c.series.forEach(function (s) {
      s.runs.concat(s.fit).forEach(function (p) { if (p[1] > top) top = p[1]; });
      if (s.prediction) top = Math.max(top, s.prediction.high !== null ? s.prediction.high : s.prediction.value);
    });
    c.series.forEach(function (s, i) {
      var color = PALETTE[i % PALETTE.length];
      datasets.push({ label: s.label, data: xy(s.runs), borderColor: color, backgroundColor: color,
                      pointRadius: 3, memgaugeKey: true });
      if (s.fit.length) {
        datasets.push({ label: s.label + ": " + s.law, data: xy(s.fit), showLine: true, borderColor: color,
                        backgroundColor: color, pointRadius: 0, pointHitRadius: 0, borderWidth: 1.5,
                        memgaugeKey: false });
      }
      var p = s.prediction;
      if (!p) return;
      // an unsupported prediction stays visible, grey and dashed: it is not a figure to rely on
      var tone = p.supported ? color : "#9ca3af";
      datasets.push({ label: s.label + ": predicted" + (p.supported ? "" : " (not supported)"),
                      data: [{ x: p.x, y: p.value }], pointStyle: "rectRot", pointRadius: 7,
                      borderColor: tone, backgroundColor: tone, memgaugeText: p.text, memgaugeKey: false,
                      clip: false });
      if (p.low !== null && p.high !== null) {
        datasets.push({ label: s.label + ": 95% interval", data: [{ x: p.x, y: p.low }, { x: p.x, y: p.high }],
                        showLine: true, borderColor: tone, backgroundColor: tone, borderWidth: 2,
                        borderDash: p.supported ? [] : [4, 3], pointStyle: "line", pointRadius: 6,
                        memgaugeText: p.text, memgaugeKey: false, clip: false });
      }
    });
    new Chart(el, {
      type: "scatter",
      data: { datasets: datasets },
      options: sweepOptions(c, sweepAxis(c.logX, fmtNumber, c.param), sweepAxis(c.logY, fmt, c.yTitle, top),
        function (item) {
          var d = item.dataset;
          if (d.memgaugeText) return d.label + ": " + d.memgaugeText;
          return d.label + ": " + c.param + "=" + fmtNumber(item.parsed.x) + ", " + fmt(item.parsed.y);
        })
    });
  }

  function sharesChart(c) {
    var el = document.getElementById(c.id);
    if (!el) return;
    var datasets = c.phases.map(function (name, i) {
      return { label: name, data: c.values[i], backgroundColor: PALETTE[i % PALETTE.length] };
    });
    datasets.push({ label: "other", data: c.other, backgroundColor: "#d1d5db" });
    new Chart(el, {
      type: "bar",
      data: { labels: c.labels, datasets: datasets },
      options: sweepOptions(c,
        { stacked: true, title: { display: true, text: c.param } },
        { stacked: true, min: 0, max: 100, title: { display: true, text: "share of wall time" },
          ticks: { callback: function (v) { return v + "%"; } } },
        function (item) { return item.dataset.label + ": " + item.parsed.y.toFixed(1) + "%"; })
    });
  }

  function scalingChart(c) {
    var el = document.getElementById(c.id);
    if (!el || !c.workers.length) return;
    var w0 = c.workers[0];
    var datasets = [
      { label: "speedup (" + c.metric + " per second)", showLine: true, borderColor: PALETTE[0],
        backgroundColor: PALETTE[0], pointRadius: 4,
        data: c.workers.map(function (w, i) { return { x: w, y: c.speedup[i] }; }) },
      { label: "ideal", showLine: true, borderColor: "#9ca3af", backgroundColor: "#9ca3af", borderDash: [5, 4],
        pointRadius: 0, data: c.workers.map(function (w) { return { x: w, y: w / w0 }; }) }
    ];
    var k = c.knee === null ? -1 : c.workers.indexOf(c.knee);
    if (k >= 0) {
      datasets.push({ label: "knee: " + c.param + "=" + fmtNumber(c.knee), pointStyle: "triangle", pointRadius: 9,
                      borderColor: "#b91c1c", backgroundColor: "#b91c1c", data: [{ x: c.knee, y: c.speedup[k] }] });
    }
    new Chart(el, {
      type: "scatter",
      data: { datasets: datasets },
      options: sweepOptions(c, sweepAxis(c.logX, fmtNumber, c.param),
        { beginAtZero: true, title: { display: true, text: "speedup" } },
        function (item) {
          return item.dataset.label + ": " + c.param + "=" + fmtNumber(item.parsed.x) + ", " +
                 item.parsed.y.toFixed(2) + "x";
        })
    });
  }

  function sweepCharts(data) {
    data.charts.forEach(function (c) {
      if (c.kind === "growth") growthChart(c);
      else if (c.kind === "shares") sharesChart(c);
      else if (c.kind === "scaling") scalingChart(c);
    });
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
    if (data.kind === "comparison") comparisonCharts(data);
    else if (data.kind === "sweep") sweepCharts(data);
    else profileCharts(data);
    sortable();
    document.body.dataset.rendered = "true";
    window.memgaugeRenderMs = performance.now();
  } catch (e) {
    fail(e && e.message ? e.message : String(e));
  }
})();
