import { readFileSync } from 'node:fs';
import { isAbsolute, resolve } from 'node:path';
import Ajv, { type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';

const ROOT = resolve(__dirname, '../../../..');

/** A message as a consumer receives it from NATS. */
export interface CapturedMessage {
  subject: string;
  /** Its NATS headers (checked when given). */
  headers?: Record<string, string>;
  /** The body, parsed from JSON. */
  payload: unknown;
}

interface Channel {
  address: string;
  messages: Record<string, { $ref: string }>;
}
interface AsyncApiJson {
  channels: Record<string, Channel>;
  components: {
    messages: Record<string, { payload: { $ref: string }; headers?: { $ref: string } }>;
  };
}

/**
 * What @asyncapi/parser finds wrong with an AsyncAPI document: its errors and warnings (empty when
 * there are none; information and hints, such as a newer AsyncAPI version existing, are left out).
 */
export async function asyncApiProblems(document: unknown): Promise<string[]> {
  // Loaded when used: the parser (and the linter it brings) is large, and most tests that import
  // this library never need it.
  const { Parser } = await import('@asyncapi/parser');
  const { diagnostics } = await new Parser().parse(JSON.stringify(document));
  // DiagnosticSeverity: 0 error, 1 warning, 2 information, 3 hint.
  return diagnostics
    .filter((d) => d.severity <= 1)
    .map((d) => `${d.code} at ${d.path.join('.')}: ${d.message}`);
}

/** The message schemas a channel's address allows, and the address as a pattern. */
interface CompiledChannel {
  id: string;
  pattern: RegExp;
  messages: Array<{ name: string; payload: ValidateFunction; headers?: ValidateFunction }>;
}

/**
 * An AsyncAPI document (the file the repository holds, docs/asyncapi/*.json) as a check of real
 * messages: a message must be on a subject one of its channels' addresses names (a `{parameter}`
 * is one subject token) and fit one of that channel's messages, payload and headers, by the
 * document's JSON Schemas (checked with Ajv, formats included).
 */
export class AsyncApiContract {
  private readonly channels: CompiledChannel[];

  constructor(readonly document: unknown) {
    const doc = document as AsyncApiJson;
    const ajv = new Ajv({ strict: false, allErrors: true });
    addFormats(ajv);
    // The whole document as one schema resource, so `#/components/schemas/...` references resolve.
    ajv.addSchema(document as object, 'urn:nhp:asyncapi');
    const compiled = (ref: string) => {
      const validate = ajv.getSchema(`urn:nhp:asyncapi${ref}`);
      if (!validate) throw new Error(`the document has no schema at ${ref}`);
      return validate;
    };
    this.channels = Object.entries(doc.channels).map(([id, channel]) => ({
      id,
      pattern: new RegExp(
        `^${channel.address
          .split(/(\{[^}]+\})/)
          .map((part) =>
            /^\{[^}]+\}$/.test(part) ? '[^.]+' : part.replace(/[.*+?^$()[\]\\|]/g, '\\$&'),
          )
          .join('')}$`,
      ),
      messages: Object.values(channel.messages).map(({ $ref }) => {
        const name = $ref.split('/').pop() as string;
        const message = doc.components.messages[name];
        if (!message) throw new Error(`the document has no message ${name}`);
        return {
          name,
          payload: compiled(message.payload.$ref),
          headers: message.headers ? compiled(message.headers.$ref) : undefined,
        };
      }),
    }));
  }

  /** The contract of a document file, by its path from the repository root. */
  static fromFile(path: string): AsyncApiContract {
    const file = isAbsolute(path) ? path : resolve(ROOT, path);
    return new AsyncApiContract(JSON.parse(readFileSync(file, 'utf8')));
  }

  /** What is wrong with a message, in words; empty when it fits the document. */
  problems(message: CapturedMessage): string[] {
    const channel = this.channels.find((c) => c.pattern.test(message.subject));
    if (!channel) return [`subject ${message.subject} is no channel of the document`];
    const found: string[] = [];
    for (const candidate of channel.messages) {
      const problems: string[] = [];
      if (!candidate.payload(message.payload)) {
        problems.push(...describe('payload', candidate.payload));
      }
      if (message.headers && candidate.headers && !candidate.headers(message.headers)) {
        problems.push(...describe('headers', candidate.headers));
      }
      if (problems.length === 0) return [];
      found.push(...problems.map((p) => `${channel.id}/${candidate.name}: ${p}`));
    }
    return found;
  }
}

function describe(what: string, validate: ValidateFunction): string[] {
  return (validate.errors ?? []).map(
    (e) =>
      `${what}${e.instancePath || ''} ${e.message ?? 'is invalid'}${
        e.params && Object.keys(e.params).length > 0 ? ` (${JSON.stringify(e.params)})` : ''
      }`,
  );
}
