// The BMAD dashboard's page. Every text comes from files a model or a process wrote:
// it is set with textContent; only `html` and `diff_html` fields, made safe by the
// server (src/dashboard/render.rs), are set as HTML. The page's CSP allows this script
// and its style, nothing else.
"use strict";

// The token a change carries (not the login key, which the cookie replaced).
const TOKEN = document.querySelector('meta[name="bmad-token"]').content;
const main = document.getElementById("main");
const banner = document.getElementById("banner");
const live = document.getElementById("live");
let current = null; // the task shown: its JSON
let comments = []; // line-anchored comments of the decision being prepared
let selection = null; // {from, to} lines selected
let dirty = false; // the human typed in a form: a live update does not wipe it
let stale = false;
// The decision form's own elements, held by reference: a document rendered in the page
// cannot stand in for one (by id or by name), whatever it says.
let form = {};

// A stored time (RFC 3339) for a person: the minute in their own time zone and how long
// ago, the stored text kept as the cell's title. Anything that is not a time is shown as is.
function when(iso) {
  const t = Date.parse(iso);
  if (!iso || Number.isNaN(t)) return { text: iso || "—" };
  const d = new Date(t);
  const pad = (n) => String(n).padStart(2, "0");
  const day = d.getFullYear() + "-" + pad(d.getMonth() + 1) + "-" + pad(d.getDate()) + " " + pad(d.getHours()) + ":" + pad(d.getMinutes());
  const secs = Math.max(0, Math.floor((Date.now() - t) / 1000));
  const ago = secs < 60 ? "just now" : secs < 3600 ? Math.floor(secs / 60) + " min ago"
    : secs < 172800 ? Math.floor(secs / 3600) + " h ago" : Math.floor(secs / 86400) + " days ago";
  return { text: day + " (" + ago + ")", title: iso, "data-at": iso };
}

function el(tag, attrs, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === null || v === undefined || v === false) continue;
    if (k === "text") e.textContent = v;
    else if (k === "html") e.innerHTML = v; // only server-rendered, sanitized HTML
    else if (k === "on") for (const [ev, f] of Object.entries(v)) e.addEventListener(ev, f);
    else e.setAttribute(k, v === true ? "" : v);
  }
  // Children may come in nested arrays (a section's parts, a list's rows): all are appended.
  for (const c of children.flat(Infinity)) if (c !== null && c !== undefined) e.append(c);
  return e;
}

function show(message, error) {
  banner.hidden = !message;
  banner.className = error ? "error" : "";
  banner.textContent = message || "";
}

async function get(path) {
  const r = await fetch(path, { credentials: "same-origin" });
  const body = await r.json().catch(() => ({}));
  if (!r.ok) throw new Error(body.error || r.statusText);
  return body;
}

async function post(path, body) {
  const r = await fetch(path, {
    method: "POST",
    credentials: "same-origin",
    headers: { "content-type": "application/json", "x-bmad-secret": TOKEN },
    body: JSON.stringify(body),
  });
  const answer = await r.json().catch(() => ({}));
  return { status: r.status, body: answer };
}

function listRow(t, many, story) {
  const x = t.extra || {};
  const name = el("a", { href: "#/task/" + encodeURIComponent(t.session_id), class: "task-link", text: t.task_name });
  return el("tr", { "data-session": t.session_id, class: story ? "story" : null },
    el("td", {}, story ? [el("span", { class: "muted", text: "↳ sprint " + story.sprint + ": " }), name] : name),
    el("td", { text: t.role + " (" + t.stage + ")" }),
    el("td", { text: t.state }),
    x.behind ? el("td", { class: "muted behind", text: "this copy is behind" })
      : el("td", { class: t.waiting.length ? "waiting" : "", text: t.waiting.join(", ") || "—" }),
    el("td", { class: "owner", text: x.owner || (x.story && x.story.owner) || "—" }),
    el("td", { class: "branch", text: x.branch || "—" }),
    el("td", { class: "muted", ...when(t.updated_at) }),
    many ? el("td", { class: "muted", text: t.project_dir }) : null);
}

// A story's shared entry, for a story whose session is in another worktree than the ones
// served: what its parent last read of it.
function entryRow(s) {
  return el("tr", { "data-session": s.session_id, class: "story elsewhere" },
    el("td", {}, el("span", { class: "muted", text: "↳ sprint " + s.sprint + ": " }), el("span", { text: s.task_name + " (in " + s.worktree + ")" })),
    el("td", { text: s.stage }), el("td", { text: s.state }), el("td", { text: "—" }),
    el("td", { class: "owner", text: s.owner }), el("td", { class: "branch", text: s.branch || "—" }),
    el("td", { class: "muted", ...when(s.updated_at) }));
}

