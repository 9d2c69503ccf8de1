// kernel-web's only script: the sessions sidebar (open on a wide screen), copy buttons on code
// blocks, and the chat of the session the page shows: the streaming answer (NDJSON from POST
// /api/chat), Enter to send
// (Shift+Enter a new line), Stop, answering a question or an approval with its buttons,
// attachments (chosen or pasted, shown before sending), and retry on Kernel's last answer or
// edit of the owner's last message (POST /api/retry, /api/edit; the page then reloads once
// GET /api/turn says the new answer is done). Every text is inserted as text, never
// as HTML, except the final answer, which the server rendered and escaped.
"use strict";
(function () {
  const csrfMeta = document.querySelector('meta[name="csrf"]');
  const csrf = csrfMeta ? csrfMeta.content : "";
  const sidebar = document.getElementById("sidebar");
  if (sidebar && window.matchMedia("(min-width: 50.01em)").matches) sidebar.open = true;
  const log = document.getElementById("chat-log");
  if (log) copyButtons(log);
  const form = document.getElementById("chat-form");
  if (log) window.scrollTo(0, document.body.scrollHeight);
  if (!form) return;
  const input = document.getElementById("chat-text");
  const stop = document.getElementById("chat-stop");
  const files = document.getElementById("chat-files");
  const chosen = document.getElementById("chat-chosen");
  // The files to send: chosen in the picker or pasted, until sent or removed.
  let attached = [];
  const post = (url, body) => fetch(url, {
    method: "POST",
    headers: { "x-csrf-token": csrf, "content-type": "application/json" },
    body: JSON.stringify(body || {}),
    credentials: "same-origin",
  });
  const add = (cls, text) => {
    const empty = document.getElementById("chat-empty");
    if (empty) empty.remove();
    const div = document.createElement("div");
    div.className = cls;
    div.textContent = text;
    log.appendChild(div);
    div.scrollIntoView({ block: "end" });
    return div;
  };
  function showChosen() {
    chosen.textContent = "";
    attached.forEach((f, i) => {
      const chip = document.createElement("span");
      chip.className = "file";
      chip.title = f.name;
      const name = document.createElement("span");
      name.className = "name";
      name.textContent = f.name;
      chip.appendChild(name);
      const remove = document.createElement("button");
      remove.type = "button";
      remove.textContent = "×";
      remove.title = chosen.dataset.remove;
      remove.addEventListener("click", () => { attached.splice(i, 1); showChosen(); });
      chip.appendChild(remove);
      chosen.appendChild(chip);
    });
  }
  files.addEventListener("change", () => {
    attached = attached.concat(Array.from(files.files));
    files.value = "";
    showChosen();
  });
  input.addEventListener("paste", (ev) => {
    const pasted = Array.from((ev.clipboardData && ev.clipboardData.files) || [])
      .filter((f) => f.type.startsWith("image/"));
    if (pasted.length === 0) return;
    ev.preventDefault();
    const stamp = new Date().toISOString().replace(/[-:]/g, "").slice(0, 15);
    pasted.forEach((f, i) => {
      const ext = (f.type.split("/")[1] || "png").replace(/[^a-z0-9]/g, "");
      attached.push(new File([f], f.name && f.name !== "image." + ext ? f.name : "pasted-" + stamp + (i ? "-" + i : "") + "." + ext, { type: f.type }));
    });
    showChosen();
  });
  input.addEventListener("keydown", (ev) => {
    if (ev.key === "Enter" && !ev.shiftKey && !ev.isComposing && ev.keyCode !== 229) {
      ev.preventDefault();
      form.requestSubmit();
    }
  });
  // The session this page shows: what it sends, stops and retries runs there (another tab on
  // another session streams beside it).
  const session = log.dataset.session ? Number(log.dataset.session) : null;
  stop.addEventListener("click", () => { post("/api/stop", { session }); });
  living();
  // "Retry" on Kernel's last answer and "edit" on the owner's last message (the turn ended).
  function living() {
    log.querySelectorAll(".living").forEach((row) => row.remove());
    const answers = log.querySelectorAll(".msg.kernel, .msg.answer");
    const mine = log.querySelectorAll(".msg.me");
    const answer = answers[answers.length - 1];
    const me = mine[mine.length - 1];
    if (answer && (!answer.dataset.state || answer.dataset.state === "done")) {
      livingRow(answer, [["retry", log.dataset.retry, () => again(answer, post("/api/retry", { session }))]]);
    }
    if (me && answer && me.compareDocumentPosition(answer) & Node.DOCUMENT_POSITION_FOLLOWING) {
      livingRow(me, [["edit", log.dataset.edit, () => editing(me, answer)]]);
    }
  }
  function livingRow(box, actions) {
    const row = document.createElement("div");
    row.className = "living";
    actions.forEach(([cls, label, act]) => {
      const b = document.createElement("button");
      b.type = "button";
      b.className = "secondary " + cls;
      b.textContent = label;
      b.addEventListener("click", act);
      row.appendChild(b);
    });
    box.appendChild(row);
  }
  // The owner's last message as a text box: saved, Kernel answers the edited text.
  function editing(me, answer) {
    const shown = me.querySelector(".text") || me;
    const box = document.createElement("div");
    box.className = "editing";
    const area = document.createElement("textarea");
    area.value = me.dataset.text || shown.textContent;
    box.appendChild(area);
    livingRow(box, [
      ["save", log.dataset.save, () => {
        const text = area.value;
        if (!text.trim()) return;
        again(answer, post("/api/edit", { session, text }));
      }],
      ["cancel", log.dataset.cancel, () => { box.remove(); living(); }],
    ]);
    log.querySelectorAll(".living").forEach((row) => row.remove());
    me.appendChild(box);
    area.focus();
  }
  // A retry or an edit was asked for: once agentd answered and the turn ended, the page shows
  // the conversation again with the new answer.
  async function again(answer, asked) {
    log.querySelectorAll(".living").forEach((row) => row.remove());
    const res = await asked;
    const note = add("tool", "");
    if (!res.ok) { note.textContent = await res.text(); living(); return; }
    const reply = await res.json();
    if (reply.busy) { note.textContent = reply.busy; living(); return; }
    note.textContent = "⟳ " + log.dataset.again;
    answer.classList.add("superseded");
    for (;;) {
      await new Promise((r) => setTimeout(r, 400));
      const turn = await fetch("/api/turn" + (session === null ? "" : "?session=" + session), { credentials: "same-origin" });
      if (turn.ok && !(await turn.json()).running) break;
    }
    location.reload();
  }
  form.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    const text = input.value;
    const sending = attached;
    if (!text.trim() && sending.length === 0) return;
    input.value = "";
    attached = [];
    showChosen();
    log.querySelectorAll(".living").forEach((row) => row.remove());
    const me = add("msg me", [text].concat(sending.map((f) => "📎 " + f.name)).filter(Boolean).join("\n"));
    me.dataset.text = text;
    const answer = add("msg answer", "");
    answer.dataset.state = "streaming";
    let res;
    if (sending.length > 0) {
      const body = new FormData();
      body.append("text", text);
      if (session !== null) body.append("session", String(session));
      sending.forEach((f) => body.append("file", f, f.name));
      res = await fetch("/api/chat/upload", {
        method: "POST",
        headers: { "x-csrf-token": csrf },
        body,
        credentials: "same-origin",
      });
    } else {
      res = await post("/api/chat", { text, session });
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
      case "done":
        answer.innerHTML = ev.html;
        answer.dataset.state = "done";
        copyButtons(answer);
        living();
        answer.scrollIntoView({ block: "end" });
        break;
      case "end": answer.textContent = ev.text; answer.dataset.state = ev.state; living(); break;
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

// A "copy" button on every code block under `root` (the labels come from #chat-log's data).
function copyButtons(root) {
  const log = document.getElementById("chat-log");
  if (!log) return;
  root.querySelectorAll("pre").forEach((pre) => {
    if (pre.parentNode.classList.contains("codeblock")) return;
    const wrap = document.createElement("div");
    wrap.className = "codeblock";
    pre.parentNode.insertBefore(wrap, pre);
    wrap.appendChild(pre);
    const b = document.createElement("button");
    b.type = "button";
    b.className = "copy";
    b.textContent = log.dataset.copy;
    b.addEventListener("click", () => {
      const text = pre.textContent;
      const done = () => {
        b.textContent = log.dataset.copied;
        setTimeout(() => { b.textContent = log.dataset.copy; }, 1500);
      };
      if (navigator.clipboard && window.isSecureContext) {
        navigator.clipboard.writeText(text).then(done, () => { fallbackCopy(text); done(); });
      } else {
        fallbackCopy(text);
        done();
      }
    });
    wrap.insertBefore(b, pre); // above the code, in its own row: it never covers a line
  });
}

// Copies `text` where the Clipboard API is unavailable (plain HTTP off loopback).
function fallbackCopy(text) {
  const area = document.createElement("textarea");
  area.value = text;
  area.setAttribute("readonly", "");
  area.className = "offscreen";
  document.body.appendChild(area);
  area.select();
  try { document.execCommand("copy"); } catch (_) { /* nothing more to try */ }
  area.remove();
}
