// The socialstream web client. It speaks only the public JSON API of
// docs/api.md, builds every element with textContent (never innerHTML, so
// nothing a user writes can run as markup) and keeps its session token in
// localStorage.

const TOKEN_KEY = 'socialstream.token';
const TIMEOUT_MS = 30000;
const PAGE = 20;
const BADGE_POLL_MS = 15000;
const POLL_MS = 30000; // how often a feed looks for what is new

const state = {
  token: localStorage.getItem(TOKEN_KEY) || '',
  me: null, // the signed-in person
  groups: [], // the signed-in person's groups
  view: 0, // bumped on each navigation; late answers for old views are dropped
  notice: '', // a message for the next view (why one was signed out)
  ending: 0, // requests under way that end the session (endSession): a 401 meanwhile is theirs
};

const $ = (id) => document.getElementById(id);

// go shows the view of hash, even when it is the one in the address bar.
function go(hash) {
  if (location.hash === hash) route();
  else location.hash = hash;
}

// ---- the API -------------------------------------------------------------

class ApiError extends Error {
  constructor(status, message) {
    super(message);
    this.status = status;
  }
}

let inflight = 0;
function busy(delta) {
  inflight += delta;
  const on = inflight > 0;
  $('busy').textContent = on ? 'Loading…' : '';
  $('busy').classList.toggle('on', on);
  $('main').setAttribute('aria-busy', String(on));
}

// api calls the JSON API and returns the decoded answer (null for 204). Any
// failure is an ApiError whose message is fit to show.
async function api(method, path, body) {
  const headers = {};
  const form = body instanceof FormData; // an upload: the browser sets its type
  if (body !== undefined && !form) headers['Content-Type'] = 'application/json';
  if (state.token) headers.Authorization = 'Bearer ' + state.token;
  const ctl = new AbortController();
  const timer = setTimeout(() => ctl.abort(), TIMEOUT_MS);
  busy(1);
  try {
    let res;
    try {
      res = await fetch(path, {
        method,
        headers,
        body: body === undefined || form ? body : JSON.stringify(body),
        signal: ctl.signal,
      });
    } catch (e) {
      throw new ApiError(0, e.name === 'AbortError'
        ? 'The server took too long to answer. Please try again.'
        : 'Could not reach the server. Check your connection and try again.');
    }
    if (res.status === 204) return null;
    let data = null;
    try {
      data = await res.json();
    } catch (e) {
      // A body that is not JSON: a proxy's page, say. The status speaks.
    }
    if (!res.ok) {
      const msg = (data && data.error && data.error.message) || res.statusText || 'request failed';
      // While a request that ends the session is under way, a 401 is
      // its doing: its own answer signs out, and says why.
      if (res.status === 401 && state.token && !path.startsWith('/auth/') && !state.ending) {
        signedOut('Your session has ended. Please log in again.');
      }
      throw new ApiError(res.status, msg);
    }
    return data;
  } finally {
    clearTimeout(timer);
    busy(-1);
  }
}

// endSession calls the API with a request that ends the session (a
// logout, the account's deletion): the 401s other requests get meanwhile
// are its doing, and sign no one out before its answer does.
async function endSession(method, path, body) {
  state.ending++;
  try {
    return await api(method, path, body);
  } finally {
    state.ending--;
  }
}

const rest = (path) => '/social/rest' + path;
const enc = encodeURIComponent;

function withQuery(path, params) {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== '') q.set(k, v);
  const s = q.toString();
  return s ? path + '?' + s : path;
}

// describe turns an error into a sentence for people.
function describe(err) {
  if (!(err instanceof ApiError)) return 'Something went wrong: ' + err.message;
  const m = err.message.charAt(0).toUpperCase() + err.message.slice(1);
  switch (err.status) {
    case 0: return err.message;
    case 400: return 'Please check your input: ' + m + '.';
    case 401: return m + '.';
    case 403: return 'Not allowed: ' + m + '.';
    case 404: return 'Not found: ' + m + '.';
    case 409: return m + '.';
    case 413: return 'That is too large to send.';
    case 429: return 'Too many requests. Please wait a moment and try again.';
    case 503: return 'The service is busy. Please try again in a moment.';
    default: return err.status >= 500 ? 'The server had a problem (' + err.status + '). Please try again.' : m + '.';
  }
}

function showError(err) {
  const box = $('error');
  box.textContent = typeof err === 'string' ? err : describe(err);
  box.hidden = false;
}

function clearError() {
  $('error').hidden = true;
  $('error').textContent = '';
}

// guard runs an action, showing its failure; the button (if any) is
// disabled meanwhile so a slow answer cannot be asked for twice.
async function guard(button, fn) {
  if (button) button.disabled = true;
  clearError();
  try {
    return await fn();
  } catch (err) {
    showError(err);
    return undefined;
  } finally {
    if (button) button.disabled = false;
  }
}

// ---- DOM helpers -------------------------------------------------------------

// h makes an element. attrs: class, text, on<event> handlers, and any other
// attribute; children: nodes or strings (as text).
function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === null || v === false) continue;
    if (k === 'class') el.className = v;
    else if (k === 'text') el.textContent = v;
    else if (k.startsWith('on')) el.addEventListener(k.slice(2), v);
    else el.setAttribute(k, v === true ? '' : v);
  }
  return add(el, children);
}

