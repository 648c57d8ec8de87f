/**
 * The local Discord stand-in's inbox: a page that draws the received embeds the way Discord does (colored left
 * bar, title, description with its markdown, inline fields in columns, footer and timestamp), newest first,
 * polling `/_local/inbox.json` every second. The script builds every node with text nodes only, so nothing a
 * message holds is ever parsed as HTML; the CSP forbids inline scripts besides.
 */

export const INBOX_CSP =
  "default-src 'none'; script-src 'self'; style-src 'unsafe-inline'; connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

export const INBOX_HTML = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Inbox · local Discord stand-in</title>
<style>
  :root { color-scheme: dark; }
  body { margin: 0; background: #313338; color: #dbdee1; font: 16px/1.375 "gg sans", "Noto Sans", "Helvetica Neue", Helvetica, Arial, sans-serif; }
  header { position: sticky; top: 0; background: #2b2d31; border-bottom: 1px solid #1f2023; padding: 12px 16px; display: flex; align-items: baseline; gap: 12px; }
  header h1 { margin: 0; font-size: 16px; color: #f2f3f5; }
  header h1::before { content: "# "; color: #80848e; }
  header .status { font-size: 13px; color: #949ba4; }
  main { padding: 8px 0 24px; }
  .empty { color: #949ba4; padding: 32px 16px; }
  .message { display: grid; grid-template-columns: 40px 1fr; column-gap: 16px; padding: 8px 16px; }
  .message:hover { background: #2e3035; }
  .avatar { width: 40px; height: 40px; border-radius: 50%; background: #5865f2; color: #fff; display: grid; place-items: center; font-weight: 700; }
  .meta { display: flex; align-items: center; gap: 6px; }
  .author { color: #f2f3f5; font-weight: 500; }
  .tag { background: #5865f2; color: #fff; font-size: 10px; font-weight: 600; padding: 0 4px; border-radius: 3px; line-height: 15px; }
  .received, .webhook { color: #949ba4; font-size: 12px; }
  .embed { max-width: 520px; margin-top: 4px; background: #2b2d31; border-left: 4px solid #1e1f22; border-radius: 4px; padding: 8px 16px 16px 12px; display: grid; gap: 8px; }
  .embed-title { color: #f2f3f5; font-weight: 600; margin-top: 8px; }
  .embed-description { font-size: 14px; white-space: pre-wrap; overflow-wrap: anywhere; }
  .embed-fields { display: grid; grid-template-columns: repeat(12, 1fr); gap: 8px; }
  .embed-field { font-size: 14px; min-width: 0; }
  .embed-field-name { color: #f2f3f5; font-weight: 600; margin-bottom: 2px; }
  .embed-field-value { white-space: pre-wrap; overflow-wrap: anywhere; }
  .embed-footer { font-size: 12px; color: #b5bac1; }
  code { background: #1e1f22; border-radius: 3px; padding: 0 3px; font-size: 85%; }
</style>
</head>
<body>
<header><h1>webhook-inbox</h1><span class="status" id="status">connecting…</span></header>
<main id="messages"><p class="empty">No messages yet. Upload a version (<code>npm run -s dashboard -- versions upload --project ID --file PATH</code>) and its embed shows here.</p></main>
<script src="/_local/inbox.js"></script>
</body>
</html>
`;

export const INBOX_SCRIPT = `'use strict';
(() => {
  const list = document.getElementById('messages');
  const status = document.getElementById('status');
  const empty = list.firstElementChild;
  let shown = '';

  const el = (tag, className, ...children) => {
    const node = document.createElement(tag);
    if (className) node.className = className;
    node.append(...children);
    return node;
  };

  // Discord's markdown as far as embeds use it: \\\\-escapes, **bold**, *italic*/_italic_, \`code\`, ~~strike~~, line breaks.
  const MARKERS = [['**', 'strong'], ['~~', 's'], ['\`', 'code'], ['*', 'em'], ['_', 'em']];
  // As Discord: a backslash escapes any character that is not a letter, a digit or a space (\\@, \\:, 1\\. too).
  const ESCAPABLE = /[^0-9A-Za-z\\s]/;
  const closing = (text, from, marker) => {
    for (let i = from; i < text.length; i++) {
      if (text[i] === '\\\\') { i++; continue; }
      if (text.startsWith(marker, i)) return i;
    }
    return -1;
  };
  const markdown = (text) => {
    const out = document.createDocumentFragment();
    let plain = '';
    const flush = () => { if (plain) { out.append(document.createTextNode(plain)); plain = ''; } };
    for (let i = 0; i < text.length;) {
      if (text[i] === '\\\\' && i + 1 < text.length && ESCAPABLE.test(text[i + 1])) { plain += text[i + 1]; i += 2; continue; }
      if (text[i] === '\\n') { flush(); out.append(document.createElement('br')); i++; continue; }
      const marker = MARKERS.find(([m]) => text.startsWith(m, i));
      if (marker) {
        const [m, tag] = marker;
        const end = closing(text, i + m.length, m);
        if (end > i + m.length) {
          flush();
          const inner = text.slice(i + m.length, end);
          out.append(tag === 'code' ? el('code', '', document.createTextNode(inner)) : el(tag, '', markdown(inner)));
          i = end + m.length;
          continue;
        }
      }
      plain += text[i];
      i++;
    }
    flush();
    return out;
  };

  const color = (value) => (Number.isInteger(value) && value >= 0 && value <= 0xffffff ? '#' + value.toString(16).padStart(6, '0') : '#1e1f22');
  const when = (iso) => {
    const date = new Date(iso);
    return Number.isNaN(date.getTime()) ? '' : date.toLocaleString();
  };
  const text = (value) => (typeof value === 'string' ? value : '');

  // Consecutive inline fields share a row, three at most, like Discord's columns; others take the full width.
  const fieldNodes = (fields) => {
    const nodes = [];
    let run = [];
    const closeRun = () => {
      for (let start = 0; start < run.length; start += 3) {
        const row = run.slice(start, start + 3);
        for (const field of row) nodes.push(fieldNode(field, 12 / row.length));
      }
      run = [];
    };
    for (const field of Array.isArray(fields) ? fields : []) {
      if (field && field.inline === true) run.push(field);
      else { closeRun(); nodes.push(fieldNode(field || {}, 12)); }
    }
    closeRun();
    return nodes;
  };
  const fieldNode = (field, span) => {
    const node = el('div', 'embed-field', el('div', 'embed-field-name', markdown(text(field.name))), el('div', 'embed-field-value', markdown(text(field.value))));
    node.style.gridColumn = 'span ' + span;
    return node;
  };

  const embedNode = (embed) => {
    const node = el('article', 'embed');
    node.style.borderLeftColor = color(embed.color);
    if (text(embed.title)) node.append(el('div', 'embed-title', markdown(embed.title)));
    if (text(embed.description)) node.append(el('div', 'embed-description', markdown(embed.description)));
    if (Array.isArray(embed.fields) && embed.fields.length > 0) node.append(el('div', 'embed-fields', ...fieldNodes(embed.fields)));
    const footer = [text(embed.footer && embed.footer.text), when(text(embed.timestamp))].filter(Boolean).join(' • ');
    if (footer) node.append(el('div', 'embed-footer', document.createTextNode(footer)));
    return node;
  };

  const messageNode = (message) => {
    const author = text(message.author && message.author.username) || 'Webhook';
    return el('section', 'message',
      el('div', 'avatar', document.createTextNode(author.slice(0, 1).toUpperCase())),
      el('div', 'body',
        el('div', 'meta', el('span', 'author', document.createTextNode(author)), el('span', 'tag', document.createTextNode('APP')), el('span', 'received', document.createTextNode(when(text(message.timestamp)))), el('span', 'webhook', document.createTextNode('via webhook ' + text(message.webhook_id)))),
        ...(text(message.content) ? [el('div', 'content', markdown(message.content))] : []),
        ...(Array.isArray(message.embeds) ? message.embeds : []).map(embedNode)));
  };

  const refresh = async () => {
    try {
      const response = await fetch('/_local/inbox.json', { cache: 'no-store' });
      const { messages } = await response.json();
      const key = messages.map((message) => message.id).join(',');
      status.textContent = messages.length + (messages.length === 1 ? ' message' : ' messages') + ' · updated ' + new Date().toLocaleTimeString();
      if (key === shown) return;
      shown = key;
      list.replaceChildren(...(messages.length > 0 ? messages.map(messageNode) : [empty]));
    } catch (error) {
      status.textContent = 'cannot reach the local server: ' + error;
    }
  };
  refresh();
  setInterval(refresh, 1000);
})();
`;
