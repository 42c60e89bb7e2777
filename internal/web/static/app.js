// dsh web: follows a session's log and unfolds long cards. The server renders every
// card; this script only places the HTML fragments it sends. Loaded from /static/
// because the Content-Security-Policy allows no inline script.
'use strict';

(function () {
  const log = document.getElementById('log');
  const conn = document.getElementById('conn');

  // fragment parses one server-rendered element. A <template> parses without
  // running anything, and the CSP would refuse inline script anyway.
  function fragment(html) {
    const t = document.createElement('template');
    t.innerHTML = html;
    return t.content.firstElementChild;
  }

  function nearBottom() {
    return window.innerHeight + window.scrollY >= document.documentElement.scrollHeight - 80;
  }

  function follow(url) {
    const es = new EventSource(url);
    // The badge tells whether the page is following the log: new records show up
    // by themselves while it says so.
    const labels = { live: 'following the log', reconnecting: 'reconnecting…', disconnected: 'not following' };
    const state = function (s) {
      if (conn) {
        conn.textContent = labels[s];
        conn.dataset.state = s;
      }
      document.body.dataset.conn = s;
    };
    es.addEventListener('open', function () { state('live'); });
    es.addEventListener('error', function () {
      state(es.readyState === EventSource.CLOSED ? 'disconnected' : 'reconnecting');
    });
    // An item is appended, or replaces the element with its id: a call's result
    // replaces the running call and its output.
    es.addEventListener('item', function (e) {
      const el = fragment(e.data);
      if (!el) return;
      const stick = nearBottom();
      const old = el.id ? document.getElementById(el.id) : null;
      if (old) old.replaceWith(el); else log.append(el);
      if (stick) window.scrollTo(0, document.documentElement.scrollHeight);
    });
    // A chunk of a running command's output is appended as text to its call.
    es.addEventListener('progress', function (e) {
      const el = fragment(e.data);
      const call = el && document.getElementById(el.dataset.call);
      const out = call && call.querySelector('.progress');
      if (!out) return;
      const stick = nearBottom();
      out.append(el.textContent);
      if (stick) window.scrollTo(0, document.documentElement.scrollHeight);
    });
  }

  if (log && log.dataset.events) follow(log.dataset.events);

  // Opening a folded body loads the whole card and swaps it in. Without script
  // the fold holds a link to the same card.
  document.addEventListener('toggle', function (e) {
    const d = e.target;
    if (!(d instanceof HTMLDetailsElement) || !d.open || !d.dataset.src || d.dataset.loading) return;
    const card = d.closest('article');
    if (!card) return;
    d.dataset.loading = '1';
    card.setAttribute('aria-busy', 'true');
    fetch(d.dataset.src, { credentials: 'same-origin' })
      .then(function (r) {
        if (!r.ok) throw new Error(r.status + ' ' + r.statusText);
        return r.text();
      })
      .then(function (html) {
        const doc = new DOMParser().parseFromString(html, 'text/html');
        const full = doc.getElementById(card.id);
        if (!full) throw new Error('no card in the answer');
        full.dataset.unfolded = 'true';
        card.replaceWith(document.adoptNode(full));
      })
      .catch(function (err) {
        card.removeAttribute('aria-busy');
        delete d.dataset.loading;
        d.append(' (could not load: ' + err.message + ')');
      });
  }, true);
})();