async function renderList() {
  current = null;
  const data = await get("/dashboard/api/tasks");
  const many = data.projects.length > 1;
  const parentOf = (t) => t.extra && t.extra.story ? t.extra.story.parent_session_id : null;
  const shown = new Set(data.tasks.map((t) => t.session_id));
  const rows = [];
  // Each task, its stories right under it: those served here, then the entries of the
  // others; a story whose parent is not served stands alone.
  for (const t of data.tasks.filter((t) => !parentOf(t) || !shown.has(parentOf(t)))) {
    rows.push(listRow(t, many, parentOf(t) ? t.extra.story : null));
    const mine = data.tasks.filter((s) => parentOf(s) === t.session_id);
    for (const s of mine) rows.push(listRow(s, many, s.extra.story));
    for (const e of (t.extra && t.extra.stories) || []) if (!mine.some((s) => s.session_id === e.session_id)) rows.push(entryRow(e));
  }
  main.replaceChildren(
    el("h1", { text: "Tasks" }),
    rows.length
      ? el("table", { id: "tasks" },
          el("tr", {}, ["Task", "Stage", "State", "Waits for you", "Owner", "Branch", "Updated"].map((h) => el("th", { text: h })),
            many ? el("th", { text: "Project" }) : null),
          rows)
      : el("p", { text: "No task yet in " + data.projects.join(", ") + "." }));
}

async function findProject(id) {
  const data = await get("/dashboard/api/tasks");
  const row = data.tasks.find((t) => t.session_id === id || t.task_name === id);
  return row ? row.project : 0;
}

function linesView(doc) {
  const lines = doc.text.replace(/\n$/, "").split("\n");
  const box = el("div", { class: "lines", id: "lines" });
  lines.forEach((line, i) => {
    const n = i + 1;
    box.append(el("div", { class: "line", "data-n": n, on: { click: (ev) => select(n, ev.shiftKey) } },
      el("span", { class: "n", text: String(n) }), el("span", { class: "t", text: line })));
  });
  return box;
}

function select(n, extend, from) {
  if (from) selection = { from, to: n };
  else if (extend && selection) selection = { from: Math.min(selection.from, n), to: Math.max(selection.from, n) };
  else selection = { from: n, to: n };
  (form.lines ? form.lines.querySelectorAll(".line") : []).forEach((l) => {
    const k = Number(l.dataset.n);
    l.classList.toggle("sel", k >= selection.from && k <= selection.to);
  });
  const label = form.selected;
  if (label) label.textContent = selection.from === selection.to ? "line " + selection.from : "lines " + selection.from + "-" + selection.to;
}

function commentList() {
  form.comments = el("ul", { class: "comments", id: "comments" },
    comments.map((c) => el("li", { text: (c.from ? "Lines " + c.from + "-" + c.to : "Whole document") + ": " + c.text })));
  countOpen();
  return form.comments;
}

// The comments a send-back carries: the new ones, and the earlier round's still open.
function countOpen() {
  const open = comments.length + (form.threads || []).filter((c) => !c.checked).length;
  if (form.openCount) form.openCount.textContent = open ? " (" + open + " open comment" + (open > 1 ? "s" : "") + ")" : "";
}

// The comments of the earlier round, shown against this version: each is marked resolved
// or left open; all go with the decision, the open ones quoted again for the next role.
function threadsView(d) {
  form.threads = [];
  if (!d.threads || !d.threads.length) return null;
  // Marks set before a refresh or a refusal are given back while the threads are the same.
  let kept = null;
  try { kept = JSON.parse(loadDraft("threads") || "null"); } catch (e) { kept = null; }
  const marks = Array.isArray(kept) && kept.length === d.threads.length ? kept : d.threads.map((th) => th.resolved);
  const keep = () => saveDraft("threads", JSON.stringify(form.threads.map((c) => c.checked)));
  return el("div", { id: "threads", class: "threads" }, el("h3", { text: "Comments on the earlier round" }),
    el("p", { class: "muted", text: "Mark those this version resolves; the open ones go back with a request for changes." }),
    d.threads.map((th, i) => el("div", { class: "thread" + (marks[i] ? " resolved" : ""), "data-thread": i },
      el("p", { class: "muted", text: th.draft + " · " + (th.span === "the whole" ? "the whole document" : th.span) }),
      th.quote.length ? el("pre", { class: "quote", text: th.quote.join("\n") }) : null,
      el("div", { class: "thread-text", text: th.text }),
      el("label", {}, form.threads[form.threads.push(el("input", { type: "checkbox", class: "thread-resolved", checked: !!marks[i],
        on: { change: (ev) => { ev.target.closest(".thread").classList.toggle("resolved", ev.target.checked); countOpen(); keep(); } } })) - 1], " Resolved"))));
}

function addDocComment() {
  const text = form.docComment.value.trim();
  if (!text) return show("Write a comment on the whole document first.", true);
  comments.push({ from: 0, to: 0, text });
  saveComments();
  form.docComment.value = "";
  saveDraft("comment/doc", null);
  form.comments.replaceWith(commentList());
  dirty = true;
}

// What the human typed in a decision form is kept in this tab's sessionStorage, keyed by
// task and field (each field belongs to one action), so that a refresh or a refusal of a
// stale version loses nothing: the form of the next version offers it again. It leaves
// the browser only with the decision the human sends.
let restored = []; // the fields given back in the form being shown
function draftPrefix(t) {
  return "bmad-draft/" + t.project + "/" + t.session_id + "/";
}

function loadDraft(key) {
  try { return sessionStorage.getItem(draftPrefix(current) + key); } catch (e) { return null; }
}

function saveDraft(key, value) {
  try {
    if (value) sessionStorage.setItem(draftPrefix(current) + key, value);
    else sessionStorage.removeItem(draftPrefix(current) + key);
  } catch (e) { /* storage full or refused: the form still holds the text */ }
}

