// The traffic page's script (sip2-simulator/src/page.ts serves it under a CSP
// allowing only this origin): polls GET /traffic and GET /state, draws each
// connection's messages field by field as the control endpoint decoded them,
// and calls the endpoint's routes for the switches. DOM nodes are built with
// textContent only: what a client sent is never read as HTML.

const POLL_MS = 1000;
const TIMEOUT_MS = 5000;

const $ = (id) => document.getElementById(id);

function element(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

async function call(method, path, body) {
  const response = await fetch(path, {
    method,
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(TIMEOUT_MS),
  });
  const answer = await response.json();
  if (!response.ok) throw new Error(answer.error ?? `${method} ${path}: ${response.status}`);
  return answer;
}

/** Runs a switch and says what came of it. */
async function act(what, method, path, body) {
  try {
    await call(method, path, body);
    $('result').textContent = `${what}: done`;
  } catch (error) {
    $('result').textContent = `${what}: ${error.message}`;
  }
  await refresh();
}

function drawFields(decoded) {
  const list = element('div', 'fields');
  for (const field of decoded.fields) {
    list.append(element('span', 'tag', field.tag ?? ''), element('span', 'name', field.name ?? '(unknown)'));
    list.append(element('span', 'value', field.value));
  }
  if (decoded.rest) list.append(element('span', 'tag', ''), element('span', 'name', '(rest)'), element('span', 'value', decoded.rest));
  return list;
}

function drawMessage(message) {
  const node = element('div', `message ${message.direction}`);
  if (message.deviations.length > 0) node.classList.add('deviation');
  const head = element('div', 'head');
  head.append(element('span', 'direction', message.direction === 'in' ? '→ in ' : '← out '));
  head.append(element('time', '', `${message.at.slice(11, 23)} `));
  head.append(element('strong', 'code', message.decoded ? `${message.decoded.code} ${message.decoded.name}` : 'not a catalogue message'));
  node.append(head, element('div', 'raw', message.text));
  if (message.decoded) node.append(drawFields(message.decoded));
  if (message.deviations.length > 0) {
    const list = element('ul', 'deviations');
    for (const d of message.deviations) list.append(element('li', 'deviation-item', `deviation: ${d.rule} (${d.section}): ${d.detail}`));
    node.append(list);
  }
  return node;
}

function drawConnection(connection) {
  const node = element('section', `connection${connection.closedAt ? ' closed' : ''}`);
  node.dataset.id = String(connection.id);
  const who = connection.user === null ? 'not logged in' : `logged in as ${connection.user}`;
  const when = connection.closedAt ? `closed ${connection.closedAt}` : 'open';
  node.append(element('h2', '', `#${connection.id} ${connection.remote}, ${who}, opened ${connection.openedAt}, ${when}`));
  if (connection.dropped > 0) node.append(element('p', 'dropped', `${connection.dropped} older messages not kept`));
  for (const message of connection.messages) node.append(drawMessage(message));
  return node;
}

let shown = '';

async function refresh() {
  try {
    const [traffic, state] = await Promise.all([call('GET', '/traffic'), call('GET', '/state')]);
    const faults = Object.entries(state.faults)
      .filter(([, value]) => value !== false && value !== 0 && value !== null)
      .map(([name, value]) => `${name}=${value}`);
    $('state').textContent =
      `${state.dialect}, ${state.charset}, SIP2 on ${state.host}:${state.port}, ${state.connections} connection(s); ` +
      `profile: ${state.profile.profile || 'none'}; faults: ${faults.join(', ') || 'none'}`;
    $('refuse').checked = state.faults.refuseConnections === true;
    const text = JSON.stringify(traffic);
    if (text === shown) return;
    shown = text;
    const nodes = traffic.connections.map(drawConnection);
    $('connections').replaceChildren(...(nodes.length > 0 ? nodes : [element('p', '', 'no connections yet')]));
  } catch (error) {
    $('state').textContent = `the control endpoint does not answer: ${error.message}`;
  }
}

function poll() {
  refresh().finally(() => setTimeout(poll, POLL_MS));
}

function wire() {
  $('profile-form').addEventListener('submit', (event) => {
    event.preventDefault();
    act('profile', 'PUT', '/profile', { profile: $('profile').value.trim() });
  });
  $('latency-form').addEventListener('submit', (event) => {
    event.preventDefault();
    act('latency', 'PUT', '/faults', { latencyMs: Number($('latency').value) });
  });
  for (const button of document.querySelectorAll('[data-fault]')) {
    button.addEventListener('click', () => act(button.textContent, 'PUT', '/faults', { [button.dataset.fault]: 1 }));
  }
  $('refuse').addEventListener('change', () =>
    act('refuse connections', 'PUT', '/faults', { refuseConnections: $('refuse').checked }),
  );
  $('clear-faults').addEventListener('click', () => act('clear faults', 'DELETE', '/faults'));
  $('reject-form').addEventListener('submit', (event) => {
    event.preventDefault();
    const code = $('reject').value.trim();
    act('refuse message', 'PUT', '/faults', { rejectMessage: code === '' ? null : code });
  });
  $('block-form').addEventListener('submit', (event) => {
    event.preventDefault();
    act('block', 'POST', '/desk/block', { patron: $('patron').value.trim(), reason: $('reason').value });
  });
  $('enable').addEventListener('click', () => act('enable', 'POST', '/desk/enable', { patron: $('patron').value.trim() }));
}

wire();
poll();
