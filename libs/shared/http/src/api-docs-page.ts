/**
 * The API reference page both APIs serve at /docs, rendered on the server from their OpenAPI 3.1
 * document: one static, self-contained HTML page (inline CSS, no script, no CDN), so it works on
 * machines without internet access and cannot drift from /openapi.json. What differs between the
 * apps (how a caller presents credentials) comes in as options; the page knows no app.
 */

/** The parts of an OpenAPI 3.1 document the page reads. */
export interface ApiDocument {
  openapi?: unknown;
  info?: unknown;
  paths: Record<string, Record<string, unknown>>;
  components?: Record<string, unknown>;
}

export interface ApiDocsPageOptions {
  /** scheme://host the curl examples call (e.g. taken from the request). */
  origin: string;
  /** How an operation that needs credentials is called. */
  credential: {
    /** curl flags, e.g. `-H 'X-API-KEY: <your key>'` (HTML-escaped by the page). */
    curl: string;
    /** Badge of an operation that needs them, e.g. `X-API-KEY`. */
    badge: string;
    /** Badge of a public operation, e.g. `no key`. */
    publicBadge: string;
  };
}

interface OpenApiOperation {
  operationId: string;
  summary: string;
  description?: string;
  security?: unknown[];
  parameters?: Array<Record<string, unknown>>;
  requestBody?: { content?: Record<string, { schema?: unknown }> };
  responses: Record<string, unknown>;
}

type Json = Record<string, unknown>;

