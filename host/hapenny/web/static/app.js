// hapenny web: keeps a copy of the board's snapshot, sent by the server
// (Server-Sent Events) when the page connects, current from the board's
// events that follow, draws it, and sends the controls' commands. The same
// page for `hapenny web` and the board's own server. No framework, no build step.
"use strict";

const ORDER = [20, 1, 18, 4, 13, 6, 10, 15, 2, 17, 3, 19, 7, 16, 8, 11, 14, 9, 12, 5];
// A board's rings, as radii on a board of radius 100 at the double's outer
// edge, with where its numbers go and the size of a drawn dart. REAL is a
// dartboard's own (170 mm to the double's edge); TAP is drawn for fingers:
// on a phone 390 px wide every double, treble, outer single and bull holds a
// 24x24 px square (WCAG's minimum target) with room to spare; the inner
// singles (the same score as the outer) get what is left near the bull.
const REAL = { bull: 3.7, outerBull: 9.4, trebleIn: 58.2, trebleOut: 62.9, doubleIn: 94.1, doubleOut: 100,
               num: 105, font: 7, dart: 4.5 };
const TAP = { bull: 11, outerBull: 28, trebleIn: 52, trebleOut: 68, doubleIn: 84, doubleOut: 100,
              num: 103.5, font: 7, dart: 4 };
const GIFT = { next: "to the next player", all: "to every other side", off: "not given (lost)" };
// the stylesheet's landscape layout, where the tally has a box of its own to fill
const WIDE = window.matchMedia("(orientation: landscape) and (min-width: 700px)");

let snap = null;
let lastGift = null; // [{side, bed}]: the last dart's gifts, outlined on the sides that received them
let hint = null; // {seg, reason, moves}: the coach's target, shown until the game moves on

const $ = (id) => document.getElementById(id);

function tally(marks, full) {
  if (marks >= full) return "⊗";
  return "X".repeat(Math.floor(marks / 2)) + "/".repeat(marks % 2);
}

function esc(s) {
  return String(s).replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" }[c]));
}

function name(st, i) {
  return st && st.sides[i] ? st.sides[i].name : "side " + (i + 1);
}

function rulesInWords(st) {
  const r = st.rules;
  const words = [
    (st.variant || "custom") + ":",
    "close beds " + r.beds.join(", ") + " with " + r.marks + " mark" + (r.marks > 1 ? "s" : "") + " each;",
    r.darts + " darts a visit;",
    "marks beyond what a bed needs are " + (GIFT[r.gift] || r.gift) + ";",
    r.win_by_gift ? "a gift can win the game." : "a gift cannot win the game (pub rule).",
  ];
  if (r.progressive) words.push("Beds must be closed in order.");
  if (r.flat) words.push("Every hit scores one mark.");
  if (r.bull_off) words.push("A bull-off decides who starts.");
  return words.join(" ");
}

function drawTally(st) {
  const t = $("tally");
  if (!st) { t.innerHTML = ""; return; }
  const beds = st.rules.beds.map(String);
  const full = st.rules.marks;
  let html = "<tr><th></th>" + beds.map((b) => "<th>" + b + "</th>").join("") + "</tr>";
  st.sides.forEach((side, i) => {
    const cls = [];
    if (i === st.turn && st.phase !== "over") cls.push("throwing");
    if ((st.pending || []).includes(i)) cls.push("pending");
    html += '<tr class="' + cls.join(" ") + '" data-side="' + i + '"><th class="side">' + esc(side.name) +
      (st.winner === i ? " ★" : "") + "</th>";
    beds.forEach((b) => {
      const m = side.marks[b] || 0;
      const c = [];
      if (m >= full) c.push("closed");
      if (lastGift && lastGift.some((g) => g.side === i && String(g.bed) === b)) c.push("gifted");
      html += '<td class="' + c.join(" ") + '" data-bed="' + b + '">' + tally(m, full) + "</td>";
    });
    html += "</tr>";
  });
  t.innerHTML = html;
  fitTally();
}

