/* Course website: the drill's reveal (notebook 12) and figure enlargement. No network, no library. */
(function () {
  "use strict";

  /* ---- the drill: answer first, then the model answer ---------------------------------------- */
  function storageKey(i) { return "course-drill:" + location.pathname + ":" + i; }

  function load(i) {
    try { return JSON.parse(localStorage.getItem(storageKey(i)) || "null"); } catch (e) { return null; }
  }

  function save(i, value) {
    try { localStorage.setItem(storageKey(i), JSON.stringify(value)); } catch (e) { /* private mode: keep it in the page */ }
  }

  function el(tag, attrs, text) {
    var e = document.createElement(tag);
    Object.keys(attrs || {}).forEach(function (k) { e.setAttribute(k, attrs[k]); });
    if (text) { e.textContent = text; }
    return e;
  }

  function setUpDrill(details, i) {
    if (details.open) { return; } /* committed in JupyterLab before the notebook was saved: nothing to hide */
    var box = el("div", { "class": "course-commit" });
    var label = el("label", { "for": "course-commit-" + i }, "Your answer first (type it, or say it aloud within two minutes):");
    var area = el("textarea", { "id": "course-commit-" + i, "class": "course-commit-text",
                                "placeholder": "Your answer, with numbers" });
    var clock = el("button", { "type": "button", "class": "course-clock-start" }, "Start the 2-minute clock");
    var time = el("span", { "class": "course-clock", "aria-live": "polite" });
    var commit = el("button", { "type": "button", "class": "course-commit-button" }, "Commit my answer and reveal");
    var aloud = el("button", { "type": "button", "class": "course-aloud-button" }, "I answered aloud: reveal");
    var note = el("div", { "class": "course-commit-note" }, "The model answer stays folded until you commit.");
    box.appendChild(label);
    box.appendChild(area);
    box.appendChild(commit);
    box.appendChild(aloud);
    box.appendChild(clock);
    box.appendChild(time);
    box.appendChild(note);
    details.parentNode.insertBefore(box, details);
    details.classList.add("course-locked");
    var timer = null;

    function stopClock() { if (timer) { clearInterval(timer); timer = null; } }

    function reveal(record) {
      stopClock();
      save(i, record);
      details.classList.remove("course-locked");
      details.dataset.committed = "true";
      box.textContent = "";
      var when = new Date(record.at);
      box.appendChild(el("div", { "class": "course-commit-note" },
        (record.aloud ? "Answered aloud" : "Your answer, committed") + " at " + when.toLocaleTimeString() +
        (record.seconds != null ? " (" + record.seconds + " s on the clock)" : "") + ", before the reveal:"));
      if (!record.aloud) {
        var quote = el("blockquote", { "class": "course-committed-text" });
        quote.textContent = record.text;
        box.appendChild(quote);
      }
      details.open = true;
    }

    var started = null;
    clock.addEventListener("click", function () {
      started = Date.now();
      stopClock();
      var tick = function () {
        var left = 120 - Math.floor((Date.now() - started) / 1000);
        time.textContent = left > 0 ? Math.floor(left / 60) + ":" + ("0" + left % 60).slice(-2) : "time";
        if (left <= 0) { stopClock(); }
      };
      tick();
      timer = setInterval(tick, 1000);
      area.focus();
    });
    function record(aloudFlag) {
      return { text: area.value.trim(), aloud: aloudFlag, at: Date.now(),
               seconds: started ? Math.round((Date.now() - started) / 1000) : null };
    }
    commit.addEventListener("click", function () {
      if (!area.value.trim()) { note.textContent = "Type your answer first (or use \u201cI answered aloud\u201d)."; area.focus(); return; }
      reveal(record(false));
    });
    aloud.addEventListener("click", function () { reveal(record(true)); });
    details.querySelector("summary").addEventListener("click", function (ev) {
      if (details.dataset.committed !== "true") {
        ev.preventDefault();
        note.textContent = "Answer first: commit your answer (or say it aloud), then the model answer opens.";
        area.focus();
      }
    });
    var before = load(i);
    if (before) { reveal(before); }
  }

  /* ---- figures: a click shows one full size --------------------------------------------------- */
  function zoom(img) {
    var overlay = el("div", { "class": "course-zoom", "role": "dialog", "aria-label": img.alt || "figure" });
    var big = el("img", { "src": img.currentSrc || img.src, "alt": img.alt || "" });
    overlay.appendChild(big);
    function close() { overlay.remove(); document.removeEventListener("keydown", onKey); }
    function onKey(ev) { if (ev.key === "Escape") { close(); } }
    overlay.addEventListener("click", close);
    document.addEventListener("keydown", onKey);
    document.body.appendChild(overlay);
  }

  function init() {
    document.querySelectorAll("details.course-answer").forEach(setUpDrill);
    document.querySelectorAll("div.cell_output img").forEach(function (img) {
      img.setAttribute("tabindex", "0");
      img.setAttribute("title", "Click to enlarge");
      img.addEventListener("click", function () { zoom(img); });
      img.addEventListener("keydown", function (ev) { if (ev.key === "Enter") { zoom(img); } });
    });
  }

  if (document.readyState === "loading") { document.addEventListener("DOMContentLoaded", init); } else { init(); }
}());