function clearDrafts(t) {
  try {
    const prefix = draftPrefix(t);
    for (const k of Object.keys(sessionStorage)) if (k.startsWith(prefix)) sessionStorage.removeItem(k);
  } catch (e) { /* nothing kept */ }
}

// `input`, filled with what was typed in it before and kept as it is typed.
function draftable(input, key) {
  const was = loadDraft(key);
  if (was) { input.value = was; input.classList.add("restored"); restored.push(key); }
  input.addEventListener("input", () => saveDraft(key, input.value));
  return input;
}

function saveComments() {
  const doc = current.decision && current.decision.document;
  saveDraft("comments", comments.length && doc ? JSON.stringify({ sha256: doc.sha256, comments }) : null);
}

// Line comments kept for this version are restored; those written on an earlier version
// (whose lines may have moved) are offered, each to be added again on the lines selected.
function keptComments(doc) {
  let kept = null;
  try { kept = JSON.parse(loadDraft("comments") || "null"); } catch (e) { kept = null; }
  if (!kept || !Array.isArray(kept.comments)) return null;
  if (kept.sha256 === doc.sha256) {
    if (!comments.length) comments = kept.comments;
    return null;
  }
  restored.push("comments");
  return el("div", { id: "earlier-comments", class: "restored" },
    el("p", { class: "muted", text: "Your comments on the version you read before (its lines may have moved): select the lines they belong to now and add them again." }),
    el("ul", {}, kept.comments.map((c) => el("li", {}, el("span", { text: "Lines " + c.from + "-" + c.to + ": " + c.text }), " ",
      el("button", { class: "secondary re-add", on: { click: () => reAdd(c.text) }, text: "Add on the selected lines" })))));
}

function reAdd(text) {
  if (!selection) return show("Select the lines first.", true);
  comments.push({ from: selection.from, to: selection.to, text });
  saveComments();
  form.comments.replaceWith(commentList());
  dirty = true;
}

function decisionCard(t, since) {
  const d = t.decision;
  if (!d) return null;
  if (d.error) return el("div", { class: "card decide" }, el("p", { text: d.error }));
  const doc = d.document;
  form = {};
  restored = [];
  const earlier = doc ? keptComments(doc) : null;
  const card = el("div", { class: "card decide", id: "decision" },
    el("h2", { text: "Waiting for you: " + d.actions.join(" or ") }),
    doc ? el("p", { class: "muted", text: doc.path + " · sha256 " + doc.sha256.slice(0, 12) + (d.score != null ? " · score " + d.score + (d.gate ? "/" + d.gate : "") : "") }) : null,
    d.failed_verdict ? el("p", { class: "waiting", text: "It does not pass: " + d.failed_verdict + ". Confirming accepts the risk; sending back returns the work to development." }) : null,
    (d.notices || []).map((n) => el("p", { class: "muted", text: n })));
  // A failing check is accepted or sent back here: its output is read here, not further down.
  const decided = t.stages.find((s) => s.stage === d.stage);
  const run = decided && decided.checks;
  if (d.failed_verdict && run && run.checks.some((c) => c.outcome !== "passed")) card.append(checksView("decision-checks", run));
  if (doc) {
    const mine = t.stages.find((s) => s.stage === d.stage && s.document && s.document.sha256 === doc.sha256);
    // Element.append would show a null as the text "null": only what is there is appended.
    card.append(...[sinceBox("since-decision", mine ? since[d.stage] : null), el("div", { class: "doc", id: "decision-doc", html: doc.html }),
      el("details", { id: "comment-box" }, el("summary", { text: "Comment on lines (click a line, shift-click to extend)" }),
        form.lines = linesView(doc),
        el("p", {}, "Selected: ", form.selected = el("span", { id: "selected", text: "none" })),
        form.commentText = draftable(el("textarea", { id: "comment-text", placeholder: "Your comment on the selected lines" }), "comment/text"),
        el("button", { id: "add-comment", class: "secondary", on: { click: addComment } , text: "Add comment" }),
        form.docComment = draftable(el("textarea", { id: "doc-comment-text", placeholder: "A comment on the whole document" }), "comment/doc"),
        el("button", { id: "add-doc-comment", class: "secondary", on: { click: addDocComment }, text: "Comment on the whole document" }),
        commentList(), earlier), threadsView(d)].filter((c) => c !== null && c !== undefined));
  }
  const row = el("div", { class: "row" });
  form.answers = [];
  if (d.actions.includes("answer")) {
    row.append(el("div", {}, el("h3", { text: "Answer the questions" }),
      d.questions.map((q) => el("label", {}, el("p", { text: q.id + ": " + q.question }),
        q.context ? el("p", { class: "muted", text: q.context }) : null,
        form.answers[form.answers.push(draftable(el("input", { type: "text", class: "answer", "data-q": q.id }), "answer/" + q.id)) - 1])),
      el("button", { id: "answer", on: { click: () => decide("answer") }, text: "Send the answers" })));
  }
  if (d.actions.includes("confirm")) {
    row.append(el("div", {}, el("h3", { text: d.failed_verdict ? "Accept the risk" : "Confirm" }),
      form.note = draftable(el("textarea", { id: "note", placeholder: "A note for the later roles (optional)" }), "confirm/note"),
      el("button", { id: "confirm", on: { click: () => decide("confirm") }, text: d.failed_verdict ? "Accept the risk and go on" : "Confirm" })));
  }
  if (d.actions.includes("approve")) {
    row.append(el("div", {}, el("h3", { text: "Approve the plan" }),
      el("p", { class: "muted", text: "Sprints: " + ((d.sprints || []).map((s) => s.number + " (" + s.title + ")").join(", ") || "none named") }),
      form.scope = draftable(el("input", { type: "text", id: "scope", placeholder: "Scope: all, 1, 1-2, sprint 1 and 3" }), "approve/scope"),
      form.approveNote = draftable(el("textarea", { id: "approve-note", placeholder: "A note (optional)" }), "approve/note"),
      el("button", { id: "approve", on: { click: () => decide("approve") }, text: "Approve" })));
  }
  if (d.actions.includes("reject")) {
    row.append(el("div", {}, el("h3", { text: "Send it back" }),
      form.feedback = draftable(el("textarea", { id: "feedback", placeholder: "What should change (the line comments go with it)" }), "reject/feedback"),
      el("button", { id: "reject", class: "danger", on: { click: () => decide("reject") } }, "Request changes", form.openCount = el("span", { id: "open-count" }))));
    countOpen();
  }
  if (restored.length) card.append(el("p", { class: "restored", id: "restored", text: "What you typed earlier on this task is back in the form (kept in this tab only). Read the version shown before you send it." }));
  card.append(row);
  card.addEventListener("input", () => { dirty = true; });
  return card;
}

