// cairn's page works without this file. It adds: search as you type,
// `/` to focus the search box, `j`/`k` to move between hits (Enter opens the
// current one), and the citation copy buttons.
"use strict";

(function () {
  const input = document.getElementById("q");
  const results = document.getElementById("results");
  const form = input ? input.form : null;

  // Search as you type: the same page, results section only, after a pause.
  let timer = null;
  let asked = 0;
  if (input && results && form) {
    input.addEventListener("input", () => {
      clearTimeout(timer);
      timer = setTimeout(async () => {
        const params = new URLSearchParams(new FormData(form));
        if (!params.get("q").trim()) return;
        const mine = ++asked;
        history.replaceState(null, "", "/?" + params.toString());
        params.set("partial", "1");
        const res = await fetch("/?" + params.toString(), { headers: { Accept: "text/html" } });
        if (mine === asked && res.ok) {
          results.innerHTML = await res.text();
          current = -1;
        }
      }, 300);
    });
  }

  // Keyboard: `/` focuses search; j/k move between hits; Enter opens.
  let current = -1;
  function hits() { return Array.from(document.querySelectorAll(".hit")); }
  function move(step) {
    const all = hits();
    if (!all.length) return;
    current = Math.max(0, Math.min(all.length - 1, current + step));
    all.forEach((h, i) => h.classList.toggle("current", i === current));
    const link = all[current].querySelector(".hit-link");
    if (link) link.focus();
  }
  document.addEventListener("keydown", (e) => {
    const typing = e.target instanceof HTMLInputElement || e.target instanceof HTMLSelectElement;
    if (e.key === "/" && !typing && input) {
      e.preventDefault();
      input.focus();
      input.select();
    } else if (!typing && (e.key === "j" || e.key === "k")) {
      e.preventDefault();
      move(e.key === "j" ? 1 : -1);
    } else if (e.key === "Escape" && typing) {
      e.target.blur();
    }
  });

  // Copy buttons: the citation text is in data-copy.
  document.querySelectorAll("button.copy").forEach((b) => {
    b.addEventListener("click", async () => {
      const label = b.textContent;
      try {
        await navigator.clipboard.writeText(b.dataset.copy);
        b.textContent = "Copied";
      } catch (_) {
        b.textContent = "Copy failed: select the text below";
      }
      setTimeout(() => { b.textContent = label; }, 1500);
    });
  });
})();