function fitTally() {
  // the largest type at which the tally fits its box: measured at 100 px and
  // scaled (the borders do not scale with the type: then stepped down until
  // it fits). Upright, the box is as tall as the tally: up to 30 % of the screen.
  const box = $("tally-box"), t = $("tally");
  if (!t.rows.length) return;
  const W = box.clientWidth, H = WIDE.matches ? box.clientHeight : window.innerHeight * 0.3;
  if (!W || !H) return;
  t.style.fontSize = "100px";
  let fs = Math.floor(100 * Math.min(W / t.offsetWidth, H / t.offsetHeight));
  t.style.fontSize = fs + "px";
  while (fs > 8 && (t.offsetWidth > W || t.offsetHeight > H)) t.style.fontSize = (fs -= 1) + "px";
}

function drawTurn(st) {
  const el = $("turn");
  if (!st) { el.textContent = "No game: start one below, or press the board's new-game button."; return; }
  if (st.phase === "over") {
    el.innerHTML = '<span class="winner">' + esc(name(st, st.winner)) + " wins!</span>";
  } else if (st.phase === "hold") {
    el.innerHTML = esc(st.thrower) + "'s visit is over: pull the darts, then Next player.";
  } else if (st.phase === "bull_off") {
    el.innerHTML = "Bull-off: " + esc(st.thrower) + " throws one dart at the bull" +
      (st.contenders ? " (" + st.contenders.map((i) => esc(name(st, i))).join(" v ") + ")" : "") + ".";
  } else {
    el.innerHTML = esc(st.thrower) + ' throws <span class="darts" aria-label="' + st.darts_left + ' darts left">' +
      "●".repeat(st.darts_left) + "○".repeat(Math.max(0, st.rules.darts - st.darts_left)) + "</span>";
  }
  if (st.pending && st.pending.length && st.phase !== "over") {
    el.innerHTML += '<div class="rules">Pending win by gift: ' + st.pending.map((i) => esc(name(st, i))).join(", ") + "</div>";
  }
}

function dartWords(st, d) {
  const parts = [];
  if (d.own) parts.push(d.own + " mark" + (d.own > 1 ? "s" : "") + " on " + d.bed);
  (d.gifts || []).forEach(([side, n]) => parts.push(n + " gifted to " + name(st, side)));
  if (d.lost) parts.push(d.lost + " lost");
  return parts.length ? parts.join(", ") : "dead";
}

function drawVisit(s) {
  const st = s.state;
  const el = $("visit");
  el.innerHTML = (s.visit || []).map((d) => {
    const dead = !d.own && !(d.gifts || []).length;
    return '<span class="dart' + (dead ? " dead" : "") + '" data-seg="' + esc(d.seg) + '"><b>' + esc(d.seg) +
      "</b> " + esc(dartWords(st, d)) + "</span>";
  }).join("") + (hint ? '<span class="coach">Hint: ' + esc(hint.reason) + "</span>" : "");
}

// ---- the game, kept from events --------------------------------------------------------
// A port of hapenny/gamestate.py (apply, pending) and of follow() in
// hapenny/web/bridge.py: a dart's event carries what it changed, the rare
// visit, undo, new and win carry the whole state. tests/web checks the two agree.
const WHOLE = ["visit", "undo", "new", "win"];
const VISIT_MAX = 12;

