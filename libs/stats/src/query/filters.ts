import { isSessionAttribute, SESSION_ATTRIBUTES, SessionAttribute } from '../definitions';
import { ParameterError } from '../parameter-error';

/**
 * The `filters` parameter of SPEC §3: conditions joined by `;`, each `DIMENSION==VALUES` or
 * `DIMENSION!=VALUES`, values joined by `|`, a trailing `*` matching by prefix (not for `goal`),
 * a backslash making the next character literal. Parsed once per request into FilterCondition
 * values; sql/session-filter.ts turns them into the session selection every report shares.
 */
export const FILTER_DIMENSIONS = [...SESSION_ATTRIBUTES, 'entry_page', 'exit_page', 'page', 'goal'] as const;
export type FilterDimension = (typeof FILTER_DIMENSIONS)[number];

export const FILTER_OPERATORS = ['==', '!='] as const;
export type FilterOperator = (typeof FILTER_OPERATORS)[number];

export const FILTER_LIMITS = { conditions: 10, values: 20, bytes: 2048 } as const;

/** One value: literal text, matched exactly or, with `prefix`, as the start of the value. */
export interface FilterValue {
  text: string;
  prefix: boolean;
}

export interface FilterCondition {
  dimension: FilterDimension;
  operator: FilterOperator;
  values: readonly FilterValue[];
}

/** `meta.filters`: each condition as given, values in the parameter's own notation. */
export interface FilterMeta {
  dimension: FilterDimension;
  operator: FilterOperator;
  values: string[];
}

const PARAMETER = 'filters';

const fail = (message: string): never => {
  throw new ParameterError(PARAMETER, message);
};

/** A piece of the parameter with its escapes still marked, so splitting never looks inside one. */
interface Token {
  char: string;
  escaped: boolean;
}

function tokenize(text: string): Token[] {
  const chars = Array.from(text);
  const tokens: Token[] = [];
  for (let i = 0; i < chars.length; i++) {
    if (chars[i] !== '\\') {
      tokens.push({ char: chars[i], escaped: false });
      continue;
    }
    if (i + 1 >= chars.length)
      fail('filters must not end with a lone backslash (\\ escapes the next character)');
    tokens.push({ char: chars[++i], escaped: true });
  }
  return tokens;
}

function splitOn(tokens: Token[], separator: string): Token[][] {
  const parts: Token[][] = [[]];
  for (const t of tokens) {
    if (!t.escaped && t.char === separator) parts.push([]);
    else parts[parts.length - 1].push(t);
  }
  return parts;
}

const text = (tokens: Token[]) => tokens.map((t) => t.char).join('');

function parseValue(tokens: Token[], dimension: FilterDimension, index: number): FilterValue {
  const last = tokens[tokens.length - 1];
  const prefix = dimension !== 'goal' && last !== undefined && !last.escaped && last.char === '*';
  const value = { text: text(prefix ? tokens.slice(0, -1) : tokens), prefix };
  if (value.text === '' && !value.prefix) {
    fail(`filters: condition ${index} on ${dimension} has an empty value`);
  }
  return value;
}

function parseCondition(tokens: Token[], index: number): FilterCondition {
  const at = tokens.findIndex(
    (t, i) =>
      !t.escaped &&
      (t.char === '=' || t.char === '!') &&
      tokens[i + 1]?.char === '=' &&
      !tokens[i + 1].escaped,
  );
  if (at < 0)
    fail(`filters: condition ${index} has no == or != (expected DIMENSION==VALUE or DIMENSION!=VALUE)`);
  const dimension = text(tokens.slice(0, at));
  if (
    tokens.slice(0, at).some((t) => t.escaped) ||
    !(FILTER_DIMENSIONS as readonly string[]).includes(dimension)
  ) {
    fail(
      `filters: unknown dimension "${dimension}" in condition ${index}; use one of: ${FILTER_DIMENSIONS.join(', ')}`,
    );
  }
  const dim = dimension as FilterDimension;
  const operator: FilterOperator = tokens[at].char === '=' ? '==' : '!=';
  const rawValues = splitOn(tokens.slice(at + 2), '|');
  if (rawValues.length > FILTER_LIMITS.values) {
    fail(
      `filters: condition ${index} has ${rawValues.length} values; at most ${FILTER_LIMITS.values} are allowed`,
    );
  }
  return { dimension: dim, operator, values: rawValues.map((v) => parseValue(v, dim, index)) };
}

/**
 * Parses the `filters` parameter; an absent or empty one selects every session. Throws
 * ParameterError naming `filters` for every malformed input. Goal ids are checked against the
 * site's goals by the caller (StatsQueryParser), which knows them.
 */
export function parseFilters(parameter: string | undefined): FilterCondition[] {
  if (parameter === undefined || parameter === '') return [];
  if (Buffer.byteLength(parameter, 'utf8') > FILTER_LIMITS.bytes) {
    fail(`filters must be at most ${FILTER_LIMITS.bytes} bytes`);
  }
  const conditions = splitOn(tokenize(parameter), ';');
  if (conditions.length > FILTER_LIMITS.conditions) {
    fail(`filters has ${conditions.length} conditions; at most ${FILTER_LIMITS.conditions} are allowed`);
  }
  return conditions.map((c, i) => {
    if (c.length === 0) fail(`filters: condition ${i + 1} is empty (two ";" in a row, or one at an end)`);
    return parseCondition(c, i + 1);
  });
}

/** A value in the parameter's notation: what a client would write to get it back. */
export function formatFilterValue(value: FilterValue): string {
  const escaped = value.text.replace(/[\\;|]/g, (c) => `\\${c}`);
  if (value.prefix) return `${escaped}*`;
  return escaped.endsWith('*') ? `${escaped.slice(0, -1)}\\*` : escaped;
}

export function filtersMeta(filters: readonly FilterCondition[]): FilterMeta[] {
  return filters.map((f) => ({
    dimension: f.dimension,
    operator: f.operator,
    values: f.values.map(formatFilterValue),
  }));
}

/** The session attribute every condition is on, when there is exactly one such attribute. */
export function soleAttributeOf(filters: readonly FilterCondition[]): SessionAttribute | undefined {
  const dims = new Set(filters.map((f) => f.dimension));
  if (dims.size !== 1) return undefined;
  const [dim] = dims;
  return isSessionAttribute(dim) ? dim : undefined;
}