const escapeHtml = (text: string): string =>
  text.replace(/[&<>"']/g, (c) =>
    c === '&' ? '&amp;' : c === '<' ? '&lt;' : c === '>' ? '&gt;' : c === '"' ? '&quot;' : '&#39;',
  );

/** Text inside an element (quotes need no escaping there, and a shell example keeps them). */
const escapeText = (text: string): string =>
  text.replace(/[&<>]/g, (c) => (c === '&' ? '&amp;' : c === '<' ? '&lt;' : '&gt;'));

/** `code` spans and paragraphs/bullets: the only markup the document's descriptions use. */
function prose(text: string | undefined): string {
  if (!text) return '';
  const inline = (s: string) => escapeHtml(s).replace(/`([^`]+)`/g, '<code>$1</code>');
  const blocks = text.split(/\n\s*\n/);
  return blocks
    .map((block) => {
      const lines = block.split('\n').filter((l) => l.trim() !== '');
      if (lines.length > 0 && lines.every((l) => l.trimStart().startsWith('- '))) {
        return `<ul>${lines.map((l) => `<li>${inline(l.trimStart().slice(2))}</li>`).join('')}</ul>`;
      }
      const bullets = lines.filter((l) => l.trimStart().startsWith('- '));
      if (bullets.length > 0) {
        const head = lines.filter((l) => !l.trimStart().startsWith('- '));
        return `<p>${inline(head.join(' '))}</p><ul>${bullets.map((l) => `<li>${inline(l.trimStart().slice(2))}</li>`).join('')}</ul>`;
      }
      return `<p>${inline(lines.join(' '))}</p>`;
    })
    .join('');
}

const anchor = (name: string) => `schema-${name.replace(/[^A-Za-z0-9_-]/g, '_')}`;

function refName(ref: string): string {
  return ref.slice(ref.lastIndexOf('/') + 1);
}

/** A short human description of a JSON Schema's type, linking to named components. */
function typeOf(schema: unknown): string {
  if (!schema || typeof schema !== 'object') return 'any';
  const s = schema as Json;
  if (typeof s['$ref'] === 'string') {
    const name = refName(s['$ref']);
    return `<a href="#${anchor(name)}">${escapeHtml(name)}</a>`;
  }
  const union = (s['anyOf'] ?? s['oneOf']) as unknown[] | undefined;
  if (Array.isArray(union)) return union.map(typeOf).join(' | ');
  if ('const' in s) return `<code>${escapeHtml(JSON.stringify(s['const']))}</code>`;
  if (Array.isArray(s['enum'])) {
    return (s['enum'] as unknown[])
      .map((v) => `<code>${escapeHtml(JSON.stringify(v))}</code>`)
      .join(' | ');
  }
  const type = s['type'];
  if (Array.isArray(type)) return type.map((t) => typeOf({ ...s, type: t })).join(' | ');
  if (type === 'array') return `array of ${typeOf(s['items'])}`;
  if (type === 'integer' || type === 'number' || type === 'string') {
    return escapeHtml(typeof s['format'] === 'string' ? `${type} (${s['format']})` : type);
  }
  if (type === 'object') {
    return s['additionalProperties'] === false || !s['properties'] ? 'object' : 'object (open)';
  }
  return escapeHtml(typeof type === 'string' ? type : 'any');
}

function constraints(schema: Json): string {
  const parts: string[] = [];
  if (typeof schema['minimum'] === 'number') parts.push(`≥ ${schema['minimum']}`);
  if (typeof schema['minLength'] === 'number') parts.push(`min length ${schema['minLength']}`);
  const examples = schema['examples'];
  if (Array.isArray(examples) && examples.length > 0) {
    parts.push(`e.g. <code>${escapeHtml(JSON.stringify(examples[0]))}</code>`);
  }
  return parts.join('; ');
}

function schemaSection(name: string, schema: Json): string {
  const properties = (schema['properties'] ?? {}) as Record<string, Json>;
  const required = new Set((schema['required'] as string[] | undefined) ?? []);
  const rows = Object.entries(properties)
    .map(
      ([prop, propSchema]) =>
        `<tr><td><code>${escapeHtml(prop)}</code></td><td>${typeOf(propSchema)}</td><td>${required.has(prop) ? 'yes' : 'no'}</td><td>${prose(typeof propSchema['description'] === 'string' ? propSchema['description'] : '')}${constraints(propSchema)}</td></tr>`,
    )
    .join('');
  const openness =
    schema['type'] !== 'object'
      ? `<p>Type: ${typeOf(schema)}</p>`
      : schema['additionalProperties'] === false
        ? '<p class="note">Exactly these fields; no others.</p>'
        : '<p class="note">Other fields may be present and are returned as supplied.</p>';
  return `<section class="schema" id="${anchor(name)}">
<h3>${escapeHtml(name)}</h3>
${prose(typeof schema['description'] === 'string' ? schema['description'] : '')}
${openness}
${rows ? `<table><thead><tr><th>Field</th><th>Type</th><th>Required</th><th>Notes</th></tr></thead><tbody>${rows}</tbody></table>` : ''}
<details><summary>JSON Schema</summary><pre>${escapeHtml(JSON.stringify(schema, null, 2))}</pre></details>
</section>`;
}

function resolveResponse(doc: ApiDocument, response: unknown): Json {
  const r = response as Json;
  if (typeof r['$ref'] === 'string') {
    const responses = (doc.components?.['responses'] ?? {}) as Record<string, Json>;
    return responses[refName(r['$ref'])] ?? {};
  }
  return r;
}

function resolveParameter(doc: ApiDocument, parameter: Json): Json {
  if (typeof parameter['$ref'] !== 'string') return parameter;
  const parameters = (doc.components?.['parameters'] ?? {}) as Record<string, Json>;
  return parameters[refName(parameter['$ref'])] ?? {};
}

function operationSection(
  doc: ApiDocument,
  path: string,
  method: string,
  op: OpenApiOperation,
  options: ApiDocsPageOptions,
): string {
  const needsCredential = op.security === undefined || op.security.length > 0;
  const params = (op.parameters ?? [])
    .map((p) => resolveParameter(doc, p))
    .map(
      (p) =>
        `<tr><td><code>${escapeHtml(String(p['name']))}</code></td><td>${escapeHtml(String(p['in']))}</td><td>${typeOf(p['schema'])}</td><td>${prose(String(p['description'] ?? ''))}</td></tr>`,
    )
    .join('');
  const responses = Object.entries(op.responses)
    .map(([status, raw]) => {
      const response = resolveResponse(doc, raw);
      const content = (response['content'] ?? {}) as Record<string, Json>;
      const bodies = Object.entries(content)
        .map(
          ([mediaType, media]) =>
            `<code>${escapeHtml(mediaType)}</code> ${typeOf(media['schema'])}`,
        )
        .join('<br>');
      const headers = Object.keys((response['headers'] ?? {}) as Json)
        .map((h) => `<code>${escapeHtml(h)}</code>`)
        .join(', ');
      return `<tr><td class="status s${status[0]}">${escapeHtml(status)}</td><td>${prose(String(response['description'] ?? ''))}</td><td>${bodies}</td><td>${headers}</td></tr>`;
    })
    .join('');
  const bodyMedia = op.requestBody?.content?.['application/json'];
  const body = bodyMedia ? `<p>Body: ${typeOf(bodyMedia.schema)}</p>` : '';
  // One option per line, as a shell takes it pasted: no line is wider than the page.
  const example = [
    `curl -i${method.toUpperCase() === 'GET' ? '' : ` -X ${escapeHtml(method.toUpperCase())}`}`,
    ...(needsCredential ? [escapeText(options.credential.curl)] : []),
    ...(bodyMedia ? [`-H 'Content-Type: application/json' -d '{...}'`] : []),
    `'${escapeHtml(options.origin)}${escapeHtml(path)}'`,
  ].join(' \\\n  ');
  return `<section class="op" id="op-${escapeHtml(op.operationId)}">
<h3><span class="method">${escapeHtml(method.toUpperCase())}</span> <code>${escapeHtml(path)}</code></h3>
<p class="summary">${escapeHtml(op.summary)}${needsCredential ? ` <span class="key">${escapeHtml(options.credential.badge)}</span>` : ` <span class="public">${escapeHtml(options.credential.publicBadge)}</span>`}</p>
${prose(op.description)}
${body}
${params ? `<h4>Parameters</h4><table><thead><tr><th>Name</th><th>In</th><th>Type</th><th>Description</th></tr></thead><tbody>${params}</tbody></table>` : ''}
<h4>Responses</h4><table><thead><tr><th>Status</th><th>Meaning</th><th>Body</th><th>Headers</th></tr></thead><tbody>${responses}</tbody></table>
<pre class="example">${example}</pre>
</section>`;
}

const STYLE = `
body{font:15px/1.5 system-ui,-apple-system,"Segoe UI",sans-serif;margin:0;color:#1d2733;background:#f7f8fa}
header{background:#12355b;color:#fff;padding:1.5rem 2rem}header h1{margin:0 0 .3rem}header a{color:#cfe3ff}
main{max-width:72rem;margin:0 auto;padding:1rem 2rem 4rem}nav ul{columns:2;padding-left:1.2rem}
section.op,section.schema{background:#fff;border:1px solid #dde3ea;border-radius:6px;padding:.5rem 1.2rem 1rem;margin:1rem 0}
h2{border-bottom:2px solid #12355b;padding-bottom:.2rem;margin-top:2.5rem}h3 code{font-size:1.05em}
.method{background:#1f7a4d;color:#fff;border-radius:4px;padding:.1rem .5rem;font-size:.85em}
.key{background:#fff3cd;border:1px solid #e0c36a;border-radius:4px;padding:0 .4rem;font-size:.8em}
.public{background:#e3f2e8;border:1px solid #8cc49f;border-radius:4px;padding:0 .4rem;font-size:.8em}
table{border-collapse:collapse;width:100%;margin:.5rem 0}th,td{border:1px solid #dde3ea;padding:.3rem .5rem;text-align:left;vertical-align:top}
th{background:#eef2f6}td p{margin:0}.status{font-weight:700;white-space:nowrap}
td code{white-space:nowrap}.s2,.s3{color:#1f7a4d}.s4{color:#a15c00}.s5{color:#b42318}
pre{background:#0f1b2a;color:#e6edf3;padding:.8rem;border-radius:6px;overflow:auto}
pre.example{white-space:pre-wrap;overflow-wrap:anywhere}code{background:#eef2f6;padding:0 .2rem;border-radius:3px}
pre code{background:none}.note{color:#56606b;font-style:italic}details summary{cursor:pointer;color:#12355b}
`;

/** Renders the page; it depends on nothing but its arguments, so callers may keep the result. */
export function renderApiDocsPage(doc: ApiDocument, options: ApiDocsPageOptions): string {
  const info = (doc.info ?? {}) as Json;
  const ops: string[] = [];
  const toc: string[] = [];
  for (const [path, methods] of Object.entries(doc.paths)) {
    for (const [method, raw] of Object.entries(methods)) {
      const op = raw as unknown as OpenApiOperation;
      toc.push(
        `<li><a href="#op-${escapeHtml(op.operationId)}">${escapeHtml(method.toUpperCase())} ${escapeHtml(path)}</a></li>`,
      );
      ops.push(operationSection(doc, path, method, op, options));
    }
  }
  const schemes = (doc.components?.['securitySchemes'] ?? {}) as Record<string, Json>;
  const auth = Object.entries(schemes)
    .map(([name, s]) => {
      const how =
        s['type'] === 'apiKey'
          ? `: header <code>${escapeHtml(String(s['name']))}</code>.`
          : ` (${escapeHtml(String(s['type']))} ${escapeHtml(String(s['scheme'] ?? ''))}):`;
      return `<p><strong>${escapeHtml(name)}</strong>${how} ${prose(String(s['description'] ?? ''))}</p>`;
    })
    .join('');
  const schemas = Object.entries((doc.components?.['schemas'] ?? {}) as Json)
    .map(([name, schema]) => schemaSection(name, schema as Json))
    .join('');
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>${escapeHtml(String(info['title']))}</title><style>${STYLE}</style></head>
<body><header><h1>${escapeHtml(String(info['title']))}</h1><div>API version ${escapeHtml(String(info['version']))} · OpenAPI ${escapeHtml(String(doc.openapi))} · <a href="openapi.json">openapi.json</a></div></header>
<main>
${prose(String(info['description'] ?? ''))}
<h2>Authentication</h2>${auth}
<h2>Endpoints</h2><nav><ul>${toc.join('')}</ul></nav>
${ops.join('\n')}
<h2>Schemas</h2>
${schemas}
</main></body></html>`;
}