function addComment() {
  const text = form.commentText.value.trim();
  if (!selection || !text) return show("Select lines and write a comment first.", true);
  comments.push({ from: selection.from, to: selection.to, text });
  saveComments();
  form.commentText.value = "";
  saveDraft("comment/text", null);
  form.comments.replaceWith(commentList());
  dirty = true;
}

async function decide(action) {
  const t = current;
  const d = t.decision;
  const value = (field) => (form[field] ? form[field].value || null : null);
  const body = { project: t.project, session_id: t.session_id, action, digest: d.document ? d.document.sha256 : null, comments };
  if (action === "confirm") body.note = value("note");
  if (action === "approve") { body.scope = value("scope"); body.note = value("approveNote"); }
  if (action === "reject") body.feedback = value("feedback");
  if (action === "answer") {
    body.answers = {};
    form.answers.forEach((i) => { if (i.value.trim()) body.answers[i.dataset.q] = i.value; });
  }
  if (action !== "reject" && action !== "confirm" && action !== "approve") body.comments = [];
  else if (d.threads && d.threads.length) body.threads = form.threads.map((c) => c.checked);
  const r = await post("/dashboard/api/decide", body);
  if (r.status === 200) {
    comments = []; dirty = false; selection = null;
    clearDrafts(t);
    show(r.body.message);
    document.body.dataset.decided = action;
  } else if (r.status === 409 && r.body.sha256) {
    dirty = false;
    show("The document changed since you read it: this is the new version. " + (r.body.error || ""), true);
  } else {
    return show(r.body.error || "Refused (" + r.status + ")", true);
  }
  await route();
}

function seconds(ms) {
  return ms < 1000 ? ms + " ms" : (ms / 1000).toFixed(1) + " s";
}

function bytes(n) {
  return n < 1024 ? n + " bytes" : n < 1048576 ? (n / 1024).toFixed(1) + " KiB" : (n / 1048576).toFixed(1) + " MiB";
}

// One run of a stage's checks, each exactly as the server ran it: its command, how it
// ended, how long it took, and its output collapsed, the lines that say what failed first.
function checksView(id, run) {
  const git = run.git ? " · commit " + (run.git.commit ? run.git.commit.slice(0, 12) : "none") + (run.git.dirty ? ", with uncommitted changes" : "") : "";
  return el("div", { class: "checks", id },
    el("h3", { text: "Checks" }),
    el("p", { class: "muted", text: "Run at " + when(run.at).text + ", each with sh -c in the project, from the approved .bmad/config.toml (sha256 " + run.config_sha256.slice(0, 12) + ")" + git }),
    run.checks.map((c, i) => checkView(id + "-" + i, c)));
}

function checkView(id, c) {
  const failed = c.outcome !== "passed";
  let output = el("p", { class: "muted", text: "It printed nothing." });
  if (c.output_bytes) {
    const kept = c.output_kept_bytes != null && c.output_kept_bytes < c.output_bytes ? " (kept: its first and last part, " + bytes(c.output_kept_bytes) + ")" : "";
    output = el("details", { class: "check-output", id: id + "-output" },
      el("summary", { text: "Output: " + bytes(c.output_bytes) + kept + " · sha256 " + c.output_sha256.slice(0, 12) }),
      c.failing_lines.length ? [el("p", { class: "muted", text: "The lines that say what failed (line numbers of the output):" }),
        el("pre", { class: "out failing", text: c.failing_lines.join("\n") })] : null,
      el("p", { class: "muted", text: "All of it" + (c.output_path ? ", from " + c.output_path : "") + ":" }),
      el("pre", { class: "out whole", text: c.output == null ? "(the kept output could not be read)" : c.output }));
  }
  return el("div", { class: "check " + (failed ? "failed" : "passed"), id, "data-outcome": c.outcome },
    el("p", { class: "check-head" }, el("strong", { class: "check-name", text: c.name }), " ",
      el("span", { class: "check-result", text: c.result }), el("span", { class: "muted", text: " · " + seconds(c.duration_ms) })),
    el("pre", { class: "command", text: c.command }),
    output);
}

