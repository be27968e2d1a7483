"use strict";
// Sign in with Apple JS, as AppleIDMock serves it at Apple's path
// (/appleauth/static/jsapi/appleid/1/en_US/appleid.auth.js): a small script compatible with
// Apple's for the calls a page makes (docs/frontend-tests.md, apple-behaviour.md §1.2
// "web_message"). Not Apple's code; written from its documented behaviour.
//
//   AppleID.auth.init({clientId, scope, redirectURI, state, nonce, usePopup})  or <meta name="appleid-signin-…">
//   AppleID.auth.signIn()      popup: a Promise of {authorization: {code, id_token, state}, user?};
//                              redirect: the browser goes to the authorize page, which form-posts to redirectURI
//   AppleID.auth.renderButton() draws the button into <div id="appleid-signin">
//
// Failures reject with {error}: popup_closed_by_user, popup_blocked_by_browser,
// user_trigger_new_signin_flow, or what the popup sent (user_cancelled_authorize). Both outcomes
// are also dispatched on document as AppleIDSignInOnSuccess / AppleIDSignInOnFailure, detail = data.
(function () {
  // The authorize server: the origin this script came from, except that Apple's CDN name stands
  // for appleid.apple.com (stand-in mode serves both names).
  var scriptURL = new URL(document.currentScript ? document.currentScript.src : "https://appleid.apple.com/");
  var AUTH_ORIGIN = scriptURL.hostname === "appleid.cdn-apple.com" ? "https://appleid.apple.com" : scriptURL.origin;
  var META = {clientId: "client-id", scope: "scope", redirectURI: "redirect-uri", state: "state", nonce: "nonce", usePopup: "use-popup"};
  var config = null;
  var pending = null; // {popup, resolve, reject, timer}

  function readMeta() {
    var found = {};
    Object.keys(META).forEach(function (key) {
      var tag = document.querySelector('meta[name="appleid-signin-' + META[key] + '"]');
      if (tag) found[key] = tag.getAttribute("content");
    });
    if (!found.clientId) return null;
    found.usePopup = found.usePopup === "true";
    return found;
  }

  function init(options) {
    if (!options || !options.clientId || !options.redirectURI) throw new Error("AppleID.auth.init: clientId and redirectURI are required");
    config = {clientId: options.clientId, scope: options.scope || "", redirectURI: options.redirectURI,
              state: options.state, nonce: options.nonce, usePopup: options.usePopup === true || options.usePopup === "true"};
  }

  function authorizeURL(mode) {
    var query = new URLSearchParams({client_id: config.clientId, redirect_uri: config.redirectURI,
                                     response_type: "code id_token", response_mode: mode});
    if (config.scope) query.set("scope", config.scope);
    if (config.state) query.set("state", config.state);
    if (config.nonce) query.set("nonce", config.nonce);
    if (mode === "web_message") { query.set("frame_id", String(Date.now())); query.set("m", "12"); query.set("v", "1.5.5"); }
    return AUTH_ORIGIN + "/auth/authorize?" + query.toString().replace(/\+/g, "%20");
  }

  function settle(data, failed) {
    var current = pending;
    pending = null;
    if (!current) return;
    clearInterval(current.timer);
    if (current.popup && !current.popup.closed) current.popup.close();
    document.dispatchEvent(new CustomEvent(failed ? "AppleIDSignInOnFailure" : "AppleIDSignInOnSuccess", {detail: data}));
    (failed ? current.reject : current.resolve)(data);
  }

  function onMessage(event) {
    if (event.origin !== AUTH_ORIGIN || !pending || typeof event.data !== "string") return;
    var message;
    try { message = JSON.parse(event.data); } catch (ignored) { return; }
    if (!message || message.method !== "oauthDone" || typeof message.data !== "object" || message.data === null) return;
    settle(message.data, "error" in message.data);
  }

  function signIn(options) {
    if (options) init(Object.assign({}, config || {}, options));
    if (!config) config = readMeta();
    if (!config) return Promise.reject(new Error("AppleID.auth.init was not called"));
    if (!config.usePopup) {
      window.location.assign(authorizeURL("form_post"));
      return new Promise(function () {});
    }
    if (pending) settle({error: "user_trigger_new_signin_flow"}, true);
    return new Promise(function (resolve, reject) {
      var left = Math.max(0, (window.screen.width - 700) / 2), top = Math.max(0, (window.screen.height - 700) / 2);
      var popup = window.open(authorizeURL("web_message"), "AppleAuthentication",
                              "width=700,height=700,left=" + left + ",top=" + top + ",resizable=yes,scrollbars=yes");
      pending = {popup: popup, resolve: resolve, reject: reject, timer: null};
      if (!popup) { settle({error: "popup_blocked_by_browser"}, true); return; }
      var mine = pending;
      mine.timer = setInterval(function () {
        if (pending === mine && popup.closed) settle({error: "popup_closed_by_user"}, true);
      }, 250);
    });
  }

  // Apple's documented button attributes: data-color black|white, data-border, data-type sign-in|continue.
  function renderButton() {
    var host = document.getElementById("appleid-signin");
    if (!host) return;
    var white = host.getAttribute("data-color") === "white";
    var border = host.getAttribute("data-border") === "true";
    var label = host.getAttribute("data-type") === "continue" ? "Continue with Apple" : "Sign in with Apple";
    var button = document.createElement("button");
    button.type = "button";
    button.className = "appleid-signin-button";
    button.setAttribute("aria-label", label);
    button.textContent = label;
    button.style.cssText = "font:500 16px -apple-system,Helvetica,Arial,sans-serif;min-width:200px;height:40px;padding:0 16px;" +
      "border-radius:6px;cursor:pointer;background:" + (white ? "#fff;color:#000;" : "#000;color:#fff;") +
      "border:1px solid " + (border || white ? "#000" : "transparent");
    button.addEventListener("click", function () { signIn().catch(function () {}); });
    host.replaceChildren(button);
  }

  window.addEventListener("message", onMessage);
  window.AppleID = {auth: {init: init, signIn: signIn, renderButton: renderButton}};
  function onReady() {
    if (!config) config = readMeta();
    renderButton();
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", onReady);
  else onReady();
})();
