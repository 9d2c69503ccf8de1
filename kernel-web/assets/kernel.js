// kernel-web's only script: the chat's streaming answer (NDJSON from POST /api/chat), Stop,
// and answering a question with its buttons. Every text is inserted as text, never as HTML,
// except the final answer, which the server rendered and escaped.
"use strict";
(function () {
  const csrf = document.querySelector('meta[name="csrf"]').content;
  const form = document.getElementById("chat-form");
  if (!form) return;
  const log = document.getElementById("chat-log");
  const input = document.getElementById("chat-text");
  const stop = document.getElementById("chat-stop");
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
    if (!text.trim()) return;
    input.value = "";
    add("msg me", text);
    const answer = add("msg answer", "");
    answer.dataset.state = "streaming";
    const res = await post("/api/chat", { text });
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
      case "question": {
        const box = add("msg question", ev.text);
        const row = document.createElement("div");
        row.className = "buttons";
        ev.options.forEach((option, i) => {
          const b = document.createElement("button");
          b.type = "button";
          b.textContent = option;
          b.addEventListener("click", () => {
            post("/api/answer", { id: ev.id, option: i });
            row.remove();
          });
          row.appendChild(b);
        });
        box.appendChild(row);
        break;
      }
    }
  }
})();
