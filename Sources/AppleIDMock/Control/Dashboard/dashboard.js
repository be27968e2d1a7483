"use strict";
// AppleIDMock dashboard. Loads GET /__mock/dashboard (HTML rendered on the server, every value
// escaped there) into the page's sections, loads it again when the mock changes, and sends every
// action to the control API the tests and the CLI use. Plain JavaScript, no build step.
(() => {
  const TOKEN_KEY = "appleid-mock-control-token";
  // Marks the page's own background requests: the requests section leaves them out.
  const OWN = { "X-AppleID-Mock-Dashboard": "1" };
  const WAIT = 25;
  const page = {
    meta: {}, rendered: new Map(), loading: false, again: false, blocked: false, fetchedAt: Date.now(),
    filters: { route: "", client: "" }, cursors: { events: null, requests: null, mail: null },
  };
  const $ = (selector) => document.querySelector(selector);
  const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
  const visible = () => document.visibilityState === "visible";

  // --- The control token (serve --control-token), kept for this tab only.

  function token() {
    try { return sessionStorage.getItem(TOKEN_KEY) || ""; } catch (_) { return ""; }
  }

  function setToken(value) {
    try {
      if (value) sessionStorage.setItem(TOKEN_KEY, value); else sessionStorage.removeItem(TOKEN_KEY);
    } catch (_) { /* storage off: the token lasts until the page reloads */ }
    $("#forget-token").hidden = !token();
  }

  function headers(extra) {
    const all = Object.assign({}, extra);
    const value = token();
    if (value) all.Authorization = "Bearer " + value;
    return all;
  }

  function askForToken(message) {
    page.blocked = true;
    $("#token-form").hidden = false;
    $("#dashboard").hidden = true;
    showLive(false, "needs the control token");
    say(message || "", message ? "error" : "");
    $("#token").focus();
  }

  // --- Status line and live indicator.

  function say(text, kind) {
    const line = $("#status");
    line.textContent = text;
    line.className = "status" + (kind ? " " + kind : "");
  }

  function showLive(on, text) {
    const live = $("#live");
    live.textContent = text;
    live.className = "live " + (on ? "on" : "off");
  }

  function describe(method, path, status, text) {
    let detail = text.trim();
    try {
      const body = JSON.parse(text);
      if (body && typeof body.error === "string") detail = body.error + (body.field ? " (field " + body.field + ")" : "");
    } catch (_) { /* not JSON: shown as it is */ }
    if (detail.length > 400) detail = detail.slice(0, 400) + "…";
    return method + " " + path + " → " + status + (detail ? "  " + detail : "");
  }

  // --- Loading the data.

  async function refresh() {
    if (page.loading) { page.again = true; return; }
    page.loading = true;
    try {
      do {
        page.again = false;
        const query = new URLSearchParams();
        if (page.filters.route) query.set("route", page.filters.route);
        if (page.filters.client) query.set("client", page.filters.client);
        const target = "/__mock/dashboard" + (query.toString() ? "?" + query : "");
        const response = await fetch(target, { headers: headers(OWN), cache: "no-store" });
        const text = await response.text();
        if (response.status === 401) {
          askForToken(token() ? "The mock refused this token." : "");
          return;
        }
        if (!response.ok) {
          say(describe("GET", target, response.status, text), "error");
          showLive(false, "error");
          return;
        }
        if (page.blocked) {
          page.blocked = false;
          $("#token-form").hidden = true;
          $("#dashboard").hidden = false;
          say("");
        }
        apply(text);
        showLive(true, "live · " + new Date().toLocaleTimeString());
      } while (page.again);
    } catch (_) {
      showLive(false, "the mock does not answer");
    } finally {
      page.loading = false;
    }
  }

  // The fragment's lines are its structure: each slot starts a line (`<div data-slot="users">`),
  // and so does each table row with an id (`<tr id="user-alice">`, `<tbody id="notification-3">`);
  // escaped values hold no line break and no "<". An unchanged slot is skipped; in a changed one
  // whose frame (everything but those rows) is unchanged, only new or changed rows are parsed,
  // and the rest stay as they are. Open <details> stay open.
  const ROW = /^<(tr|tbody) id="([^"]+)"/;

  function apply(html) {
    const open = Array.from(document.querySelectorAll("#dashboard details[open][id]"), (details) => details.id);
    for (const chunk of html.split(/\n(?=<div data-slot=")/)) {
      const name = (/^<div data-slot="([a-z-]+)"/.exec(chunk) || [])[1];
      const previous = page.rendered.get(name);
      if (!name || previous === chunk) continue;
      page.rendered.set(name, chunk);
      if (name === "meta") {
        page.meta = Object.assign({}, parse("", chunk).dataset);
        continue;
      }
      const target = document.querySelector('#dashboard [data-slot="' + name + '"]');
      if (!target || (previous !== undefined && patch(previous, chunk))) continue;
      target.replaceChildren(...parse("", chunk).childNodes);
    }
    for (const id of open) {
      const details = document.getElementById(id);
      if (details) details.open = true;
    }
    page.fetchedAt = Date.now();
    // What this render covers: the long polls wait for what comes after.
    page.cursors.events = numberOr(page.meta.lastEvent, page.cursors.events);
    page.cursors.requests = numberOr(page.meta.newestRequest, page.cursors.requests);
    page.cursors.mail = numberOr(page.meta.lastMail, page.cursors.mail);
    filterUsers();
    tick();
  }

  // The one element `markup` makes, parsed in `context` ("table" for a tbody, "tbody" for a row).
  function parse(context, markup) {
    const template = document.createElement("template");
    if (context === "") {
      template.innerHTML = markup;
      return template.content.firstElementChild;
    }
    template.innerHTML = context === "table" ? "<table>" + markup + "</table>" : "<table><tbody>" + markup + "</tbody></table>";
    return template.content.querySelector(context === "table" ? "table > tbody" : "tr");
  }

  function rows(chunk) {
    const frame = [];
    const items = [];
    for (const line of chunk.split("\n")) {
      const row = ROW.exec(line);
      if (row) items.push({ kind: row[1], id: row[2], line }); else frame.push(line);
    }
    return { frame: frame.join("\n"), items };
  }

  // Updates the slot's rows in place when only rows differ; false when it cannot.
  function patch(previous, chunk) {
    const before = rows(previous);
    const after = rows(chunk);
    if (before.frame !== after.frame || before.items.length === 0) return false;
    let cursor = document.getElementById(before.items[0].id);
    if (!cursor) return false;
    const container = cursor.parentNode;
    const lines = new Map(before.items.map((item) => [item.id, item.line]));
    for (const item of after.items) {
      const existing = document.getElementById(item.id);
      const mine = existing && existing.parentNode === container ? existing : null;
      let node = mine;
      if (!mine || lines.get(item.id) !== item.line) node = parse(item.kind === "tbody" ? "table" : "tbody", item.line);
      if (!node) return false;
      if (mine && node !== mine) {
        if (cursor === mine) cursor = node;
        mine.replaceWith(node);
      }
      if (node === cursor) {
        cursor = cursor.nextElementSibling;
      } else {
        container.insertBefore(node, cursor);
      }
    }
    while (cursor) {
      const next = cursor.nextElementSibling;
      cursor.remove();
      cursor = next;
    }
    return true;
  }

  function numberOr(text, fallback) {
    const value = Number(text);
    return text !== undefined && Number.isFinite(value) ? value : fallback;
  }

  // --- Long polls: a change in the mock's state (the event feed), a call to Apple's routes (the
  // request journal, whose own reads it does not record) and mail (the SMTP port) wake the page.

  async function whenVisible() {
    while (!visible()) await new Promise((resolve) => document.addEventListener("visibilitychange", resolve, { once: true }));
  }

  async function longPoll(next, seen) {
    for (;;) {
      await whenVisible();
      const url = page.blocked ? null : next();
      if (!url) { await sleep(1000); continue; }
      try {
        const response = await fetch(url, { headers: headers(OWN), cache: "no-store" });
        if (!response.ok) { await sleep(5000); continue; }
        if (seen(await response.json())) refresh();
      } catch (_) {
        showLive(false, "the mock does not answer");
        await sleep(3000);
        refresh();
      }
    }
  }

  function startPolls() {
    longPoll(() => page.cursors.events === null ? null : "/__mock/events?limit=1&wait=" + WAIT + "&after=" + page.cursors.events, (body) => {
      if (typeof body.last === "number") page.cursors.events = Math.max(page.cursors.events, body.last);
      return Array.isArray(body.events) && body.events.length > 0;
    });
    longPoll(() => page.meta.journal !== "on" || page.cursors.requests === null ? null
      : "/__mock/requests?control=false&limit=1&wait=" + WAIT + "&after=" + page.cursors.requests, (body) => {
      if (typeof body.last === "number") page.cursors.requests = Math.max(page.cursors.requests, body.last);
      return Array.isArray(body.requests) && body.requests.length > 0;
    });
    longPoll(() => page.meta.mail !== "on" || page.cursors.mail === null ? null
      : "/__mock/mail?limit=1&wait=" + WAIT + "&after=" + page.cursors.mail, (body) => {
      const messages = Array.isArray(body.messages) ? body.messages : [];
      if (messages.length > 0) page.cursors.mail = Math.max(page.cursors.mail, messages[messages.length - 1].id);
      return messages.length > 0;
    });
    // A delivery attempt or a forwarded copy changes nothing in the feed: while one is under
    // way, look again every 2 s. And every 30 s anyway, while the page is in view.
    setInterval(() => { if (visible() && !page.blocked && Number(page.meta.pending || 0) > 0) refresh(); }, 2000);
    setInterval(() => { if (visible() && !page.blocked) refresh(); }, 30000);
    document.addEventListener("visibilitychange", () => { if (visible()) refresh(); });
  }

  // --- The mock clock runs between loads: its time ticks on from the last load, and every mock
  // time on the page says how long ago it was (a CSS ::after shows data-ago).

  function mockNow() {
    const now = document.getElementById("mock-now");
    if (!now) return null;
    const running = now.dataset.frozen === "false";
    return Number(now.dataset.epoch) + (running ? Math.floor((Date.now() - page.fetchedAt) / 1000) : 0);
  }

  function span(seconds) {
    if (seconds < 60) return seconds + " s";
    if (seconds < 3600) return Math.floor(seconds / 60) + " min";
    if (seconds < 86400) return Math.floor(seconds / 3600) + " h";
    return Math.floor(seconds / 86400) + " d";
  }

  function tick() {
    const epoch = mockNow();
    if (epoch === null) return;
    const now = document.getElementById("mock-now");
    if (now.dataset.frozen === "false") {
      const text = new Date(epoch * 1000).toISOString().replace(/\.\d{3}Z$/, "Z");
      now.textContent = text;
      now.setAttribute("datetime", text);
      const seconds = document.getElementById("mock-epoch");
      if (seconds) seconds.textContent = String(epoch);
    }
    for (const time of document.querySelectorAll("#dashboard time[data-at]")) {
      const difference = epoch - Number(time.dataset.at);
      const ago = difference === 0 ? "now" : difference > 0 ? span(difference) + " ago" : "in " + span(-difference);
      if (time.dataset.ago !== ago) time.dataset.ago = ago;
    }
  }

  // --- Actions: each one control API call, then a fresh load.

  async function act(method, path, body, button) {
    if (!/^(GET|POST|DELETE)$/.test(method) || !/^\/__mock\/\S*$/.test(path)) return;
    if (button) button.disabled = true;
    const init = { method, headers: headers({}), cache: "no-store" };
    if (body !== undefined) {
      init.body = body;
      init.headers["Content-Type"] = "application/json";
    }
    say(method + " " + path + " …");
    try {
      const response = await fetch(path, init);
      const text = await response.text();
      if (response.status === 401) {
        askForToken("The control API needs the token.");
        return;
      }
      say(describe(method, path, response.status, text), response.ok ? "ok" : "error");
    } catch (error) {
      say(method + " " + path + " failed: " + error.message, "error");
    } finally {
      if (button) button.disabled = false;
    }
    refresh();
  }

  document.addEventListener("click", (event) => {
    const button = event.target.closest("button[data-method]");
    if (!button) return;
    event.preventDefault();
    if (button.dataset.confirm && !window.confirm(button.dataset.confirm)) return;
    act(button.dataset.method, button.dataset.path, button.dataset.body, button);
  });

  $("#add-user-form").addEventListener("submit", (event) => {
    event.preventDefault();
    const body = { id: $("#new-id").value.trim(), email: $("#new-email").value.trim() };
    if ($("#new-given").value) body.given_name = $("#new-given").value;
    if ($("#new-family").value) body.family_name = $("#new-family").value;
    body.hide_email = $("#new-hide").checked;
    body.real_user_status = Number($("#new-status").value);
    if ($("#new-relay").value) body.relay_domain = $("#new-relay").value;
    act("POST", "/__mock/users", JSON.stringify(body), event.submitter);
  });

  $("#advance-form").addEventListener("submit", (event) => {
    event.preventDefault();
    const seconds = Number($("#advance-amount").value) * Number($("#advance-unit").value);
    if (!Number.isFinite(seconds)) { say("Advance by a number.", "error"); return; }
    act("POST", "/__mock/clock", JSON.stringify({ advance: seconds }), event.submitter);
  });

  $("#set-form").addEventListener("submit", (event) => {
    event.preventDefault();
    act("POST", "/__mock/clock", JSON.stringify({ set: $("#set-time").value.trim() }), event.submitter);
  });

  const requestFilter = $("#request-filter");
  requestFilter.addEventListener("submit", (event) => {
    event.preventDefault();
    page.filters = { route: $("#filter-route").value.trim(), client: $("#filter-client").value.trim() };
    refresh();
  });
  requestFilter.addEventListener("reset", () => {
    page.filters = { route: "", client: "" };
    setTimeout(refresh, 0);
  });

  function filterUsers() {
    const query = $("#user-filter").value.trim().toLowerCase();
    for (const row of document.querySelectorAll('#dashboard [data-slot="users"] tbody tr')) {
      row.hidden = query !== "" && !row.textContent.toLowerCase().includes(query);
    }
  }
  $("#user-filter").addEventListener("input", filterUsers);

  $("#token-form").addEventListener("submit", (event) => {
    event.preventDefault();
    setToken($("#token").value.trim());
    $("#token").value = "";
    say("");
    refresh();
  });
  $("#forget-token").addEventListener("click", () => { setToken(""); refresh(); });

  // The table headers stick below the page header, whatever its height.
  const headerHeight = () => document.documentElement.style.setProperty("--header-height", $(".top").offsetHeight + "px");
  window.addEventListener("resize", headerHeight);
  headerHeight();

  setToken(token());
  setInterval(tick, 1000);
  refresh();
  startPolls();
})();