function apply(st, ev) {
  const n = ev.ev;
  if (WHOLE.includes(n)) return ev.state === undefined ? null : ev.state;
  if (n !== "dart" || st == null) return st;
  if ("state" in ev) return ev.state;
  const sides = st.sides.map((s) => Object.assign({}, s, { marks: Object.assign({}, s.marks) }));
  const nx = Object.assign({}, st, { sides });
  if (ev.bed != null) {
    [ev.side].concat((ev.gifts || []).map((g) => g[0])).forEach((side, i) => {
      if (i < ev.tally.length) sides[side].marks[String(ev.bed)] = ev.tally[i];
    });
  }
  ["turn", "darts_left", "phase", "winner", "moves"].forEach((k) => { nx[k] = ev[k]; });
  if ("contenders" in ev) nx.contenders = ev.contenders; else delete nx.contenders;
  if ("visit" in st) {
    nx.visit = st.phase === "bull_off" && nx.phase !== "bull_off" ? []
      : st.visit.concat([[ev.seg, ev.side, ev.own, ev.gifts || [], ev.lost]]).slice(-VISIT_MAX);
  }
  if (nx.turn !== st.turn) nx.thrower = sides[nx.turn].members[0];
  nx.pending = pending(nx);
  return nx;
}

function pending(st) {
  if (st.winner != null) return [];
  const full = st.rules.marks;
  return st.sides.map((s, i) => (Object.values(s.marks).every((m) => m >= full) ? i : -1)).filter((i) => i >= 0);
}

function bedOf(seg) {
  if (seg === "SB" || seg === "DB") return 25;
  const d = seg.replace(/^[SIODT]+/, "");
  return /^\d+$/.test(d) ? Number(d) : null;
}

function visitOf(st, seen) {
  // the visit's darts from the state when the board names them there, else those this page saw
  if (!st || !("visit" in st)) return st ? seen : [];
  return st.visit.map(([seg, side, own, gifts, lost]) => ({ seg, side, own, gifts, lost, bed: bedOf(seg) }));
}

function follow(s, ev) {
  const st = s.state, nx = apply(st, ev);
  let visit = s.visit || [];
  if (ev.ev === "dart") {
    if (st != null && nx != null && nx.turn !== st.turn && nx.phase !== "bull_off") visit = [];
    visit = visit.concat([ev]).slice(-VISIT_MAX);
  } else if (ev.ev === "visit" || ev.ev === "new") {
    visit = [];
  } else if (ev.ev === "undo") {
    const moves = (nx || {}).moves || 0;
    visit = visit.filter((d) => (d.moves || 0) <= moves);
  }
  return Object.assign({}, s, { state: nx, visit: visitOf(nx, visit), last: ev });
}

// ---- the dartboard -------------------------------------------------------------------
function polar(r, deg) {
  const a = (deg - 90) * Math.PI / 180;
  return [r * Math.cos(a), r * Math.sin(a)];
}

function wedge(r0, r1, a0, a1, cls, seg) {
  const [x0, y0] = polar(r0, a0), [x1, y1] = polar(r1, a0), [x2, y2] = polar(r1, a1), [x3, y3] = polar(r0, a1);
  const f = (v) => v.toFixed(2);
  return '<path class="' + cls + '"' + (seg ? ' data-seg="' + seg + '"' : "") + ' d="M' + f(x0) + " " + f(y0) +
    "L" + f(x1) + " " + f(y1) + "A" + r1 + " " + r1 + " 0 0 1 " + f(x2) + " " + f(y2) + "L" + f(x3) + " " + f(y3) +
    "A" + r0 + " " + r0 + " 0 0 0 " + f(x0) + " " + f(y0) + 'Z"/>';
}