// The version of each stage's document this browser last showed, kept in localStorage by
// project, task and stage: opened again, the page offers what changed since. `readBase`
// holds, while a task is open, the version the human had read before (the one remembered
// when they opened it, or the one on screen when a newer arrived); `onScreen` the one shown.
let readBase = {};
let onScreen = {};
function seenKey(t, stage) {
  return "bmad-seen/" + t.project_dir + "/" + t.session_id + "/" + stage;
}

// For each stage with a document: the version last read, when it is not the one shown.
function sinceRead(t) {
  const since = {};
  for (const s of t.stages) {
    if (!s.document) continue;
    const k = seenKey(t, s.stage);
    const sha = s.document.sha256;
    if (!(k in readBase)) { try { readBase[k] = localStorage.getItem(k); } catch (e) { readBase[k] = null; } }
    if (onScreen[k] && onScreen[k] !== sha) readBase[k] = onScreen[k];
    onScreen[k] = sha;
    try { localStorage.setItem(k, sha); } catch (e) { /* not remembered: no diff next time */ }
    if (readBase[k] && readBase[k] !== sha) since[s.stage] = { sha: readBase[k], round: s.document.rounds.find((r) => r.sha256 === readBase[k]) };
  }
  return since;
}

function sinceBox(id, since) {
  if (!since) return null;
  if (!since.round) return el("p", { class: "muted since-lost", id, text: "You last read a version (sha256 " + since.sha.slice(0, 12) + ") that is no longer among the rounds kept: read this one in full." });
  return el("details", { class: "since", id, open: true },
    el("summary", { text: "What changed since you last read it (" + since.round.name + ")" }),
    el("div", { class: "diffbox", html: since.round.diff_html }));
}

// What answered a round, beside it: the decision, who took it, and their words as written.
function answeredBy(a) {
  if (!a) return el("p", { class: "muted", text: "No decision was taken on this draft." });
  return el("div", { class: "answered" },
    el("p", { class: "muted" }, el("span", { text: a.verb + " by " + a.by + " at " + when(a.at).text + (a.words ? ":" : "") })),
    a.words ? el("pre", { class: "words", text: a.words }) : null);
}

function stageSection(s, since, drifted) {
  const parts = [];
  if (s.document) {
    parts.push(el("p", { class: "muted", text: s.document.path + " · sha256 " + s.document.sha256.slice(0, 12) }));
    if (drifted) parts.push(el("p", { class: "waiting drifted", text: "This document changed after a later stage relied on it: check that the later documents still hold." }));
    parts.push(sinceBox("since-" + s.stage, since), el("div", { class: "doc", id: "doc-" + s.stage, html: s.document.html }));
    s.document.rounds.forEach((r, i) => parts.push(el("details", { class: "round", id: "round-" + s.stage + "-" + i },
      el("summary", { text: r.label }),
      el("p", { class: "muted", text: r.path + " · diff against the current document" }),
      r.answered !== undefined ? answeredBy(r.answered) : null,
      el("div", { class: "diffbox", html: r.diff_html }))));
    if (s.document.rounds_note) parts.push(el("p", { class: "muted", text: s.document.rounds_note }));
  }
  if (s.questions.length) parts.push(el("h3", { text: "Questions and answers" }), el("ul", {},
    s.questions.map((q) => el("li", {}, el("span", { text: q.id + " (round " + q.round + "): " + q.question }),
      el("div", { class: q.answer ? "" : "waiting", text: q.answer ? "Answer: " + q.answer : "not answered" })))));
  if (s.checks) parts.push(checksView("checks-" + s.stage, s.checks));
  if (s.accepted_risk) parts.push(el("p", { class: "waiting", text: "The human accepted the risk of a failing verdict (" + (s.review_status || "below the gate") + ")." }));
  if (s.scope) parts.push(el("p", { text: "Approved scope: " + s.scope }));
  for (const f of s.feedback) parts.push(el("p", { class: "muted", text: "Feedback from " + f }));
  if (!parts.length) return null;
  return el("section", { class: "card", id: "stage-" + s.stage },
    el("h2", { text: s.role + " (" + s.stage + ")" + (s.score != null ? " · score " + s.score : "") + (s.iteration ? " · round " + s.iteration : "") }), parts);
}

// Each step: who decided (the person, with the channel), on which version of the
// document, the words of whoever spoke, labelled, and the server's own note apart.
function auditTable(t) {
  return el("table", { id: "audit" }, el("tr", {}, ["When", "Stage", "Action", "Who decided", "On the version", "Words, with who said them", "The server's note"].map((h) => el("th", { text: h }))),
    t.audit.map((h) => el("tr", {}, el("td", { class: "muted", ...when(h.at) }), el("td", { text: h.stage }), el("td", { text: h.action + " → " + h.to }),
      el("td", { class: "who", text: h.who || "—" }),
      el("td", { class: "version", text: h.digest ? (h.version ? h.version + " · " : "") + "sha256 " + h.digest : "—" }),
      el("td", { text: h.words || "" }), el("td", { class: "muted", text: h.server_note || "" }))));
}

