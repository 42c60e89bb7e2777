// dsh web: follows a session's log and unfolds long cards; on a session the
// server drives, it sends what the user types and answers. The server renders
// every card; this script only places the HTML fragments it sends and posts
// JSON. Loaded from /static/ because the Content-Security-Policy allows no
// inline script.
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

  // post sends JSON from the page: the cookie carries the token and the
  // browser the Origin, which the server checks on every POST.
  function post(url, body) {
    return fetch(url, {
      method: 'POST', credentials: 'same-origin',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify(body || {}),
    });
  }

  // say shows a line of the server's in the log (or the list): an error, a notice.
  function say(text, where) {
    const p = document.createElement('p');
    p.className = 'item note notice';
    p.dataset.item = 'notice';
    p.textContent = text;
    (where || log || document.querySelector('main')).append(p);
  }

  // open asks the server to open a session (a new one, or one to go on with)
  // and goes to its page. A folder whose settings wait for the user's trust
  // asks it first, on the page.
  function open(url, body, where) {
    post(url, body).then(function (r) {
      if (r.status === 200) return r.json().then(function (j) { location.href = j.url; });
      if (r.status === 409) return r.json().then(function (j) { askTrust(j.trust, url, body, where); });
      return r.text().then(function (t) { say(t.trim(), where); });
    }).catch(function (err) { say(String(err), where); });
  }

  function askTrust(t, url, body, where) {
    const box = document.createElement('div');
    box.className = 'ask trust';
    const p = document.createElement('p');
    p.className = 'ask-head';
    p.textContent = 'Trust ' + t.dir + '? Its ' + t.what + ' may then set:';
    const ul = document.createElement('ul');
    (t.ignored || []).forEach(function (i) {
      const li = document.createElement('li');
      li.textContent = i;
      ul.append(li);
    });
    box.append(p, ul);
    [['Trust the folder', true], ['Do not trust it', false]].forEach(function (b) {
      const btn = document.createElement('button');
      btn.type = 'button';
      btn.textContent = b[0];
      btn.dataset.trust = String(b[1]);
      btn.addEventListener('click', function () {
        box.remove();
        open(url, Object.assign({}, body, { trust: b[1] }), where);
      });
      box.append(btn);
    });
    (where || document.querySelector('main')).append(box);
  }

  const start = document.getElementById('new-session');
  if (start) {
    start.addEventListener('submit', function (e) {
      e.preventDefault();
      open('/new', { dir: start.elements.dir.value }, start);
    });
  }

  // A session's own buttons: continue it here, join it live, delete it (a
  // second click confirms).
  document.querySelectorAll('.actions [data-post]').forEach(function (b) {
    const base = b.closest('.actions').dataset.base;
    b.addEventListener('click', function () {
      const what = b.dataset.post;
      if (what === 'delete') {
        if (!b.dataset.armed) {
          b.dataset.armed = '1';
          b.textContent = 'Delete: click again to confirm';
          return;
        }
        post(base + '/delete').then(function (r) {
          if (r.ok) location.href = '/';
          else r.text().then(function (t) { say(t.trim()); });
        });
        return;
      }
      if (what === 'rename') {
        post(base + '/rename', { title: b.closest('.actions').querySelector('input[name="title"]').value }).then(function (r) {
          if (r.ok) location.reload();
          else r.text().then(function (t) { say(t.trim()); });
        });
        return;
      }
      open(base + '/' + what, {}, b.closest('.actions'));
    });
  });

  const comp = document.getElementById('composer');
  if (comp) drive(comp);

  // drive wires the composer of a session this server drives: prompts and
  // commands go to /input (the host's one door), the boxes of its permission
  // requests and questions come and go on /control.
  function drive(comp) {
    const base = comp.dataset.base;
    const text = comp.elements.text;
    const files = comp.elements.files;
    const asks = document.getElementById('asks');

    function readFile(f) {
      return new Promise(function (resolve, reject) {
        const fr = new FileReader();
        fr.onload = function () { resolve({ name: f.name, type: f.type, data: String(fr.result).replace(/^[^,]*,/, '') }); };
        fr.onerror = function () { reject(fr.error); };
        fr.readAsDataURL(f);
      });
    }

    function send(body) {
      return post(base + '/input', body).then(function (r) {
        if (r.status === 202) return true;
        return r.text().then(function (t) { say(t.trim()); return false; });
      });
    }

    function sendTyped() {
      Promise.all([...files.files].map(readFile)).then(function (fs) {
        if (!text.value.trim() && !fs.length) return;
        return send({ text: text.value, files: fs }).then(function (ok) {
          if (ok) {
            text.value = '';
            files.value = '';
          }
        });
      }).catch(function (err) { say(String(err)); });
    }

    comp.addEventListener('submit', function (e) {
      e.preventDefault();
      sendTyped();
    });
    text.addEventListener('keydown', function (e) {
      if (e.key === 'Enter' && !e.shiftKey && !e.isComposing) {
        e.preventDefault();
        sendTyped();
      }
    });
    comp.querySelector('[data-action="cancel"]').addEventListener('click', function () {
      post(base + '/cancel');
    });
    comp.querySelector('[data-action="rename"]').addEventListener('click', function () {
      const title = comp.elements.title;
      post(base + '/rename', { title: title.value }).then(function (r) {
        if (r.ok) title.value = '';
        else r.text().then(function (t) { say(t.trim()); });
      });
    });
    comp.querySelectorAll('[data-command]').forEach(function (b) {
      b.addEventListener('click', function () { send({ text: b.dataset.command }); });
    });
    // Mode, model and thinking change through their slash commands.
    const status = function () { return document.getElementById('status'); };
    comp.elements.mode.addEventListener('change', function (e) { send({ text: '/mode ' + e.target.value }); });
    comp.elements.model.addEventListener('change', function (e) {
      if (e.target.value) send({ text: '/model ' + e.target.value });
    });
    comp.elements.thinking.addEventListener('change', function (e) {
      send({ text: '/model ' + status().dataset.model + ' ' + e.target.value });
    });

    asks.addEventListener('click', function (e) {
      const b = e.target.closest('button');
      const box = b && b.closest('[data-ask]');
      if (!box) return;
      let body;
      if (b.dataset.decision) body = { decision: b.dataset.decision };
      else if (b.dataset.free) body = { text: box.querySelector('input[name="answer"]').value };
      else body = { choice: b.dataset.choice };
      box.querySelectorAll('button').forEach(function (x) { x.disabled = true; });
      post(base + '/answer/' + box.dataset.ask, body).then(function (r) {
        if (r.ok || r.status === 409) box.remove(); // 409: answered elsewhere
        else r.text().then(function (t) {
          say(t.trim());
          box.querySelectorAll('button').forEach(function (x) { x.disabled = false; });
        });
      });
    });

    const es = new EventSource(comp.dataset.control);
    es.addEventListener('status', function (e) {
      const el = fragment(e.data);
      const old = status();
      if (el && old) old.replaceWith(el);
      if (el) comp.elements.mode.value = el.dataset.mode;
    });
    es.addEventListener('ask', function (e) {
      const el = fragment(e.data);
      if (!el || document.getElementById(el.id)) return;
      asks.append(el);
      el.scrollIntoView({ block: 'nearest' });
    });
    es.addEventListener('asked', function (e) {
      const el = document.getElementById('ask-' + e.data);
      if (el) el.remove();
    });
    // The model's words as they stream, cleared once the record that holds
    // them comes through the log.
    const stream = document.getElementById('stream');
    es.addEventListener('delta', function (e) {
      const el = fragment(e.data);
      if (el) stream.append(el);
    });
    es.addEventListener('stream', function () { stream.textContent = ''; });
    es.addEventListener('notice', function (e) {
      const el = fragment(e.data);
      if (el) log.append(el);
    });
    es.addEventListener('ended', function () {
      es.close();
      comp.dataset.ended = 'true';
      comp.querySelectorAll('button, textarea, select, input').forEach(function (x) { x.disabled = true; });
    });
  }
})();