function drawBoardFace(svg, G, tap) {
  // `tap`: each segment carries its name (data-seg), to be thrown by a tap
  const seg = (s) => (tap ? s : null);
  let html = "";
  ORDER.forEach((n, i) => {
    const a0 = i * 18 - 9, a1 = a0 + 18, even = i % 2 === 0;
    html += wedge(G.outerBull, G.trebleIn, a0, a1, even ? "dark" : "light", seg("SI" + n));
    html += wedge(G.trebleIn, G.trebleOut, a0, a1, even ? "red" : "green", seg("T" + n));
    html += wedge(G.trebleOut, G.doubleIn, a0, a1, even ? "dark" : "light", seg("SO" + n));
    html += wedge(G.doubleIn, G.doubleOut, a0, a1, even ? "red" : "green", seg("D" + n));
    const [x, y] = polar(G.num, i * 18);
    html += '<text x="' + x.toFixed(1) + '" y="' + y.toFixed(1) + '" font-size="' + G.font + '">' + n + "</text>";
  });
  html += '<circle r="' + G.outerBull + '" class="green"' + (tap ? ' data-seg="SB"' : "") + "/>" +
    '<circle r="' + G.bull + '" class="red"' + (tap ? ' data-seg="DB"' : "") + '/><g class="darts"></g>';
  svg.innerHTML = html;
}

function segPoint(G, seg, k) {
  // where to draw a dart in `seg`: the middle of its ring (spread a little so repeats stay visible)
  const jitter = (k % 3 - 1) * 3;
  if (seg === "SB") return polar((G.bull + G.outerBull) / 2, 45 + k * 90);
  if (seg === "DB") return [jitter * G.bull / 20, 0];
  const m = /^(SI|SO|S|D|T)(\d+)$/.exec(seg);
  if (!m) return null;
  const i = ORDER.indexOf(Number(m[2]));
  if (i < 0) return null;
  const inner = (G.outerBull + G.trebleIn) / 2;
  const r = { SI: inner, S: inner, SO: (G.trebleOut + G.doubleIn) / 2, D: (G.doubleIn + G.doubleOut) / 2,
              T: (G.trebleIn + G.trebleOut) / 2 }[m[1]];
  return polar(r, i * 18 + jitter);
}

function drawDarts(svg, G, s) {
  const g = svg.querySelector(".darts");
  if (!g) return;
  g.innerHTML = (s.visit || []).map((d, k) => {
    const p = segPoint(G, d.seg, k);
    return p ? '<circle class="dart" r="' + G.dart + '" cx="' + p[0].toFixed(2) + '" cy="' + p[1].toFixed(2) +
      '" data-seg="' + esc(d.seg) + '"/>' : "";
  }).join("");
  const p = hint && segPoint(G, hint.seg, 1);
  if (p) {
    g.innerHTML += '<circle class="aim" r="' + 2 * G.dart + '" cx="' + p[0].toFixed(2) + '" cy="' + p[1].toFixed(2) +
      '" data-seg="' + esc(hint.seg) + '"/>';
  }
}

// ---- the coach -------------------------------------------------------------------------
// Where the thrower should aim, and why (the board's `hint`: the computer's
// own choice at the thrower's level); asked here, or by holding the board's
// undo button, it is ringed on the dartboards until the next dart or undo.
function showHint(h) {
  hint = h ? { seg: h.seg, reason: h.reason, moves: snap && snap.state ? snap.state.moves : null } : null;
  if (snap) draw(snap);
}

// ---- throwing from the page ---------------------------------------------------------------
// A dart entered by hand (a virtual board, or a bounce-out the board did not
// see): the board's `throw` command, scored exactly as a detected dart. It
// needs the pairing code like every other control.
function setThrowing(on) {
  document.body.classList.toggle("throwing", on);
  $("throw").hidden = !on;
  $("show-throw").setAttribute("aria-pressed", String(on));
}

function tapped(ev) {
  const t = ev.target.closest("[data-seg]");
  if (!t) return;
  t.classList.add("hit");
  setTimeout(() => t.classList.remove("hit"), 250);
  send({ cmd: "throw", seg: t.dataset.seg });
}

// ---- the whole page ------------------------------------------------------------------
function fillSelect(sel, variants, value) {
  if (sel.options.length !== variants.length) {
    sel.innerHTML = variants.map((v) => '<option value="' + esc(v) + '">' + esc(v) + "</option>").join("");
  }
  if (value !== undefined) sel.value = value;
}