function driftCard(t) {
  if (!t.drift) return null;
  return el("div", { class: "card drift", id: "drift" }, el("h2", { text: "Drift" }),
    el("p", { text: t.drift.words }));
}

// What the night shift (`bmad-mcp run`) says of it: steps, tokens, why it is parked.
function nightCard(t) {
  if (!t.night) return null;
  return el("div", { class: "card", id: "night" }, el("h2", { text: "Night shift" }),
    el("p", { text: t.night }));
}

// Who owns the task and where it runs: in the header, as the session says it.
function taskHeader(t) {
  const x = t.extra || {};
  const link = x.story;
  return [
    el("p", { class: "muted", text: t.session_id + " · " + t.project_dir }),
    t.behind ? el("p", { id: "behind", class: "waiting", text: t.behind }) : null,
    t.done_by_hand ? el("p", { id: "done-by-hand", class: "waiting", text: t.done_by_hand }) : null,
    t.held_by_method ? el("p", { id: "held-by-method", class: "waiting", text: t.held_by_method }) : null,
    t.claim_news ? el("p", { id: "claim-news", class: "waiting", text: t.claim_news }) : null,
    x.twice ? el("p", { id: "twice", class: "waiting", text: x.twice }) : null,
    el("p", { id: "task-owner" },
      el("span", { class: "label", text: "Owner " }), el("strong", { class: "owner", text: x.owner || (link && link.owner) || "not recorded" }),
      el("span", { class: "label", text: " · Branch " }), el("strong", { class: "branch", text: x.branch || (link && link.branch) || "none (not in git)" }),
      el("span", { class: "label", text: " · Track " }), el("strong", { text: x.track || "full" })),
    link ? el("p", { id: "story-of" }, "Story of sprint " + link.sprint + " (", el("span", { text: link.sprint_title }), ") of ",
      el("a", { href: "#/task/" + encodeURIComponent(link.parent_session_id), text: link.parent_task }),
      el("span", { class: "muted", text: ", in " + link.worktree })) : null];
}

function storiesSection(t) {
  const stories = (t.extra && t.extra.stories) || [];
  // Sprints other clones' stories claimed on the team's remote: their stage is not known here.
  for (const c of (t.extra && t.extra.claimed) || []) {
    stories.push({ sprint: c.sprint, session_id: "", task_name: c.done || "(another clone's)", stage: "—",
      state: c.done ? "completed there" : "claimed on " + c.remote, owner: c.owner, branch: c.branch,
      worktree: c.worktree + (c.host ? " (on " + c.host + ")" : ""), gone: c.gone, updated_at: c.since });
  }
  if (!stories.length && !t.claims) return null;
  return el("section", { class: "card", id: "stories-card" }, el("h2", { text: "Stories" }),
    el("p", { class: "muted", text: "Each approved sprint runs as a story of its own: here as they stand now, wherever in this clone they run." }),
    t.claims ? el("p", { id: "claims", text: t.claims }) : null,
    !stories.length ? null : el("table", { id: "stories" }, el("tr", {}, ["Sprint", "Story", "Stage", "State", "Owner", "Branch", "Worktree", "Updated"].map((h) => el("th", { text: h }))),
      stories.map((s) => el("tr", { "data-sprint": s.sprint, class: s.state === "completed" ? "done" : null },
        el("td", { text: String(s.sprint) }),
        el("td", {}, s.session_id ? el("a", { href: "#/task/" + encodeURIComponent(s.session_id), text: s.task_name }) : el("span", { class: "muted", text: s.task_name })),
        el("td", { text: s.stage }), el("td", { class: "state", text: s.state }),
        el("td", { class: "owner", text: s.owner }), el("td", { class: "branch", text: s.branch || "—" }),
        el("td", { class: "muted", text: s.worktree + (s.gone ? " (gone)" : "") }), el("td", { class: "muted", ...when(s.updated_at) })))));
}

function matrixRow(m, r) {
  const scope = r.in_scope === true ? " (in scope)" : r.in_scope === false ? " (out of scope)" : "";
  const result = r.result ? r.result + (r.accepted ? " (risk accepted)" : "") : r.accepted ? "none (risk accepted)" : "—";
  return el("tr", { "data-id": r.id, class: r.gaps.length ? "gap" : null },
    el("td", { class: "id", text: r.id }),
    el("td", {}, el("span", { text: r.text }), r.gaps.length ? el("div", { class: "gaps", text: "Gap: " + r.gaps.join("; ") }) : null),
    el("td", { class: "designed", text: r.criterion ? "(criterion)" : r.design.join(", ") || "—" }),
    el("td", { class: "planned", text: r.sprints.length ? r.sprints.map((n) => "sprint " + n).join(", ") + scope : r.criterion ? "(criterion)" + scope : "—" }),
    el("td", { class: "built", text: r.built ? "yes" : "—" }),
    el("td", { class: "verified", text: r.result ? "yes" : m.verified ? "no" : "—" }),
    el("td", { class: "result", text: result }),
    el("td", { class: "evidence", text: r.evidence || "—" }));
}

