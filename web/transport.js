// The panels' transport: how the page asks for data and asks the editor to open a file.
//
// One interface, three implementations, picked once at load:
// - "http":   `threadradar serve`: POST /api/<method> with the params as JSON.
// - "vscode": an editor webview: postMessage({id, method, params}) to the extension, which
//             forwards `threadRadar/<method>` to the language server and answers {id, result|error}.
// - "static": `threadradar html`: answers only what was exported with the page and says so
//             otherwise (it never fakes a computation).
// Every method returns a Promise; errors are Error objects whose message is one sentence.
"use strict";
(function () {
  function canonical(value) {
    // JSON with sorted keys, so equal params give equal strings (the static lookup key).
    if (Array.isArray(value)) return "[" + value.map(canonical).join(",") + "]";
    if (value && typeof value === "object") {
      return "{" + Object.keys(value).sort().filter((k) => value[k] !== undefined && value[k] !== null)
        .map((k) => JSON.stringify(k) + ":" + canonical(value[k])).join(",") + "}";
    }
    return JSON.stringify(value);
  }

  function httpTransport() {
    async function request(method, params) {
      const res = await fetch("/api/" + encodeURIComponent(method), {
        method: "POST",
        headers: { "Content-Type": "application/json" },
        body: JSON.stringify(params || {}),
      });
      let body;
      try { body = await res.json(); } catch (e) { throw new Error("The server sent an unreadable answer (HTTP " + res.status + ")."); }
      if (!res.ok) throw new Error(body && body.error ? body.error : "HTTP " + res.status);
      return body;
    }
    return {
      mode: "http",
      request,
      navigate: (file, line) => request("navigate", { file, line }),
    };
  }

  function vscodeTransport(api) {
    let next = 1;
    const pending = new Map();
    window.addEventListener("message", (ev) => {
      const msg = ev.data;
      if (!msg || typeof msg.id !== "number" || !pending.has(msg.id)) return;
      const { resolve, reject } = pending.get(msg.id);
      pending.delete(msg.id);
      if (msg.error) reject(new Error(String(msg.error))); else resolve(msg.result);
    });
    function request(method, params) {
      const id = next++;
      return new Promise((resolve, reject) => {
        pending.set(id, { resolve, reject });
        api.postMessage({ id, method, params: params || {} });
      });
    }
    return {
      mode: "vscode",
      request,
      navigate: (file, line) => { api.postMessage({ method: "navigate", params: { file, line } }); return Promise.resolve({ ok: true }); },
    };
  }

  function staticTransport(data) {
    const STATIC = "This static export cannot compute that (another thread selection, filter or theme); open the run with `threadradar serve RUN` to explore it.";
    let filter = [];
    async function request(method, params) {
      const p = Object.assign({}, params || {});
      if (method === "filter") {
        if (p.exclude_threads && p.exclude_threads.length) throw staticError();
        return { exclude_threads: filter };
      }
      if (method === "runs") return { runs: [], current: data.run_name || null };
      const key = method + " " + canonical(normalise(method, p));
      if (Object.prototype.hasOwnProperty.call(data.answers, key)) return data.answers[key];
      throw staticError();
    }
    function staticError() {
      /** @type {Error & {isStatic?: boolean}} */
      const e = new Error(STATIC);
      e.isStatic = true;
      return e;
    }
    return {
      mode: "static",
      request,
      navigate: (file, line) => Promise.resolve({ ok: true, shown: file + ":" + line }),
    };
  }

  // The parts of a request the static export keys on (sizes of the box are ignored).
  function normalise(method, p) {
    const base = { exclude_threads: p.exclude_threads && p.exclude_threads.length ? p.exclude_threads : undefined, states: p.states && p.states !== "auto" ? p.states : undefined, theme: p.theme && p.theme !== "light" ? p.theme : undefined };
    if (method === "overview") {
      return Object.assign(base, {
        include: p.include && p.include.length ? p.include : undefined,
        exclude: p.exclude && p.exclude.length ? p.exclude : undefined,
        hide_stdlib: p.hide_stdlib || undefined,
        hide_third_party: p.hide_third_party || undefined,
        only_file: p.only_file || undefined,
      });
    }
    if (method === "detail" || method === "glyph") return Object.assign(base, { artifact: p.artifact });
    return base;
  }

  // A panel's refresh where the latest request wins: `fetch()`'s answer, or null when a newer
  // request (`st.seq`) superseded it or it failed; a failure is shown in `info` and on the root's
  // data-error (which the panel tests read), a success clears that.
  async function latest(st, root, info, fetch) {
    const seq = ++st.seq;
    let r;
    try { r = await fetch(); }
    catch (e) {
      if (seq !== st.seq) return null;
      info.textContent = e.message;
      root.setAttribute("data-error", e.message);
      return null;
    }
    if (seq !== st.seq) return null;
    root.removeAttribute("data-error");
    return r;
  }

  let transport;
  const dataEl = document.getElementById("static-data");
  const raw = dataEl ? dataEl.textContent.trim() : "";
  if (raw && raw !== "{{DATA}}" && raw !== "null") {
    transport = staticTransport(JSON.parse(raw));
  } else if (typeof acquireVsCodeApi === "function") {
    transport = vscodeTransport(acquireVsCodeApi()); // eslint-disable-line no-undef
  } else {
    transport = httpTransport();
  }
  window.ThreadRadarTransport = Object.assign(transport, { canonical, normalise, latest });
})();
