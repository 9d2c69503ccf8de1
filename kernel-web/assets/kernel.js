// kernel-web's only script: the chat's streaming answer (NDJSON from POST /api/chat), Stop,
// answering a question or an approval with its buttons, and attachments. Every text is inserted as text, never as HTML,
// except the final answer, which the server rendered and escaped.
"use strict";
(function () {
  const csrf = document.querySelector('meta[name="csrf"]').content;
  const form = document.getElementById("chat-form");
  if (!form) return;
  const log = document.getElementById("chat-log");
  const input = document.getElementById("chat-text");
  const stop = document.getElementById("chat-stop");
  const files = document.getElementById("chat-files");
  const post = (url, body) => fetch(url, {
    method: "POST",
    headers: { "x-csrf-token": csrf, "content-type": "application/json" },
    body: JSON.stringify(body || {}),
    credentials: "same-origin",
  });
  const add = (cls, text) => {
    const div = document.createElement("div");
    div.className = cls;
    div.textContent = text;
    log.appendChild(div);
    return div;
  };
  stop.addEventListener("click", () => { post("/api/stop"); });
  form.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    const text = input.value;
    const chosen = Array.from(files.files);
    if (!text.trim() && chosen.length === 0) return;
    input.value = "";
    add("msg me", [text].concat(chosen.map((f) => "📎 " + f.name)).filter(Boolean).join("\n"));
    const answer = add("msg answer", "");
    answer.dataset.state = "streaming";
    let res;
    if (chosen.length > 0) {
      const body = new FormData();
      body.append("text", text);
      chosen.forEach((f) => body.append("file", f, f.name));
      files.value = "";
      res = await fetch("/api/chat/upload", {
        method: "POST",
        headers: { "x-csrf-token": csrf },
        body,
        credentials: "same-origin",
      });
    } else {
      res = await post("/api/chat", { text });
    }
    if (!res.ok) {
      answer.textContent = await res.text();
      answer.dataset.state = "refused";
      return;
    }
    const reader = res.body.getReader();
    const dec = new TextDecoder();
    let buf = "";
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buf += dec.decode(value, { stream: true });
      let nl;
      while ((nl = buf.indexOf("\n")) >= 0) {
        const line = buf.slice(0, nl);
        buf = buf.slice(nl + 1);
        if (line) handle(JSON.parse(line), answer);
      }
    }
    if (answer.dataset.state === "streaming") answer.dataset.state = "ended";
  });
  function handle(ev, answer) {
    switch (ev.t) {
      case "delta": answer.textContent += ev.text; break;
      case "tool": add("tool", "⚙ " + ev.text); break;
      case "done": answer.innerHTML = ev.html; answer.dataset.state = "done"; break;
      case "end": answer.textContent = ev.text; answer.dataset.state = ev.state; break;
      case "question":
        buttons(add("msg question", ev.text), ev.id, ev.options.map((label, i) => [i, label]),
          (option) => post("/api/answer", { id: ev.id, option }));
        break;
      case "question_closed": closeButtons(ev.id, null); break;
      case "approval":
        buttons(add("msg approval", ev.text), ev.id, ev.options,
          (decision) => post("/api/approve", { id: ev.id, decision }));
        break;
      case "approval_closed": closeButtons(ev.id, ev.text); break;
    }
  }
  // A row of buttons under `box`, one per [value, label]; a press sends its value once.
  function buttons(box, id, options, send) {
    const row = document.createElement("div");
    row.className = "buttons";
    row.dataset.id = id;
    options.forEach(([value, label]) => {
      const b = document.createElement("button");
      b.type = "button";
      b.textContent = label;
      b.dataset.value = value;
      b.addEventListener("click", () => {
        send(value);
        row.querySelectorAll("button").forEach((other) => { other.disabled = true; });
      });
      row.appendChild(b);
    });
    box.appendChild(row);
  }
  // The buttons of `id` go; `outcome` (if any) is shown in their place.
  function closeButtons(id, outcome) {
    log.querySelectorAll(".buttons").forEach((row) => {
      if (row.dataset.id !== id) return;
      const box = row.parentNode;
      row.remove();
      if (outcome) {
        const done = document.createElement("div");
        done.className = "outcome";
        done.textContent = outcome;
        box.appendChild(done);
      }
    });
  }
})();