// The requirement matrix, one row per id of the PRD, the rows with a gap highlighted.
function matrixSection(t) {
  const m = t.matrix;
  if (!m) return null;
  const gaps = m.rows.filter((r) => r.gaps.length).length;
  return el("section", { class: "card", id: "matrix-card" }, el("h2", { text: "Traceability" }),
    el("p", { class: "muted", text: m.rows.length + " ids from the PRD; " + (gaps ? gaps + " with a gap (highlighted)" : "none with a gap") +
      (m.intent ? "; intent: " + m.intent : "") + (m.unknown.length ? "; named but not defined by the PRD: " + m.unknown.join(", ") : "") }),
    el("table", { id: "matrix" }, el("tr", {}, ["Id", "Requirement", "Designed", "Planned in sprint", "Built", "Verified", "Result", "Evidence"].map((h) => el("th", { text: h }))),
      m.rows.map((r) => matrixRow(m, r))));
}

// The project's lessons, active then retired, each with whose words it holds; retiring or
// restoring one is the human's decision, recorded in its file with who took it.
function lessonsSection(t) {
  const l = t.lessons;
  if (!l || (!l.error && !l.lessons.length && !l.damaged.length)) return null;
  if (l.error) return el("section", { class: "card", id: "lessons-card" }, el("h2", { text: "Lessons" }), el("p", { class: "waiting", text: l.error }));
  const row = (x) => el("tr", { "data-lesson": x.id, class: x.retired ? "retired" : null },
    el("td", { class: "muted", text: x.id }), el("td", { text: x.role + " · " + x.category }),
    el("td", { class: "source", text: x.said_by + " (" + x.source + ")" }),
    el("td", {}, el("div", { class: "words", text: x.words }), x.decided ? el("div", { class: "muted decided", text: x.decided }) : null),
    el("td", { class: "state", text: x.retired ? "retired" : "active" }),
    el("td", {}, el("button", { class: "secondary lesson-change", on: { click: () => lessonChange(t, x, x.retired ? "restore" : "retire") }, text: x.retired ? "Restore" : "Retire" })));
  return el("section", { class: "card", id: "lessons-card" }, el("h2", { text: "Lessons of this project" }),
    el("p", { class: "muted", text: "What went wrong in earlier work, recalled into the prompts of the roles that may repeat it; a retired one stays in .bmad/lessons/ and is no longer recalled." }),
    el("table", { id: "lessons" }, el("tr", {}, ["Id", "Role", "Whose words", "Lesson", "State", ""].map((h) => el("th", { text: h }))), l.lessons.map(row)),
    l.damaged.map(([path, why]) => el("p", { class: "waiting", text: "Cannot be read: " + path + ": " + why })));
}

async function lessonChange(t, x, change) {
  const r = await post("/dashboard/api/lesson", { project: t.project, id: x.id, change, sha256: x.sha256 });
  show(r.body.message || r.body.error || "Refused (" + r.status + ")", r.status !== 200);
  if (r.status === 200) document.body.dataset.decided = "lesson-" + change;
  await route();
}

function configCard(t) {
  const w = t.config_waiting;
  if (!w) return null;
  return el("div", { class: "card decide", id: "config" }, el("h2", { text: ".bmad/config.toml waits for your approval" }),
    el("ul", {}, w.changes.map((c) => el("li", { text: c }))),
    el("button", { id: "approve-config", on: { click: async () => {
      const r = await post("/dashboard/api/config", { project: t.project, sha256: w.sha256 });
      show(r.body.message || r.body.error, r.status !== 200);
      await route();
    } }, text: "Approve this config" }));
}

async function renderTask(id) {
  const project = await findProject(id);
  const t = await get("/dashboard/api/task?project=" + project + "&id=" + encodeURIComponent(id));
  // What the human opened stays open across a live update, as does their line selection
  // while the document is the same version.
  const open = [...document.querySelectorAll("details[id][open]")].map((d) => d.id);
  const sameDoc = current && current.decision && t.decision && current.decision.document && t.decision.document &&
    current.decision.document.sha256 === t.decision.document.sha256;
  if (!sameDoc) { selection = null; comments = []; }
  current = t;
  const since = sinceRead(t);
  main.replaceChildren(...[
    el("p", {}, el("a", { href: "#/", text: "← all tasks" }), " · ",
      el("a", { id: "print-link", href: "#/print/" + encodeURIComponent(t.session_id), text: "printable view of the decided documents" }),
      el("span", { class: "muted", text: " · keys: n / p, next / previous change in an open diff" })),
    el("h1", { id: "task-name", text: t.task_name }),
    taskHeader(t),
    el("p", { text: t.objective }),
    el("ol", { class: "timeline", id: "timeline" }, t.stages.map((s) => el("li", { class: s.status, text: s.role + (s.stage === t.stage ? " · " + t.state : "") }))),
    configCard(t), driftCard(t), nightCard(t), decisionCard(t, since), storiesSection(t), matrixSection(t),
    t.stages.map((s) => stageSection(s, since[s.stage], t.drift && s.document && t.drift.documents.includes(s.document.path))),
    el("h2", { text: "Audit" }), auditTable(t), lessonsSection(t)].flat().filter((c) => c !== null && c !== undefined));
  for (const id of open) { const d = document.getElementById(id); if (d) d.open = true; }
  if (selection) select(selection.to, false, selection.from);
  document.body.dataset.shown = t.updated_at;
}