// add appends children to el, strings as text, leaving out null, undefined
// and false (the DOM's own append would show them as text).
function add(el, children) {
  for (const c of children.flat()) {
    if (c === undefined || c === null || c === false) continue;
    el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return el;
}

// put replaces el's children as add appends them.
function put(el, ...children) {
  el.textContent = '';
  return add(el, children);
}

function field(label, input, hint) {
  const id = 'f' + Math.random().toString(36).slice(2);
  input.id = id;
  const parts = [h('label', { for: id, text: label }), input];
  if (hint) {
    const hid = id + '-hint';
    input.setAttribute('aria-describedby', hid);
    parts.push(h('small', { id: hid, class: 'hint', text: hint }));
  }
  return h('div', { class: 'field' }, parts);
}

function time(value) {
  const d = new Date(value);
  if (Number.isNaN(d.getTime())) return h('span');
  return h('time', { datetime: d.toISOString(), text: d.toLocaleString() });
}

function personLink(p) {
  if (!p) return h('span', { text: 'someone' });
  return h('a', { href: '#/people/' + enc(p.preferredUsername), text: p.displayName || p.preferredUsername });
}

// avatar draws a person's avatar (its thumbnail), if they have one; the
// name beside it says who it is, so it is decorative.
function avatar(p, size) {
  if (!p || !p.thumbnailUrl) return null;
  return h('img', { class: 'avatar', src: p.thumbnailUrl, alt: '', width: size, height: size, loading: 'lazy' });
}

// profile draws what a person says of themselves: their header, avatar,
// bio and fields.
function profile(p) {
  const fields = (p.fields || []).length
    ? h('dl', { class: 'fields' }, p.fields.flatMap((f) => [h('dt', { text: f.name }), h('dd', {}, linkify(f.value))]))
    : null;
  return h('div', { class: 'profile' },
    p.headerUrl ? h('img', { class: 'header', src: p.headerUrl, alt: '' }) : null,
    avatar(p, 64),
    p.note ? h('div', { class: 'note' }, p.note.split('\n').map((line) => h('p', {}, linkify(line)))) : null,
    fields);
}

// profileEditor is the signed-in person's form for their bio, fields and
// pictures; saved, the page draws the person again.
function profileEditor(person, saved) {
  const note = h('textarea', { name: 'note', maxlength: 500, rows: 3 });
  note.value = person.note || '';
  const rows = [0, 1, 2, 3].map((i) => {
    const f = (person.fields || [])[i] || { name: '', value: '' };
    const name = h('input', { name: `field-name-${i}`, maxlength: 255, value: f.name });
    const value = h('input', { name: `field-value-${i}`, maxlength: 255, value: f.value });
    return { name, value, el: h('div', { class: 'row' }, field(`Field ${i + 1} name`, name), field(`Field ${i + 1} value`, value)) };
  });
  const avatarFile = h('input', { type: 'file', name: 'avatar', accept: 'image/png,image/jpeg,image/gif,image/webp' });
  const headerFile = h('input', { type: 'file', name: 'header', accept: 'image/png,image/jpeg,image/gif,image/webp' });
  const save = h('button', { type: 'submit', text: 'Save profile' });
  const upload = async (input, alt) => {
    const form = new FormData();
    form.append('description', alt);
    form.append('file', input.files[0]);
    return (await api('POST', rest('/mediaItems/@me/@self'), form)).entry.id;
  };
  return h('form', {
    class: 'card profile-editor', 'aria-label': 'Edit profile',
    onsubmit: (e) => {
      e.preventDefault();
      guard(save, async () => {
        const body = {
          note: note.value,
          fields: rows.filter((r) => r.name.value.trim()).map((r) => ({ name: r.name.value.trim(), value: r.value.value.trim() })),
        };
        if (avatarFile.files.length) body.avatar = await upload(avatarFile, 'avatar of ' + person.preferredUsername);
        if (headerFile.files.length) body.header = await upload(headerFile, 'header of ' + person.preferredUsername);
        saved((await api('PUT', rest('/people/@me/@self'), body)).entry);
      });
    },
  }, h('h2', { text: 'Profile' }), field('Bio', note), rows.map((r) => r.el),
  field('Avatar (a picture)', avatarFile), field('Header (a picture)', headerFile), save);
}

// linkify renders text with @mentions as links to the person and #tags as
// links to the tag's feed, following the server's rules: an @ at the start
// or after a character that cannot be part of a name, then 3 to 30 of A-Z
// a-z 0-9 _, not followed by another @; a # at the start or after a
// character that cannot be part of a tag (nor / ) &), then letters, digits,
// marks and _, not digits alone.
function linkify(text) {
  const out = [];
  const re = /(^|[^A-Za-z0-9_@])@([A-Za-z0-9_]{3,30})(?![A-Za-z0-9_@])|(^|[^\p{L}\p{Nd}\p{M}_#/)&])#([\p{L}\p{Nd}\p{M}_]+)/gu;
  let last = 0;
  let m;
  while ((m = re.exec(text)) !== null) {
    if (m[2] !== undefined) {
      const at = m.index + m[1].length;
      out.push(text.slice(last, at));
      out.push(h('a', { class: 'mention', href: '#/people/' + enc(m[2]), text: '@' + m[2] }));
      last = at + 1 + m[2].length;
    } else if (/\D/u.test(m[4])) {
      const at = m.index + m[3].length;
      out.push(text.slice(last, at));
      out.push(h('a', { class: 'tag', href: '#/tag/' + enc(m[4]), text: '#' + m[4] }));
      last = at + 1 + m[4].length;
    }
  }
  out.push(text.slice(last));
  return out;
}

function plural(n, one, many) {
  return `${n} ${n === 1 ? one : many}`;
}

// finder is a small form that opens a person's page by username.
function finder() {
  const input = h('input', { name: 'find', required: true, maxlength: 30, pattern: '@?[A-Za-z0-9_]{3,30}',
    autocapitalize: 'none', spellcheck: 'false' });
  return h('form', {
    class: 'find', role: 'search',
    onsubmit: (e) => {
      e.preventDefault();
      go('#/people/' + enc(input.value.trim().replace(/^@/, '')));
    },
  }, field('Find someone by username', input), h('button', { type: 'submit', class: 'secondary', text: 'Go' }));
}

function randomKey() {
  const b = new Uint8Array(16);
  crypto.getRandomValues(b);
  return Array.from(b, (x) => x.toString(16).padStart(2, '0')).join('');
}

// ---- session -----------------------------------------------------------------

function setSession(token, me) {
  state.token = token;
  state.me = me;
  localStorage.setItem(TOKEN_KEY, token);
  renderNav();
}

function signedOut(message) {
  state.token = '';
  state.me = null;
  state.groups = [];
  localStorage.removeItem(TOKEN_KEY);
  renderNav();
  // Shown by the login view, once the navigation to it has cleared the
  // last view's errors.
  state.notice = message || '';
  go('#/login');
}

function renderNav() {
  const on = Boolean(state.me);
  $('nav').hidden = !on;
  if (on) {
    const me = $('me-link');
    me.href = '#/people/' + enc(state.me.preferredUsername);
    me.textContent = '@' + state.me.preferredUsername;
  }
  // Moderators and admins have their queue.
  $('mod-link').hidden = !(on && state.me.role);
}

async function loadGroups() {
  const res = await api('GET', withQuery(rest('/groups/@me'), { count: 100 }));
  state.groups = res.list || [];
}

async function refreshBadge() {
  if (!state.token) return;
  let n;
  try {
    // A count of the index: the badge counts unread notifications.
    const res = await api('GET', rest('/notifications/@me/unread'));
    n = (res.entry && res.entry.unreadCount) || 0;
  } catch (err) {
    return; // the badge waits for the next poll; errors show where asked for
  }
  const badge = $('badge');
  badge.textContent = n > 99 ? '99+' : String(n);
  badge.hidden = n === 0;
  $('notif-link').setAttribute('aria-label', n ? `Notifications, ${n} unread` : 'Notifications');
}

// ---- views -------------------------------------------------------------------

// mount replaces the page's content and returns a function telling whether
// this view is still the one shown.
function mount(title, ...children) {
  const gen = ++state.view;
  const main = $('main');
  put(main, ...children);
  document.title = title + ' · socialstream';
  for (const a of document.querySelectorAll('#nav a')) a.removeAttribute('aria-current');
  return () => gen === state.view;
}

function authView(mode) {
  const signup = mode === 'signup';
  const username = h('input', {
    name: 'username', required: true, autocomplete: 'username', minlength: 3, maxlength: 30,
    pattern: '[A-Za-z0-9_]{3,30}', autocapitalize: 'none', spellcheck: 'false',
  });
  const password = h('input', {
    name: 'password', type: 'password', required: true, minlength: 8, maxlength: 128,
    autocomplete: signup ? 'new-password' : 'current-password',
  });
  const display = h('input', { name: 'displayName', maxlength: 64, autocomplete: 'name' });
  const submit = h('button', { type: 'submit', text: signup ? 'Sign up' : 'Log in' });
  const form = h('form', {
    class: 'card', 'aria-labelledby': 'auth-title',
    onsubmit: (e) => {
      e.preventDefault();
      guard(submit, async () => {
        const body = { username: username.value.trim(), password: password.value };
        if (signup && display.value.trim()) body.displayName = display.value.trim();
        const res = await api('POST', signup ? '/auth/register' : '/auth/login', body);
        setSession(res.token, res.entry);
        await loadGroups();
        go('#/home');
      });
    },
  },
  h('h1', { id: 'auth-title', text: signup ? 'Create an account' : 'Log in' }),
  field('Username', username, signup ? '3 to 30 letters, digits or _' : undefined),
  field('Password', password, signup ? '8 to 128 characters' : undefined),
  signup ? field('Display name (optional)', display) : null,
  submit,
  h('p', {}, signup
    ? ['Have an account? ', h('a', { href: '#/login', text: 'Log in' })]
    : ['New here? ', h('a', { href: '#/signup', text: 'Create an account' })]));
  mount(signup ? 'Sign up' : 'Log in', form);
  username.focus();
}

const FEEDS = {
  home: { label: 'Home', path: '/activities/@me/@friends', marker: 'home' },
  mine: { label: 'Mine', path: '/activities/@me/@self' },
  mentions: { label: 'Mentions', path: '/activities/@me/@mentions', marker: 'mentions' },
  public: { label: 'Public', path: '/activities/@me/@all', marker: 'all' },
  // Bookmarks are a list, not a feed: newest bookmark first, no 'since'.
  bookmarks: { label: 'Bookmarks', path: '/bookmarks', still: true },
};

function feedTabs(current) {
  const tabs = Object.entries(FEEDS).map(([key, f]) => ['#/' + key, f.label, key]);
  for (const g of state.groups) tabs.push(['#/group/' + enc(g.id), g.title, 'group:' + g.id]);
  return h('nav', { class: 'tabs', 'aria-label': 'Feeds' }, tabs.map(([href, label, key]) =>
    h('a', { href, text: label, 'aria-current': key === current ? 'page' : undefined })));
}

// composer is the form of a new post; of a reply to parent, if given.
function composer(onPosted, parent) {
  const text = h('textarea', { name: 'title', required: true, maxlength: 500, rows: 3 });
  // A reply names whom it answers, as Mastodon's do.
  const whom = parent && parent.author && state.me && parent.userId !== state.me.id ? parent.author.preferredUsername : '';
  if (whom) text.value = '@' + whom + ' ';
  const url = h('input', { name: 'url', type: 'url', maxlength: 2000, placeholder: 'https://' });
  const left = h('small', { class: 'hint', 'aria-live': 'polite', text: '500 characters left' });
  text.addEventListener('input', () => { left.textContent = `${500 - text.value.length} characters left`; });
  const visibility = h('select', { name: 'visibility' },
    h('option', { value: 'public', text: 'Public: anyone' }),
    h('option', { value: 'unlisted', text: 'Unlisted: anyone, but kept out of public and tag feeds' }),
    h('option', { value: 'followers', text: 'Followers: your followers and the people you mention' }),
    h('option', { value: 'mentioned', text: 'Mentioned: the people you mention alone' }));
  const warning = h('input', { name: 'spoilerText', maxlength: 500, placeholder: 'e.g. spoilers' });
  const submit = h('button', { type: 'submit', text: 'Post' });
  const pics = pictureChooser();
  // One key per draft: a post retried after a slow or lost answer is
  // recognised by the server (externalId) and not made twice.
  let key = randomKey();
  return h('form', {
    class: parent ? 'card composer reply' : 'card composer', 'aria-label': parent ? 'Reply' : 'New post',
    onsubmit: (e) => {
      e.preventDefault();
      guard(submit, async () => {
        const body = { title: text.value, externalId: key, visibility: visibility.value };
        if (parent) body.inReplyTo = parent.id;
        if (url.value.trim()) body.url = url.value.trim();
        if (warning.value.trim()) body.spoilerText = warning.value.trim();
        const ids = await pics.upload();
        if (ids.length) body.mediaItems = ids.map((id) => ({ id }));
        const res = await api('POST', rest('/activities/@me/@self'), body);
        text.value = '';
        url.value = '';
        warning.value = '';
        visibility.value = 'public';
        left.textContent = '500 characters left';
        pics.clear();
        key = randomKey();
        onPosted(res.entry);
      });
    },
  }, field(parent ? 'Your reply' : 'What’s happening? Use @name to mention someone, #tag to file it.', text), left, field('Link (optional)', url),
  field('Content warning (optional): the post is folded behind it', warning),
  pics.el, field('Who can see it', visibility), submit);
}

const MAX_PICTURES = 4;

// pictureChooser lets a person pick up to four pictures for a post, each
// with its alt text; upload sends those not sent yet (a post retried after
// a failure does not upload them twice) and returns their ids in order.
function pictureChooser() {
  const input = h('input', { type: 'file', name: 'pictures', accept: 'image/jpeg,image/png,image/gif,image/webp', multiple: true });
  const list = h('ul', { class: 'chosen', 'aria-label': 'Chosen pictures' });
  let chosen = []; // {file, alt (an input), id once uploaded}
  const draw = () => {
    list.replaceChildren(...chosen.map((c, i) => {
      const remove = h('button', { type: 'button', class: 'secondary', text: 'Remove', 'aria-label': 'Remove ' + c.file.name });
      remove.addEventListener('click', () => { chosen.splice(i, 1); draw(); });
      return h('li', {}, h('span', { text: c.file.name }), field('Describe it for people who cannot see it (alt text)', c.alt), remove);
    }));
  };
  input.addEventListener('change', () => {
    for (const file of input.files) {
      if (chosen.length < MAX_PICTURES) chosen.push({ file, alt: h('input', { type: 'text', name: 'alt', maxlength: 1500 }) });
    }
    input.value = '';
    draw();
  });
  return {
    el: h('div', { class: 'pictures-field' }, field(`Pictures (up to ${MAX_PICTURES}, 8 MiB each)`, input), list),
    async upload() {
      for (const c of chosen) {
        if (c.id) continue;
        const form = new FormData();
        form.append('description', c.alt.value);
        form.append('file', c.file);
        c.id = (await api('POST', rest('/mediaItems/@me/@self'), form)).entry.id;
      }
      return chosen.map((c) => c.id);
    },
    clear() { chosen = []; draw(); },
  };
}

// pictures shows an activity's pictures: each thumbnail, with its alt
// text, links to the whole picture.
// pictures draws a post's pictures; sensitive ones behind a button.
function pictures(items, sensitive) {
  if (!items || !items.length) return null;
  if (sensitive) {
    const show = h('button', { type: 'button', class: 'secondary small', text: 'Show sensitive pictures' });
    const box = h('div', { class: 'pictures sensitive' }, show);
    show.addEventListener('click', () => box.replaceWith(pictures(items, false)));
    return box;
  }
  return h('div', { class: 'pictures' }, items.map((m) =>
    h('a', { href: m.url, target: '_blank', rel: 'noopener' },
      h('img', { src: m.thumbnailUrl, alt: m.description || '', loading: 'lazy', title: m.description || undefined }))));
}

// stream renders a paged list of activities from path into a section.
// stream renders a paged list of activities from path into a section. It
// looks every POLL_MS for what is new (since the newest it shows) and says
// "N new" rather than reloading; with a marker name, loading the top moves
// that marker, so the person's other devices know what was seen.
function stream(path, label, isCurrent, emptyText, marker, still) {
  const list = h('ol', { class: 'stream', 'aria-label': label });
  const more = h('button', { type: 'button', class: 'secondary', text: 'Load more', hidden: true });
  const empty = h('p', { class: 'empty', text: emptyText, hidden: true });
  const fresh = h('button', { type: 'button', class: 'fresh', hidden: true, 'aria-live': 'polite' });
  let cursor = '';
  // The id of the newest activity shown: the first of a fresh load, or one
  // just posted. Ids are opaque strings; a feed's order is the server's.
  let newest = '';
  // What the reader posted since the last fresh load began, oldest first:
  // a load under way when they posted was read before it, and must not
  // take it off the page.
  let posted = [];
  async function load(reset) {
    if (reset) posted = [];
    const res = await api('GET', withQuery(rest(path), { count: PAGE, cursor: reset ? '' : cursor }));
    if (!isCurrent()) return;
    if (reset) {
      put(list);
      fresh.hidden = true;
    }
    const loaded = res.list || [];
    for (const a of loaded) list.append(h('li', {}, activity(a)));
    if (reset) {
      newest = loaded.length ? loaded[0].id : '';
      const shown = new Set(loaded.map((a) => a.id));
      for (const a of posted.filter((p) => !shown.has(p.id))) {
        list.prepend(h('li', {}, activity(a)));
        newest = a.id;
      }
    }
    cursor = res.nextCursor || '';
    more.hidden = !cursor;
    empty.hidden = list.children.length > 0;
    if (reset && marker && newest) {
      // Best effort: a marker that did not move only says less next time.
      api('POST', rest('/markers/@me'), { [marker]: { lastReadId: newest } }).catch(() => {});
    }
  }
  async function poll() {
    if (!isCurrent() || !newest || still) return;
    const since = newest;
    const res = await api('GET', withQuery(rest(path), { count: 100, since, fields: 'id' }));
    // A fresh load that ended meanwhile showed what this counted: its
    // count, of before the load, would announce posts already shown.
    if (!isCurrent() || since !== newest) return;
    const n = (res.list || []).length;
    fresh.textContent = `${n}${res.nextCursor ? '+' : ''} new`;
    fresh.hidden = n === 0;
  }
  const timer = setInterval(() => {
    if (!isCurrent()) clearInterval(timer);
    else poll().catch(() => {});
  }, POLL_MS);
  fresh.addEventListener('click', () => guard(fresh, () => load(true)));
  more.addEventListener('click', () => guard(more, () => load(false)));
  const refresh = h('button', { type: 'button', class: 'secondary', text: 'Refresh' });
  refresh.addEventListener('click', () => guard(refresh, () => load(true)));
  const section = h('section', { class: 'feed' }, h('div', { class: 'row' }, refresh, fresh), empty, list, more);
  section.load = load;
  section.poll = poll;
  section.prepend = (a) => {
    list.prepend(h('li', {}, activity(a)));
    empty.hidden = true;
    newest = a.id;
    posted.push(a);
  };
  return section;
}

// activity draws one activity; a repost is the activity it shares, under
// a line that says who reposted it.
// activity draws an activity; one a keyword filter of the reader's warns
// of is folded behind the filter's name until asked for.
function activity(a) {
  const warned = a.filtered || [];
  if (!warned.length) return activityCard(a);
  const show = h('button', { type: 'button', class: 'secondary small', text: 'Show anyway' });
  const art = h('article', { class: 'activity filtered' },
    h('p', { class: 'hint', text: 'Filtered: ' + warned.map((m) => `${m.title} (${m.keywordMatches.join(', ')})`).join('; ') }),
    show);
  show.addEventListener('click', () => art.replaceWith(activityCard(a)));
  return art;
}

function activityCard(a) {
  if (a.repostOf) {
    const art = activityCard(a.repostOf);
    const by = a.author || { preferredUsername: '', displayName: a.userId };
    art.prepend(h('p', { class: 'reposted' }, '↻ ', personLink(by), ' reposted'));
    return art;
  }
  const mine = state.me && a.userId === state.me.id;
  const likeBtn = h('button', { type: 'button', class: 'secondary', 'aria-pressed': String(Boolean(a.likedByViewer)) });
  const setLike = () => {
    likeBtn.textContent = `${a.likedByViewer ? '♥ Liked' : '♡ Like'} (${a.likesCount || 0})`;
    likeBtn.setAttribute('aria-pressed', String(Boolean(a.likedByViewer)));
  };
  setLike();
  likeBtn.addEventListener('click', () => guard(likeBtn, async () => {
    const liking = !a.likedByViewer;
    // The answer is the activity with its counts as they are now.
    const data = await api(liking ? 'POST' : 'DELETE', rest('/likes/' + enc(a.id)));
    a.likedByViewer = data.entry.likedByViewer;
    a.likesCount = data.entry.likesCount;
    setLike();
  }));
  const repostBtn = h('button', { type: 'button', class: 'secondary', 'aria-pressed': String(Boolean(a.repostedByViewer)) });
  const setRepost = () => {
    repostBtn.textContent = `${a.repostedByViewer ? '↻ Reposted' : '↻ Repost'} (${a.repostsCount || 0})`;
    repostBtn.setAttribute('aria-pressed', String(Boolean(a.repostedByViewer)));
    repostBtn.title = a.repostedByViewer ? 'Undo the repost' : 'Share it with your followers';
  };
  setRepost();
  repostBtn.addEventListener('click', () => guard(repostBtn, async () => {
    // A repost answers the repost, carrying the activity as it is now; an
    // undo answers the activity.
    const data = await api(a.repostedByViewer ? 'DELETE' : 'POST', rest('/reposts/' + enc(a.id)));
    const now = data.entry.repostOf || data.entry;
    a.repostedByViewer = now.repostedByViewer;
    a.repostsCount = now.repostsCount;
    setRepost();
  }));
  const commentsId = 'c' + a.id;
  const commentsBtn = h('button', {
    type: 'button', class: 'secondary', 'aria-expanded': 'false', 'aria-controls': commentsId,
    text: `Comments (${a.commentsCount || 0})`,
  });
  const comments = h('section', { id: commentsId, class: 'comments', hidden: true, 'aria-label': 'Comments' });
  let loaded = false;
  commentsBtn.addEventListener('click', () => guard(commentsBtn, async () => {
    const open = comments.hidden;
    if (open && !loaded) {
      await commentList(a, comments, (d) => {
        a.commentsCount = Math.max(0, (a.commentsCount || 0) + d);
        commentsBtn.textContent = `Comments (${a.commentsCount})`;
      });
      loaded = true;
    }
    comments.hidden = !open;
    commentsBtn.setAttribute('aria-expanded', String(open));
  }));
  // Bookmarks are private: whether a post is bookmarked is known in the
  // bookmarks list and from a bookmark's answer (feeds do not read them).
  const markBtn = h('button', { type: 'button', class: 'secondary', 'aria-pressed': String(Boolean(a.bookmarked)) });
  const setMark = () => {
    markBtn.textContent = a.bookmarked ? '🔖 Bookmarked' : 'Bookmark';
    markBtn.setAttribute('aria-pressed', String(Boolean(a.bookmarked)));
  };
  setMark();
  markBtn.addEventListener('click', () => guard(markBtn, async () => {
    const res = await api(a.bookmarked ? 'DELETE' : 'POST', rest('/bookmarks/' + enc(a.id)));
    a.bookmarked = Boolean(res.entry.bookmarked);
    setMark();
  }));
  // A reply answers with a post of one's own, under this one's thread.
  const replyBtn = h('button', { type: 'button', class: 'secondary', text: 'Reply', 'aria-expanded': 'false', 'aria-label': 'Reply to this post' });
  replyBtn.addEventListener('click', () => {
    const open = replyBtn.getAttribute('aria-expanded') !== 'true';
    replyBtn.setAttribute('aria-expanded', String(open));
    const form = art.querySelector('form.reply');
    if (form) form.remove();
    if (open) {
      art.insertBefore(composer((r) => {
        replyBtn.click();
        go(`#/activity/${enc(r.userId)}/${enc(r.id)}`);
      }, a), art.querySelector('.actions'));
    }
  });
  // Only a public or unlisted post can be reposted.
  const actions = OPEN.has(a.visibility || 'public') ? [replyBtn, likeBtn, repostBtn, commentsBtn, markBtn] : [replyBtn, likeBtn, commentsBtn, markBtn];
  const art = h('article', { class: 'activity' });
  if (mine) {
    const del = h('button', { type: 'button', class: 'danger', text: 'Delete' });
    del.addEventListener('click', () => {
      if (!confirm('Delete this post?')) return;
      guard(del, async () => {
        await api('DELETE', rest('/activities/@me/@self/@app/' + enc(a.id)));
        const li = art.closest('li');
        (li || art).remove();
      });
    });
    actions.push(del);
    if (OPEN.has(a.visibility || 'public')) {
      const pinBtn = h('button', { type: 'button', class: 'secondary', 'aria-pressed': String(Boolean(a.pinned)) });
      const setPin = () => {
        pinBtn.textContent = a.pinned ? 'Unpin' : 'Pin';
        pinBtn.setAttribute('aria-pressed', String(Boolean(a.pinned)));
        pinBtn.title = a.pinned ? 'Take it off the top of your page' : 'Keep it at the top of your page (at most 5)';
      };
      setPin();
      pinBtn.addEventListener('click', () => guard(pinBtn, async () => {
        const res = await api(a.pinned ? 'DELETE' : 'POST', rest('/pins/' + enc(a.id)));
        a.pinned = Boolean(res.entry.pinned);
        setPin();
      }));
      actions.push(pinBtn);
    }
    const edit = h('button', { type: 'button', class: 'secondary', text: 'Edit', 'aria-label': 'Edit this post', 'aria-expanded': 'false' });
    edit.addEventListener('click', () => {
      const open = edit.getAttribute('aria-expanded') !== 'true';
      edit.setAttribute('aria-expanded', String(open));
      const form = art.querySelector('form.edit');
      if (form) form.remove();
      if (open) art.insertBefore(editor(a, art, () => edit.click()), art.querySelector('.actions'));
    });
    actions.push(edit);
  } else if (state.me) {
    const report = h('button', { type: 'button', class: 'secondary', text: 'Report', 'aria-expanded': 'false', 'aria-label': 'Report this post' });
    report.addEventListener('click', () => {
      const open = report.getAttribute('aria-expanded') !== 'true';
      report.setAttribute('aria-expanded', String(open));
      const form = art.querySelector('form.report');
      if (form) form.remove();
      if (open) art.insertBefore(reportForm(a.userId, [a.id], () => report.click()), art.querySelector('.actions'));
    });
    actions.push(report);
  }
  const author = a.author || { preferredUsername: '', displayName: a.userId };
  put(art,
    h('header', {}, avatar(author, 32), personLink(author), ' ',
      author.preferredUsername ? h('span', { class: 'handle', text: '@' + author.preferredUsername }) : null,
      ' · ', h('a', { href: `#/activity/${enc(a.userId)}/${enc(a.id)}`, class: 'when' }, time(a.postedTime)),
      a.pinned ? h('span', { class: 'pinned', text: ' · pinned' }) : null,
      a.inReplyTo ? h('a', { class: 'replying', href: `#/activity/${enc(a.inReplyToUserId)}/${enc(a.inReplyTo)}`, text: ' · ↩ a reply' }) : null,
      a.editedTime ? h('span', { class: 'edited', title: 'edited ' + new Date(a.editedTime).toLocaleString(), text: ' · edited' }) : null,
      a.visibility && a.visibility !== 'public'
        ? h('span', { class: 'visibility', text: ' · ' + (VISIBILITY[a.visibility] || a.visibility) }) : null),
    warned(a.spoilerText, [
      h('p', { class: 'title' }, linkify(a.title || '')),
      a.body ? h('p', { class: 'body' }, linkify(a.body)) : null,
      a.url ? h('p', {}, h('a', { href: a.url, rel: 'nofollow noopener ugc', text: a.url })) : null,
      pictures(a.mediaItems, a.sensitive && !a.spoilerText),
      pollBox(a, (now) => art.replaceWith(activityCard(now)))]),
    h('div', { class: 'actions' }, actions),
    comments);
  return art;
}

// pollBox shows a post's poll: its options, with their votes where the
// server shows them (hidden until it ends, if its author asked), and, to
// someone signed in who has not voted and may, a vote; the post is drawn
// again as the vote's answer shows it (redraw).
function pollBox(a, redraw) {
  const p = a.poll;
  if (!p) return null;
  const open = Boolean(state.me) && !p.voted && !p.expired;
  const own = p.ownVotes || [];
  const box = h('form', { class: 'poll', 'aria-label': 'Poll' });
  const inputs = p.options.map((o, i) => {
    const input = h('input', { type: p.multiple ? 'checkbox' : 'radio', name: 'choice-' + a.id, value: String(i), id: `poll-${a.id}-${i}` });
    input.disabled = !open;
    input.checked = own.includes(i);
    return input;
  });
  const options = p.options.map((o, i) => h('p', { class: 'option' }, inputs[i], ' ', h('label', { for: inputs[i].id, text: o.title }),
    o.votesCount === null || o.votesCount === undefined ? null : h('span', { class: 'votes', text: ` · ${o.votesCount}` })));
  const status = `${p.votersCount} ${p.votersCount === 1 ? 'person' : 'people'} voted · ` +
    (p.expired ? 'closed' : 'ends ' + new Date(p.expiresAt).toLocaleString()) + (p.voted ? ' · you voted' : '');
  put(box, options, h('p', { class: 'poll-status hint', text: status }));
  if (open) {
    const vote = h('button', { type: 'submit', text: 'Vote' });
    add(box, [vote]);
    box.addEventListener('submit', (ev) => {
      ev.preventDefault();
      const choices = inputs.filter((x) => x.checked).map((x) => Number(x.value));
      if (!choices.length) return;
      guard(vote, async () => redraw((await api('POST', rest('/polls/' + enc(a.id) + '/votes'), { choices })).entry));
    });
  }
  return box;
}

const OPEN = new Set(['public', 'unlisted']);
const VISIBILITY = { unlisted: 'unlisted', followers: 'followers only', mentioned: 'mentioned only' };

// warned returns a post's content: as it is, or, under a content warning,
// folded behind it until asked for.
function warned(warning, content) {
  const box = h('div', { class: 'content' }, content);
  if (!warning) return box;
  box.hidden = true;
  const show = h('button', { type: 'button', class: 'secondary small', 'aria-expanded': 'false', text: 'Show' });
  show.addEventListener('click', () => {
    box.hidden = !box.hidden;
    show.textContent = box.hidden ? 'Show' : 'Hide';
    show.setAttribute('aria-expanded', String(!box.hidden));
  });
  return h('div', { class: 'warned' }, h('p', { class: 'spoiler' }, h('strong', { text: 'CW: ' }), warning, ' '), show, box);
}

// editor is the form that edits one's own post in place: on saving, the
// post is drawn again as the server answers it (its mentions follow the
// new text).
function editor(a, art, close) {
  const title = h('textarea', { name: 'title', required: true, maxlength: 500, rows: 3 });
  title.value = a.title || '';
  const body = h('textarea', { name: 'body', maxlength: 10000, rows: 2 });
  body.value = a.body || '';
  const warning = h('input', { name: 'spoilerText', maxlength: 500 });
  warning.value = a.spoilerText || '';
  const save = h('button', { type: 'submit', text: 'Save' });
  return h('form', {
    class: 'edit', 'aria-label': 'Edit post',
    onsubmit: (e) => {
      e.preventDefault();
      guard(save, async () => {
        const res = await api('PUT', rest('/activities/@me/@self/@app/' + enc(a.id)), { title: title.value, body: body.value, spoilerText: warning.value.trim() });
        art.replaceWith(activity(res.entry));
      });
    },
  }, field('Text', title), field('More (optional)', body), field('Content warning (optional)', warning), save,
  h('button', { type: 'button', class: 'secondary', text: 'Cancel', onclick: close }));
}

async function commentList(a, box, onCount) {
  const list = h('ol', { class: 'comment-list' });
  const more = h('button', { type: 'button', class: 'secondary', text: 'More comments', hidden: true });
  let cursor = '';
  const render = (c) => {
    const li = h('li', {}, personLink(c.author), ' ', time(c.published), h('p', {}, linkify(c.text)));
    const mayDelete = state.me && (c.userId === state.me.id || a.userId === state.me.id);
    if (mayDelete) {
      const del = h('button', { type: 'button', class: 'danger small', text: 'Delete comment' });
      del.addEventListener('click', () => guard(del, async () => {
        await api('DELETE', rest(`/comments/${enc(a.id)}/${enc(c.id)}`));
        li.remove();
        onCount(-1);
      }));
      li.append(del);
    }
    return li;
  };
  const load = async () => {
    const res = await api('GET', withQuery(rest('/comments/' + enc(a.id)), { count: PAGE, cursor }));
    for (const c of res.list || []) list.append(render(c));
    cursor = res.nextCursor || '';
    more.hidden = !cursor;
  };
  more.addEventListener('click', () => guard(more, load));
  await load();
  const input = h('input', { name: 'text', required: true, maxlength: 2000 });
  const submit = h('button', { type: 'submit', text: 'Comment' });
  const form = h('form', {
    class: 'comment-form',
    onsubmit: (e) => {
      e.preventDefault();
      guard(submit, async () => {
        const res = await api('POST', rest('/comments/' + enc(a.id)), { text: input.value });
        input.value = '';
        if (!cursor) list.append(render(res.entry));
        onCount(1);
      });
    },
  }, field('Add a comment', input), submit);
  put(box, list, more, form);
}

async function feedView(key) {
  const f = FEEDS[key];
  const feed = stream(f.path, f.label + ' feed', () => isCurrent(), emptyFor(key), f.marker, f.still);
  const parts = [h('h1', { class: 'visually-hidden', text: f.label }), finder(), feedTabs(key)];
  if (key === 'home' || key === 'mine') parts.push(composer((a) => feed.prepend(a)));
  parts.push(feed);
  const isCurrent = mount(f.label, ...parts);
  markNav('home');
  await guard(null, () => feed.load(true));
}

function emptyFor(key) {
  return {
    home: 'Nothing here yet. Follow people to see their posts, or post something.',
    mine: 'You have not posted yet.',
    mentions: 'Nobody has mentioned you yet.',
    public: 'Nobody has posted yet.',
    bookmarks: 'No bookmarks yet. Bookmark a post to keep it here; only you see them.',
  }[key] || 'Nothing here yet.';
}

function markNav(key) {
  const a = document.querySelector(`#nav a[data-nav="${key}"]`);
  if (a) a.setAttribute('aria-current', 'page');
}

async function personView(name) {
  const head = h('section', { class: 'card person', 'aria-live': 'polite' });
  const groupsBox = h('section', { class: 'card' });
  const box = h('div', {});
  const isCurrent = mount('@' + name, head, groupsBox, box);
  const isMe = state.me && name.toLowerCase() === state.me.preferredUsername.toLowerCase();
  if (isMe) markNav('me');
  await guard(null, async () => {
    const res = await api('GET', rest('/people/@username:' + enc(name) + '/@self'));
    if (!isCurrent()) return;
    let person = res.entry;
    // Whether a list of the caller's holds the person: the person, or a 404.
    const holds = async (list) => {
      try {
        await api('GET', rest(`/people/@me/${list}/` + enc(person.id)));
        return true;
      } catch (err) {
        if (!(err instanceof ApiError) || err.status !== 404) throw err;
        return false;
      }
    };
    let following = false;
    let requested = false;
    let blocking = false;
    let muting = false;
    if (!isMe) {
      [following, requested, blocking, muting] = await Promise.all(
        [holds('@friends'), holds('@requested'), holds('@blocked'), holds('@muted')]);
    }
    if (!isCurrent()) return;
    const counts = h('p', { class: 'counts' });
    const setCounts = () => {
      counts.textContent = `${plural(person.followersCount, 'follower', 'followers')} · ${person.followingCount} following`;
    };
    setCounts();
    const followBtn = h('button', { type: 'button' });
    // A locked person decides each follow: the button then asks, and
    // while the request is pending it withdraws it.
    const setFollow = () => {
      const label = following ? 'Unfollow' : requested ? 'Withdraw request' : person.locked ? 'Ask to follow' : 'Follow';
      followBtn.textContent = label;
      followBtn.className = following || requested ? 'secondary' : '';
      followBtn.setAttribute('aria-label', `${label} @${person.preferredUsername}`);
    };
    setFollow();
    followBtn.addEventListener('click', () => guard(followBtn, async () => {
      if (following || requested) {
        await api('DELETE', rest('/people/@me/@friends/' + enc(person.id)));
        person = (await api('GET', rest('/people/' + enc(person.id) + '/@self'))).entry;
        following = requested = false;
      } else {
        const res = (await api('POST', rest('/people/@me/@friends'), { id: person.id })).entry;
        requested = res.requested === true;
        following = !requested;
        person = res;
      }
      setFollow();
      setCounts();
    }));
    // Blocking asks once more, in place, what it does.
    const blockBox = h('div', { class: 'row' });
    const blockBtn = h('button', { type: 'button', class: 'secondary' });
    const setBlock = () => {
      blockBtn.textContent = blocking ? 'Unblock' : 'Block';
      blockBtn.setAttribute('aria-label', `${blocking ? 'Unblock' : 'Block'} @${person.preferredUsername}`);
      followBtn.hidden = blocking;
      put(blockBox, blockBtn);
    };
    const toggleBlock = () => guard(blockBtn, async () => {
      if (blocking) {
        await api('DELETE', rest('/people/@me/@blocked/' + enc(person.id)));
      } else {
        person = (await api('POST', rest('/people/@me/@blocked'), { id: person.id })).entry;
        following = requested = false;
      }
      blocking = !blocking;
      setFollow();
      setCounts();
      setBlock();
    });
    blockBtn.addEventListener('click', () => {
      if (blocking) return toggleBlock();
      const yes = h('button', { type: 'button', text: 'Block @' + person.preferredUsername });
      const no = h('button', { type: 'button', class: 'secondary', text: 'Cancel' });
      yes.addEventListener('click', toggleBlock);
      no.addEventListener('click', setBlock);
      put(blockBox,
        h('p', { class: 'hint', text: 'You will stop following each other, neither can follow the other, and ' +
          'you will not see their posts, comments or notifications, nor they yours.' }),
        yes, no);
      yes.focus();
    });
    if (!isMe) setBlock();
    // Muting quiets them for the caller alone; they are not told.
    const muteBtn = h('button', { type: 'button', class: 'secondary' });
    const setMute = () => {
      muteBtn.textContent = muting ? 'Unmute' : 'Mute';
      muteBtn.setAttribute('aria-label', `${muting ? 'Unmute' : 'Mute'} @${person.preferredUsername}`);
      muteBtn.title = muting ? '' : 'Their posts leave your feeds and they stop notifying you; they are not told.';
    };
    setMute();
    muteBtn.addEventListener('click', () => guard(muteBtn, async () => {
      if (muting) await api('DELETE', rest('/people/@me/@muted/' + enc(person.id)));
      else await api('POST', rest('/people/@me/@muted'), { id: person.id });
      muting = !muting;
      setMute();
    }));
    put(head,
      profile(person),
      h('h1', { text: person.displayName }),
      h('p', { class: 'handle', text: '@' + person.preferredUsername }),
      person.locked && !isMe ? h('p', { class: 'hint', text: 'Locked account: they approve each follower.' }) : null,
      counts,
      isMe ? null : followBtn,
      isMe ? null : h('div', { class: 'row' }, muteBtn),
      isMe ? null : blockBox,
      isMe ? null : reportPerson(person),
      isMe ? profileEditor(person, () => route()) : null,
      isMe ? privacy(person, (p) => { person = p; }) : null,
      isMe ? account() : null);
    const feed = stream('/activities/' + enc(person.id) + '/@self', 'Posts by ' + person.displayName, isCurrent,
      'No posts yet.');
    // What the person pins comes first, the last pinned first: its box is
    // placed at once and filled when the pins arrive, so nothing below
    // moves meanwhile but by the pins themselves.
    const pinnedBox = h('div', {});
    put(box, pinnedBox, h('h2', { text: 'Posts' }), feed);
    const pins = await api('GET', rest('/activities/' + enc(person.id) + '/@pinned'));
    if (!isCurrent()) return;
    if ((pins.list || []).length) {
      put(pinnedBox, h('h2', { text: 'Pinned' }), h('ol', { class: 'stream pinned', 'aria-label': 'Pinned by ' + person.displayName },
        pins.list.map((a) => h('li', {}, activity(a)))));
    }
    const groups = await api('GET', withQuery(rest('/groups/' + enc(person.id)), { count: 100 }));
    if (!isCurrent()) return;
    put(groupsBox, h('h2', { text: 'Groups' }),
      (groups.list || []).length
        ? h('ul', {}, groups.list.map((g) => h('li', {}, h('a', { href: '#/group/' + enc(g.id), text: g.title }))))
        : h('p', { class: 'empty', text: 'In no groups.' }));
    await feed.load(true);
  });
}

// privacy is the signed-in person's lock, and the requests to follow
// them that wait for their decision.
function privacy(person, changed) {
  const lock = h('input', { type: 'checkbox', name: 'locked' });
  lock.checked = !!person.locked;
  const status = h('p', { class: 'hint', role: 'status' });
  const requests = h('ul', { class: 'requests', 'aria-label': 'Follow requests' });
  lock.addEventListener('change', () => guard(lock, async () => {
    const p = (await api('PUT', rest('/people/@me/@self'), { locked: lock.checked })).entry;
    changed(p);
    status.textContent = p.locked
      ? 'Your account is locked: you approve each new follower.'
      : 'Your account is open: the requests waiting are being approved.';
    await load();
  }));
  const load = async () => {
    const res = await api('GET', withQuery(rest('/people/@me/@requests'), { count: 100 }));
    put(requests);
    for (const p of res.list || []) {
      const approve = h('button', { type: 'button', class: 'small', text: 'Approve', 'aria-label': 'Approve @' + p.preferredUsername });
      const reject = h('button', { type: 'button', class: 'secondary small', text: 'Reject', 'aria-label': 'Reject @' + p.preferredUsername });
      const li = h('li', {}, personLink(p), ' ', time(p.requestedAt), ' ', approve, ' ', reject);
      approve.addEventListener('click', () => guard(approve, async () => {
        await api('POST', rest('/people/@me/@followers'), { id: p.id });
        li.replaceWith(h('li', {}, personLink(p), ' now follows you.'));
      }));
      reject.addEventListener('click', () => guard(reject, async () => {
        await api('DELETE', rest('/people/@me/@requests/' + enc(p.id)));
        li.remove();
      }));
      requests.append(li);
    }
    if (!requests.children.length) requests.append(h('li', { class: 'empty', text: 'No follow requests.' }));
  };
  guard(null, load);
  return h('section', { class: 'privacy', 'aria-labelledby': 'privacy' },
    h('h2', { id: 'privacy', text: 'Privacy' }),
    h('label', {}, lock, ' Lock my account: approve each follower'),
    status,
    h('h3', { text: 'Follow requests' }),
    requests,
    keywordFilters());
}

// keywordFilters lists the reader's keyword filters, each with a delete
// button, and adds one: a keyword, whole word or not, hidden or folded
// behind a warning, in the home, public and tag feeds.
function keywordFilters() {
  const list = h('ul', { class: 'filters', 'aria-label': 'Keyword filters' });
  const keyword = h('input', { type: 'text', name: 'keyword', maxlength: '100', required: true });
  const whole = h('input', { type: 'checkbox', name: 'wholeWord' });
  const action = h('select', { name: 'action' },
    h('option', { value: 'warn', text: 'Fold behind a warning' }),
    h('option', { value: 'hide', text: 'Hide' }));
  const addBtn = h('button', { type: 'submit', text: 'Add filter' });
  const load = async () => {
    const res = await api('GET', rest('/filters/@me'));
    put(list);
    for (const f of res.list || []) {
      const del = h('button', { type: 'button', class: 'secondary small', text: 'Delete', 'aria-label': 'Delete filter ' + f.title });
      del.addEventListener('click', () => guard(del, async () => {
        await api('DELETE', rest('/filters/@me/' + enc(f.id)));
        await load();
      }));
      list.append(h('li', {}, `${f.title}: ${f.keywords.map((k) => k.keyword).join(', ')} (${f.action}, ${f.context.join(', ')}) `, del));
    }
    if (!list.children.length) list.append(h('li', { class: 'empty', text: 'No keyword filters.' }));
  };
  const form = h('form', {
    class: 'filter-form',
    onsubmit: (e) => {
      e.preventDefault();
      guard(addBtn, async () => {
        await api('POST', rest('/filters/@me'), {
          title: keyword.value, keywords: [{ keyword: keyword.value, wholeWord: whole.checked }],
          context: ['home', 'public', 'tags'], action: action.value,
        });
        keyword.value = '';
        await load();
      });
    },
  }, field('Keyword', keyword), h('label', {}, whole, ' Whole word only'), field('What to do', action), addBtn);
  guard(null, load);
  return h('div', {}, h('h3', { text: 'Keyword filters' }), list, form);
}

// account is the signed-in person's own controls: a download of their
// data, and the deletion of their account behind their password.
function account() {
  const status = h('p', { class: 'hint', role: 'status' });
  const download = h('button', { type: 'button', class: 'secondary', text: 'Download my data' });
  download.addEventListener('click', () => guard(download, async () => {
    const data = await api('GET', '/auth/account/export');
    const blob = new Blob([JSON.stringify(data, null, 2)], { type: 'application/json' });
    const link = h('a', { href: URL.createObjectURL(blob), download: 'socialstream-' + state.me.preferredUsername + '.json' });
    document.body.append(link);
    link.click();
    link.remove();
    setTimeout(() => URL.revokeObjectURL(link.href), 60000);
    status.textContent = `Downloaded your data: ${plural(data.activities.length, 'post', 'posts')}, ` +
      `${plural(data.comments.length, 'comment', 'comments')}, ${plural(data.likes.length, 'like', 'likes')}.`;
  }));
  const password = h('input', { type: 'password', name: 'password', autocomplete: 'current-password', required: true });
  const remove = h('button', { type: 'submit', class: 'danger', text: 'Delete my account' });
  const form = h('form', {
    class: 'danger-zone', 'aria-labelledby': 'delete-account',
    onsubmit: (e) => {
      e.preventDefault();
      guard(remove, async () => {
        await endSession('DELETE', '/auth/account', { password: password.value });
        signedOut('Your account is deleted. Your posts, follows, groups, comments and likes are being erased.');
      });
    },
  },
  h('h2', { id: 'delete-account', text: 'Delete my account' }),
  h('p', { text: 'This cannot be undone. Everything you posted, your follows, groups, comments, likes and ' +
    'notifications are erased, and your username becomes free for anyone. Download your data first if you want to keep it.' }),
  field('Your password', password), remove);
  return h('div', { class: 'account' }, h('div', { class: 'row' }, download), status, form);
}

async function groupsView() {
  const title = h('input', { name: 'title', required: true, maxlength: 100 });
  const desc = h('textarea', { name: 'description', maxlength: 1000, rows: 2 });
  const policy = h('select', { name: 'joinPolicy' },
    h('option', { value: 'open', text: 'Open: anyone may join' }),
    h('option', { value: 'closed', text: 'Closed: members by my invitation' }));
  const submit = h('button', { type: 'submit', text: 'Create group' });
  const form = h('form', {
    class: 'card', 'aria-labelledby': 'new-group',
    onsubmit: (e) => {
      e.preventDefault();
      guard(submit, async () => {
        const res = await api('POST', rest('/groups/@me'),
          { title: title.value, description: desc.value, joinPolicy: policy.value });
        await loadGroups();
        location.hash = '#/group/' + enc(res.entry.id);
      });
    },
  }, h('h2', { id: 'new-group', text: 'New group' }), field('Title', title), field('Description (optional)', desc),
  field('Who may join', policy), submit);
  const list = h('section', { class: 'card' });
  const isCurrent = mount('Groups', h('h1', { text: 'Groups' }), list, form);
  markNav('groups');
  await guard(null, async () => {
    await loadGroups();
    if (!isCurrent()) return;
    put(list, h('h2', { text: 'My groups' }), state.groups.length
      ? h('ul', {}, state.groups.map((g) => h('li', {},
        h('a', { href: '#/group/' + enc(g.id), text: g.title }), ' · ' + plural(g.membersCount, 'member', 'members'))))
      : h('p', { class: 'empty', text: 'You are in no groups. Create one, or join one from a person’s page.' }));
  });
}

async function groupView(id) {
  const head = h('section', { class: 'card' });
  const box = h('div', {});
  const isCurrent = mount('Group', feedTabs('group:' + id), head, box);
  await guard(null, async () => {
    const [res] = await Promise.all([api('GET', rest('/groups/@all/' + enc(id))), loadGroups()]);
    if (!isCurrent()) return;
    const g = res.entry;
    document.title = g.title + ' · socialstream';
    const member = state.groups.some((x) => x.id === g.id);
    const owner = state.me && g.ownerId === state.me.id;
    // A closed group shows itself only to its members and to the people
    // it invites: a non-member who sees one is invited.
    const invited = !member && g.joinPolicy === 'closed';
    const members = rest(`/groups/@all/${enc(g.id)}/members`);
    const button = (text, cls, call) => {
      const b = h('button', { type: 'button', class: cls, text });
      b.addEventListener('click', () => guard(b, async () => {
        await call();
        await loadGroups();
        route();
      }));
      return b;
    };
    const leave = () => api('DELETE', members + '/@me');
    const join = () => api('POST', members, { id: '@me' });
    put(head,
      h('h1', { text: g.title }),
      g.description ? h('p', { text: g.description }) : null,
      h('p', { class: 'counts', text: `${plural(g.membersCount, 'member', 'members')} · ${g.joinPolicy === 'closed' ? 'closed' : 'open'} group` }),
      member && !owner ? button('Leave group', 'secondary', leave) : null,
      !member && !invited ? button('Join group', '', join) : null,
      invited ? h('p', { class: 'hint', text: 'You are invited to this closed group.' }) : null,
      invited ? h('div', { class: 'row' }, button('Accept invitation', '', join), button('Decline', 'secondary', leave)) : null);
    if (!member && g.joinPolicy === 'closed') {
      put(box, h('p', { class: 'empty', text: 'This group’s posts are for its members.' }));
      return;
    }
    const feed = stream('/activities/@me/' + enc(g.id), g.title + ' feed', isCurrent,
      'No posts yet. Members’ posts appear here.');
    put(box, feed);
    await feed.load(true);
  });
}

// tagView shows a tag's feed, with a button to follow it: its new posts
// then come home too.
async function tagView(name) {
  const head = h('section', { class: 'card' });
  const box = h('div', {});
  const isCurrent = mount('#' + name, head, box);
  await guard(null, async () => {
    let tag = (await api('GET', rest('/tags/@me/' + enc(name)))).entry;
    if (!isCurrent()) return;
    document.title = '#' + tag.name + ' · socialstream';
    const btn = h('button', { type: 'button' });
    const set = () => {
      btn.textContent = tag.following ? 'Unfollow tag' : 'Follow tag';
      btn.className = tag.following ? 'secondary' : '';
      btn.setAttribute('aria-label', `${tag.following ? 'Unfollow' : 'Follow'} #${tag.name}`);
      btn.title = tag.following ? '' : 'Its new posts come to your home feed.';
    };
    set();
    btn.addEventListener('click', () => guard(btn, async () => {
      if (tag.following) {
        await api('DELETE', rest('/tags/@me/' + enc(tag.name)));
        tag = { name: tag.name, following: false };
      } else {
        tag = (await api('POST', rest('/tags/@me'), { name: tag.name })).entry;
      }
      set();
    }));
    put(head, h('h1', { text: '#' + tag.name }), btn);
    const feed = stream('/activities/@me/@tag:' + enc(tag.name), '#' + tag.name + ' feed', isCurrent,
      'No posts with this tag yet.');
    put(box, feed);
    await feed.load(true);
  });
}

async function activityView(userId, id) {
  const box = h('div', {});
  const isCurrent = mount('Post', box);
  await guard(null, async () => {
    const res = await api('GET', rest(`/activities/${enc(userId)}/@self/@app/${enc(id)}`));
    if (!isCurrent()) return;
    const a = (res.list || [])[0];
    if (!a) {
      put(box, h('p', { class: 'empty', text: 'This post is gone.' }));
      return;
    }
    // Its thread: what it answers above, the replies below.
    const ctx = await api('GET', rest(`/activities/${enc(userId)}/@self/@app/${enc(id)}/context`));
    if (!isCurrent()) return;
    const art = activity(a);
    const thread = (list, label) => list.length
      ? h('ol', { class: 'stream thread', 'aria-label': label }, list.map((x) => h('li', {}, activity(x)))) : null;
    put(box, h('h1', { class: 'visually-hidden', text: 'Post' }),
      thread(ctx.ancestors, 'What it answers'), h('div', { class: 'focus' }, art), thread(ctx.descendants, 'Replies'));
    art.querySelector('[aria-controls]').click();
  });
}

const NOTE_TEXT = {
  mention: 'mentioned you',
  follow: 'followed you',
  comment: 'commented on your post',
  like: 'liked your post',
  repost: 'reposted your post',
  reply: 'replied to your post',
  group_join: 'joined your group',
  group_invite: 'invited you to a group',
  follow_request: 'asked to follow you',
  moderation: 'Moderation acted on your account',
};

async function notificationsView() {
  const list = h('ol', { class: 'notes', 'aria-label': 'Notifications' });
  const more = h('button', { type: 'button', class: 'secondary', text: 'Load more', hidden: true });
  const all = h('button', { type: 'button', class: 'secondary', text: 'Mark all as read' });
  const isCurrent = mount('Notifications', h('h1', { text: 'Notifications' }), h('div', { class: 'row' }, all), list, more);
  markNav('notifications');
  // Grouped: the likes of a post, its reposts and the follows are one line
  // each, "ann and 12 others liked your post".
  let next = 0;
  const who = (g) => {
    const [first, second] = g.actors;
    if (!first) return [h('span', { text: 'someone' })];
    if (g.count === 1) return [personLink(first)];
    if (g.count === 2 && second) return [personLink(first), ' and ', personLink(second)];
    return [personLink(first), ` and ${plural(g.count - 1, 'other', 'others')}`];
  };
  const render = (g) => {
    const li = h('li', { class: g.read ? 'read' : 'unread' });
    const what = h('span', {}, ...who(g), ' ', NOTE_TEXT[g.type] || g.type);
    const link = g.type === 'moderation' ? h('a', { href: '#/notices', text: 'See why' }) : g.activityId
      ? h('a', { href: `#/activity/${enc(g.type === 'mention' || g.type === 'reply' ? (g.actors[0] && g.actors[0].id) : state.me.id)}/${enc(g.activityId)}`, text: 'See the post' })
      : g.groupId ? h('a', { href: '#/group/' + enc(g.groupId), text: 'See the group' }) : null;
    if (!g.read) li.append(h('span', { class: 'visually-hidden', text: 'Unread: ' }));
    li.append(what, ' ', time(g.published));
    if (link) li.append(' ', link);
    if (!g.read) {
      const mark = h('button', { type: 'button', class: 'secondary small', text: 'Mark read' });
      mark.addEventListener('click', () => guard(mark, async () => {
        await api('POST', rest('/notifications/@me/read'), { ids: g.ids });
        g.read = true;
        li.replaceWith(render(g));
        refreshBadge();
      }));
      li.append(' ', mark);
    }
    return li;
  };
  const load = async (reset) => {
    const from = reset ? 0 : next;
    const res = await api('GET', withQuery(rest('/notifications/@me'), { count: PAGE, startIndex: from, grouped: true }));
    if (!isCurrent()) return;
    if (reset) put(list);
    for (const g of res.list || []) list.append(render(g));
    if (!list.children.length) list.append(h('li', { class: 'empty', text: 'No notifications.' }));
    next = from + (res.list || []).length;
    more.hidden = next >= (res.totalResults || 0);
  };
  more.addEventListener('click', () => guard(more, () => load(false)));
  all.addEventListener('click', () => guard(all, async () => {
    await api('POST', rest('/notifications/@me/read'), { all: true });
    await load(true);
    refreshBadge();
  }));
  await guard(null, () => load(true));
}

// ---- reports and moderation ----------------------------------------------------

const CATEGORIES = [['spam', 'Spam'], ['abuse', 'Abuse or harassment'], ['illegal', 'Illegal content'], ['other', 'Something else']];

// reportForm files a report of a person (and some of their posts), in
// place.
function reportForm(accountId, activityIds, close) {
  const category = h('select', { name: 'category' }, CATEGORIES.map(([v, t]) => h('option', { value: v, text: t })));
  const comment = h('textarea', { name: 'comment', maxlength: 1000, rows: 2, placeholder: 'What is wrong (optional)' });
  const send = h('button', { type: 'submit', text: 'Send report' });
  const status = h('p', { class: 'hint', role: 'status' });
  const form = h('form', { class: 'report' }, field('Why', category), field('Comment', comment), h('div', { class: 'row' }, send), status);
  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    guard(send, async () => {
      await api('POST', rest('/reports/@me'), { accountId, activityIds, category: category.value, comment: comment.value });
      put(form, h('p', { class: 'hint', role: 'status', text: 'Thank you: moderators will look at it.' }));
      setTimeout(close, 1500);
    });
  });
  return form;
}

// reportPerson is the "Report" of a person's page.
function reportPerson(person) {
  const box = h('div', {});
  const btn = h('button', { type: 'button', class: 'secondary', text: 'Report', 'aria-label': 'Report @' + person.preferredUsername, 'aria-expanded': 'false' });
  btn.addEventListener('click', () => {
    const open = btn.getAttribute('aria-expanded') !== 'true';
    btn.setAttribute('aria-expanded', String(open));
    put(box, open ? reportForm(person.id, [], () => btn.click()) : null);
  });
  return h('div', { class: 'row' }, btn, box);
}

const ACTION_TEXT = {
  remove: 'Posts removed', restore: 'Posts restored', limit: 'Account limited', unlimit: 'Limit lifted',
  suspend: 'Account suspended', unsuspend: 'Suspension lifted', grant: 'Role changed', dismiss: 'Report dismissed',
};

// noticesView is what moderation did to one's account, and why; and
// one's own reports with their state.
async function noticesView() {
  const notices = h('ol', { class: 'notes', 'aria-label': 'Notices' });
  const reports = h('ol', { class: 'notes', 'aria-label': 'My reports' });
  const isCurrent = mount('Notices', h('h1', { text: 'Moderation notices' }), notices, h('h2', { text: 'My reports' }), reports);
  await guard(null, async () => {
    const [ns, rs] = await Promise.all([api('GET', rest('/moderation/notices/@me')), api('GET', rest('/reports/@me'))]);
    if (!isCurrent()) return;
    for (const n of ns.list || []) {
      notices.append(h('li', {}, h('strong', { text: ACTION_TEXT[n.action] || n.action }), ': ', n.reason, ' ', time(n.created),
        n.activityIds.length ? h('span', { class: 'hint', text: ` (${plural(n.activityIds.length, 'post', 'posts')})` }) : null));
    }
    if (!notices.children.length) notices.append(h('li', { class: 'empty', text: 'Nothing.' }));
    for (const r of rs.list || []) {
      reports.append(h('li', {}, `${r.category}: `, h('span', { class: 'state', text: r.state }), ' ', time(r.created)));
    }
    if (!reports.children.length) reports.append(h('li', { class: 'empty', text: 'No reports.' }));
  });
}

// moderationView is the queue of open reports, each with what was
// reported as it was then and the actions a moderator takes; admins see
// the audit log too.
async function moderationView() {
  const queue = h('ol', { class: 'reports', 'aria-label': 'Open reports' });
  const log = h('ol', { class: 'notes', 'aria-label': 'Audit log' });
  const admin = state.me.role === 'admin';
  const isCurrent = mount('Moderation', h('h1', { text: 'Moderation' }), h('h2', { text: 'Open reports' }), queue,
    admin ? h('h2', { text: 'Audit log' }) : null, admin ? log : null);
  markNav('moderation');
  const render = (r) => {
    const li = h('li', { class: 'card' });
    const reason = h('input', { name: 'reason', maxlength: 1000, placeholder: 'Reason, told to the account' });
    const status = h('p', { class: 'hint', role: 'status' });
    const act = (action) => {
      const b = h('button', { type: 'button', class: action === 'dismiss' ? 'secondary' : 'danger', text: action[0].toUpperCase() + action.slice(1) });
      b.addEventListener('click', () => guard(b, async () => {
        await api('POST', rest('/moderation/actions'), { action, reportId: r.id, reason: reason.value });
        put(li, h('p', { class: 'hint', role: 'status', text: `${ACTION_TEXT[action] || action}: report resolved.` }));
        if (admin) await loadLog();
      }));
      return b;
    };
    put(li,
      h('p', {}, h('strong', { text: r.category }), ' report of ', h('a', { href: '#/people/' + enc(r.account.preferredUsername), text: '@' + r.account.preferredUsername }),
        ' ', time(r.created)),
      r.comment ? h('p', { class: 'body', text: r.comment }) : null,
      r.activities.length ? h('ul', { class: 'snapshot' }, r.activities.map((a) => h('li', {}, h('p', { class: 'title', text: a.title }), a.body ? h('p', { class: 'body', text: a.body }) : null))) : null,
      field('Reason', reason),
      h('div', { class: 'row' }, act('dismiss'), r.activities.length ? act('remove') : null, act('limit'), act('suspend')),
      status);
    return li;
  };
  const loadLog = async () => {
    const res = await api('GET', rest('/moderation/actions'));
    put(log, (res.list || []).map((e) => h('li', {}, h('strong', { text: ACTION_TEXT[e.action] || e.action }), ' ', e.reason, ' ', time(e.created))));
  };
  await guard(null, async () => {
    const res = await api('GET', rest('/moderation/reports'));
    if (!isCurrent()) return;
    put(queue, (res.list || []).map(render));
    if (!queue.children.length) queue.append(h('li', { class: 'empty', text: 'No open reports.' }));
    if (admin) await loadLog();
  });
}

// ---- routing -----------------------------------------------------------------

function route() {
  clearError();
  if (state.notice) {
    showError(state.notice);
    state.notice = '';
  }
  const parts = (location.hash.replace(/^#\/?/, '') || 'home').split('/').map(decodeURIComponent);
  const [name, a, b] = parts;
  if (!state.me) {
    authView(name === 'signup' ? 'signup' : 'login');
    return;
  }
  refreshBadge();
  switch (name) {
    case 'home': case 'mine': case 'mentions': case 'public': case 'bookmarks': return feedView(name);
    case 'group': return groupView(a);
    case 'tag': return tagView(a);
    case 'groups': return groupsView();
    case 'people': return personView(a || state.me.preferredUsername);
    case 'activity': return activityView(a, b);
    case 'notifications': return notificationsView();
    case 'notices': return noticesView();
    case 'moderation': return moderationView();
    default: go('#/home');
  }
}

async function start() {
  $('logout').addEventListener('click', async () => {
    try {
      await endSession('POST', '/auth/logout');
    } catch (err) {
      // The token is dropped here whatever the server answered.
    }
    signedOut();
  });
  // Focus the new view's heading for keyboard and screen-reader users.
  window.addEventListener('hashchange', () => {
    route();
    $('main').focus({ preventScroll: true });
  });
  // A link to the view shown changes no hash, so no route: it looks for
  // new notifications all the same (what is typed on the view stays).
  document.addEventListener('click', (e) => {
    const a = e.target.closest && e.target.closest('a[href^="#/"]');
    if (a && a.getAttribute('href') === location.hash) refreshBadge();
  });
  setInterval(refreshBadge, BADGE_POLL_MS);
  document.addEventListener('visibilitychange', () => { if (!document.hidden) refreshBadge(); });
  if (state.token) {
    try {
      state.me = (await api('GET', rest('/people/@me/@self'))).entry;
      await loadGroups();
    } catch (err) {
      if (state.token) showError(err); // a 401 has signed out already
      if (!state.me) state.token = '';
    }
  }
  renderNav();
  route();
}

start();
