// cairn's page works without this file. It adds: search as you type,
// `/` to focus the search box, `j`/`k` to move between hits (Enter opens the
// current one), the citation copy buttons, and the ask page's answer
// streamed as the model works (its steps, its draft, then the checked answer).
"use strict";

(function () {
  const input = document.getElementById("q");
  const results = document.getElementById("results");
  const form = input ? input.form : null;
  const asking = form !== null && form.getAttribute("action") === "/answer";

  // Search as you type: the same page, results section only, after a pause.
  let timer = null;
  let asked = 0;
  if (input && results && form && !asking) {
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

  // The ask page: the same question asked for server-sent events. Steps and
  // the checked answer arrive as the server's HTML; the draft is plain text.
  if (asking && results && window.ReadableStream && window.TextDecoder) {
    form.addEventListener("submit", async (e) => {
      const q = new FormData(form).get("q");
      if (!q || !q.trim()) return;
      e.preventDefault();
      const url = "/answer?" + new URLSearchParams({ q }).toString();
      history.replaceState(null, "", url);
      results.innerHTML = '<p class="hint">Reading the index…</p><ol class="steps"></ol><p class="draft"></p>';
      const steps = results.querySelector(".steps");
      const draft = results.querySelector(".draft");
      let res;
      try {
        res = await fetch(url, { headers: { Accept: "text/event-stream" } });
      } catch (_) {
        window.location.assign(url);
        return;
      }
      // A refusal is shown as the server wrote it, not asked again.
      if (!res.ok || !(res.headers.get("content-type") || "").startsWith("text/event-stream")) {
        const page = new DOMParser().parseFromString(await res.text(), "text/html");
        const said = page.querySelector("main") || page.body;
        results.replaceChildren(...Array.from(said.childNodes).map((n) => document.importNode(n, true)));
        return;
      }
      const reader = res.body.getReader();
      const decoder = new TextDecoder();
      let buffered = "";
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buffered += decoder.decode(value, { stream: true });
        let end;
        while ((end = buffered.indexOf("\n\n")) >= 0) {
          const block = buffered.slice(0, end);
          buffered = buffered.slice(end + 2);
          let name = "message";
          const data = [];
          for (const line of block.split("\n")) {
            if (line.startsWith("event: ")) name = line.slice(7);
            else if (line.startsWith("data: ")) data.push(line.slice(6));
          }
          const text = data.join("\n");
          if (name === "step") {
            steps.insertAdjacentHTML("beforeend", text);
            draft.textContent = "";
          } else if (name === "draft") {
            draft.textContent += text;
          } else if (name === "answer" || name === "error") {
            results.innerHTML = text;
          }
        }
      }
    });
  }

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
