// The import page (/imports/e1894): a chosen file is read into the textarea (the form posts
// the text), and the form shows its progress: the upload's bytes, then "replaying" until the
// server answers (htmx swaps the result in). No game logic here.
(function () {
  "use strict";
  function setup() {
    const form = document.getElementById("import-form");
    if (!form) return;
    const file = document.getElementById("import-file");
    const text = document.getElementById("import-text");
    const bar = document.getElementById("import-progress");
    const status = document.getElementById("import-status");
    file.addEventListener("change", () => {
      const chosen = file.files[0];
      if (!chosen) return;
      status.textContent = "reading " + chosen.name + "...";
      chosen.text().then((t) => {
        text.value = t;
        status.textContent = chosen.name + ": " + Math.round(t.length / 1024) + " KB, ready";
      });
    });
    form.addEventListener("htmx:beforeRequest", () => {
      bar.hidden = false; bar.removeAttribute("value");
      status.textContent = "uploading...";
    });
    form.addEventListener("htmx:xhr:progress", (ev) => {
      if (!ev.detail.lengthComputable) return;
      bar.max = ev.detail.total; bar.value = ev.detail.loaded;
      if (ev.detail.loaded >= ev.detail.total) {
        bar.removeAttribute("value");
        status.textContent = "replaying every action with our rules...";
      }
    });
    form.addEventListener("htmx:afterRequest", () => {
      bar.hidden = true;
      status.textContent = "";
    });
  }
  document.addEventListener("DOMContentLoaded", setup);
})();