function draw(s) {
  snap = s;
  const status = $("status");
  if (s.connected) {
    status.textContent = "board connected" + (s.info ? " (" + s.info.board + ")" : "");
    status.className = "status up";
  } else {
    status.textContent = "board disconnected";
    status.className = "status down";
  }
  const st = s.state;
  if (hint && (!st || st.moves !== hint.moves)) hint = null;
  drawTurn(st);
  // the last dart's gifts are outlined; taken from the snapshot, so a page
  // opened or reloaded mid-visit shows what a page that watched shows
  const last = (s.visit || [])[(s.visit || []).length - 1];
  lastGift = last ? (last.gifts || []).map(([side]) => ({ side, bed: last.bed })) : null;
  drawTally(st);
  drawVisit(s);
  drawDarts($("dartboard"), REAL, s);
  drawDarts($("throwboard"), TAP, s);
  $("rules").textContent = st ? rulesInWords(st) : "";
  if (s.info) fillSelect($("variant"), s.info.variants);
  if (s.info && s.config && document.activeElement.closest("#settings") === null) {
    fillSelect($("button_variant"), s.info.variants, s.config.variant);
    $("auto_next_ms").value = s.config.auto_next_ms;
    $("brightness").value = s.config.brightness;
    $("button_players").value = (s.config.players || []).join(", ");
  }
}

let errorTimer = 0;

function showError(msg) {
  // over the page, until the next command, a tap on it, or 10 s
  const e = $("error");
  e.textContent = msg;
  e.hidden = !msg;
  clearTimeout(errorTimer);
  if (msg) errorTimer = setTimeout(() => { e.hidden = true; }, 10000);
}

// ---- the pairing code ------------------------------------------------------------------
// Served beyond the host computer, commands need the code that hapenny web
// printed; its URL and QR code carry it in the fragment (#code=...), which no
// request sends. The page keeps it in this origin's storage (another site's
// page cannot read it, and unlike a cookie it rides on no request by itself)
// and sends it in a header with each command.
const CODE_KEY = "hapenny-code";

function keepCode(c) {
  sessionCode = c;
  try { localStorage.setItem(CODE_KEY, c); } catch (e) { /* private mode: this page's life only */ }
}

