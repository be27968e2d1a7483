"use strict";
// Sign in with Apple JS, as AppleIDMock serves it at Apple's path
// (/appleauth/static/jsapi/appleid/1/en_US/appleid.auth.js). Not Apple's code: written to behave as
// Apple's v1.5.6 does for everything a page can see (docs/frontend-tests.md, apple-behaviour.md §13),
// including where Apple's throws, so a page that works here works against Apple.
//
//   AppleID.auth.init({clientId, redirectURI, scope, state, nonce, usePopup, codeChallenge, codeChallengeMethod})
//     or the <meta name="appleid-signin-…"> tags (client-id, scope, redirect-uri, state, nonce, use-popup,
//     code-challenge, code-challenge-method; dev-env, dev-uri, dev-path); what init is given wins.
//   AppleID.auth.signIn(request?)  request overrides only scope, redirectURI, state, nonce and the PKCE pair.
//     popup: a Promise of {authorization: {code, id_token, state}, user?}; it rejects with {error}:
//     popup_closed_by_user, popup_blocked_by_browser, user_trigger_new_signin_flow, or what the popup
//     sent (user_cancelled_authorize). redirect: the browser goes to the authorize page.
//   AppleID.auth.renderButton()  draws the button into <div id="appleid-signin"> (run by init too).
//   Events on document: AppleIDSigInLoaded (Apple's spelling) once loaded; AppleIDSignInOnSuccess and
//     AppleIDSignInOnFailure, whose detail carries the data's fields and a `data` member holding the
//     same object (Apple's sample reads detail.data, much code reads detail.authorization: [U]).
(function () {
  var VERSION = "1.5.6";
  // The authorize server: the origin this script came from, except that Apple's CDN name stands for
  // appleid.apple.com (stand-in mode serves both names). Messages are taken from that origin only,
  // unless the dev meta tags say otherwise, as in Apple's script.
  var scriptURL = new URL(document.currentScript ? document.currentScript.src : "https://appleid.apple.com/");
  var server = {
    base: scriptURL.hostname === "appleid.cdn-apple.com" ? "https://appleid.apple.com" : scriptURL.origin,
    path: "/auth/authorize",
    env: "prod"
  };
  var trustedOrigin = server.base;
  var META = {clientId: "client-id", scope: "scope", redirectURI: "redirect-uri", state: "state", nonce: "nonce",
              usePopup: "use-popup", codeChallenge: "code-challenge", codeChallengeMethod: "code-challenge-method"};
  var OPTIONAL = ["scope", "state", "nonce", "codeChallenge", "codeChallengeMethod"];
  var QUERY = {scope: "scope", state: "state", nonce: "nonce", codeChallenge: "code_challenge",
               codeChallengeMethod: "code_challenge_method"};
  var config = null;      // the checked configuration, once init ran or the meta tags were read
  var given = {};         // what init was given: it wins over the meta tags
  var source = "0";       // m's first digit: 1 init, 2 the meta tags
  var pending = null;     // {popup, resolve, reject, timer}

  function fail(message) { throw new Error(message); }

  // Apple's checks: clientId and redirectURI strings, the optional fields strings when given,
  // usePopup a boolean when given.
  function checked(options) {
    if (!options.clientId || typeof options.clientId !== "string") fail('The "clientId" should be a string.');
    if (!options.redirectURI || typeof options.redirectURI !== "string") fail('The "redirectURI" should be a string.');
    var out = {clientId: options.clientId, redirectURI: options.redirectURI, usePopup: false};
    OPTIONAL.forEach(function (key) {
      if (!options[key]) return;
      if (typeof options[key] !== "string") fail('The "' + key + '" should be a string.');
      out[key] = options[key];
    });
    if (options.usePopup !== undefined) {
      if (typeof options.usePopup !== "boolean") fail('The "usePopup" should be boolean.');
      out.usePopup = options.usePopup;
    }
    return out;
  }

  function metaTags() {
    var found = {};
    Object.keys(META).map(function (key) { return META[key]; }).concat(["dev-env", "dev-uri", "dev-path"]).forEach(function (name) {
      var tag = document.querySelector('meta[name="appleid-signin-' + name + '"]');
      if (tag) found[name] = tag.getAttribute("content") || "";
    });
    return found;
  }

  function init(options) {
    if (!options || typeof options !== "object") fail('The "clientId" should be a string.');
    config = checked(options);  // as Apple's: this call's options alone are checked and used
    given = Object.assign({}, given, options);
    source = "1";
    renderButton();
  }

  // At DOMContentLoaded, as Apple's: the meta tags, with what init was given on top.
  function readMetaTags() {
    var tags = metaTags();
    if (Object.keys(tags).length === 0) return;
    if (tags["dev-env"]) server.env = tags["dev-env"];
    if (tags["dev-path"]) server.path = tags["dev-path"];
    if (tags["dev-uri"]) {
      server.base = tags["dev-uri"];
      if (server.env === "dev") trustedOrigin = server.base;
    }
    var fromTags = {};
    Object.keys(META).forEach(function (key) {
      if (META[key] in tags) fromTags[key] = tags[META[key]];
    });
    fromTags.usePopup = fromTags.usePopup === "true";
    config = checked(Object.assign(fromTags, given));
    source = "2";
  }

  function frameID() {
    if (window.crypto && typeof window.crypto.randomUUID === "function") return window.crypto.randomUUID();
    var bytes = window.crypto.getRandomValues(new Uint8Array(16));
    bytes[6] = (bytes[6] & 0x0f) | 0x40;
    bytes[8] = (bytes[8] & 0x3f) | 0x80;
    var hex = Array.prototype.map.call(bytes, function (b) { return (b + 0x100).toString(16).slice(1); }).join("");
    return [hex.slice(0, 8), hex.slice(8, 12), hex.slice(12, 16), hex.slice(16, 20), hex.slice(20)].join("-");
  }

  // m: where the configuration came from (1 init, 2 meta tags) and how the sign-in began (1 a call
  // of signIn, 2 the button); the mock reads neither, Apple's exact formula is [U].
  function authorizeURL(request, mode, trigger) {
    var query = "client_id=" + encodeURIComponent(request.clientId) + "&redirect_uri=" + encodeURIComponent(request.redirectURI) +
                "&response_type=" + encodeURIComponent("code id_token");
    Object.keys(QUERY).forEach(function (key) {
      if (request[key]) query += "&" + QUERY[key] + "=" + encodeURIComponent(request[key]);
    });
    query += "&response_mode=" + encodeURIComponent(mode);
    if (mode === "web_message") query += "&frame_id=" + frameID() + "&m=" + source + trigger + "&v=" + VERSION;
    return server.base + server.path + "?" + query;
  }

  function settle(data, failed) {
    var current = pending;
    pending = null;
    if (!current) return;
    clearInterval(current.timer);
    if (current.popup && !current.popup.closed) current.popup.close();
    announce(data, failed);
    (failed ? current.reject : current.resolve)(data);
  }

  function announce(data, failed) {
    var detail = Object.assign({}, data, {data: data});
    document.dispatchEvent(new CustomEvent(failed ? "AppleIDSignInOnFailure" : "AppleIDSignInOnSuccess", {detail: detail}));
  }

  function onMessage(event) {
    if (event.origin !== trustedOrigin || !pending || typeof event.data !== "string") return;
    var message;
    try { message = JSON.parse(event.data); } catch (ignored) { return; }
    if (!message || message.method !== "oauthDone" || typeof message.data !== "object" || message.data === null) return;
    settle(message.data, "error" in message.data);
  }

  function start(request, trigger) {
    if (!config) fail('The "init" function must be called first.');
    var effective = Object.assign({}, config);
    if (request !== undefined && request !== null) {
      if (typeof request !== "object" || Array.isArray(request)) fail('The "signinConfig" must be "object".');
      ["redirectURI"].concat(OPTIONAL).forEach(function (key) {
        if (!request[key]) return;
        if (typeof request[key] !== "string") fail('The "' + key + '" should be a string.');
        effective[key] = request[key];
      });
    }
    if (!effective.usePopup) {
      window.location.assign(authorizeURL(effective, "form_post", trigger));
      return new Promise(function () {});
    }
    if (pending) settle({error: "user_trigger_new_signin_flow"}, true);
    return new Promise(function (resolve, reject) {
      var left = Math.max(0, (window.innerWidth || screen.width) / 2 - 350 + (window.screenLeft || 0));
      var top = Math.max(0, (window.innerHeight || screen.height) / 2 - 350 + (window.screenTop || 0));
      var popup = window.open(authorizeURL(effective, "web_message", trigger), "_blank",
                              "width=700,height=700,left=" + left + ",top=" + top + ",resizable=no,location=no,menubar=no");
      pending = {popup: popup, resolve: resolve, reject: reject, timer: null};
      if (!popup) { settle({error: "popup_blocked_by_browser"}, true); return; }
      // A closed popup rejects with popup_closed_by_user once its page was seen loaded (cross-origin).
      // A page whose Cross-Origin-Opener-Policy cuts the popup off sees it "closed" before that while
      // it stays open: then, as Apple's, the promise stays pending (docs/apple-behaviour.md §1.2).
      // Loaded means seen cross-origin and open on two checks in a row: as the cut is made, a
      // browser can show the popup cross-origin for a moment before it shows it closed.
      var mine = pending;
      mine.seen = 0;
      mine.timer = setInterval(function () {
        if (pending !== mine) return;
        if (popup.closed) {
          if (mine.loaded) settle({error: "popup_closed_by_user"}, true);
          else clearInterval(mine.timer);
          return;
        }
        if (!mine.loaded) {
          try { void popup.document.title; mine.seen = 0; } catch (crossOrigin) { mine.loaded = ++mine.seen >= 2; }
        }
      }, 100);
    });
  }

  function signIn(request) { return start(request, "1"); }

  // The button Apple documents: data-mode center-align | left-align | logo-only, data-type
  // sign-in | continue | sign-up, data-color black | white, data-border (on unless "false"),
  // data-border-radius (percent, 0 to 50), data-width / data-height (pixels or a percentage),
  // data-logo-size small | medium | large, data-logo-position and data-label-position (left-align).
  var LABELS = {"sign-in": "Sign in with Apple", "continue": "Continue with Apple", "sign-up": "Sign up with Apple"};
  var LOGO = {small: 12, medium: 16, large: 20};

  function size(value) {
    if (!value) return "100%";
    return /^\d+(\.\d+)?%$/.test(value) ? value : (/^\d+(\.\d+)?$/.test(value) ? value + "px" : "100%");
  }

  function renderButton() {
    var host = document.getElementById("appleid-signin");
    if (!host) return;
    var data = host.dataset;
    var mode = ["left-align", "logo-only"].indexOf(data.mode) >= 0 ? data.mode : "center-align";
    var type = data.type === "sign in" ? "sign-in" : (LABELS[data.type] ? data.type : "sign-in");
    var black = data.color !== "white";
    var border = data.border !== "false";
    var radius = Math.min(50, Math.max(0, parseFloat(data.borderRadius || "15") || 0));
    var logo = LOGO[data.logoSize] || LOGO.small;
    var label = LABELS[type];
    var button = document.createElement("div");
    button.setAttribute("role", "button");
    button.setAttribute("tabindex", "0");
    button.setAttribute("aria-label", label);
    button.className = "appleid-signin-button appleid-signin-" + mode;
    button.style.cssText = "display:flex;align-items:center;box-sizing:border-box;cursor:pointer;" +
      "font:500 16px -apple-system,Helvetica,Arial,sans-serif;min-width:" + (mode === "logo-only" ? "30px" : "130px") +
      ";max-width:375px;min-height:30px;max-height:64px;width:" + size(data.width) + ";height:" + size(data.height) +
      ";border-radius:" + radius + "%;justify-content:" + (mode === "center-align" || mode === "logo-only" ? "center" : "flex-start") +
      ";background:" + (black ? "#000;color:#fff" : "#fff;color:#000") + ";border:" + (border ? ".5px solid #000" : "none");
    var mark = document.createElement("span");
    mark.className = "appleid-signin-logo";
    mark.setAttribute("aria-hidden", "true");
    mark.style.cssText = "display:inline-block;width:" + logo + "px;height:" + logo + "px;border-radius:50%;background:currentColor" +
      (mode === "left-align" ? ";margin-left:" + (parseFloat(data.logoPosition) || 0) + "px" : "");
    button.appendChild(mark);
    if (mode !== "logo-only") {
      var text = document.createElement("span");
      text.className = "appleid-signin-label";
      text.textContent = label;
      text.style.cssText = "margin-left:" + (mode === "left-align" ? (parseFloat(data.labelPosition) || 8) : 8) + "px";
      button.appendChild(text);
    }
    host.replaceChildren(button);
    if (!host.dataset.appleidSigninBound) {
      host.dataset.appleidSigninBound = "true";
      var press = function () { start(undefined, "2").catch(function () {}); };
      host.addEventListener("click", press);
      host.addEventListener("keydown", function (event) {
        if (event.key === "Enter" || event.key === " ") { event.preventDefault(); press(); }
      });
    }
  }

  window.addEventListener("message", onMessage);
  window.AppleID = {auth: {init: init, signIn: signIn, renderButton: renderButton}};
  function onReady() {
    readMetaTags();
    renderButton();
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", onReady);
  else onReady();
  setTimeout(function () { document.dispatchEvent(new Event("AppleIDSigInLoaded", {bubbles: true, cancelable: true})); });
})();
