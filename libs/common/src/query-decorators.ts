import { applyDecorators } from '@nestjs/common';
import { ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { FILTER_LIMITS } from '@app/stats/query/filters';
import { IsInt, IsOptional, IsString, Max, Min, ValidationArguments } from 'class-validator';

/**
 * Only plain decimal digits become numbers: `1e3`, `0x10`, ` 5` and `5.0` stay strings and
 * fail validation instead of being read as something the client did not write.
 */
export const toStrictInt = ({ value }: { value: unknown }): unknown =>
  typeof value === 'string' && /^-?\d{1,15}$/.test(value) ? Number(value) : value;

export interface QueryIntOptions {
  min: number;
  max: number;
  default: number;
  description: string;
}

/** An optional integer query parameter with its range and default, validated and documented at once. */
export function QueryInt(o: QueryIntOptions): PropertyDecorator {
  return applyDecorators(
    ApiPropertyOptional({
      type: 'integer',
      minimum: o.min,
      maximum: o.max,
      default: o.default,
      description: o.description,
    }),
    IsOptional(),
    Transform(toStrictInt),
    IsInt({ message: ({ property }) => `${property} must be an integer` }),
    Min(o.min, { message: ({ property }) => `${property} must be at least ${o.min}` }),
    Max(o.max, { message: ({ property }) => `${property} must be at most ${o.max}` }),
  );
}

/**
 * A validation message that tells a missing required parameter (`metric is required: one of
 * …`) from a wrong one (`metric must be one of: …`).
 */
export function requiredOr(required: string, invalid: string): (args: ValidationArguments) => string {
  return (args) => (args.value === undefined ? required : invalid);
}

/** The message of a required parameter taking one of `values`. */
export function oneOf(name: string, values: readonly string[]): (args: ValidationArguments) => string {
  const list = values.join(', ');
  return requiredOr(`${name} is required: one of ${list}`, `${name} must be one of: ${list}`);
}

/**
 * The `filters` parameter of every report but realtime (SPEC §3), documented once. Only its
 * type is checked here; the grammar, the limits and the goal ids are checked by the statistics
 * engine's parser, which answers each mistake as a 400 naming `filters`.
 */
export function FiltersQuery(): PropertyDecorator {
  const { conditions, values, bytes } = FILTER_LIMITS;
  return applyDecorators(
    ApiPropertyOptional({
      type: 'string',
      maxLength: bytes,
      example: 'country==DE|FR;source!=(direct);entry_page==/blog/*',
      description:
        'Narrows the report to the sessions matching every condition. Conditions are joined by `;`; ' +
        'each is `DIMENSION==VALUES` (any value matches) or `DIMENSION!=VALUES` (no value matches), ' +
        'values joined by `|`. A value ending in `*` matches by prefix (not for `goal`); a backslash ' +
        'makes the next character literal (`\\;`, `\\|`, `\\*`, `\\\\`). Values are compared exactly ' +
        '(case and spaces count); nothing is a wildcard but a trailing `*`.\n\n' +
        'Dimensions: `channel`, `source`, `country`, `device`, `browser` (the session attribute; a ' +
        'missing one reads `(unknown)`, a missing source `(direct)`); `entry_page`, `exit_page` (a ' +
        'session without pageviews fails every `==` and passes every `!=`); `page` (the session has a ' +
        'pageview matching); `goal` (a goal id of the site: the session converted it).\n\n' +
        'Figures are then computed over the selected sessions (by session start) and the pageviews, ' +
        'events and orders of those sessions (by their own timestamp). Returning visitors stay ' +
        "defined by the visitor's first session of any kind. The parsed conditions come back in " +
        `\`meta.filters\`. At most ${conditions} conditions, ${values} values per condition, ` +
        `${bytes} bytes; an unknown dimension, a condition without \`==\`/\`!=\`, an empty value or a ` +
        'goal id that is not a goal of the site is a 400 naming `filters`.',
    }),
    IsOptional(),
    IsString({ message: 'filters must be a string' }),
  );
}