// The decided documents of a task as one page to print: each stage's saved document, then
// its record (who decided, through which channel, on which version, with their words).
async function renderPrint(id) {
  const project = await findProject(id);
  const t = await get("/dashboard/api/task?project=" + project + "&id=" + encodeURIComponent(id));
  current = null;
  const decided = t.stages.filter((s) => s.status === "completed" && s.document);
  const record = (s) => t.audit.filter((h) => h.stage === s.stage && h.who);
  main.replaceChildren(...[
    el("p", { class: "noprint" }, el("a", { href: "#/task/" + encodeURIComponent(t.session_id), text: "← the task" }), " ",
      el("button", { id: "print", on: { click: () => window.print() }, text: "Print" })),
    el("h1", { id: "task-name", text: t.task_name }),
    el("p", { class: "muted", text: t.session_id + " · " + t.project_dir + " · printed " + new Date().toISOString() }),
    decided.length ? decided.map((s) => el("section", { class: "printed", id: "printed-" + s.stage },
      el("h2", { text: s.role + " (" + s.stage + "): " + s.document.path }),
      el("p", { class: "muted", text: "sha256 " + s.document.sha256 }),
      el("div", { class: "doc", html: s.document.html }),
      el("h3", { text: "Its record" }),
      el("table", { class: "record" }, el("tr", {}, ["When", "Decision", "Who decided", "On the version", "Words"].map((h) => el("th", { text: h }))),
        record(s).map((h) => el("tr", {}, el("td", when(h.at)), el("td", { text: h.action }), el("td", { text: h.who }),
          el("td", { text: (h.version ? h.version + " · " : "") + (h.digest ? "sha256 " + h.digest : "—") }), el("td", { text: h.words || "" }))))))
      : el("p", { text: "No stage of this task is decided yet." })].flat());
  document.body.dataset.shown = "print";
}

// Keyboard: n and p go to the next and previous change in the diffs open on the page
// (not while typing in a field).
let changeAt = -1;
function changeStarts() {
  const changed = (r) => r && (r.classList.contains("del") || r.classList.contains("ins"));
  return [...document.querySelectorAll("details[open] table.diff tr")]
    .filter((r) => changed(r) && !changed(r.previousElementSibling));
}

document.addEventListener("keydown", (ev) => {
  if (ev.ctrlKey || ev.metaKey || ev.altKey || (ev.key !== "n" && ev.key !== "p")) return;
  const tag = ev.target && ev.target.tagName;
  if (tag === "INPUT" || tag === "TEXTAREA" || tag === "SELECT") return;
  const all = changeStarts();
  if (!all.length) return show("No change to go to: open a diff first (n: next change, p: previous).", false);
  changeAt = ev.key === "n" ? Math.min(changeAt + 1, all.length - 1) : Math.max(changeAt - 1, 0);
  document.querySelectorAll("tr.current-change").forEach((r) => r.classList.remove("current-change"));
  all[changeAt].classList.add("current-change");
  all[changeAt].scrollIntoView({ block: "center" });
  document.body.dataset.change = (changeAt + 1) + "/" + all.length;
});

async function route() {
  const m = location.hash.match(/^#\/task\/(.+)$/);
  const p = location.hash.match(/^#\/print\/(.+)$/);
  changeAt = -1;
  try {
    if (p) await renderPrint(decodeURIComponent(p[1]));
    else if (m) await renderTask(decodeURIComponent(m[1]));
    else await renderList();
    stale = false;
  } catch (e) {
    show(String(e.message || e), true);
  }
}

// Every browser that signed in with a printed address, by time: one the human did not
// sign in means someone else read an address. One that signs in while the page is open is
// said in the banner.
let loginsSeen = null;
async function showLogins() {
  const times = (await get("/dashboard/api/tasks")).logins || [];
  const at = (t) => new Date(t).toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" });
  document.getElementById("logins").textContent = times.length ? "Signed in: " + times.map(at).join(", ") : "";
  document.body.dataset.logins = String(times.length);
  if (loginsSeen !== null && times.length > loginsSeen) {
    show("A new browser signed in at " + at(times[times.length - 1]) + ". If it was not you, someone read the address: stop the dashboard (Ctrl-C) and start it again, which signs every browser out.", true);
  }
  loginsSeen = times.length;
}

function listen() {
  const events = new EventSource("/dashboard/api/events");
  events.addEventListener("ready", () => { live.textContent = "live"; live.className = ""; });
  events.addEventListener("change", async () => {
    document.body.dataset.changes = String(Number(document.body.dataset.changes || 0) + 1);
    if (dirty) { stale = true; return show("This task changed on disk; your unsent input is kept. Reload the page to see the new version.", false); }
    await route();
  });
  events.addEventListener("signin", () => showLogins().catch(() => {}));
  events.onerror = () => { live.textContent = "reconnecting…"; live.className = "off"; };
}

window.addEventListener("hashchange", () => { comments = []; selection = null; dirty = false; readBase = {}; onScreen = {}; show(""); route(); });
route();
showLogins().catch(() => {});
listen();