function takeCode() {
  const m = /(?:^#|&)code=([A-Za-z0-9_-]+)/.exec(location.hash);
  if (m) {
    keepCode(m[1]);
    history.replaceState(null, "", location.pathname + location.search); // off the address bar
  }
}

let sessionCode = null;

function code() {
  try { return localStorage.getItem(CODE_KEY) || sessionCode; } catch (e) { return sessionCode; }
}

function headers() {
  const h = { "Content-Type": "application/json" };
  const c = code();
  if (c) h["X-Hapenny-Code"] = c;
  return h;
}

async function checkAccess() {
  // a page without the code watches: the controls it may not use are not shown
  try {
    const r = await (await fetch("/api/access", { headers: headers() })).json();
    document.body.classList.toggle("watching", !r.play);
    $("watching").hidden = r.play;
    if (!r.play) setThrowing(false);
    return r.play;
  } catch (e) { return null; /* the server is away: the status badge says so */ }
}

async function send(body) {
  showError("");
  let res;
  try {
    res = await fetch("/api/cmd", { method: "POST", headers: headers(), body: JSON.stringify(body) });
  } catch (err) {
    showError("The server cannot be reached: is hapenny web still running?");
    return null;
  }
  const reply = await res.json().catch(() => ({ ok: false, msg: "the server's answer was not readable" }));
  if (!reply.ok) showError("Refused: " + (reply.msg || reply.error));
  if (reply.error === "pairing") checkAccess();
  return reply;
}

function names(text) {
  return text.split(",").map((s) => s.trim()).filter((s) => s.length);
}

function setup() {
  takeCode();
  checkAccess();
  drawBoardFace($("dartboard"), REAL, false);
  drawBoardFace($("throwboard"), TAP, true);
  new ResizeObserver(fitTally).observe($("tally-box"));
  $("throw").onclick = tapped;
  $("show-throw").onclick = () => setThrowing($("throw").hidden);
  $("error").onclick = () => showError("");
  $("watching").onsubmit = async (ev) => {
    // the code typed in: read off the board's beds, or from what hapenny web or hapenny wifi printed
    ev.preventDefault();
    const c = $("code").value.replace(/\s+/g, "");
    if (!/^[A-Za-z0-9_-]+$/.test(c)) { showError("The pairing code is letters and digits only"); return; }
    keepCode(c);
    const play = await checkAccess();
    if (play === false) showError("That is not the pairing code: try again");
    else if (play) { $("code").value = ""; showError(""); }
  };
  $("next").onclick = () => send({ cmd: "next" });
  $("undo").onclick = () => send({ cmd: "undo" });
  $("hint").onclick = async () => {
    const r = await send({ cmd: "hint" });
    if (r && r.ok) showHint(r.hint);
  };
  $("show-new").onclick = () => { $("new-game").hidden = !$("new-game").hidden; };
  $("show-settings").onclick = () => { $("settings").hidden = !$("settings").hidden; };
  $("use-teams").onchange = () => { $("teams").hidden = !$("use-teams").checked; $("players").disabled = $("use-teams").checked; };
  $("new-game").onsubmit = async (ev) => {
    ev.preventDefault();
    const body = { cmd: "new", variant: $("variant").value };
    if ($("use-teams").checked) {
      body.teams = $("teams").value.split("\n").map(names).filter((t) => t.length);
    } else {
      body.players = names($("players").value);
    }
    const o = $("overrides").value.trim();
    if (o) {
      try { body.rules = JSON.parse(o); } catch (e) { showError("Rule overrides: not JSON (" + e.message + ")"); return; }
    }
    const r = await send(body);
    if (r && r.ok) $("new-game").hidden = true;
  };
  $("settings").onsubmit = async (ev) => {
    ev.preventDefault();
    const set = {
      auto_next_ms: Number($("auto_next_ms").value), brightness: Number($("brightness").value),
      variant: $("button_variant").value, players: names($("button_players").value),
    };
    const r = await send({ cmd: "config", set });
    if (r && r.ok) $("settings").hidden = true;
  };
  connect();
}

let heard = Date.now();

function connect() {
  // EventSource reconnects by itself when the stream fails; the server
  // sends the whole snapshot first, so the page catches up at once. A
  // stream that went silent (Wi-Fi lost while the tablet slept: no error,
  // no data) is noticed by the server's ping and opened again.
  const es = new EventSource("/api/events");
  heard = Date.now();
  const watch = setInterval(() => {
    if (Date.now() - heard > 25000) {
      clearInterval(watch);
      es.close();
      connect();
    }
  }, 5000);
  es.onmessage = () => { heard = Date.now(); };
  es.addEventListener("ping", () => { heard = Date.now(); });
  es.addEventListener("snapshot", (e) => {
    heard = Date.now();
    const s = JSON.parse(e.data);
    // the board's own server sends "visit": [] and lets the state name the darts
    if (!s.visit || !s.visit.length) s.visit = visitOf(s.state, []);
    draw(s);
  });
  es.addEventListener("event", (e) => {
    heard = Date.now();
    const ev = JSON.parse(e.data);
    if (!snap || ev.ev === "boot") return; // a board that reset: its snapshot follows
    snap = follow(snap, ev);
    if (ev.ev === "hint") showHint(ev.hint); // the board's undo button held a second
    else draw(snap);
  });
  es.onerror = () => {
    const status = $("status");
    if (es.readyState !== EventSource.OPEN) {
      status.textContent = "server unreachable: reconnecting…";
      status.className = "status down";
    }
  };
}

setup();
